import CEggsChecksum
import Crypto
import EggPrimitives

/// The PeerNet wire format, version 4. All integers big-endian.
///
/// ```
/// envelope (stable across versions, 38 bytes):
///   magic "EG" (2) | version u16 | flags u8 (bit 0: HMAC trailer; bit 1: sent by a receiver) | kind u8
///   | room u64 (FNV-1a of the room name) | sender u64 | incarnation u64 | packet number u64
/// body (by kind, version 2):
///   1 heartbeat: status u8 | view id u64 | view key u64 | sent seq u64 | n u8 | n × (peer u64, delivered u64)
///   2 data:      n u8 | n × (origin u64 | origin incarnation u64 | view id u64 | seq u64 | length u16 | payload)
///   3 nack:      origin u64 | origin incarnation u64 | n u8 | n × (first u64, last u64)
///   4 propose:   ballot u32 | base view id u64 | base key u64 | n u8 | n × (peer u64, incarnation u64)
///   5 ack:       ballot u32 | coordinator u64 | acker's view id u64 | view key u64 | own seq u64
///                | n u8 | n × (peer u64, contiguous seq held u64)
///   6 cut:       ballot u32 | base view id u64 | base key u64 | new view id u64
///                | n u8 | n × (peer u64, incarnation u64, cut seq u64, flags u8: 1 in base, 2 in new view)
///   7 ready:     ballot u32 | coordinator u64
///   8 install:   ballot u32 | coordinator u64 | new view id u64
///   9 leave:     sent seq u64
///  10 report:    view id u64 | view key u64 | sent seq u64
///                | n u8 | n × (peer u64, delivered u64, echoed packet number u64, echo hold µs u32)
///  11 challenge: n u8 | n × (target u64, target incarnation u64, cookie u64)
///  12 response:  challenger u64 | challenger incarnation u64 | cookie u64
/// trailer: CRC-32C (4 bytes) over everything before it, or (flag bit 0) the first 16 bytes of
///   HMAC-SHA256 over everything before it, keyed by SHA-256("eggs-peernet-v1" + passphrase).
/// ```
/// A datagram is at most `datagramBytesMax` (1200) bytes; lists are capped (`Wire.*Max`).
///
/// Kind 10 (`report`: stability vector plus round-trip echoes) was added without a version
/// bump: it is purely additive. A peer that predates it drops kind 10 as malformed (and counts
/// it) and still frees messages by heartbeats, so the two interoperate; only its link stats
/// stay empty. Every other kind is byte-for-byte unchanged.
///
/// Flag bit 1 (sent by a receiver, on its `listen` and `nack`) was added to version 3 without
/// a bump: a peer that predates it ignores the bit, as it ignores every flag but bit 0. It lets
/// a receiver drop the other receivers' datagrams before reading them (in the kernel, by a
/// socket filter: `ReliableMulticast.isFromReceiver(_:)`), so a receiver's work does not grow with the
/// number of receivers.
///
/// Version 4 changes only the checksum, from CRC-32 (IEEE) to CRC-32C (Castagnoli), which the
/// processor computes with one instruction per 8 bytes and no table: the table of CRC-32 cost a
/// receiver a sixth of its core time on a cold cache (docs/network.md, "Latency on one machine").
/// A version-4 peer still checks a datagram that says version 3 by CRC-32, and so reports its
/// sender as incompatible (`DropReason.wrongVersion`); a version-3 peer counts version-4
/// datagrams as bad checksums.
///
/// Version 2 adds kinds 11 and 12 (the join handshake) and leaves every other kind as in
/// version 1. It is a new version all the same: a version-1 peer cannot prove itself to a
/// version-2 one, so each reports the other as incompatible instead of never joining silently.
///
/// Redundancy (issue 14: copies of a sender's latest unstable messages piggybacked on its data
/// datagrams, and echo datagrams of them) changes nothing on the wire: a copy is an ordinary
/// data item of its origin, exactly like a retransmission, so any version-2 peer takes it (once,
/// in order; a second copy counts as a duplicate), and a peer without redundancy interoperates.
/// While no loss is seen, a peer's datagrams are byte for byte what they were before.
///
/// Every field is validated before use (`decode` drops the datagram as malformed otherwise):
/// seqs at most `seqMax`, view ids at most `viewIDMax`, ballot attempts at most `attemptMax`,
/// no ID twice in one list, status bytes and cut flags from their enums, list lengths capped.
enum Wire {
    static let magic: (UInt8, UInt8) = (0x45, 0x47)
    static let version: UInt16 = 4
    /// The version before, whose trailer was CRC-32 (IEEE): checked only to report its peers as incompatible.
    static let previousVersion: UInt16 = 3
    static let headerBytes = 38
    static let crcBytes = 4
    static let macBytes = 16
    static let trailerBytesMax = 16
    static let dataPrefixBytes = 1
    static let dataItemHeaderBytes = 34
    /// Members of a view; also the cap of every per-member list on the wire.
    static let membersMax = 32
    /// Entries of a cut vector (old members plus joiners).
    static let cutEntriesMax = 40
    static let itemsPerDatagramMax = 64
    static let nackRangesMax = 16
    /// Seqs a single NACK range may cover when repairing (limits the work one datagram asks for).
    static let nackSpanMax: UInt64 = 256
    /// Entries of a report (one per member of the view).
    static let reportEntriesMax = membersMax
    /// Sequence numbers (seqs, cuts, delivered and sent seqs, NACK bounds) above this are
    /// malformed: no peer sends 2^48 messages, and every sum the core forms with a seq
    /// (seq + 1, delivered + 2 × window) stays far from overflow.
    static let seqMax: UInt64 = 1 << 48
    /// View ids above this are malformed (a view id grows by one per view change).
    static let viewIDMax: UInt64 = 1 << 48
    /// Ballot attempts above this are malformed (the coordinator's next ballot is one higher).
    static let attemptMax: UInt32 = 1 << 30
    /// Targets of one challenge datagram.
    static let challengeEntriesMax = 32
    /// Envelope flag bits: the trailer is an HMAC; the sender is a receiver.
    static let flagAuthenticated: UInt8 = 1
    static let flagFromReceiver: UInt8 = 2
    /// Offset of the flags byte in a datagram.
    static let flagsOffset = 4
}

