import ArgumentParser
import EggSim
import Foundation
import PeerNet

/// Recovery time in the EggSim network on a virtual clock: for every (receiver, message) whose
/// first transmission to that receiver was dropped, the time from that drop to the delivery.
///
/// Loss is drawn by this benchmark's own filter (per receiver, every datagram kind: data,
/// heartbeats, NACKs, repairs), so it knows which messages a dropped datagram carried: each
/// payload starts with a marker and the message id, found by scanning the datagram (the
/// payload travels in the clear behind a CRC trailer). Nothing of PeerNet's internals is used.
struct SimRecovery: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sim-recovery",
        abstract: "Recovery time from a lost datagram to delivery, in the simulator (virtual clock)."
    )

    @Option(help: "Peers.") var peers: Int = 4
    @Option(help: "Messages per second per peer.") var rate: Int = 250
    @Option(help: "Virtual seconds of sending.") var seconds: Double = 20
    @Option(help: "Payload bytes (at least 24).") var payload: Int = 64
    @Option(parsing: .upToNextOption, help: "Loss probabilities to run, per datagram and receiver.")
    var loss: [Double] = [0, 0.1, 0.2]
    @Option(help: "Minimum one-way delay, µs.") var delayMinUs: UInt64 = 50
    @Option(help: "Mean of the exponential extra delay, µs.") var delayMeanUs: UInt64 = 50
    @Option(help: "Seed of the network and of the loss draws.") var seed: UInt64 = 1
    @OptionGroup var timers: TimerOptions

    func validate() throws {
        guard (2...16).contains(peers) else { throw ValidationError("--peers must be in 2...16") }
        guard (1...10_000).contains(rate) else { throw ValidationError("--rate must be in 1...10000") }
        guard seconds > 0, seconds <= 300 else { throw ValidationError("--seconds must be in (0, 300]") }
        guard (24...1000).contains(payload) else { throw ValidationError("--payload must be in 24...1000") }
        guard loss.allSatisfy({ (0...0.9).contains($0) }) else { throw ValidationError("--loss values must be in 0...0.9") }
    }

    func run() throws {
        var sample = PeerNetConfig(peerID: PeerID(1))
        timers.apply(to: &sample)
        print("sim-recovery: peers=\(peers) rate=\(rate)/s/peer seconds=\(seconds) payload=\(payload)B "
              + "delay=\(delayMinUs)µs+exp(\(delayMeanUs)µs) seed=\(seed) \(timers.describe(sample))")
        for p in loss {
            let outcome = SimRecoveryRun(peers: peers, rate: rate, seconds: seconds, payload: payload, loss: p,
                                         delayMinNanoseconds: delayMinUs * 1000, delayMeanNanoseconds: delayMeanUs * 1000,
                                         seed: seed, timers: timers).run()
            print("loss \(Int((p * 100).rounded()))%: delivered \(outcome.delivered)/\(outcome.expected), "
                  + "lost first transmissions \(outcome.recoveries.count), window-full retries \(outcome.windowFullRetries), "
                  + String(format: "wall %.2f s (%.0f deliveries per CPU second)", outcome.wallSeconds,
                           Double(outcome.delivered) / max(outcome.wallSeconds, 1e-9)))
            print("  latency, all deliveries:   \(Distribution(nanoseconds: outcome.latencies))")
            print("  recovery, lost → delivered: \(Distribution(nanoseconds: outcome.recoveries))")
            if outcome.delivered < outcome.expected { throw ExitCode.failure }
        }
    }
}

/// One simulated run; shared by the applications of every node.
final class SimRecoveryRun {
    static let marker: [UInt8] = Array("EGGSRECV".utf8)

    struct Key: Hashable {
        var receiver: UInt64
        var message: UInt64
    }

    struct Outcome {
        var expected: Int
        var delivered: Int
        var latencies: [UInt64]
        var recoveries: [UInt64]
        var windowFullRetries: Int
        var wallSeconds: Double
    }

    let peers: Int
    let perPeer: Int
    let interval: UInt64
    let payload: Int
    let loss: Double
    let options: SimOptions
    let timers: TimerOptions
    var rng: SimRandom
    var seen: Set<Key> = []
    var lostAt: [Key: NetTime] = [:]
    var latencies: [UInt64] = []
    var recoveries: [UInt64] = []
    var windowFullRetries = 0

