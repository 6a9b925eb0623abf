@testable import EggGame

/// A board from notation lines, top first (missing top rows empty).
func board(_ rows: String...) -> Board {
    try! Board(notation: rows.joined(separator: "\n"))
}

/// A settled board of the given column heights whose eggs have no same-colour neighbour.
func stackedBoard(_ heights: [Int]) -> Board {
    var board = Board()
    for (column, height) in heights.enumerated() {
        for y in 0..<height { board.setCode(column: column, y: y, code: UInt8(1 + (column + 2 * y) % 4)) }
    }
    return board
}

/// A grid whose live pair is `pair`, freshly spawned on `rows`.
func spawnedGrid(_ rows: String..., pair: EggPair = EggPair(pivot: .red, child: .blue)) -> PlayerGrid {
    var grid = PlayerGrid(board: try! Board(notation: rows.joined(separator: "\n")))
    let outcome = grid.apply(.spawn(pair))
    precondition(outcome == .spawned(garbageSent: 0), "fixture spawn failed: \(outcome)")
    return grid
}

extension PlayerGrid {
    /// Applies moves in order and returns the last outcome.
    @discardableResult
    mutating func apply(_ moves: Move...) -> InputOutcome {
        var last = InputOutcome.blocked
        for move in moves { last = apply(.move(move)) }
        return last
    }
}

let emptyRow = "......"
