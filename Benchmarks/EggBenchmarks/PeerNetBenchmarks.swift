import Benchmark
import EggPrimitives
import EggSim
import PeerNet

/// PeerNet in the simulator (in-process, virtual clock): the CPU cost of the protocol core and
/// the delivery latency it gives under loss. The inter-process numbers are `eggs-netbench`'s.

/// Sends `perPeer` messages at a steady virtual rate once the full view is installed, and
/// records every delivery's virtual latency (the send time travels in the payload).
private final class SteadySender: SimApplication {
    let me: PeerID
    let flood: SimFlood
    var nextSendAt: NetTime?
    var count = 0
    var payload = [UInt8](repeating: 0x42, count: 64)

    init(me: PeerID, flood: SimFlood) {
        self.me = me
        self.flood = flood
    }

    func handle(event: PeerNetEvent, core: ReliableMulticast, now: NetTime) {
        switch event {
        case .delivered(let d) where d.from != me:
            var sentAt: UInt64 = 0
            for i in 0..<8 { sentAt |= UInt64(d.payload[i]) << (8 * UInt64(i)) }
            flood.latencies.append(now.nanoseconds - sentAt)
        default:
            break
        }
    }

    func pollTimeout() -> NetTime? { flood.sending && count < flood.perPeer ? (nextSendAt ?? flood.startAt) : nil }

    func handleTimeout(core: ReliableMulticast, now: NetTime) {
        let at = nextSendAt ?? flood.startAt
        guard flood.sending, now >= at, count < flood.perPeer else { return }
        for i in 0..<8 { payload[i] = UInt8(truncatingIfNeeded: now.nanoseconds >> (8 * UInt64(i))) }
        if (try? core.send(payload, now: now)) != nil {
            count += 1
            nextSendAt = at.adding(nanoseconds: flood.intervalNanoseconds)
        } else {
            nextSendAt = now.adding(nanoseconds: 1_000_000)  // window full: retry in 1 ms
        }
    }
}

/// Four peers in one `SimNetwork`, joined, then all sending at a steady rate.
private final class SimFlood {
    let perPeer: Int
    let intervalNanoseconds: UInt64
    var sending = false
    var startAt = NetTime.zero
    var latencies: [UInt64] = []
    var network: SimNetwork!

    init(seed: UInt64, peers: Int, loss: Double, perPeer: Int, ratePerPeer: UInt64) {
        self.perPeer = perPeer
        self.intervalNanoseconds = 1_000_000_000 / ratePerPeer
        let options = SimOptions(seed: seed, peerCount: peers, lossProbability: loss,
                                 delayMinNanoseconds: 50_000, delayMeanNanoseconds: 50_000)
        network = SimNetwork(options: options, app: { [unowned self] id, _ in SteadySender(me: id, flood: self) })
    }

    /// Runs until every peer is a member of the full view (at most 10 virtual seconds).
    func join() {
        let deadline = NetTime(nanoseconds: 10_000_000_000)
        while network.now < deadline,
              !network.nodes.allSatisfy({ $0.core?.status == .member && $0.core?.view.members.count == network.nodes.count }) {
            network.run(forNanoseconds: 10_000_000)
        }
        precondition(network.now < deadline, "the simulated peers did not form a view")
    }

    /// Sends every message and runs until all are delivered (at most 60 virtual seconds).
    func flood() {
        sending = true
        startAt = network.now
        let expected = perPeer * network.nodes.count * (network.nodes.count - 1)
        let deadline = network.now.adding(nanoseconds: 60_000_000_000)
        while latencies.count < expected && network.now < deadline { network.run(forNanoseconds: 10_000_000) }
        precondition(latencies.count == expected, "not every message was delivered")
    }

    /// The `q` quantile of the virtual delivery latencies, in microseconds (nearest rank).
    func percentileMicroseconds(_ q: Double) -> Int {
        Int((nearestRank(q, ofSorted: latencies.sorted()) ?? 0) / 1000)
    }
}

func peerNetBenchmarks() {
    let deliveries = BenchmarkMetric.custom("deliveries per iteration", polarity: .prefersLarger, useScalingFactor: false)
    Benchmark(
        "PeerNet sim: 4 peers, 500 messages each, no loss",
        configuration: .init(metrics: [.wallClock, .cpuTotal, .throughput, deliveries], maxDuration: .seconds(10), maxIterations: 50)
    ) { benchmark in
        // One iteration = 500 × 4 messages, each delivered to 3 receivers (6,000 deliveries).
        for iteration in benchmark.scaledIterations {
            let flood = SimFlood(seed: UInt64(iteration), peers: 4, loss: 0, perPeer: 500, ratePerPeer: 250)
            flood.join()
            benchmark.startMeasurement()
            flood.flood()
            benchmark.stopMeasurement()
            benchmark.measurement(deliveries, flood.latencies.count)
        }
    }

    // Virtual-clock latencies in µs (the table may print them in thousands, marked "(K)").
    let p50 = BenchmarkMetric.custom("virtual latency p50 (µs)", polarity: .prefersSmaller, useScalingFactor: false)
    let p99 = BenchmarkMetric.custom("virtual latency p99 (µs)", polarity: .prefersSmaller, useScalingFactor: false)
    Benchmark(
        "PeerNet sim: 4 peers, 500 messages each, 20% loss",
        configuration: .init(metrics: [.wallClock, .cpuTotal, p50, p99], maxDuration: .seconds(10), maxIterations: 20)
    ) { benchmark in
        for iteration in benchmark.scaledIterations {
            let flood = SimFlood(seed: UInt64(iteration), peers: 4, loss: 0.2, perPeer: 500, ratePerPeer: 250)
            flood.join()
            benchmark.startMeasurement()
            flood.flood()
            benchmark.stopMeasurement()
            benchmark.measurement(p50, flood.percentileMicroseconds(0.5))
            benchmark.measurement(p99, flood.percentileMicroseconds(0.99))
        }
    }
}
