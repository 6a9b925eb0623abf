import EggTestSupport
import Foundation
import Testing

@Suite("terminal game in tmux", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"), .tags(.slow), .slowTier)
struct TerminalTests {
    @Test("with no TERM the game prints a clear error and exits 2")
    func noTerm() throws {
        let session = try TmuxSession(command: "env -u TERM \(Harness.binary) play --practice; echo EXIT=$?; sleep 60")
        defer { session.close() }
        let screen = session.waitFor("EXIT=")
        #expect(screen?.contains("no usable terminal") == true, "screen: \(screen ?? session.screen())")
        #expect(screen?.contains("EXIT=2") == true)
    }

    @Test("a too-small terminal says how large it must be")
    func tooSmall() throws {
        let session = try TmuxSession(command: "\(Harness.binary) play --practice --seed 1", width: 40, height: 12)
        defer { session.close() }
        let screen = session.waitFor("Terminal too small")
        #expect(screen != nil, "screen: \(session.screen())")
        #expect(screen?.contains("at least") == true)
        session.send("q")
        session.send("y")
    }

    @Test("practice: keys move the pair, the bot plays, quitting restores the terminal")
    func practiceMovesAndQuits() throws {
        let session = try TmuxSession(
            command: "\(Harness.binary) play --practice --seed 7 --level easy --name tester; echo EXIT=$?; sleep 60",
            width: 100, height: 30)
        defer { session.close() }
        let first = try #require(session.waitFor("tester"))
        #expect(first.contains("practice against the easy bot"))
        // Hard-drop the first pair at the far left: the bottom-left cells fill.
        for _ in 0..<3 { session.send("Left") }
        session.send("Space")
        var landed = false
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && !landed {
            landed = Harness.gridBottomRows(session.screen()).first.map(Harness.leftCellFilled) ?? false
            usleep(100_000)
        }
        #expect(landed, "the pair did not land in the left column: \(session.screen())")
        session.send("q")
        #expect(session.waitFor("Leave the match?") != nil)
        session.send("y")
        let end = session.waitFor("EXIT=0")
        #expect(end != nil, "screen: \(session.screen())")
        let alternate = (try? Harness.tmux(session.socket, ["display-message", "-p", "-t", session.name, "#{alternate_on}"])) ?? ""
        #expect(alternate.hasPrefix("0"), "the terminal is still in the game's screen")
    }

    @Test("Ctrl-C and SIGTERM end the game and restore the terminal")
    func interruptRestores() throws {
        for (signal, how) in [("INT", "C-c"), ("TERM", "kill")] {
            let session = try TmuxSession(
                command: "\(Harness.binary) play --practice --seed 3 --name sig\(signal); echo EXIT=$?; sleep 60",
                width: 100, height: 30)
            defer { session.close() }
            #expect(session.waitFor("sig\(signal)") != nil, "the game did not start: \(session.screen())")
            if how == "C-c" {
                session.send("C-c")
            } else {
                let pids = (try? Harness.tmux(session.socket, ["list-panes", "-t", session.name, "-F", "#{pane_pid}"])) ?? ""
                let shell = Int32(pids.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
                // The game is the shell's only child.
                let children = (try? String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)) ?? ""
                let game = Int32(children.split(separator: " ").first ?? "") ?? 0
                #expect(game > 0)
                if game > 0 { kill(game, SIGTERM) }
            }
            let end = session.waitFor("EXIT=")
            #expect(end != nil, "the game did not end on SIG\(signal): \(session.screen())")
            let alternate = (try? Harness.tmux(session.socket, ["display-message", "-p", "-t", session.name, "#{alternate_on}"])) ?? ""
            #expect(alternate.hasPrefix("0"), "SIG\(signal) left the terminal in the game's screen")
        }
    }
}
