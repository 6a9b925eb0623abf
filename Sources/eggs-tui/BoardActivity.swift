import EggGame

/// What a board draws of a chain in time and of the garbage queued against its player. The
/// drawing (`MatchView`) reads only this, on owners and mirrors alike.
///
/// `GridActivity` feeds it from what ``PlayerGrid`` reports. Today a lock resolves its chain at
/// once, so nothing pops in time and the counter shows the last lock's chain. A grid that
/// resolves in time (landing, popping, falling eggs, the current chain step, the steps' garbage)
/// plugs in here: `isPopping` from its per-egg activity, `chainStep` and `chainGarbage` from its
/// steps so far, and the drawing follows the rule set's timing with no other change.
protocol BoardActivity {
    /// Whether the egg at `column`, `row` (0 = top) is popping now (drawn flashing).
    func isPopping(column: Int, row: Int) -> Bool
    /// The chain counter to show ("3-chain!"); below 2 nothing is shown.
    var chainStep: Int { get }
    /// Garbage the chain sends so far (it counts up as steps pop).
    var chainGarbage: Int { get }
    /// Garbage queued against the player: drawn as tray icons above the board.
    var queuedGarbage: Int { get }
}

/// ``BoardActivity`` from a grid as it reports itself today. With the timed grid of the rules
/// branch (`activity(column:row:)`, `chainStep`, `chainSteps`) the three members become:
///
///     func isPopping(column: Int, row: Int) -> Bool {
///         if case .popping = grid.activity(column: column, row: row) { return true }
///         return false
///     }
///     var chainStep: Int { grid.chainStep > 0 ? grid.chainStep : lastChain }
///     var chainGarbage: Int {
///         grid.chainStep > 0 ? ChainResult(steps: grid.chainSteps).garbage : (lastChain > 1 ? grid.garbagePending : 0)
///     }
struct GridActivity: BoardActivity {
    var grid: PlayerGrid
    var queuedGarbage: Int
    /// The chain to show (the screen keeps the last lock's while it is fresh).
    var lastChain: Int

    func isPopping(column: Int, row: Int) -> Bool { false }
    var chainStep: Int { lastChain }
    var chainGarbage: Int { lastChain > 1 ? grid.garbagePending : 0 }
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
