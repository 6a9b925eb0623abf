import EggPrimitives
import EggSim
import EggTestSupport
import Foundation
@testable import PeerNet
import Testing

/// Forges a datagram as `sender` (in `incarnation`) for `target`, with the next packet number
/// `target` expects from that sender (so it is not taken for a replay), CRC or HMAC as asked.
func forge(
    _ frame: Frame, from sender: PeerID, incarnation: UInt64, to target: SimNode, passphrase: String? = nil,
    fromReceiver: Bool = false
) -> [UInt8] {
    let core = target.core!
    let packet = (core.peers[sender].map { $0.incarnation == incarnation ? $0.packetHighest : 0 } ?? 0) &+ 1
    let envelope = Envelope(
        version: Wire.version, kind: frame.kind.rawValue, room: FNV1a64.hash(Array("eggs".utf8)),
        sender: sender, incarnation: incarnation, packetNumber: packet, fromReceiver: fromReceiver)
    return Wire.encode(frame, envelope: envelope, auth: Authenticator(passphrase: passphrase))
}

/// `EGGS_PEERNET_REPORT=1` prints the membership figures (virtual time) the tests measure.
let peerNetReport = ProcessInfo.processInfo.environment["EGGS_PEERNET_REPORT"] == "1"

extension SimNode {
    var member: Member { Member(id: peerID, incarnation: incarnation) }
}

@Suite("PeerNet hostile frames")
struct HostileFrameTests {
    static func id(_ n: UInt64) -> PeerID { PeerID(n) }

