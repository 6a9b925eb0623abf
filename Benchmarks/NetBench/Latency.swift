import ArgumentParser
import Foundation
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
    @Option(help: "Receivers (spectators: receive-only peers in no view) following the peers, in processes of --receivers-per-process.")
    var receivers: Int = 0
    @Option(help: "Receivers in one process.")
    var receiversPerProcess: Int = 10
    @Flag(help: "Run the receivers as full members instead (in every view, as spectators were before issue 30): to compare. At most 24.")
    var receiversAsMembers = false
    @Option(help: "Seconds after the start when half the receiver processes are killed (SIGKILL); 0: never. The peers report their longest latency for messages stamped from 0.1 s before to 3 s after.")
    var killReceiversAt: Double = 0

    func validate() throws {
        guard (1...100_000).contains(rate) else { throw ValidationError("--rate must be in 1...100000") }
        guard seconds > 0, seconds <= 120 else { throw ValidationError("--seconds must be in (0, 120]") }
        guard (16...1000).contains(payload) else { throw ValidationError("--payload must be in 16...1000") }
        guard (2...8).contains(peers) else { throw ValidationError("--peers must be in 2...8") }
        guard (1...peers).contains(senders) else { throw ValidationError("--senders must be in 1...peers") }
        guard (0...200).contains(receivers) else { throw ValidationError("--receivers must be in 0...200") }
        guard (1...100).contains(receiversPerProcess) else { throw ValidationError("--receivers-per-process must be in 1...100") }
        guard !receiversAsMembers || peers + receivers <= 32 else { throw ValidationError("--receivers-as-members: at most 32 members in all") }
        guard killReceiversAt >= 0, killReceiversAt < seconds + 15 else { throw ValidationError("--kill-receivers-at must be in 0..<seconds + 15") }
        guard killReceiversAt == 0 || netnsPrefix == nil else { throw ValidationError("--kill-receivers-at runs on 127.0.0.1 only") }
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
        // The kill's moment on CLOCK_MONOTONIC, which every process of this machine shares.
        let killAt = killReceiversAt > 0 ? MonotonicClock.now().adding(nanoseconds: UInt64(killReceiversAt * 1e9)) : nil
        let marked = common + (killAt.map { ["--mark-at-ns", "\($0.nanoseconds)"] } ?? [])
        var children: [Child] = []
        for id in 1...peers {
            do {
                if let prefix = netnsPrefix {
                    children.append(try spawn(label: "peer\(id)", arguments: ["latency-peer", "--id", "\(id)", "--interface", "\(netnsSubnet).\(id)"] + common,
                                              launcher: ["ip", "netns", "exec", "\(prefix)\(id)"]))
                } else {
                    children.append(try spawn(label: "peer\(id)", arguments: ["latency-peer", "--id", "\(id)"] + marked))
                }
            } catch {
                _ = reap(children, deadline: Date())
                throw error
            }
        }
        var receiverProcesses: [Child] = []
        var firstReceiver = 1_000
        while firstReceiver - 1_000 < receivers {
            let count = min(receiversPerProcess, receivers - (firstReceiver - 1_000))
            do {
                receiverProcesses.append(try spawn(label: "receivers\(firstReceiver)", arguments: [
                    "latency-receivers", "--first-id", "\(firstReceiver)", "--count", "\(count)", "--port", "\(port)",
                    "--group", group.group, "--seconds", "\(seconds + 8)"] + (receiversAsMembers ? ["--as-members"] : [])
                    + group.childArguments + timers.arguments))
            } catch {
                _ = reap(children + receiverProcesses, deadline: Date())
                throw error
            }
            firstReceiver += count
        }
        var killed: Set<String> = []
        if let killAt {
            sleep(until: killAt)
            for child in receiverProcesses.prefix(receiverProcesses.count / 2) {
                kill(child.process.processIdentifier, SIGKILL)
                killed.insert(child.label)
            }
            print("killed \(killed.count) of \(receiverProcesses.count) receiver processes (\(min(receivers, killed.count * receiversPerProcess)) receivers)")
        }
        let outputs = reap(children, deadline: Date().addingTimeInterval(seconds + 45))
        let receiverOutputs = reap(receiverProcesses, deadline: Date().addingTimeInterval(seconds + 20))
        var following = 0, receiversAlive = 0
        for child in receiverProcesses where !killed.contains(child.label) {
            guard let r = result(LatencyReceivers.Result.self, in: receiverOutputs[child.label] ?? "") else {
                print("--- \(child.label) output ---\n\(receiverOutputs[child.label] ?? "")")
                throw ExitCode.failure
            }
            following += r.following
            receiversAlive += r.count
        }
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
        if receivers > 0 {
            print("receivers: \(following) of the \(receiversAlive) left alive delivered the peers' messages")
        }
        if killAt != nil {
            let around = results.compactMap(\.aroundMarkMaxNanoseconds).max() ?? 0
            let elsewhere = results.compactMap(\.elsewhereMaxNanoseconds).max() ?? 0
            print(String(format: "kill: longest latency of a message stamped from 0.1 s before the kill to 3 s after %.2f ms (%d messages); elsewhere %.2f ms",
                         Double(around) / 1e6, results.reduce(0) { $0 + $1.aroundMarkCount }, Double(elsewhere) / 1e6))
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
        if delivered < expected || following < receiversAlive { throw ExitCode.failure }
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
        /// With `--mark-at-ns`: the longest latency of a message stamped from 0.1 s before the
        /// mark to 3 s after it, how many there were, and the longest of the others.
        var aroundMarkMaxNanoseconds: UInt64?
        var aroundMarkCount: Int
        var elsewhereMaxNanoseconds: UInt64?
    }

    /// Latencies by sender and message index, filled on the event loop, read by the main thread.
    final class Recorder: Sendable {
        let latencies: Mutex<[[UInt64?]]>
        let received = Atomic<Int>(0)
        let members = Atomic<Int>(0)
        let count: Int
        /// (stamp, latency) of every delivery, kept only with a mark.
        let stamped = Mutex<[(UInt64, UInt64)]>([])
        let keepStamps: Bool

        init(count: Int, senders: Int, keepStamps: Bool) {
            self.count = count
            self.keepStamps = keepStamps
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
                if keepStamps { stamped.withLock { $0.append((stamp, now >= stamp ? now - stamp : 0)) } }
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
    @Option var markAtNs: UInt64?
    @OptionGroup var group: GroupOptions
    @OptionGroup var timers: TimerOptions

    func run() throws {
        let seconds = Double(count) / Double(rate)
        alarm(UInt32(seconds) + 40)  // last resort: the kernel ends this process
        guard let port = group.port else { throw ValidationError("--port is required") }
        let me = PeerID(id)
        var config = PeerNetConfig(room: "netbench-\(port)", peerID: me, incarnation: UInt64(getpid()))
        timers.apply(to: &config)
        let recorder = Recorder(count: count, senders: senders, keepStamps: markAtNs != nil)
        let host = try PeerHost(config: config, options: group.multicast(port: port)) { event, core, now in
            // Receivers start from a snapshot of the application's state: here there is none.
            if event == .receiversWaiting { core.answerReceivers(snapshot: [], now: now) }
            recorder.take(event, me: me)
        }
        guard wait(seconds: 15, { recorder.members.load(ordering: .relaxed) >= peers }) else {
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
        var around: UInt64?, elsewhere: UInt64?, aroundCount = 0
        if let mark = markAtNs {
            for (stamp, latency) in recorder.stamped.withLock({ $0 }) {
                if stamp + 100_000_000 >= mark && stamp <= mark + 3_000_000_000 {
                    around = max(around ?? 0, latency)
                    aroundCount += 1
                } else {
                    elsewhere = max(elsewhere ?? 0, latency)
                }
            }
        }
        printResult(PeerResult(sent: sending ? count : 0, windowFullRetries: retries, pacingLateMaxUs: Double(lateMax) / 1000,
                               sendFailures: failures, expected: expected, received: got.count,
                               latencies: got, slow: slow, slowRunHeads: heads, stats: StatsSummary(stats),
                               aroundMarkMaxNanoseconds: around, aroundMarkCount: aroundCount, elsewhereMaxNanoseconds: elsewhere))
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

/// Receivers of `latency --receivers` (started by it; not meant to be run by hand): `count`
/// receive-only peers in one process, each following the group from a snapshot.
struct LatencyReceivers: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "latency-receivers", shouldDisplay: false)

    struct Result: Codable {
        var count: Int
        /// Receivers that delivered at least one message of the peers.
        var following: Int
        var delivered: Int
    }

    @Option var firstId: UInt64
    @Option var count: Int
    @Option var seconds: Double
    @Flag var asMembers = false
    @OptionGroup var group: GroupOptions
    @OptionGroup var timers: TimerOptions

    func run() throws {
        alarm(UInt32(seconds) + 30)  // last resort: the kernel ends this process
        guard let port = group.port else { throw ValidationError("--port is required") }
        let counts = Mutex<[Int]>(Array(repeating: 0, count: count))
        var hosts: [PeerHost] = []
        defer { hosts.forEach { $0.close() } }
        for index in 0..<count {
            var config = PeerNetConfig(room: "netbench-\(port)", peerID: PeerID(firstId + UInt64(index)),
                                       incarnation: UInt64(getpid()) << 16 | UInt64(index))
            timers.apply(to: &config)
            config.receiveOnly = !asMembers
            hosts.append(try PeerHost(config: config, options: group.multicast(port: port)) { event, _, _ in
                if case .delivered(let d) = event, d.payload.count >= 16 { counts.withLock { $0[index] += 1 } }
            })
        }
        usleep(UInt32(seconds * 1e6))
        let got = counts.withLock { $0 }
        printResult(Result(count: count, following: got.filter { $0 > 0 }.count, delivered: got.reduce(0, +)))
    }
}
