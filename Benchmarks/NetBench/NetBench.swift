import ArgumentParser
import EggPrimitives
import Foundation
import PeerNet
import PeerNetUDP
#if canImport(Glibc)
import Glibc
#endif

/// `eggs-netbench`: PeerNet measurements (issue 3).
///
/// - `latency`: peer processes on 127.0.0.1, some or all sending at a steady rate; one-way
///   delivery latency and bytes on the wire per delivered message.
/// - `throughput`: N peer processes on 127.0.0.1, all sending 64-byte messages flat out.
/// - `sim-recovery`: the EggSim network on a virtual clock; time from a lost datagram to delivery.
///
/// Multicast goes only to 127.0.0.1 (TTL 0); loss is injected from outside with nftables in a
/// private namespace (see scripts/netbench.sh). Every run is bounded in time; every child
/// process is reaped, and each child also arms `alarm(2)` as a last resort.
@main
struct NetBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eggs-netbench",
        abstract: "PeerNet latency, throughput and recovery measurements.",
        subcommands: [Latency.self, Throughput.self, SimRecovery.self, LatencyPeer.self, LatencyReceivers.self, ThroughputPeer.self]
    )
}

/// Protocol timers and limits a run may override (defaults: `PeerNetConfig`'s).
struct TimerOptions: ParsableArguments {
    @Option(help: "Upper bound of the random NACK delay, in ms (PeerNet default 5).")
    var nackDelayMs: Double?
    @Option(help: "NACK repeat interval while a gap persists, in ms (PeerNet default 5, plus the origin's RTO).")
    var retransmitMs: Double?
    @Option(help: "Upper bound of the repair delay of a non-origin member, in ms (PeerNet default 4).")
    var repairDelayMs: Double?
    @Option(help: "Heartbeat interval, in ms (PeerNet default 250).")
    var heartbeatMs: Double?
    @Option(help: "Send window (own unstable messages), PeerNet default 1024.")
    var window: Int?
    @Option(help: "Redundancy: bytes of copies a datagram may carry, 0 turns it off (PeerNet default 600).")
    var redundancyBytes: Int?
    @Option(help: "Redundancy: echo datagrams after a game-rate send at most, 0: piggybacked copies only (PeerNet default 3).")
    var redundancyEchoes: Int?
    @Option(help: "Redundancy: delay from a send to its first echo and between echoes, in ms (PeerNet default 1).")
    var redundancyEchoDelayMs: Double?

    func apply(to config: inout PeerNetConfig) {
        if let nackDelayMs { config.nackDelayMaxNanoseconds = nanoseconds(ms: nackDelayMs) }
        if let retransmitMs { config.retransmitTimeoutNanoseconds = nanoseconds(ms: retransmitMs) }
        if let repairDelayMs { config.repairDelayMaxNanoseconds = nanoseconds(ms: repairDelayMs) }
        if let heartbeatMs { config.heartbeatIntervalNanoseconds = max(1, nanoseconds(ms: heartbeatMs)) }
        if let window { config.windowSizeMax = window }
        if let redundancyBytes { config.redundancyBytesMax = redundancyBytes }
        if let redundancyEchoes { config.redundancyEchoesMax = redundancyEchoes }
        if let redundancyEchoDelayMs { config.redundancyEchoDelayNanoseconds = max(1, nanoseconds(ms: redundancyEchoDelayMs)) }
    }

    /// The same options as command-line arguments, for a child process.
    var arguments: [String] {
        var args: [String] = []
        if let nackDelayMs { args += ["--nack-delay-ms", "\(nackDelayMs)"] }
        if let retransmitMs { args += ["--retransmit-ms", "\(retransmitMs)"] }
        if let repairDelayMs { args += ["--repair-delay-ms", "\(repairDelayMs)"] }
        if let heartbeatMs { args += ["--heartbeat-ms", "\(heartbeatMs)"] }
        if let window { args += ["--window", "\(window)"] }
        if let redundancyBytes { args += ["--redundancy-bytes", "\(redundancyBytes)"] }
        if let redundancyEchoes { args += ["--redundancy-echoes", "\(redundancyEchoes)"] }
        if let redundancyEchoDelayMs { args += ["--redundancy-echo-delay-ms", "\(redundancyEchoDelayMs)"] }
        return args
    }

