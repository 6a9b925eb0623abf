import PeerNet
import Testing
import PeerNetUDP

/// The unicast peers' address book: what peers tell each other, and what they refuse.
@Suite("Address book of unicast peers")
struct AddressBookTests {
    static let a = PeerAddress(ip: 0x0A4D_0001, port: 47777)  // 10.77.0.1
    static let b = PeerAddress(ip: 0x0A4D_0002, port: 47777)
    static let c = PeerAddress(ip: 0x0A4D_0003, port: 40000)

    static func book(peers: [PeerAddress] = [], room: String = "eggs", passphrase: String? = nil, nonce: UInt64,
                     port: UInt16 = 47777) -> AddressBook {
        AddressBook(options: UnicastOptions(peers: peers), room: room, passphrase: passphrase, listeningPort: port, nonce: nonce, now: .zero)
    }

    /// The announcement `book` sends at `now` (it must have one).
    static func announce(_ book: inout AddressBook, _ now: NetTime) throws -> [UInt8] {
        let announcement = book.pollAnnouncement(now: now)
        return try #require(announcement)
    }

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

    @Test("a peer given one address learns the addresses its peer knows, and the peer learns it back")
    func learnsThroughOne() throws {
        var first = Self.book(peers: [Self.b], nonce: 1)   // on host a, told about b
        var second = Self.book(peers: [Self.c], nonce: 2)  // on host b, knows c
        #expect(first.destinations == [Self.b])
        let fromFirst = try Self.announce(&first, .zero)
        second.handleAnnouncement(fromFirst, sourceIP: Self.a.ip, now: .zero)
        // The second learned the first (the announcement's source) and its own address b,
        // which it cannot tell from another host's until its own announcement comes back.
        #expect(second.destinations == [Self.a, Self.b, Self.c])
        let fromSecond = try Self.announce(&second, .zero)
        second.handleAnnouncement(fromSecond, sourceIP: Self.b.ip, now: .zero)
        #expect(second.destinations == [Self.a, Self.c])
        first.handleAnnouncement(fromSecond, sourceIP: Self.b.ip, now: .zero)
        #expect(Set(first.destinations).isSuperset(of: [Self.b, Self.c]))
        #expect(first.stats.announcementsReceived == 1 && second.stats.announcementsReceived == 2)
        #expect(first.pollAnnouncement(now: .milliseconds(999)) == nil, "announcements are once a second")
    }

    @Test("an announcement that comes back from this peer's own address marks it as its own: never sent to")
    func ownAddress() throws {
        var book = Self.book(peers: [Self.a, Self.b], nonce: 7)
        let mine = try Self.announce(&book, .zero)
        book.handleAnnouncement(mine, sourceIP: Self.a.ip, now: .zero)
        #expect(book.destinations == [Self.b])
    }

    @Test("announcements of another room or passphrase, altered or malformed, are dropped and counted")
    func forged() throws {
        var receiver = Self.book(room: "eggs", passphrase: "secret", nonce: 1)
        var otherPassphrase = Self.book(peers: [Self.c], room: "eggs", passphrase: "guess", nonce: 2)
        var otherRoom = Self.book(peers: [Self.c], room: "other", passphrase: "secret", nonce: 3)
        var good = Self.book(peers: [Self.c], room: "eggs", passphrase: "secret", nonce: 4)
        receiver.handleAnnouncement(try Self.announce(&otherPassphrase, .zero), sourceIP: Self.a.ip, now: .zero)
        receiver.handleAnnouncement(try Self.announce(&otherRoom, .zero), sourceIP: Self.a.ip, now: .zero)
        var altered = try Self.announce(&good, .zero)
        altered[altered.count - 20] ^= 1  // a listed address
        receiver.handleAnnouncement(altered, sourceIP: Self.a.ip, now: .zero)
        receiver.handleAnnouncement(Array("EGPA".utf8) + [1, 0], sourceIP: Self.a.ip, now: .zero)
        receiver.handleAnnouncement(Array(altered.prefix(20)), sourceIP: Self.a.ip, now: .zero)
        #expect(receiver.stats.announcementsDropped == 5)
        #expect(receiver.destinations.isEmpty)
        let genuine = try Self.announce(&good, Self.seconds(1))
        receiver.handleAnnouncement(genuine, sourceIP: Self.a.ip, now: .zero)
        #expect(receiver.destinations == [Self.a, Self.c])
        #expect(AddressBook.isAnnouncement(genuine))
    }

    @Test("learned addresses that stay silent expire; addresses from the command line never do")
    func expiry() throws {
        var book = Self.book(peers: [Self.b], nonce: 1)
        var other = Self.book(peers: [Self.c], nonce: 2, port: 47777)
        book.handleAnnouncement(try Self.announce(&other, .zero), sourceIP: Self.a.ip, now: .zero)
        #expect(book.destinations == [Self.a, Self.b, Self.c])
        // a keeps announcing itself; c (only introduced) never answers.
        for second in stride(from: UInt64(10), through: 40, by: 10) {
            book.handleAnnouncement(try Self.announce(&other, Self.seconds(second)), sourceIP: Self.a.ip,
                                    now: Self.seconds(second))
            _ = book.pollAnnouncement(now: Self.seconds(second))
        }
        // Being listed again does not keep c: it expired 30 s after it was first named. Once
        // a is silent too, it goes as well; the command-line address stays.
        #expect(book.destinations == [Self.a, Self.b])
        _ = book.pollAnnouncement(now: Self.seconds(80))
        #expect(book.destinations == [Self.b])
        #expect(book.stats.addressesExpired == 2)
    }

    @Test("the book holds at most 64 addresses; more are refused and counted")
    func limit() throws {
        let many = (0..<64).map { PeerAddress(ip: 0x0A00_0000 + UInt32($0) + 1, port: 5000) }
        var full = Self.book(peers: Array(many.prefix(63)), nonce: 1)
        var other = Self.book(peers: Array(many.suffix(10)) + [Self.c], nonce: 2)
        full.handleAnnouncement(try Self.announce(&other, .zero), sourceIP: Self.a.ip, now: .zero)
        #expect(full.destinations.count == UnicastOptions.addressesMax)
        #expect(full.stats.addressesRefused > 0)
        let announcement = try Self.announce(&full, Self.seconds(1))
        #expect(announcement.count <= AddressBook.announcementBytesMax)
    }
}
