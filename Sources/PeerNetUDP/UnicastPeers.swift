import Crypto
import PeerNet
#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 address and UDP port of a unicast peer.
public struct PeerAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The IPv4 address in host byte order.
    public var ip: UInt32
    public var port: UInt16

    public init(ip: UInt32, port: UInt16) {
        self.ip = ip
        self.port = port
    }

    /// Parses `A.B.C.D` or `A.B.C.D:PORT` (an IPv4 literal; names are resolved by ``resolve(_:defaultPort:)``).
    public init?(_ text: String, defaultPort: UInt16) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return nil }
        var addr = in_addr()
        guard inet_pton(AF_INET, String(parts[0]), &addr) == 1 else { return nil }
        var port = defaultPort
        if parts.count == 2 {
            guard let value = UInt16(parts[1]), value > 0 else { return nil }
            port = value
        }
        self.init(ip: UInt32(bigEndian: addr.s_addr), port: port)
    }

    /// `HOST[:PORT]` with HOST an IPv4 literal or a name resolved to its first IPv4 address.
    public static func resolve(_ text: String, defaultPort: UInt16) throws(MulticastSocketError) -> PeerAddress {
        if let literal = PeerAddress(text, defaultPort: defaultPort) { return literal }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].utf8.count <= 253 else {
            throw MulticastSocketError(description: "invalid peer '\(text)' (want HOST or HOST:PORT)")
        }
        var port = defaultPort
        if parts.count == 2 {
            guard let value = UInt16(parts[1]), value > 0 else {
                throw MulticastSocketError(description: "invalid port in peer '\(text)' (want 1 to 65535)")
            }
            port = value
        }
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(String(parts[0]), nil, &hints, &result)
        defer { if let result { freeaddrinfo(result) } }
        guard status == 0, let info = result, let sockaddr = info.pointee.ai_addr else {
            throw MulticastSocketError(description: "cannot resolve peer '\(parts[0])': \(String(cString: gai_strerror(status)))")
        }
        let ip = sockaddr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }
        return PeerAddress(ip: ip, port: port)
    }

    public var description: String {
        "\(ip >> 24).\((ip >> 16) & 0xFF).\((ip >> 8) & 0xFF).\(ip & 0xFF):\(port)"
    }

    public static func < (lhs: PeerAddress, rhs: PeerAddress) -> Bool {
        (lhs.ip, lhs.port) < (rhs.ip, rhs.port)
    }

    /// The socket address to send to.
    var sockaddr: sockaddr_in {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr = in_addr(s_addr: ip.bigEndian)
        return addr
    }
}

/// Settings of the unicast peers (`--peer`, `--no-multicast`).
public struct UnicastOptions: Sendable, Hashable {
    /// Addresses given on the command line: kept for the whole run.
    public var peers: [PeerAddress]
    /// How often the known addresses are announced to every known address.
    public var announceIntervalMilliseconds: UInt64 = 1_000
    /// An address learned from others and not heard from for this long is forgotten.
    public var expiryMilliseconds: UInt64 = 30_000
    /// Known addresses at most (command line and learned).
    public static let addressesMax = 64

    public init(peers: [PeerAddress]) {
        self.peers = peers
    }
}

/// Counters of the address sharing.
public struct AddressBookStats: Hashable, Sendable {
    public var announcementsSent: UInt64 = 0
    public var announcementsReceived: UInt64 = 0
    /// Announcements dropped as malformed, forged (wrong room or passphrase) or over a limit.
    public var announcementsDropped: UInt64 = 0
    /// Learned addresses refused because the book was full.
    public var addressesRefused: UInt64 = 0
    public var addressesExpired: UInt64 = 0
}

/// Which addresses the unicast peers have, and what they tell each other: a sans-I/O state
/// machine (no sockets, no clock). Every peer announces the addresses it knows to every
/// address it knows, once a second, so that each player needs only one other's address.
///
/// An announcement is `"EGPA" | version u8 | listening port u16 | sender nonce u64 |
/// count u8 | count × (IPv4 u32, port u16) | HMAC-SHA256 truncated to 16 bytes` over
/// everything before it, keyed by SHA-256("eggs-peers-v1", room, passphrase): peers of
/// another room or passphrase drop it (counted). The sender's own address is taken from the
/// datagram's source and the listening port it states. An announcement carrying this peer's
/// own nonce marks the address it came from as this peer's own, never sent to.
public struct AddressBook: Sendable {
    static let magic: [UInt8] = Array("EGPA".utf8)
    static let version: UInt8 = 1
    static let tagBytes = 16
    static let headerBytes = 4 + 1 + 2 + 8 + 1
    /// The largest announcement (every address of a full book).
    public static let announcementBytesMax = headerBytes + UnicastOptions.addressesMax * 6 + tagBytes

    private struct Entry {
        var fromCommandLine: Bool
        var lastHeard: NetTime
    }

