import ArgumentParser
import Foundation
import NIOPosix
import PeerNet
import PeerNetUDP
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Sustained delivered messages per second with N peer processes on 127.0.0.1, every peer
/// sending as fast as its window allows, plus the bytes on the wire per message, counted by a
/// tap socket (joined to the group in this process) during the measured window.
struct Throughput: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delivered messages per second with N peer processes on 127.0.0.1, all sending flat out."
    )

    @Option(help: "Peer processes.") var peers: Int = 4
    @Option(help: "Seconds of sending (measured window).") var seconds: Double = 10
    @Option(help: "Payload bytes (at least 8).") var payload: Int = 64
    @Option(help: "Sends per lock acquisition (messages packed into datagrams together).") var batch: Int = 64
    @OptionGroup var group: GroupOptions
    @OptionGroup var timers: TimerOptions

    func validate() throws {
        guard (2...16).contains(peers) else { throw ValidationError("--peers must be in 2...16") }
        guard seconds > 0, seconds <= 120 else { throw ValidationError("--seconds must be in (0, 120]") }
        guard (8...1000).contains(payload) else { throw ValidationError("--payload must be in 8...1000") }
        guard (1...4096).contains(batch) else { throw ValidationError("--batch must be in 1...4096") }
    }

    /// Datagrams seen by the tap during the measured window.
    final class Tap: Sendable {
        let datagrams = Atomic<UInt64>(0)
        let bytes = Atomic<UInt64>(0)
        let start: UInt64
        let end: UInt64

        init(start: NetTime, end: NetTime) {
            self.start = start.nanoseconds
            self.end = end.nanoseconds
        }

        func count(_ datagram: [UInt8]) {
            let now = MonotonicClock.now().nanoseconds
            guard now >= start, now < end else { return }
            datagrams.add(1, ordering: .relaxed)
            bytes.add(UInt64(datagram.count), ordering: .relaxed)
        }
    }

    func run() throws {
        let port = group.port ?? Int.random(in: 20_000...60_000)
        var config = PeerNetConfig(peerID: PeerID(1))
        timers.apply(to: &config)
        let startAt = MonotonicClock.now().adding(nanoseconds: 6_000_000_000)
        let endAt = startAt.adding(nanoseconds: UInt64(seconds * 1e9))
        print("throughput: port=\(port) peers=\(peers) seconds=\(seconds) payload=\(payload)B batch=\(batch) \(timers.describe(config))")

        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? loop.syncShutdownGracefully() }
        let tap = Tap(start: startAt, end: endAt)
        let socket = try MulticastSocket.open(options: group.multicast(port: port), on: loop.next()) { tap.count($0) }
        defer { socket.close() }

        var children: [Child] = []
        for index in 1...peers {
            let args = ["throughput-peer", "--id", "\(index)", "--peers", "\(peers)", "--port", "\(port)",
                        "--group", group.group] + group.childArguments + ["--payload", "\(payload)", "--batch", "\(batch)",
                        "--start-at-ns", "\(startAt.nanoseconds)", "--end-at-ns", "\(endAt.nanoseconds)"] + timers.arguments
            do {
                children.append(try spawn(label: "peer\(index)", arguments: args))
            } catch {
                _ = reap(children, deadline: Date())
                throw error
            }
        }
        let outputs = reap(children, deadline: Date().addingTimeInterval(seconds + 40))
        var results: [ThroughputPeer.PeerResult] = []
        for index in 1...peers {
            let output = outputs["peer\(index)"] ?? ""
            guard let r = result(ThroughputPeer.PeerResult.self, in: output) else {
                print("--- peer\(index) output ---\n\(output)")
                throw ExitCode.failure
            }
            results.append(r)
        }
        report(results, tap: tap)
    }

    private func report(_ results: [ThroughputPeer.PeerResult], tap: Tap) {
        for (index, r) in results.enumerated() {
            print("peer\(index + 1): sent \(rate(r.sent))/s, delivered from others \(rate(r.deliveredOthers))/s, "
                  + "delivered incl. own \(rate(r.deliveredOthers + r.deliveredOwn))/s, window-full waits \(r.windowFullWaits), "
                  + "late start \(String(format: "%.0f", r.lateStartMs)) ms, datagrams sent \(r.stats.datagramsSent), "
                  + "nacks \(r.stats.nacksSent), retransmitted \(r.stats.messagesRetransmitted), discarded \(r.stats.messagesDiscarded), "
                  + "send failures \(r.sendFailures)")
        }
        let sent = results.reduce(0) { $0 + $1.sent }
        let others = results.map(\.deliveredOthers)
        let datagrams = tap.datagrams.load(ordering: .relaxed)
        let bytes = tap.bytes.load(ordering: .relaxed)
        print("per receiver, delivered from others: min \(rate(others.min() ?? 0))/s, mean \(rate(others.reduce(0, +) / max(1, others.count)))/s")
        print("all peers: \(rate(sent)) messages/s originated")
        print("wire (tap, measured window): \(datagrams) datagrams, \(bytes) UDP payload bytes; "
              + String(format: "%.1f messages/datagram incl. control", Double(sent) / Double(max(1, datagrams))))
        let perMessage = Double(bytes) / Double(max(1, sent))
        let perMessageIP = Double(bytes + 28 * datagrams) / Double(max(1, sent))
        print(String(format: "bytes per originated message: %.1f UDP payload, %.1f with IPv4+UDP headers "
                     + "(one multicast reaches %d receivers: %.1f IP bytes per delivery)",
                     perMessage, perMessageIP, results.count - 1, perMessageIP / Double(max(1, results.count - 1))))
    }

    private func rate(_ n: Int) -> String { String(format: "%.0f", Double(n) / seconds) }
}

