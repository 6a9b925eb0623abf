import EggPrimitives
import EggSim
@testable import PeerNet
import Testing

/// What anyone on the LAN can make a member do through the receivers' door (`listen` and NACKs
/// from unproven senders): bounded, whatever they send (`ReliableMulticast+Receivers.swift`).
@Suite("PeerNet receivers: what a stranger's listen and NACKs cost a member")
struct ReceiverBudgetTests {
    static let ms: UInt64 = 1_000_000

    static func group(seed: UInt64) -> SimNetwork {
        let network = SimNetwork(options: SimOptions(seed: seed, peerCount: 2),
                                 app: traffic(total: 2_000, startWhenMembers: 2, intervalNanoseconds: 5 * Self.ms))
        for _ in 0..<100 where !network.nodes.allSatisfy({ $0.core!.view.members.count == 2 }) {
            network.run(forNanoseconds: 100 * Self.ms)
        }
        #expect(network.nodes.allSatisfy { $0.core!.view.members.count == 2 }, "the group formed")
        network.run(forNanoseconds: 1_000 * Self.ms)
        return network
    }

    /// A receiver (`receiver`, its `listen` flagged as a receiver's with `flagged`) is heard by
    /// member 1, which then keeps delivered messages for it; after `nanoseconds`, how far member
    /// 2's stream was delivered at member 1.
    static func receiverHeard(in network: SimNetwork, from receiver: PeerID, flagged: Bool, thenRun nanoseconds: UInt64) -> UInt64 {
        let a = network.node(PeerID(1)), core = a.core!
        network.inject(forge(.listen(viewID: core.view.id, viewKey: core.view.key, server: PeerID(0), wantsSync: false),
                             from: receiver, incarnation: 1, to: a, fromReceiver: flagged), to: a.peerID)
        network.run(forNanoseconds: nanoseconds)
        return core.deliveredUpTo(PeerID(2)) ?? 0
    }

    @Test("a flood of listen asks from 5,000 made-up IDs: at most one snapshot asked a second; the receiver table stays bounded")
    func listenFlood() {
        let network = Self.group(seed: 1)
        let server = network.node(PeerID(2))
        let core = server.core!
        let before = core.stats.receiverSnapshotsAsked
        for i in 0..<5_000 {
            let forged = forge(.listen(viewID: core.view.id, viewKey: core.view.key, server: server.peerID, wantsSync: true),
                               from: PeerID(0x5000 + UInt64(i)), incarnation: 1, to: server)
            network.inject(forged, to: server.peerID)
            if i % 500 == 499 { network.run(forNanoseconds: 100 * Self.ms) }
        }
        let asked = core.stats.receiverSnapshotsAsked - before
        #expect(server.log.filter { $0.event == .receiversWaiting }.count == Int(asked))
        // 5,000 asks over about a second: one snapshot asked (the app answers nothing here), and
        // at most one more once the second is over.
        #expect(asked >= 1 && asked <= 2, "snapshots asked: \(asked)")
        #expect(core.receiverService.heard.count <= ReceiverService.trackedMax)
        #expect(core.view.members.count == 2 && core.peers.count <= 2, "a stranger entered the peer table")
    }

    @Test("NACKs from unproven senders for everything held: repairs stay within the budget of 600 a second")
    func nackFlood() {
        let network = Self.group(seed: 2)
        let a = network.node(PeerID(1)), b = network.node(PeerID(2))
        let core = a.core!
        // A receiver is around: members keep delivered messages for it.
        let held = Self.receiverHeard(in: network, from: PeerID(0x7777), flagged: false, thenRun: 500 * Self.ms)
        #expect(held > 100, "b's messages delivered at a: \(held)")
        let before = core.stats.messagesRetransmitted
        let member = b.member
        for i in 0..<200 {
            let nack = forge(.nack(origin: member, ranges: [max(1, held - 250)...held]), from: PeerID(0x9000 + UInt64(i)), incarnation: 1, to: a)
            network.inject(nack, to: a.peerID)
            if i % 20 == 19 { network.run(forNanoseconds: 10 * Self.ms) }
        }
        network.run(forNanoseconds: 20 * Self.ms)
        let repaired = core.stats.messagesRetransmitted - before
        // 200 NACKs of 250 seqs in 0.12 s ask for 50,000 repairs: the budget (600, refilled at
        // 600 a second) gives at most about 700.
        #expect(repaired > 0 && repaired <= 700, "repairs: \(repaired)")
        #expect(core.stats.receiverRepairsRefused > 0)
    }
}