    public let options: UnicastOptions
    private let listeningPort: UInt16
    private let nonce: UInt64
    private let keyBytes: [UInt8]
    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }
    private var entries: [PeerAddress: Entry] = [:]
    private var own: Set<PeerAddress> = []
    private var nextAnnounce: NetTime
    public private(set) var stats = AddressBookStats()

    /// - Parameters:
    ///   - listeningPort: the port this peer receives on (stated in its announcements).
    ///   - nonce: a random number that tells this peer's announcements from others'.
    public init(options: UnicastOptions, room: String, passphrase: String?, listeningPort: UInt16, nonce: UInt64, now: NetTime) {
        precondition(options.peers.count <= UnicastOptions.addressesMax, "more --peer addresses than the book holds")
        self.options = options
        self.listeningPort = listeningPort
        self.nonce = nonce
        let material = Array("eggs-peers-v1".utf8) + [0] + Array(room.utf8) + [0] + Array((passphrase ?? "").utf8)
        keyBytes = Array(SHA256.hash(data: material))
        nextAnnounce = now
        for peer in options.peers { entries[peer] = Entry(fromCommandLine: true, lastHeard: now) }
    }

    /// Where datagrams go: every known address but this peer's own, in a stable order.
    public var destinations: [PeerAddress] {
        entries.keys.filter { !own.contains($0) }.sorted()
    }

    /// Whether `bytes` is an announcement (and not a PeerNet datagram).
    public static func isAnnouncement(_ bytes: [UInt8]) -> Bool {
        bytes.count >= magic.count && bytes[0] == magic[0] && bytes[1] == magic[1] && bytes[2] == magic[2] && bytes[3] == magic[3]
    }

    /// Takes an announcement that came from `sourceIP` (host byte order).
    public mutating func handleAnnouncement(_ bytes: [UInt8], sourceIP: UInt32, now: NetTime) {
        guard let (port, senderNonce, listed) = decode(bytes) else {
            stats.announcementsDropped += 1
            return
        }
        stats.announcementsReceived += 1
        let sender = PeerAddress(ip: sourceIP, port: port)
        if senderNonce == nonce {
            own.insert(sender)
            return
        }
        learn(sender, now: now, heard: true)
        for address in listed where address != sender { learn(address, now: now, heard: false) }
    }

    private mutating func learn(_ address: PeerAddress, now: NetTime, heard: Bool) {
        if var entry = entries[address] {
            if heard { entry.lastHeard = now }
            entries[address] = entry
            return
        }
        guard !own.contains(address) else { return }
        guard entries.count < UnicastOptions.addressesMax else {
            stats.addressesRefused += 1
            return
        }
        // A new address has the expiry time to answer before it is forgotten again.
        entries[address] = Entry(fromCommandLine: false, lastHeard: now)
    }

    /// The next time ``pollAnnouncement(now:)`` has something to send.
    public var nextTimeout: NetTime { nextAnnounce }

    /// When due: forgets silent learned addresses, then returns the announcement to send to
    /// every address of ``destinations`` (nil when not due or when there is none).
    public mutating func pollAnnouncement(now: NetTime) -> [UInt8]? {
        guard now >= nextAnnounce else { return nil }
        nextAnnounce = now.adding(nanoseconds: options.announceIntervalMilliseconds * 1_000_000)
        let expiry = options.expiryMilliseconds * 1_000_000
        for (address, entry) in entries where !entry.fromCommandLine && now.nanoseconds > entry.lastHeard.nanoseconds &+ expiry {
            entries[address] = nil
            stats.addressesExpired += 1
        }
        let targets = destinations
        guard !targets.isEmpty else { return nil }
        stats.announcementsSent += UInt64(targets.count)
        return encode(targets)
    }

    func encode(_ addresses: [PeerAddress]) -> [UInt8] {
        var bytes = Self.magic
        bytes.append(Self.version)
        bytes += [UInt8(listeningPort >> 8), UInt8(truncatingIfNeeded: listeningPort)]
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: nonce >> UInt64(shift))) }
        let listed = addresses.prefix(UnicastOptions.addressesMax)
        bytes.append(UInt8(listed.count))
        for address in listed {
            for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: address.ip >> UInt32(shift))) }
            bytes += [UInt8(address.port >> 8), UInt8(truncatingIfNeeded: address.port)]
        }
        bytes += HMAC<SHA256>.authenticationCode(for: bytes, using: key).prefix(Self.tagBytes)
        return bytes
    }

    func decode(_ bytes: [UInt8]) -> (port: UInt16, nonce: UInt64, addresses: [PeerAddress])? {
        guard bytes.count >= Self.headerBytes + Self.tagBytes, bytes.count <= Self.announcementBytesMax,
              Self.isAnnouncement(bytes), bytes[4] == Self.version else { return nil }
        let count = Int(bytes[15])
        guard count <= UnicastOptions.addressesMax, bytes.count == Self.headerBytes + count * 6 + Self.tagBytes else { return nil }
        let body = bytes[..<(bytes.count - Self.tagBytes)]
        let tag = bytes[(bytes.count - Self.tagBytes)...]
        let expected = HMAC<SHA256>.authenticationCode(for: Array(body), using: key).prefix(Self.tagBytes)
        guard Self.constantTimeEqual(Array(expected), Array(tag)) else { return nil }
        let port = UInt16(bytes[5]) << 8 | UInt16(bytes[6])
        guard port > 0 else { return nil }
        var nonce: UInt64 = 0
        for index in 7..<15 { nonce = nonce << 8 | UInt64(bytes[index]) }
        var addresses: [PeerAddress] = []
        for item in 0..<count {
            let at = Self.headerBytes + item * 6
            let ip = bytes[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let peerPort = UInt16(bytes[at + 4]) << 8 | UInt16(bytes[at + 5])
            // Unusable addresses (any, broadcast, multicast, port 0) are skipped, not trusted.
            guard peerPort > 0, ip != 0, ip != .max, !(0xE000_0000...0xEFFF_FFFF).contains(ip) else { continue }
            addresses.append(PeerAddress(ip: ip, port: peerPort))
        }
        return (port, nonce, addresses)
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
