/// The bot's only window on the rules: where a pair can go on a board, and what a placement does
/// (the settled board, the chain it fires and the garbage it sends). The search and the evaluation
/// never touch the engine otherwise, so pointing the bot at another rule set means changing this
/// file only.
struct BotSimulator {
    /// A placement played out to a settled board.
    struct Outcome {
        var board: Board
        /// Chain steps that popped (0: nothing popped).
        var chain: Int
        var garbage: Int
        /// The next pair could not spawn: the player would be out.
        var toppedOut: Bool
    }

    /// Drops `pair` at `placement` on a settled `board` and resolves the whole chain.
    @inline(__always)
    static func place(_ pair: EggPair, at placement: Placement, on board: Board) -> Outcome {
        var after = board
        after.drop(pair, orientation: placement.orientation, column: placement.column)
        let (chain, garbage) = after.resolveChainCounts()
        return Outcome(board: after, chain: chain, garbage: garbage, toppedOut: after.isSpawnBlocked)
    }

    /// The distinct placements of `pair` a pair spawned on `board` can plausibly reach (the top row
    /// free between the spawn columns and the target columns).
    static func placements(for pair: EggPair, on board: Board) -> [Placement] {
        Placement.distinct(for: pair).filter { isRoughlyReachable($0, on: board) }
    }

    /// Whether the top row is free from the spawn columns to the target columns.
    static func isRoughlyReachable(_ placement: Placement, on board: Board) -> Bool {
        let child = placement.column + placement.orientation.columnOffset
        let low = min(placement.column, child, Board.spawnColumns.0)
        let high = max(placement.column, child, Board.spawnColumns.1)
        for column in low...high where board.height(column: column) >= Board.rowsCount {
            return false
        }
        return true
    }

    /// Columns of the grid.
    static let columns = Board.columnsCount
    /// Rows of the grid.
    static let rows = Board.rowsCount

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
    /// resolves, and returns the chain they fire (0 when nothing pops or the column is too full).
    @inline(__always)
    static func virtualChain(_ board: Board, code: UInt8, column: Int, count: Int) -> Int {
        guard board.height(column: column) + count <= rows else { return 0 }
        var after = board
        for _ in 0..<count { after.dropCode(code, column: column) }
        return after.resolveChainCounts().chain
    }
}

extension BotSimulator {
    /// Lands `count` garbage eggs on `board` as the rules do after a lock.
    static func landGarbage(_ count: Int, on board: inout Board) {
        board.landGarbage(count)
    }
}
