/// How strong and how quick a bot plays.
public enum BotLevel: String, CaseIterable, Sendable, Hashable {
    case easy, medium, hard, insane

    /// Ticks between two of the bot's moves (also its thinking delay after a spawn).
    public var ticksPerMove: Int {
        switch self {
        case .easy: 16
        case .medium: 9
        case .hard: 5
        case .insane: 2
        }
    }

    /// 1: the current pair only; 2: the current and the next pair.
    var searchDepth: Int {
        switch self {
        case .easy, .medium: 1
        case .hard, .insane: 2
        }
    }

    /// Random noise added to each placement's score (blunders).
    var noiseMax: Int {
        switch self {
        case .easy: 600
        case .medium: 120
        case .hard, .insane: 0
        }
    }

    /// Score per garbage egg sent; a high weight pops eagerly, a low one builds.
    var garbageWeight: Int {
        switch self {
        case .easy, .medium: 100
        case .hard: 60
        case .insane: 45
        }
    }
}

/// Where a pair ends: its pivot's column and the child's side. Locking depends on nothing else.
public struct Placement: Sendable, Hashable {
    public var column: Int
    public var orientation: Orientation

    public init(column: Int, orientation: Orientation) {
        self.column = column
        self.orientation = orientation
    }

    /// The 22 distinct placements: 6 columns × up/down, 5 × right, 5 × left.
    public static let all: [Placement] = Orientation.allCases.flatMap { orientation in
        (0..<Board.columnsCount).compactMap { column in
            let child = column + orientation.columnOffset
            return (0..<Board.columnsCount).contains(child) ? Placement(column: column, orientation: orientation) : nil
        }
    }

    /// Placements that differ for `pair` (a same-colour pair has only 11).
    static func distinct(for pair: EggPair) -> [Placement] {
        pair.pivot != pair.child ? all : all.filter { $0.orientation == .up || $0.orientation == .right }
    }
}

/// The search and scoring of a bot: picks a placement for the current pair and plans its moves.
/// Deterministic for a given seed.
public struct Bot: Sendable {
    public let level: BotLevel
    /// Placements simulated so far (dropped, chain resolved, scored).
    public private(set) var placementsEvaluated = 0
    private var random: Xoshiro256StarStar
    static let deadScore = Int.min / 4

    public init(level: BotLevel, seed: UInt64 = 0) {
        self.level = level
        random = Xoshiro256StarStar(seed: seed)
    }

    /// The best reachable placement of `current` on `board` (nil when none is reachable).
    /// Stronger levels also search every placement of `next`.
    public mutating func choosePlacement(board: Board, current: EggPair, next: EggPair?) -> Placement? {
        let spawned = LivePair(spawning: current)
        var best: Placement?, bestScore = Int.min
        for placement in Placement.distinct(for: current) {
            guard Bot.moves(to: placement, from: spawned, on: board) != nil else { continue }
            var score = self.score(board: board, pair: current, placement: placement, next: next)
            if level.noiseMax > 0 { score &+= random.nextInt(below: level.noiseMax) }
            if score > bestScore {
                best = placement
                bestScore = score
            }
        }
        return best
    }

    /// The moves that bring the live pair of `grid` to the bot's chosen placement, ending in a hard
    /// drop; just a hard drop when no placement is reachable or no pair is live.
    public mutating func plan(grid: PlayerGrid, next: EggPair?) -> [Move] {
        guard let live = grid.livePair,
              let target = choosePlacement(board: grid.board, current: live.pair, next: next),
              let moves = Bot.moves(to: target, from: live, on: grid.board)
        else { return [.hardDrop] }
        return moves
    }

    /// Rotations, then shifts, then a hard drop taking `live` to `target`, or nil if blocked.
    public static func moves(to target: Placement, from live: LivePair, on board: Board) -> [Move]? {
        let turnPlans: [[Move]] = [[], [.rotateCW], [.rotateCCW], [.rotateCW, .rotateCW], [.rotateCCW, .rotateCCW]]
        plans: for turns in turnPlans {
            var pair = live
            for turn in turns {
                guard let turned = pair.rotated(clockwise: turn == .rotateCW, on: board) else { continue plans }
                pair = turned
            }
            guard pair.orientation == target.orientation else { continue }
            var moves = turns
            while pair.column != target.column {
                let step = target.column > pair.column ? 1 : -1
                guard let shifted = pair.moved(columns: step, on: board) else { continue plans }
                pair = shifted
                moves.append(step > 0 ? .right : .left)
            }
            moves.append(.hardDrop)
            return moves
        }
        return nil
    }

