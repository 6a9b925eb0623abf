import EggPrimitives
import EggSim
@testable import PeerNet
import Testing

/// Flush frames (propose, cut, install, ack, ready) from a peer that passed the join handshake
/// but is not a member of the view in question: without a passphrase anyone on the LAN can be
/// such a peer (it answers challenges under any ID it likes). None may change a view.
/// (Not covered, and not preventable without a passphrase: such a peer that claims, by its
/// heartbeats, a view dominating ours is indistinguishable from a real group that merges ours,
/// and may propose from that view; and anyone may forge a member's own identity.)
@Suite("PeerNet forged flush frames")
struct ForgedFlushTests {
    static func id(_ n: UInt64) -> PeerID { PeerID(n) }
    static let stranger = Member(id: PeerID(0x666), incarnation: 7)
    static let room = FNV1a64.hash(Array("eggs".utf8))

    /// Makes `target` prove `stranger` through the real handshake: a heartbeat from it gets it
    /// challenged; the challenge is read off the network and answered with its cookie. The
    /// stranger's heartbeat names `viewID`/`viewKey` (what it claims to be a member of).
    static func prove(_ stranger: Member, at target: SimNode, in network: SimNetwork, viewID: UInt64 = 0, viewKey: UInt64 = 0) {
        var cookie: UInt64?
        network.filter = { packet in
            if packet.from == target.peerID, case let .frame(_, .challenge(entries)) = Wire.decode(
                packet.bytes, room: Self.room, auth: Authenticator(passphrase: nil), datagramBytesMax: 1200) {
                for e in entries where e.target == stranger { cookie = e.cookie }
            }
            return true
        }
        let hello = Frame.heartbeat(status: viewID == 0 ? .joining : .member, viewID: viewID, viewKey: viewKey, sentSeq: 0, delivered: [])
        network.inject(forge(hello, from: stranger.id, incarnation: stranger.incarnation, to: target), to: target.peerID)
        network.run(forNanoseconds: 30 * ms)
        network.filter = nil
        guard let cookie else {
            Issue.record("\(target.peerID) sent no challenge to the stranger")
            return
        }
        let response = Frame.response(challenger: target.member, cookie: cookie)
        network.inject(forge(response, from: stranger.id, incarnation: stranger.incarnation, to: target), to: target.peerID)
        #expect(target.core!.peers[stranger.id]?.incarnation == stranger.incarnation, "the stranger is proven at \(target.peerID)")
        network.inject(forge(hello, from: stranger.id, incarnation: stranger.incarnation, to: target), to: target.peerID)
    }

    /// A 3-peer group that exchanged 100 messages each.
    static func group(seed: UInt64) -> SimNetwork {
        let network = SimNetwork(
            options: SimOptions(seed: seed, peerCount: 3),
            app: traffic(total: 100, startWhenMembers: 3, intervalNanoseconds: 10 * ms))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        return network
    }

    @Test("forged flush: a propose for the group's view from a proven non-member freezes nobody and changes no view")
    func proposeForOurView() {
        let network = Self.group(seed: 0xF0)
        let target = network.node(Self.id(2))
        let view = target.core!.view
        // It claims a view far ahead of ours (so it is no joiner candidate and no one admits it).
        Self.prove(Self.stranger, at: target, in: network, viewID: view.id + 1_000, viewKey: 1)
        let members = network.nodes.map(\.member)
        for proposed in [members + [Self.stranger], members, [Self.stranger, target.member]] {
            let propose = Frame.propose(attempt: 500, baseID: view.id, baseKey: view.key, members: proposed)
            network.inject(forge(propose, from: Self.stranger.id, incarnation: Self.stranger.incarnation, to: target), to: target.peerID)
            #expect(target.core!.status == .member, "not frozen by \(proposed.map(\.id))")
            #expect(target.core!.participation == nil)
        }
        #expect(target.core!.stats.framesRejected >= 2)
        #expect(target.core!.view == view)
    }

    @Test("forged flush: a propose from a dominating view the proven sender was never heard in does not pull a member out of its group")
    func proposeFromElsewhere() {
        let network = Self.group(seed: 0xF1)
        let target = network.node(Self.id(3))
        let view = target.core!.view
        Self.prove(Self.stranger, at: target, in: network, viewID: 0)
        for (baseID, baseKey) in [(view.id + 1, view.key), (UInt64.max - 1, 0), (Wire.seqMax, .max)] {
            let propose = Frame.propose(attempt: 1, baseID: baseID, baseKey: baseKey, members: [Self.stranger, target.member])
            network.inject(forge(propose, from: Self.stranger.id, incarnation: Self.stranger.incarnation, to: target), to: target.peerID)
            #expect(target.core!.participation == nil, "not taken into a view change from base \(baseID)")
        }
        #expect(target.core!.view == view)
    }

