import Consensus
import Foundation
import Testing
@testable import eggs_tui

/// A hostile or damaged practice log, sealed again so its digests pass: one error naming its
/// line, never a crash.
@Suite("practice logs read defensively")
struct PracticeLogReadingTests {
    static let header = #"{"format":"eggs-practice","version":2,"at":1700000000000000,"peer":"00000000000000a1","name":"ada","level":"easy","seed":"0000000000000007","colors":4,"speed":9,"bestOf":1,"rules":"sfe","height":0}"#

    static func load(_ lines: [String]) throws -> PracticeLog.Loaded {
        try PracticeLog.Loaded(path: "p.jsonl", bytes: Array(MessageLog.sealed(lines).utf8), passphrase: nil)
    }

    @Test("bad values, ticks going back, lines after the stop line: one error naming the line")
    func hostile() throws {
        let cases: [([String], String)] = [
            ([Self.header.replacingOccurrences(of: #""bestOf":1"#, with: #""bestOf":2"#)], "line 1:"),
            ([Self.header.replacingOccurrences(of: #""speed":9"#, with: #""speed":99999999999"#)], "line 1:"),
            ([Self.header.replacingOccurrences(of: #""eggs-practice""#, with: #""eggs-log""#)], "line 1:"),
            ([Self.header, #"{"tick":-1,"move":"left"}"#], "line 2:"),
            ([Self.header, #"{"tick":9,"move":"left"}"#, #"{"tick":3,"move":"left"}"#], "line 3:"),
            ([Self.header, #"{"tick":9,"move":"jump"}"#], "line 2:"),
            ([Self.header, #"{"tick":9,"stopped":true}"#, #"{"tick":9,"move":"left"}"#], "line 3:"),
            ([Self.header, #"{"tick":9,"game":0,"winner":7,"grids":["a","b"]}"#], "line 2:"),
            ([Self.header, #"{"tick":99999999999,"move":"left"}"#], "line 2:"),
            ([Self.header, #"{"tick":1,"move":}"#], "line 2:"),
            ([Self.header, #"{"tick":1}"#], "line 2:"),
        ]
        for (lines, named) in cases {
            do {
                _ = try Self.load(lines)
                Issue.record("accepted: \(lines.last!)")
            } catch {
                #expect("\(error)".contains("p.jsonl: \(named)"), "\(lines.last!): \(error)")
            }
        }
        // An edited line without sealing again: its digest.
        var edited = MessageLog.sealed([Self.header, #"{"tick":9,"move":"left"}"#]).split(separator: "\n").map(String.init)
        edited[1] = edited[1].replacingOccurrences(of: "left", with: "right")
        #expect(throws: CommandFailure.self) {
            try PracticeLog.Loaded(path: "p.jsonl", bytes: Array((edited.joined(separator: "\n") + "\n").utf8), passphrase: nil)
        }
    }

    @Test("a log that stops early re-runs up to its stop; a game's end the re-run does not reach is a mismatch")
    func verifyMismatch() throws {
        let stopped = try Self.load([Self.header, #"{"tick":30,"move":"hard-drop"}"#, #"{"tick":120,"stopped":true}"#])
        let report = PracticeLog.verify(stopped)
        #expect(report.mismatch == nil && report.games == 0)
        let forged = try Self.load([Self.header, #"{"tick":50,"game":1,"winner":0,"grids":["0000000000000000","0000000000000000"]}"#,
                                    #"{"tick":60,"stopped":true}"#])
        #expect(PracticeLog.verify(forged).mismatch?.contains("game 1") == true)
    }
}
