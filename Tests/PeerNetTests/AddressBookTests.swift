import PeerNet
import Testing
import PeerNetUDP

/// Address books on a small LAN in memory: each book listens at one address and sends from
/// another (its sending socket's ephemeral port); a datagram to an address nobody listens at is
/// lost (and counted: what an attacker makes peers send to addresses of its choice).
struct BookLAN {
    struct Host {
        var book: AddressBook
        let listening: PeerAddress
        let sending: PeerAddress
    }

    var hosts: [Host] = []
    /// Bytes sent to addresses where nobody listens (no eggs peer answers there).
    var bytesToNobody: [PeerAddress: UInt64] = [:]
    /// Datagrams delivered or lost so far.
    var datagrams = 0

    mutating func add(_ listening: PeerAddress, peers: [PeerAddress] = [], room: String = "eggs", passphrase: String? = nil) {
        let index = hosts.count
        let book = AddressBook(options: UnicastOptions(peers: peers), room: room, passphrase: passphrase,
                               listeningPort: listening.port, nonce: UInt64(index + 1) &* 0x9E37_79B9,
                               challengeSecret: Array(repeating: UInt8(index + 1), count: 32), now: .zero)
        hosts.append(Host(book: book, listening: listening, sending: PeerAddress(ip: listening.ip, port: 50_000 + UInt16(index))))
    }

    func index(of address: PeerAddress) -> Int? { hosts.firstIndex { $0.listening == address } }

    /// Delivers `bytes` from host `from` to `to`, and every answer it calls for, to the end.
    mutating func send(_ bytes: [UInt8], from: Int, to: PeerAddress, now: NetTime) {
        var queue = [(from, to, bytes)]
        while !queue.isEmpty {
            let (sender, address, datagram) = queue.removeFirst()
            datagrams += 1
            precondition(datagrams < 1_000_000, "announcements never settle")
            guard let receiver = index(of: address) else {
                bytesToNobody[address, default: 0] += UInt64(datagram.count)
                continue
            }
            let replies = hosts[receiver].book.handleAnnouncement(datagram, source: hosts[sender].sending, now: now)
            queue += replies.map { (receiver, $0.to, $0.bytes) }
        }
    }

    /// Every host's due announcements at `now`, delivered.
    mutating func tick(_ now: NetTime) {
        for index in hosts.indices {
            for (to, bytes) in hosts[index].book.pollAnnouncements(now: now) { send(bytes, from: index, to: to, now: now) }
        }
    }

    mutating func run(seconds: UInt64, from start: UInt64 = 0) {
        for step in (start * 10)..<((start + seconds) * 10) { tick(.milliseconds(step * 100)) }
    }
}

/// The unicast peers' address book: what peers tell each other, what they prove, and what they
/// refuse.
@Suite("Address book of unicast peers")
struct AddressBookTests {
    static let a = PeerAddress(ip: 0x0A4D_0001, port: 47777)  // 10.77.0.1
    static let b = PeerAddress(ip: 0x0A4D_0002, port: 47777)
    static let c = PeerAddress(ip: 0x0A4D_0003, port: 40000)
    static let mallory = PeerAddress(ip: 0x0A4D_0066, port: 47777)

    static func seconds(_ s: UInt64) -> NetTime { .milliseconds(s * 1_000) }

    @Test("HOST[:PORT] parses IPv4 literals with the default port; bad ports and extra colons do not")
    func parse() throws {
        #expect(PeerAddress("10.77.0.1", defaultPort: 47777) == Self.a)
        #expect(PeerAddress("10.77.0.3:40000", defaultPort: 47777) == Self.c)
        #expect(PeerAddress("10.77.0.3:0", defaultPort: 47777) == nil)
        #expect(PeerAddress("10.77.0.3:70000", defaultPort: 47777) == nil)
        #expect(PeerAddress("1.2.3.4:5:6", defaultPort: 47777) == nil)
        #expect(Self.c.description == "10.77.0.3:40000")
        #expect(try PeerAddress.resolve("localhost:9", defaultPort: 1) == PeerAddress(ip: 0x7F00_0001, port: 9))
    }

