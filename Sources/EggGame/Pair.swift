/// One player input that changes the live pair. One byte on the wire.
public enum Move: UInt8, CaseIterable, Sendable, Hashable {
    case left = 0
    case right = 1
    case rotateCW = 2
    case rotateCCW = 3
    /// One cell down (soft drop or gravity); locks the pair when it cannot go down.
    case down = 4
    /// Straight down, then lock.
    case hardDrop = 5
}

/// Where the child egg sits relative to the pivot. Clockwise order: right, down, left, up.
public enum Orientation: UInt8, CaseIterable, Sendable, Hashable {
    case right = 0
    case down = 1
    case left = 2
    case up = 3

    /// The orientation after a clockwise quarter turn.
    public var clockwise: Orientation { Orientation(rawValue: (rawValue + 1) & 3)! }
    /// The orientation after an anticlockwise quarter turn.
    public var anticlockwise: Orientation { Orientation(rawValue: (rawValue + 3) & 3)! }

    /// Child column minus pivot column.
    public var columnOffset: Int {
        switch self {
        case .right: 1
        case .left: -1
        case .down, .up: 0
        }
    }

    /// Child row minus pivot row, with rows counted from the top.
    public var rowOffset: Int {
        switch self {
        case .down: 1
        case .up: -1
        case .right, .left: 0
        }
    }
}

/// The falling pair: colours, orientation and position in half cells.
///
/// `sfe` has no pivot: the pair is a 2×2 box (horizontal: left and right egg in one row;
/// vertical: top and bottom egg in one column). The `pair`'s pivot and child only name the two
/// eggs, and ``orientation`` says where the child sits relative to the pivot. Positions move in
/// half cells: an egg at half offset occupies two cells for every check.
public struct LivePair: Sendable, Hashable {
    public let pair: EggPair
    public internal(set) var orientation: Orientation
    /// The leftmost column of the pair.
    public internal(set) var boxColumn: Int
    /// The top egg's position in half cells: its top is in row `topHalfRow / 2`; odd means half
    /// offset (it also occupies the row below).
    public internal(set) var topHalfRow: Int

    /// Whether a first turn in a one-column shaft was refused, so the next turn flips the pair
    /// 180° (`tsu`'s quick turn). Any move that changes the pair clears it; gravity does not.
    public internal(set) var quickTurnArmed = false

    /// A freshly spawned pair by `rules` (`sfe`: horizontal at (2,3) and (3,3), pivot left;
    /// `tsu`: pivot at (2,3), child above it).
    package init(spawning pair: EggPair, rules: RuleSet = .sfe) {
        self.init(pair: pair, orientation: rules.spawnOrientation, pivotColumn: rules.spawnColumn, pivotHalfRow: 2 * rules.spawnRow)
    }

    /// A pair placed by its pivot.
    init(pair: EggPair, orientation: Orientation, pivotColumn: Int, pivotHalfRow: Int) {
        self.init(pair: pair, orientation: orientation, boxColumn: pivotColumn - (orientation == .left ? 1 : 0),
                  topHalfRow: pivotHalfRow - (orientation == .up ? 2 : 0))
    }

    init(pair: EggPair, orientation: Orientation, boxColumn: Int, topHalfRow: Int) {
        self.pair = pair
        self.orientation = orientation
        self.boxColumn = boxColumn
        self.topHalfRow = topHalfRow
    }

    public var isVertical: Bool { orientation.columnOffset == 0 }
    /// Whether the pair sits between two rows.
    public var isAtHalfOffset: Bool { topHalfRow & 1 == 1 }

    /// The pivot's column.
    public var column: Int { boxColumn + (orientation == .left ? 1 : 0) }
    /// The pivot's position in half cells.
    public var halfRow: Int { topHalfRow + (orientation == .up ? 2 : 0) }
    /// The pivot's (upper) row.
    public var row: Int { halfRow / 2 }
    /// The child's column.
    public var childColumn: Int { column + orientation.columnOffset }
    /// The child's position in half cells.
    public var childHalfRow: Int { halfRow + 2 * orientation.rowOffset }
    /// The child's (upper) row.
    public var childRow: Int { childHalfRow / 2 }

    /// The two eggs: column, half row and colour; the left (or top) egg first.
    public var eggs: [(column: Int, halfRow: Int, color: EggColor)] {
        let pivot = (column: column, halfRow: halfRow, color: pair.pivot)
        let child = (column: childColumn, halfRow: childHalfRow, color: pair.child)
        return orientation == .right || orientation == .down ? [pivot, child] : [child, pivot]
    }

    /// Whether the egg at `halfRow` in `column` (top row `halfRow / 2`) covers `row`.
    static func covers(halfRow: Int, row: Int) -> Bool {
        row == halfRow / 2 || row == (halfRow + 1) / 2
    }

    /// Whether every cell of both eggs is inside the pair's rows (`topRow` down) and free on `board`.
    package func fits(on board: Board, topRow: Int = Board.spawnRow) -> Bool {
        for egg in eggs {
            guard (0..<Board.columnsCount).contains(egg.column), egg.halfRow >= 2 * topRow,
                  (egg.halfRow + 1) / 2 < Board.rowsCount else { return false }
            if board[column: egg.column, row: egg.halfRow / 2] != .empty { return false }
            if board[column: egg.column, row: (egg.halfRow + 1) / 2] != .empty { return false }
        }
        return true
    }

