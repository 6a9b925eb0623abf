import EggTestSupport
import Foundation
import Testing

/// What the commands tell a person at a terminal: `replay --verify`'s summary, `bot`'s progress
/// line, and config errors that say what a key wants; a pipe keeps today's output.
@Suite("telling a person at a terminal", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"), .tags(.slow), .slowTier)
struct TellTests {
    @Test("replay --verify on a terminal prints a summary; --json and a pipe print the one JSON line")
    func verifySummary() throws {
        let directory = try Harness.temporaryDirectory("tell-verify")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bots = try BotAndReplayTests.runBots(processes: 2, games: 1, directory: directory)
        let log = try #require(bots.first?.log)
        let session = try TmuxSession(command: "\(Harness.binary) replay --verify \(log); echo EXIT=$?; sleep 60", width: 160, height: 30)
        defer { session.close() }
        let screen = try #require(session.waitFor("EXIT=0"), "screen: \(session.screen())")
        for phrase in ["players      2", "games        1", "messages", "checkpoints", "checked", "verdict      verified"] {
            #expect(screen.contains(phrase), "the summary lacks '\(phrase)': \(screen)")
        }
        #expect(!screen.contains("{\"ok\""), "JSON on a terminal: \(screen)")
        let json = try TmuxSession(command: "\(Harness.binary) replay --verify --json \(log); echo EXIT=$?; sleep 60", width: 400, height: 30)
        defer { json.close() }
        let jsonScreen = try #require(json.waitFor("EXIT=0"), "screen: \(json.screen())")
        #expect(jsonScreen.contains("{\"ok\":true"), "--json: \(jsonScreen)")
        let piped = try Harness.run(["replay", "--verify", log])
        #expect(piped.status == 0 && piped.stdout.hasPrefix("{\"ok\":true") && piped.stdout.split(separator: "\n").count == 1,
                "piped: \(piped.stdout)")
    }

    @Test("bot on a terminal shows one progress line on stderr; --quiet and a pipe show none")
    func botProgress() throws {
        let state = try Harness.temporaryDirectory("tell-bot")
        defer { try? FileManager.default.removeItem(atPath: state) }
        for quiet in [false, true] {
            let port = TestPorts.next()
            let session = try TmuxSession(
                command: "\(Harness.binary) bot --interface 127.0.0.1 --port \(port) --room tell-\(port) --count 2 --games 1 --speed 9 --level easy --seconds 4 --log \(state)/b\(port).jsonl \(quiet ? "--quiet" : "") >/dev/null; echo EXIT=$?; sleep 60",
                width: 100, height: 10)
            defer { session.close() }
            if quiet {
                #expect(session.waitFor("wins:", seconds: 3) == nil, "--quiet shows progress: \(session.screen())")
            } else {
                let line = session.waitForLine(matching: #"^game [0-9]+ · [0-9]+:[0-9]{2} · wins: "#, seconds: 5)
                #expect(line != nil, "no progress line: \(session.screen())")
            }
            #expect(session.waitFor("EXIT=", seconds: 20) != nil, "screen: \(session.screen())")
            // The line is taken off at the end.
            #expect(!session.screen().contains("wins:"), "the progress line stayed: \(session.screen())")
        }
        let port = TestPorts.next()
        let piped = try Harness.run(["bot", "--interface", "127.0.0.1", "--port", "\(port)", "--seconds", "1.5", "--log", "\(state)/p.jsonl"])
        #expect(!piped.stderr.contains("wins:") && !piped.stderr.contains("\r"), "progress on a pipe: \(piped.stderr)")
    }

    @Test("a key bound twice in the keys file names the keys file, not --keys")
    func keysFileConflict() throws {
        let home = try Harness.temporaryDirectory("tell-keys")
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createDirectory(atPath: home + "/eggs", withIntermediateDirectories: true)
        try "hard-drop = x\n".write(toFile: home + "/eggs/keys", atomically: true, encoding: .utf8)
        let result = try Harness.run(["play", "--practice"], environment: ["XDG_CONFIG_HOME": home])
        #expect(result.status == 2)
        #expect(result.stderr.contains("bound to both") && result.stderr.contains(home + "/eggs/keys"), "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("--keys"), "stderr: \(result.stderr)")
    }
}