    /// Three peers that formed a view and exchanged 20 messages each.
    static func busyGroup(seed: UInt64 = 5) -> SimNetwork {
        let network = SimNetwork(
            options: SimOptions(seed: seed, peerCount: 3),
            app: traffic(total: 20, startWhenMembers: 3, intervalNanoseconds: 10 * ms))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds, extra: { net in
            net.nodes.allSatisfy { ($0.app as? TrafficApp)?.sent == 20 }
        }))
        return network
    }

    @Test("hostile: a propose with ballot attempt 0xFFFFFFFF from an unknown ID is dropped; view changes still work")
    func proposeWithMaximalAttempt() {
        let network = Self.busyGroup()
        let one = network.node(Self.id(1))
        let frame = Frame.propose(attempt: .max, baseID: 0, baseKey: 0, members: [one.member, Member(id: Self.id(0x666), incarnation: 1)])
        network.inject(forge(frame, from: Self.id(0x666), incarnation: 1, to: one), to: one.peerID)
        #expect(one.core!.stats.droppedMalformed == 1)
        network.run(forNanoseconds: 1 * seconds)
        network.crash(Self.id(3))
        network.run(forNanoseconds: 6 * seconds)
        for n in [1, 2].map(Self.id) {
            #expect(network.node(n).core!.view.members == [1, 2].map(Self.id))
        }
        #expect(SimChecker.violations(network) == [])
    }

    /// Makes `target` take part in a forged view change by member 1 (ballot attempt 1000) of
    /// its current view; returns the ballot.
    static func forgedProposal(_ network: SimNetwork, target: SimNode) -> Ballot {
        let one = network.node(Self.id(1))
        let view = target.core!.view
        let members = network.nodes.map(\.member)
        let propose = Frame.propose(attempt: 1000, baseID: view.id, baseKey: view.key, members: members)
        network.inject(forge(propose, from: one.peerID, incarnation: one.incarnation, to: target), to: target.peerID)
        #expect(target.core!.status == .flushing)
        return Ballot(attempt: 1000, coordinator: one.peerID)
    }

    @Test("hostile: a cut below what a member delivered is ignored and counted, not a crash")
    func cutBelowDelivered() {
        let network = Self.busyGroup()
        let two = network.node(Self.id(2))
        let core = two.core!
        #expect(core.deliveredUpTo(Self.id(1))! > 0)
        let ballot = Self.forgedProposal(network, target: two)
        var entries = network.nodes.map { node in
            CutEntry(member: node.member, cut: core.deliveredUpTo(node.peerID)!, inBase: true, inNew: true)
        }
        entries[0].cut = 0
        let view = core.view
        let cut = Frame.cut(attempt: ballot.attempt, baseID: view.id, baseKey: view.key, newViewID: view.id + 1, entries: entries)
        let one = network.node(Self.id(1))
        network.inject(forge(cut, from: one.peerID, incarnation: one.incarnation, to: two), to: two.peerID)
        #expect(core.stats.framesRejected == 1)
        #expect(core.view == view)
        #expect(network.runUntilConverged(timeoutNanoseconds: 30 * seconds))
        #expect(SimChecker.violations(network) == [])
    }

    @Test("hostile: a cut naming one ID twice is dropped as malformed, and its install changes nothing")
    func cutNamingOneIDTwice() {
        let network = Self.busyGroup()
        let two = network.node(Self.id(2))
        let core = two.core!
        let ballot = Self.forgedProposal(network, target: two)
        var entries = network.nodes.map { node in
            CutEntry(member: node.member, cut: core.deliveredUpTo(node.peerID)!, inBase: true, inNew: true)
        }
        entries.append(CutEntry(member: Member(id: Self.id(3), incarnation: 999), cut: 0, inBase: false, inNew: true))
        let view = core.view
        let one = network.node(Self.id(1))
        let cut = Frame.cut(attempt: ballot.attempt, baseID: view.id, baseKey: view.key, newViewID: view.id + 1, entries: entries)
        network.inject(forge(cut, from: one.peerID, incarnation: one.incarnation, to: two), to: two.peerID)
        let install = Frame.install(ballot, newViewID: view.id + 1)
        network.inject(forge(install, from: one.peerID, incarnation: one.incarnation, to: two), to: two.peerID)
        #expect(core.stats.droppedMalformed == 1)
        #expect(core.view == view)
        #expect(network.runUntilConverged(timeoutNanoseconds: 30 * seconds))
        #expect(SimChecker.violations(network) == [])
    }

    @Test("hostile: NACK ranges ending at 2^64-1 are dropped; wide valid ranges cost bounded work")
    func nackRangeToTheEnd() {
        let network = Self.busyGroup()
        let two = network.node(Self.id(2))
        let one = network.node(Self.id(1))
        let core = two.core!
        for range in [UInt64.max...UInt64.max, (UInt64.max - 1)...UInt64.max, 1...UInt64.max] {
            let nack = Frame.nack(origin: two.member, ranges: [range])
            network.inject(forge(nack, from: one.peerID, incarnation: one.incarnation, to: two), to: two.peerID)
        }
        #expect(core.stats.droppedMalformed == 3)
        let wide = Frame.nack(origin: two.member, ranges: Array(repeating: 1...Wire.seqMax, count: Wire.nackRangesMax))
        network.inject(forge(wide, from: one.peerID, incarnation: one.incarnation, to: two), to: two.peerID)
        #expect(core.stats.droppedMalformed == 3)
        #expect(core.sendWindow.repairPending.count <= Int(Wire.nackSpanMax))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        #expect(SimChecker.violations(network) == [])
    }
}

@Suite("PeerNet leave")
struct LeaveTests {
    static func id(_ n: UInt64) -> PeerID { PeerID(n) }

    /// `count` peers form a view; `leavers` leave one after the other (each once the previous
    /// leave was installed); every remaining peer must install a view without the leaver within
    /// 500 ms of simulated time (no suspect timeout) and be a member.
    static func leaveInOrder(count: Int, leavers: [UInt64]) {
        let network = SimNetwork(options: SimOptions(seed: 21 + UInt64(count), peerCount: count))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        var remaining = (1...UInt64(count)).map(Self.id)
        for leaver in leavers.map(Self.id) {
            network.node(leaver).core!.leave(now: network.now)
            remaining.removeAll { $0 == leaver }
            let start = network.now
            while network.now.nanoseconds(since: start) < 500 * ms,
                  !remaining.allSatisfy({ network.node($0).core!.view.members == remaining }) {
                network.run(forNanoseconds: 1 * ms)
            }
            if peerNetReport { print("leave of \(leaver.raw) (of \(count)): new view after \(network.now.nanoseconds(since: start) / 1000) µs") }
            for peer in remaining {
                let core = network.node(peer).core!
                #expect(core.view.members == remaining, "\(peer) after \(leaver) left (order \(leavers))")
                #expect(core.view.departed == [leaver])
                #expect(core.status == .member)
            }
        }
        #expect(SimChecker.violations(network) == [])
    }