    /// The pair moved (the quick-turn arming kept).
    package func shifted(columns: Int, halfRows: Int) -> LivePair {
        var moved = LivePair(pair: pair, orientation: orientation, boxColumn: boxColumn + columns, topHalfRow: topHalfRow + halfRows)
        moved.quickTurnArmed = quickTurnArmed
        return moved
    }

    /// The pair after a shift by one column, or nil when refused.
    func moved(columns: Int, on board: Board, rules: RuleSet = .sfe) -> LivePair? {
        let moved = shifted(columns: columns, halfRows: 0)
        return moved.fits(on: board, topRow: rules.pairTopRow) ? moved : nil
    }

    /// The eggs of the pair that rest (at full offset, on the floor or a board egg), by index in ``eggs``.
    func restingEggs(on board: Board) -> [Int] {
        let eggs = self.eggs
        return eggs.indices.filter { Self.rests(column: eggs[$0].column, halfRow: eggs[$0].halfRow, on: board) }
    }

    /// Whether an egg of the pair rests (``restingEggs(on:)`` is not empty), without building a list.
    package func isResting(on board: Board) -> Bool {
        Self.rests(column: column, halfRow: halfRow, on: board) || Self.rests(column: childColumn, halfRow: childHalfRow, on: board)
    }

    /// Whether an egg at `halfRow` in `column` rests: at full offset, on the floor or a board egg.
    private static func rests(column: Int, halfRow: Int, on board: Board) -> Bool {
        guard halfRow & 1 == 0 else { return false }
        let below = halfRow / 2 + 1
        return below >= Board.rowsCount || board[column: column, row: below] != .empty
    }

    /// The pair after a quarter turn by the rule set's rotation system, or nil when refused. A
    /// result in the same place and orientation with ``quickTurnArmed`` set is a refused first
    /// press in a one-column shaft.
    func rotated(clockwise: Bool, on board: Board, rules: RuleSet = .sfe) -> LivePair? {
        switch rules.rotation {
        case .boxNoKick: boxRotated(clockwise: clockwise, on: board, topRow: rules.pairTopRow)
        case .pivotWithKicks: pivotRotated(clockwise: clockwise, on: board, topRow: rules.pairTopRow)
        }
    }

    /// The pair after a turn or a shift (``Move/left``, ``Move/right``, ``Move/rotateCW``,
    /// ``Move/rotateCCW``) as the grid applies it, or nil when refused (and for the other moves).
    /// `moved` is false for a refused first press in a one-column shaft, which only arms the
    /// quick turn; any move that goes through disarms it.
    package func applying(_ move: Move, on board: Board, rules: RuleSet) -> (pair: LivePair, moved: Bool)? {
        let turned: LivePair?
        switch move {
        case .left, .right: turned = moved(columns: move == .right ? 1 : -1, on: board, rules: rules)
        case .rotateCW, .rotateCCW: turned = rotated(clockwise: move == .rotateCW, on: board, rules: rules)
        case .down, .hardDrop: turned = nil
        }
        guard var next = turned else { return nil }
        let armedOnly = next.quickTurnArmed && !quickTurnArmed
        if !armedOnly { next.quickTurnArmed = false }
        return (next, !armedOnly)
    }

    /// `sfe`: no pivot, no kick: the top-right cell of the 2×2 box stays occupied.
    /// Horizontal → vertical ends in the right egg's column; vertical → horizontal ends in the top
    /// egg's row, one column further left.
    private func boxRotated(clockwise: Bool, on board: Board, topRow: Int) -> LivePair? {
        let target = clockwise ? orientation.clockwise : orientation.anticlockwise
        let turned = LivePair(pair: pair, orientation: target, boxColumn: isVertical ? boxColumn - 1 : boxColumn + 1,
                              topHalfRow: topHalfRow)
        return turned.fits(on: board, topRow: topRow) ? turned : nil
    }

    /// `tsu`: the child turns around the pivot. A child blocked beside the pivot (a wall or an
    /// egg) shifts the pair one column the other way; a child blocked below (the floor or an egg)
    /// lifts the pair one row; a turn to the top blocked by the ceiling is refused. When both
    /// sides are blocked (a one-column shaft) the first press only arms the quick turn and the
    /// second flips the pair 180° (lifting it one row if the child would go into the floor).
    private func pivotRotated(clockwise: Bool, on board: Board, topRow: Int) -> LivePair? {
        let target = clockwise ? orientation.clockwise : orientation.anticlockwise
        let turned = LivePair(pair: pair, orientation: target, pivotColumn: column, pivotHalfRow: halfRow)
        if turned.fits(on: board, topRow: topRow) { return turned }
        switch target {
        case .right, .left:
            let kicked = turned.shifted(columns: -target.columnOffset, halfRows: 0)
            if kicked.fits(on: board, topRow: topRow) { return kicked }
            guard quickTurnArmed else {
                var armed = self
                armed.quickTurnArmed = true
                return armed
            }
            let flipped = LivePair(pair: pair, orientation: orientation.clockwise.clockwise, pivotColumn: column, pivotHalfRow: halfRow)
            if flipped.fits(on: board, topRow: topRow) { return flipped }
            let lifted = flipped.shifted(columns: 0, halfRows: -2)
            return lifted.fits(on: board, topRow: topRow) ? lifted : nil
        case .down:
            let lifted = turned.shifted(columns: 0, halfRows: -2)
            return lifted.fits(on: board, topRow: topRow) ? lifted : nil
        case .up:
            return nil
        }
    }
}