    @Test("a member frozen in a stale view change of a dominating base proposes nothing it could not take part in; it gives the stale one up at the next timeout, then proposes")
    func staleForeignFlushThenOwnProposal() {
        let network = Self.group(seed: 0xF3)
        let one = network.node(Self.id(1))
        let core = one.core!
        let view = core.view
        // A proven peer of a dominating view takes the coordinator of our group into its view change, then goes silent.
        Self.prove(Self.stranger, at: one, in: network, viewID: view.id + 1_000, viewKey: 1)
        let propose = Frame.propose(attempt: 1, baseID: view.id + 1_000, baseKey: 1, members: [Self.stranger, one.member])
        network.inject(forge(propose, from: Self.stranger.id, incarnation: Self.stranger.incarnation, to: one), to: one.peerID)
        #expect(core.status == .flushing && core.participation?.ballot.coordinator == Self.stranger.id)
        while core.pollTransmit() != nil {}
        // Two flush timeouts later a datagram comes before the timeout does: member 2 is heard,
        // member 3 is suspect, so our group needs a view change that member 1 coordinates.
        let later = network.now.adding(nanoseconds: 2 * core.config.flushTimeoutNanoseconds + 1_000_000)
        let two = network.node(Self.id(2))
        let hello = Frame.heartbeat(status: .member, viewID: view.id, viewKey: view.key, sentSeq: two.core!.lastSentSeq, delivered: [])
        core.handleDatagram(forge(hello, from: two.peerID, incarnation: two.incarnation, to: one), now: later)
        func sentProposal() -> Bool {
            var found = false
            while let bytes = core.pollTransmit() {
                if case .frame(_, .propose) = Wire.decode(bytes, room: Self.room, auth: Authenticator(passphrase: nil), datagramBytesMax: 1200) { found = true }
            }
            return found
        }
        #expect(core.coordinating == nil, "no proposal of ours outside a view change we take part in")
        #expect(!sentProposal(), "no member is frozen in a ballot whose coordinator is not in it")
        #expect(core.participation?.ballot.coordinator == Self.stranger.id)
        core.handleTimeout(now: later)
        #expect(core.status == .flushing)
        #expect(core.coordinating?.ballot.coordinator == one.peerID)
        #expect(core.coordinating?.ballot == core.participation?.ballot, "it takes part in its own proposal")
        #expect(core.coordinating?.members == [one.member, two.member])
        #expect(sentProposal())
    }

    @Test("forged flush: an install (or a view naming a ready cut's outcome) from a proven non-member does not install a ready member's cut early")
    func installFromStranger() {
        let network = Self.group(seed: 0xF2)
        let two = network.node(Self.id(2))
        let core = two.core!
        let view = core.view
        Self.prove(Self.stranger, at: two, in: network, viewID: view.id + 1_000, viewKey: 1)
        // Member 1 (coordinator) runs a view change of the same members; two acks and, given
        // the cut, is ready; the coordinator waits for the others.
        let ballot = HostileFrameTests.forgedProposal(network, target: two)
        let one = network.node(Self.id(1))
        let entries = network.nodes.map { node in
            CutEntry(member: node.member, cut: node.peerID == two.peerID ? core.lastSentSeq : core.deliveredUpTo(node.peerID)!, inBase: true, inNew: true)
        }
        let cut = Frame.cut(attempt: ballot.attempt, baseID: view.id, baseKey: view.key, newViewID: view.id + 1, entries: entries)
        network.inject(forge(cut, from: one.peerID, incarnation: one.incarnation, to: two), to: two.peerID)
        #expect(core.participation?.ready == true, "ready for the forged-by-member-1 cut")
        let install = Frame.install(ballot, newViewID: view.id + 1)
        network.inject(forge(install, from: Self.stranger.id, incarnation: Self.stranger.incarnation, to: two), to: two.peerID)
        #expect(core.view == view, "the stranger's install installed nothing")
        let newKey = ReliableMulticast.viewKey(id: view.id + 1, members: network.nodes.map(\.member).sorted(), ballot: ballot)
        let claim = Frame.heartbeat(status: .member, viewID: view.id + 1, viewKey: newKey, sentSeq: 0, delivered: [])
        network.inject(forge(claim, from: Self.stranger.id, incarnation: Self.stranger.incarnation, to: two), to: two.peerID)
        #expect(core.view == view, "the stranger's heartbeat naming the new view installed nothing")
        // The real install of that ballot (here from member 1) still works.
        network.inject(forge(install, from: one.peerID, incarnation: one.incarnation, to: two), to: two.peerID)
        #expect(core.view.id == view.id + 1)
    }