extension Wire {
    /// Whether `bytes` carry the receiver flag (read without decoding or checking anything
    /// else, like the socket filter that does the same in the kernel: a receiver drops these).
    static func isFromReceiver(_ bytes: [UInt8]) -> Bool {
        bytes.count >= headerBytes + crcBytes && bytes[flagsOffset] & flagFromReceiver != 0
    }
}

/// The status byte of a heartbeat.
enum WireStatus: UInt8 {
    case joining = 0, member, flushing, blocked, left
}

enum FrameKind: UInt8 {
    case heartbeat = 1, data, nack, propose, ack, cut, ready, install, leave, report, challenge, response
    /// A receiver's presence, and its request for a sync (`Receiver.swift`).
    case listen
    /// A member's answer to receivers: where its snapshot stands in the group's streams.
    case sync
}

/// One target of a challenge: `target` proves it is alive (and, with a passphrase, holds the
/// key) by multicasting a `response` that echoes `cookie`.
struct ChallengeEntry: Hashable {
    var target: Member
    var cookie: UInt64
}

struct Envelope: Hashable {
    var version: UInt16
    var kind: UInt8
    var room: UInt64
    var sender: PeerID
    var incarnation: UInt64
    var packetNumber: UInt64
    /// Flag bit 1: the sender is a receiver.
    var fromReceiver = false
}

/// A member of a view: a peer in one of its incarnations.
struct Member: Hashable, Comparable {
    var id: PeerID
    var incarnation: UInt64

    static func < (lhs: Member, rhs: Member) -> Bool {
        (lhs.id, lhs.incarnation) < (rhs.id, rhs.incarnation)
    }
}

