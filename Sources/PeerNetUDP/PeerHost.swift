import NIOCore
import NIOPosix
import PeerNet
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs one `ReliableMulticast` core on a real multicast socket.
///
/// The host is the thin adapter of the sans-I/O design: it passes received bytes and
/// the monotonic time to the core, multicasts what the core wants sent, arms one timer
/// at the core's next deadline, and hands the core's events to `onEvent`. The core and
/// whatever `onEvent` touches live under one lock, so the game loop on another thread
/// may call ``withCore(_:)`` to send.
public final class PeerHost: @unchecked Sendable {
    /// Called under the host's lock, in the core's event order.
    public typealias EventHandler = (PeerNetEvent, ReliableMulticast, NetTime) -> Void

    private let lock = Mutex<Void>(())
    private let core: ReliableMulticast
    private var socket: MulticastSocket?
    private let eventLoop: EventLoop
    /// The one NIO callback armed at `timerDeadline` (a callback, not a task: no promise to make or fail).
    private var timer: NIOScheduledCallback?
    /// This host, weakly: what the timer's callback calls.
    private let weakSelf: WeakHost
    private var timerDeadline: NetTime?
    private var onEvent: EventHandler
    private var closed = false
    /// Datagrams collected by one pump (used under the lock only).
    private var outgoing: [[UInt8]] = []
    /// The unicast peers' addresses (`--peer` and learned), used under the lock only.
    private var book: AddressBook
    private var announcer: RepeatedTask?
    /// Calls of ``withCore(_:)`` (used under the lock only): each takes the lock once and pumps once.
    private var coreCalls = 0
    /// A timer that runs this much after its deadline means the process was stopped (SIGSTOP,
    /// a suspended laptop) for longer than the others wait before suspecting it.
    private let pauseNanoseconds: UInt64

