import EggSim
import PeerNet
import Testing

/// The fault kinds of EggSim after TigerBeetle's packet simulator: per-path capacity and
/// clogging, one-way partitions, failures that stay in the liveness phase, and `finish()`.
@Suite("EggSim faults and finish")
struct SimFaultKindTests {
    static let a = PeerID(1), b = PeerID(2), c = PeerID(3)

    /// A lossless network of `count` peers that formed one view.
    static func formed(_ options: SimOptions) -> SimNetwork {
        let network = SimNetwork(options: options)
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        return network
    }

    static func send(_ network: SimNetwork, from id: PeerID, _ count: Int) {
        for i in 0..<count { _ = try? network.node(id).core!.send([UInt8(truncatingIfNeeded: i)], now: network.now) }
    }

    @Test("path capacity: a burst beyond one packet in flight on a path is dropped and counted, then repaired; no limit drops nothing")
    func pathCapacity() {
        var options = SimOptions(seed: 3, peerCount: 2)
        let unlimited = Self.formed(options)
        Self.send(unlimited, from: Self.a, 200)
        #expect(unlimited.finish().isClean)
        #expect(unlimited.packetsDroppedCapacity == 0)

        options.pathCapacityMax = 1
        let narrow = Self.formed(options)
        Self.send(narrow, from: Self.a, 200)
        let leftovers = narrow.finish(drainNanoseconds: 30 * seconds)
        #expect(narrow.packetsDroppedCapacity > 0)
        #expect(leftovers.isClean, "\(leftovers)")
        #expect(narrow.node(Self.b).deliveredSeqs(from: Self.a).count == 200)
    }

    @Test("a clogged path delays its packets and loses none: nothing arrives while it is clogged, everything after")
    func clogging() {
        let network = Self.formed(SimOptions(seed: 5, peerCount: 2))
        let before = network.node(Self.b).deliveredSeqs(from: Self.a).count
        network.clog(from: Self.a, to: Self.b, forNanoseconds: 2 * seconds)
        Self.send(network, from: Self.a, 5)
        network.run(forNanoseconds: 1900 * ms)
        #expect(network.node(Self.b).deliveredSeqs(from: Self.a).count == before)
        network.run(forNanoseconds: 500 * ms)
        #expect(network.node(Self.b).deliveredSeqs(from: Self.a).count == before + 5)
        #expect(network.finish().isClean)
    }

    @Test("partitions: a symmetric one cuts both directions, a one-way one only the second group's sends to the first")
    func oneWayPartition() {
        let network = Self.formed(SimOptions(seed: 7, peerCount: 3))
        network.partition([[Self.a], [Self.b]])
        #expect(!network.connected(from: Self.a, to: Self.b) && !network.connected(from: Self.b, to: Self.a))
        #expect(!network.connected(from: Self.c, to: Self.a) && network.connected(from: Self.c, to: Self.c))
        network.partition([[Self.a], [Self.b]], symmetric: false)
        #expect(network.connected(from: Self.a, to: Self.b), "b still hears a")
        #expect(!network.connected(from: Self.b, to: Self.a), "a no longer hears b")
        #expect(network.connected(from: Self.c, to: Self.a) && !network.connected(from: Self.a, to: Self.c), "unlisted nodes are group 0")
        Self.send(network, from: Self.b, 3)
        network.run(forNanoseconds: 2 * seconds)
        #expect(network.node(Self.a).deliveredSeqs(from: Self.b).isEmpty, "a hears nothing of b")
        network.run(forNanoseconds: 6 * seconds)
        #expect(SimChecker.violations(network).isEmpty)
        network.heal()
        #expect(network.runUntilConverged(timeoutNanoseconds: 30 * seconds))
        #expect(SimChecker.violations(network).isEmpty)
    }

    @Test("liveness phase: a crash that stays permanent leaves the rest to converge without it")
    func permanentCrash() {
        var options = SimOptions(seed: 9, peerCount: 3)
        options.permanentCrashProbability = 1
        let network = Self.formed(options)
        network.crash(Self.c)
        #expect(network.runUntilConverged(timeoutNanoseconds: 30 * seconds))
        #expect(network.permanentlyDown == [Self.c])
        #expect(!network.node(Self.c).isUp)
        #expect(network.node(Self.a).core!.view.members == [Self.a, Self.b])

        options.permanentCrashProbability = 0
        let restarting = Self.formed(options)
        restarting.crash(Self.c)
        #expect(restarting.runUntilConverged(timeoutNanoseconds: 30 * seconds))
        #expect(restarting.permanentlyDown.isEmpty && restarting.node(Self.c).isUp)
    }

    @Test("finish() fails while messages are undelivered and is clean once they arrive")
    func finishLeftovers() {
        let network = Self.formed(SimOptions(seed: 11, peerCount: 3))
        Self.send(network, from: Self.a, 3)
        let early = network.finish(drainNanoseconds: 0)
        #expect(!early.isClean)
        #expect(early.undelivered.contains { $0.hasPrefix("\(Self.a) → \(Self.b)") }, "\(early)")
        #expect(network.finish().isClean)
    }

    @Test("the new fault kinds draw from the seed: a swarm with clogs, capacity and one-way partitions replays exactly and converges")
    func newKnobsReplay() {
        func run() -> (SimNetwork, Bool) {
            var options = SimOptions.swarm(seed: 77, peerCountMax: 4, withFaults: true)
            options.pathCapacityMax = 8
            options.pathClogProbability = 0.01
            options.partitionAsymmetricProbability = 0.5
            options.partitionProbability = 0.05
            options.permanentCrashProbability = 0.5
            let network = SimNetwork(options: options, app: traffic(total: 60, startWhenMembers: 1, intervalNanoseconds: 50 * ms))
            network.faultsEnabled = true
            network.run(until: NetTime(nanoseconds: 8 * seconds))
            return (network, network.runUntilConverged(timeoutNanoseconds: 60 * seconds))
        }
        let (first, converged) = run()
        let (second, _) = run()
        #expect(converged, "\(first.options)")
        #expect(first.nodes.map(\.log) == second.nodes.map(\.log))
        #expect(SimChecker.violations(first).isEmpty)
    }
}
