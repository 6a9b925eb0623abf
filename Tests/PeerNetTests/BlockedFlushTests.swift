import EggPrimitives
import EggSim
@testable import PeerNet
import Testing

/// A blocked peer taken into a view change that then fails (its coordinator goes silent) is
/// non-primary all along: it returns to `.blocked` (since when it was blocked before) without
/// passing through `.member`, so it neither transmits its queued sends nor delivers what it
/// holds before it is primary again.
@Suite("PeerNet blocked peer in a failed view change")
struct BlockedFlushTests {
    static func id(_ n: UInt64) -> PeerID { PeerID(n) }
    static let stranger = Member(id: PeerID(0x777), incarnation: 9)
    static let room = FNV1a64.hash(Array("eggs".utf8))

    @Test("a blocked peer whose view change fails neither transmits its queued sends nor delivers before it is primary again")
    func failedFlushStaysBlocked() throws {
        let network = SimNetwork(
            options: SimOptions(seed: 0xB10C, peerCount: 5),
            app: traffic(total: 20, startWhenMembers: 5, intervalNanoseconds: 10 * ms))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        let two = network.node(Self.id(2))
        let three = network.node(Self.id(3))
        let core = two.core!
        let view = core.view
        #expect(view.members.count == 5)
        // A peer of a group whose view dominates ours, proven at member 2 by the real handshake.
        ForgedFlushTests.prove(Self.stranger, at: two, in: network, viewID: view.id + 1_000, viewKey: 1)
        // From here on member 2 is driven alone: it hears no other member of its view.
        while core.pollEvent() != nil {}
        while core.pollTransmit() != nil {}
        let blockedAt = network.now.adding(nanoseconds: core.config.suspectTimeoutNanoseconds + 1 * ms)
        core.handleTimeout(now: blockedAt)
        #expect(core.status == .blocked)
        try core.send(Array(repeating: 0xEE, count: 24), now: blockedAt)
        #expect(core.pendingSendCount == 1, "queued while blocked")
        // A late message of member 3 (2 of 5 members heard: still blocked) is held, not delivered.
        let delivered3 = try #require(core.deliveredUpTo(three.peerID))
        let late = DataItem(origin: three.member, viewID: view.id, seq: delivered3 + 1, payload: Array(repeating: 0x33, count: 24))
        core.handleDatagram(forge(.data([late]), from: three.peerID, incarnation: three.incarnation, to: two), now: blockedAt)
        #expect(core.status == .blocked)
        #expect(core.deliveredUpTo(three.peerID) == delivered3)
        // The dominating group admits the blocked peer, then its coordinator goes silent.
        let propose = Frame.propose(attempt: 1, baseID: view.id + 1_000, baseKey: 1, members: [Self.stranger, two.member])
        core.handleDatagram(forge(propose, from: Self.stranger.id, incarnation: Self.stranger.incarnation, to: two), now: blockedAt)
        #expect(core.status == .flushing)
        #expect(core.participation?.ballot.coordinator == Self.stranger.id)
        while core.pollTransmit() != nil {}
        let failedAt = blockedAt.adding(nanoseconds: 2 * core.config.flushTimeoutNanoseconds + 1 * ms)
        core.handleTimeout(now: failedAt)
        #expect(core.participation == nil, "the view change was given up")
        #expect(core.status == .blocked)
        #expect(core.blockedSince == blockedAt, "its bound runs on from when it was first blocked")
        #expect(core.pendingSendCount == 1, "the queued send waits for a primary view")
        var dataSent = 0
        while let bytes = core.pollTransmit() {
            if case .frame(_, .data) = Wire.decode(bytes, room: Self.room, auth: Authenticator(passphrase: nil), datagramBytesMax: 1200) { dataSent += 1 }
        }
        #expect(dataSent == 0, "no data datagram from a non-primary peer")
        var deliveries = 0
        while let event = core.pollEvent() { if case .delivered = event { deliveries += 1 } }
        #expect(deliveries == 0, "nothing delivered while non-primary")
        #expect(core.deliveredUpTo(three.peerID) == delivered3)
    }
}