/// A view change attempt: larger attempt wins, then larger coordinator ID.
struct Ballot: Hashable, Comparable {
    var attempt: UInt32
    var coordinator: PeerID

    static func < (lhs: Ballot, rhs: Ballot) -> Bool {
        (lhs.attempt, lhs.coordinator) < (rhs.attempt, rhs.coordinator)
    }
}

struct DataItem: Hashable {
    var origin: Member
    var viewID: UInt64
    var seq: UInt64
    var payload: [UInt8]

    var encodedBytes: Int { Wire.dataItemHeaderBytes + payload.count }
}

/// One member's line of a stability report: what the reporter delivered from `peer`, and an
/// echo of the last heartbeat or report it heard from `peer` (for `peer`'s round-trip time).
struct ReportEntry: Hashable {
    var peer: PeerID
    var delivered: UInt64
    /// Packet number of the last heartbeat or report heard from `peer`; 0 when none.
    var echoPacket: UInt64
    /// Microseconds between hearing that packet and sending this report (saturating).
    var echoHoldMicroseconds: UInt32
}

/// One member of a sync: a receiver starts its stream after `delivered`.
struct SyncEntry: Hashable {
    var member: Member
    var delivered: UInt64
}

struct CutEntry: Hashable {
    var member: Member
    var cut: UInt64
    var inBase: Bool
    var inNew: Bool
}

enum Frame: Hashable {
    case heartbeat(status: WireStatus, viewID: UInt64, viewKey: UInt64, sentSeq: UInt64, delivered: [(PeerID, UInt64)])
    case data([DataItem])
    case nack(origin: Member, ranges: [ClosedRange<UInt64>])
    case propose(attempt: UInt32, baseID: UInt64, baseKey: UInt64, members: [Member])
    case ack(Ballot, viewID: UInt64, viewKey: UInt64, ownSeq: UInt64, holdings: [(PeerID, UInt64)])
    case cut(attempt: UInt32, baseID: UInt64, baseKey: UInt64, newViewID: UInt64, entries: [CutEntry])
    case ready(Ballot)
    case install(Ballot, newViewID: UInt64)
    case leave(sentSeq: UInt64)
    case report(viewID: UInt64, viewKey: UInt64, sentSeq: UInt64, entries: [ReportEntry])
    case challenge([ChallengeEntry])
    case response(challenger: Member, cookie: UInt64)
    /// A receiver (not a member) is here; with `wantsSync`, it asks `server` (a member of the
    /// view `viewID`/`viewKey` it heard) where to start.
    case listen(viewID: UInt64, viewKey: UInt64, server: PeerID, wantsSync: Bool)
    /// The sender's snapshot for receivers is its message `snapshotSeq`; it was taken when the
    /// sender had delivered each entry's stream up to `delivered`, in the view given.
    case sync(viewID: UInt64, viewKey: UInt64, snapshotSeq: UInt64, entries: [SyncEntry])

    static func == (lhs: Frame, rhs: Frame) -> Bool { Wire.encodeBody(lhs) == Wire.encodeBody(rhs) }
    func hash(into hasher: inout Hasher) { hasher.combine(Wire.encodeBody(self)) }

    /// Roughly the encoded size (for reserving capacity once).
    var encodedBytesEstimate: Int {
        switch self {
        case let .data(items): Wire.headerBytes + 1 + items.reduce(0) { $0 + $1.encodedBytes } + Wire.trailerBytesMax
        default: 256
        }
    }

    var kind: FrameKind {
        switch self {
        case .heartbeat: .heartbeat
        case .data: .data
        case .nack: .nack
        case .propose: .propose
        case .ack: .ack
        case .cut: .cut
        case .ready: .ready
        case .install: .install
        case .leave: .leave
        case .report: .report
        case .challenge: .challenge
        case .response: .response
        case .listen: .listen
        case .sync: .sync
        }
    }
}

/// How the trailer is produced and checked.
struct Authenticator: @unchecked Sendable {  // immutable after init
    let key: SymmetricKey?

