import EggPrimitives
import EggSim
@testable import PeerNet
import Testing

/// Receivers do not read one another: their datagrams carry the envelope's receiver flag, and a
/// receiver drops flagged datagrams unread (in the kernel on a socket, `UDPLoopbackTests`), so a
/// receiver's work does not grow with the number of receivers. Many receivers NACKing the same
/// loss cost a member's repair budget once.
@Suite("PeerNet receivers: flagged, unread by one another, repaired once for all")
struct ReceiverFlagTests {
    static func isReceiver(_ id: PeerID) -> Bool { id.raw >= 100 }

    /// Two members sending, and `receivers` receivers (IDs 100…).
    static func room(seed: UInt64, receivers: Int) -> SimNetwork {
        let ids = [PeerID(1), PeerID(2)] + (0..<receivers).map { PeerID(100 + UInt64($0)) }
        return SimNetwork(
            options: SimOptions(seed: seed, peerCount: ids.count), peerIDs: ids,
            config: { id, incarnation in
                var config = PeerNetConfig(peerID: id, incarnation: incarnation, randomSeed: seed &* 31 &+ id.raw &+ incarnation)
                config.receiveOnly = Self.isReceiver(id)
                return config
            },
            app: { id, incarnation in
                Self.isReceiver(id) ? nil : TrafficApp(peer: id, incarnation: incarnation, total: 400, startWhenMembers: 2, intervalNanoseconds: 10 * ms)
            })
    }

    @Test("a receiver's datagrams carry the flag and reach the members only; members' datagrams carry none; every receiver follows")
    func flaggedAndUnread() {
        let network = Self.room(seed: 5, receivers: 4)
        var sent: [PeerID: (flagged: Int, plain: Int)] = [:]
        var receiverToReceiver = 0
        network.filter = { packet in
            if packet.to == packet.from { return true }
            let flagged = ReliableMulticast.isFromReceiver(packet.bytes)
            if flagged { sent[packet.from, default: (0, 0)].flagged += 1 } else { sent[packet.from, default: (0, 0)].plain += 1 }
            if Self.isReceiver(packet.from), Self.isReceiver(packet.to) { receiverToReceiver += 1 }
            return true
        }
        network.run(forNanoseconds: 6 * seconds)
        for node in network.nodes {
            let counts = sent[node.peerID] ?? (0, 0)
            if Self.isReceiver(node.peerID) {
                #expect(counts.flagged > 0 && counts.plain == 0, "receiver \(node.peerID): \(counts)")
                // It follows both members' streams from its start.
                #expect(node.core!.view.members == [PeerID(1), PeerID(2)], "receiver \(node.peerID) follows \(node.core!.view.members)")
                #expect(node.deliveryCount > 100, "receiver \(node.peerID) delivered \(node.deliveryCount)")
            } else {
                #expect(counts.flagged == 0 && counts.plain > 0, "member \(node.peerID): \(counts)")
                #expect(node.core!.receiversHeard(now: network.now) == 4)
            }
        }
        #expect(receiverToReceiver == 0, "datagrams from one receiver to another: \(receiverToReceiver)")

        // Handed one anyway (a socket without the filter), a receiver drops it unread.
        let receiver = network.node(PeerID(100)).core!
        let before = receiver.stats
        let other = network.node(PeerID(101)).core!
        let listen = Wire.encode(
            .listen(viewID: other.view.id, viewKey: other.view.key, server: PeerID(0), wantsSync: false),
            envelope: Envelope(version: Wire.version, kind: FrameKind.listen.rawValue, room: FNV1a64.hash(Array("eggs".utf8)),
                               sender: PeerID(101), incarnation: 1, packetNumber: 999, fromReceiver: true),
            auth: Authenticator(passphrase: nil))
        receiver.handleDatagram(listen, now: network.now)
        #expect(receiver.stats.receiverDatagramsSkipped == before.receiverDatagramsSkipped + 1)
        #expect(receiver.stats.datagramsAccepted == before.datagramsAccepted)
        #expect(receiver.stats.droppedInvalid == before.droppedInvalid)
    }

    @Test("200 receivers NACK the same 10 lost messages at once: 10 repairs, the budget spent once for each, nothing refused")
    func sameLossOneRepair() {
        let network = ReceiverBudgetTests.group(seed: 7)
        let a = network.node(PeerID(1)), b = network.node(PeerID(2))
        let core = a.core!
        let held = ReceiverBudgetTests.receiverHeard(in: network, from: PeerID(0x7000), flagged: true, thenRun: 300 * ms)
        #expect(held > 50, "b's messages delivered at a: \(held)")
        let before = core.stats
        let lost = (held - 20)...(held - 11)
        for i in 0..<200 {
            let nack = forge(.nack(origin: b.member, ranges: [lost]), from: PeerID(0x7000 + UInt64(i)), incarnation: 1, to: a, fromReceiver: true)
            network.inject(nack, to: a.peerID)
            // The NACKs come over 2 ms, the repair after them: those after it are served by it.
            if i % 50 == 49 { network.run(forNanoseconds: 500_000) }
        }
        network.run(forNanoseconds: 20 * ms)
        let repaired = core.stats.messagesRetransmitted - before.messagesRetransmitted
        let shared = core.stats.receiverRepairsShared - before.receiverRepairsShared
        #expect(core.stats.receiverRepairsRefused == before.receiverRepairsRefused, "refused: \(core.stats.receiverRepairsRefused - before.receiverRepairsRefused)")
        #expect(repaired >= 10 && repaired <= 20, "repairs: \(repaired)")
        #expect(shared >= 199 * 10 - 10 * 10, "NACKs served by a repair already coming or just sent: \(shared)")

        // Once the retransmit timeout has passed, a NACK of the same loss is served again (a
        // receiver that lost the repair too must get it).
        network.run(forNanoseconds: 20 * ms)
        network.inject(forge(.nack(origin: b.member, ranges: [lost]), from: PeerID(0x7001), incarnation: 1, to: a, fromReceiver: true), to: a.peerID)
        network.run(forNanoseconds: 20 * ms)
        #expect(core.stats.messagesRetransmitted - before.messagesRetransmitted - repaired == 10)
    }
}
