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
    /// Learned addresses refused because the book, its unproven part or the naming source's
    /// share of it was full.
    public var addressesRefused: UInt64 = 0
    public var addressesExpired: UInt64 = 0
    /// Addresses that answered the challenge sent to them (then they get the game's datagrams).
    public var addressesValidated: UInt64 = 0
    /// Announcements sent to addresses that have not answered yet, and their bytes.
    public var probesSent: UInt64 = 0
    public var probeBytesSent: UInt64 = 0
    /// Probes not sent: the source whose datagrams called for them had no budget left.
    public var probesWithheld: UInt64 = 0
    /// Bytes of valid announcements received (the budget for unproven addresses is 3× these).
    public var announcementBytesReceived: UInt64 = 0
}

/// Which addresses the unicast peers have, and what they tell each other: a sans-I/O state
/// machine (no sockets, no clock). Every peer announces the addresses it has proven to every
/// address it has proven, once a second, so that each player needs only one other's address.
///
/// An announcement is `"EGPA" | version u8 (2) | listening port u16 | sender nonce u64 |
/// challenge u64 | echo u64 | count u8 | count × (IPv4 u32, port u16) | HMAC-SHA256 truncated to
/// 16 bytes` over everything before it, keyed by SHA-256("eggs-peers-v1", room, passphrase):
/// peers of another room or passphrase drop it (counted). The sender's address is the datagram's
/// source IP with the listening port it states. An announcement carrying this peer's own nonce
/// marks the address it came from as this peer's own, never sent to.
///
/// **Addresses are proven before use** (as QUIC validates a path). Each address gets its own
/// random challenge; an address is proven when an announcement from it echoes that challenge,
/// which only a peer listening there can read. Until then:
/// - it receives no game datagram (``destinations`` holds command-line and proven addresses),
///   only announcements without addresses (probes, 48 bytes);
/// - the bytes of those probes count against the source whose datagrams called for them (the
///   address itself when it announced itself, else the source that named it): at most 3× the
///   bytes of valid announcements received from that source;
/// - one source (an IP and source port) stands for at most one unproven address of its own,
///   however many listening ports it states, and names at most ``pendingPerSourceMax`` others;
///   at most ``pendingMax`` addresses wait for proof, and one that announced itself displaces one
///   that was only named, so the limits cannot lock out a real joiner;
/// - a proven peer lists only proven addresses, so nobody relays an unproven one.
/// One IP holds at most ``provenPerIPMax`` proven learned addresses, so one host answering
/// challenges on many ports cannot fill the book either.
public struct AddressBook: Sendable {
    static let magic: [UInt8] = Array("EGPA".utf8)
    static let version: UInt8 = 2
    static let tagBytes = 16
    static let headerBytes = 4 + 1 + 2 + 8 + 8 + 8 + 1
    /// The largest announcement (every address of a full book).
    public static let announcementBytesMax = headerBytes + UnicastOptions.addressesMax * 6 + tagBytes
    /// An announcement listing no address: what an unproven address receives.
    public static let probeBytes = headerBytes + tagBytes
    /// Bytes sent to unproven addresses per byte received from the source that called for them.
    public static let amplificationMax: UInt64 = 3
    /// Addresses waiting for proof, at most; and at most this many named by one source.
    public static let pendingMax = 16
    public static let pendingPerSourceMax = 4
    /// Proven learned addresses of one IP, at most.
    public static let provenPerIPMax = 8
    /// A source's unspent budget is capped at this many bytes (it cannot save up for a burst).
    static let creditMax: UInt64 = 3 * UInt64(announcementBytesMax)
    /// Sources whose budget is kept, at most (the least recently heard one is forgotten).
    static let creditSourcesMax = 64

    private enum Standing: Equatable {
        /// Given on the command line: trusted for the whole run.
        case commandLine
        /// Answered its challenge.
        case proven
        /// Waiting for proof; probes to it are charged to `chargedTo`. `announced`: it spoke
        /// for itself (else another source only named it).
        case pending(chargedTo: PeerAddress, announced: Bool)

        var isPending: Bool { if case .pending = self { true } else { false } }
    }

    private struct Entry {
        var standing: Standing
        /// What this address must echo to be proven (never 0).
        var challenge: UInt64
        /// The last challenge it sent us (0: none yet), echoed in what we send it.
        var echo: UInt64 = 0
        var lastHeard: NetTime
    }

