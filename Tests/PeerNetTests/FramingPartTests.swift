import EggPrimitives
import Testing
@testable import PeerNet

/// `Framing`, the part of a peer that names it on the wire, numbers its datagrams and
/// remembers when its heartbeats and reports went out, on its own (the protocol around it:
/// `WireTests`, `PinnedValueTests`, the RTT checks of `TwoPeerTests`).
@Suite("Framing: identity, packet numbers, send times for echoes")
struct FramingPartTests {
    static let me = Member(id: PeerID(0x42), incarnation: 7)

    @Test("envelopes carry the identity and the room hash, numbered 1, 2, 3… across kinds")
    func envelopes() {
        var f = Framing(me: Self.me, room: "eggs", passphrase: nil)
        #expect(f.roomHash == FNV1a64.hash(Array("eggs".utf8)))
        let first = f.nextEnvelope(kind: .heartbeat), second = f.nextEnvelope(kind: .data)
        #expect(first.packetNumber == 1 && second.packetNumber == 2 && f.packetNumber == 2)
        #expect(first.kind == FrameKind.heartbeat.rawValue && second.kind == FrameKind.data.rawValue)
        #expect(second.sender == Self.me.id && second.incarnation == Self.me.incarnation && second.room == f.roomHash)
        #expect(second.version == Wire.version)
        f.checkInvariants()
    }

    @Test("a remembered datagram's send time is found until its slot is reused")
    func echoRing() {
        var f = Framing(me: Self.me, room: "eggs", passphrase: nil)
        _ = f.nextEnvelope(kind: .heartbeat)
        f.rememberSent(now: .milliseconds(5))
        _ = f.nextEnvelope(kind: .data)  // not remembered: data gets no echo
        #expect(f.sentAt(packet: 1) == .milliseconds(5))
        #expect(f.sentAt(packet: 2) == nil)
        #expect(f.sentAt(packet: 1 + UInt64(Framing.echoRingSize)) == nil, "same slot, another packet")
        for n in 0..<UInt64(Framing.echoRingSize) {
            _ = f.nextEnvelope(kind: .report)
            f.rememberSent(now: .milliseconds(10 + n))
        }
        #expect(f.sentAt(packet: 1) == nil, "overwritten after a full turn of the ring")
        #expect(f.sentAt(packet: f.packetNumber) == .milliseconds(10 + UInt64(Framing.echoRingSize) - 1))
        f.checkInvariants()
    }

    @Test("the authenticator follows the passphrase")
    func authenticator() {
        let open = Framing(me: Self.me, room: "eggs", passphrase: nil)
        let keyed = Framing(me: Self.me, room: "eggs", passphrase: "secret")
        #expect(open.auth.flags == 0)
        #expect(keyed.auth.flags == 1)
        #expect(Framing(me: Self.me, room: "other", passphrase: nil).roomHash != open.roomHash)
    }
}
