import Consensus
import EggGame
import PeerNet
import Testing
@testable import eggs_tui

/// The board's top edge: sfe's rows 0–2 (above the board, garbage only) drawn where they hold
/// garbage, the tray's icons in the other columns.
@Suite("board top edge: garbage above the board and the tray")
struct TopEdgeTests {
    static let glyphs = Glyphs(unicode: true)

    /// Twelve full rows, then garbage stacked above them: 3 in column 0, 1 in column 4.
    static func stackedAbove() -> PlayerGrid {
        let full = (0..<12).map { row in String((0..<6).map { ($0 + row) % 2 == 0 ? Character("R") : Character("B") }) }
        let board = try! Board(notation: (["#.....", "#.....", "#...#."] + full).joined(separator: "\n"))
        return PlayerGrid(board: board)
    }

    @Test("garbage resting in rows 0–2 is drawn on the edge of its columns, with its count, at every cell size")
    func resting() {
        let grid = Self.stackedAbove()
        let marks = MatchView.topEdge(grid: grid, queuedGarbage: 0)
        #expect(marks == [.above(3), .none, .none, .none, .above(1), .none])
        #expect(marks.map { $0.text(width: 2, glyphs: Self.glyphs) ?? "──" }.joined() == "▒3──────▒1──")
        #expect(marks.map { $0.text(width: 4, glyphs: Self.glyphs) ?? "────" }.joined() == "▒▒▒─" + String(repeating: "────", count: 3) + "▒───────")
        #expect(marks.map { $0.text(width: 1, glyphs: Glyphs(unicode: false)) ?? "-" }.joined() == "#---#-")
    }

    @Test("the tray's icons go in the columns without garbage above, largest first, from the left")
    func trayAround() {
        let marks = MatchView.topEdge(grid: Self.stackedAbove(), queuedGarbage: 38)
        #expect(marks == [.above(3), .tray(.thirty), .tray(.six), .tray(.one), .above(1), .tray(.one)])
        // Without garbage above, the tray is as before: icons from column 0.
        #expect(MatchView.topEdge(grid: PlayerGrid(), queuedGarbage: 7) == [.tray(.six), .tray(.one), .none, .none, .none, .none])
    }

    @Test("garbage falling through rows 0–2 shows on the edge until it falls into view")
    func fallingThrough() {
        var grid = PlayerGrid()
        #expect(grid.apply(.landGarbage(6)) == .garbageLanded(6))
        #expect(MatchView.topEdge(grid: grid, queuedGarbage: 0) == Array(repeating: .above(1), count: 6))
        var shown = 0
        while MatchView.topEdge(grid: grid, queuedGarbage: 0) != Array(repeating: .none, count: 6) && shown < 20 {
            grid.apply(.ticks(1))
            shown += 1
        }
        // Half a cell a tick: 6 ticks from row 0 to row 3.
        #expect(shown == 6)
        #expect(grid.state == .resolving)
    }

    @Test("tsu has no garbage-only rows: its hidden 13th row stays hidden")
    func tsuHiddenRow() {
        let board = try! Board(notation: (["R....."] + (0..<12).map { _ in "B....." }).joined(separator: "\n"), rowsMax: 13)
        let grid = PlayerGrid(board: board, rules: .tsu)
        #expect(grid.board[column: 0, row: 2] == .egg(.red))
        #expect(MatchView.topEdge(grid: grid, queuedGarbage: 0) == Array(repeating: .none, count: 6))
    }
}

/// A peer that joins during a `tsu` game draws the players' grids from pictures.
@Suite("pictured grids keep the match's rules")
struct PicturedGridTests {
    @Test("a tsu picture with an egg in the hidden 13th row draws no garbage mark above the board")
    func tsuHiddenRowStaysHidden() throws {
        // Column 2 full to the hidden row (Board row 2): 13 eggs, no four of a colour touching.
        let rows = (0..<13).map { row in "..\(row % 2 == 0 ? "R" : "B")..." }
        var grid = PlayerGrid(board: try Board(notation: rows.joined(separator: "\n"), rowsMax: 13), rules: .tsu)
        #expect(grid.board.height(column: 2) == 13)
        #expect(MatchView.topEdge(grid: grid, queuedGarbage: 0) == Array(repeating: .none, count: 6))
        let picture = GridPicture(player: PeerID(1), grid: grid)
        grid = picture.grid(rules: .tsu)
        #expect(MatchView.topEdge(grid: grid, queuedGarbage: 0) == Array(repeating: .none, count: 6))
    }
}
