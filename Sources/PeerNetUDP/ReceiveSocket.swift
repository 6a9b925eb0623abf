import CEggsIO
import PeerNet
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A peer's receiving UDP socket, read by the peer's own thread (``PeerHost``): bound to the
/// group's port, joined to the group, non-blocking. One ``read(_:)`` takes every datagram waiting,
/// up to ``batchCount``, in one `recvmmsg` into buffers allocated once.
///
/// Why not NIO's datagram channel: on this design's traffic (a datagram every few milliseconds)
/// its event loop and read path cost more CPU per datagram than the protocol core does, and on a
/// machine with few cores every receiver's CPU is queueing delay for the next one
/// (docs/network.md, "Latency on one machine").
final class ReceiveSocket: @unchecked Sendable {  // read by one thread; `descriptor` guards closing
    /// Datagrams read by one `recvmmsg`.
    static let batchCount = 16
    /// The receive buffer per datagram (a longer datagram is cut, then dropped by the core as malformed).
    static let slotBytes = MulticastSocket.readSlotBytes

    private let descriptor: Mutex<Int32?>
    private let buffers: UnsafeMutablePointer<UInt8>
    private let lengths: UnsafeMutablePointer<UInt32>
    private let sources: UnsafeMutablePointer<sockaddr_in>

    /// Opens the socket on `options.port`, joined to `group` on `interface` when the options multicast.
    init(options: MulticastOptions, group: in_addr, interface: in_addr) throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw MulticastSocketError(description: "cannot open a UDP socket: \(String(cString: strerror(errno)))") }
        func fail(_ what: String) -> MulticastSocketError {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            return MulticastSocketError(description: "\(what): \(reason)")
        }
        func set<T: BitwiseCopyable>(_ level: Int32, _ name: Int32, _ value: T, _ what: String) throws {
            var value = value
            guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<T>.size)) == 0 else { throw fail(what) }
        }
        try set(SOL_SOCKET, SO_REUSEADDR, Int32(1), "cannot set up the receiving socket")
        // Bursts of repairs overflow the default receive buffer, and a kernel drop looks like
        // loss to the protocol: ask for more (the kernel caps it).
        try set(SOL_SOCKET, SO_RCVBUF, Int32(MulticastOptions.receiveBufferBytes), "cannot set up the receiving socket")
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(clamping: options.port).bigEndian
        address.sin_addr = in_addr(s_addr: INADDR_ANY)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw fail("cannot bind UDP port \(options.port)") }
        if options.multicast {
            // Membership by interface address: accepted on the loopback device too, which has no MULTICAST flag.
            try set(Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, ip_mreq(imr_multiaddr: group, imr_interface: interface),
                    "cannot join \(options.group) on \(options.interface ?? "the default interface")")
        }
        descriptor = Mutex(fd)
        buffers = .allocate(capacity: Self.batchCount * Self.slotBytes)
        lengths = .allocate(capacity: Self.batchCount)
        sources = .allocate(capacity: Self.batchCount)
    }

    deinit {
        close()
        buffers.deallocate()
        lengths.deallocate()
        sources.deallocate()
    }

    /// The open descriptor, or nil once closed.
    var fileDescriptor: Int32? { descriptor.withLock { $0 } }

    /// Closes the socket; safe to call twice. Call it once the reading thread has stopped.
    func close() {
        descriptor.withLock { fd in
            if let open = fd { Glibc.close(open) }
            fd = nil
        }
    }

    /// Attaches a classic BPF program (`SO_ATTACH_FILTER`).
    func attach(_ program: [SocketFilterInstruction]) throws {
        guard let fd = fileDescriptor else { throw MulticastSocketError(description: "the receiving socket is closed") }
        try program.withUnsafeBufferPointer { instructions in
            var fprog = SocketFilterProgram(count: UInt16(instructions.count), instructions: UnsafeRawPointer(instructions.baseAddress!))
            guard setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, socklen_t(MemoryLayout<SocketFilterProgram>.size)) == 0 else {
                throw MulticastSocketError(description: "cannot attach a socket filter: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Reads the datagrams waiting (at most ``batchCount``) without blocking and hands each to
    /// `body` with its source, in arrival order. One longer than a slot comes cut to the slot;
    /// the core drops it and counts it (its trailer does not check, and it is over
    /// `datagramBytesMax`), as it did when NIO read it. Returns how many were read (0: none
    /// waiting, or an error, which a UDP socket may report for an earlier send and which is not fatal).
    @discardableResult
    func read(_ body: (UnsafeRawBufferPointer, sockaddr_in) -> Void) -> Int {
        guard let fd = fileDescriptor else { return 0 }
        let got = eggs_io_read(fd, buffers, Self.slotBytes, UInt32(Self.batchCount), lengths, sources)
        guard got > 0 else { return 0 }
        for index in 0..<Int(got) {
            body(UnsafeRawBufferPointer(start: buffers + index * Self.slotBytes, count: Int(lengths[index])), sources[index])
        }
        return Int(got)
    }
}

/// The wake-up of a reading thread: a non-blocking pipe. Another thread writes a byte to cut the
/// reader's wait short (closing); the reader drains it when it wakes.
final class WakePipe: @unchecked Sendable {  // the descriptors never change once open
    let readEnd: Int32
    private let writeEnd: Int32

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard eggs_io_wake_pipe(&fds) == 0 else {
            throw MulticastSocketError(description: "cannot open a pipe: \(String(cString: strerror(errno)))")
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        Glibc.close(readEnd)
        Glibc.close(writeEnd)
    }

    /// Wakes the reader (a full pipe already will).
    func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }
}

/// The reading thread's deadline: a timer on the monotonic clock (timerfd) that the thread waits
/// on beside its socket. Any thread re-arms it, earlier or later, while the reader waits: a
/// deadline moved later by a send costs that thread one system call instead of waking the reader
/// for nothing at the old deadline, and one moved earlier needs no wake-up either.
final class DeadlineTimer: @unchecked Sendable {  // the descriptor never changes once open
    let descriptor: Int32

    init() throws {
        descriptor = eggs_io_timer()
        guard descriptor >= 0 else {
            throw MulticastSocketError(description: "cannot open a timer: \(String(cString: strerror(errno)))")
        }
    }

    deinit { Glibc.close(descriptor) }

    /// Expires once at `deadline` (at once if it is past), or never (nil).
    func arm(_ deadline: NetTime?) {
        _ = eggs_io_timer_set(descriptor, deadline.map { Int64(clamping: $0.nanoseconds) } ?? -1)
    }
}