    @Test("leave: two peers, the higher ID leaves: the other goes on alone at once")
    func twoHigherLeaves() { Self.leaveInOrder(count: 2, leavers: [2]) }

    @Test("leave: two peers, the lower ID leaves: the other goes on alone at once")
    func twoLowerLeaves() { Self.leaveInOrder(count: 2, leavers: [1]) }

    @Test("leave: three peers, each ID leaving first and then each other one")
    func threeEveryOrder() {
        for first in UInt64(1)...3 {
            for second in UInt64(1)...3 where second != first {
                Self.leaveInOrder(count: 3, leavers: [first, second])
            }
        }
    }
}

/// A heartbeat of a fresh peer `id` (no view), as a stray, a replay or a fake ID would send.
func strayHeartbeat(_ id: PeerID, incarnation: UInt64 = 1, packet: UInt64 = 1, passphrase: String? = nil) -> [UInt8] {
    let envelope = Envelope(
        version: Wire.version, kind: FrameKind.heartbeat.rawValue, room: FNV1a64.hash(Array("eggs".utf8)),
        sender: id, incarnation: incarnation, packetNumber: packet)
    let frame = Frame.heartbeat(status: .joining, viewID: 0, viewKey: 0, sentSeq: 0, delivered: [])
    return Wire.encode(frame, envelope: envelope, auth: Authenticator(passphrase: passphrase))
}

/// Longest time between two consecutive deliveries from `sender` at `node` within `window`.
func longestDeliveryGap(_ node: SimNode, from sender: PeerID, within window: ClosedRange<NetTime>) -> UInt64 {
    let times = node.log.compactMap { record -> NetTime? in
        guard window.contains(record.time), case let .delivered(d) = record.event, d.from == sender else { return nil }
        return record.time
    }
    guard times.count >= 2 else { return .max }
    return zip(times, times.dropFirst()).map { $1.nanoseconds(since: $0) }.max()!
}

@Suite("PeerNet join handshake")
struct HandshakeTests {
    static func id(_ n: UInt64) -> PeerID { PeerID(n) }

    @Test("handshake: a peer heard once that never answers is never proposed; no view change, nobody frozen or ejected")
    func oneOffSenderIsNeverProposed() {
        let network = SimNetwork(
            options: SimOptions(seed: 41, peerCount: 2),
            app: traffic(total: 500, startWhenMembers: 2, intervalNanoseconds: 20 * ms))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        let viewsBefore = network.nodes.map(\.views.count)
        let start = network.now
        for node in network.nodes { network.inject(strayHeartbeat(Self.id(0x777)), to: node.peerID) }
        network.run(forNanoseconds: 9 * seconds)
        #expect(network.nodes.map(\.views.count) == viewsBefore, "no view change")
        for node in network.nodes {
            #expect(node.core!.status == .member)
            #expect(node.core!.view.members == [1, 2].map(Self.id))
            #expect(node.core!.stats.droppedUnproven >= 1)
            #expect(node.core!.stats.challengesSent >= 1)
            let other = node.peerID == Self.id(1) ? Self.id(2) : Self.id(1)
            #expect(longestDeliveryGap(node, from: other, within: start...network.now) <= 100 * ms)
        }
        #expect(SimChecker.violations(network) == [])
    }

