import EggGame

/// The bot's only window on the rules: where a pair can go on a board, and what a placement does
/// (the settled board, the chain it fires and the garbage it sends), by the rules of the match's
/// rule set. The search and the evaluation never touch the engine otherwise, so the bot judges a
/// `tsu` board by `tsu`'s rules (the hidden 13th row neither joins groups nor is cleared, garbage
/// from the chain's score, top-out at the pivot's spawn cell, 13 rows, nuisance in rows) and an
/// `sfe` board by `sfe`'s.
struct BotSimulator: Sendable {
    /// A placement played out to a settled board.
    struct Outcome {
        var board: Board
        /// Chain steps that popped (0: nothing popped).
        var chain: Int
        var garbage: Int
        /// The next pair could not spawn: the player would be out.
        var toppedOut: Bool
    }

    let rules: RuleSet
    /// Cells whose eggs join groups and are cleared.
    let poppingMask: UInt128
    /// The columns whose spawn cells decide a top-out, lowest and highest (`sfe`: both eggs'
    /// columns, 2 and 3; `tsu`: the pivot's, 2).
    let spawnColumns: (low: Int, high: Int)
    /// The most eggs a pair can stack in a column: the grid's rows less those only garbage
    /// reaches (`sfe` 12, `tsu` 13 with the hidden row).
    let pairRows: Int
    /// A column this tall fills the spawn row: a pair cannot travel over it.
    let spawnRowHeight: Int

    init(rules: RuleSet) {
        self.rules = rules
        pairRows = rules.rows - rules.garbageOnlyRows
        spawnRowHeight = Board.rowsCount - rules.spawnRow
        poppingMask = Board.rowsMask(from: rules.poppingTopRow)
        switch rules.topOut {
        case .eitherSpawnCell:
            let child = rules.spawnColumn + rules.spawnOrientation.columnOffset
            spawnColumns = (min(rules.spawnColumn, child), max(rules.spawnColumn, child))
        case .pivotSpawnCell:
            spawnColumns = (rules.spawnColumn, rules.spawnColumn)
        }
    }

    /// The height of the tallest column whose spawn cell decides a top-out.
    @inline(__always)
    func spawnHeight(_ board: Board) -> Int {
        max(board.height(column: spawnColumns.low), board.height(column: spawnColumns.high))
    }

    /// Whether a spawn column stands a row below the spawn row: the next pair spawns resting on it
    /// and locks at the first gravity step, which may come on its first tick (the drop timer runs
    /// on from the last pair), before a single move: a top-out but for luck.
    @inline(__always)
    func isPerilous(_ board: Board) -> Bool {
        spawnHeight(board) >= spawnRowHeight - 1
    }

    /// The columns a pair can still be brought to: from the spawn columns outwards up to the first
    /// column standing a row below the spawn row or taller (that one included), which a pair
    /// lowered by gravity cannot pass.
    @inline(__always)
    func reachableColumns(_ board: Board) -> (low: Int, high: Int) {
        var low = spawnColumns.low
        while low > 0 && board.height(column: low) < spawnRowHeight - 1 { low -= 1 }
        var high = spawnColumns.high
        while high < Board.columnsCount - 1 && board.height(column: high) < spawnRowHeight - 1 { high += 1 }
        return (low, high)
    }

    static let sfe = BotSimulator(rules: .sfe)

    /// Drops `pair` at `placement` on a settled `board` and resolves the whole chain.
    @inline(__always)
    func place(_ pair: EggPair, at placement: Placement, on board: Board) -> Outcome {
        var after = board
        after.drop(pair, orientation: placement.orientation, column: placement.column)
        let (chain, garbage) = after.resolveChainCounts(rules: rules, mask: poppingMask)
        return Outcome(board: after, chain: chain, garbage: garbage, toppedOut: after.isSpawnBlocked(rules: rules))
    }

    /// The distinct placements of `pair` a pair spawned on `board` can plausibly reach: the top row
    /// free between the spawn columns and the target columns, and with `withinReach` no column
    /// between them standing a row below the spawn row or taller (``reachableColumns(_:)``, by
    /// which the evaluation judges a trigger reachable, and which a pair lowered by gravity cannot
    /// pass): insane's later pairs when it does not know the gravity they will meet.
    func placements(for pair: EggPair, on board: Board, withinReach: Bool = false) -> [Placement] {
        guard withinReach else { return Placement.distinct(for: pair).filter { isRoughlyReachable($0, on: board) } }
        let reach = reachableColumns(board)
        return Placement.distinct(for: pair).filter { placement in
            let child = placement.column + placement.orientation.columnOffset
            return min(placement.column, child) >= reach.low && max(placement.column, child) <= reach.high
                && isRoughlyReachable(placement, on: board)
        }
    }

