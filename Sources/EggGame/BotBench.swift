import EggPrimitives
/// Headless measurements of the bot levels: solo games (the chains each level builds, its pace and
/// its decision time) and matches between two levels, all through ``LocalMatch`` at the levels' own
/// paces. Deterministic for given seeds, except the decision times, read from `clock`.
public enum BotBench {
    /// What a level did over solo games.
    public struct SoloResult: Sendable, Hashable {
        public var games = 0
        /// The largest chain of each game.
        public var largestChains: [Int] = []
        public var pairsPlaced = 0
        public var gameTicks = 0
        /// Nanoseconds of each tick in which the bot decided a placement, sorted.
        public var decisionNanoseconds: [UInt64] = []

        public var meanLargestChain: Double {
            largestChains.isEmpty ? 0 : Double(largestChains.reduce(0, +)) / Double(largestChains.count)
        }
        public var maxLargestChain: Int { largestChains.max() ?? 0 }
        public var pairsPerSecond: Double {
            gameTicks == 0 ? 0 : Double(pairsPlaced) * Double(GravityClock.ticksPerSecond) / Double(gameTicks)
        }
        public var meanDecisionMicroseconds: Double {
            decisionNanoseconds.isEmpty ? 0 : Double(decisionNanoseconds.reduce(0, +)) / Double(decisionNanoseconds.count) / 1_000
        }
        /// The 99th percentile (nearest rank).
        public var p99DecisionMicroseconds: Double {
            guard let p99 = nearestRank(0.99, ofSorted: decisionNanoseconds) else { return 0 }
            return Double(p99) / 1_000
        }
    }

    /// Plays one solo game per seed: the bot alone, until it tops out or has placed `pairsMax` pairs.
    /// - Parameters:
    ///   - clock: a monotonic clock in nanoseconds, read around the ticks where the bot decides.
    public static func solo(level: BotLevel, seeds: [UInt64], colors: Int = 4, pairsMax: Int = 150,
                            clock: () -> UInt64) -> SoloResult {
        precondition(pairsMax > 0 && pairsMax <= 10_000, "pairsMax must be from 1 to 10000")
        var result = SoloResult()
        for seed in seeds {
            var match = LocalMatch(options: .init(seed: seed, colors: colors, speed: 0, gamesMax: 1), seats: [.bot(level)])
            var largest = 0, decidesNow = false
            while !match.isOver && match.grids[0].pairsSpawned <= pairsMax {
                let start = decidesNow ? clock() : 0
                let events = match.tick()
                if decidesNow { result.decisionNanoseconds.append(clock() &- start) }
                decidesNow = false
                for event in events {
                    switch event {
                    case .input(_, _, .ticked(_, let chain?)): largest = max(largest, chain.chain)
                    case .input(_, _, .spawned): decidesNow = true
                    default: break
                    }
                }
            }
            result.games += 1
            result.largestChains.append(largest)
            result.pairsPlaced += max(0, match.grids[0].pairsSpawned - 1)
            result.gameTicks += match.gameTicks
        }
        result.decisionNanoseconds.sort()
        return result
    }

    /// Wins of two levels against each other, one game per seed, seats alternating.
    public struct VersusResult: Sendable, Hashable {
        public var first = 0
        public var second = 0
        /// Games without a winner within the tick limit (draws).
        public var undecided = 0
        public var games: Int { first + second + undecided }
    }

    /// Plays one game per seed between `first` and `second` (speed 0, 4 colours by default).
    public static func versus(_ first: BotLevel, _ second: BotLevel, seeds: [UInt64], colors: Int = 4,
                              gameTicksMax: Int = 36_000) -> VersusResult {
        var result = VersusResult()
        for seed in seeds {
            let firstSeat = Int(seed % 2)
            var seats: [LocalMatch.Seat] = [.bot(second), .bot(second)]
            seats[firstSeat] = .bot(first)
            var match = LocalMatch(options: .init(seed: seed, colors: colors, speed: 0, gameTicksMax: gameTicksMax, gamesMax: 1), seats: seats)
            switch match.run() {
            case firstSeat?: result.first += 1
            case nil: result.undecided += 1
            default: result.second += 1
            }
        }
        return result
    }
}