    @Test("handshake: a proven joiner that never acks is dropped and not proposed again at once; the members unfreeze within its answer time")
    func silentJoinerIsExcluded() {
        let network = SimNetwork(options: SimOptions(seed: 43, peerCount: 2))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        // Peer 9 answers challenges and heartbeats but never acks a proposal.
        network.filter = { packet in !(packet.from == Self.id(9) && packet.bytes.count > 5 && packet.bytes[5] == FrameKind.ack.rawValue) }
        network.addNode(Self.id(9))
        var flushStart: NetTime?
        let deadline = network.now.adding(nanoseconds: 3 * seconds)
        while network.now < deadline, flushStart == nil {
            network.run(forNanoseconds: 1 * ms)
            if network.node(Self.id(2)).core!.status == .flushing { flushStart = network.now }
        }
        guard let flushStart else {
            Issue.record("peer 9 was never proposed")
            return
        }
        let config = PeerNetConfig(peerID: Self.id(1))
        // Dropped after its answer time; the members re-form at once (a few round trips).
        network.run(until: flushStart.adding(nanoseconds: config.joinerAnswerTimeoutNanoseconds + 50 * ms))
        for n in [1, 2].map(Self.id) {
            let core = network.node(n).core!
            #expect(core.status == .member, "\(n) unfrozen")
            #expect(core.view.members == [1, 2].map(Self.id))
        }
        #expect(network.node(Self.id(1)).core!.stats.joinersDropped == 1)
        // While left out (ten answer timeouts at its first drop) it is not proposed again.
        let views = network.node(Self.id(1)).views.count
        let flushes = network.node(Self.id(2)).core!.stats.viewsInstalled
        network.run(forNanoseconds: 8 * config.joinerAnswerTimeoutNanoseconds)
        #expect(network.node(Self.id(2)).core!.status == .member)
        #expect(network.node(Self.id(1)).views.count == views)
        #expect(network.node(Self.id(2)).core!.stats.viewsInstalled == flushes)
        // Then it is tried again (at the next evaluation: within a heartbeat), and dropped again.
        network.run(forNanoseconds: 2 * config.joinerAnswerTimeoutNanoseconds + config.heartbeatIntervalNanoseconds + 100 * ms)
        #expect(network.node(Self.id(1)).core!.stats.joinersDropped == 2)
        #expect(network.node(Self.id(1)).core!.peers[Self.id(9)]?.joinStrikes == 2)
        #expect(SimChecker.violations(network) == [])
    }