    /// Whether a column between the spawn columns and `placement`'s columns stands within two rows
    /// of the spawn row, where gravity may stop a pair on its way.
    func isNearSpawnRow(_ placement: Placement, on board: Board) -> Bool {
        let child = placement.column + placement.orientation.columnOffset
        let low = min(placement.column, child, spawnColumns.low)
        let high = max(placement.column, child, spawnColumns.high)
        for column in low...high where board.height(column: column) >= spawnRowHeight - 2 {
            return true
        }
        return false
    }

    /// Whether the spawn row is free from the spawn columns to the target columns.
    func isRoughlyReachable(_ placement: Placement, on board: Board) -> Bool {
        let child = placement.column + placement.orientation.columnOffset
        let low = min(placement.column, child, spawnColumns.low)
        let high = max(placement.column, child, spawnColumns.high)
        for column in low...high where board.height(column: column) >= spawnRowHeight {
            return false
        }
        return true
    }

    /// Columns of the grid.
    static let columns = Board.columnsCount
    /// Rows of the grid (hidden and garbage-only rows included): the most a column holds.
    var rows: Int { rules.rows }

    /// How many eggs `column` holds on a settled board.
    @inline(__always)
    static func height(_ board: Board, column: Int) -> Int { board.height(column: column) }

    /// The cell code (0 empty, 1...6 colours, 7 garbage) at `column` and height `y` (0 = bottom).
    @inline(__always)
    static func code(_ board: Board, column: Int, y: Int) -> UInt8 { board.code(column: column, y: y) }

    /// Cells holding colour `code` (1...6) as a bit plane (16 bits per column, bit y = height y).
    @inline(__always)
    static func plane(_ board: Board, code: UInt8) -> UInt128 { board.plane(code: code) }

    /// Drops `count` eggs of colour `code` onto `column` (the virtual drops of the evaluation),
    /// resolves, and returns the chain they fire and the eggs it pops, the dropped eggs among them
    /// (0 and 0 when nothing pops or when a pair could not put that many eggs there: the rows only
    /// garbage reaches never hold a trigger).
    /// - Parameter quiet: nothing on `board` pops (``isQuiet(_:)``; true of every board a chain
    ///   resolved on), so only the dropped eggs' group can start a chain.
    @inline(__always)
    func virtualChain(_ board: Board, code: UInt8, column: Int, count: Int, quiet: Bool) -> (chain: Int, popped: Int) {
        let height = board.height(column: column)
        guard height + count <= pairRows else { return (0, 0) }
        var after = board
        // The `count` empty cells above the column's eggs, all set at once (a settled column's
        // cells from `height` up are empty, and stay within its lane: `height + count <= pairRows`).
        after.fillEmpty(((UInt128(1) << count) &- 1) << (column &* Board.laneBits &+ height), code: code)
        let first: UInt128
        if quiet {
            // The first step can only pop the dropped eggs' group: under 4 eggs nothing fires.
            // Most drops stop here, on one colour's plane instead of a step's six.
            let plane = after.plane(code: code) & poppingMask
            let group = Board.group(of: Board.bit(column: column, y: height) & plane, in: plane)
            first = group.nonzeroBitCount >= 4 ? group : 0
        } else {
            first = after.poppingCellsNow(mask: poppingMask)?.popped ?? 0
        }
        return after.resolveChainSteps(mask: poppingMask, firstPopping: first)
    }

    /// Whether nothing on `board` pops (a chain resolved on it ended by itself).
    func isQuiet(_ board: Board) -> Bool { board.poppingCellsNow(mask: poppingMask) == nil }

    /// Lands `count` garbage eggs on `board` as the rules do after a lock (zero time). Under
    /// `tsu` the columns of the 1–5 eggs beyond whole rows come from the grid's garbage stream,
    /// which the bot does not read: it expects them in the lowest columns.
    func landGarbage(_ count: Int, on board: inout Board) {
        switch rules.placement {
        case .levels:
            board.landGarbage(count)
        case .rowsThenRandomColumns(let dropMax):
            let count = min(max(count, 0), dropMax)
            let extra = (0..<Board.columnsCount).sorted { (board.height(column: $0), $0) < (board.height(column: $1), $1) }
                .prefix(count % Board.columnsCount)
            let placed = board.garbagePlacement(count, extraColumns: Array(extra), topRow: rules.topRow, dropMax: dropMax)
            for cell in placed { board[column: cell.column, row: cell.row] = .garbage }
            board.settle()
        }
    }
}
