import EggPrimitives

/// The framing part of a peer: who it is (member, room hash, authenticator), the numbering of
/// its datagrams (one sequence for all of them) and when its recent heartbeats and reports went
/// out, to match the echoes of them in the members' reports (RTT). A value with its own
/// invariants (``checkInvariants()``) and tests; the datagrams themselves are encoded by
/// `ReliableMulticast` (`encode`, `pollTransmit`).
struct Framing: Sendable {
    /// Own heartbeats and reports remembered (packet number → send time) to match echoes.
    static let echoRingSize = 64

    let me: Member
    let roomHash: UInt64
    let auth: Authenticator
    /// The number of the last datagram encoded (0: none yet).
    var packetNumber: UInt64 = 0
    /// Own heartbeats and reports by `packetNumber % echoRingSize`: (packet number, sent at).
    private(set) var echoRing: [(packet: UInt64, at: NetTime)] = Array(repeating: (0, .zero), count: Framing.echoRingSize)
    /// The packet number last remembered in `echoRing` (0: none).
    private(set) var lastRemembered: UInt64 = 0

    init(me: Member, room: String, passphrase: String?) {
        self.me = me
        self.roomHash = FNV1a64.hash(Array(room.utf8))
        self.auth = Authenticator(passphrase: passphrase)
    }

    /// The envelope of the next datagram, of kind `kind`: numbered one past the last.
    mutating func nextEnvelope(kind: FrameKind) -> Envelope {
        packetNumber += 1
        return Envelope(
            version: Wire.version, kind: kind.rawValue, room: roomHash,
            sender: me.id, incarnation: me.incarnation, packetNumber: packetNumber)
    }

    /// Records the send time of the datagram just encoded, for matching echoes of it.
    mutating func rememberSent(now: NetTime) {
        echoRing[Int(packetNumber % UInt64(Self.echoRingSize))] = (packetNumber, now)
        lastRemembered = packetNumber
    }

    /// When the remembered datagram `packet` went out; `nil` when it is not (or no longer) remembered.
    func sentAt(packet: UInt64) -> NetTime? {
        let slot = echoRing[Int(packet % UInt64(Self.echoRingSize))]
        return slot.packet == packet ? slot.at : nil
    }

    func checkInvariants() {
        // O(1): checked after every input of the peer.
        precondition(echoRing.count == Self.echoRingSize, "echo ring has a fixed size")
        precondition(lastRemembered <= packetNumber, "a remembered datagram was numbered")
        precondition(lastRemembered == 0 || echoRing[Int(lastRemembered % UInt64(Self.echoRingSize))].packet == lastRemembered,
                     "the datagram remembered last sits in its slot")
    }
}
