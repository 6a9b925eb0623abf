import ArgumentParser
import Foundation
import NIOPosix
import PeerNet
import PeerNetUDP
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One-way delivery latency from a sender process to a receiver process on 127.0.0.1.
///
/// The sender stamps CLOCK_MONOTONIC (shared by both processes of one machine) into each
/// payload at a steady rate; the receiver records `delivery time − stamp` for every message.
/// The stamp is taken at the first `send` attempt: a `.windowFull` wait counts as latency.
struct Latency: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "One-way delivery latency between two processes on 127.0.0.1 (sender + receiver)."
    )

    @Option(help: "Messages per second.") var rate: Int = 1000
    @Option(help: "Seconds of sending.") var seconds: Double = 10
    @Option(help: "Payload bytes (at least 16).") var payload: Int = 64
    @Option(help: "Latencies above this (µs) count as 'slow' (lost or blocked behind a loss).")
    var slowThresholdUs: Double = 1000
    @OptionGroup var group: GroupOptions
    @OptionGroup var timers: TimerOptions

    func validate() throws {
        guard (1...100_000).contains(rate) else { throw ValidationError("--rate must be in 1...100000") }
        guard seconds > 0, seconds <= 120 else { throw ValidationError("--seconds must be in (0, 120]") }
        guard (16...1000).contains(payload) else { throw ValidationError("--payload must be in 16...1000") }
    }

    func run() throws {
        let port = group.port ?? Int.random(in: 20_000...60_000)
        let count = Int(Double(rate) * seconds)
        var config = PeerNetConfig(peerID: PeerID(1))
        timers.apply(to: &config)
        print("latency: port=\(port) rate=\(rate)/s seconds=\(seconds) messages=\(count) payload=\(payload)B \(timers.describe(config))")
        let common = ["--port", "\(port)", "--group", group.group, "--count", "\(count)", "--rate", "\(rate)",
                      "--payload", "\(payload)", "--slow-threshold-us", "\(slowThresholdUs)"] + timers.arguments
        let receiver = try spawn(label: "receiver", arguments: ["latency-peer", "--role", "receiver"] + common)
        let sender: Child
        do {
            sender = try spawn(label: "sender", arguments: ["latency-peer", "--role", "sender"] + common)
        } catch {
            _ = reap([receiver], deadline: Date())
            throw error
        }
        let outputs = reap([receiver, sender], deadline: Date().addingTimeInterval(seconds + 45))
        guard let r = result(LatencyPeer.ReceiverResult.self, in: outputs["receiver"] ?? ""),
              let s = result(LatencyPeer.SenderResult.self, in: outputs["sender"] ?? "")
        else {
            print("--- receiver output ---\n\(outputs["receiver"] ?? "")\n--- sender output ---\n\(outputs["sender"] ?? "")")
            throw ExitCode.failure
        }
        print("sender:   sent=\(s.sent) window_full_retries=\(s.windowFullRetries) pacing_late_max=\(String(format: "%.0f", s.pacingLateMaxUs))µs send_failures=\(s.sendFailures)")
        print("          stats: datagrams_sent=\(s.stats.datagramsSent) retransmitted=\(s.stats.messagesRetransmitted) heartbeats=\(s.stats.heartbeatsSent)")
        print("receiver: delivered=\(r.received)/\(r.expected) nacks=\(r.stats.nacksSent) duplicates=\(r.stats.messagesDuplicate) datagrams_received=\(r.stats.datagramsReceived)")
        print("latency all:               \(r.all)")
        print("latency slow (>\(String(format: "%g", slowThresholdUs))µs):   \(r.slow)  (\(String(format: "%.2f", 100 * Double(r.slow.count) / Double(max(1, r.received))))% of messages)")
        print("latency first of each slow run (a lost message): \(r.slowRunHeads)")
        if r.received < r.expected { throw ExitCode.failure }
    }
}

