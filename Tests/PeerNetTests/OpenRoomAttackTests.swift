import EggPrimitives
import EggSim
@testable import PeerNet
import Testing

/// The open room (no passphrase): one forged datagram must not freeze, eject or split a live
/// member, and founding must not wait on one peer. Each case failed on main before this work.
@Suite("PeerNet open room: one datagram cannot break it")
struct OpenRoomAttackTests {
    static func id(_ n: UInt64) -> PeerID { PeerID(n) }

    static func group(seed: UInt64, peers: Int = 2, total: Int = 300) -> SimNetwork {
        let network = SimNetwork(
            options: SimOptions(seed: seed, peerCount: peers),
            app: traffic(total: total, startWhenMembers: peers, intervalNanoseconds: 10 * ms))
        for _ in 0..<100 where !network.nodes.allSatisfy({ $0.core!.view.members.count == peers }) {
            network.run(forNanoseconds: 100 * ms)
        }
        #expect(network.nodes.allSatisfy { $0.core!.view.members.count == peers }, "the group formed")
        return network
    }

    /// A payload that reads as `sender`'s (TrafficApp's check passes) but carries counter 0xFFFF.
    static func fakePayload(_ sender: PeerID) -> [UInt8] {
        TrafficApp.bytes(sender.raw) + TrafficApp.bytes(0) + TrafficApp.bytes(0xFFFF)
    }

