import EggTestSupport
import Foundation
import Testing

/// Every screen at 80x24 and 120x40 (and practice at its minimum, 48x21): nothing is cut. A line
/// cut by the terminal's edge reaches its last column; names, "(you)", the title and the key
/// hints are checked whole.
@Suite("screens fit the terminal, in tmux", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"), .tags(.slow), .slowTier)
struct FitTests {
    /// A player name of the longest length allowed (24 bytes).
    static let longName = "abcdefghijklmnopqrstuvw1"

    /// The lines of `screen` that reach the last of `width` columns: cut by the edge.
    static func cutLines(_ screen: String, width: Int) -> [String] {
        screen.split(separator: "\n").map(String.init).filter { $0.count >= width }
    }

    /// The last line of `screen` with text.
    static func lastLine(_ screen: String) -> String {
        screen.split(separator: "\n").map(String.init).last { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
    }

    @Test("practice at 120x40, 80x24 and 48x21: the title, the names and the key hints are whole", arguments: [(120, 40), (80, 24), (48, 21)])
    func practice(width: Int, height: Int) throws {
        let session = try TmuxSession(
            command: "\(Harness.binary) play --practice --seed 6 --name \(Self.longName); echo EXIT=$?; sleep 60", width: width, height: height)
        defer { session.close() }
        let screen = try #require(session.waitFor("q quit"), "the game did not start, or its hints are cut: \(session.screen())")
        #expect(Self.cutLines(screen, width: width).isEmpty, "\(width)x\(height): cut lines: \(Self.cutLines(screen, width: width))\n\(screen)")
        let title = screen.split(separator: "\n").first.map(String.init) ?? ""
        #expect(GameScreenTests.firstMatch(#"[0-9]+:[0-9]{2}$"#, in: title.trimmingCharacters(in: .whitespaces)) != nil, "title cut: \(title)")
        #expect(Self.lastLine(screen).hasSuffix("q quit"), "key hints: \(Self.lastLine(screen))")
        // The board's name: whole over large cells (120x40), else 21 letters and "…" (22 columns).
        let shown = width >= 120 ? Self.longName : String(Self.longName.prefix(21)) + "…"
        #expect(screen.contains(shown), "the board's name is not '\(shown)': \(screen)")
        session.send("q")
        session.send("y")
        #expect(session.waitFor("EXIT=0") != nil)
    }

    @Test("the lobby with 8 peers at 80x24 and 120x40: every peer's line, the full name and (you), the n notice, all whole", arguments: [(80, 24), (120, 40)])
    func lobbyOfEight(width: Int, height: Int) throws {
        let port = TestPorts.next()
        let state = try Harness.temporaryDirectory("fit-lobby")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let room = "fit-\(port)"
        let session = try TmuxSession(
            command: "\(Harness.binary) play --interface 127.0.0.1 --port \(port) --room \(room) --name \(Self.longName); echo EXIT=$?; sleep 60",
            width: width, height: height, environment: ["XDG_STATE_HOME": state])
        defer { session.close() }
        // Seven bots join; they get ready when eight players are in the room, and wait for the
        // player of the screen.
        let bots = Process()
        bots.executableURL = URL(fileURLWithPath: Harness.binary)
        bots.arguments = ["bot", "--interface", "127.0.0.1", "--port", "\(port)", "--room", room, "--count", "7", "--players", "8",
                          "--seconds", "40", "--quiet", "--log", "\(state)/bots.jsonl"]
        bots.standardOutput = FileHandle.nullDevice
        bots.standardError = FileHandle.nullDevice
        try bots.run()
        defer { if bots.isRunning { bots.terminate() }; bots.waitUntilExit() }
        var screen = ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            screen = session.screen()
            if screen.components(separatedBy: "bot-").count - 1 >= 7 && screen.contains("q: quit") { break }
            usleep(200_000)
        }
        #expect(screen.components(separatedBy: "bot-").count - 1 >= 7, "the lobby does not list 7 bots: \(screen)")
        #expect(screen.contains("\(Self.longName) (you)"), "the name or (you) is cut: \(screen)")
        #expect(Self.cutLines(screen, width: width).isEmpty, "\(width)x\(height): cut lines: \(Self.cutLines(screen, width: width))\n\(screen)")
        #expect(screen.contains("q: quit"), "the footer is cut: \(screen)")
        // n before the start is allowed: the notice is whole.
        session.send("n")
        let notice = try #require(session.waitFor("Not yet"), "no notice: \(session.screen())")
        let line = notice.split(separator: "\n").map(String.init).first { $0.contains("Not yet") } ?? ""
        #expect(line.trimmingCharacters(in: .whitespaces).hasSuffix("."), "the notice is cut: \(line)")
        #expect(Self.cutLines(notice, width: width).isEmpty, "cut lines: \(Self.cutLines(notice, width: width))")
        session.send("q")
        #expect(session.waitFor("EXIT=0") != nil, "\(session.screen())")
    }

    @Test("a network match of 2 at 80x24 and its results: the title, the boards, the key hints and the table, all whole")
    func matchAndResults() throws {
        let port = TestPorts.next()
        let state = try Harness.temporaryDirectory("fit-match")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let common = "play --interface 127.0.0.1 --port \(port) --room fit-\(port) --speed 9"
        let alice = try TmuxSession(command: "\(Harness.binary) \(common) --name \(Self.longName) --id a1; echo EXIT=$?; sleep 60",
                                    width: 80, height: 24, environment: ["XDG_STATE_HOME": state])
        defer { alice.close() }
        let bob = try TmuxSession(command: "\(Harness.binary) \(common) --name bob --id b2; echo EXIT=$?; sleep 60",
                                  width: 80, height: 24, environment: ["XDG_STATE_HOME": state])
        defer { bob.close() }
        #expect(alice.waitFor("bob") != nil, "alice's lobby never listed bob: \(alice.screen())")
        alice.send("r")
        bob.send("r")
        let match = try #require(alice.waitFor("q leave"), "no match: \(alice.screen())")
        #expect(Self.cutLines(match, width: 80).isEmpty, "cut lines: \(Self.cutLines(match, width: 80))\n\(match)")
        #expect(match.contains("speed 9"), "the title is cut: \(match)")
        let results = try #require(alice.waitFor("largest chain", seconds: 60), "no results: \(alice.screen())")
        #expect(Self.cutLines(results, width: 80).isEmpty, "cut lines: \(Self.cutLines(results, width: 80))\n\(results)")
        #expect(results.contains("any other key: lobby"), "the results' hint is cut: \(results)")
        alice.send("q")
        bob.send("q")
        #expect(alice.waitFor("EXIT=0") != nil, "\(alice.screen())")
        #expect(bob.waitFor("EXIT=0") != nil, "\(bob.screen())")
    }
}
