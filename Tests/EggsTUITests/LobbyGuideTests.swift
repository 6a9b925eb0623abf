import EggTestSupport
import Foundation
import Testing

/// The lobby says what to do next in every state, and whether the room is open or private,
/// driven end to end in tmux on 127.0.0.1.
@Suite("lobby guidance in tmux", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"), .tags(.slow), .slowTier)
struct LobbyGuideTests {
    @Test("alone, with another player not ready, ready and waiting: the lobby says what to do next; an open room is marked so")
    func nextSteps() throws {
        let port = TestPorts.next()
        let state = try Harness.temporaryDirectory("lobby-next")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let common = "play --interface 127.0.0.1 --port \(port) --room next-\(port)"
        let alice = try TmuxSession(command: "\(Harness.binary) \(common) --name alice --id a1; echo EXIT=$?; sleep 60",
                                    environment: ["XDG_STATE_HOME": state])
        defer { alice.close() }
        let alone = try #require(alice.waitFor("Waiting for players"), "alice's lobby: \(alice.screen())")
        let text = GameScreenTests.joined(alone)
        #expect(text.contains("share room 'next-\(port)', or b to practise"), "alice's lobby: \(alone)")
        #expect(alone.contains("(open room)"), "the open room is not marked: \(alone)")
        let bob = try TmuxSession(command: "\(Harness.binary) \(common) --name bob --id b2; echo EXIT=$?; sleep 60",
                                  environment: ["XDG_STATE_HOME": state])
        defer { bob.close() }
        #expect(alice.waitFor("Press r when you are ready to play; other players ready: 0 of 1.") != nil, "alice's lobby: \(alice.screen())")
        alice.send("r")
        #expect(alice.waitFor("You are ready; waiting for bob") != nil, "alice's lobby: \(alice.screen())")
        #expect(bob.waitFor("other players ready: 1 of 1.") != nil, "bob's lobby: \(bob.screen())")
        alice.send("q")
        bob.send("q")
        #expect(alice.waitFor("EXIT=0") != nil, "\(alice.screen())")
        #expect(bob.waitFor("EXIT=0") != nil, "\(bob.screen())")
    }

    @Test("a passphrase room is marked private, and the lobby says to share its passphrase")
    func privateRoom() throws {
        let port = TestPorts.next()
        let state = try Harness.temporaryDirectory("lobby-private")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let session = try TmuxSession(
            command: "\(Harness.binary) play --interface 127.0.0.1 --port \(port) --room secret-\(port) --passphrase hush --name carol; echo EXIT=$?; sleep 60",
            width: 80, height: 24, environment: ["XDG_STATE_HOME": state])
        defer { session.close() }
        let screen = try #require(session.waitFor("Waiting for players"), "the lobby: \(session.screen())")
        #expect(screen.contains("(private room)"), "the private room is not marked: \(screen)")
        #expect(GameScreenTests.joined(screen).contains("and its passphrase"), "the lobby: \(screen)")
        session.send("q")
        #expect(session.waitFor("EXIT=0") != nil, "\(session.screen())")
    }
}