    func describe(_ config: PeerNetConfig) -> String {
        "nack_delay_max=\(ms(config.nackDelayMaxNanoseconds))ms retransmit=\(ms(config.retransmitTimeoutNanoseconds))ms "
            + "repair_delay_max=\(ms(config.repairDelayMaxNanoseconds))ms heartbeat=\(ms(config.heartbeatIntervalNanoseconds))ms "
            + "window=\(config.windowSizeMax) redundancy_bytes=\(config.redundancyBytesMax) redundancy_echoes=\(config.redundancyEchoesMax) echo_delay=\(ms(config.redundancyEchoDelayNanoseconds))ms"
    }
}

/// Where the group lives. The interface is always 127.0.0.1: never another interface.
struct GroupOptions: ParsableArguments {
    @Option(help: "UDP port of the group (default: a random port in 20000...60000).")
    var port: Int?
    @Option(help: "IPv4 multicast group (on 127.0.0.1 with TTL 0, or inside namespaces the caller made).")
    var group: String = "239.255.77.91"
    @Option(help: ArgumentHelp("Interface address: 127.0.0.1 (TTL 0), or a host's address inside network namespaces the caller made (TTL 1; scripts/lan-bench.sh).", visibility: .hidden))
    var interface: String = "127.0.0.1"
    @Flag(help: "Let each peer's own multicast wake it (the kernel drops it by default): to measure what dropping it saves.")
    var keepOwnEchoes = false

    /// The flags a child peer needs besides the port and group.
    var childArguments: [String] { keepOwnEchoes ? ["--keep-own-echoes"] : [] }

    func validate() throws {
        if let port, !(1024...65535).contains(port) { throw ValidationError("--port must be in 1024...65535") }
        guard group.hasPrefix("239.") else { throw ValidationError("--group must be an administratively scoped 239.x.y.z group") }
    }

    func multicast(port: Int) -> MulticastOptions {
        var options = MulticastOptions(group: group, port: port, interface: interface, ttl: interface == "127.0.0.1" ? 0 : 1)
        options.dropOwnEchoes = !keepOwnEchoes
        return options
    }
}

func nanoseconds(ms: Double) -> UInt64 { UInt64(max(0, ms * 1_000_000).rounded()) }
func ms(_ ns: UInt64) -> String { String(format: "%g", Double(ns) / 1_000_000) }

// MARK: - Payload stamps

/// Little-endian `UInt64` at `offset`.
func readU64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
    var value: UInt64 = 0
    for i in 0..<8 { value |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
    return value
}

func writeU64(_ value: UInt64, into bytes: inout [UInt8], at offset: Int) {
    for i in 0..<8 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
}

// MARK: - Distributions

/// Percentiles of a sample of nanosecond values (nearest rank), reported in microseconds.
struct Distribution: Codable, CustomStringConvertible {
    var count: Int
    var p50: Double
    var p90: Double
    var p99: Double
    var p999: Double
    var max: Double
    var mean: Double

    init(nanoseconds samples: [UInt64]) {
        let sorted = samples.sorted()
        count = sorted.count
        func rank(_ q: Double) -> Double { Double(nearestRank(q, ofSorted: sorted) ?? 0) / 1000 }
        p50 = rank(0.50)
        p90 = rank(0.90)
        p99 = rank(0.99)
        p999 = rank(0.999)
        max = Double(sorted.last ?? 0) / 1000
        mean = sorted.isEmpty ? 0 : Double(sorted.reduce(0, +)) / Double(sorted.count) / 1000
    }

    var description: String {
        func f(_ us: Double) -> String { us >= 1000 ? String(format: "%.1f ms", us / 1000) : String(format: "%.0f µs", us) }
        return "n=\(count) p50=\(f(p50)) p90=\(f(p90)) p99=\(f(p99)) p99.9=\(f(p999)) max=\(f(max)) mean=\(f(mean))"
    }
}

// MARK: - Child processes

/// A child `eggs-netbench` process whose output goes to a temporary file.
struct Child {
    let label: String
    let process: Process
    let output: URL
}

