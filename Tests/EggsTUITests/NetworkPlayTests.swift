import EggTestSupport
import Foundation
import Testing

/// Two `eggs-tui play` processes in tmux, multicast on 127.0.0.1 only.
@Suite("network play in tmux", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"), .tags(.slow), .slowTier)
struct NetworkPlayTests {
    @Test("two players: lobbies list each other, ready starts a match, moves reach the mirror, quit restores the terminal")
    func twoPlayers() throws {
        let port = TestPorts.next()
        let state = NSTemporaryDirectory() + "eggs-e2e-\(port)"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: state) }
        let common = "play --interface 127.0.0.1 --port \(port) --room e2e-\(port)"
        let alice = try TmuxSession(
            command: "\(Harness.binary) \(common) --name alice --id a1; echo EXIT=$?; sleep 60",
            environment: ["XDG_STATE_HOME": state])
        defer { alice.close() }
        let bob = try TmuxSession(
            command: "\(Harness.binary) \(common) --name bob --id b2; echo EXIT=$?; sleep 60",
            environment: ["XDG_STATE_HOME": state])
        defer { bob.close() }

        #expect(alice.waitFor("bob") != nil, "alice's lobby never listed bob: \(alice.screen())")
        #expect(bob.waitFor("alice") != nil, "bob's lobby never listed alice: \(bob.screen())")
        alice.send("r")
        bob.send("r")
        #expect(alice.waitFor("game 1") != nil, "no match started: \(alice.screen())")
        #expect(bob.waitFor("game 1") != nil, "no match started: \(bob.screen())")
        // The status line gives each other peer's measured round-trip time and loss.
        #expect(alice.waitForLine(matching: #"^rtt/loss: bob [0-9]+(\.[0-9])? ms [0-9]+%"#) != nil,
                "alice's status line shows no round-trip time to bob: \(alice.screen())")

        // Bob hard-drops his first pair at the far left; alice's mirror of bob (the second
        // panel) shows eggs at the bottom of its first column.
        bob.send("Left")
        bob.send("Left")
        bob.send("Left")
        bob.send("Space")
        var mirrored = false
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && !mirrored {
            let rows = Harness.gridBottomRows(alice.screen())
            mirrored = rows.count == 2 && Harness.leftCellFilled(rows[1])
            usleep(100_000)
        }
        #expect(mirrored, "bob's move never reached alice's mirror: \(alice.screen())")

        // q, y leaves the match for the lobby of the room; q there quits.
        alice.send("q")
        #expect(alice.waitFor("Leave the match for the lobby") != nil)
        alice.send("y")
        #expect(alice.waitFor("lobby of room") != nil, "alice is not back in the lobby: \(alice.screen())")
        alice.send("q")
        #expect(alice.waitFor("EXIT=0") != nil, "alice did not exit cleanly: \(alice.screen())")
        let alternate = (try? Harness.tmux(alice.socket, ["display-message", "-p", "-t", alice.name, "#{alternate_on}"])) ?? ""
        #expect(alternate.hasPrefix("0"), "alice's terminal is still in the game's screen")
        // Bob is left alone: the match ends with him as the winner by forfeit, on the results screen.
        #expect(bob.waitFor("alice left the match for the lobby: you win the game by forfeit") != nil, "bob's match did not end: \(bob.screen())")
        #expect(bob.waitFor("largest chain") != nil, "no results on bob's screen: \(bob.screen())")
        bob.send("q")
        #expect(bob.waitFor("EXIT=0") != nil)
    }
}