    /// Simulates every distinct placement of `pair` on `board` through its full chain and scores
    /// it (no reachability check, no look-ahead). Returns how many were evaluated; for benchmarks.
    public mutating func evaluateAllPlacements(board: Board, pair: EggPair) -> Int {
        var count = 0, checksum = 0
        for placement in Placement.distinct(for: pair) {
            checksum &+= score(board: board, pair: pair, placement: placement, next: nil)
            count += 1
        }
        precondition(checksum != Int.min, "scores are summed so the work is not optimised away")
        return count
    }

    private mutating func score(board: Board, pair: EggPair, placement: Placement, next: EggPair?) -> Int {
        var after = board
        after.drop(pair, orientation: placement.orientation, column: placement.column)
        let (chain, garbage) = after.resolveChainCounts()
        placementsEvaluated &+= 1
        if after.isSpawnBlocked { return Bot.deadScore }
        let attack = garbage &* level.garbageWeight &+ chain &* chain &* 40
        guard level.searchDepth > 1, let next else { return attack &+ Bot.evaluate(after) }
        var bestNext = Bot.deadScore
        for nextPlacement in Placement.distinct(for: next) where Bot.isRoughlyReachable(nextPlacement, on: after) {
            bestNext = max(bestNext, score(board: after, pair: next, placement: nextPlacement, next: nil))
        }
        return attack &+ bestNext
    }

    /// Whether the top row is free from the spawn columns to the target columns (look-ahead only).
    static func isRoughlyReachable(_ placement: Placement, on board: Board) -> Bool {
        let child = placement.column + placement.orientation.columnOffset
        let low = min(placement.column, child, Board.spawnColumns.0)
        let high = max(placement.column, child, Board.spawnColumns.1)
        for column in low...high where board.height(column: column) >= Board.rowsCount {
            return false
        }
        return true
    }

    /// The static score of a settled board: same-colour contacts, flatness, height, danger.
    static func evaluate(_ board: Board) -> Int {
        var contacts = 0
        for code in UInt8(1)...6 {
            let plane = board.plane(code: code)
            contacts &+= (plane & (plane >> 1)).nonzeroBitCount &+ (plane & (plane >> Board.laneBits)).nonzeroBitCount
        }
        var heightSquares = 0, bumpiness = 0, previous = board.height(column: 0)
        heightSquares = previous &* previous
        for column in 1..<Board.columnsCount {
            let height = board.height(column: column)
            heightSquares &+= height &* height
            bumpiness &+= abs(height &- previous)
            previous = height
        }
        let spawnHeight = max(board.height(column: Board.spawnColumns.0), board.height(column: Board.spawnColumns.1))
        let danger = spawnHeight >= 8 ? (spawnHeight &- 7) &* (spawnHeight &- 7) &* 400 : 0
        return contacts &* 25 &- bumpiness &* 12 &- heightSquares &* 2 &- danger
    }
}

/// A bot that plays a ``PlayerGrid`` like a human: one move every ``BotLevel/ticksPerMove`` ticks.
public struct BotPlayer: Sendable {
    public private(set) var bot: Bot
    private var plan: [Move] = []
    private var planIndex = 0
    private var plannedPairIndex = -1
    private var cooldownTicks = 0

    public init(level: BotLevel, seed: UInt64 = 0) {
        bot = Bot(level: level, seed: seed)
    }

    public var level: BotLevel { bot.level }

    /// Advances one tick; returns the move to apply to the grid now, if any.
    /// - Parameters:
    ///   - grid: the bot's own grid (plans when a new pair is live).
    ///   - next: the pair after the live one, when known.
    public mutating func tick(grid: PlayerGrid, next: EggPair?) -> Move? {
        guard grid.state == .live else { return nil }
        if plannedPairIndex != grid.pairsSpawned {
            plan = bot.plan(grid: grid, next: next)
            planIndex = 0
            plannedPairIndex = grid.pairsSpawned
            cooldownTicks = bot.level.ticksPerMove
        }
        cooldownTicks -= 1
        guard cooldownTicks <= 0 else { return nil }
        cooldownTicks = bot.level.ticksPerMove
        guard planIndex < plan.count else { return .hardDrop }
        planIndex += 1
        return plan[planIndex - 1]
    }
}
