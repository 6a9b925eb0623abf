import ArgumentParser
import Foundation
import NIOPosix
import PeerNet
import PeerNetUDP
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One-way delivery latency between peer processes on 127.0.0.1.
///
/// Each sending peer stamps CLOCK_MONOTONIC (shared by all processes of one machine) into each
/// payload at a steady rate; every peer records `delivery time − stamp` for every message of
/// the others. The stamp is taken at the first `send` attempt: a `.windowFull` wait counts as
/// latency. `--peers 4 --senders 4 --rate 60` is game traffic (4 players, 60 moves a second);
/// `--peers 2 --senders 1 --rate 1000` one sender and one receiver. Every peer counts the bytes
/// it sends, so the run reports bytes on the wire per delivered message.
struct Latency: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "One-way delivery latency between peer processes on 127.0.0.1."
    )

    @Option(help: "Peer processes.") var peers: Int = 2
    @Option(help: "How many of them send (the lowest IDs); all of them receive.") var senders: Int = 1
    @Option(help: "Messages per second of each sender.") var rate: Int = 1000
    @Option(help: "Seconds of sending.") var seconds: Double = 10
    @Option(help: "Payload bytes (at least 16).") var payload: Int = 64
    @Option(help: "Latencies above this (µs) count as 'slow' (lost or blocked behind a loss).")
    var slowThresholdUs: Double = 1000
    @OptionGroup var group: GroupOptions
    @OptionGroup var timers: TimerOptions
    @Option(help: ArgumentHelp("Runs peer N in network namespace <prefix>N with interface <subnet>.N (namespaces made by scripts/lan-bench.sh).", valueName: "prefix"))
    var netnsPrefix: String?
    @Option(help: "The /24 of the namespaced hosts' addresses (with --netns-prefix).")
    var netnsSubnet: String = "10.77.0"

    func validate() throws {
        guard (1...100_000).contains(rate) else { throw ValidationError("--rate must be in 1...100000") }
        guard seconds > 0, seconds <= 120 else { throw ValidationError("--seconds must be in (0, 120]") }
        guard (16...1000).contains(payload) else { throw ValidationError("--payload must be in 16...1000") }
        guard (2...8).contains(peers) else { throw ValidationError("--peers must be in 2...8") }
        guard (1...peers).contains(senders) else { throw ValidationError("--senders must be in 1...peers") }
    }

    func run() throws {
        let port = group.port ?? Int.random(in: 20_000...60_000)
        let count = Int(Double(rate) * seconds)
        var config = PeerNetConfig(peerID: PeerID(1))
        timers.apply(to: &config)
        print("latency: port=\(port) peers=\(peers) senders=\(senders) rate=\(rate)/s each seconds=\(seconds) messages=\(count) each payload=\(payload)B \(timers.describe(config))")
        let common = ["--port", "\(port)", "--group", group.group] + group.childArguments + ["--count", "\(count)", "--rate", "\(rate)",
                      "--payload", "\(payload)", "--slow-threshold-us", "\(slowThresholdUs)",
                      "--peers", "\(peers)", "--senders", "\(senders)"] + timers.arguments
        var children: [Child] = []
        for id in 1...peers {
            do {
                if let prefix = netnsPrefix {
                    children.append(try spawn(label: "peer\(id)", arguments: ["latency-peer", "--id", "\(id)", "--interface", "\(netnsSubnet).\(id)"] + common,
                                              launcher: ["ip", "netns", "exec", "\(prefix)\(id)"]))
                } else {
                    children.append(try spawn(label: "peer\(id)", arguments: ["latency-peer", "--id", "\(id)"] + common))
                }
            } catch {
                _ = reap(children, deadline: Date())
                throw error
            }
        }
        let outputs = reap(children, deadline: Date().addingTimeInterval(seconds + 45))
        var results: [LatencyPeer.PeerResult] = []
        for id in 1...peers {
            guard let r = result(LatencyPeer.PeerResult.self, in: outputs["peer\(id)"] ?? "") else {
                for (label, output) in outputs.sorted(by: { $0.key < $1.key }) { print("--- \(label) output ---\n\(output)") }
                throw ExitCode.failure
            }
            results.append(r)
        }
        var all: [UInt64] = [], slow: [UInt64] = [], heads: [UInt64] = []
        for (index, r) in results.enumerated() {
            print("peer\(index + 1): sent=\(r.sent) window_full_retries=\(r.windowFullRetries) pacing_late_max=\(String(format: "%.0f", r.pacingLateMaxUs))µs "
                  + "delivered=\(r.received)/\(r.expected) datagrams_sent=\(r.stats.datagramsSent) bytes_sent=\(r.stats.bytesSent) "
                  + "nacks=\(r.stats.nacksSent) retransmitted=\(r.stats.messagesRetransmitted) copied=\(r.stats.messagesCopied) "
                  + "echoes=\(r.stats.echoesSent) duplicates=\(r.stats.messagesDuplicate) send_failures=\(r.sendFailures)")
            all += r.latencies
            slow += r.slow
            heads += r.slowRunHeads
        }
        let delivered = results.reduce(0) { $0 + $1.received }
        let expected = results.reduce(0) { $0 + $1.expected }
        let bytes = results.reduce(UInt64(0)) { $0 + $1.stats.bytesSent }
        let datagrams = results.reduce(UInt64(0)) { $0 + $1.stats.datagramsSent }
        let originated = results.reduce(0) { $0 + $1.sent }
        print("latency all:               \(Distribution(nanoseconds: all))")
        print("latency slow (>\(String(format: "%g", slowThresholdUs))µs):   \(Distribution(nanoseconds: slow))  (\(String(format: "%.2f", 100 * Double(slow.count) / Double(max(1, delivered))))% of messages)")
        print("latency first of each slow run (a lost message): \(Distribution(nanoseconds: heads))")
        // Everything every peer sent while the run lasted (data, copies, echoes, NACKs, repairs,
        // heartbeats, reports), over the deliveries of other peers' messages.
        print(String(format: "wire: %llu datagrams, %llu UDP payload bytes sent; per delivered message %.1f B UDP payload, "
                     + "%.1f B with IPv4+UDP headers; per originated message %.1f B (%d receivers each)",
                     datagrams, bytes, Double(bytes) / Double(max(1, delivered)),
                     Double(bytes + 28 * datagrams) / Double(max(1, delivered)), Double(bytes) / Double(max(1, originated)), peers - 1))
        if delivered < expected { throw ExitCode.failure }
    }
}

