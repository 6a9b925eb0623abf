import EggSim
@testable import PeerNet
import Testing

/// Session identity: a peer's datagrams name its (ID, incarnation), and every process start
/// draws a fresh incarnation (`PeerNetConfig.freshIncarnation()`), so an earlier session of the
/// same room, same IDs and no passphrase is another set of senders: its datagrams replayed are
/// strangers' (challenged, never answered), whatever they carry.
@Suite("PeerNet replays of an earlier session without a passphrase")
struct SessionReplayTests {
    static func id(_ n: UInt64) -> PeerID { PeerID(n) }

    /// A 2-peer session of IDs 1 and 2 (no passphrase) whose incarnations start at `base`.
    static func session(seed: UInt64, base: UInt64) -> SimNetwork {
        SimNetwork(
            options: SimOptions(seed: seed, peerCount: 2),
            config: { id, inc in PeerNetConfig(peerID: id, incarnation: base &+ inc, randomSeed: seed &* 31 &+ id.raw &+ inc) },
            app: traffic(total: 400, startWhenMembers: 2, intervalNanoseconds: 20 * ms))
    }

    @Test("replay: an earlier session of the same room and IDs, no passphrase, replayed into a new one: no formation blocked, no view change, no delivery from it")
    func sameIDsWithoutPassphrase() {
        let earlier = Self.session(seed: 101, base: 0x1_0000)
        var capture: [(at: NetTime, to: PeerID, bytes: [UInt8])] = []
        earlier.filter = { packet in
            if packet.from != packet.to { capture.append((earlier.now, packet.to, packet.bytes)) }
            return true
        }
        earlier.run(forNanoseconds: 6 * seconds)
        #expect(capture.count > 300)

        let network = Self.session(seed: 103, base: 0x2_0000)
        var index = 0
        func replay(until end: NetTime, offset: UInt64) {
            while network.now < end {
                while index < capture.count, capture[index].at.adding(nanoseconds: offset) <= network.now {
                    network.inject(capture[index].bytes, to: capture[index].to)
                    index += 1
                }
                network.run(forNanoseconds: 1 * ms)
            }
        }
        replay(until: NetTime(nanoseconds: 3 * seconds), offset: 0)
        for node in network.nodes {
            #expect(node.core!.status == .member, "formed while the capture plays")
            #expect(node.core!.view.members == [1, 2].map(Self.id))
        }
        let views = network.nodes.map(\.views.count)
        replay(until: NetTime(nanoseconds: 6 * seconds), offset: 0)
        // Once more, mid-match, from its start.
        index = 0
        replay(until: NetTime(nanoseconds: 12 * seconds), offset: network.now.nanoseconds)
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds, extra: { net in
            net.nodes.allSatisfy { ($0.app as? TrafficApp)?.sent == 400 }
        }))
        #expect(network.nodes.map(\.views.count) == views, "no view change mid-match")
        for node in network.nodes {
            #expect(node.core!.stats.droppedUnproven > 0, "the replays reached admission and were dropped")
            for sender in network.nodes {
                #expect(node.deliveredSeqs(from: sender.peerID) == Array(1...400), "exactly this session's messages from \(sender.peerID)")
                #expect(node.core!.peers[sender.peerID].map { $0.incarnation == sender.incarnation && sender.incarnation > 0x2_0000 } ?? (node === sender))
            }
        }
        #expect(SimChecker.violations(network) == [])
    }

    @Test("incarnation: every process start draws a fresh, nonzero one, unrelated to the clock")
    func freshIncarnations() {
        let drawn = (0..<1000).map { _ in PeerNetConfig.freshIncarnation() }
        #expect(Set(drawn).count == drawn.count)
        #expect(!drawn.contains(0))
    }
}
