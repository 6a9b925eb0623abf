import CEggsIO
import PeerNet
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs one `ReliableMulticast` core on a real multicast socket.
///
/// The host is the thin adapter of the sans-I/O design: it passes received bytes and
/// the monotonic time to the core, multicasts what the core wants sent, wakes at the core's
/// next deadline, and hands the core's events to `onEvent`. The core and whatever `onEvent`
/// touches live under one lock, so the game loop on another thread may call ``withCore(_:)``
/// to send.
///
/// One thread of the host's own waits (`ppoll`) for a datagram, its timer (the core's next
/// deadline, which any thread re-arms), or a wake-up, and handles what it woke for: a datagram
/// is read and delivered by the thread the kernel woke for it, with no event loop between
/// (docs/network.md, "Latency on one machine").
/// `onEvent` runs on that thread, or on the thread that called ``withCore(_:)``.
public final class PeerHost: @unchecked Sendable {
    /// Called under the host's lock, in the core's event order.
    public typealias EventHandler = (PeerNetEvent, ReliableMulticast, NetTime) -> Void

    private let lock = Mutex<Void>(())
    private let core: ReliableMulticast
    private var socket: MulticastSocket?
    /// What cuts the reading thread's wait short (closing).
    private let wake: WakePipe
    /// What wakes the reading thread at the earlier of the core's deadline and the next announcement.
    private let timer: DeadlineTimer
    /// The deadline `timer` holds (used under the lock only; nil: unknown or disarmed).
    private var armedDeadline: NetTime?
    /// The reading thread, until ``close()`` has joined it.
    private var thread: pthread_t?
    /// The core's deadline (its `pollTimeout` after the last input): the reading thread wakes at
    /// it and runs the core's timeout.
    private var timerDeadline: NetTime?
    /// When the reading thread next announces this peer's addresses.
    private var announceDue: NetTime
    private var onEvent: EventHandler
    private var closed = false
    /// Datagrams collected by one pump (used under the lock only).
    private var outgoing: [[UInt8]] = []
    /// The unicast peers' addresses (`--peer` and learned), used under the lock only.
    private var book: AddressBook
    /// Calls of ``withCore(_:)`` (used under the lock only): each takes the lock once and pumps once.
    private var coreCalls = 0
    /// Times the reading thread woke (used under the lock only).
    private var readerWakes = 0
    private let announceIntervalNanoseconds: UInt64
    /// A timer that runs this much after its deadline means the process was stopped (SIGSTOP,
    /// a suspended laptop) for longer than the others wait before suspecting it.
    private let pauseNanoseconds: UInt64

