import EggTestSupport
import Foundation
import Testing

/// Practice matches are logged and replay like network ones: `replay --verify`, `replay --cast`
/// and the replay screen (issue 35, "Keep").
@Suite("practice logs", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"), .tags(.slow), .slowTier)
struct PracticeLogTests {
    /// The practice logs in `state`/eggs.
    static func practiceLogs(_ state: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: state + "/eggs").filter { $0.hasSuffix(".jsonl") && $0.contains("-practice") }
            .sorted().map { state + "/eggs/" + $0 }
    }

    @Test("a practice match played to its end writes a log that replay --verify accepts, that casts and replays to the same results")
    func practiceMatchReplays() throws {
        let state = try Harness.temporaryDirectory("practice-log")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let session = try TmuxSession(command: "\(Harness.binary) play --practice --seed 11 --speed 9 --level easy --name ada; echo EXIT=$?; sleep 60",
                                      environment: ["XDG_STATE_HOME": state, "XDG_DATA_HOME": state + "/data"])
        defer { session.close() }
        #expect(session.waitFor("q quit") != nil, "no practice: \(session.screen())")
        // Hard drops until the match is over (the player tops out first, or the easy bot does).
        let start = Date()
        while !session.screen().contains("largest chain"), Date().timeIntervalSince(start) < 60 {
            session.send("Space")
            usleep(150_000)
        }
        let results = try #require(session.waitFor("largest chain", seconds: 10), "no results: \(session.screen())")
        let headline = try #require(results.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.hasSuffix("the match.") || $0.hasSuffix("the match!") || $0 == "No winner." }, "\(results)")
        session.send("q")
        #expect(session.waitFor("EXIT=0") != nil, "\(session.screen())")

        let logs = try Self.practiceLogs(state)
        #expect(logs.count == 1, "\(logs)")
        let log = try #require(logs.first)
        let verified = try Harness.run(["replay", "--verify", log])
        #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(verified.stdout.utf8)) as? [String: Any])
        #expect(report["ok"] as? Bool == true)
        #expect(report["complete"] as? Bool == true)
        #expect((report["games"] as? Int ?? 0) >= 1 && report["games"] as? Int == report["gamesChecked"] as? Int, "\(report)")

        // The match is in the history, against "bot (easy)", with its result; importing its log
        // again changes nothing.
        let history = try Harness.run(["history", "--json"], environment: ["XDG_DATA_HOME": state + "/data"])
        #expect(history.status == 0, "\(history.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [String: Any]
        let matches = try #require(object?["matches"] as? [[String: Any]], "\(history.stdout)")
        #expect(matches.count == 1, "\(history.stdout)")
        #expect((matches.first?["opponents"] as? [String]) == ["bot (easy)"], "\(history.stdout)")
        #expect(history.stdout.contains(headline.hasPrefix("You win") ? "won" : (headline.hasPrefix("You lose") ? "lost" : "")), "\(history.stdout)")
        let again = try Harness.run(["history", "import", log], environment: ["XDG_DATA_HOME": state + "/data"])
        #expect(again.status == 0 && again.stdout.hasPrefix("0 matches added, 0 updated, 1 already recorded"), "\(again.stdout) \(again.stderr)")

        // The cast ends on the same headline.
        let cast = state + "/practice.cast"
        let recorded = try Harness.run(["replay", log, "--cast", cast, "--speed", "8"])
        #expect(recorded.status == 0, "\(recorded.stderr)")
        let castReport = try #require(try JSONSerialization.jsonObject(with: Data(recorded.stdout.utf8)) as? [String: Any])
        #expect(castReport["result"] as? String == headline, "\(castReport)")
        let (_, events) = try CastTests.read(cast)
        #expect(events.filter { $0.code == "o" }.map(\.data).joined().contains("largest chain"))

        // The replay screen ends there too.
        let replay = try TmuxSession(command: "\(Harness.binary) replay \(log) --speed 16; echo EXIT=$?; sleep 60",
                                     environment: ["XDG_STATE_HOME": state])
        defer { replay.close() }
        let replayed = try #require(replay.waitFor("largest chain", seconds: 60), "the replay did not end on results: \(replay.screen())")
        #expect(replayed.contains(headline), "\(replayed)")
        #expect(replayed.contains("end of log"), "\(replayed)")
        replay.send("q")
        #expect(replay.waitFor("EXIT=0") != nil, "\(replay.screen())")

        // An edited move is found (exit 2 naming the line).
        var lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        if let move = lines.firstIndex(where: { $0.contains(#""move":"hard-drop""#) }) {
            lines[move] = lines[move].replacingOccurrences(of: #""move":"hard-drop""#, with: #""move":"left""#)
            try (lines.joined(separator: "\n") + "\n").write(toFile: state + "/edited.jsonl", atomically: true, encoding: .utf8)
            let edited = try Harness.run(["replay", "--verify", state + "/edited.jsonl"])
            #expect(edited.status == 2)
            #expect(edited.stderr.contains("line \(move + 1):"), "\(edited.stderr)")
            #expect(edited.stderr.split(separator: "\n").count == 1)
        } else {
            Issue.record("no hard drop in the log")
        }
    }

    @Test("a practice match left midway writes a log that verifies up to where it was left")
    func practiceLeftMidway() throws {
        let state = try Harness.temporaryDirectory("practice-left")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let session = try TmuxSession(command: "\(Harness.binary) play --practice --seed 5 --name ada; echo EXIT=$?; sleep 60",
                                      environment: ["XDG_STATE_HOME": state])
        defer { session.close() }
        #expect(session.waitFor("q quit") != nil, "no practice: \(session.screen())")
        for key in ["Left", "Left", "Space", "Right", "z", "Space", "Space"] {
            session.send(key)
            usleep(300_000)
        }
        session.send("q")
        session.send("y")
        #expect(session.waitFor("EXIT=0") != nil, "\(session.screen())")
        let log = try #require(try Self.practiceLogs(state).first)
        let verified = try Harness.run(["replay", "--verify", log])
        #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(verified.stdout.utf8)) as? [String: Any])
        #expect(report["ok"] as? Bool == true && report["complete"] as? Bool == true, "\(report)")
        #expect((report["moves"] as? Int ?? 0) >= 5, "\(report)")
    }
}