    init(peers: Int, rate: Int, seconds: Double, payload: Int, loss: Double,
         delayMinNanoseconds: UInt64, delayMeanNanoseconds: UInt64, seed: UInt64, timers: TimerOptions) {
        self.peers = peers
        self.perPeer = Int(Double(rate) * seconds)
        self.interval = 1_000_000_000 / UInt64(rate)
        self.payload = payload
        self.loss = loss
        self.timers = timers
        self.rng = SimRandom(seed: seed ^ 0x4C4F_5353)
        options = SimOptions(seed: seed, peerCount: peers, delayMinNanoseconds: delayMinNanoseconds,
                             delayMeanNanoseconds: delayMeanNanoseconds)
    }

    func run() -> Outcome {
        let wallStart = Date()
        let timers = self.timers
        let seed = options.seed
        let network = SimNetwork(
            options: options,
            config: { id, incarnation in
                var config = PeerNetConfig(room: "sim-recovery", peerID: id, incarnation: incarnation,
                                           randomSeed: seed &* 31 &+ id.raw &* 0x1000_0001 &+ incarnation)
                timers.apply(to: &config)
                return config
            },
            app: { [unowned self] id, _ in Sender(me: id, run: self) }
        )
        network.filter = { [unowned self, unowned network] packet in self.admit(packet, now: network.now) }
        let expected = peers * (peers - 1) * perPeer
        let virtualDeadline = NetTime(nanoseconds: UInt64(Double(perPeer) * Double(interval)) + 60_000_000_000)
        while latencies.count < expected && network.now < virtualDeadline {
            network.run(forNanoseconds: 100_000_000)
        }
        return Outcome(expected: expected, delivered: latencies.count, latencies: latencies, recoveries: recoveries,
                       windowFullRetries: windowFullRetries, wallSeconds: Date().timeIntervalSince(wallStart))
    }

    /// The loss draw for one datagram to one receiver; records first transmissions it drops.
    private func admit(_ packet: SimPacket, now: NetTime) -> Bool {
        guard packet.from != packet.to else { return true }
        let drop = rng.chance(loss)
        for message in Self.messageIDs(in: packet.bytes) {
            let key = Key(receiver: packet.to.raw, message: message)
            guard seen.insert(key).inserted else { continue }
            if drop { lostAt[key] = now }
        }
        return !drop
    }

    /// Message ids of every benchmark payload inside a datagram.
    static func messageIDs(in bytes: [UInt8]) -> [UInt64] {
        var ids: [UInt64] = []
        var i = 0
        let last = bytes.count - marker.count - 8
        while i <= last {
            if bytes[i] == marker[0], bytes[i..<(i + marker.count)].elementsEqual(marker) {
                ids.append(readU64(bytes, at: i + marker.count))
                i += marker.count + 8
            } else {
                i += 1
            }
        }
        return ids
    }

    fileprivate func delivered(_ delivery: Delivery, to receiver: PeerID, now: NetTime) {
        let message = readU64(delivery.payload, at: 8)
        let sentAt = readU64(delivery.payload, at: 16)
        latencies.append(now.nanoseconds - sentAt)
        if let lost = lostAt.removeValue(forKey: Key(receiver: receiver.raw, message: message)) {
            recoveries.append(now.nanoseconds(since: lost))
        }
    }

    /// Sends `perPeer` messages at a steady rate once the full view is installed.
    final class Sender: SimApplication {
        let me: PeerID
        unowned let run: SimRecoveryRun
        var nextSendAt: NetTime?
        var count = 0
        var bytes: [UInt8]

        init(me: PeerID, run: SimRecoveryRun) {
            self.me = me
            self.run = run
            bytes = SimRecoveryRun.marker + [UInt8](repeating: 0, count: run.payload - SimRecoveryRun.marker.count)
        }

        func handle(event: PeerNetEvent, core: ReliableMulticast, now: NetTime) {
            switch event {
            case .viewChanged(let view) where view.members.count == run.peers && nextSendAt == nil:
                nextSendAt = now.adding(nanoseconds: 100_000_000)
            case .delivered(let d) where d.from != me:
                run.delivered(d, to: me, now: now)
            default:
                break
            }
        }

        func pollTimeout() -> NetTime? { count < run.perPeer ? nextSendAt : nil }

        func handleTimeout(core: ReliableMulticast, now: NetTime) {
            guard let at = nextSendAt, now >= at, count < run.perPeer else { return }
            writeU64(me.raw << 32 | UInt64(count), into: &bytes, at: 8)
            writeU64(now.nanoseconds, into: &bytes, at: 16)
            if (try? core.send(bytes, now: now)) != nil {
                count += 1
                nextSendAt = at.adding(nanoseconds: run.interval)
            } else {
                run.windowFullRetries += 1
                nextSendAt = now.adding(nanoseconds: 1_000_000)
            }
        }
    }
}
