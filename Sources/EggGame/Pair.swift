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

/// The falling pair: colours, pivot position and orientation.
///
/// The pivot is always inside the grid. The child may sit in the hidden row just above the top
/// row (row −1) when the pair stands upright at the top; that row is always empty, and an egg that
/// comes to rest there when the pair locks vanishes.
public struct LivePair: Sendable, Hashable {
    public let pair: EggPair
    /// The pivot's column, 0...5.
    public internal(set) var column: Int
    /// The pivot's row, 0 (top) ... 11.
    public internal(set) var row: Int
    public internal(set) var orientation: Orientation

    /// A freshly spawned pair: horizontal in the top row, pivot in column 2, child in column 3.
    init(spawning pair: EggPair) {
        self.pair = pair
        column = Board.spawnColumns.0
        row = 0
        orientation = .right
    }

    init(pair: EggPair, column: Int, row: Int, orientation: Orientation) {
        self.pair = pair
        self.column = column
        self.row = row
        self.orientation = orientation
    }

    /// The child's column.
    public var childColumn: Int { column + orientation.columnOffset }
    /// The child's row; −1 is the hidden row above the grid.
    public var childRow: Int { row + orientation.rowOffset }

    /// Whether both eggs lie in free cells of `board` (the hidden row counts as free).
    func fits(on board: Board) -> Bool {
        LivePair.isFree(column: column, row: row, on: board)
            && LivePair.isFree(column: childColumn, row: childRow, on: board)
    }

    static func isFree(column: Int, row: Int, on board: Board) -> Bool {
        guard (0..<Board.columnsCount).contains(column), row < Board.rowsCount else { return false }
        if row < 0 { return row == -1 }
        return board.code(column: column, y: Board.rowsCount - 1 - row) == 0
    }

    func shifted(columns: Int, rows: Int) -> LivePair {
        LivePair(pair: pair, column: column + columns, row: row + rows, orientation: orientation)
    }

    /// The pair after a shift by one column, or nil when blocked.
    func moved(columns: Int, on board: Board) -> LivePair? {
        let moved = shifted(columns: columns, rows: 0)
        return moved.fits(on: board) ? moved : nil
    }

    /// The pair one row lower, or nil when it cannot fall.
    func fallen(on board: Board) -> LivePair? {
        let fallen = shifted(columns: 0, rows: 1)
        return fallen.fits(on: board) ? fallen : nil
    }

    /// The pair after a quarter turn, or nil when blocked.
    ///
    /// A turn whose child cell is blocked sideways (a wall or an egg) kicks the pair one column away
    /// from the obstacle if the pivot's new cell is free. A turn downward onto the floor or an egg
    /// does not kick: it does nothing. A turn upward is never blocked (the hidden row is free).
    func rotated(clockwise: Bool, on board: Board) -> LivePair? {
        let target = clockwise ? orientation.clockwise : orientation.anticlockwise
        let turned = LivePair(pair: pair, column: column, row: row, orientation: target)
        if turned.fits(on: board) { return turned }
        guard target.columnOffset != 0 else { return nil }
        let kicked = turned.shifted(columns: -target.columnOffset, rows: 0)
        return kicked.fits(on: board) ? kicked : nil
    }
}
