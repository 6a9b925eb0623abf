import EggTestSupport
import Foundation
import PeerNet
import PeerNetUDP
import Synchronization
import Testing

/// Real sockets, multicast on 127.0.0.1 only (TTL 0): never the machine's real interfaces.
@Suite("real sockets on 127.0.0.1", .serialized, .tags(.slow), .slowTier)
struct UDPLoopbackTests {
    /// What one peer's host delivered, gathered under a lock.
    final class Inbox: Sendable {
        let deliveries = Mutex<[Delivery]>([])
        let views = Mutex<[MembershipView]>([])

        func take(_ event: PeerNetEvent) {
            switch event {
            case .delivered(let delivery): deliveries.withLock { $0.append(delivery) }
            case .viewChanged(let view): views.withLock { $0.append(view) }
            default: break
            }
        }
    }

    static func freePort() -> Int { TestPorts.next() }

    @Test("three peers on 127.0.0.1 exchange thousands of messages, all delivered in order")
    func threePeersThousandsOfMessages() throws {
        let options = MulticastOptions(group: "239.255.77.78", port: Self.freePort(), interface: "127.0.0.1")
        let room = "udp-test-\(options.port)"
        let ids = [PeerID(0x11), PeerID(0x22), PeerID(0x33)]
        let inboxes = ids.map { _ in Inbox() }
        var hosts: [PeerHost] = []
        for (index, id) in ids.enumerated() {
            var config = PeerNetConfig(room: room, peerID: id)
            config.incarnation = 1
            let inbox = inboxes[index]
            hosts.append(try PeerHost(config: config, options: options) { event, _, _ in inbox.take(event) })
        }
        defer { hosts.forEach { $0.close() } }

        // Wait until every peer's view holds all three.
        try waitUntil(seconds: 20) { inboxes.allSatisfy { $0.views.withLock { $0.last?.members.count == 3 } } }

        let perSender = 2_000
        var sent = [Int](repeating: 0, count: ids.count)
        let deadline = Date().addingTimeInterval(60)
        while sent.contains(where: { $0 < perSender }) && Date() < deadline {
            for (index, host) in hosts.enumerated() where sent[index] < perSender {
                let payload = Array("m\(sent[index])".utf8)
                let accepted = host.withCore { core in (try? core.send(payload, now: MonotonicClock.now())) != nil }
                if accepted { sent[index] += 1 }
            }
            if sent.allSatisfy({ $0 % 64 == 0 }) { usleep(200) }
        }
        #expect(sent.allSatisfy { $0 == perSender }, "senders stalled at \(sent)")

        try waitUntil(seconds: 30) {
            inboxes.allSatisfy { $0.deliveries.withLock { $0.count } == perSender * ids.count }
        }
        for (index, inbox) in inboxes.enumerated() {
            let got = inbox.deliveries.withLock { $0 }
            for id in ids {
                let stream = got.filter { $0.from == id }
                #expect(stream.count == perSender, "peer \(ids[index]) got \(stream.count) from \(id)")
                #expect(stream.map(\.seq) == (0..<UInt64(stream.count)).map { $0 + 1 }, "peer \(ids[index]): \(id)'s stream out of order")
                #expect(stream.enumerated().allSatisfy { String(decoding: $1.payload, as: UTF8.self) == "m\($0)" })
            }
        }
    }

    @Test("the kernel drops a peer's own multicast before it wakes the peer; another incarnation of its ID still reaches it")
    func ownEchoesDroppedByTheKernel() throws {
        /// Two peers exchange 40 messages each; returns their stats.
        func exchange(dropOwnEchoes: Bool) throws -> [PeerNetStats] {
            var options = MulticastOptions(group: "239.255.77.78", port: Self.freePort(), interface: "127.0.0.1")
            options.dropOwnEchoes = dropOwnEchoes
            let ids = [PeerID(0x11), PeerID(0x22)]
            let inboxes = ids.map { _ in Inbox() }
            var hosts: [PeerHost] = []
            defer { hosts.forEach { $0.close() } }
            for (index, id) in ids.enumerated() {
                var config = PeerNetConfig(room: "echo-test-\(options.port)", peerID: id)
                config.incarnation = 1
                let inbox = inboxes[index]
                hosts.append(try PeerHost(config: config, options: options) { event, _, _ in inbox.take(event) })
            }
            #expect(hosts.allSatisfy { $0.ownEchoesFiltered == dropOwnEchoes })
            try waitUntil(seconds: 20) { inboxes.allSatisfy { $0.views.withLock { $0.last?.members.count == 2 } } }
            for n in 0..<40 {
                for host in hosts { _ = host.withCore { try? $0.send(Array("e\(n)".utf8), now: MonotonicClock.now()) } }
            }
            try waitUntil(seconds: 20) { inboxes.allSatisfy { $0.deliveries.withLock { $0.count } == 80 } }
            return hosts.map { host in host.withCore { $0.stats } }
        }
        let dropped = try exchange(dropOwnEchoes: true)
        let kept = try exchange(dropOwnEchoes: false)
        for (index, stats) in dropped.enumerated() {
            #expect(stats.datagramsSent >= 40 && stats.datagramsAccepted > 0, "peer \(index) sent \(stats.datagramsSent), accepted \(stats.datagramsAccepted)")
            #expect(stats.datagramsLoopback == 0, "peer \(index) read \(stats.datagramsLoopback) of its own datagrams")
        }
        // The measure tells the two apart: without the filter every datagram a peer sends comes back.
        for (index, stats) in kept.enumerated() {
            #expect(stats.datagramsLoopback >= stats.datagramsSent / 2, "peer \(index) read \(stats.datagramsLoopback) of its \(stats.datagramsSent) datagrams back")
        }

        // A second process under the same ID (another incarnation) is not filtered: the collision is heard.
        let options = MulticastOptions(group: "239.255.77.78", port: Self.freePort(), interface: "127.0.0.1")
        var hosts: [PeerHost] = []
        defer { hosts.forEach { $0.close() } }
        for incarnation: UInt64 in [1, 2] {
            var config = PeerNetConfig(room: "echo-collision-\(options.port)", peerID: PeerID(0x11))
            config.incarnation = incarnation
            hosts.append(try PeerHost(config: config, options: options) { _, _, _ in })
        }
        try waitUntil(seconds: 10) { hosts[0].withCore { $0.stats.droppedStaleIncarnation } > 0 }
        #expect(hosts[0].withCore { $0.stats.datagramsLoopback } == 0)
    }