    init(passphrase: String?) {
        if let passphrase {
            let digest = SHA256.hash(data: Array("eggs-peernet-v1".utf8) + Array(passphrase.utf8))
            key = SymmetricKey(data: Array(digest))
        } else {
            key = nil
        }
    }

    var flags: UInt8 { key == nil ? 0 : 1 }

    /// Appends the trailer of everything in `bytes` to it.
    func appendTrailer(to bytes: inout [UInt8]) {
        if let key {
            let mac = HMAC<SHA256>.authenticationCode(for: bytes, using: key)
            bytes += mac.prefix(Wire.macBytes)
            return
        }
        let crc = CRC32C.checksum(bytes[...])
        bytes.append(UInt8(crc >> 24))
        bytes.append(UInt8(truncatingIfNeeded: crc >> 16))
        bytes.append(UInt8(truncatingIfNeeded: crc >> 8))
        bytes.append(UInt8(truncatingIfNeeded: crc))
    }

    /// Whether the trailer after `bodyEnd` is that of the bytes before it (the MAC compared in
    /// constant time). `bytes` holds at least `bodyEnd` + the trailer's length.
    func verifies(_ bytes: [UInt8], bodyEnd: Int) -> Bool {
        if let key {
            let mac = HMAC<SHA256>.authenticationCode(for: bytes[..<bodyEnd], using: key)
            var diff: UInt8 = 0
            for (index, byte) in mac.prefix(Wire.macBytes).enumerated() { diff |= byte ^ bytes[bodyEnd + index] }
            return bytes.count == bodyEnd + Wire.macBytes && diff == 0
        }
        return bytes.count == bodyEnd + Wire.crcBytes && Wire.trailerCRC(bytes, at: bodyEnd) == CRC32C.checksum(bytes[..<bodyEnd])
    }
}

enum DropReason: Hashable {
    case truncated, oversized, malformed, badChecksum, unauthenticated, foreignRoom
    case wrongVersion(sender: PeerID, version: UInt16)
}

enum DecodeOutcome {
    case frame(Envelope, Frame)
    /// A valid datagram of the sender named in `decode`'s `ownSender`: its body is not parsed.
    case own(Envelope)
    case drop(DropReason)
}

extension Wire {
    static func encode(_ frame: Frame, envelope: Envelope, auth: Authenticator) -> [UInt8] {
        var w = BigEndianByteWriter(capacity: frame.encodedBytesEstimate)
        encodeHeader(kind: frame.kind, envelope: envelope, auth: auth, into: &w)
        encodeBody(frame, into: &w)
        auth.appendTrailer(to: &w.bytes)
        return w.bytes
    }

    /// Appends the 38-byte envelope.
    static func encodeHeader(kind: FrameKind, envelope: Envelope, auth: Authenticator, into w: inout BigEndianByteWriter) {
        w.u8(magic.0)
        w.u8(magic.1)
        w.u16(envelope.version)
        w.u8(auth.flags | (envelope.fromReceiver ? flagFromReceiver : 0))
        w.u8(kind.rawValue)
        w.u64(envelope.room)
        w.u64(envelope.sender.raw)
        w.u64(envelope.incarnation)
        w.u64(envelope.packetNumber)
    }

    /// Appends one data item (the body of a data frame is a count byte, then items).
    static func encodeItem(_ item: DataItem, into w: inout BigEndianByteWriter) {
        w.u64(item.origin.id.raw); w.u64(item.origin.incarnation); w.u64(item.viewID); w.u64(item.seq)
        w.u16(UInt16(item.payload.count)); w.bytes += item.payload
    }

    static func encodeBody(_ frame: Frame) -> [UInt8] {
        var w = BigEndianByteWriter(capacity: 64)
        encodeBody(frame, into: &w)
        return w.bytes
    }