/// One side of `latency` (started by it; not meant to be run by hand).
struct LatencyPeer: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "latency-peer", shouldDisplay: false)

    struct PeerResult: Codable {
        var sent: Int
        var windowFullRetries: Int
        var pacingLateMaxUs: Double
        var sendFailures: UInt64
        var expected: Int
        var received: Int
        /// Nanoseconds, every delivered message of the others; the slow ones; the first of each slow run.
        var latencies: [UInt64]
        var slow: [UInt64]
        var slowRunHeads: [UInt64]
        var stats: StatsSummary
    }

    /// Latencies by sender and message index, filled on the event loop, read by the main thread.
    final class Recorder: Sendable {
        let latencies: Mutex<[[UInt64?]]>
        let received = Atomic<Int>(0)
        let members = Atomic<Int>(0)
        let count: Int

        init(count: Int, senders: Int) {
            self.count = count
            latencies = Mutex(Array(repeating: [UInt64?](repeating: nil, count: count), count: senders))
        }

        func take(_ event: PeerNetEvent, me: PeerID) {
            switch event {
            case .delivered(let d) where d.from != me && d.payload.count >= 16:
                let now = MonotonicClock.now().nanoseconds
                let stamp = readU64(d.payload, at: 0)
                let index = Int(readU64(d.payload, at: 8))
                let sender = Int(d.from.raw) - 1
                latencies.withLock { all in
                    guard sender >= 0, sender < all.count, index < count, all[sender][index] == nil else { return }
                    all[sender][index] = now >= stamp ? now - stamp : 0
                    received.add(1, ordering: .relaxed)
                }
            case .viewChanged(let view):
                members.store(view.members.count, ordering: .relaxed)
            default:
                break
            }
        }
    }

    @Option var id: UInt64
    @Option var peers: Int
    @Option var senders: Int
    @Option var count: Int
    @Option var rate: Int
    @Option var payload: Int
    @Option var slowThresholdUs: Double
    @OptionGroup var group: GroupOptions
    @OptionGroup var timers: TimerOptions

    func run() throws {
        let seconds = Double(count) / Double(rate)
        alarm(UInt32(seconds) + 40)  // last resort: the kernel ends this process
        guard let port = group.port else { throw ValidationError("--port is required") }
        let me = PeerID(id)
        var config = PeerNetConfig(room: "netbench-\(port)", peerID: me, incarnation: UInt64(getpid()))
        timers.apply(to: &config)
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? loop.syncShutdownGracefully() }
        let recorder = Recorder(count: count, senders: senders)
        let host = try PeerHost(config: config, options: group.multicast(port: port), group: loop) { event, _, _ in
            recorder.take(event, me: me)
        }
        guard wait(seconds: 15, { recorder.members.load(ordering: .relaxed) == peers }) else {
            host.close()
            print("peer \(id): no \(peers)-member view within 15 s")
            throw ExitCode.failure
        }
        usleep(300_000)  // let every peer see the view too
        let sending = Int(id) <= senders
        let expected = count * (sending ? senders - 1 : senders)
        var retries = 0
        var lateMax: UInt64 = 0
        if sending {
            (retries, lateMax) = send(host: host)
        }
        // Everything delivered (or 20 s more), then serve repairs until every peer left or 10 s.
        _ = wait(seconds: 20) { recorder.received.load(ordering: .relaxed) >= expected }
        let stats = host.withCore { $0.stats }
        let failures = host.sendFailureCount
        usleep(1_000_000)  // the others may still need repairs of our messages
        host.close()
        let perSender = recorder.latencies.withLock { $0 }
        let threshold = UInt64(slowThresholdUs * 1000)
        var got: [UInt64] = [], slow: [UInt64] = [], heads: [UInt64] = []
        for latencies in perSender {
            var previousSlow = false
            for latency in latencies {
                guard let latency else { previousSlow = false; continue }
                got.append(latency)
                let isSlow = latency > threshold
                if isSlow { slow.append(latency) }
                if isSlow && !previousSlow { heads.append(latency) }
                previousSlow = isSlow
            }
        }
        printResult(PeerResult(sent: sending ? count : 0, windowFullRetries: retries, pacingLateMaxUs: Double(lateMax) / 1000,
                               sendFailures: failures, expected: expected, received: got.count,
                               latencies: got, slow: slow, slowRunHeads: heads, stats: StatsSummary(stats)))
    }

    /// Sends `count` stamped messages at `rate`, the first at a random phase within one interval
    /// (senders are not in step); returns the window-full retries and the worst pacing delay.
    private func send(host: PeerHost) -> (Int, UInt64) {
        let interval = UInt64(1_000_000_000 / rate)
        let start = MonotonicClock.now().adding(nanoseconds: UInt64.random(in: 0..<interval))
        var retries = 0
        var lateMax: UInt64 = 0
        var bytes = [UInt8](repeating: 0xAB, count: payload)
        for index in 0..<count {
            let target = start.adding(nanoseconds: UInt64(index) * interval)
            sleep(until: target)
            let stamp = MonotonicClock.now()
            lateMax = max(lateMax, stamp.nanoseconds(since: target))
            writeU64(stamp.nanoseconds, into: &bytes, at: 0)
            writeU64(UInt64(index), into: &bytes, at: 8)
            // Bounded: a window that stays full for 10 s ends the run.
            let deadline = stamp.adding(nanoseconds: 10_000_000_000)
            while MonotonicClock.now() < deadline {
                let accepted = host.withCore { core in (try? core.send(bytes, now: MonotonicClock.now())) != nil }
                if accepted { break }
                retries += 1
                usleep(50)
            }
        }
        return (retries, lateMax)
    }
}
