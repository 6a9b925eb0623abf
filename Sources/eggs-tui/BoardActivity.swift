import EggGame

/// What a board draws of a chain in time and of the garbage queued against its player. The
/// drawing (`MatchView`) reads only this, on owners and mirrors alike.
///
/// `GridActivity` feeds it from what ``PlayerGrid`` reports as it resolves in time (docs/rules.md, `sfe`
/// timing): the per-egg activity, the current chain step and the steps so far.
protocol BoardActivity {
    /// Whether the egg at `column`, `row` (0 = top) is popping now (drawn flashing).
    func isPopping(column: Int, row: Int) -> Bool
    /// Whether the egg at `column`, `row` is squashed by its landing bounce now (drawn underlined).
    func isBouncing(column: Int, row: Int) -> Bool
    /// The chain counter to show ("3-chain!"); below 2 nothing is shown.
    var chainStep: Int { get }
    /// Garbage the chain sends so far (it counts up as steps pop).
    var chainGarbage: Int { get }
    /// Garbage queued against the player: drawn as tray icons above the board.
    var queuedGarbage: Int { get }
}

/// ``BoardActivity`` from a grid as it resolves in time: popping eggs flash while they pop, the
/// counter shows the chain step resolving now (the last chain's length once it has ended), and
/// the garbage counts up as the steps pop. Owners and mirrors draw the same, since a mirror's
/// grid ticks through the same resolution.
struct GridActivity: BoardActivity {
    var grid: PlayerGrid
    var queuedGarbage: Int
    /// The chain to show once it has ended (the screen keeps the last one while it is fresh).
    var lastChain: Int

    func isPopping(column: Int, row: Int) -> Bool {
        if case .popping = grid.activity(column: column, row: row) { return true }
        return false
    }
    /// A landing egg is squashed for the first half of its landing (`sfe`: 7 of 15 ticks); the
    /// garbage of a column bouncing after garbage landed in it, for the first half of the bounce
    /// (8 of 17). The grid's own timers decide, so owners and mirrors draw the same at a tick.
    func isBouncing(column: Int, row: Int) -> Bool {
        let timing = grid.rules.timing
        if case .landing(let left) = grid.activity(column: column, row: row) {
            return left > timing.landingTicks - timing.landingTicks / 2
        }
        return grid.board[column: column, row: row] == .garbage
            && grid.bounceTicksLeft(column: column) > timing.garbageBounceTicks - timing.garbageBounceTicks / 2
    }

    var chainStep: Int { grid.chainStep > 0 ? grid.chainStep : lastChain }
    var chainGarbage: Int {
        grid.chainStep > 0 ? ChainResult(steps: grid.chainSteps).garbage : (lastChain > 1 ? grid.garbagePending : 0)
    }
}

/// The garbage tray above a board, as Puyo draws it: one icon per 30, per 6 and per single egg
/// of garbage, largest first, at most one icon per column.
enum TrayIcon: Hashable, CaseIterable {
    case thirty, six, one

    var eggs: Int {
        switch self {
        case .thirty: 30
        case .six: 6
        case .one: 1
        }
    }

    func glyph(unicode: Bool) -> String {
        switch self {
        case .thirty: unicode ? "★" : "@"
        case .six: unicode ? "●" : "O"
        case .one: unicode ? "•" : "o"
        }
    }

    /// The icons for `count` queued eggs, at most `limit` of them (a tray that overflows shows
    /// its largest icons: 200 eggs are six 30s).
    static func icons(for count: Int, limit: Int = Board.columnsCount) -> [TrayIcon] {
        var left = max(0, count)
        var icons: [TrayIcon] = []
        for icon in allCases {
            while left >= icon.eggs && icons.count < limit {
                icons.append(icon)
                left -= icon.eggs
            }
        }
        return icons
    }
}
