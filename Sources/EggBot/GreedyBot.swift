import EggGame

/// A reference opponent for measuring the levels (`bot-eval --versus greedy`): it pops as soon as
/// any placement pops, as Super Foul Egg's hardest computer player does, taking the placement that
/// pops the most eggs (then the longest chain); when nothing pops it plays flat: the lowest
/// resulting column, then the lowest spawn columns, then the smoothest surface (a settled board has
/// no holes). It never builds and reads nothing but its own board and pair. Deterministic.
public struct GreedyBot: Sendable {
    public init() {}

    /// How a placement ranks, higher first: alive, then popping (most eggs, longest chain), then
    /// flat.
    private struct Key: Comparable {
        var alive: Int
        var popped: Int
        var chain: Int
        var flatness: (Int, Int, Int)

        static func < (a: Key, b: Key) -> Bool {
            (a.alive, a.popped, a.chain, a.flatness.0, a.flatness.1, a.flatness.2)
                < (b.alive, b.popped, b.chain, b.flatness.0, b.flatness.1, b.flatness.2)
        }

        static func == (a: Key, b: Key) -> Bool { !(a < b) && !(b < a) }
    }

    /// The greedy placement of `current` on `board` among those the pair can reach as gravity
    /// lowers it (`gravity`, or a margin of a cell when unknown); nil when none is reachable.
    public func choosePlacement(board: Board, current: EggPair, rules: RuleSet, gravity: PairGravity? = nil) -> Placement? {
        let simulator = BotSimulator(rules: rules)
        let spawned = LivePair(spawning: current, rules: rules)
        var best: (placement: Placement, key: Key)?
        for safeOnly in [true, false] {
            for placement in Placement.distinct(for: current) {
                let reachable = safeOnly
                    ? Bot.isReachable(placement, from: spawned, on: board, rules: rules, gravity: gravity)
                    : Bot.moves(to: placement, from: spawned, on: board, rules: rules) != nil
                guard reachable else { continue }
                let outcome = simulator.place(current, at: placement, on: board)
                let key = Self.key(outcome, before: board, simulator: simulator)
                if best == nil || best!.key < key { best = (placement, key) }
            }
            if let best, best.key.alive == 1 { return best.placement }
        }
        return best?.placement
    }

    private static func key(_ outcome: BotSimulator.Outcome, before: Board, simulator: BotSimulator) -> Key {
        let board = outcome.board
        var tallest = 0, roughness = 0
        for column in 0..<Board.columnsCount {
            let height = board.height(column: column)
            tallest = max(tallest, height)
            if column > 0 { roughness += abs(height - board.height(column: column - 1)) }
        }
        let popped = outcome.chain > 0 ? before.eggsCount + 2 - board.eggsCount : 0
        return Key(alive: outcome.toppedOut ? 0 : 1, popped: popped, chain: outcome.chain,
                   flatness: (-tallest, -simulator.spawnHeight(board), -roughness))
    }
}

/// ``GreedyBot`` playing a ``PlayerGrid`` at a level's pace (``BotPacer``), as ``BotPlayer`` does.
public struct GreedyPlayer: Sendable {
    public let pace: BotLevel
    private let bot = GreedyBot()
    private var pacer: BotPacer
    private var plannedPairIndex = -1

    public init(pace: BotLevel) {
        self.pace = pace
        pacer = BotPacer(level: pace)
    }

    /// Advances one tick; returns the move to apply to the grid now, if any.
    public mutating func tick(grid: PlayerGrid) -> Move? {
        guard grid.state == .live else { return nil }
        if plannedPairIndex != grid.pairsSpawned {
            plannedPairIndex = grid.pairsSpawned
            let gravity = PairGravity(grid: grid, moveTicks: pace.ticksPerMove)
            var moves: [Move] = [.hardDrop]
            if let live = grid.livePair,
               let target = bot.choosePlacement(board: grid.board, current: live.pair, rules: grid.rules, gravity: gravity),
               let plan = Bot.moves(to: target, from: live, on: grid.board, rules: grid.rules) {
                moves = plan
            }
            pacer.start(moves)
        }
        return pacer.tick()
    }
}
