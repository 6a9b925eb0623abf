import Testing
@testable import EggGame

@Suite("board notation and resolve")
struct NotationTests {
    @Test("notation round-trips and missing top rows are empty")
    func roundTrip() throws {
        let board = try Board(notation: "\nRB#...\n\nYPGO..\n")
        #expect(board.notationRows.count == 15)
        #expect(board.notationRows.suffix(2) == ["RB#...", "YPGO.."])
        #expect(board.notationRows.prefix(13).allSatisfy { $0 == "......" })
        #expect(try Board(notation: board.notation) == board)
        #expect(board[column: 2, row: 13] == .garbage)
        #expect(board[column: 3, row: 14] == .egg(.orange))
    }

    /// The report as docs/rules.md lists it: chain, (popped, garbageCleared) per step, garbage, rows.
    /// (The JSON text itself comes from eggs-tui's one JSON encoder; CommandLineTests check it.)
    func fields(_ report: ResolveReport) -> (Int, [[Int]], Int, [String]) {
        (report.chain.chain, report.chain.steps.map { [$0.popped, $0.garbageCleared] }, report.chain.garbage, report.board.notationRows)
    }

    @Test("resolve of the worked example in docs/formats.md: two steps, 8 garbage, an empty board")
    func specExampleJSON() throws {
        let report = try resolveBoard(".B....\nRBB.#.\nRRRBB.\n", incoming: 0)
        #expect(fields(report) == (2, [[4, 0], [5, 1]], 8, Array(repeating: "......", count: 15)))
    }

    @Test("resolve with no pop and incoming garbage lands the garbage")
    func incomingGarbageJSON() throws {
        let report = try resolveBoard("R.....\n......\nBY....", incoming: 3)
        #expect(report.garbageLanded == 3)
        #expect(fields(report) == (0, [], 0, Array(repeating: "......", count: 13) + ["R.....", "BY.###"]))
    }

    @Test("resolve of a single pop lands garbage after the chain")
    func popThenGarbageJSON() throws {
        let report = try resolveBoard("GGGG..", incoming: 1)
        #expect(fields(report) == (1, [[4, 0]], 1, Array(repeating: "......", count: 14) + [".....#"]))
    }

    @Test("a row that is too short or too long names its line and column")
    func wrongWidth() {
        #expect(throws: BoardParseError(kind: .wrongWidth(width: 3), line: 2, column: 4)) {
            try Board(notation: "......\nRRR\n")
        }
        #expect(throws: BoardParseError(kind: .wrongWidth(width: 7), line: 3, column: 7)) {
            try Board(notation: "......\n\nRRRRRRR")
        }
    }

    @Test("an unknown character names its line and column")
    func unknownCharacter() {
        let error = #expect(throws: BoardParseError.self) { try Board(notation: "......\n.....\n..Rx..") }
        #expect(error == BoardParseError(kind: .wrongWidth(width: 5), line: 2, column: 6))
        #expect(throws: BoardParseError(kind: .unknownCharacter("x"), line: 1, column: 3)) {
            try Board(notation: "..x...")
        }
        #expect(BoardParseError(kind: .unknownCharacter("x"), line: 1, column: 3).description
            == "line 1, column 3: unknown character 'x'; use . R B Y P G O #")
    }

    @Test("a sixteenth row is an error on its line, blank lines counted but ignored")
    func tooManyRows() {
        let text = Array(repeating: "......", count: 6).joined(separator: "\n") + "\n\n"
            + Array(repeating: "......", count: 10).joined(separator: "\n")
        #expect(throws: BoardParseError(kind: .tooManyRows, line: 17, column: 1)) { try Board(notation: text) }
        let fifteen = Array(repeating: "R.B.Y.", count: 15).joined(separator: "\n")
        #expect(throws: Never.self) { try Board(notation: fifteen) }
    }
}