    /// Appends the body in place (no intermediate array: this is the data path's hot spot).
    static func encodeBody(_ frame: Frame, into w: inout BigEndianByteWriter) {
        switch frame {
        case let .heartbeat(status, viewID, viewKey, sentSeq, delivered):
            w.u8(status.rawValue); w.u64(viewID); w.u64(viewKey); w.u64(sentSeq)
            w.count(delivered.count)
            for (peer, seq) in delivered { w.u64(peer.raw); w.u64(seq) }
        case let .data(items):
            w.count(items.count)
            for item in items { encodeItem(item, into: &w) }
        case let .nack(origin, ranges):
            w.u64(origin.id.raw); w.u64(origin.incarnation)
            w.count(ranges.count)
            for r in ranges { w.u64(r.lowerBound); w.u64(r.upperBound) }
        case let .propose(attempt, baseID, baseKey, members):
            w.u32(attempt); w.u64(baseID); w.u64(baseKey)
            w.count(members.count)
            for m in members { w.u64(m.id.raw); w.u64(m.incarnation) }
        case let .ack(ballot, viewID, viewKey, ownSeq, holdings):
            w.u32(ballot.attempt); w.u64(ballot.coordinator.raw); w.u64(viewID); w.u64(viewKey); w.u64(ownSeq)
            w.count(holdings.count)
            for (peer, seq) in holdings { w.u64(peer.raw); w.u64(seq) }
        case let .cut(attempt, baseID, baseKey, newViewID, entries):
            w.u32(attempt); w.u64(baseID); w.u64(baseKey); w.u64(newViewID)
            w.count(entries.count)
            for e in entries {
                w.u64(e.member.id.raw); w.u64(e.member.incarnation); w.u64(e.cut)
                w.u8((e.inBase ? 1 : 0) | (e.inNew ? 2 : 0))
            }
        case let .ready(ballot):
            w.u32(ballot.attempt); w.u64(ballot.coordinator.raw)
        case let .install(ballot, newViewID):
            w.u32(ballot.attempt); w.u64(ballot.coordinator.raw); w.u64(newViewID)
        case let .leave(sentSeq):
            w.u64(sentSeq)
        case let .report(viewID, viewKey, sentSeq, entries):
            w.u64(viewID); w.u64(viewKey); w.u64(sentSeq)
            w.count(entries.count)
            for e in entries { w.u64(e.peer.raw); w.u64(e.delivered); w.u64(e.echoPacket); w.u32(e.echoHoldMicroseconds) }
        case let .challenge(entries):
            w.count(entries.count)
            for e in entries { w.u64(e.target.id.raw); w.u64(e.target.incarnation); w.u64(e.cookie) }
        case let .response(challenger, cookie):
            w.u64(challenger.id.raw); w.u64(challenger.incarnation); w.u64(cookie)
        case let .listen(viewID, viewKey, server, wantsSync):
            w.u64(viewID); w.u64(viewKey); w.u64(server.raw); w.u8(wantsSync ? 1 : 0)
        case let .sync(viewID, viewKey, snapshotSeq, entries):
            w.u64(viewID); w.u64(viewKey); w.u64(snapshotSeq)
            w.count(entries.count)
            for e in entries { w.u64(e.member.id.raw); w.u64(e.member.incarnation); w.u64(e.delivered) }
        }
    }

