import EggSim
import EggTestSupport
import PeerNet
import Testing

@Suite("PeerNet swarm", .tags(.slow), .slowTier)
struct SwarmTests {
    /// One seed of the reliable-delivery swarm; returns the failures (empty when all holds).
    static func runReliability(seed: UInt64) -> [String] {
        let options = SimOptions.swarm(seed: seed, peerCountMax: 8)
        let total = 25
        let network = SimNetwork(options: options, app: traffic(total: total, startWhenMembers: options.peerCount))
        network.run(until: NetTime(nanoseconds: 3 * seconds))
        var failures: [String] = []
        if !network.runUntilConverged(timeoutNanoseconds: 30 * seconds, extra: { net in
            net.nodes.allSatisfy { ($0.app as? TrafficApp)?.sent == total }
        }) {
            failures.append("did not converge: " + network.nodes.map { "\($0.peerID) \($0.core!.status) view \($0.core!.view.id) \($0.core!.view.members)" }.joined(separator: "; "))
        }
        failures += SimChecker.violations(network)
        for receiver in network.nodes {
            for sender in network.nodes {
                let seqs = receiver.deliveredSeqs(from: sender.peerID)
                if seqs != Array(1...UInt64(total)) {
                    failures.append("\(receiver.peerID) delivered from \(sender.peerID): \(seqs.count) messages, first \(seqs.prefix(3)), last \(seqs.suffix(3))")
                }
            }
        }
        return failures.map { "\(options)\n  \($0)" }
    }

    /// 240 seeds in 4 chunks (the chunks run in parallel; `EGGS_SEED`, `EGGS_SIM_SEEDS` and
    /// `EGGS_SIM_SEED` choose others, see `SwarmSeeds`).
    @Test("swarm: 2-8 peers, up to 30 % loss, duplication, reordering: every message delivered to every member exactly once, in order",
          arguments: 0..<4)
    func reliabilitySwarm(chunk: Int) {
        expectSeedsPass(chunk: chunk, defaultCount: 60, filter: "SwarmTests/reliabilitySwarm",
                        reproduce: { "SwarmTests.runReliability(seed: \($0))" }, Self.runReliability)
    }

    /// One seed of the fault swarm (partitions, crashes, restarts): safety, then liveness.
    static func runFaults(seed: UInt64) -> [String] {
        let options = SimOptions.swarm(seed: seed, peerCountMax: 6, withFaults: true)
        let network = SimNetwork(options: options, app: traffic(total: 200, startWhenMembers: 1, intervalNanoseconds: 50 * ms))
        network.faultsEnabled = true
        network.run(until: NetTime(nanoseconds: 15 * seconds))
        var failures: [String] = []
        if !network.runUntilConverged(timeoutNanoseconds: 40 * seconds) {
            failures.append("did not converge: " + network.nodes.map { "\($0.peerID) \($0.core!.status) view \($0.core!.view.id) \($0.core!.view.members)" }.joined(separator: "; "))
        }
        failures += SimChecker.violations(network)
        return failures.map { "\(options)\n  \($0)" }
    }

    @Test("swarm: a seed replays exactly (same events at the same virtual times)")
    func determinism() {
        func run() -> [[SimRecord]] {
            let options = SimOptions.swarm(seed: 4242, peerCountMax: 5, withFaults: true)
            let network = SimNetwork(options: options, app: traffic(total: 50, startWhenMembers: 1, intervalNanoseconds: 30 * ms))
            network.faultsEnabled = true
            network.run(until: NetTime(nanoseconds: 6 * seconds))
            return network.nodes.map(\.log)
        }
        let first = run()
        #expect(first.joined().count > 100)
        #expect(first == run())
    }

    /// 40 seeds in 2 chunks (seeds chosen as above).
    @Test("swarm: partitions, crashes and restarts under loss: view synchrony holds and the group converges once faults stop",
          arguments: 0..<2)
    func faultSwarm(chunk: Int) {
        expectSeedsPass(chunk: chunk, defaultCount: 20, filter: "SwarmTests/faultSwarm",
                        reproduce: { "SwarmTests.runFaults(seed: \($0))" }, Self.runFaults)
    }
}
