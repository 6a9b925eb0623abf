import CEggsIO
import NIOCore
import PeerNet
import NIOPosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where a peer's datagrams go: the multicast group, port, interface and TTL (docs/playing.md and docs/network.md).
public struct MulticastOptions: Sendable, Hashable {
    /// The IPv4 multicast group, `239.255.77.77` by default.
    public var group: String
    /// The UDP port every peer of the group binds, `47777` by default.
    public var port: Int
    /// The IPv4 address whose interface carries the multicast. `127.0.0.1` keeps the
    /// traffic on this machine (TTL 0). `nil` lets the kernel choose.
    public var interface: String?
    /// Hops a datagram may take; forced to 0 on the loopback interface.
    public var ttl: UInt8
    /// Whether to join and send to the group (`--no-multicast`: unicast peers only).
    public var multicast: Bool
    /// Unicast peers (`--peer`), who get every datagram too; nil: none.
    public var unicast: UnicastOptions?
    /// Whether the kernel drops this peer's own multicast before it wakes the peer
    /// (``MulticastSocket/dropOwnEchoes(sender:incarnation:)``); off only to measure what it saves.
    public var dropOwnEchoes = true

    public init(group: String = "239.255.77.77", port: Int = 47777, interface: String? = nil, ttl: UInt8 = 1,
                multicast: Bool = true, unicast: UnicastOptions? = nil) {
        self.group = group
        self.port = port
        self.interface = interface
        self.ttl = ttl
        self.multicast = multicast
        self.unicast = unicast
    }

    /// The socket buffer size asked of the kernel.
    public static let receiveBufferBytes = 4 << 20

    /// Whether the traffic stays on this machine's loopback interface.
    public var isLoopback: Bool { interface?.hasPrefix("127.") ?? false }
}

/// A failure to open the multicast socket, with a message for the operator.
public struct MulticastSocketError: Error, CustomStringConvertible {
    public let description: String
}

/// One UDP socket bound to the group's port and joined to the group, for receiving, and one
/// unbound UDP socket for sending (plain `sendto`). The receiving socket is read either by the
/// caller's own thread (``openForOwnThread(options:)``, what ``PeerHost`` does) or by a NIO event
/// loop (``open(options:on:onDatagrams:onAnnouncement:)``, many datagrams per read).
///
/// Every socket on the shared port receives every datagram of the group, its own
/// included (SO_REUSEADDR lets several peers share the port on one host). Sends go to
/// the group; a send the kernel refuses (EPERM from a firewall, ENOBUFS) counts as a
/// lost packet, never as an error: the reliable layer above repairs it.
public final class MulticastSocket: @unchecked Sendable {
    public let options: MulticastOptions
    /// Who reads the receiving socket.
    private enum Receiving {
        /// A NIO datagram channel on an event loop.
        case channel(Channel)
        /// The owner's thread (``read(_:)``).
        case ownThread(ReceiveSocket)
    }
    private let receiving: Receiving
    private let sendFailures = Atomic<UInt64>(0)
    /// The sending socket, `nil` once closed; its lock also orders concurrent callers.
    private let sender: Mutex<Int32?>
    private let destination: sockaddr_in

    /// Datagrams the kernel refused to send (counted as lost).
    public var sendFailureCount: UInt64 { sendFailures.load(ordering: .relaxed) }

    private init(options: MulticastOptions, receiving: Receiving, sendFD: Int32, destination: sockaddr_in) {
        self.options = options
        self.receiving = receiving
        self.sender = Mutex(sendFD)
        self.destination = destination
    }

    deinit { closeSender() }

    private func closeSender() {
        sender.withLock { fd in
            if let open = fd { Glibc.close(open) }
            fd = nil
        }
    }