    /// Checks size, magic, trailer, version and room, then parses the body.
    /// Never traps: any defect yields `.drop(reason)`.
    /// With `ownSender`, a datagram that passes every envelope check and names that sender
    /// comes back as `.own` without its body parsed (a peer's own multicast echoes are a quarter
    /// of what it reads in a group of four, and they are only counted).
    static func decode(
        _ bytes: [UInt8], room: UInt64, auth: Authenticator, datagramBytesMax: Int, ownSender: PeerID? = nil
    ) -> DecodeOutcome {
        guard bytes.count <= datagramBytesMax else { return .drop(.oversized) }
        guard bytes.count >= headerBytes + crcBytes else { return .drop(.truncated) }
        guard bytes[0] == magic.0, bytes[1] == magic.1 else { return .drop(.malformed) }
        let authenticated = bytes[4] & 1 == 1
        guard authenticated == (auth.key != nil) else { return .drop(.unauthenticated) }
        let trailerBytes = authenticated ? macBytes : crcBytes
        guard bytes.count >= headerBytes + trailerBytes else { return .drop(.truncated) }
        let bodyEnd = bytes.count - trailerBytes
        // A version-3 datagram checks by CRC-32 (IEEE): it goes on only to be dropped as wrongVersion below.
        guard auth.verifies(bytes, bodyEnd: bodyEnd)
              || (!authenticated && bytes[2] == 0 && UInt16(bytes[3]) == previousVersion
                  && trailerCRC(bytes, at: bodyEnd) == CRC32.checksum(bytes[..<bodyEnd]))
        else {
            return .drop(authenticated ? .unauthenticated : .badChecksum)
        }
        var c = BigEndianByteReader(bytes, offset: 2, end: bodyEnd)
        guard let version = c.u16(), let flags = c.u8(), let kindRaw = c.u8(), let roomHash = c.u64(),
              let sender = c.u64(), let incarnation = c.u64(), let packetNumber = c.u64()
        else { return .drop(.truncated) }
        guard roomHash == room else { return .drop(.foreignRoom) }
        guard version == Wire.version else { return .drop(.wrongVersion(sender: PeerID(sender), version: version)) }
        let envelope = Envelope(
            version: version, kind: kindRaw, room: roomHash, sender: PeerID(sender),
            incarnation: incarnation, packetNumber: packetNumber, fromReceiver: flags & flagFromReceiver != 0)
        if let ownSender, ownSender.raw == sender { return .own(envelope) }
        guard let kind = FrameKind(rawValue: kindRaw), let frame = decodeBody(kind, &c), c.remaining == 0 else {
            return .drop(.malformed)
        }
        return .frame(envelope, frame)
    }

    /// The big-endian CRC trailer at `offset` (nil if `bytes` ends before its 4 bytes).
    static func trailerCRC(_ bytes: [UInt8], at offset: Int) -> UInt32? {
        var reader = BigEndianByteReader(bytes, offset: offset, end: offset + crcBytes)
        return reader.u32()
    }