    @Test("freeze: b's next three seqs forged in a future view are never stored; b's real messages all arrive, none forged",
          arguments: [UInt64(1), 2, 3])
    func futureViewItems(seed: UInt64) {
        let network = Self.group(seed: seed)
        let a = network.node(Self.id(1)), b = network.node(Self.id(2))
        let view = a.core!.view
        let next = (b.deliveredSeqs(from: b.peerID).last ?? 0) + 1
        let items = (next..<(next + 3)).map { DataItem(origin: b.member, viewID: view.id + 1_000, seq: $0, payload: Self.fakePayload(b.peerID)) }
        network.inject(forge(.data(items), from: b.peerID, incarnation: b.incarnation, to: a), to: a.peerID)
        #expect(a.core!.stats.messagesFutureView == 3)
        #expect(network.runUntilConverged(timeoutNanoseconds: 30 * seconds, extra: { net in
            net.nodes.allSatisfy { ($0.app as? TrafficApp)?.sent == 300 }
        }))
        #expect(a.deliveredSeqs(from: b.peerID) == Array(1...300), "a delivered every real message of b, in order")
        let forged = a.log.contains { if case .delivered(let d) = $0.event { d.payload == Self.fakePayload(b.peerID) } else { false } }
        #expect(!forged, "no forged payload delivered")
        // b leaves: still nothing forged comes out of the flush.
        network.node(Self.id(2)).core!.leave(now: network.now)
        network.run(forNanoseconds: 2 * seconds)
        #expect(!a.log.contains { if case .delivered(let d) = $0.event { d.payload == Self.fakePayload(b.peerID) } else { false } })
        #expect(SimChecker.violations(network) == [])
    }

    @Test("kick: a forged new incarnation of live member b that answers the challenge does not retire b; it is counted as a collision")
    func liveIncarnationKept() throws {
        let network = Self.group(seed: 7)
        let a = network.node(Self.id(1)), b = network.node(Self.id(2))
        let impostor = Member(id: b.peerID, incarnation: b.incarnation &+ 99)
        // The impostor answers a's challenge, as ForgedFlushTests.prove does.
        var cookie: UInt64?
        let room = FNV1a64.hash(Array("eggs".utf8))
        network.filter = { packet in
            if packet.from == a.peerID, case let .frame(_, .challenge(entries)) = Wire.decode(
                packet.bytes, room: room, auth: Authenticator(passphrase: nil), datagramBytesMax: 1200) {
                for e in entries where e.target == impostor { cookie = e.cookie }
            }
            return true
        }
        let hello = Frame.heartbeat(status: .joining, viewID: 0, viewKey: 0, sentSeq: 0, delivered: [])
        network.inject(forge(hello, from: impostor.id, incarnation: impostor.incarnation, to: a), to: a.peerID)
        network.run(forNanoseconds: 30 * ms)
        network.filter = nil
        let answer = try #require(cookie, "a challenged the impostor")
        network.inject(forge(.response(challenger: a.member, cookie: answer), from: impostor.id, incarnation: impostor.incarnation, to: a),
                       to: a.peerID)
        network.inject(forge(hello, from: impostor.id, incarnation: impostor.incarnation, to: a), to: a.peerID)
        #expect(a.core!.peers[b.peerID]?.incarnation == b.incarnation, "b's live incarnation stays")
        #expect(a.core!.stats.collisionsRefused >= 1)
        #expect(network.runUntilConverged(timeoutNanoseconds: 30 * seconds, extra: { net in
            net.nodes.allSatisfy { ($0.app as? TrafficApp)?.sent == 300 }
        }))
        #expect(a.core!.view.members == [a.peerID, b.peerID])
        #expect(a.deliveredSeqs(from: b.peerID) == Array(1...300))
        #expect(SimChecker.violations(network) == [])
    }

    @Test("restart: kill -9 and a new incarnation under the same ID still takes over once the old one is silent")
    func deadIncarnationReplaced() {
        let network = Self.group(seed: 8)
        network.restart(Self.id(2))
        let restartedAt = network.now
        var back: NetTime?
        for _ in 0..<300 where back == nil {
            network.run(forNanoseconds: 50 * ms)
            let b = network.node(Self.id(2))
            if b.core!.view.members.count == 2 && network.node(Self.id(1)).core!.view.members.contains(b.peerID)
                && network.node(Self.id(1)).core!.peers[b.peerID]?.incarnation == b.incarnation { back = network.now }
        }
        let took = back.map { $0.nanoseconds(since: restartedAt) }
        #expect(took != nil && took! <= 6 * seconds, "back in one view \(took.map { "\($0 / ms) ms" } ?? "never") after the restart")
        if peerNetReport { print("restart under the same ID: back in one view after \(took.map { $0 / ms } ?? 0) ms") }
    }

    @Test("ballot: a propose posing as member b with attempt 2^30 does not keep the group from re-forming")
    func exhaustedBallot() {
        let network = Self.group(seed: 9, peers: 3)
        let a = network.node(Self.id(1)), b = network.node(Self.id(2))
        let view = a.core!.view
        let propose = Frame.propose(attempt: Wire.attemptMax, baseID: view.id, baseKey: view.key, members: view.members.map { id in
            network.node(id).member
        })
        // Multicast: every member gets it (b drops it as its own echo).
        for node in network.nodes where node.peerID != b.peerID {
            network.inject(forge(propose, from: b.peerID, incarnation: b.incarnation, to: node), to: node.peerID)
        }
        // Far beyond any attempt seen: rejected, nobody frozen in it.
        #expect(a.core!.participation == nil, "a is not frozen in the forged ballot")
        #expect(a.core!.stats.ballotsOutOfBounds == 1)
        // A member crashes: the group must still agree on a view without it.
        network.crash(Self.id(3))
        network.run(forNanoseconds: 15 * seconds)
        for n in [1, 2].map(Self.id) {
            #expect(network.node(n).core!.view.members == [1, 2].map(Self.id), "\(n.hex): \(network.node(n).core!.view.members)")
        }
        #expect(SimChecker.violations(network) == [])
    }

    @Test("founding: a low ID that answers challenges and then does nothing does not keep the others from forming a group")
    func lazyLowestID() {
        // Peers 1 and 2 are real; 0 is lower, heartbeats as a fresh peer and answers every
        // challenge (it sees the cookies on the group), and never founds nor acks.
        let network = SimNetwork(options: SimOptions(seed: 10, peerCount: 2), app: traffic(total: 10, startWhenMembers: 2))
        let lazy = Member(id: PeerID(0), incarnation: 5)
        let room = FNV1a64.hash(Array("eggs".utf8))
        var cookies: [(PeerID, Member, UInt64)] = []
        network.filter = { packet in
            if case let .frame(envelope, .challenge(entries)) = Wire.decode(
                packet.bytes, room: room, auth: Authenticator(passphrase: nil), datagramBytesMax: 1200) {
                for e in entries where e.target == lazy {
                    cookies.append((packet.from, Member(id: envelope.sender, incarnation: envelope.incarnation), e.cookie))
                }
            }
            return true
        }
        var formedAt: NetTime?
        for _ in 0..<200 where formedAt == nil {
            for node in network.nodes where node.isUp {
                let hello = Frame.heartbeat(status: .joining, viewID: 0, viewKey: 0, sentSeq: 0, delivered: [])
                network.inject(forge(hello, from: lazy.id, incarnation: lazy.incarnation, to: node), to: node.peerID)
            }
            for (to, challenger, cookie) in cookies {
                let node = network.node(to)
                network.inject(forge(.response(challenger: challenger, cookie: cookie), from: lazy.id, incarnation: lazy.incarnation, to: node), to: to)
            }
            cookies.removeAll()
            network.run(forNanoseconds: 100 * ms)
            if network.nodes.allSatisfy({ $0.core!.view.members == [1, 2].map(Self.id) }) { formedAt = network.now }
        }
        network.filter = nil
        #expect(formedAt != nil, "the real peers never formed a group in 20 s")
        if peerNetReport, let formedAt { print("lazy lowest ID: group formed after \(formedAt.nanoseconds / ms) ms") }
    }

    /// Impostors (fresh-peer heartbeats, every challenge answered, nothing else) speak for
    /// `seconds`; returns, per node, the longest time between two deliveries from the other
    /// nodes over that time.
    static func answeringJoiners(_ network: SimNetwork, fakes: inout [Impostor], seconds: Int) -> [PeerID: UInt64] {
        let start = network.now
        network.run(forNanoseconds: UInt64(seconds) * 1_000 * ms, impostors: &fakes)
        var gaps: [PeerID: UInt64] = [:]
        for node in network.nodes {
            var last = start
            var longest: UInt64 = 0
            for record in node.log where record.time >= start {
                guard case let .delivered(d) = record.event, d.from != node.peerID else { continue }
                longest = max(longest, record.time.nanoseconds(since: last))
                last = record.time
            }
            gaps[node.peerID] = max(longest, network.now.nanoseconds(since: last))
        }
        return gaps
    }

    @Test("joiners: 50 fake IDs that heartbeat and answer every challenge never hold a group's deliveries up for long, and are never admitted",
          .tags(.slow), .slowTier, arguments: [UInt64(21), 22, 23])
    func answeringJoinersDuringPlay(seed: UInt64) {
        let network = Self.group(seed: seed, peers: 2, total: 3_000)
        var fakes = (0..<50).map { Impostor(id: PeerID(1_000 + UInt64($0)), incarnation: 7) }
        let gaps = Self.answeringJoiners(network, fakes: &fakes, seconds: 15)
        let worst = gaps.values.max() ?? 0
        let dropped = network.node(Self.id(1)).core!.stats.joinersDropped
        if peerNetReport {
            print("answering joiners (seed \(seed)): longest delivery gap \(worst / 1_000) µs, views installed \(network.nodes.map(\.core!.stats.viewsInstalled)), joiners dropped \(dropped)")
        }
        #expect(worst < 200 * ms, "a member waited \(worst / ms) ms for the next delivery")
        for node in network.nodes {
            #expect(node.core!.view.members == [1, 2].map(Self.id), "\(node.peerID.hex): \(node.core!.view.members.count) members")
        }
        #expect(dropped >= 50, "the coordinator counts every silent joiner it dropped")
        network.run(forNanoseconds: 1_000 * ms)
        #expect(SimChecker.violations(network) == [])
    }

    @Test("joiners: a real peer of a higher ID than 50 answering fakes still gets into a group that refuses them", .tags(.slow), .slowTier)
    func realJoinerAmongFakes() {
        // The group of 1 and 2 is busy refusing 50 fakes of lower IDs than 900, which comes up
        // later and must get in.
        let network = SimNetwork(
            options: SimOptions(seed: 31, peerCount: 3), peerIDs: [1, 2, 900].map(Self.id),
            app: traffic(total: 2_000, startWhenMembers: 2, intervalNanoseconds: 10 * ms))
        network.crash(Self.id(900))
        for _ in 0..<50 where !network.nodes.filter(\.isUp).allSatisfy({ $0.core!.view.members.count == 2 }) {
            network.run(forNanoseconds: 100 * ms)
        }
        var fakes = (0..<50).map { Impostor(id: PeerID(100 + UInt64($0)), incarnation: 7) }
        _ = Self.answeringJoiners(network, fakes: &fakes, seconds: 3)
        network.restart(Self.id(900))
        _ = Self.answeringJoiners(network, fakes: &fakes, seconds: 12)
        for node in network.nodes {
            #expect(node.core!.view.members == [1, 2, 900].map(Self.id), "\(node.peerID.hex): \(node.core!.view.members)")
        }
    }

    @Test("joiners: two fresh peers form a room among 50 or 200 answering fakes of lower IDs (200 fill the peer table)",
          .tags(.slow), .slowTier, arguments: [50, 200])
    func foundingAmongFakes(count: Int) {
        let network = SimNetwork(
            options: SimOptions(seed: 41, peerCount: 2), peerIDs: [500, 501].map(Self.id),
            app: traffic(total: 10, startWhenMembers: 2))
        var fakes = (0..<count).map { Impostor(id: PeerID(10 + UInt64($0)), incarnation: 7) }
        _ = Self.answeringJoiners(network, fakes: &fakes, seconds: 30)
        for node in network.nodes {
            #expect(node.core!.view.members == [500, 501].map(Self.id), "\(node.peerID.hex): \(node.core!.view.members.count) members")
        }
    }
}
