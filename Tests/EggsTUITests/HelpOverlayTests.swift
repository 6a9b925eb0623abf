import EggTestSupport
import Foundation
import Testing

/// The help overlay (`?`) in every screen, driven end to end in tmux: it lists the keys as bound
/// now and the rules of the rule set in play, and any key closes it.
@Suite("help overlay in tmux", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"), .tags(.slow), .slowTier)
struct HelpOverlayTests {
    /// The screen's lines, joined with spaces (the overlay word-wraps).
    static func joined(_ screen: String) -> String {
        screen.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "│")).trimmingCharacters(in: .whitespaces) }
            .joined(separator: " ")
    }

    /// Waits until the overlay (`header`) is on the screen and drawn whole: every one of `phrases`
    /// shows (at most `seconds`). A capture can land while the terminal is still drawing the
    /// overlay, so its first line alone does not mean the rest is there. Returns the last screen
    /// that showed `header`, drawn whole or not, so the caller's expectations name what is missing.
    static func waitShown(_ session: TmuxSession, _ header: String, _ phrases: [String], seconds: Double = 20) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        var last: String?
        while Date() < deadline {
            let shown = session.screen()
            if shown.contains(header) {
                last = shown
                let text = joined(shown)
                if phrases.allSatisfy({ text.contains($0) }) { return shown }
            }
            usleep(50_000)
        }
        return last
    }

    /// Waits until the overlay is gone from the screen (at most `seconds`).
    static func waitGone(_ session: TmuxSession, seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if !session.screen().contains("any key closes it") { return true }
            usleep(50_000)
        }
        return false
    }

    @Test("practice: ? shows the keys as bound (a remapped hard drop too) and the tsu rules; the game stands still; any key closes it")
    func practice() throws {
        let session = try TmuxSession(
            command: "\(Harness.binary) play --practice --seed 5 --rules tsu --keys 'hard-drop=w' --name helper; echo EXIT=$?; sleep 60",
            width: 100, height: 30)
        defer { session.close() }
        #expect(session.waitFor("? help") != nil, "the game did not start, or its hints lack '? help': \(session.screen())")
        session.send("?")
        let wanted = ["w hard drop", "←/h left", "p pause", "Rules (tsu)", "Four or more eggs of one colour", "chain", "garbage", "hidden row", "Score", "You lose"]
        let shown = try #require(Self.waitShown(session, "any key closes it", wanted), "no overlay: \(session.screen())")
        let text = Self.joined(shown)
        for phrase in wanted {
            #expect(text.contains(phrase), "the overlay lacks '\(phrase)': \(shown)")
        }
        #expect(!text.contains("space hard drop"), "the overlay shows the default hard drop, not the bound one: \(shown)")
        // The game stands still behind it: the title's clock does not move.
        usleep(2_500_000)
        #expect(session.screen() == shown, "the practice screen moved behind the overlay")
        session.send("x")
        #expect(Self.waitGone(session), "x did not close the overlay: \(session.screen())")
        session.send("q")
        session.send("y")
        #expect(session.waitFor("EXIT=0") != nil, "screen: \(session.screen())")
    }

    @Test("replay: ? shows the replay's keys and the rules; any key closes it")
    func replay() throws {
        let directory = try Harness.temporaryDirectory("help-replay")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bots = try BotAndReplayTests.runBots(processes: 2, games: 1, directory: directory)
        let log = try #require(bots.first?.log)
        let session = try TmuxSession(command: "\(Harness.binary) replay \(log); echo EXIT=$?; sleep 60", width: 100, height: 30)
        defer { session.close() }
        #expect(session.waitFor("? help") != nil, "the replay did not start: \(session.screen())")
        session.send("?")
        let wanted = ["+/- speed", "n next game", "Rules (sfe)", "Four or more eggs of one colour", "You lose"]
        let shown = try #require(Self.waitShown(session, "any key closes it", wanted), "no overlay: \(session.screen())")
        let text = Self.joined(shown)
        for phrase in wanted {
            #expect(text.contains(phrase), "the overlay lacks '\(phrase)': \(shown)")
        }
        session.send("Space")
        #expect(Self.waitGone(session), "space did not close the overlay: \(session.screen())")
        #expect(!session.screen().contains("PAUSED"), "the key that closed the overlay also paused: \(session.screen())")
        session.send("q")
        #expect(session.waitFor("EXIT=0") != nil, "screen: \(session.screen())")
    }

    @Test("lobby and network match: ? shows the lobby keys, then in a match the game keys while the match goes on underneath; any key closes it")
    func network() throws {
        let port = TestPorts.next()
        let state = try Harness.temporaryDirectory("help-net")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let common = "play --interface 127.0.0.1 --port \(port) --room help-\(port) --speed 9"
        let alice = try TmuxSession(command: "\(Harness.binary) \(common) --name alice --id a1; echo EXIT=$?; sleep 60",
                                    environment: ["XDG_STATE_HOME": state])
        defer { alice.close() }
        let bob = try TmuxSession(command: "\(Harness.binary) \(common) --name bob --id b2; echo EXIT=$?; sleep 60",
                                  environment: ["XDG_STATE_HOME": state])
        defer { bob.close() }
        #expect(alice.waitFor("bob") != nil, "alice's lobby never listed bob: \(alice.screen())")
        alice.send("?")
        let lobbyWanted = ["In the lobby", "r/enter ready", "s speed", "b practice", "Rules (sfe)", "Four or more eggs of one colour"]
        let lobby = try #require(Self.waitShown(alice, "any key closes it", lobbyWanted), "no overlay in the lobby: \(alice.screen())")
        let lobbyText = Self.joined(lobby)
        for phrase in lobbyWanted {
            #expect(lobbyText.contains(phrase), "the lobby's overlay lacks '\(phrase)': \(lobby)")
        }
        alice.send("x")
        #expect(Self.waitGone(alice), "x did not close the overlay: \(alice.screen())")
        alice.send("r")
        bob.send("r")
        #expect(alice.waitFor("game 1") != nil, "no match started: \(alice.screen())")
        alice.send("?")
        let match = try #require(Self.waitShown(alice, "the match goes on underneath", ["space hard drop"]), "no overlay in the match: \(alice.screen())")
        #expect(Self.joined(match).contains("space hard drop"), "the match's overlay: \(match)")
        // Nobody plays: at speed 9 both top out within seconds. The match ends on bob's screen
        // while alice's overlay stays open, so her game went on under it.
        #expect(bob.waitFor("largest chain", seconds: 60) != nil, "the match did not end: \(bob.screen())")
        #expect(alice.screen().contains("any key closes it"), "alice's overlay closed by itself: \(alice.screen())")
        alice.send("x")
        #expect(alice.waitFor("largest chain", seconds: 10) != nil, "alice's match did not go on under the overlay: \(alice.screen())")
        alice.send("q")
        bob.send("q")
        #expect(alice.waitFor("EXIT=0") != nil, "\(alice.screen())")
        #expect(bob.waitFor("EXIT=0") != nil, "\(bob.screen())")
    }
}