    private static func decodeBody(_ kind: FrameKind, _ c: inout BigEndianByteReader) -> Frame? {
        switch kind {
        case .heartbeat:
            guard let raw = c.u8(), let status = WireStatus(rawValue: raw), let viewID = c.u64(), viewID <= viewIDMax,
                  let viewKey = c.u64(), let sentSeq = c.u64(), sentSeq <= seqMax,
                  let pairs = decodePairs(&c) else { return nil }
            return .heartbeat(status: status, viewID: viewID, viewKey: viewKey, sentSeq: sentSeq, delivered: pairs)
        case .data:
            guard let n = c.count(max: itemsPerDatagramMax), n > 0 else { return nil }
            var items: [DataItem] = []
            for _ in 0..<n {
                guard let origin = c.u64(), let inc = c.u64(), let viewID = c.u64(), viewID <= viewIDMax,
                      let seq = c.u64(), seq > 0, seq <= seqMax,
                      let length = c.u16(), let payload = c.bytes(Int(length)) else { return nil }
                items.append(DataItem(origin: Member(id: PeerID(origin), incarnation: inc), viewID: viewID, seq: seq, payload: payload))
            }
            return .data(items)
        case .nack:
            guard let origin = c.u64(), let inc = c.u64(), let n = c.count(max: nackRangesMax) else { return nil }
            var ranges: [ClosedRange<UInt64>] = []
            for _ in 0..<n {
                guard let first = c.u64(), let last = c.u64(), first >= 1, first <= last, last <= seqMax else { return nil }
                ranges.append(first...last)
            }
            return .nack(origin: Member(id: PeerID(origin), incarnation: inc), ranges: ranges)
        case .propose:
            guard let attempt = c.u32(), attempt <= attemptMax, let baseID = c.u64(), baseID <= viewIDMax,
                  let baseKey = c.u64(), let members = decodeMembers(&c), !members.isEmpty else { return nil }
            return .propose(attempt: attempt, baseID: baseID, baseKey: baseKey, members: members)
        case .ack:
            guard let attempt = c.u32(), attempt <= attemptMax, let coordinator = c.u64(),
                  let viewID = c.u64(), viewID <= viewIDMax, let viewKey = c.u64(),
                  let ownSeq = c.u64(), ownSeq <= seqMax, let pairs = decodePairs(&c) else { return nil }
            return .ack(Ballot(attempt: attempt, coordinator: PeerID(coordinator)), viewID: viewID, viewKey: viewKey, ownSeq: ownSeq, holdings: pairs)
        case .cut:
            guard let attempt = c.u32(), attempt <= attemptMax, let baseID = c.u64(), baseID <= viewIDMax,
                  let baseKey = c.u64(), let newViewID = c.u64(), newViewID > baseID, newViewID <= viewIDMax,
                  let n = c.count(max: cutEntriesMax) else { return nil }
            var entries: [CutEntry] = []
            var ids: Set<PeerID> = []
            for _ in 0..<n {
                guard let id = c.u64(), let inc = c.u64(), let cut = c.u64(), cut <= seqMax,
                      let flags = c.u8(), flags & ~3 == 0, flags != 0, ids.insert(PeerID(id)).inserted else { return nil }
                entries.append(CutEntry(member: Member(id: PeerID(id), incarnation: inc), cut: cut, inBase: flags & 1 != 0, inNew: flags & 2 != 0))
            }
            guard entries.contains(where: \.inNew), entries.filter(\.inNew).count <= membersMax else { return nil }
            return .cut(attempt: attempt, baseID: baseID, baseKey: baseKey, newViewID: newViewID, entries: entries)
        case .ready:
            guard let attempt = c.u32(), attempt <= attemptMax, let coordinator = c.u64() else { return nil }
            return .ready(Ballot(attempt: attempt, coordinator: PeerID(coordinator)))
        case .install:
            guard let attempt = c.u32(), attempt <= attemptMax, let coordinator = c.u64(),
                  let newViewID = c.u64(), newViewID <= viewIDMax else { return nil }
            return .install(Ballot(attempt: attempt, coordinator: PeerID(coordinator)), newViewID: newViewID)
        case .leave:
            guard let sentSeq = c.u64(), sentSeq <= seqMax else { return nil }
            return .leave(sentSeq: sentSeq)
        case .report:
            guard let viewID = c.u64(), viewID <= viewIDMax, let viewKey = c.u64(), let sentSeq = c.u64(), sentSeq <= seqMax,
                  let n = c.count(max: reportEntriesMax) else { return nil }
            var entries: [ReportEntry] = []
            entries.reserveCapacity(n)
            for _ in 0..<n {
                guard let peer = c.u64(), let delivered = c.u64(), delivered <= seqMax, let echo = c.u64(), let hold = c.u32(),
                      !entries.contains(where: { $0.peer.raw == peer }) else { return nil }
                entries.append(ReportEntry(peer: PeerID(peer), delivered: delivered, echoPacket: echo, echoHoldMicroseconds: hold))
            }
            return .report(viewID: viewID, viewKey: viewKey, sentSeq: sentSeq, entries: entries)
        case .challenge:
            guard let n = c.count(max: challengeEntriesMax), n > 0 else { return nil }
            var entries: [ChallengeEntry] = []
            for _ in 0..<n {
                guard let id = c.u64(), let inc = c.u64(), let cookie = c.u64() else { return nil }
                let target = Member(id: PeerID(id), incarnation: inc)
                guard !entries.contains(where: { $0.target == target }) else { return nil }
                entries.append(ChallengeEntry(target: target, cookie: cookie))
            }
            return .challenge(entries)
        case .response:
            guard let id = c.u64(), let inc = c.u64(), let cookie = c.u64() else { return nil }
            return .response(challenger: Member(id: PeerID(id), incarnation: inc), cookie: cookie)
        case .listen:
            guard let viewID = c.u64(), viewID <= viewIDMax, let viewKey = c.u64(), let server = c.u64(),
                  let flag = c.u8(), flag <= 1 else { return nil }
            return .listen(viewID: viewID, viewKey: viewKey, server: PeerID(server), wantsSync: flag == 1)
        case .sync:
            guard let viewID = c.u64(), viewID > 0, viewID <= viewIDMax, let viewKey = c.u64(),
                  let snapshotSeq = c.u64(), snapshotSeq > 0, snapshotSeq <= seqMax,
                  let n = c.count(max: membersMax), n > 0 else { return nil }
            var entries: [SyncEntry] = []
            for _ in 0..<n {
                guard let id = c.u64(), let inc = c.u64(), let delivered = c.u64(), delivered <= seqMax,
                      !entries.contains(where: { $0.member.id.raw == id }) else { return nil }
                entries.append(SyncEntry(member: Member(id: PeerID(id), incarnation: inc), delivered: delivered))
            }
            return .sync(viewID: viewID, viewKey: viewKey, snapshotSeq: snapshotSeq, entries: entries)
        }
    }