    @Test("forged flush fuzz: flush frames of every kind with boundary and live values from proven non-members, into live cores: no view ever holds them, nobody takes part in their ballots, the group stays one",
          arguments: [UInt64(0xB1), 0xB2])
    func fuzzFromStrangers(seed: UInt64) {
        let network = Self.group(seed: seed)
        var rng = SimRandom(seed: seed)
        let strangers = (0..<4).map { Member(id: PeerID(0x600 + $0), incarnation: 1 + $0) }
        // Proven at the members that do not coordinate: the coordinator would rightly propose a
        // stranger as a joiner the moment it proved itself (before its heartbeat claims a view),
        // and its ack would rightly make it a member. At member 1 the strangers stay unproven.
        for node in network.nodes.dropFirst() {
            for (i, s) in strangers.enumerated() {
                // Each claims a view of its own far ahead: never a joiner candidate.
                Self.prove(s, at: node, in: network, viewID: node.core!.view.id + 1_000 + UInt64(i), viewKey: 1)
            }
        }
        func pick<T>(_ values: [T]) -> T { values[Int(rng.next(upTo: UInt64(values.count - 1)))] }
        for round in 0..<1500 {
            let target = network.nodes[round % 3]
            let core = target.core!
            let view = core.view
            let sender = pick(strangers)
            let members = network.nodes.map(\.member)
            let someMembers = [members, members + [sender], [sender, target.member], members + strangers, [target.member]]
            let ballot = pick([core.participation?.ballot, core.coordinating?.ballot, Ballot(attempt: 1, coordinator: sender.id),
                               Ballot(attempt: .max, coordinator: members[0].id)].compactMap { $0 })
            let ids = [view.id, view.id &+ 1, view.id &- 1, 0, 1, .max, Wire.seqMax]
            let keys = [view.key, 0, 1, .max]
            let entries = pick(someMembers).map { m in
                CutEntry(member: m, cut: pick([0, 1, core.deliveredUpTo(m.id) ?? 0, core.lastSentSeq, Wire.seqMax]),
                         inBase: rng.chance(0.8), inNew: rng.chance(0.8))
            }
            let frame: Frame = switch rng.next(upTo: 4) {
            case 0: .propose(attempt: pick([0, 1, ballot.attempt, Wire.attemptMax]), baseID: pick(ids), baseKey: pick(keys), members: pick(someMembers))
            case 1: .cut(attempt: pick([0, 1, ballot.attempt, Wire.attemptMax]), baseID: pick(ids), baseKey: pick(keys), newViewID: pick(ids), entries: entries)
            case 2: .install(ballot, newViewID: pick(ids))
            case 3: .ack(ballot, viewID: pick(ids), viewKey: pick(keys), ownSeq: pick([0, 1, Wire.seqMax]), holdings: members.map { ($0.id, rng.next(upTo: 200)) })
            default: .ready(ballot)
            }
            network.inject(forge(frame, from: sender.id, incarnation: sender.incarnation, to: target), to: target.peerID)
            for node in network.nodes {
                #expect(!strangers.contains { $0.id == node.core!.participation?.ballot.coordinator }, "seed \(seed) round \(round): \(node.peerID) took part in a stranger's ballot")
            }
            if round % 10 == 0 { network.run(forNanoseconds: 5 * ms) }
        }
        #expect(network.runUntilConverged(timeoutNanoseconds: 30 * seconds), "seed \(seed)")
        for node in network.nodes {
            #expect(node.views.allSatisfy { v in !v.members.contains { id in strangers.contains { $0.id == id } } }, "seed \(seed)")
            #expect(node.core!.view.members == [1, 2, 3].map(Self.id), "seed \(seed)")
        }
        #expect(SimChecker.violations(network) == [], "seed \(seed)")
    }
}
