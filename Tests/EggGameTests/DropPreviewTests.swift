@testable import EggGame
import Testing

/// The drop preview (where the live pair would rest if dropped now) against what the grid does.
@Suite("drop preview")
struct DropPreviewTests {
    @Test("the preview is where a hard drop leaves the pair's eggs, on 300 random boards and moves (both rule sets)", arguments: [RuleSet.sfe, .tsu])
    func matchesHardDrop(rules: RuleSet) {
        var random = Xoshiro256StarStar(seed: 41)
        for trial in 0..<300 {
            // Stacks of red, blue, yellow and purple with no same-colour neighbour, and a green and
            // orange pair: nothing pops, so the eggs stay where they land.
            let heights = (0..<Board.columnsCount).map { column in
                Board.spawnColumns.0 == column || Board.spawnColumns.1 == column ? random.nextInt(below: 9) : random.nextInt(below: 12)
            }
            var grid = PlayerGrid(board: stackedBoard(heights), rules: rules)
            let pair = random.nextInt(below: 2) == 0 ? EggPair(pivot: .green, child: .orange) : EggPair(pivot: .orange, child: .green)
            guard grid.apply(.spawn(pair)) == .spawned(garbageSent: 0) else { continue }
            for _ in 0..<random.nextInt(below: 6) {
                let move: Move = [.left, .right, .rotateCW, .rotateCCW, .down][random.nextInt(below: 5)]
                _ = grid.apply(.move(move))
                if grid.livePair == nil { break }
            }
            guard grid.livePair != nil else { continue }
            let preview = grid.dropPreview
            #expect(preview.count == 2, "trial \(trial): \(preview)")
            _ = grid.apply(.move(.hardDrop))
            _ = grid.apply(.ticks(600))
            for cell in preview {
                #expect(grid.board[column: cell.column, row: cell.row] == .egg(cell.color),
                        "trial \(trial) (\(rules.name)): the preview put \(cell.color) at column \(cell.column) row \(cell.row); the drop left \(grid.board[column: cell.column, row: cell.row])")
            }
            #expect(grid.board.eggsCount == heights.reduce(0, +) + 2, "trial \(trial): eggs lost or popped")
        }
    }

    @Test("a vertical pair previews stacked in its column; no live pair, no preview")
    func verticalAndNone() {
        var grid = spawnedGrid(emptyRow, pair: EggPair(pivot: .red, child: .blue))
        _ = grid.apply(.rotateCW)
        let preview = grid.dropPreview
        #expect(preview.count == 2)
        #expect(Set(preview.map(\.column)).count == 1, "\(preview)")
        #expect(Set(preview.map(\.row)) == [Board.rowsCount - 1, Board.rowsCount - 2], "\(preview)")
        _ = grid.apply(.hardDrop)
        #expect(grid.dropPreview.isEmpty)
    }
}