    /// The sending socket: multicast out of `interface` with the options' TTL, looped back to
    /// this host's members, never blocking.
    private static func openSender(interface: in_addr, options: MulticastOptions) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw MulticastSocketError(description: "cannot open a UDP socket: \(String(cString: strerror(errno)))") }
        func set<T: BitwiseCopyable>(_ level: Int32, _ name: Int32, _ value: T) throws {
            var value = value
            guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<T>.size)) == 0 else {
                let reason = String(cString: strerror(errno))
                Glibc.close(fd)
                throw MulticastSocketError(description: "cannot set up the sending socket: \(reason)")
            }
        }
        if interface.s_addr != INADDR_ANY { try set(Int32(IPPROTO_IP), IP_MULTICAST_IF, interface) }
        try set(Int32(IPPROTO_IP), IP_MULTICAST_TTL, Int32(options.isLoopback ? 0 : options.ttl))
        try set(Int32(IPPROTO_IP), IP_MULTICAST_LOOP, Int32(1))
        try set(SOL_SOCKET, SO_SNDBUF, Int32(MulticastOptions.receiveBufferBytes))
        return fd
    }

    /// Datagrams read per socket read (recvmmsg) and reads per readiness event.
    public static let vectorReadCount = 32
    public static let readsPerWakeup: UInt = 4
    /// Bytes of receive buffer per datagram of a vector read (a larger datagram is truncated,
    /// then dropped by the core as malformed: no PeerNet datagram comes near it).
    static let readSlotBytes = 2048

    /// Opens the socket on `group` and calls `onDatagram` on the event loop for every datagram.
    public static func open(
        options: MulticastOptions,
        on group: EventLoopGroup,
        onDatagram: @escaping @Sendable ([UInt8]) -> Void
    ) throws -> MulticastSocket {
        try open(options: options, on: group, onDatagrams: { batch in for bytes in batch { onDatagram(bytes) } })
    }

    /// Opens the socket on `group` and calls `onDatagrams` on the event loop with the datagrams
    /// of each read burst, in arrival order (one call per burst, so a receiver can take its lock once).
    public static func open(
        options: MulticastOptions,
        on group: EventLoopGroup,
        onDatagrams: @escaping @Sendable ([[UInt8]]) -> Void,
        onAnnouncement: (@Sendable ([UInt8], PeerAddress) -> Void)? = nil
    ) throws -> MulticastSocket {
        let group4 = try groupAddress(options.group, port: options.port)
        let interfaceAddr = try interfaceAddress(options.interface)
        let bootstrap = DatagramBootstrap(group: group)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            // Bursts of repairs and batches overflow the default 208 KiB receive buffer, and a
            // kernel drop looks like loss to the protocol: ask for more (the kernel caps it).
            .channelOption(.socketOption(.so_rcvbuf), value: MulticastOptions.receiveBufferBytes)
            // recvmmsg: many datagrams per system call under load.
            // One receive buffer is split evenly among the datagrams of a vector read: size it so
            // that each slot holds the largest UDP payload the protocol or a stranger may send.
            .channelOption(.datagramVectorReadMessageCount, value: vectorReadCount)
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: vectorReadCount * readSlotBytes))
            .channelOption(.maxMessagesPerRead, value: readsPerWakeup)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DatagramReader(onDatagrams: onDatagrams, onAnnouncement: onAnnouncement))
                }
            }
        let channel: Channel
        do {
            channel = try bootstrap.bind(host: "0.0.0.0", port: options.port).wait()
        } catch {
            throw MulticastSocketError(description: "cannot bind UDP port \(options.port): \(error)")
        }
        do {
            if options.multicast {
                try configure(channel: channel, group: group4.sin_addr, interface: interfaceAddr, options: options)
            }
        } catch {
            _ = channel.close()
            throw MulticastSocketError(description: "cannot join \(options.group) on \(options.interface ?? "the default interface"): \(error)")
        }
        let sendFD: Int32
        do {
            sendFD = try openSender(interface: interfaceAddr, options: options)
        } catch {
            _ = channel.close()
            throw error
        }
        return MulticastSocket(options: options, receiving: .channel(channel), sendFD: sendFD, destination: group4)
    }

    /// Opens the sockets for a caller that reads the receiving one on its own thread: it waits with
    /// ``waitForDatagrams(wake:timer:)`` and reads with ``read(_:)``.
    static func openForOwnThread(options: MulticastOptions) throws -> MulticastSocket {
        let group = try groupAddress(options.group, port: options.port)
        let interface = try interfaceAddress(options.interface)
        let receiver = try ReceiveSocket(options: options, group: group.sin_addr, interface: interface)
        let sendFD: Int32
        do {
            sendFD = try openSender(interface: interface, options: options)
        } catch {
            receiver.close()
            throw error
        }
        return MulticastSocket(options: options, receiving: .ownThread(receiver), sendFD: sendFD, destination: group)
    }

    /// The group's address and port, or a clear error.
    private static func groupAddress(_ text: String, port: Int) throws -> sockaddr_in {
        let address: SocketAddress
        do {
            address = try SocketAddress(ipAddress: text, port: port)
        } catch {
            throw MulticastSocketError(description: "invalid multicast group '\(text)'")
        }
        guard case .v4(let group4) = address, isMulticast(group4.address.sin_addr) else {
            throw MulticastSocketError(description: "'\(text)' is not an IPv4 multicast group")
        }
        return group4.address
    }

    /// Own-thread sockets only: waits until a datagram is waiting (true), `wake` is written to,
    /// or `timer` expires.
    func waitForDatagrams(wake: WakePipe, timer: DeadlineTimer) -> Bool {
        guard case .ownThread(let receiver) = receiving, let fd = receiver.fileDescriptor else { return false }
        return eggs_io_wait(fd, wake.readEnd, timer.descriptor) == 1
    }

    /// Own-thread sockets only: reads the datagrams waiting, without blocking (``ReceiveSocket/read(_:)``).
    @discardableResult
    func read(_ body: (UnsafeRawBufferPointer, sockaddr_in) -> Void) -> Int {
        guard case .ownThread(let receiver) = receiving else { return 0 }
        return receiver.read(body)
    }

    /// Multicasts one datagram to the group. Failures are counted as lost packets.
    public func send(_ bytes: [UInt8]) {
        send([bytes])
    }

    /// Multicasts datagrams to the group, in order, on the calling thread: a non-blocking
    /// `sendto` each, on the one sending socket (one flow, so the network keeps their order too).
    /// Concurrent callers are ordered by the socket's lock; a caller that orders its own sends
    /// (the host, under its lock) gets exactly that order on the wire. Not going through the
    /// event loop also means a player's move never waits for the loop to wake. A datagram the
    /// kernel refuses (EPERM, ENOBUFS, a full buffer) or a send after `close` counts as lost.
    public func send(_ batch: [[UInt8]]) {
        send(batch, to: options.multicast ? [destination] : [], lostIfClosed: batch.count)
    }

    /// Closes both sockets; waits until the receiving one is closed. Safe to call twice. An
    /// own-thread socket's reader must have stopped first.
    public func close() {
        switch receiving {
        case .channel(let channel): try? channel.close().wait()
        case .ownThread(let receiver): receiver.close()
        }
        closeSender()
    }

    /// Sends every datagram of `batch` to each of `peers` (unicast), like ``send(_:)``: in
    /// order, non-blocking, a refused datagram counted as lost.
    public func send(_ batch: [[UInt8]], to peers: [PeerAddress]) {
        guard !peers.isEmpty else { return }
        send(batch, to: peers.map(\.sockaddr), lostIfClosed: batch.count * peers.count)
    }

    /// The one `sendto` loop: every datagram of `batch` to the first address, then to the next,
    /// under the sending socket's lock. A datagram the kernel refuses counts as lost; after
    /// `close`, `lostIfClosed` datagrams do.
    private func send(_ batch: [[UInt8]], to addresses: [sockaddr_in], lostIfClosed: Int) {
        sender.withLock { fd in
            guard let fd else {
                sendFailures.add(UInt64(lostIfClosed), ordering: .relaxed)
                return
            }
            for var address in addresses {
                for bytes in batch {
                    let sent = bytes.withUnsafeBytes { raw in
                        withUnsafePointer(to: &address) { pointer in
                            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                                sendto(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL), $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                            }
                        }
                    }
                    if sent != bytes.count { sendFailures.add(1, ordering: .relaxed) }
                }
            }
        }
    }

    /// Asks the kernel to drop, before they wake this process, the datagrams of receivers
    /// (spectators): those whose envelope has the receiver flag (`ReliableMulticast.isFromReceiver`),
    /// its own included. For a receiver only: they are no use to it (members read them), and
    /// without the filter each receiver would wake for every other receiver's NACKs and presence,
    /// a cost that grows with the square of their number. A datagram too short to hold an
    /// envelope still reaches the core. Blocks until the filter is attached.
    public func dropReceiversDatagrams() throws {
        try attach(Self.receiverFilter())
    }

    /// The classic BPF program of ``dropReceiversDatagrams()``: drop when the flags byte (after
    /// the 8-byte UDP header) has the receiver bit.
    static func receiverFilter() -> [SocketFilterInstruction] {
        let ldLen: UInt16 = 0x80, ldByte: UInt16 = 0x30, jge: UInt16 = 0x35, jset: UInt16 = 0x45, ret: UInt16 = 0x06
        let udpHeader: UInt32 = 8
        let flag = ReliableMulticast.receiverFlag
        return [
            .init(code: ldLen, k: 0),
            .init(code: jge, jt: 0, jf: 2, k: udpHeader + UInt32(flag.minimumBytes)),
            .init(code: ldByte, k: udpHeader + UInt32(flag.offset)),
            .init(code: jset, jt: 0, jf: 1, k: UInt32(flag.mask)),
            .init(code: ret, k: 0),
            .init(code: ret, k: UInt32.max),
        ]
    }

    private func attach(_ program: [SocketFilterInstruction]) throws {
        guard case .channel(let channel) = receiving else {
            guard case .ownThread(let receiver) = receiving else { return }
            return try receiver.attach(program)
        }
        guard let provider = channel as? SocketOptionProvider else {
            throw MulticastSocketError(description: "the channel has no socket options")
        }
        try program.withUnsafeBufferPointer { instructions in
            let fprog = SocketFilterProgram(count: UInt16(instructions.count), instructions: UnsafeRawPointer(instructions.baseAddress!))
            try provider.unsafeSetSocketOption(level: .socket, name: .init(rawValue: SO_ATTACH_FILTER), value: fprog).wait()
        }
    }

    /// Asks the kernel to drop, before they wake this process, the datagrams whose envelope names
    /// `sender` and `incarnation`: this peer's own multicast coming back to it (the loop must stay on
    /// for the other peers of this host). The core would only count them, and on a busy machine each
    /// one is a wake-up and a read taken from the peers' messages (docs/network.md, "Latency").
    /// A datagram too short to hold an envelope, or naming another incarnation of this ID (an ID
    /// collision), still reaches the core. Blocks until the filter is attached.
    public func dropOwnEchoes(sender: UInt64, incarnation: UInt64) throws {
        try attach(Self.ownEchoFilter(sender: sender, incarnation: incarnation))
    }

    /// The classic BPF program of ``dropOwnEchoes(sender:incarnation:)``. A UDP socket's filter
    /// sees the UDP header (8 bytes) before the payload, so the envelope's sender (payload bytes
    /// 14–21) and incarnation (22–29) are at 22 and 30; loads are big-endian, as the wire is.
    static func ownEchoFilter(sender: UInt64, incarnation: UInt64) -> [SocketFilterInstruction] {
        let ldLen: UInt16 = 0x80, ldWord: UInt16 = 0x20, jge: UInt16 = 0x35, jeq: UInt16 = 0x15, ret: UInt16 = 0x06
        let udpHeader: UInt32 = 8, envelope: UInt32 = 38
        func word(_ value: UInt64, high: Bool) -> UInt32 { UInt32(truncatingIfNeeded: high ? value >> 32 : value) }
        // Each test jumps to `accept` (index 11) when it fails.
        return [
            .init(code: ldLen, k: 0),
            .init(code: jge, jt: 0, jf: 9, k: udpHeader + envelope),
            .init(code: ldWord, k: udpHeader + 14),
            .init(code: jeq, jt: 0, jf: 7, k: word(sender, high: true)),
            .init(code: ldWord, k: udpHeader + 18),
            .init(code: jeq, jt: 0, jf: 5, k: word(sender, high: false)),
            .init(code: ldWord, k: udpHeader + 22),
            .init(code: jeq, jt: 0, jf: 3, k: word(incarnation, high: true)),
            .init(code: ldWord, k: udpHeader + 26),
            .init(code: jeq, jt: 0, jf: 1, k: word(incarnation, high: false)),
            .init(code: ret, k: 0),
            .init(code: ret, k: UInt32.max),
        ]
    }

    private static func isMulticast(_ addr: in_addr) -> Bool {
        let first = UInt32(bigEndian: addr.s_addr) >> 24
        return (224...239).contains(first)
    }

    private static func interfaceAddress(_ text: String?) throws -> in_addr {
        var addr = in_addr(s_addr: INADDR_ANY)
        guard let text else { return addr }
        guard inet_pton(AF_INET, text, &addr) == 1 else {
            throw MulticastSocketError(description: "invalid interface address '\(text)' (want an IPv4 address such as 127.0.0.1)")
        }
        return addr
    }

    private static func configure(channel: Channel, group: in_addr, interface: in_addr, options: MulticastOptions) throws {
        guard let provider = channel as? SocketOptionProvider else {
            throw MulticastSocketError(description: "the channel has no socket options")
        }
        // NIO's joinGroup refuses the loopback device (no MULTICAST flag on lo); the
        // kernel accepts the membership by interface address, which works everywhere.
        let request = ip_mreq(imr_multiaddr: group, imr_interface: interface)
        try provider.unsafeSetSocketOption(level: .ip, name: .ip_add_membership, value: request).wait()
        if interface.s_addr != INADDR_ANY {
            try provider.setIPMulticastIF(interface).wait()
        }
        try provider.setIPMulticastTTL(options.isLoopback ? 0 : options.ttl).wait()
        try provider.setIPMulticastLoop(1).wait()
    }
}