    /// Opens the socket, starts the core and the reading thread. `onEvent` receives every event.
    public init(
        config: PeerNetConfig,
        options: MulticastOptions,
        onEvent: @escaping EventHandler
    ) throws {
        precondition(config.datagramBytesMax <= MulticastSocket.readSlotBytes,
                     "datagrams of \(config.datagramBytesMax) bytes would not fit a read slot of \(MulticastSocket.readSlotBytes)")
        let now = MonotonicClock.now()
        self.core = ReliableMulticast(config: config, now: now)
        self.onEvent = onEvent
        self.pauseNanoseconds = config.suspectTimeoutNanoseconds
        // Every host keeps an address book, so a peer that was given no address still
        // answers (by unicast) the peers that announce themselves to it.
        var generator = SystemRandomNumberGenerator()
        let book = AddressBook(options: options.unicast ?? UnicastOptions(peers: []), room: config.room,
                               passphrase: config.passphrase, listeningPort: UInt16(clamping: options.port),
                               nonce: generator.next(), challengeSecret: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) },
                               now: now)
        self.book = book
        self.announceIntervalNanoseconds = book.options.announceIntervalMilliseconds * 1_000_000
        self.announceDue = now
        self.wake = try WakePipe()
        self.timer = try DeadlineTimer()
        let socket = try MulticastSocket.openForOwnThread(options: options)
        self.socket = socket
        // Without the filter (a kernel that refuses it) the core drops its echoes itself, as before.
        // A receiver's filter drops every receiver's datagrams, its own among them.
        if config.receiveOnly {
            receiversDatagramsFiltered = (try? socket.dropReceiversDatagrams()) != nil
            ownEchoesFiltered = receiversDatagramsFiltered
        } else if options.dropOwnEchoes {
            ownEchoesFiltered = (try? socket.dropOwnEchoes(sender: config.peerID.raw, incarnation: config.incarnation)) != nil
        }
        withCore { _ in }
        do {
            thread = try Self.startReader(host: WeakHost(self), socket: socket, wake: wake, timer: timer, name: Self.threadName(config.peerID))
        } catch {
            socket.close()
            throw error
        }
    }

    /// Counters of the unicast address sharing.
    public var addressStats: AddressBookStats { lock.withLock { _ in book.stats } }

    /// The unicast addresses datagrams go to now.
    public var unicastDestinations: [PeerAddress] { lock.withLock { _ in book.destinations } }

    /// The addresses still to prove (they get probes, never game datagrams).
    public var unprovenAddresses: [PeerAddress] { lock.withLock { _ in book.unproven } }

    /// Must hold the lock.
    private func receivedAnnouncement(_ bytes: [UInt8], source: PeerAddress, now: NetTime) {
        for (address, reply) in book.handleAnnouncement(bytes, source: source, now: now) {
            socket?.send([reply], to: [address])
        }
    }

    /// Must hold the lock. Tells every proven address the proven addresses this peer knows, and probes the others.
    private func announce(now: NetTime) {
        for (address, announcement) in book.pollAnnouncements(now: now) {
            socket?.send([announcement], to: [address])
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

    /// How many times the reading thread has woken so far (for a datagram, its timer, or closing).
    public var readerWakeCount: Int { lock.withLock { _ in readerWakes } }

    /// Announces a graceful leave, sends it, stops the reading thread and closes the socket.
    /// Not from `onEvent` (it runs under the host's lock).
    public func close() {
        let stopping: (MulticastSocket?, pthread_t?)? = lock.withLock { _ in
            guard !closed else { return nil }
            core.leave(now: MonotonicClock.now())
            pump(now: MonotonicClock.now())
            closed = true
            defer { thread = nil }
            return (self.socket, thread)
        }
        guard let (socket, thread) = stopping else { return }
        wake.wake()
        if let thread {
            if pthread_equal(thread, pthread_self()) != 0 {
                pthread_detach(thread)
            } else {
                pthread_join(thread, nil)
            }
        }
        socket?.close()
    }

    deinit {
        // Dropped without close(): the reading thread finds no host when it wakes, and stops; the
        // sockets and the pipe it holds close as it lets them go.
        if !closed {
            wake.wake()
            if let thread { pthread_detach(thread) }
        }
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

    /// The reading thread's name: `eggs-` and the low 32 bits of the peer's ID in hex.
    public static func threadName(_ id: PeerID) -> String {
        let hex = String(id.raw & 0xFFFF_FFFF, radix: 16)
        return "eggs-" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    /// Starts the reading thread: wait, handle, again, until the host is closed or gone.
    private static func startReader(host: WeakHost, socket: MulticastSocket, wake: WakePipe, timer: DeadlineTimer, name: String) throws -> pthread_t {
        let body = ReaderBody {
            var batch: [[UInt8]] = []
            var announcements: [([UInt8], PeerAddress)] = []
            while true {
                // The host is held only between waits: dropped without close(), it is gone at the next wake.
                guard host.host?.readerWillWait() == true else { return }
                let readable = socket.waitForDatagrams(wake: wake, timer: timer)
                if readable {
                    socket.read { bytes, source in
                        // Unicast peers' address announcements go aside with their source address.
                        if AddressBook.isAnnouncement(bytes) {
                            announcements.append((Array(bytes), PeerAddress(ip: UInt32(bigEndian: source.sin_addr.s_addr),
                                                                           port: UInt16(bigEndian: source.sin_port))))
                        } else {
                            batch.append(Array(bytes))
                        }
                    }
                }
                guard let host = host.host else { return }
                host.readerWoke(batch: batch, announcements: announcements)
                batch.removeAll(keepingCapacity: true)
                announcements.removeAll(keepingCapacity: true)
            }
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(body).toOpaque()
        let created = pthread_create(&thread, nil, { raw in
            let body = Unmanaged<ReaderBody>.fromOpaque(raw!).takeRetainedValue()
            body.run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<ReaderBody>.fromOpaque(context).release()
            throw MulticastSocketError(description: "cannot start the reading thread: \(String(cString: strerror(created)))")
        }
        eggs_io_name_thread(UInt(thread), name)
        return thread
    }

    /// The reading thread, before it waits: false to stop. Its timer is armed by then (`armTimer`).
    private func readerWillWait() -> Bool {
        lock.withLock { _ in !closed }
    }

    /// The reading thread, woken: every datagram it read under one lock acquisition, the core's
    /// timeout and the announcements if due, then one pump.
    private func readerWoke(batch: [[UInt8]], announcements: [([UInt8], PeerAddress)]) {
        lock.withLock { _ in
            readerWakes += 1
            guard !closed else { return }
            var now = MonotonicClock.now()
            // A deadline reached has expired the timer (its expiry read by the wait): armed again below.
            if let armed = armedDeadline, armed <= now { armedDeadline = nil }
            noticePause(now: now)
            for (bytes, source) in announcements {
                receivedAnnouncement(bytes, source: source, now: now)
            }
            for (index, bytes) in batch.enumerated() {
                if index > 0 { now = MonotonicClock.now() }
                core.handleDatagram(bytes, now: now)
            }
            if let deadline = timerDeadline, deadline <= now {
                core.handleTimeout(now: now)
            }
            if announceDue <= now {
                announce(now: now)
                announceDue = now.adding(nanoseconds: announceIntervalNanoseconds)
            }
            pump(now: now)
        }
    }

    /// Must hold the lock. The core's timer was due long ago and has not run: the whole process
    /// was stopped. The core hears it first (it rejoins rather than wait to find itself blocked),
    /// then its timers run: every one that came due while stopped fires now, so the next deadline
    /// is ahead (one left behind would read as another pause, and the core would rejoin again and
    /// again).
    private func noticePause(now: NetTime) {
        guard let due = timerDeadline, now > due.adding(nanoseconds: pauseNanoseconds) else { return }
        timerDeadline = nil
        core.resumeAfterPause(awayNanoseconds: now.nanoseconds(since: due), now: now)
        core.handleTimeout(now: now)
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
        armTimer()
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

    /// Must hold the lock. Takes the core's deadline as it is now, earlier or later, and re-arms
    /// the reading thread's timer when the earlier of it and the next announcement moved: the
    /// thread that moved it pays one system call, and the reader never wakes for a deadline that
    /// is gone (a send moves the tail-loss report 20 ms later each time).
    private func armTimer() {
        guard !closed else { return }
        timerDeadline = core.pollTimeout()
        var wanted = announceDue
        if let deadline = timerDeadline, deadline < wanted { wanted = deadline }
        guard wanted != armedDeadline else { return }
        armedDeadline = wanted
        timer.arm(wanted)
    }
}

private final class WeakHost: @unchecked Sendable {
    weak var host: PeerHost?
    init(_ host: PeerHost) { self.host = host }
}

/// The reading thread's loop, handed to `pthread_create`.
private final class ReaderBody {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}