    @Test("two peers given one address each (the same third) prove each other through it at its next announcement")
    func learnsThroughOne() {
        var lan = BookLAN()
        lan.add(Self.a, peers: [Self.b])
        lan.add(Self.b)
        lan.add(Self.c, peers: [Self.b])
        lan.run(seconds: 1)
        // In the first round trips b proves both; they learn of each other when b next announces.
        #expect(lan.hosts[1].book.destinations == [Self.a, Self.c])
        #expect(lan.hosts[0].book.destinations == [Self.b])
        lan.run(seconds: 1, from: 1)
        #expect(lan.hosts[0].book.destinations == [Self.b, Self.c])
        #expect(lan.hosts[1].book.destinations == [Self.a, Self.c])
        #expect(lan.hosts[2].book.destinations == [Self.a, Self.b])
        #expect(lan.hosts.allSatisfy { $0.book.unproven.isEmpty })
        #expect(lan.bytesToNobody.isEmpty)
        // Settled: each sends one announcement a second to each other peer, and nothing more.
        let before = lan.datagrams
        lan.run(seconds: 1, from: 2)
        #expect(lan.datagrams - before == 6, "\(lan.datagrams - before) datagrams in a settled second")
    }

    @Test("an announcement that comes back from this peer's own address marks it as its own: never sent to")
    func ownAddress() {
        var lan = BookLAN()
        lan.add(Self.a, peers: [Self.a, Self.b])
        lan.add(Self.b)
        lan.run(seconds: 2)
        #expect(lan.hosts[0].book.destinations == [Self.b])
        #expect(lan.hosts[1].book.destinations == [Self.a])
    }

    @Test("announcements of another room or passphrase, altered or malformed, are dropped and counted")
    func forged() throws {
        var lan = BookLAN()
        lan.add(Self.a, passphrase: "secret")
        lan.add(Self.b, peers: [Self.a], passphrase: "guess")
        lan.add(Self.c, peers: [Self.a], room: "other", passphrase: "secret")
        lan.run(seconds: 2)
        #expect(lan.hosts[0].book.stats.announcementsDropped == 4)
        #expect(lan.hosts[0].book.destinations.isEmpty && lan.hosts[0].book.unproven.isEmpty)
        var good = BookLAN()
        good.add(Self.a, passphrase: "secret")
        good.add(Self.b, peers: [Self.a], passphrase: "secret")
        let genuine = try #require(good.hosts[1].book.pollAnnouncements(now: .zero).first?.bytes)
        var altered = genuine
        altered[altered.count - 20] ^= 1
        for bytes in [altered, Array("EGPA".utf8) + [2, 0], Array(genuine.prefix(20))] {
            _ = good.hosts[0].book.handleAnnouncement(bytes, source: good.hosts[1].sending, now: .zero)
        }
        #expect(good.hosts[0].book.stats.announcementsDropped == 3)
        good.send(genuine, from: 1, to: Self.a, now: .zero)
        #expect(good.hosts[0].book.destinations == [Self.b])
        #expect(AddressBook.isAnnouncement(genuine))
    }

    @Test("learned addresses that fall silent expire; addresses from the command line never do")
    func expiry() {
        var lan = BookLAN()
        lan.add(Self.a, peers: [Self.b])
        lan.add(Self.b)
        lan.run(seconds: 2)
        #expect(lan.hosts[1].book.destinations == [Self.a])
        // a goes away: b forgets it 30 s after it last heard it; a keeps b (its command line).
        let left = lan.hosts.remove(at: 0)
        lan.run(seconds: 40, from: 2)
        #expect(lan.hosts[0].book.destinations.isEmpty)
        #expect(lan.hosts[0].book.stats.addressesExpired == 1)
        #expect(left.book.destinations == [Self.b])
    }

    @Test("a source stating 63 listening ports is one unproven address, gets no game datagram and at most 3× its bytes")
    func manyStatedPorts() {
        var lan = BookLAN()
        lan.add(Self.a)
        // One socket (one source address) of a peer that knows the room's key, stating a new
        // listening port in every announcement.
        let source = PeerAddress(ip: Self.mallory.ip, port: 40_001)
        var received: UInt64 = 0
        for port in UInt16(1_000)..<1_063 {
            var forger = AddressBook(options: UnicastOptions(peers: [Self.a]), room: "eggs", passphrase: nil, listeningPort: port,
                                     nonce: UInt64(port), challengeSecret: Array(repeating: 9, count: 32), now: .zero)
            for (_, bytes) in forger.pollAnnouncements(now: .zero) {
                received += UInt64(bytes.count)
                for reply in lan.hosts[0].book.handleAnnouncement(bytes, source: source, now: .zero) {
                    lan.bytesToNobody[reply.to, default: 0] += UInt64(reply.bytes.count)
                }
            }
        }
        let book = lan.hosts[0].book
        // (The forger also names a itself, which a cannot tell from another host until its own probe
        // comes back: that one is a's own, not the forger's.)
        #expect(book.unproven.filter { $0.ip == Self.mallory.ip }.count == 1, "\(book.unproven)")
        #expect(book.destinations.isEmpty, "no game datagram goes to an unproven address")
        let sent = lan.bytesToNobody.values.reduce(0, +)
        #expect(sent <= AddressBook.amplificationMax * received, "\(sent) bytes sent for \(received) received")
    }

