import EggTestSupport
import Foundation
import Testing

/// A whole network match in tmux (multicast on 127.0.0.1 only): the game-over banner, the results
/// screen, a rematch, and what a spectator is shown.
@Suite("network results in tmux", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"), .tags(.slow), .slowTier)
struct NetworkResultsTests {
    /// A room of tmux peers on 127.0.0.1: a port and a state directory of its own, and the
    /// `play` flags its peers share.
    struct Room {
        let state: String
        let common: String

        init(_ label: String, flags: String) throws {
            let port = TestPorts.next()
            state = try Harness.temporaryDirectory("net-\(label)")
            common = "play --interface 127.0.0.1 --port \(port) --room \(label)-\(port) \(flags)"
        }

        /// `eggs-tui <common> --name NAME --id ID [--spectate]` in a tmux session of its own, its
        /// exit status printed when it ends.
        func peer(_ name: String, id: String, spectate: Bool = false) throws -> TmuxSession {
            try TmuxSession(command: "\(Harness.binary) \(common) --name \(name) --id \(id)\(spectate ? " --spectate" : ""); echo EXIT=$?; sleep 60",
                            environment: ["XDG_STATE_HOME": state])
        }

        func remove() { try? FileManager.default.removeItem(atPath: state) }
    }

    @Test("network: the results stay until a key, a rematch starts at game 1, a spectator sees only its own key")
    func resultsAndRematch() throws {
        let room = try Room("res", flags: "--speed 9")
        defer { room.remove() }
        let alice = try room.peer("alice", id: "a1")
        defer { alice.close() }
        let bob = try room.peer("bob", id: "b2")
        defer { bob.close() }
        let carol = try room.peer("carol", id: "c3", spectate: true)
        defer { carol.close() }
        // The spectator is no member of the players' group: their lobby counts it as watching.
        #expect(alice.waitFor("1 watching") != nil && alice.waitFor("bob") != nil, "alice's lobby: \(alice.screen())")
        #expect(!alice.screen().contains("carol"), "a spectator is listed among the players: \(alice.screen())")
        alice.send("r")
        bob.send("r")
        #expect(alice.waitFor("game 1,") != nil, "no match started: \(alice.screen())")
        // The spectator's key line names its one key, no moves.
        let watching = carol.waitForLine(matching: "^watching +q leave")
        #expect(watching != nil, "carol's key line: \(carol.screen())")
        #expect(!(carol.screen().contains("rotate")), "carol is shown the players' keys: \(carol.screen())")
        // Alice drops her pairs at once until she tops out: first, as bob's pairs only fall, so bob
        // wins the game and the match. She presses until bob's screen says so (at most 30 s): on a
        // loaded machine a fixed number of presses can land before her game takes keys, and then
        // both stacks fall alike and the game is a draw.
        let pressing = Date()
        while !bob.screen().contains("alice topped out"), Date().timeIntervalSince(pressing) < 30 {
            alice.send("Space")
            usleep(100_000)
        }
        let banner = bob.waitFor("alice topped out")
        #expect(banner?.contains("you win game 1!") == true, "bob's banner: \(banner ?? bob.screen())")
        let results = try #require(bob.waitFor("largest chain", seconds: 15), "no results on bob's screen: \(bob.screen())")
        #expect(results.contains("You win the match!"), "bob's results: \(results)")
        #expect(alice.waitFor("You lose: bob wins the match.", seconds: 15) != nil, "alice's results: \(alice.screen())")
        #expect(carol.waitFor("bob wins the match.", seconds: 15) != nil, "carol's results: \(carol.screen())")
        usleep(4_000_000)
        #expect(bob.screen().contains("largest chain"), "bob's results did not stay: \(bob.screen())")
        // Alice asks for a rematch: every other peer sees it on its results screen.
        alice.send("r")
        #expect(bob.waitFor("alice wants a rematch", seconds: 10) != nil, "bob is not told of the rematch request: \(bob.screen())")
        #expect(carol.waitFor("alice wants a rematch", seconds: 10) != nil, "carol is not told of the rematch request: \(carol.screen())")
        bob.send("r")
        carol.send("x")
        let rematch = alice.waitFor("game 1,")
        #expect(rematch != nil, "the rematch did not start at game 1: \(alice.screen())")
        // q, y leaves the match for the lobby, where q quits.
        for session in [alice, bob] {
            session.send("q")
            session.send("y")
        }
        #expect(alice.waitFor("lobby of room") != nil, "alice is not back in the lobby: \(alice.screen())")
        alice.send("q")
        carol.send("q")
        #expect(alice.waitFor("EXIT=0") != nil)
    }

    @Test("network: a spectator joins the players with the ready key; pressed during a match, it joins when the match ends")
    func spectatorJoinsThePlayers() throws {
        let room = try Room("join", flags: "--speed 9 --best-of 1")
        defer { room.remove() }
        let alice = try room.peer("alice", id: "a1")
        defer { alice.close() }
        let bob = try room.peer("bob", id: "b2")
        defer { bob.close() }
        let carol = try room.peer("carol", id: "c3", spectate: true)
        defer { carol.close() }
        #expect(alice.waitFor("1 watching") != nil && alice.waitFor("bob") != nil, "alice's lobby: \(alice.screen())")
        #expect(carol.waitFor("watching as a spectator") != nil, "carol's lobby: \(carol.screen())")
        #expect(carol.waitFor("join the players") != nil, "carol is not told how to play: \(carol.screen())")

        // In the lobby: carol joins at once, and the players' lobby lists her.
        carol.send("r")
        #expect(carol.waitFor("carol (you)") != nil, "carol is not among the players: \(carol.screen())")
        #expect(!carol.screen().contains("watching as a spectator"), "carol still watches: \(carol.screen())")
        #expect(alice.waitFor("carol") != nil, "alice's lobby does not list carol: \(alice.screen())")
        // Everyone ready: a match of three.
        for session in [alice, bob, carol] { session.send("r") }
        #expect(alice.waitFor("game 1,", seconds: 30) != nil, "no match started: \(alice.screen())")
        #expect(carol.screen().contains("alice") && carol.screen().contains("bob"), "carol's match: \(carol.screen())")

        // Dave watches that match and asks to play during it: he joins once it is over.
        let dave = try room.peer("dave", id: "d4", spectate: true)
        defer { dave.close() }
        #expect(dave.waitFor("game 1,", seconds: 30) != nil, "dave does not see the match: \(dave.screen())")
        dave.send("r")
        #expect(dave.waitFor("when this match ends") != nil, "dave is not told when he joins: \(dave.screen())")
        // The players leave the match one by one (q, y): the last one standing wins it.
        for session in [alice, bob] {
            session.send("q")
            session.send("y")
        }
        #expect(dave.waitFor("dave (you)", seconds: 40) != nil, "dave did not join after the match: \(dave.screen())")
        #expect(alice.waitFor("dave", seconds: 20) != nil, "alice's lobby does not list dave: \(alice.screen())")
        for session in [alice, bob, carol, dave] { session.send("q") }
        #expect(dave.waitFor("EXIT=0") != nil, "dave's exit: \(dave.screen())")
        #expect(carol.waitFor("EXIT=0") != nil, "carol's exit: \(carol.screen())")
        // Each of them left two logs, the spectator's and the player's, and both verify.
        let logs = try FileManager.default.contentsOfDirectory(atPath: room.state + "/eggs").filter { $0.hasSuffix(".jsonl") }
        for id in ["00000000000000c3", "00000000000000d4"] {
            let own = logs.filter { $0.hasPrefix(id) }
            #expect(own.count == 2, "logs of \(id): \(own)")
            for log in own {
                let verify = try Harness.run(["replay", "--verify", room.state + "/eggs/" + log])
                #expect(verify.status == 0, "\(log): \(verify.stdout) \(verify.stderr)")
            }
        }
    }
}
