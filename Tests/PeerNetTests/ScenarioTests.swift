import EggSim
import PeerNet
import Testing

@Suite("PeerNet scenarios")
struct ScenarioTests {
    /// A lossless network of `count` peers that formed one view.
    static func formed(_ count: Int, seed: UInt64 = 7, app: @escaping (PeerID, UInt64) -> SimApplication? = { _, _ in nil }) -> SimNetwork {
        let network = SimNetwork(options: SimOptions(seed: seed, peerCount: count), app: app)
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        return network
    }

    static func id(_ n: UInt64) -> PeerID { PeerID(n) }

    @Test("network: the founding peers agree on view 1 with every member")
    func founding() {
        let network = Self.formed(4)
        for node in network.nodes {
            #expect(node.views.first?.members == [1, 2, 3, 4].map(Self.id))
            #expect(node.core?.status == .member)
        }
        #expect(SimChecker.violations(network).isEmpty)
    }

    @Test("network: partition 2-1 (isolate peer 3, symmetric): only the majority side installs new views, then it heals")
    func partitionTwoOne() {
        let network = Self.formed(3, app: traffic(total: 60, startWhenMembers: 1, intervalNanoseconds: 50 * ms))
        let viewsBefore = network.nodes.map { $0.views.count }
        network.partition([[Self.id(1), Self.id(2)], [Self.id(3)]])
        network.run(forNanoseconds: 8 * seconds)
        let majority = network.node(Self.id(1)).core!
        #expect(majority.status == .member)
        #expect(majority.view.members == [Self.id(1), Self.id(2)])
        #expect(majority.view.departed == [Self.id(3)])
        #expect(network.node(Self.id(2)).core!.view == majority.view)
        let minority = network.node(Self.id(3))
        #expect(minority.views.count == viewsBefore[2], "the minority installs no view")
        #expect(minority.core!.status == .blocked)
        let deliveredWhileBlocked = minority.deliveryCount
        network.run(forNanoseconds: 2 * seconds)
        #expect(minority.deliveryCount == deliveredWhileBlocked, "a blocked peer delivers nothing")
        #expect(network.runUntilConverged(timeoutNanoseconds: 20 * seconds))
        #expect(minority.core!.view.members == [1, 2, 3].map(Self.id))
        #expect(minority.core!.view.joined == [Self.id(3)])
        #expect(SimChecker.violations(network) == [])
    }

    @Test("network: partition 2-2 of 4: only the half with the highest-ID member stays primary")
    func partitionTwoTwo() {
        let network = Self.formed(4)
        network.partition([[Self.id(1), Self.id(2)], [Self.id(3), Self.id(4)]])
        network.run(forNanoseconds: 8 * seconds)
        #expect(network.node(Self.id(4)).core!.view.members == [Self.id(3), Self.id(4)])
        #expect(network.node(Self.id(1)).core!.status == .blocked)
        #expect(network.node(Self.id(1)).core!.view.members.count == 4)
        #expect(network.runUntilConverged(timeoutNanoseconds: 20 * seconds))
        #expect(SimChecker.violations(network) == [])
    }

    @Test("network: a crashed peer is removed; restarted under the same ID it rejoins as a new member")
    func crashAndRestart() {
        let network = Self.formed(3, app: traffic(total: 40, startWhenMembers: 1, intervalNanoseconds: 50 * ms))
        network.crash(Self.id(2))
        network.run(forNanoseconds: 6 * seconds)
        let one = network.node(Self.id(1)).core!
        #expect(one.view.members == [Self.id(1), Self.id(3)])
        #expect(one.view.departed == [Self.id(2)])
        network.restart(Self.id(2))
        #expect(network.runUntilConverged(timeoutNanoseconds: 20 * seconds))
        #expect(one.view.members == [1, 2, 3].map(Self.id))
        #expect(one.view.joined == [Self.id(2)])
        #expect(SimChecker.violations(network) == [])
    }

    @Test("network: a peer restarted at once (new incarnation): the old incarnation leaves the view first, then the new one joins")
    func immediateRestart() {
        let network = Self.formed(3)
        let before = network.node(Self.id(1)).views.count
        network.restart(Self.id(3))
        #expect(network.runUntilConverged(timeoutNanoseconds: 20 * seconds))
        let later = Array(network.node(Self.id(1)).views.dropFirst(before))
        #expect(later.count == 2)
        #expect(later.first?.departed == [Self.id(3)])
        #expect(later.last?.joined == [Self.id(3)])
        #expect(SimChecker.violations(network) == [])
    }