/// One peer of `throughput` (started by it; not meant to be run by hand).
struct ThroughputPeer: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "throughput-peer", shouldDisplay: false)

    struct PeerResult: Codable {
        var sent: Int
        var deliveredOthers: Int
        var deliveredOwn: Int
        var windowFullWaits: Int
        var lateStartMs: Double
        var sendFailures: UInt64
        var stats: StatsSummary
    }

    final class Counter: Sendable {
        let others = Atomic<Int>(0)
        let own = Atomic<Int>(0)
        let members = Atomic<Int>(0)
        let start: UInt64
        let end: UInt64

        init(start: UInt64, end: UInt64) {
            self.start = start
            self.end = end
        }

        func take(_ event: PeerNetEvent, me: PeerID) {
            switch event {
            case .delivered(let d):
                let now = MonotonicClock.now().nanoseconds
                guard now >= start, now < end else { return }
                if d.from == me { own.add(1, ordering: .relaxed) } else { others.add(1, ordering: .relaxed) }
            case .viewChanged(let view):
                members.store(view.members.count, ordering: .relaxed)
            default:
                break
            }
        }
    }

    @Option var id: UInt64
    @Option var peers: Int
    @Option var payload: Int
    @Option var batch: Int
    @Option var startAtNs: UInt64
    @Option var endAtNs: UInt64
    @OptionGroup var group: GroupOptions
    @OptionGroup var timers: TimerOptions

    func run() throws {
        let startAt = NetTime(nanoseconds: startAtNs)
        let endAt = NetTime(nanoseconds: endAtNs)
        precondition(endAt > startAt && endAt.nanoseconds(since: startAt) <= 120_000_000_000, "window of at most 120 s")
        alarm(UInt32(endAt.nanoseconds(since: MonotonicClock.now()) / 1_000_000_000) + 30)  // last resort
        guard let port = group.port else { throw ValidationError("--port is required") }
        let me = PeerID(id)
        var config = PeerNetConfig(room: "netbench-\(port)", peerID: me, incarnation: UInt64(getpid()))
        timers.apply(to: &config)
        let counter = Counter(start: startAtNs, end: endAtNs)
        let host = try PeerHost(config: config, options: group.multicast(port: port)) { event, _, _ in
            counter.take(event, me: me)
        }
        guard wait(seconds: 15, { counter.members.load(ordering: .relaxed) == peers }) else {
            host.close()
            print("peer \(id): no \(peers)-member view within 15 s")
            throw ExitCode.failure
        }
        let lateStart = MonotonicClock.now().nanoseconds(since: startAt)
        sleep(until: startAt)

        var bytes = [UInt8](repeating: 0x5A, count: payload)
        var sent = 0
        var waits = 0
        while MonotonicClock.now() < endAt {
            writeU64(UInt64(sent), into: &bytes, at: 0)
            let (accepted, full) = host.withCore { core -> (Int, Bool) in
                var n = 0
                while n < batch {
                    writeU64(UInt64(sent + n), into: &bytes, at: 0)
                    guard (try? core.send(bytes, now: MonotonicClock.now())) != nil else { return (n, true) }
                    n += 1
                }
                return (n, false)
            }
            sent += accepted
            if full {
                waits += 1
                usleep(100)
            }
        }
        usleep(1_000_000)  // keep serving repairs a little after the window
        let stats = host.withCore { $0.stats }
        let failures = host.sendFailureCount
        host.close()
        printResult(PeerResult(sent: sent, deliveredOthers: counter.others.load(ordering: .relaxed),
                               deliveredOwn: counter.own.load(ordering: .relaxed), windowFullWaits: waits,
                               lateStartMs: Double(lateStart) / 1e6, sendFailures: failures, stats: StatsSummary(stats)))
    }
}