    private struct Credit {
        var bytes: UInt64
        var lastHeard: NetTime
    }

    public let options: UnicastOptions
    private let listeningPort: UInt16
    private let nonce: UInt64
    private let keyBytes: [UInt8]
    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }
    private var entries: [PeerAddress: Entry] = [:]
    private var own: Set<PeerAddress> = []
    /// Per source (IP and source port of the datagrams): the bytes it may still cause to be sent
    /// to unproven addresses.
    private var credit: [PeerAddress: Credit] = [:]
    /// Per source: the unproven address it stated for itself.
    private var statedBy: [PeerAddress: PeerAddress] = [:]
    /// Keys this peer's challenges: secret, so nobody can compute the challenge sent to another
    /// address from one sent to theirs.
    private let challengeKeyBytes: [UInt8]
    private var challengeKey: SymmetricKey { SymmetricKey(data: challengeKeyBytes) }
    private var challengesIssued: UInt64 = 0
    private var nextAnnounce: NetTime
    public private(set) var stats = AddressBookStats()

    /// - Parameters:
    ///   - listeningPort: the port this peer receives on (stated in its announcements).
    ///   - nonce: a random number that tells this peer's announcements from others'.
    ///   - challengeSecret: random bytes, never sent, that key the challenges.
    public init(options: UnicastOptions, room: String, passphrase: String?, listeningPort: UInt16, nonce: UInt64,
                challengeSecret: [UInt8], now: NetTime) {
        precondition(challengeSecret.count >= 16, "a challenge secret of at least 16 bytes")
        precondition(options.peers.count <= UnicastOptions.addressesMax, "more --peer addresses than the book holds")
        self.options = options
        self.listeningPort = listeningPort
        self.nonce = nonce
        let material = Array("eggs-peers-v1".utf8) + [0] + Array(room.utf8) + [0] + Array((passphrase ?? "").utf8)
        keyBytes = Array(SHA256.hash(data: material))
        challengeKeyBytes = challengeSecret
        nextAnnounce = now
        for peer in options.peers {
            entries[peer] = Entry(standing: .commandLine, challenge: 0, lastHeard: now)
            entries[peer]!.challenge = newChallenge(for: peer)
        }
    }

    /// A fresh challenge for `address`: HMAC of the address and a counter under the secret key.
    private mutating func newChallenge(for address: PeerAddress) -> UInt64 {
        challengesIssued += 1
        var input: [UInt8] = []
        for shift in stride(from: 24, through: 0, by: -8) { input.append(UInt8(truncatingIfNeeded: address.ip >> UInt32(shift))) }
        input += [UInt8(address.port >> 8), UInt8(truncatingIfNeeded: address.port)]
        for shift in stride(from: 56, through: 0, by: -8) { input.append(UInt8(truncatingIfNeeded: challengesIssued >> UInt64(shift))) }
        let value = HMAC<SHA256>.authenticationCode(for: input, using: challengeKey).prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return value == 0 ? 1 : value
    }

    /// Where game datagrams go: the command line's and the proven addresses but this peer's own,
    /// in a stable order.
    public var destinations: [PeerAddress] {
        entries.filter { !own.contains($0.key) && !$0.value.standing.isPending }.map(\.key).sorted()
    }

    /// Addresses waiting for proof.
    public var unproven: [PeerAddress] {
        entries.filter { $0.value.standing.isPending }.map(\.key).sorted()
    }

    /// Whether `bytes` is an announcement (and not a PeerNet datagram).
    public static func isAnnouncement(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { isAnnouncement($0) }
    }

    /// ``isAnnouncement(_:)`` on bytes not yet copied out of a receive buffer.
    static func isAnnouncement(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= magic.count && bytes[0] == magic[0] && bytes[1] == magic[1] && bytes[2] == magic[2] && bytes[3] == magic[3]
    }

    /// Takes an announcement that came from `source` (the datagram's source address) and returns
    /// what to send at once: an answer to a new challenge, or a probe to a new address, so that
    /// proof takes one round trip rather than waiting for the next announcement.
    public mutating func handleAnnouncement(_ bytes: [UInt8], source: PeerAddress, now: NetTime) -> [(to: PeerAddress, bytes: [UInt8])] {
        guard let message = decode(bytes) else {
            stats.announcementsDropped += 1
            return []
        }
        stats.announcementsReceived += 1
        stats.announcementBytesReceived += UInt64(bytes.count)
        let sender = PeerAddress(ip: source.ip, port: message.port)
        if message.nonce == nonce {
            own.insert(sender)
            if entries[sender]?.standing != .commandLine { entries[sender] = nil }
            return []
        }
        addCredit(UInt64(bytes.count), to: source, now: now)
        var replies: [(to: PeerAddress, bytes: [UInt8])] = []
        // The sender itself.
        if entries[sender] == nil { admitAnnounced(sender, source: source, now: now) }
        if var entry = entries[sender] {
            entry.lastHeard = now
            let asked = message.challenge != entry.echo
            entry.echo = message.challenge
            if case .pending = entry.standing, message.echo == entry.challenge {
                if provenCount(ip: sender.ip) < Self.provenPerIPMax && provenTotal < UnicastOptions.addressesMax {
                    entry.standing = .proven
                    stats.addressesValidated += 1
                    if statedBy[source] == sender { statedBy[source] = nil }
                }
            }
            entries[sender] = entry
            if asked, let reply = announcement(to: sender) { replies.append((sender, reply)) }
        }
        // The addresses it names: unproven until they answer, and never relayed until then.
        for address in message.addresses where address != sender && entries[address] == nil && !own.contains(address) {
            guard admitNamed(address, by: source, now: now) else { continue }
            if let probe = announcement(to: address) { replies.append((address, probe)) }
        }
        return replies
    }

    /// A sender heard for the first time: one unproven address per source (a new stated port
    /// replaces the last), displacing a merely named address when the unproven part is full.
    private mutating func admitAnnounced(_ sender: PeerAddress, source: PeerAddress, now: NetTime) {
        if let earlier = statedBy[source], let entry = entries[earlier], case .pending = entry.standing {
            entries[earlier] = nil
        }
        if pendingCount >= Self.pendingMax {
            let named = entries.filter { if case .pending(_, false) = $0.value.standing { true } else { false } }
            guard let oldest = named.min(by: { ($0.value.lastHeard, $0.key) < ($1.value.lastHeard, $1.key) }) else {
                stats.addressesRefused += 1
                return
            }
            entries[oldest.key] = nil
            stats.addressesRefused += 1
        }
        entries[sender] = Entry(standing: .pending(chargedTo: source, announced: true),
                                challenge: newChallenge(for: sender), lastHeard: now)
        statedBy[source] = sender
    }

    /// An address named by `source`: within the unproven part's limits and the source's share.
    private mutating func admitNamed(_ address: PeerAddress, by source: PeerAddress, now: NetTime) -> Bool {
        let byThisSource = entries.values.filter { $0.standing == .pending(chargedTo: source, announced: false) }.count
        guard pendingCount < Self.pendingMax, byThisSource < Self.pendingPerSourceMax else {
            stats.addressesRefused += 1
            return false
        }
        entries[address] = Entry(standing: .pending(chargedTo: source, announced: false),
                                 challenge: newChallenge(for: address), lastHeard: now)
        return true
    }

    private var pendingCount: Int { entries.values.filter { $0.standing.isPending }.count }
    private var provenTotal: Int { entries.values.filter { !$0.standing.isPending }.count }
    private func provenCount(ip: UInt32) -> Int {
        entries.filter { $0.key.ip == ip && $0.value.standing == .proven }.count
    }

    private mutating func addCredit(_ bytes: UInt64, to source: PeerAddress, now: NetTime) {
        if credit[source] == nil, credit.count >= Self.creditSourcesMax,
           let stalest = credit.min(by: { ($0.value.lastHeard, $0.key) < ($1.value.lastHeard, $1.key) }) {
            credit[stalest.key] = nil
        }
        let before = credit[source]?.bytes ?? 0
        credit[source] = Credit(bytes: min(Self.creditMax, before + Self.amplificationMax * bytes), lastHeard: now)
    }

    /// What to send to `address` now: the full announcement to a command-line or proven
    /// address; a probe to an unproven one, if its source's budget allows (then charged).
    private mutating func announcement(to address: PeerAddress) -> [UInt8]? {
        guard let entry = entries[address], !own.contains(address) else { return nil }
        guard case .pending(let source, _) = entry.standing else {
            stats.announcementsSent += 1
            return encode(provenDestinations, challenge: entry.challenge, echo: entry.echo)
        }
        let cost = UInt64(Self.probeBytes)
        guard var budget = credit[source], budget.bytes >= cost else {
            stats.probesWithheld += 1
            return nil
        }
        budget.bytes -= cost
        credit[source] = budget
        stats.probesSent += 1
        stats.probeBytesSent += cost
        return encode([], challenge: entry.challenge, echo: entry.echo)
    }

    /// The addresses a proven peer is told: the proven ones (and the command line's), never an
    /// unproven one.
    private var provenDestinations: [PeerAddress] { destinations }

    /// The next time ``pollAnnouncements(now:)`` has something to send.
    public var nextTimeout: NetTime { nextAnnounce }

    /// When due: forgets silent learned addresses, then returns what to send to each address:
    /// the announcement to every command-line and proven address, a probe to every unproven one
    /// whose source's budget allows it. Empty when not due.
    public mutating func pollAnnouncements(now: NetTime) -> [(to: PeerAddress, bytes: [UInt8])] {
        guard now >= nextAnnounce else { return [] }
        nextAnnounce = now.adding(nanoseconds: options.announceIntervalMilliseconds * 1_000_000)
        let expiry = options.expiryMilliseconds * 1_000_000
        for (address, entry) in entries where entry.standing != .commandLine && now.nanoseconds > entry.lastHeard.nanoseconds &+ expiry {
            entries[address] = nil
            stats.addressesExpired += 1
        }
        for (source, stated) in statedBy where entries[stated] == nil { statedBy[source] = nil }
        var out: [(to: PeerAddress, bytes: [UInt8])] = []
        for address in entries.keys.sorted() where !own.contains(address) {
            if let bytes = announcement(to: address) { out.append((address, bytes)) }
        }
        return out
    }

    func encode(_ addresses: [PeerAddress], challenge: UInt64, echo: UInt64) -> [UInt8] {
        var bytes = Self.magic
        bytes.append(Self.version)
        bytes += [UInt8(listeningPort >> 8), UInt8(truncatingIfNeeded: listeningPort)]
        for value in [nonce, challenge, echo] {
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        let listed = addresses.prefix(UnicastOptions.addressesMax)
        bytes.append(UInt8(listed.count))
        for address in listed {
            for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: address.ip >> UInt32(shift))) }
            bytes += [UInt8(address.port >> 8), UInt8(truncatingIfNeeded: address.port)]
        }
        bytes += HMAC<SHA256>.authenticationCode(for: bytes, using: key).prefix(Self.tagBytes)
        return bytes
    }

    struct Message {
        var port: UInt16
        var nonce: UInt64
        var challenge: UInt64
        var echo: UInt64
        var addresses: [PeerAddress]
    }

    func decode(_ bytes: [UInt8]) -> Message? {
        guard bytes.count >= Self.headerBytes + Self.tagBytes, bytes.count <= Self.announcementBytesMax,
              Self.isAnnouncement(bytes), bytes[4] == Self.version else { return nil }
        let count = Int(bytes[Self.headerBytes - 1])
        guard count <= UnicastOptions.addressesMax, bytes.count == Self.headerBytes + count * 6 + Self.tagBytes else { return nil }
        let body = bytes[..<(bytes.count - Self.tagBytes)]
        let tag = bytes[(bytes.count - Self.tagBytes)...]
        let expected = HMAC<SHA256>.authenticationCode(for: Array(body), using: key).prefix(Self.tagBytes)
        guard Self.constantTimeEqual(Array(expected), Array(tag)) else { return nil }
        let port = UInt16(bytes[5]) << 8 | UInt16(bytes[6])
        guard port > 0 else { return nil }
        func u64(_ at: Int) -> UInt64 { bytes[at..<(at + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        var addresses: [PeerAddress] = []
        for item in 0..<count {
            let at = Self.headerBytes + item * 6
            let ip = bytes[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let peerPort = UInt16(bytes[at + 4]) << 8 | UInt16(bytes[at + 5])
            // Unusable addresses (any, broadcast, multicast, port 0) are skipped, not trusted.
            guard peerPort > 0, ip != 0, ip != .max, !(0xE000_0000...0xEFFF_FFFF).contains(ip) else { continue }
            addresses.append(PeerAddress(ip: ip, port: peerPort))
        }
        return Message(port: port, nonce: u64(7), challenge: u64(15), echo: u64(23), addresses: addresses)
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
