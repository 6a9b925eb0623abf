import EggGame
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
        /// The largest chain of each game fired by its ``earlyPairs``-th pair (puyoai's measure).
        public var earlyLargestChains: [Int] = []
        /// Pairs within which ``earlyLargestChains`` count.
        public var earlyPairs = 50
        /// Games that ended in a top-out before their last pair.
        public var topOuts = 0
        /// Each game that topped out before its last pair, as it ended.
        public var topOutGames: [TopOut] = []
        /// Games that topped out holding a chain of ``heldChainMin`` or more (``TopOut/heldChain``).
        public var topOutsHoldingChain: Int { topOutGames.filter { $0.heldChain >= BotBench.heldChainMin }.count }
        public var pairsPlaced = 0
        public var gameTicks = 0
        /// Nanoseconds of each tick in which the bot decided a placement, sorted.
        public var decisionNanoseconds: [UInt64] = []
        /// Nanoseconds of all the other ticks, summed.
        public var otherTickNanoseconds: UInt64 = 0

        public var meanLargestChain: Double {
            largestChains.isEmpty ? 0 : Double(largestChains.reduce(0, +)) / Double(largestChains.count)
        }
        public var maxLargestChain: Int { largestChains.max() ?? 0 }
        public var meanEarlyLargestChain: Double {
            earlyLargestChains.isEmpty ? 0 : Double(earlyLargestChains.reduce(0, +)) / Double(earlyLargestChains.count)
        }
        public var pairsPerSecond: Double {
            gameTicks == 0 ? 0 : Double(pairsPlaced) * Double(GravityClock.ticksPerSecond) / Double(gameTicks)
        }
        public var meanDecisionMicroseconds: Double {
            decisionNanoseconds.isEmpty ? 0 : Double(decisionNanoseconds.reduce(0, +)) / Double(decisionNanoseconds.count) / 1_000
        }
        /// The mean time of a tick in which the bot did not decide.
        public var meanOtherTickMicroseconds: Double {
            let others = gameTicks - decisionNanoseconds.count
            return others <= 0 ? 0 : Double(otherTickNanoseconds) / Double(others) / 1_000
        }
        /// The 99th percentile (nearest rank).
        public var p99DecisionMicroseconds: Double {
            guard let p99 = nearestRank(0.99, ofSorted: decisionNanoseconds) else { return 0 }
            return Double(p99) / 1_000
        }
    }

    /// A held chain this long at a top-out counts as a chain left unfired (``SoloResult/topOutsHoldingChain``).
    public static let heldChainMin = 6

    /// A solo game that topped out: its seed, the pairs it spawned, its last board and the chain
    /// that board held.
    public struct TopOut: Sendable, Hashable {
        public var seed: UInt64
        public var pairs: Int
        public var board: Board
        /// The longest chain the last board fires with one or two eggs of one colour dropped in one
        /// column, whether a pair could still reach it or not.
        public var heldChain: Int
    }

    /// Plays one solo game per seed: the bot alone, until it tops out or has placed `pairsMax` pairs.
    /// - Parameters:
    ///   - clock: a clock in nanoseconds, read around every tick; the ticks that spawn the bot's pair
    ///     (where it decides) are kept one by one, the others summed.
    ///   - earlyPairs: the pairs within which the early largest chain counts.
    public static func solo(level: BotLevel, seeds: [UInt64], colors: Int = 4, pairsMax: Int = 150,
                            rules: RuleSet = .sfe, earlyPairs: Int = 50, clock: () -> UInt64) -> SoloResult {
        precondition(pairsMax > 0 && pairsMax <= 10_000, "pairsMax must be from 1 to 10000")
        var result = SoloResult()
        result.earlyPairs = earlyPairs
        for seed in seeds {
            var match = LocalMatch(options: .init(seed: seed, colors: colors, speed: 0, gamesMax: 1, rules: rules),
                                   seats: [.bot(level)])
            var largest = 0, early = 0
            while !match.isOver && match.grids[0].pairsSpawned <= pairsMax {
                // The bot decides in the tick that spawns its pair (the match spawns, then asks the
                // bot for its moves), so every tick is timed and kept when it spawned a pair.
                let start = clock()
                let events = match.tick()
                let elapsed = clock() &- start
                var decided = false
                for event in events {
                    switch event {
                    case .input(_, _, .ticked(_, let chain?)):
                        largest = max(largest, chain.chain)
                        // The chain of the pair last spawned (the next spawns once it has ended).
                        if match.grids[0].pairsSpawned <= earlyPairs { early = max(early, chain.chain) }
                    case .input(_, _, .spawned): decided = true
                    default: break
                    }
                }
                if decided { result.decisionNanoseconds.append(elapsed) } else { result.otherTickNanoseconds &+= elapsed }
            }
            result.games += 1
            result.largestChains.append(largest)
            result.earlyLargestChains.append(early)
            if match.grids[0].state == .toppedOut && match.grids[0].pairsSpawned <= pairsMax {
                result.topOuts += 1
                let board = match.grids[0].board
                let held = BotEvaluation(eggsMax: 2, rules: rules).potential(board, anyColumn: true).chain
                result.topOutGames.append(TopOut(seed: seed, pairs: match.grids[0].pairsSpawned, board: board, heldChain: held))
            }
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

    /// The Wilson score interval of `successes` in `trials` at 95 % (z = 1.96), as fractions.
    public static func wilson(_ successes: Int, of trials: Int) -> (low: Double, high: Double) {
        guard trials > 0 else { return (0, 1) }
        let n = Double(trials), p = Double(successes) / n, z = 1.96
        let centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        let half = z * (p * (1 - p) / n + z * z / (4 * n * n)).squareRoot() / (1 + z * z / n)
        return (max(0, centre - half), min(1, centre + half))
    }

    /// Plays one game per seed between `level` and ``GreedyBot`` (seats alternating), the level at
    /// its own pace and the greedy player at `greedyPace` (the level's own when nil). `first`
    /// counts the level's wins.
    public static func versusGreedy(_ level: BotLevel, seeds: [UInt64], colors: Int = 4, gameTicksMax: Int = 36_000,
                                    greedyPace: BotLevel? = nil, rules: RuleSet = .sfe) -> VersusResult {
        var result = VersusResult()
        for seed in seeds {
            let firstSeat = Int(seed % 2)
            let options = LocalMatch.Options(seed: seed, colors: colors, speed: 0, gameTicksMax: gameTicksMax, gamesMax: 1,
                                             rules: rules)
            var player = BotPlayer(level: level, seed: SplitMix64.mix(seed &+ UInt64(firstSeat)))
            var greedy = GreedyPlayer(pace: greedyPace ?? level)
            var match = LocalMatch(options: options, seats: [.external, .external])
            while !match.isOver {
                for seat in 0..<2 {
                    let move: Move?
                    if seat == firstSeat {
                        let context = BotContext(incomingGarbage: match.queuedGarbage(seat: seat),
                                                 opponents: level.readsOpponents ? match.opponentBoards(of: seat) : [])
                        move = player.tick(grid: match.grids[seat], preview: match.nextPairs(seat: seat), context: context)
                    } else {
                        move = greedy.tick(grid: match.grids[seat])
                    }
                    if let move { match.enqueue(move, seat: seat) }
                }
                match.tick()
            }
            switch match.matchWinner {
            case firstSeat?: result.first += 1
            case nil: result.undecided += 1
            default: result.second += 1
            }
        }
        return result
    }

    /// Plays one game per seed between `first` and `second` (speed 0, 4 colours and `sfe` by
    /// default), each at its own pace, or `first` at the pace of `firstPace` when given.
    public static func versus(_ first: BotLevel, _ second: BotLevel, seeds: [UInt64], colors: Int = 4,
                              gameTicksMax: Int = 36_000, firstPace: BotLevel? = nil, rules: RuleSet = .sfe) -> VersusResult {
        var result = VersusResult()
        for seed in seeds {
            let firstSeat = Int(seed % 2)
            let options = LocalMatch.Options(seed: seed, colors: colors, speed: 0, gameTicksMax: gameTicksMax, gamesMax: 1,
                                             rules: rules)
            let winner: Int?
            if let firstPace {
                // Both seats are driven from here, so one of them can move at another level's pace;
                // each bot sees what a seat's bot sees (its grid, the pairs shown next, queued garbage,
                // the opponent's board).
                var players = [BotPlayer(level: second, seed: SplitMix64.mix(seed)), BotPlayer(level: second, seed: SplitMix64.mix(seed &+ 1))]
                players[firstSeat] = BotPlayer(level: first, pace: firstPace, seed: SplitMix64.mix(seed &+ UInt64(firstSeat)))
                var match = LocalMatch(options: options, seats: [.external, .external])
                while !match.isOver {
                    for seat in 0..<2 {
                        let context = BotContext(incomingGarbage: match.queuedGarbage(seat: seat),
                                                 opponents: players[seat].level.readsOpponents ? match.opponentBoards(of: seat) : [])
                        if let move = players[seat].tick(grid: match.grids[seat], preview: match.nextPairs(seat: seat), context: context) {
                            match.enqueue(move, seat: seat)
                        }
                    }
                    match.tick()
                }
                winner = match.matchWinner
            } else {
                var seats: [LocalMatch.Seat] = [.bot(second), .bot(second)]
                seats[firstSeat] = .bot(first)
                var match = LocalMatch(options: options, seats: seats)
                winner = match.run()
            }
            switch winner {
            case firstSeat?: result.first += 1
            case nil: result.undecided += 1
            default: result.second += 1
            }
        }
        return result
    }
}