    @Test("the kernel drops receivers' datagrams before they wake a receiver; the member still hears every receiver")
    func receiversDoNotWakeOneAnother() throws {
        let options = MulticastOptions(group: "239.255.77.78", port: Self.freePort(), interface: "127.0.0.1")
        let room = "receivers-test-\(options.port)"
        var hosts: [PeerHost] = []
        defer { hosts.forEach { $0.close() } }
        var member = PeerNetConfig(room: room, peerID: PeerID(0x11))
        member.incarnation = 1
        let memberInbox = Inbox()
        hosts.append(try PeerHost(config: member, options: options) { event, core, now in
            memberInbox.take(event)
            if case .receiversWaiting = event { core.answerReceivers(snapshot: Array("start".utf8), now: now) }
        })
        let receiverIDs = [PeerID(0x21), PeerID(0x22), PeerID(0x23)]
        let inboxes = receiverIDs.map { _ in Inbox() }
        for (index, id) in receiverIDs.enumerated() {
            var config = PeerNetConfig(room: room, peerID: id)
            config.incarnation = 1
            config.receiveOnly = true
            let inbox = inboxes[index]
            hosts.append(try PeerHost(config: config, options: options) { event, _, _ in inbox.take(event) })
        }
        #expect(hosts[0].receiversDatagramsFiltered == false)
        #expect(hosts.dropFirst().allSatisfy { $0.receiversDatagramsFiltered && $0.ownEchoesFiltered })
        try waitUntil(seconds: 20) { inboxes.allSatisfy { $0.views.withLock { $0.last?.members == [PeerID(0x11)] } } }
        for n in 0..<30 {
            _ = hosts[0].withCore { try? $0.send(Array("r\(n)".utf8), now: MonotonicClock.now()) }
            usleep(20_000)
        }
        // Each receiver says it is there once a second: wait for two rounds of that.
        try waitUntil(seconds: 20) { inboxes.allSatisfy { $0.deliveries.withLock { $0.filter { $0.seq > 0 }.count } >= 30 } }
        usleep(2_200_000)
        let stats = hosts.map { host in host.withCore { $0.stats } }
        #expect(hosts[0].withCore { $0.receiversHeard(now: MonotonicClock.now()) } == 3, "the member heard every receiver")
        for (index, receiver) in stats.dropFirst().enumerated() {
            #expect(receiver.datagramsSent >= 3, "receiver \(index) sent \(receiver.datagramsSent)")
            // Not one of the other receivers' datagrams (nor its own) was read.
            #expect(receiver.receiverDatagramsSkipped == 0 && receiver.datagramsLoopback == 0,
                    "receiver \(index) read \(receiver.receiverDatagramsSkipped) receivers' datagrams")
            #expect(receiver.droppedInvalid == 0)
        }
    }

    /// The threads of this process named `name` (/proc/self/task/*/comm).
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) == name
        }.count
    }

    @Test("each host reads on a thread of its own, named after its ID; close() stops it, and so does dropping the host")
    func readingThreadEndsWithTheHost() throws {
        let options = MulticastOptions(group: "239.255.77.78", port: Self.freePort(), interface: "127.0.0.1")
        let ids = [PeerID(0x7E57_0A01), PeerID(0x7E57_0A02)]
        let names = ids.map { PeerHost.threadName($0) }
        #expect(names == ["eggs-7e570a01", "eggs-7e570a02"])
        let inbox = Inbox()
        var hosts: [PeerHost] = []
        for id in ids {
            var config = PeerNetConfig(room: "threads-\(options.port)", peerID: id)
            config.incarnation = 1
            hosts.append(try PeerHost(config: config, options: options) { event, _, _ in inbox.take(event) })
        }
        #expect(names.map { Self.threads(named: $0) } == [1, 1])
        try waitUntil(seconds: 20) { inbox.views.withLock { $0.contains { $0.members.count == 2 } } }
        hosts[0].close()
        // close() returns once the thread has stopped (joined); the kernel lists a thread that
        // has exited for a moment longer.
        try waitUntil(seconds: 2) { Self.threads(named: names[0]) == 0 }
        hosts[0].close()  // a second close does nothing
        // Dropped without close(): its thread finds no host when it next wakes (a heartbeat at most), and ends.
        hosts.removeAll()
        try waitUntil(seconds: 5) { Self.threads(named: names[1]) == 0 }
    }

    @Test("a deadline brought forward by another thread wakes the reading thread: the report after a send leaves on time")
    func earlierDeadlineWakesTheReader() throws {
        let hosts = try quietPair(group: "239.255.77.78", room: "wake", ids: [PeerID(0x31), PeerID(0x32)])
        defer { hosts.forEach { $0.close() } }
        // Each send (from this thread) arms the report 20 ms later, earlier than the reader's wait for
        // the next heartbeat: unless woken, the report would leave with that heartbeat, up to 2 s late.
        var waits: [Double] = []
        for n in 0..<6 {
            let before = hosts[0].withCore { $0.stats.reportsSent }
            let sentAt = Date()
            _ = hosts[0].withCore { try? $0.send(Array("w\(n)".utf8), now: MonotonicClock.now()) }
            while hosts[0].withCore({ $0.stats.reportsSent }) == before && Date().timeIntervalSince(sentAt) < 3 { usleep(2_000) }
            waits.append(Date().timeIntervalSince(sentAt))
            usleep(50_000)  // the reader is asleep again
        }
        // 20 ms each when woken; when not, each waits for the next heartbeat (uniform over 2 s).
        #expect(waits.allSatisfy { $0 < 0.4 }, "reports after \(waits.map { Int($0 * 1000) }) ms")
    }

    @Test("a deadline moved later by sends does not wake the reading thread: no wake-up for a report that is no longer due")
    func laterDeadlineLeavesTheReaderAsleep() throws {
        let hosts = try quietPair(group: "239.255.77.79", room: "later", ids: [PeerID(0x41), PeerID(0x42)])
        defer { hosts.forEach { $0.close() } }
        // Every 10 ms a send moves the sender's tail-loss report 20 ms later: while the sends keep
        // coming it is never due. Its own echoes are filtered and the other peer sends nothing back,
        // so the sender's reader has nothing to wake for but a report that really comes due (a send
        // late by more than 10 ms on a busy machine) or a heartbeat.
        let host = hosts[0]
        let (wakesBefore, reportsBefore) = (host.readerWakeCount, host.withCore { $0.stats.reportsSent })
        let sends = 60
        for n in 0..<sends {
            _ = host.withCore { try? $0.send(Array("l\(n)".utf8), now: MonotonicClock.now()) }
            usleep(10_000)
        }
        let wakes = host.readerWakeCount - wakesBefore
        let reports = host.withCore { $0.stats.reportsSent } - reportsBefore
        // Before the timer could be moved later, the reader woke at every deadline a send had moved
        // on: once per send or two (about 30–60 here). Now it wakes for the reports sent and little else.
        #expect(wakes <= Int(reports) + 5, "\(wakes) wakes of the sender's reader for \(sends) sends and \(reports) reports")
    }

    /// Two peers on 127.0.0.1 that nothing else wakes for seconds (heartbeats every 2 s, no address
    /// announcements), in one view: what the tests of the reading thread's timer need. The caller closes them.
    func quietPair(group: String, room: String, ids: [PeerID]) throws -> [PeerHost] {
        var options = MulticastOptions(group: group, port: Self.freePort(), interface: "127.0.0.1")
        var unicast = UnicastOptions(peers: [])
        unicast.announceIntervalMilliseconds = 600_000
        options.unicast = unicast
        let inbox = Inbox()
        var hosts: [PeerHost] = []
        do {
            for id in ids {
                var config = PeerNetConfig(room: "\(room)-\(options.port)", peerID: id)
                config.incarnation = 1
                config.heartbeatIntervalNanoseconds = 2_000_000_000
                config.suspectTimeoutNanoseconds = 30_000_000_000
                hosts.append(try PeerHost(config: config, options: options) { event, _, _ in inbox.take(event) })
            }
        } catch {
            hosts.forEach { $0.close() }
            throw error
        }
        try waitUntil(seconds: 30) { inbox.views.withLock { $0.filter { $0.members.count == ids.count }.count >= ids.count } }
        usleep(100_000)
        return hosts
    }

    func waitUntil(seconds: Double, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { Issue.record("condition not met within \(seconds) s"); return }
            usleep(20_000)
        }
    }
}