/// One instruction of a classic BPF program (`struct sock_filter`).
struct SocketFilterInstruction {
    var code: UInt16
    var jt: UInt8 = 0
    var jf: UInt8 = 0
    var k: UInt32
}

/// `struct sock_fprog`: the program's length and where it is (the kernel copies it).
struct SocketFilterProgram: @unchecked Sendable {
    var count: UInt16
    var instructions: UnsafeRawPointer
}

/// Hands the received datagrams' bytes to a closure, one call per read burst.
private final class DatagramReader: ChannelInboundHandler, @unchecked Sendable {  // used on its event loop only
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let onDatagrams: @Sendable ([[UInt8]]) -> Void
    private let onAnnouncement: (@Sendable ([UInt8], PeerAddress) -> Void)?
    private var pending: [[UInt8]] = []

    init(onDatagrams: @escaping @Sendable ([[UInt8]]) -> Void, onAnnouncement: (@Sendable ([UInt8], PeerAddress) -> Void)?) {
        self.onDatagrams = onDatagrams
        self.onAnnouncement = onAnnouncement
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = Self.unwrapInboundIn(data)
        let bytes = Array(envelope.data.readableBytesView)
        // Unicast peers' address announcements go aside with their source address.
        if let onAnnouncement, AddressBook.isAnnouncement(bytes), case .v4(let source) = envelope.remoteAddress {
            onAnnouncement(bytes, PeerAddress(ip: UInt32(bigEndian: source.address.sin_addr.s_addr),
                                              port: UInt16(bigEndian: source.address.sin_port)))
            return
        }
        pending.append(bytes)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard !pending.isEmpty else { return }
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        onDatagrams(batch)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // A UDP read error (e.g. ICMP feedback) is not fatal for a multicast peer.
    }
}