/// One side of `latency` (started by it; not meant to be run by hand).
struct LatencyPeer: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "latency-peer", shouldDisplay: false)

    enum Role: String, ExpressibleByArgument { case sender, receiver }

    struct SenderResult: Codable {
        var sent: Int
        var windowFullRetries: Int
        var pacingLateMaxUs: Double
        var sendFailures: UInt64
        var stats: StatsSummary
    }

    struct ReceiverResult: Codable {
        var expected: Int
        var received: Int
        var all: Distribution
        var slow: Distribution
        var slowRunHeads: Distribution
        var stats: StatsSummary
    }

    /// Latencies by message index, filled on the event loop, read by the main thread.
    final class Recorder: Sendable {
        let latencies: Mutex<[UInt64?]>
        let received = Atomic<Int>(0)
        let members = Atomic<Int>(0)

        init(count: Int) { latencies = Mutex([UInt64?](repeating: nil, count: count)) }

        func take(_ event: PeerNetEvent, me: PeerID) {
            switch event {
            case .delivered(let d) where d.from != me && d.payload.count >= 16:
                let now = MonotonicClock.now().nanoseconds
                let stamp = readU64(d.payload, at: 0)
                let index = Int(readU64(d.payload, at: 8))
                latencies.withLock { all in
                    guard index < all.count, all[index] == nil else { return }
                    all[index] = now >= stamp ? now - stamp : 0
                    received.add(1, ordering: .relaxed)
                }
            case .viewChanged(let view):
                members.store(view.members.count, ordering: .relaxed)
            default:
                break
            }
        }
    }

    @Option var role: Role
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
        let me = PeerID(role == .sender ? 1 : 2)
        var config = PeerNetConfig(room: "netbench-\(port)", peerID: me, incarnation: UInt64(getpid()))
        timers.apply(to: &config)
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? loop.syncShutdownGracefully() }
        let recorder = Recorder(count: count)
        let host = try PeerHost(config: config, options: group.multicast(port: port), group: loop) { event, _, _ in
            recorder.take(event, me: me)
        }
        guard wait(seconds: 15, { recorder.members.load(ordering: .relaxed) == 2 }) else {
            host.close()
            print("\(role): no 2-member view within 15 s")
            throw ExitCode.failure
        }
        switch role {
        case .sender: runSender(host: host, recorder: recorder)
        case .receiver: runReceiver(host: host, recorder: recorder, seconds: seconds)
        }
    }

    private func runSender(host: PeerHost, recorder: Recorder) {
        usleep(300_000)  // let the receiver see the view too
        let interval = UInt64(1_000_000_000 / rate)
        let start = MonotonicClock.now()
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
        // Serve repairs until the receiver leaves (it does once it has everything), 10 s at most.
        _ = wait(seconds: 10) { recorder.members.load(ordering: .relaxed) < 2 }
        let stats = host.withCore { $0.stats }
        let failures = host.sendFailureCount
        host.close()
        printResult(SenderResult(sent: count, windowFullRetries: retries, pacingLateMaxUs: Double(lateMax) / 1000,
                                 sendFailures: failures, stats: StatsSummary(stats)))
    }

    private func runReceiver(host: PeerHost, recorder: Recorder, seconds: Double) {
        _ = wait(seconds: seconds + 20) { recorder.received.load(ordering: .relaxed) == count }
        let stats = host.withCore { $0.stats }
        host.close()
        let latencies = recorder.latencies.withLock { $0 }
        let got = latencies.compactMap { $0 }
        let threshold = UInt64(slowThresholdUs * 1000)
        var slow: [UInt64] = []
        var heads: [UInt64] = []
        var previousSlow = false
        for latency in latencies {
            guard let latency else { previousSlow = false; continue }
            let isSlow = latency > threshold
            if isSlow { slow.append(latency) }
            if isSlow && !previousSlow { heads.append(latency) }
            previousSlow = isSlow
        }
        printResult(ReceiverResult(expected: count, received: got.count, all: Distribution(nanoseconds: got),
                                   slow: Distribution(nanoseconds: slow), slowRunHeads: Distribution(nanoseconds: heads),
                                   stats: StatsSummary(stats)))
    }
}
