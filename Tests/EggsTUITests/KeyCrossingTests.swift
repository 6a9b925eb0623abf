import Consensus
import EggTestSupport
import Foundation
import PeerNet
import PeerNetUDP
import Testing
@testable import eggs_tui

/// A key press crosses the peer once: one take of the host's lock, one pump, whatever the key
/// does (a lobby key, a move in a match). Two peers in this process, on 127.0.0.1 (TTL 0).
@Suite("a key crosses the peer once", .serialized, .tags(.slow), .slowTier)
struct KeyCrossingTests {
    static func waitUntil(seconds: Double, tick: () -> Void = {}, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            tick()
            Thread.sleep(forTimeInterval: 0.016)
        }
        return condition()
    }

    @Test("a ready key in the lobby and a move key in a match each take the host's lock once")
    func oneLockPerKey() throws {
        let port = TestPorts.next()
        let multicast = MulticastOptions(group: "239.255.77.79", port: port, interface: "127.0.0.1")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eggs-keys-\(port)-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func makePeer(_ id: UInt64) throws -> NetPeer {
            var net = PeerNetConfig(room: "keys-\(port)", peerID: PeerID(id))
            net.incarnation = 1
            let options = NetPeer.Options(name: "p\(id)", net: net, multicast: multicast,
                                          logPath: directory.appendingPathComponent("\(id).log").path)
            return try NetPeer(options: options)
        }
        let a = try makePeer(0x11), b = try makePeer(0x22)
        defer {
            a.close()
            b.close()
        }
        let settings = MatchSettings(speed: 0, colors: 4, gamesPerMatch: 1)
        let screen = NetPlayScreen(peer: a, room: "keys-\(port)", name: "a", spectator: false, settings: settings,
                                   keys: KeyMap(), unicode: false)
        let formed = Self.waitUntil(seconds: 20) {
            [a, b].allSatisfy { peer in
                let (match, _, view) = peer.snapshot()
                return match.isSynced && view.members.count == 2 && match.lobby.count == 2
            }
        }
        try #require(formed, "the two peers never formed a room")

        // A lobby key: ready.
        var before = a.hostLockCount
        screen.handle(key: .character("r"))
        #expect(a.hostLockCount - before == 1, "a ready key took the lock \(a.hostLockCount - before) times")
        #expect(a.snapshot().match.isMarkedReady || a.snapshot().match.isReady)

        // Both ready: the match starts after the countdown; tick both until a's pair is live.
        b.withMatch { match, now in match.markReady(now: now) }
        let live = Self.waitUntil(seconds: 20, tick: {
            _ = screen.tick()
            b.withMatch { match, now in
                if !match.isPlaying { match.lobbyTick(now: now) }
                match.tick(now: now)
            }
        }) { a.snapshot().match.owner?.grid.state == .live }
        try #require(live, "the match never started")

        // A move key in the match: the pair moves, and the lock was taken once.
        let made = a.snapshot().match.owner?.inputsMade ?? 0
        before = a.hostLockCount
        screen.handle(key: .left)
        #expect(a.hostLockCount - before == 1, "a move key took the lock \(a.hostLockCount - before) times")
        #expect((a.snapshot().match.owner?.inputsMade ?? 0) > made, "the move was not applied")
    }
}