    private static func decodePairs(_ c: inout BigEndianByteReader) -> [(PeerID, UInt64)]? {
        guard let n = c.count(max: membersMax) else { return nil }
        var pairs: [(PeerID, UInt64)] = []
        for _ in 0..<n {
            guard let peer = c.u64(), let seq = c.u64(), seq <= seqMax, !pairs.contains(where: { $0.0.raw == peer }) else { return nil }
            pairs.append((PeerID(peer), seq))
        }
        return pairs
    }

    private static func decodeMembers(_ c: inout BigEndianByteReader) -> [Member]? {
        guard let n = c.count(max: membersMax) else { return nil }
        var members: [Member] = []
        for _ in 0..<n {
            guard let peer = c.u64(), let inc = c.u64(), !members.contains(where: { $0.id.raw == peer }) else { return nil }
            members.append(Member(id: PeerID(peer), incarnation: inc))
        }
        return members
    }
}

/// CRC-32C (Castagnoli, reflected, polynomial 0x82F63B78): the trailer of version 4. By the
/// processor's CRC instruction where it has one, else a table of 256 entries (`CEggsChecksum`).
enum CRC32C {
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { eggs_crc32c($0.baseAddress, $0.count) }
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 { checksum(bytes[...]) }

    /// The same by the table alone, on any processor.
    static func portableChecksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { eggs_crc32c_portable($0.baseAddress, $0.count) }
    }
}

/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), slicing by 8 bytes: the trailer of
/// version 3, checked only to report a version-3 peer as incompatible.
enum CRC32 {
    /// Eight tables of 256 entries, one after another: table k advances a byte by k more bytes.
    static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for n in 0..<256 {
            var c = UInt32(n)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            t[n] = c
        }
        for k in 1..<8 {
            for n in 0..<256 {
                let previous = t[(k - 1) * 256 + n]
                t[k * 256 + n] = (previous >> 8) ^ t[Int(previous & 0xFF)]
            }
        }
        return t
    }()

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        tables.withUnsafeBufferPointer { t in
            bytes.withUnsafeBytes { raw in
                var i = 0
                let count = raw.count
                while i + 8 <= count {
                    let one = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt32.self)) ^ crc
                    let two = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i + 4, as: UInt32.self))
                    crc = t[7 * 256 + Int(one & 0xFF)] ^ t[6 * 256 + Int((one >> 8) & 0xFF)]
                        ^ t[5 * 256 + Int((one >> 16) & 0xFF)] ^ t[4 * 256 + Int(one >> 24)]
                        ^ t[3 * 256 + Int(two & 0xFF)] ^ t[2 * 256 + Int((two >> 8) & 0xFF)]
                        ^ t[256 + Int((two >> 16) & 0xFF)] ^ t[Int(two >> 24)]
                    i += 8
                }
                while i < count {
                    crc = t[Int((crc ^ UInt32(raw[i])) & 0xFF)] ^ (crc >> 8)
                    i += 1
                }
            }
        }
        return crc ^ 0xFFFF_FFFF
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 { checksum(bytes[...]) }
}