/// The running executable's path (children are the same binary).
func selfExecutable() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    precondition(n > 0, "cannot read /proc/self/exe")
    return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Starts this binary with `arguments`, or `launcher` with this binary and them (e.g. `ip netns
/// exec h1`: the child runs in another network namespace).
func spawn(label: String, arguments: [String], launcher: [String] = []) throws -> Child {
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("eggs-netbench-\(getpid())-\(label).out")
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    let handle = try FileHandle(forWritingTo: output)
    let process = Process()
    if let command = launcher.first {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + launcher.dropFirst() + [selfExecutable()] + arguments
    } else {
        process.executableURL = URL(fileURLWithPath: selfExecutable())
        process.arguments = arguments
    }
    process.standardOutput = handle
    process.standardError = handle
    try process.run()
    try handle.close()
    return Child(label: label, process: process, output: output)
}

/// Waits for every child until `deadline`, kills the late ones (TERM, then KILL), reaps all,
/// and returns each child's output. Never leaves a child behind.
func reap(_ children: [Child], deadline: Date) -> [String: String] {
    for child in children {
        while child.process.isRunning && Date() < deadline { usleep(20_000) }
        if child.process.isRunning {
            FileHandle.standardError.write(Data("\(child.label): still running at the deadline, terminating\n".utf8))
            child.process.terminate()
            let grace = Date().addingTimeInterval(2)
            while child.process.isRunning && Date() < grace { usleep(20_000) }
            if child.process.isRunning { kill(child.process.processIdentifier, SIGKILL) }
        }
        child.process.waitUntilExit()
    }
    var outputs: [String: String] = [:]
    for child in children {
        outputs[child.label] = (try? String(contentsOf: child.output, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: child.output)
    }
    return outputs
}

/// The first `RESULT {json}` line of a child's output, decoded.
func result<T: Decodable>(_ type: T.Type, in output: String) -> T? {
    for line in output.split(separator: "\n") where line.hasPrefix("RESULT ") {
        return try? JSONDecoder().decode(T.self, from: Data(line.dropFirst(7).utf8))
    }
    return nil
}

func printResult<T: Encodable>(_ value: T) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let json = String(decoding: try! encoder.encode(value), as: UTF8.self)
    print("RESULT \(json)")
    fflush(nil)  // every stream: the parent reads a file
}

/// Sleeps until the monotonic clock reaches `deadline` (returns at once when it has).
func sleep(until deadline: NetTime) {
    let now = MonotonicClock.now()
    guard deadline > now else { return }
    let delta = deadline.nanoseconds(since: now)
    var request = timespec(tv_sec: Int(delta / 1_000_000_000), tv_nsec: Int(delta % 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
}

/// Waits until `condition` holds or `seconds` pass. Returns whether it held.
func wait(seconds: Double, pollMicroseconds: UInt32 = 10_000, _ condition: () -> Bool) -> Bool {
    let deadline = MonotonicClock.now().adding(nanoseconds: UInt64(seconds * 1e9))
    while !condition() {
        if MonotonicClock.now() > deadline { return false }
        usleep(pollMicroseconds)
    }
    return true
}

/// PeerNet statistics worth reporting, as a Codable value.
struct StatsSummary: Codable {
    var datagramsSent: UInt64
    var bytesSent: UInt64
    var messagesCopied: UInt64
    var echoesSent: UInt64
    var datagramsReceived: UInt64
    var messagesSent: UInt64
    var messagesRetransmitted: UInt64
    var messagesDuplicate: UInt64
    var messagesDelivered: UInt64
    var messagesDiscarded: UInt64
    var nacksSent: UInt64
    var heartbeatsSent: UInt64
    var viewsInstalled: UInt64
    var droppedInvalid: UInt64

    init(_ s: PeerNetStats) {
        datagramsSent = s.datagramsSent
        bytesSent = s.bytesSent
        messagesCopied = s.messagesCopied
        echoesSent = s.echoesSent
        datagramsReceived = s.datagramsReceived
        messagesSent = s.messagesSent
        messagesRetransmitted = s.messagesRetransmitted
        messagesDuplicate = s.messagesDuplicate
        messagesDelivered = s.messagesDelivered
        messagesDiscarded = s.messagesDiscarded
        nacksSent = s.nacksSent
        heartbeatsSent = s.heartbeatsSent
        viewsInstalled = s.viewsInstalled
        droppedInvalid = s.droppedInvalid
    }
}