    @Test("a source naming 63 addresses nobody answers at: 4 wait for proof, 3× its bytes at most over a minute, and a real joiner still gets in")
    func namedAddresses() {
        var lan = BookLAN()
        lan.add(Self.a)
        lan.add(Self.b, peers: [Self.a])
        let bogus = (1...63).map { PeerAddress(ip: 0x0A4D_0100 + UInt32($0), port: 47777) }
        // The attacker knows the room's key (an open room): its announcements list 63 addresses
        // (its own command line), where nobody listens.
        var forger = AddressBook(options: UnicastOptions(peers: [Self.a] + bogus), room: "eggs", passphrase: nil, listeningPort: 47777,
                                 nonce: 0xBAD, challengeSecret: Array(repeating: 7, count: 32), now: .zero)
        let forgerSource = PeerAddress(ip: Self.mallory.ip, port: 40_002)
        var received: UInt64 = 0
        for step in UInt64(0)..<600 {
            let now = NetTime.milliseconds(step * 100)
            for (to, bytes) in forger.pollAnnouncements(now: now) where to == Self.a {
                received += UInt64(bytes.count)
                for reply in lan.hosts[0].book.handleAnnouncement(bytes, source: forgerSource, now: now) {
                    if lan.index(of: reply.to) == nil { lan.bytesToNobody[reply.to, default: 0] += UInt64(reply.bytes.count) }
                }
            }
            lan.tick(now)
        }
        let book = lan.hosts[0].book
        let waiting = book.unproven.filter { bogus.contains($0) }
        #expect(waiting.count <= AddressBook.pendingPerSourceMax, "\(waiting.count) named addresses wait")
        let toBogus = bogus.map { lan.bytesToNobody[$0] ?? 0 }.reduce(0, +)
        let toMallory = lan.bytesToNobody[Self.mallory] ?? 0
        #expect(toBogus + toMallory <= AddressBook.amplificationMax * received, "\(toBogus + toMallory) bytes for \(received)")
        #expect(toBogus > 0, "named addresses are probed (within the budget)")
        #expect(book.stats.addressesRefused > 0)
        // The real peer b was proven all along and never lost its place.
        #expect(book.destinations == [Self.b])
        #expect(!book.destinations.contains { bogus.contains($0) })
    }

    @Test("an address is proven only by echoing its own challenge: another's echo proves nothing")
    func proofIsPerAddress() throws {
        var lan = BookLAN()
        lan.add(Self.a)
        lan.add(Self.b, peers: [Self.a])
        lan.run(seconds: 1)
        #expect(lan.hosts[0].book.destinations == [Self.b])
        // Mallory saw b's announcements (they echo a's challenge for b) and replays one from its
        // own socket: a does not prove mallory with b's echo.
        let bToA = try #require(lan.hosts[1].book.pollAnnouncements(now: Self.seconds(5)).first { $0.to == Self.a }?.bytes)
        _ = lan.hosts[0].book.handleAnnouncement(bToA, source: PeerAddress(ip: Self.mallory.ip, port: 40_003), now: Self.seconds(5))
        #expect(!lan.hosts[0].book.destinations.contains { $0.ip == Self.mallory.ip })
    }

    @Test("the book holds at most 64 proven and command-line addresses, and one IP at most 8 proven ones")
    func limits() {
        var lan = BookLAN()
        let many = (0..<64).map { PeerAddress(ip: 0x0A00_0000 + UInt32($0) + 1, port: 5000) }
        lan.add(Self.a, peers: Array(many.prefix(63)))
        // Twelve peers on one host (one IP, twelve ports), each told about a.
        for port in UInt16(6_000)..<6_012 { lan.add(PeerAddress(ip: Self.c.ip, port: port), peers: [Self.a]) }
        lan.run(seconds: 3)
        let book = lan.hosts[0].book
        #expect(book.destinations.count <= UnicastOptions.addressesMax)
        #expect(book.destinations.filter { $0.ip == Self.c.ip }.count == 1, "63 + 1 fills the book")
        var roomy = BookLAN()
        roomy.add(Self.a)
        for port in UInt16(6_000)..<6_012 { roomy.add(PeerAddress(ip: Self.c.ip, port: port), peers: [Self.a]) }
        roomy.run(seconds: 3)
        #expect(roomy.hosts[0].book.destinations.count == AddressBook.provenPerIPMax)
        #expect(roomy.hosts[0].book.stats.addressesValidated == UInt64(AddressBook.provenPerIPMax))
    }
}