    @Test("network: a late joiner starts each stream where the group is; it never receives history")
    func lateJoiner() {
        let network = Self.formed(3, app: traffic(total: 40, startWhenMembers: 1, intervalNanoseconds: 50 * ms))
        network.run(forNanoseconds: 1 * seconds)
        let late = network.addNode(Self.id(9))
        #expect(network.runUntilConverged(timeoutNanoseconds: 20 * seconds, extra: { net in
            net.nodes.allSatisfy { ($0.app as? TrafficApp)?.sent == 40 }
        }))
        #expect(late.core!.view.members == [1, 2, 3, 9].map(Self.id))
        for sender in [1, 2, 3].map(Self.id) {
            let seqs = late.deliveredSeqs(from: sender)
            #expect(!seqs.isEmpty && seqs.first! > 1, "no history from \(sender): \(seqs.prefix(3))")
            #expect(seqs.last == 40)
        }
        #expect(late.deliveredSeqs(from: Self.id(9)) == Array(1...40))
        #expect(SimChecker.violations(network) == [])
    }

    @Test("network: the last message lost to one receiver is noticed from a heartbeat, NACKed and repaired")
    func lastMessageLost() throws {
        let network = Self.formed(2)
        network.filter = { packet in !(isData(packet) && packet.to == Self.id(2)) }
        let sender = network.node(Self.id(1)).core!
        let seq = try sender.send([1, 2, 3], now: network.now)
        network.run(forNanoseconds: 20 * ms)
        let receiver = network.node(Self.id(2))
        #expect(receiver.deliveredSeqs(from: Self.id(1)).isEmpty)
        network.filter = nil
        network.run(forNanoseconds: 1 * seconds)
        #expect(receiver.deliveredSeqs(from: Self.id(1)) == [seq])
        #expect(receiver.core!.stats.nacksSent >= 1)
        #expect(sender.stats.messagesRetransmitted >= 1)
    }

    @Test("network: a member dies after only one peer received its last message: every survivor delivers it before the new view")
    func deathAfterPartialDelivery() throws {
        let network = Self.formed(4)
        network.filter = { packet in !(isData(packet) && packet.from == Self.id(4) && packet.to != Self.id(1)) }
        let seq = try network.node(Self.id(4)).core!.send([42], now: network.now)
        network.run(forNanoseconds: 30 * ms)
        #expect(network.node(Self.id(1)).deliveredSeqs(from: Self.id(4)) == [seq])
        network.crash(Self.id(4))
        network.filter = nil
        network.run(forNanoseconds: 8 * seconds)
        for n in [1, 2, 3].map(Self.id) {
            let node = network.node(n)
            #expect(node.core!.view.members == [1, 2, 3].map(Self.id))
            #expect(node.deliveredSeqs(from: Self.id(4)) == [seq], "\(n) delivered the dead member's last message")
        }
        #expect(SimChecker.violations(network) == [])
    }

    @Test("network: a member dies after nobody received its last message: no survivor delivers it")
    func deathBeforeAnyDelivery() throws {
        let network = Self.formed(3)
        network.filter = { packet in !(isData(packet) && packet.from == Self.id(3) && packet.to != Self.id(3)) }
        _ = try network.node(Self.id(3)).core!.send([7], now: network.now)
        network.crash(Self.id(3))
        network.run(forNanoseconds: 8 * seconds)
        for n in [1, 2].map(Self.id) {
            #expect(network.node(n).deliveredSeqs(from: Self.id(3)).isEmpty)
            #expect(network.node(n).core!.view.members == [1, 2].map(Self.id))
        }
        #expect(SimChecker.violations(network) == [])
    }

    @Test("network: the coordinator crashes during a view change: the survivors restart the flush and agree")
    func coordinatorCrashDuringFlush() throws {
        let network = Self.formed(5, app: traffic(total: 100, startWhenMembers: 1, intervalNanoseconds: 20 * ms))
        network.run(forNanoseconds: 500 * ms)
        network.crash(Self.id(5))
        var steps = 0
        while network.node(Self.id(2)).core!.status != .flushing, steps < 1_000_000 {
            network.step()
            steps += 1
        }
        #expect(network.node(Self.id(1)).core!.status == .flushing, "peer 1 coordinates the flush")
        network.crash(Self.id(1))
        network.run(forNanoseconds: 12 * seconds)
        for n in [2, 3, 4].map(Self.id) {
            let core = network.node(n).core!
            #expect(core.status == .member)
            #expect(core.view.members == [2, 3, 4].map(Self.id))
        }
        let views = network.node(Self.id(2)).views
        #expect(views.allSatisfy { $0.members.contains(Self.id(2)) })
        #expect(SimChecker.violations(network) == [])
    }

    @Test("network: a graceful leave removes the peer without waiting for the suspect timeout")
    func gracefulLeave() {
        let network = Self.formed(3)
        let start = network.now
        network.node(Self.id(2)).core!.leave(now: network.now)
        network.run(forNanoseconds: 1500 * ms)
        let one = network.node(Self.id(1)).core!
        #expect(one.view.members == [Self.id(1), Self.id(3)])
        #expect(network.now.nanoseconds(since: start) < 3 * seconds)
        #expect(throws: PeerNetError.left) { try network.node(Self.id(2)).core!.send([1], now: network.now) }
    }

    @Test("network: leaving with sends queued while cut off abandons them cleanly")
    func leaveWithQueuedSends() {
        let network = Self.formed(3)
        // Peer 1 alone is a minority: it blocks, and its sends are queued, not transmitted.
        network.partition([[Self.id(1)], [Self.id(2), Self.id(3)]])
        network.run(forNanoseconds: 5 * seconds)
        let one = network.node(Self.id(1)).core!
        #expect(one.status == .blocked || one.status == .flushing)
        for i in 0..<5 { _ = try? one.send([UInt8(i)], now: network.now) }
        #expect(one.pendingSendCount == 5)
        one.leave(now: network.now)
        #expect(one.status == .left)
        #expect(one.pendingSendCount == 0)
        #expect(throws: PeerNetError.left) { try one.send([9], now: network.now) }
        network.heal()
        network.run(forNanoseconds: 2 * seconds)
    }

    @Test("network: a sender whose window is full gets windowFull and the silent member is reported lagging")
    func windowFull() throws {
        let network = SimNetwork(options: SimOptions(seed: 3, peerCount: 2), config: { id, inc in
            PeerNetConfig(peerID: id, incarnation: inc, windowSizeMax: 8)
        })
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        network.filter = { packet in packet.from != Self.id(2) }
        let core = network.node(Self.id(1)).core!
        var sent = 0
        var error: PeerNetError?
        for i in 0..<20 {
            do { try core.send([UInt8(i)], now: network.now); sent += 1 } catch let e { error = e; break }
        }
        #expect(sent == 8)
        #expect(error == .windowFull)
        network.run(forNanoseconds: 300 * ms)
        let lagging = network.node(Self.id(1)).log.contains { $0.event == .lagging(peer: Self.id(2)) }
        #expect(lagging)
        #expect(throws: PeerNetError.payloadTooLarge) {
            try core.send([UInt8](repeating: 0, count: PeerNetConfig(peerID: Self.id(1)).payloadBytesMax + 1), now: network.now)
        }
    }

    @Test("network: a burst of small messages is batched several to a datagram and fully delivered (no reordering)")
    func batching() throws {
        // A fixed delay: no reordering, so no repair datagram blurs the count of data datagrams.
        let network = SimNetwork(options: SimOptions(seed: 7, peerCount: 3, delayMeanNanoseconds: 0))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        let before = network.node(Self.id(1)).core!.stats
        for node in network.nodes {
            for i in 0..<200 { try node.core!.send([UInt8(truncatingIfNeeded: i), 1, 2, 3, 4, 5, 6, 7], now: network.now) }
        }
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        for n in network.nodes {
            for sender in network.nodes { #expect(n.deliveredSeqs(from: sender.peerID) == Array(1...200)) }
        }
        let after = network.node(Self.id(1)).core!.stats
        let dataDatagrams = (after.datagramsSent - before.datagramsSent) - (after.heartbeatsSent - before.heartbeatsSent)
            - (after.nacksSent - before.nacksSent)
        #expect(dataDatagrams <= 10, "batched: \(dataDatagrams) datagrams for 200 messages")
    }

    @Test("network: send before joining throws notJoined")
    func notJoined() {
        let core = ReliableMulticast(config: PeerNetConfig(peerID: PeerID(5)), now: .zero)
        #expect(throws: PeerNetError.notJoined) { try core.send([1], now: .zero) }
        #expect(core.status == .joining)
    }
}
