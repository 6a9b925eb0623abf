import Testing
@testable import EggBot
@testable import EggGame

@Suite("bot engine protocol")
struct BotEngineProtocolTests {
    @Test("the state line carries the board, the pair, the preview, the queued garbage and the opponents")
    func stateLine() {
        let mine = board("RB....", "RBY...")
        let line = BotEngineProtocol.stateLine(seq: 7, board: mine, pair: EggPair(pivot: .yellow, child: .purple),
                                               preview: [EggPair(pivot: .green, child: .red)], garbage: 12, opponents: [Board(), board("#.....")])
        let empty = Array(repeating: "......", count: Board.rowsCount).joined(separator: "/")
        let rows = Array(repeating: "......", count: Board.rowsCount - 2) + ["RB....", "RBY..."]
        let garbageRows = Array(repeating: "......", count: Board.rowsCount - 1) + ["#....."]
        #expect(line == "state 7 \(rows.joined(separator: "/")) YP GR 12 \(empty),\(garbageRows.joined(separator: "/"))")
        #expect(BotEngineProtocol.stateLine(seq: 1, board: Board(), pair: EggPair(pivot: .red, child: .red), preview: [], garbage: -3, opponents: [])
                == "state 1 \(empty) RR - 0 -")
    }

    @Test("answers are validated: the right number, a column in the grid, an orientation, the child inside")
    func answers() {
        #expect(BotEngineProtocol.parsePlacement("place 3 0 up", seq: 3) == .success(Placement(column: 0, orientation: .up)))
        #expect(BotEngineProtocol.parsePlacement("place  3 4   right", seq: 3) == .success(Placement(column: 4, orientation: .right)))
        let bad: [(String, String)] = [
            ("", "expected 'place 3 COLUMN up|right|down|left'"),
            ("place 3 2", "expected 'place 3 COLUMN up|right|down|left'"),
            ("move 3 2 up", "expected 'place 3 COLUMN up|right|down|left'"),
            ("place 2 2 up", "answers state 2, expected 3"),
            ("place 3 6 up", "column must be 0 to 5"),
            ("place 3 -1 up", "column must be 0 to 5"),
            ("place 3 2 sideways", "orientation must be up, right, down or left"),
            ("place 3 5 right", "the child egg would be outside the grid"),
            ("place 3 0 left", "the child egg would be outside the grid"),
        ]
        for (line, reason) in bad {
            guard case .failure(let error) = BotEngineProtocol.parsePlacement(line, seq: 3) else {
                Issue.record("'\(line)' was accepted")
                continue
            }
            #expect(error.reason == reason, "'\(line)'")
            #expect(error.description == "bad answer '\(line)' (\(reason))")
        }
        #expect(BotEngineProtocol.parseReady("ready") == .success(""))
        #expect(BotEngineProtocol.parseReady("ready deep-egg") == .success("deep-egg"))
        #expect(BotEngineProtocol.parseReady("hello").isFailure)
        #expect(BotEngineProtocol.parseReady("ready a b").isFailure)
    }

    @Test("what an engine says is quoted escaped: no control character (C0, DEL, C1) is left, the backslash is escaped too")
    func escaping() {
        #expect(BotEngineProtocol.escaped("place 1 2 up é… 🥚") == "place 1 2 up é… 🥚")
        #expect(BotEngineProtocol.escaped("a\u{1B}[2Jb") == #"a\x1b[2Jb"#)
        #expect(BotEngineProtocol.escaped("\0\t\n\r\u{1}\u{7}\u{1F}\u{7F}") == #"\0\t\n\r\x01\x07\x1f\x7f"#)
        #expect(BotEngineProtocol.escaped("\u{80}\u{85}\u{9B}\u{9F}\u{A0}") == #"\u{80}\u{85}\u{9b}\u{9f}"# + "\u{A0}")
        #expect(BotEngineProtocol.escaped(#"\x1b \"#) == #"\\x1b \\"#, "a backslash the engine sent is not taken for an escape")
        var every = ""
        for value in UInt32(0)...0x3FF { every.unicodeScalars.append(Unicode.Scalar(value)!) }
        let shown = BotEngineProtocol.escaped(every)
        #expect(!shown.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        let error = BotEngineProtocol.AnswerError(line: "ready \u{1B}]0;title\u{7}\0", reason: "expected 'ready [NAME]'")
        #expect(error.description == #"bad answer 'ready \x1b]0;title\x07\0' (expected 'ready [NAME]')"#)
        let long = BotEngineProtocol.AnswerError(line: String(repeating: "\u{1B}", count: 70), reason: "r")
        #expect(long.description == "bad answer '" + String(repeating: #"\x1b"#, count: 60) + "…' (r)")
    }
}

private extension Result {
    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