    @Test("handshake: heartbeats from 1,000 fake IDs before and during a match: the group forms, deliveries keep flowing, a real joiner gets in", .tags(.slow), .slowTier)
    func fakeIDStorm() {
        let network = SimNetwork(
            options: SimOptions(seed: 47, peerCount: 2),
            app: traffic(total: 1000, startWhenMembers: 2, intervalNanoseconds: 20 * ms))
        var rng = SimRandom(seed: 0x5707)
        var packet: UInt64 = 0
        /// 4,000 fake heartbeats a second to every node (20 per node every 5 ms).
        func storm(for duration: UInt64) {
            let end = network.now.adding(nanoseconds: duration)
            while network.now < end {
                packet += 1
                for node in network.nodes where node.isUp {
                    for _ in 0..<20 {
                        let fake = PeerID(0xF000 + rng.next(upTo: 999))
                        network.inject(strayHeartbeat(fake, packet: packet), to: node.peerID)
                    }
                }
                network.run(forNanoseconds: 5 * ms)
            }
        }
        storm(for: 2500 * ms)
        for node in network.nodes {
            #expect(node.core!.status == .member, "formed during the storm")
            #expect(node.core!.view.members == [1, 2].map(Self.id))
        }
        let matchStart = network.now
        storm(for: 3 * seconds)
        #expect(longestDeliveryGap(network.node(Self.id(1)), from: Self.id(2), within: matchStart...network.now) <= 100 * ms)
        #expect(longestDeliveryGap(network.node(Self.id(2)), from: Self.id(1), within: matchStart...network.now) <= 100 * ms)
        #expect(network.node(Self.id(1)).views.count == 1, "no view change")
        if peerNetReport {
            let gap = longestDeliveryGap(network.node(Self.id(1)), from: Self.id(2), within: matchStart...network.now)
            print("storm of 1,000 fake IDs (4,000 heartbeats/s, no passphrase): longest gap between deliveries \(gap / ms) ms (sender every 20 ms)")
        }
        network.addNode(Self.id(9))
        storm(for: 3 * seconds)
        #expect(network.node(Self.id(9)).core!.view.members == [1, 2, 9].map(Self.id), "a real joiner got in during the storm")
        for node in network.nodes { #expect(node.core!.peers.count <= 3) }
        #expect(SimChecker.violations(network) == [])
    }

    /// Every datagram a 2-peer session with IDs 0x11 and 0x12 and this passphrase sent, with its
    /// send time and receiver.
    static func earlierSession(passphrase: String) -> [(at: NetTime, to: Int, bytes: [UInt8])] {
        var options = SimOptions(seed: 53, peerCount: 2)
        options.passphrase = passphrase
        let network = SimNetwork(
            options: options, peerIDs: [Self.id(0x11), Self.id(0x12)],
            app: traffic(total: 1000, startWhenMembers: 2, intervalNanoseconds: 20 * ms))
        var captured: [(at: NetTime, to: Int, bytes: [UInt8])] = []
        network.filter = { packet in
            if packet.from != packet.to { captured.append((network.now, packet.to == Self.id(0x11) ? 0 : 1, packet.bytes)) }
            return true
        }
        network.run(forNanoseconds: 6 * seconds)
        return captured
    }

    @Test("replay: an earlier session's authenticated capture replayed into a new one (same room and passphrase) blocks no formation and changes no view")
    func earlierSessionReplay() {
        let capture = Self.earlierSession(passphrase: "pw")
        #expect(capture.count > 500)
        var options = SimOptions(seed: 59, peerCount: 2)
        options.passphrase = "pw"
        let network = SimNetwork(options: options, app: traffic(total: 1000, startWhenMembers: 2, intervalNanoseconds: 20 * ms))
        var index = 0
        /// Replays the capture in its own timing, from the start of the new session, twice.
        func replay(until end: NetTime, offset: NetTime) {
            while network.now < end {
                while index < capture.count, capture[index].at.adding(nanoseconds: offset.nanoseconds) <= network.now {
                    network.inject(capture[index].bytes, to: network.nodes[capture[index].to].peerID)
                    index += 1
                }
                network.run(forNanoseconds: 1 * ms)
            }
        }
        replay(until: NetTime(nanoseconds: 3 * seconds), offset: .zero)
        for node in network.nodes {
            #expect(node.core!.status == .member, "formed while the capture plays")
            #expect(node.core!.view.members == [1, 2].map(Self.id))
        }
        let views = network.nodes.map(\.views.count)
        replay(until: NetTime(nanoseconds: 6 * seconds), offset: .zero)
        index = 0
        let second = network.now
        replay(until: NetTime(nanoseconds: 12 * seconds), offset: second)
        #expect(network.nodes.map(\.views.count) == views, "no view change mid-match")
        #expect(longestDeliveryGap(network.node(Self.id(1)), from: Self.id(2), within: second...network.now) <= 100 * ms)
        for node in network.nodes {
            #expect(node.core!.stats.droppedUnproven > 0)
            #expect(!node.core!.peers.keys.contains(Self.id(0x11)) && !node.core!.peers.keys.contains(Self.id(0x12)))
        }
        #expect(SimChecker.violations(network) == [])
    }
}

@Suite("PeerNet restarts")
struct RestartTests {
    static func id(_ n: UInt64) -> PeerID { PeerID(n) }

