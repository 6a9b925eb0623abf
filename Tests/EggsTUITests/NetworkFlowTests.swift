import EggTestSupport
import Foundation
import Testing

/// Leaving a network match: `q` back to the lobby of the same room, and an opponent killed with
/// -9, in both ID orders (alice is `a1`, the lower ID; bob `b2`). Two `eggs-tui play` in tmux,
/// multicast on 127.0.0.1 only; every process and tmux server goes with the sessions, pass or fail.
@Suite("leaving a network match in tmux", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"), .tags(.slow), .slowTier)
struct NetworkFlowTests {
    /// The goal is 1 s; the checks allow this much (screen captures every 50 ms, a loaded machine).
    static let leaveBoundSeconds = 1.5

    /// Alice and bob in a room of their own, in game 1 of a match.
    static func startMatch(_ tag: String) throws -> (alice: TmuxSession, bob: TmuxSession, state: String) {
        let port = TestPorts.next()
        let state = try Harness.temporaryDirectory("net-\(tag)")
        let common = "play --interface 127.0.0.1 --port \(port) --room \(tag)-\(port) --speed 1"
        let alice = try TmuxSession(command: "\(Harness.binary) \(common) --name alice --id a1; echo EXIT=$?; sleep 60",
                                    environment: ["XDG_STATE_HOME": state])
        let bob: TmuxSession
        do {
            bob = try TmuxSession(command: "\(Harness.binary) \(common) --name bob --id b2; echo EXIT=$?; sleep 60",
                                  environment: ["XDG_STATE_HOME": state])
        } catch {
            alice.close()
            throw error
        }
        return (alice, bob, state)
    }

    /// Waits for `text` on `session`; returns the seconds it took since `since`, or nil.
    static func secondsUntil(_ text: String, on session: TmuxSession, since: Date, seconds: Double = 10) -> Double? {
        session.waitFor(text, seconds: seconds).map { _ in Date().timeIntervalSince(since) }
    }

    /// The `eggs-tui` process running in `session`'s pane.
    static func eggsProcess(_ session: TmuxSession) -> pid_t? {
        let binary = URL(fileURLWithPath: Harness.binary).resolvingSymlinksInPath().path
        return session.processes().panes.first { pid in
            let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? ""
            return URL(fileURLWithPath: exe).resolvingSymlinksInPath().path == binary
        }
    }

    @Test("q, y in a network match: the leaver is back in the lobby of the room, the other sees its name and the forfeit, both within 1 s, whichever ID leaves",
          arguments: [false, true])
    func leaveForLobby(higherLeaves: Bool) throws {
        let (alice, bob, state) = try Self.startMatch("flow")
        defer {
            alice.close()
            bob.close()
            try? FileManager.default.removeItem(atPath: state)
        }
        let (leaver, stayer) = higherLeaves ? (bob, alice) : (alice, bob)
        let (leaverName, stayerName) = higherLeaves ? ("bob", "alice") : ("alice", "bob")
        #expect(alice.waitFor("bob") != nil && bob.waitFor("alice") != nil, "the lobbies: \(alice.screen())\n\(bob.screen())")
        alice.send("r")
        bob.send("r")
        #expect(alice.waitFor("game 1,") != nil && bob.waitFor("game 1,") != nil, "no match started: \(alice.screen())")
        leaver.send("q")
        #expect(leaver.waitFor("Leave the match for the lobby") != nil, "no question: \(leaver.screen())")
        leaver.send("y")
        let pressed = Date()
        let back = Self.secondsUntil("lobby of room", on: leaver, since: pressed)
        let told = Self.secondsUntil("\(leaverName) left the match for the lobby: you win the game by forfeit", on: stayer, since: pressed)
        #expect(back != nil && back! <= Self.leaveBoundSeconds, "the leaver back in the lobby after \(back.map { "\($0) s" } ?? "never"): \(leaver.screen())")
        #expect(told != nil && told! <= Self.leaveBoundSeconds, "the other told after \(told.map { "\($0) s" } ?? "never"): \(stayer.screen())")
        print("leave (\(leaverName)): back in the lobby after \(back ?? -1) s, \(stayerName) told after \(told ?? -1) s")
        // The leaver is still a member of the room: its lobby lists the other, and no exit.
        #expect(!leaver.screen().contains("EXIT="), "the leaver's program ended: \(leaver.screen())")
        #expect(leaver.screen().contains(stayerName), "the leaver's lobby: \(leaver.screen())")
        // The other's results name the leaver (never a hex ID) and count the game.
        let results = stayer.waitFor("largest chain", seconds: 10)
        #expect(results?.contains("left the match for the lobby: you win the game by forfeit") == true, "results: \(results ?? stayer.screen())")
        #expect(results?.contains("Match over: 1 game") == true, "results: \(results ?? stayer.screen())")
        #expect(results.map { $0.contains("\n  \(leaverName) ") || $0.contains(" \(leaverName) ") } == true, "the leaver's row: \(results ?? "")")
        #expect(results?.contains("00000000000000") == false, "a hex ID on the results: \(results ?? "")")
        // q in the lobby quits, and the terminal is restored.
        leaver.send("q")
        #expect(leaver.waitFor("EXIT=0") != nil, "the leaver did not exit from the lobby: \(leaver.screen())")
        stayer.send("x")
        stayer.send("q")
        #expect(stayer.waitFor("EXIT=0") != nil, "the other did not exit from the lobby: \(stayer.screen())")
        // Both logs (the forfeit in them) replay exactly.
        let directory = state + "/eggs"
        let logs = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".jsonl") }
        #expect(logs.count == 2, "logs: \(logs)")
        for log in logs {
            let verified = try Harness.run(["replay", "--verify", directory + "/" + log])
            #expect(verified.status == 0, "replay --verify \(log): \(verified.stdout) \(verified.stderr)")
            let text = (try? String(contentsOfFile: directory + "/" + log, encoding: .utf8)) ?? ""
            #expect(text.contains("\"type\":\"forfeit\""), "no forfeit in \(log)")
        }
    }

    @Test("kill -9 of either player mid-match: the survivor says the rival's connection was lost and that it wins by forfeit, the same words whatever the IDs",
          arguments: [false, true])
    func killedRival(higherKilled: Bool) throws {
        let (alice, bob, state) = try Self.startMatch("kill")
        defer {
            alice.close()
            bob.close()
            try? FileManager.default.removeItem(atPath: state)
        }
        let (victim, survivor) = higherKilled ? (bob, alice) : (alice, bob)
        let victimName = higherKilled ? "bob" : "alice"
        #expect(alice.waitFor("bob") != nil && bob.waitFor("alice") != nil, "the lobbies: \(alice.screen())\n\(bob.screen())")
        alice.send("r")
        bob.send("r")
        #expect(alice.waitFor("game 1,") != nil && bob.waitFor("game 1,") != nil, "no match started: \(alice.screen())")
        usleep(500_000)
        let pid = try #require(Self.eggsProcess(victim), "no eggs-tui process in the victim's pane")
        kill(pid, SIGKILL)
        let killed = Date()
        let words = "\(victimName)'s connection was lost: you win the game by forfeit"
        let told = Self.secondsUntil(words, on: survivor, since: killed, seconds: 15)
        #expect(told != nil, "the survivor never said '\(words)': \(survivor.screen())")
        print("kill -9 (\(victimName)): the survivor told after \(told ?? -1) s")
        let results = survivor.waitFor("largest chain", seconds: 10)
        #expect(results?.contains(words) == true, "results: \(results ?? survivor.screen())")
        #expect(results?.contains("Match over: 1 game") == true, "results: \(results ?? survivor.screen())")
        #expect(results?.contains(" \(victimName) ") == true, "the victim's row: \(results ?? "")")
        #expect(results?.contains("00000000000000") == false, "a hex ID on the results: \(results ?? "")")
        survivor.send("x")
        survivor.send("q")
        #expect(survivor.waitFor("EXIT=0") != nil, "the survivor did not exit: \(survivor.screen())")
        // The survivor's log verifies; the lower ID's holds the view it gave up, which decided it.
        let survivorID = higherKilled ? "00000000000000a1" : "00000000000000b2"
        let directory = state + "/eggs"
        let logs = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasPrefix(survivorID) && $0.hasSuffix(".jsonl") }
        let log = try #require(logs.first.map { directory + "/" + $0 }, "no log of the survivor in \(directory)")
        let verified = try Harness.run(["replay", "--verify", log])
        #expect(verified.status == 0, "replay --verify of the survivor's log: \(verified.stdout) \(verified.stderr)")
        if higherKilled {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(text.contains("\"abandoned\":{\"view\":"), "the lower ID's log does not hold the view it gave up")
        }
    }

    @Test("lobby b practises on the room's settings: the starting height set in the lobby is on the practice grids")
    func practiceOnRoomSettings() throws {
        let port = TestPorts.next()
        let state = try Harness.temporaryDirectory("net-practice")
        defer { try? FileManager.default.removeItem(atPath: state) }
        // The command line offers no starting height; the lobby sets it to 3.
        let session = try TmuxSession(
            command: "\(Harness.binary) play --interface 127.0.0.1 --port \(port) --room practice-\(port) --name alice --id a1; echo EXIT=$?; sleep 60",
            environment: ["XDG_STATE_HOME": state])
        defer { session.close() }
        #expect(session.waitFor("network: connected") != nil, "the lobby: \(session.screen())")
        for height in 1...3 {
            session.send("h")
            #expect(session.waitFor("starting height \(height)", seconds: 5) != nil, "the lobby's height: \(session.screen())")
        }
        session.send("b")
        var practice = try #require(session.waitFor("practice against the"), "no practice: \(session.screen())")
        // The title can be captured before the grids are drawn: wait for both grids.
        let deadline = Date().addingTimeInterval(5)
        while Harness.gridBottomRows(practice).count < 2, Date() < deadline {
            usleep(50_000)
            practice = session.screen()
        }
        let rows = Harness.gridBottomRows(practice)
        #expect(rows.count == 2, "the practice grids: \(practice)")
        for row in rows {
            #expect(row.contains { $0 != "·" && $0 != " " }, "no starting garbage on a practice grid's bottom row '\(row)': \(practice)")
        }
    }

    @Test("lobby t changes the room's rule set, for every peer, and b practises under it")
    func lobbyRuleSet() throws {
        let (alice, bob, state) = try Self.startMatch("rules")
        defer {
            alice.close()
            bob.close()
            try? FileManager.default.removeItem(atPath: state)
        }
        #expect(alice.waitFor("bob") != nil && alice.waitFor("network: connected") != nil, "alice's lobby: \(alice.screen())")
        #expect(bob.waitFor("rules sfe") != nil, "bob's lobby: \(bob.screen())")
        alice.send("t")
        #expect(alice.waitFor("rules tsu", seconds: 5) != nil, "alice's lobby: \(alice.screen())")
        #expect(bob.waitFor("rules tsu", seconds: 5) != nil, "bob's lobby: \(bob.screen())")
        // tsu shows two next pairs: the practice screen under the room's rules does too.
        bob.send("b")
        #expect(bob.waitFor("practice against the") != nil, "no practice: \(bob.screen())")
        bob.send("?")
        #expect(bob.waitFor("Rules (tsu)", seconds: 5) != nil, "the practice's help names no tsu rules: \(bob.screen())")
        alice.send("t")
        #expect(alice.waitFor("rules sfe", seconds: 5) != nil, "alice's lobby: \(alice.screen())")
    }

    @Test("lobby e renames you in the room: the others' lobbies show the new name, and so does your title")
    func lobbyRename() throws {
        let (alice, bob, state) = try Self.startMatch("name")
        defer {
            alice.close()
            bob.close()
            try? FileManager.default.removeItem(atPath: state)
        }
        #expect(alice.waitFor("bob") != nil && alice.waitFor("network: connected") != nil, "alice's lobby: \(alice.screen())")
        #expect(bob.waitFor("alice") != nil, "bob's lobby: \(bob.screen())")
        alice.send("e")
        #expect(alice.waitFor("Your new name:", seconds: 5) != nil, "no name entry: \(alice.screen())")
        alice.send("-l", "zelda q")
        alice.send("BSpace")
        alice.send("BSpace")
        alice.send("Enter")
        #expect(bob.waitFor("zelda", seconds: 5) != nil, "bob's lobby does not show the new name: \(bob.screen())")
        #expect(alice.waitFor("you are zelda", seconds: 5) != nil, "alice's title: \(alice.screen())")
        #expect(!bob.screen().contains("zelda q"), "the backspaces were not applied: \(bob.screen())")
        // Saved for next time in alice's config file.
        #expect(alice.waitFor("in the room now, and next time", seconds: 5) != nil, "alice's notice: \(alice.screen())")
    }
}