    /// Opens the socket and starts the core. `onEvent` receives every event.
    public init(
        config: PeerNetConfig,
        options: MulticastOptions,
        group: EventLoopGroup,
        onEvent: @escaping EventHandler
    ) throws {
        precondition(config.datagramBytesMax <= MulticastSocket.readSlotBytes,
                     "datagrams of \(config.datagramBytesMax) bytes would not fit a read slot of \(MulticastSocket.readSlotBytes)")
        let eventLoop = group.next()
        self.eventLoop = eventLoop
        self.core = ReliableMulticast(config: config, now: MonotonicClock.now())
        self.onEvent = onEvent
        self.pauseNanoseconds = config.suspectTimeoutNanoseconds
        let box = WeakHost()
        self.weakSelf = box
        // Every host keeps an address book, so a peer that was given no address still
        // answers (by unicast) the peers that announce themselves to it.
        var generator = SystemRandomNumberGenerator()
        let book = AddressBook(options: options.unicast ?? UnicastOptions(peers: []), room: config.room,
                               passphrase: config.passphrase, listeningPort: UInt16(clamping: options.port),
                               nonce: generator.next(), challengeSecret: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) },
                               now: MonotonicClock.now())
        self.book = book
        let onAnnouncement: @Sendable ([UInt8], PeerAddress) -> Void = { bytes, source in
            box.host?.receivedAnnouncement(bytes, source: source)
        }
        socket = try MulticastSocket.open(options: options, on: eventLoop, onDatagrams: { batch in
            box.host?.received(batch)
        }, onAnnouncement: onAnnouncement)
        box.host = self
        // Without the filter (a kernel that refuses it) the core drops its echoes itself, as before.
        // A receiver's filter drops every receiver's datagrams, its own among them.
        if config.receiveOnly {
            receiversDatagramsFiltered = (try? socket?.dropReceiversDatagrams()) != nil
            ownEchoesFiltered = receiversDatagramsFiltered
        } else if options.dropOwnEchoes {
            ownEchoesFiltered = (try? socket?.dropOwnEchoes(sender: config.peerID.raw, incarnation: config.incarnation)) != nil
        }
        announcer = eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: .milliseconds(Int64(book.options.announceIntervalMilliseconds))) { _ in
            box.host?.announce()
        }
        withCore { _ in }
    }

    /// Counters of the unicast address sharing.
    public var addressStats: AddressBookStats { lock.withLock { _ in book.stats } }

    /// The unicast addresses datagrams go to now.
    public var unicastDestinations: [PeerAddress] { lock.withLock { _ in book.destinations } }

    /// The addresses still to prove (they get probes, never game datagrams).
    public var unprovenAddresses: [PeerAddress] { lock.withLock { _ in book.unproven } }

    private func receivedAnnouncement(_ bytes: [UInt8], source: PeerAddress) {
        lock.withLock { _ in
            guard !closed else { return }
            for (address, reply) in book.handleAnnouncement(bytes, source: source, now: MonotonicClock.now()) {
                socket?.send([reply], to: [address])
            }
        }
    }

    /// Tells every proven address the proven addresses this peer knows, and probes the others.
    private func announce() {
        lock.withLock { _ in
            guard !closed else { return }
            for (address, announcement) in book.pollAnnouncements(now: MonotonicClock.now()) {
                socket?.send([announcement], to: [address])
            }
        }
    }

    /// Runs `body` with the core under the host's lock, then sends what it queued,
    /// delivers its events and re-arms the timer.
    @discardableResult
    public func withCore<T>(_ body: (ReliableMulticast) throws -> T) rethrows -> T {
        try lock.withLock { _ in
            coreCalls += 1
            noticePause(now: MonotonicClock.now())
            let result = try body(core)
            pump(now: MonotonicClock.now())
            return result
        }
    }

    /// How many times ``withCore(_:)`` has taken the lock (and pumped) so far: what a caller's
    /// command costs the host. Reading it takes the lock but is not counted.
    public var coreCallCount: Int { lock.withLock { _ in coreCalls } }

    /// Announces a graceful leave, sends it, and closes the socket.
    public func close() {
        let socket: MulticastSocket? = lock.withLock { _ in
            guard !closed else { return nil }
            core.leave(now: MonotonicClock.now())
            pump(now: MonotonicClock.now())
            closed = true
            timer?.cancel()
            timer = nil
            announcer?.cancel()
            announcer = nil
            return self.socket
        }
        socket?.close()
    }

    /// Whether the kernel drops this peer's own multicast before it wakes the peer
    /// (``MulticastOptions/dropOwnEchoes``; false if asked not to, or if the kernel refused the filter).
    public private(set) var ownEchoesFiltered = false

    /// Whether the kernel drops the other receivers' datagrams before they wake this receiver
    /// (``MulticastSocket/dropReceiversDatagrams()``; false for a member, or if the kernel refused
    /// the filter, when the core drops them unread instead).
    public private(set) var receiversDatagramsFiltered = false

    /// Datagrams the kernel refused to send.
    public var sendFailureCount: UInt64 { socket?.sendFailureCount ?? 0 }

    /// One read burst: every datagram under one lock acquisition, then one pump.
    private func received(_ batch: [[UInt8]]) {
        lock.withLock { _ in
            guard !closed else { return }
            var now = MonotonicClock.now()
            noticePause(now: now)
            for (index, bytes) in batch.enumerated() {
                if index > 0 { now = MonotonicClock.now() }
                core.handleDatagram(bytes, now: now)
            }
            pump(now: now)
        }
    }

    fileprivate func fired() {
        lock.withLock { _ in
            guard !closed else { return }
            let now = MonotonicClock.now()
            noticePause(now: now)
            timerDeadline = nil
            core.handleTimeout(now: now)
            pump(now: now)
        }
    }

    /// Must hold the lock. The core's timer was due long ago and has not run: the whole process
    /// was stopped. The core hears it first (it rejoins rather than wait to find itself blocked).
    private func noticePause(now: NetTime) {
        guard let due = timerDeadline, now > due.adding(nanoseconds: pauseNanoseconds) else { return }
        timerDeadline = nil
        timer?.cancel()
        core.resumeAfterPause(awayNanoseconds: now.nanoseconds(since: due), now: now)
    }

    /// Must hold the lock. Bounded: each pass drains queues the core bounds itself.
    /// Sends first: what the core queued leaves before its events are handled (a local move's
    /// datagram does not wait for this peer's own handling of it: the log, the match).
    private func pump(now: NetTime) {
        while true {
            var progressed = false
            while let datagram = core.pollTransmit() {
                outgoing.append(datagram)
                progressed = true
            }
            sendOutgoing()
            while let event = core.pollEvent() {
                onEvent(event, core, now)
                progressed = true
            }
            if !progressed { break }
        }
        armTimer(now: now)
    }

    /// One hand-over to the socket for every datagram collected.
    private func sendOutgoing() {
        guard !outgoing.isEmpty else { return }
        if !closed {
            socket?.send(outgoing)
            socket?.send(outgoing, to: book.destinations)
        }
        outgoing.removeAll(keepingCapacity: true)
    }

    private func armTimer(now: NetTime) {
        guard !closed, let deadline = core.pollTimeout() else { return }
        if let current = timerDeadline, current <= deadline { return }
        timer?.cancel()
        timerDeadline = deadline
        let delay = Int64(clamping: deadline.nanoseconds(since: now))
        // Throws only once the event loop is shutting down, when nothing is left to run.
        timer = try? eventLoop.scheduleCallback(in: .nanoseconds(delay), handler: TimerCallback(host: weakSelf))
    }
}

private final class WeakHost: @unchecked Sendable {
    weak var host: PeerHost?
}

/// What the core's timer runs on the event loop.
private struct TimerCallback: NIOScheduledCallbackHandler, Sendable {
    let host: WeakHost
    func handleScheduledCallback(eventLoop: some EventLoop) { host.host?.fired() }
}
