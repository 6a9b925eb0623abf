import EggPrimitives

/// A peer that heartbeats as a fresh joiner and answers every challenge addressed to it (it sees
/// the cookies on the group), and does nothing else: the open room's cheapest nuisance, for
/// the simulator's attack scenarios and the benchmarks. It proves its ID to every member, so
/// it is proposed as a joiner, and never takes part in a view change. Simulator-only (`package`).
package struct Impostor {
    package let id: PeerID
    package let incarnation: UInt64
    private let roomHash: UInt64
    private let auth: Authenticator
    private var packet: UInt64 = 0
    /// Where a datagram's frame kind is (after the magic and the version).
    private static let kindOffset = 5

    package init(id: PeerID, incarnation: UInt64, room: String = "eggs", passphrase: String? = nil) {
        self.id = id
        self.incarnation = incarnation
        self.roomHash = FNV1a64.hash(Array(room.utf8))
        self.auth = Authenticator(passphrase: passphrase)
    }

    private mutating func datagram(_ frame: Frame) -> [UInt8] {
        packet += 1
        let envelope = Envelope(
            version: Wire.version, kind: frame.kind.rawValue, room: roomHash,
            sender: id, incarnation: incarnation, packetNumber: packet)
        return Wire.encode(frame, envelope: envelope, auth: auth)
    }

    /// A heartbeat of a fresh peer (no view).
    package mutating func heartbeat() -> [UInt8] {
        datagram(.heartbeat(status: .joining, viewID: 0, viewKey: 0, sentSeq: 0, delivered: []))
    }

    /// The responses to the challenges for this impostor in `datagram` (one per entry naming it),
    /// if it is a challenge of this room.
    package mutating func answers(to datagram: [UInt8]) -> [[UInt8]] {
        guard datagram.count > Self.kindOffset, datagram[Self.kindOffset] == FrameKind.challenge.rawValue else { return [] }
        guard case let .frame(envelope, .challenge(entries)) = Wire.decode(
            datagram, room: roomHash, auth: auth, datagramBytesMax: 65_507) else { return [] }
        let challenger = Member(id: envelope.sender, incarnation: envelope.incarnation)
        return entries.filter { $0.target == Member(id: id, incarnation: incarnation) }.map {
            self.datagram(.response(challenger: challenger, cookie: $0.cookie))
        }
    }
}