    /// Two peers with traffic; `restarted` is killed and restarted at once under its ID. The
    /// survivor must keep its group (never rejoin as a joiner), remove the old incarnation and
    /// admit the new one within a third of the suspect timeout + 2 s (a new incarnation takes
    /// over only once the old one has fallen silent: while both speak it is an ID collision).
    static func restartAtOnce(_ restarted: UInt64, incarnations: @escaping (UInt64) -> UInt64) {
        let network = SimNetwork(
            options: SimOptions(seed: 61 + restarted, peerCount: 2),
            config: { id, inc in PeerNetConfig(peerID: id, incarnation: incarnations(inc), randomSeed: 61 &* id.raw &+ inc) },
            app: traffic(total: 2000, startWhenMembers: 1, intervalNanoseconds: 20 * ms))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        network.run(forNanoseconds: 1 * seconds)
        let survivor = network.node(Self.id(3 - restarted))
        let viewsBefore = survivor.views.count
        network.restart(Self.id(restarted))
        let start = network.now
        let bound = PeerNetConfig(peerID: Self.id(1)).suspectTimeoutNanoseconds / 3 + 2 * seconds
        while network.now.nanoseconds(since: start) < bound,
              network.nodes.contains(where: { $0.core!.view.members != [1, 2].map(Self.id) || $0.core!.status != .member }) {
            network.run(forNanoseconds: 10 * ms)
        }
        if peerNetReport { print("restart of \(restarted): both in one view again after \(network.now.nanoseconds(since: start) / ms) ms") }
        let later = Array(survivor.views.dropFirst(viewsBefore))
        #expect(later.map(\.members) == [[survivor.peerID], [1, 2].map(Self.id)], "restart of \(restarted)")
        #expect(later.allSatisfy { !$0.joined.contains(survivor.peerID) }, "the survivor never rejoins as a joiner")
        // The old incarnation's stream ends: reported first, then nothing from that ID until the
        // new incarnation joined, whose stream starts at its own seq 1.
        let life = survivor.log.filter { $0.incarnation == survivor.incarnation }
        // (`incarnationEnded` comes first when the new incarnation proves itself before the
        // old one's suspicion removed it; otherwise the departure alone ends its stream.)
        guard let departed = life.firstIndex(where: { if case let .viewChanged(v) = $0.event { v.departed == [Self.id(restarted)] } else { false } }),
              let joined = life.firstIndex(where: { if case let .viewChanged(v) = $0.event { v.joined == [Self.id(restarted)] } else { false } })
        else {
            Issue.record("restart of \(restarted): no departure or join seen")
            return
        }
        if let ended = life.firstIndex(where: { $0.event == .incarnationEnded(peer: Self.id(restarted)) }) { #expect(ended < departed) }
        #expect(departed < joined)
        let fromRestarted = life[(departed + 1)...].compactMap { record -> UInt64? in
            if case let .delivered(d) = record.event, d.from == Self.id(restarted) { return d.seq }
            return nil
        }
        #expect(life[(departed + 1)..<joined].allSatisfy { if case let .delivered(d) = $0.event { d.from != Self.id(restarted) } else { true } })
        #expect(fromRestarted.first == 1, "the new incarnation's stream starts at 1: \(fromRestarted.prefix(3))")
        #expect(network.now.nanoseconds(since: start) < bound)
        #expect(network.node(Self.id(restarted)).core!.view == survivor.core!.view)
        #expect(SimChecker.violations(network) == [])
    }

    @Test("crash: the others install a view without a crashed peer within the suspect timeout + 1 s, whichever ID crashed")
    func crashBound() {
        for crashed in UInt64(1)...3 {
            let network = SimNetwork(options: SimOptions(seed: 67 + crashed, peerCount: 3))
            #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
            network.crash(Self.id(crashed))
            let start = network.now
            let remaining = (UInt64(1)...3).filter { $0 != crashed }.map(Self.id)
            let bound = PeerNetConfig(peerID: Self.id(1)).suspectTimeoutNanoseconds + 1 * seconds
            while network.now.nanoseconds(since: start) < bound,
                  !remaining.allSatisfy({ network.node($0).core!.view.members == remaining && network.node($0).core!.status == .member }) {
                network.run(forNanoseconds: 1 * ms)
            }
            if peerNetReport { print("crash of \(crashed) (of 3): new view after \(network.now.nanoseconds(since: start) / ms) ms") }
            for peer in remaining { #expect(network.node(peer).core!.view.members == remaining, "crash of \(crashed)") }
            #expect(network.now.nanoseconds(since: start) < bound)
        }
    }

    @Test("restart: either of two players restarted at once under its ID (new incarnation higher): the survivor keeps the group")
    func restartHigherIncarnation() {
        for restarted in UInt64(1)...2 { Self.restartAtOnce(restarted, incarnations: { 100 + $0 }) }
    }

    @Test("restart: a restart with a lower incarnation (the clock stepped back) is recognised just the same")
    func restartLowerIncarnation() {
        for restarted in UInt64(1)...2 { Self.restartAtOnce(restarted, incarnations: { 1_000_000 - $0 }) }
    }
}

@Suite("PeerNet bounded blocking")
struct BlockingTests {
    static func id(_ n: UInt64) -> PeerID { PeerID(n) }

    /// `count` peers with traffic; `cutOff` is partitioned away from the rest. It must show
    /// `.blocked`, give up its view within suspect timeout + blocked timeout + 1 s (back to the
    /// lobby, its queued sends discarded), and rejoin the others' group once the network heals
    /// (the others never become joiners of its group). In a view of two, the lower ID cut off
    /// gives its view up within the suspect timeout + 1 s (the rule of two).
    static func cutOffThenHeal(count: Int, cutOff: UInt64) {
        let network = SimNetwork(
            options: SimOptions(seed: 71 + UInt64(count), peerCount: count),
            app: traffic(total: 3000, startWhenMembers: 1, intervalNanoseconds: 20 * ms))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        let config = PeerNetConfig(peerID: Self.id(cutOff))
        let lonely = network.node(Self.id(cutOff))
        let others = network.nodes.filter { $0.peerID != lonely.peerID }
        network.partition([[lonely.peerID], others.map(\.peerID)])
        let start = network.now
        let bound: UInt64
        if count == 2 {
            bound = config.suspectTimeoutNanoseconds + 1 * seconds
        } else {
            network.run(forNanoseconds: config.suspectTimeoutNanoseconds + 1 * seconds)
            #expect(lonely.core!.status == .blocked, "cut off shows")
            bound = config.suspectTimeoutNanoseconds + config.blockedTimeoutNanoseconds + 1 * seconds
        }
        while network.now.nanoseconds(since: start) < bound,
              !lonely.log.contains(where: { if case .viewAbandoned = $0.event { true } else { false } }) {
            network.run(forNanoseconds: 100 * ms)
        }
        #expect(lonely.log.contains { if case .viewAbandoned = $0.event { true } else { false } }, "gave up its view within \(bound / ms) ms")
        #expect(lonely.core!.status != .blocked)
        #expect(lonely.core!.pendingSendCount == 0)
        for node in others { #expect(node.core!.status == .member) }
        let othersViews = others.map(\.views.count)
        network.heal()
        #expect(network.runUntilConverged(timeoutNanoseconds: 20 * seconds))
        #expect(lonely.core!.view.members == (1...UInt64(count)).map(Self.id))
        for (node, before) in zip(others, othersViews) {
            #expect(node.views.dropFirst(before).allSatisfy { !$0.joined.contains(node.peerID) }, "\(node.peerID) kept its group")
        }
        #expect(SimChecker.violations(network) == [])
    }

    @Test("blocking: the lower of two peers cut off gives up its view within the suspect timeout + 1 s and rejoins after the heal")
    func twoPeers() { Self.cutOffThenHeal(count: 2, cutOff: 1) }

    @Test("blocking: one of three peers cut off gives up its view within the bound and rejoins after the heal")
    func threePeers() { Self.cutOffThenHeal(count: 3, cutOff: 3) }
}
