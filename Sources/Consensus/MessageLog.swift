import Crypto
import EggPrimitives
import PeerNet
import EggGame

/// The message log (docs/formats.md): JSON Lines. A header line, then one line per delivered message
/// (in delivery order, the peer's own included) and one per view change, and an end line when
/// the peer closed it:
///
///     {"format":"eggs-log","version":3,"peer":"<16 hex>","room":"eggs","rules":"sfe","d":"<32 hex>"}
///     {"at":<µs>,"view":{"id":1,"members":["<hex>",...],"joined":[...],"departed":[...],"key":"<16 hex>"},"d":"…"}
///     {"from":"<hex>","seq":1,"at":<µs>,"msg":{"type":"hello",...},"d":"…"}
///     {"at":<µs>,"abandoned":{"view":3},"d":"…"}
///     {"at":<µs>,"end":{"lines":N},"d":"…"}
///
/// Every line ends in `"d"`, a running digest of the log up to and including that line (see
/// ``LogDigest``), so a duplicated, missing, reordered, edited or spliced line breaks the chain at
/// the first damaged line. A payload that does not decode is logged as
/// `{"type":"invalid","bytes":"<hex>"}` so a replay counts it the same way.
///
/// Limits a reader enforces (a line past one is damage): a line of at most
/// ``LogReader/lineBytesMax`` bytes, JSON nested at most 32 deep, a room of at most
/// ``roomBytesMax`` bytes, a rule-set name of at most ``MatchMessage/rulesBytesMax``, a view of at
/// most ``viewMembersMax`` members with no peer listed twice, an invalid payload of at most
/// ``MatchMessage/bytesMax`` bytes, and every message within ``MatchMessage/isValid`` and, in its
/// binary encoding, within ``MatchMessage/bytesMax`` bytes (what a peer could have received).
public enum MessageLog {
    public static let format = "eggs-log"
    /// 2: every line carries the running digest `"d"` and a closed log ends with an `"end"` line.
    /// 3: the same lines, recorded with `sfe`'s chain timing of Super Foul Egg's runner (a pop's
    /// fall starting 2 ticks later, only an incoming batch's garbage falling every tick, no bounce
    /// for garbage placed at rest): the ticks and checkpoints of a version 2 log no longer replay.
    public static let version = 3
    public static let roomBytesMax = 64
    public static let viewMembersMax = 256

    /// The header line (without its digest; see ``LogDigest/seal(_:)``): the rule set and the
    /// starting height the recording peer offered (`"height"` omitted when 0, so a header of a
    /// peer without one reads as before). The match's agreed settings are in its `start` lines.
    /// - Parameter receiver: the log of a spectator, which follows the players' views without
    ///   being in them (`"receiver": true`; see ``DeliveryOrder``).
    public static func header(peer: PeerID, room: String, rules: String = "sfe", startingHeight: Int = 0, receiver: Bool = false) -> String {
        JSONValue.object([("format", .string(format)), ("version", .int(Int64(version))), ("peer", .string(peer.hex)),
                          ("room", .string(room)), ("rules", .string(rules))]
                         + (startingHeight == 0 ? [] : [("height", .int(Int64(startingHeight)))])
                         + (receiver ? [("receiver", .bool(true))] : [])).serialized
    }

    /// The last line of a log its peer closed (without its digest): `lines` counts the lines
    /// before it, header included.
    public static func end(lines: Int, atMicroseconds: Int64) -> String {
        JSONValue.object([("at", .int(atMicroseconds)), ("end", .object([("lines", .int(Int64(lines)))]))]).serialized
    }

    /// The line of one PeerNet event (`nil` for events that are not logged), without its digest.
    /// - Parameter atMicroseconds: wall-clock microseconds since the Unix epoch.
    public static func line(for event: PeerNetEvent, atMicroseconds: Int64) -> String? {
        switch event {
        case .delivered(let d):
            let msg = MatchMessage.decode(d.payload)?.json
                ?? .object([("type", .string("invalid")), ("bytes", .string(d.payload.map { hex2($0) }.joined()))])
            return JSONValue.object([("from", .string(d.from.hex)), ("seq", .int(Int64(bitPattern: d.seq))),
                                     ("at", .int(atMicroseconds)), ("msg", msg)]).serialized
        case .viewChanged(let v):
            let ids: ([PeerID]) -> JSONValue = { .array($0.map { .string($0.hex) }) }
            return JSONValue.object([("at", .int(atMicroseconds)), ("view", .object([
                ("id", .int(Int64(bitPattern: v.id))), ("members", ids(v.members)), ("joined", ids(v.joined)),
                ("departed", ids(v.departed)), ("key", .string(PeerID(v.key).hex)),
            ]))]).serialized
        case .viewAbandoned(let v):
            // PeerNet gave the view up: the peer's part of the match ends here (a rival of two
            // lost is decided at this point, see `MatchPeer.abandonView`), so a replay needs it.
            return JSONValue.object([("at", .int(atMicroseconds)), ("abandoned", .object([("view", .int(Int64(bitPattern: v.id)))]))]).serialized
        case .incompatible, .lagging, .incarnationEnded, .resumedAfterPause, .idCollision, .receiversWaiting:
            return nil
        }
    }

    /// Seals a whole list of unsealed lines (header first) into log text, one line each.
    public static func sealed(_ lines: [String], passphrase: String? = nil) -> String {
        var digest = LogDigest(passphrase: passphrase)
        return lines.map { digest.seal($0) + "\n" }.joined()
    }

    static func hex2(_ byte: UInt8) -> String {
        let s = String(byte, radix: 16)
        return s.count == 1 ? "0" + s : s
    }
}

/// The running digest of a log: line n carries `d(n) = F(d(n-1) ‖ line n without its "d")`,
/// truncated to 16 bytes, with `d(0)` all zeros. In a passphrase room F is HMAC-SHA256 keyed by
/// SHA-256 of "eggs-log-v2", a NUL and the passphrase, so only a holder of the passphrase can
/// write a log that verifies with it; without one F is SHA-256 of "eggs-log-v2" and its input
/// (anyone could recompute that chain, so a keyed HMAC would add nothing but time).
/// Sans-I/O: ``seal(_:)`` for the writer, ``check(_:)`` for the reader.
///
/// `@unchecked Sendable`: the keyed HMAC state is a value (swift-crypto copies its digest context
/// on write) that is only ever copied, never mutated in place, so sharing it is safe; it is kept
/// ready-keyed because re-keying every line would cost two extra SHA-256 blocks a line.
public struct LogDigest: @unchecked Sendable {
    /// Digest bytes kept per line.
    public static let bytes = 16
    /// `,"d":"` + 32 hex digits + `"}`: what sealing adds in place of the closing brace.
    static let suffixBytes = 6 + 2 * bytes + 2
    private static let domain = Array("eggs-log-v2".utf8)
    /// `nil` without a passphrase (a plain SHA-256 chain).
    private let mac: HMAC<SHA256>?
    private var previous = [UInt8](repeating: 0, count: LogDigest.bytes)
    /// (domain ‖) previous ‖ body ‖ "}" in one contiguous buffer, reused: swift-crypto's generic
    /// `update` is not specialised across modules, so one call a line instead of three matters.
    private var scratch: [UInt8] = []

    public init(passphrase: String?) {
        guard let passphrase, !passphrase.isEmpty else {
            mac = nil
            return
        }
        let key = SymmetricKey(data: SHA256.hash(data: LogDigest.domain + [0] + Array(passphrase.utf8)))
        mac = HMAC<SHA256>(key: key)
    }

    /// The digest of the next line, `body` (plus a closing brace when `closing`), handed to
    /// `use` (its first ``bytes`` bytes count) without copying it into an array.
    private mutating func next<R>(_ body: ArraySlice<UInt8>, closing: Bool, _ use: (UnsafeRawBufferPointer) -> R) -> R {
        scratch.removeAll(keepingCapacity: true)
        if mac == nil { scratch.append(contentsOf: LogDigest.domain) }
        scratch.append(contentsOf: previous)
        scratch.append(contentsOf: body)
        if closing { scratch.append(UInt8(ascii: "}")) }
        guard var m = mac else {
            var hash = SHA256()
            scratch.withUnsafeBytes { hash.update(bufferPointer: $0) }
            return hash.finalize().withUnsafeBytes(use)
        }
        m.update(data: scratch)
        let code = m.finalize()
        return code.withUnsafeBytes(use)
    }

    /// The digest of the last line sealed or checked, in hex (32 zeros before the first): the
    /// `"d"` that line carries, which names the log up to that line.
    public var hex: String { previous.map { MessageLog.hex2($0) }.joined() }

    /// `body` (one JSON object) with its digest `"d"` as the last key.
    public mutating func seal(_ body: String) -> String {
        precondition(body.hasPrefix("{") && body.hasSuffix("}"), "a log line is one JSON object")
        let digest = next(Array(body.utf8)[...], closing: false) { Array($0.prefix(LogDigest.bytes)) }
        previous = digest
        let hex = digest.map { MessageLog.hex2($0) }.joined()
        return String(body.dropLast()) + ",\"d\":\"" + hex + "\"}"
    }

    /// Whether `line` ends in the digest that follows the lines checked before it (it then
    /// becomes the previous digest). A line without a digest does not check.
    public mutating func check(_ line: ArraySlice<UInt8>) -> Bool {
        guard line.count > LogDigest.suffixBytes + 1 else { return false }
        let cut = line.endIndex - LogDigest.suffixBytes
        let prefix: StaticString = ",\"d\":\""
        let shaped = prefix.withUTF8Buffer { p in (0..<p.count).allSatisfy { line[cut + $0] == p[$0] } }
            && line[line.endIndex - 2] == UInt8(ascii: "\"") && line[line.endIndex - 1] == UInt8(ascii: "}")
        guard shaped else { return false }
        var computed = (UInt64(0), UInt64(0))
        next(line[line.startIndex..<cut], closing: true) { digest in
            withUnsafeMutableBytes(of: &computed) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: digest[0..<LogDigest.bytes])) }
        }
        // The written digest is compared with the computed one written out in hex, in place: a
        // digit that is not lowercase hex fails as a mismatch does. No branch on the digits'
        // values (a hex digit parsed back branches on each of them, unpredictably).
        let matches = withUnsafeBytes(of: computed) { digest in
            line.withUnsafeBufferPointer { bytes in
                let written = cut - line.startIndex + 6
                var differ: UInt8 = 0
                for index in 0..<LogDigest.bytes {
                    differ |= bytes[written + 2 * index] ^ Self.hexDigit(digest[index] >> 4)
                    differ |= bytes[written + 2 * index + 1] ^ Self.hexDigit(digest[index] & 0x0f)
                }
                return differ == 0
            }
        }
        guard matches else { return false }
        withUnsafeBytes(of: computed) { digest in
            for index in 0..<LogDigest.bytes { previous[index] = digest[index] }
        }
        return true
    }

    /// The lowercase hex digit of `nibble` (0...15), without a branch.
    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        // '0' + n, and 39 more past 9 ('a' is '0' + 49): the mask is all ones when n > 9.
        let over9 = UInt8(truncatingIfNeeded: Int8(bitPattern: 9 &- nibble) >> 7)
        return UInt8(ascii: "0") &+ nibble &+ (over9 & 39)
    }
}

/// Why a log could not be read. `line` is 1-based.
public struct ReplayError: Error, Hashable, Sendable, CustomStringConvertible {
    public var line: Int
    public var reason: String
    public var description: String { "line \(line): \(reason)" }
}

/// What ``LogReader/nextEvent()`` returns.
public enum LogReaderEvent: Hashable, Sendable {
    case header(peer: PeerID, room: String, rules: String)
    case event(PeerNetEvent, atMicroseconds: Int64, line: Int)
    /// More bytes are needed (call ``LogReader/receive(_:)`` or ``LogReader/finish()``).
    case needData
    /// The log ended with an incomplete line (the recorder stopped mid-write); reading stops there.
    case truncated(line: Int)
    /// The end line of a log its peer closed; nothing may follow it.
    case closed(line: Int)
    case end
}

/// Reads a log h11-style: ``receive(_:)`` buffers bytes, ``nextEvent()`` checks and parses one
/// line at a time. Every value is checked against its limit before use (see ``MessageLog``);
/// a violation is a ``ReplayError`` naming the line. The common lines (`inputs`, `checkpoint`
/// and `votes` messages exactly as the writer writes them) are read in place by
/// ``messageLine(_:)``; every other line, and any such line written otherwise, by the JSON
/// reader, to the same event or error.
public struct LogReader: Sendable {
    private var buffer: [UInt8] = []
    private var offset = 0
    private var lineNumber = 0
    private var isFinished = false
    private var sawHeader = false
    /// The header says the log is a receiver's (a spectator's).
    private var headerReceiver = false
    private var sawEnd = false
    private var done = false
    private var digest: LogDigest
    private let keyed: Bool
    /// Whether the common message lines, as the writer writes them, are read in place
    /// (``messageLine(_:)``); off only in tests, which compare the two ways of reading.
    var readsInPlace = true
    /// Lines read in place so far.
    private(set) var linesReadInPlace = 0
    /// The delivery order the lines so far make (from the header on).
    private var order: DeliveryOrder?
    /// Deliveries whose place in the delivery order was checked.
    public var deliveriesChecked: Int { order?.checkedDeliveries ?? 0 }
    /// Whole lines read so far (a cut-off last line not counted).
    public var linesRead: Int { lineNumber }
    /// The digest (hex) of the last line read: it names the log up to that line.
    public var lastDigest: String { digest.hex }

    /// Lines longer than this are corrupt.
    public static let lineBytesMax = 1 << 16

    /// - Parameter passphrase: the room's passphrase, for a log written in a passphrase room.
    public init(passphrase: String? = nil) {
        let key = passphrase.flatMap { $0.isEmpty ? nil : $0 }
        digest = LogDigest(passphrase: key)
        keyed = key != nil
    }

    public mutating func receive(_ bytes: some Sequence<UInt8>) {
        precondition(!isFinished, "receive after finish")
        // The lines read are dropped first: what is left is at most a line's start, so the buffer
        // stays the size of what is fed at once (a whole log is never held, nor moved).
        if offset > 0 {
            buffer.removeFirst(offset)
            offset = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// No more bytes will come.
    public mutating func finish() { isFinished = true }

    public mutating func nextEvent() throws(ReplayError) -> LogReaderEvent {
        if done { return .end }
        guard let newline = Self.newline(in: buffer, from: offset) else {
            if buffer.count - offset > Self.lineBytesMax { throw ReplayError(line: lineNumber + 1, reason: "line too long") }
            guard isFinished else { return .needData }
            done = true
            let rest = buffer[offset...]
            offset = buffer.count
            guard !rest.isEmpty else {
                if !sawHeader { throw ReplayError(line: 1, reason: "empty log: no eggs-log header") }
                return .end
            }
            lineNumber += 1
            // A last line without its newline: a whole sealed line is accepted, anything else
            // is a cut-off line (the recorder stopped mid-write).
            var probe = digest
            if sawEnd { throw ReplayError(line: lineNumber, reason: "a line after the end of the log") }
            if probe.check(rest) { return try parse(rest) }
            if !sawHeader { throw ReplayError(line: lineNumber, reason: "the header line is cut off (or is no eggs-log header)") }
            return .truncated(line: lineNumber)
        }
        let line = buffer[offset..<newline]
        offset = newline + 1
        lineNumber += 1
        if line.count > Self.lineBytesMax { throw ReplayError(line: lineNumber, reason: "line too long") }
        return try parse(line)
    }

    private func damaged(_ reason: String) -> ReplayError { ReplayError(line: lineNumber, reason: reason) }

    /// The index of the first newline in `bytes` from `start`, eight bytes at a time.
    static func newline(in bytes: [UInt8], from start: Int) -> Int? {
        bytes.withUnsafeBytes { raw in
            var index = start
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            while index + 8 <= raw.count {
                // A zero byte of `word ^ newlines` is a newline; the has-zero-byte test tells
                // whether the word holds one (not which: the bytes are then read one by one).
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ (ones &* 0x0a)
                if (word &- ones) & ~word & highs != 0 { break }
                index += 8
            }
            while index < raw.count {
                if raw[index] == 0x0a { return index }
                index += 1
            }
            return nil
        }
    }

    /// One line: read (``parseLine(_:)``), then checked as a step of a delivery order
    /// (``DeliveryOrder``), which the digest alone does not prove without a passphrase.
    private mutating func parse(_ bytes: ArraySlice<UInt8>) throws(ReplayError) -> LogReaderEvent {
        let event = try parseLine(bytes)
        switch event {
        case .header(let peer, _, _):
            order = DeliveryOrder(recorder: peer, receiver: headerReceiver)
        case .event(.delivered(let delivery), _, _):
            if let breach = order?.delivery(from: delivery.from, seq: delivery.seq) { throw damaged(breach) }
        case .event(.viewChanged(let view), _, _):
            if let breach = order?.view(view) { throw damaged(breach) }
        default:
            break
        }
        return event
    }

    private mutating func parseLine(_ bytes: ArraySlice<UInt8>) throws(ReplayError) -> LogReaderEvent {
        if sawEnd { throw damaged("a line after the end of the log") }
        if !digest.check(bytes) {
            if !sawHeader && bytes.first == UInt8(ascii: "{") && bytes.contains(UInt8(ascii: "d")) {
                throw damaged(keyed ? "the header's digest does not match: a wrong passphrase, or the log was not written with one"
                                    : "the header's digest does not match: the log was written with a passphrase (give it), or the header was edited")
            }
            if !sawHeader { throw damaged("missing eggs-log header (or the header was edited)") }
            throw damaged("the line's digest does not match: this line was edited, or a line before it is missing, duplicated, out of order or from another log")
        }
        // Nearly every line is an `inputs`, `checkpoint` or `votes` message as the writer writes
        // it: read in place.
        if sawHeader, readsInPlace, let fast = bytes.withUnsafeBufferPointer({
            Self.messageLine(UnsafeBufferPointer(rebasing: $0[..<($0.count - LogDigest.suffixBytes)]))
        }) {
            let payload = fast.message.encoded()
            if payload.count <= MatchMessage.bytesMax {
                let delivery = Delivery(from: PeerID(fast.from), seq: UInt64(bitPattern: fast.seq), payload: payload)
                linesReadInPlace += 1
                return .event(.delivered(delivery), atMicroseconds: fast.at, line: lineNumber)
            }
        }
        let json: JSONValue
        do {
            json = try JSONValue.decode(bytes: Array(bytes))
        } catch {
            throw damaged("not JSON: \(error)")
        }
        guard case .object = json else { throw damaged("not a JSON object") }
        if !sawHeader { return try header(json) }
        guard let at = json["at"]?.intValue, at >= 0 else { throw damaged("missing or negative \"at\"") }
        if let end = json["end"] {
            guard end["lines"]?.intValue == Int64(lineNumber - 1) else { throw damaged("the end line counts other lines") }
            sawEnd = true
            return .closed(line: lineNumber)
        }
        if let v = json["view"] { return .event(.viewChanged(try view(v)), atMicroseconds: at, line: lineNumber) }
        if let abandoned = json["abandoned"] {
            // The view given up: only its ID is logged (the view line before it has the rest).
            guard let id = abandoned["view"]?.intValue else { throw damaged("bad abandoned line: no view ID") }
            return .event(.viewAbandoned(MembershipView(id: UInt64(bitPattern: id), members: [])), atMicroseconds: at, line: lineNumber)
        }
        guard let from = parseHex16(json["from"]?.stringValue), let seq = json["seq"]?.intValue,
              let msg = json["msg"] else { throw damaged("bad message line") }
        let payload: [UInt8]
        if msg["type"]?.stringValue == "invalid" {
            guard let hex = msg["bytes"]?.stringValue, hex.utf8.count <= 2 * MatchMessage.bytesMax,
                  let bytes = Self.parseHexBytes(hex) else {
                throw damaged("bad invalid-payload bytes")
            }
            payload = bytes
        } else {
            guard let message = MatchMessage(json: msg) else {
                throw damaged("bad \"msg\" (a field missing or out of its limits)")
            }
            payload = message.encoded()
            // Every field within its limit, yet too big for one datagram: no peer received it.
            guard payload.count <= MatchMessage.bytesMax else {
                throw damaged("a message of \(payload.count) bytes on the wire, over a datagram's \(MatchMessage.bytesMax)")
            }
        }
        let delivery = Delivery(from: PeerID(from), seq: UInt64(bitPattern: seq), payload: payload)
        return .event(.delivered(delivery), atMicroseconds: at, line: lineNumber)
    }

    private mutating func header(_ json: JSONValue) throws(ReplayError) -> LogReaderEvent {
        guard json["format"]?.stringValue == MessageLog.format else { throw damaged("missing eggs-log header") }
        if json["version"]?.intValue == 2 {
            throw damaged("log version 2 was recorded with the chain timing before version 3; this build replays version 3 only")
        }
        guard let version = json["version"]?.intValue, version == Int64(MessageLog.version) else {
            throw damaged("unsupported log version \(json["version"]?.serialized ?? "none") (this build reads \(MessageLog.version))")
        }
        guard let peer = parseHex16(json["peer"]?.stringValue), let room = json["room"]?.stringValue,
              room.utf8.count <= MessageLog.roomBytesMax else {
            throw damaged("header lacks peer or room, or the room is over \(MessageLog.roomBytesMax) bytes")
        }
        let rules = json["rules"]?.stringValue ?? "sfe"
        guard rules.utf8.count <= MatchMessage.rulesBytesMax else { throw damaged("header's rules over \(MatchMessage.rulesBytesMax) bytes") }
        // The log replays with the engine of the rule set it names; one this build lacks cannot replay.
        guard let ruleSet = RuleSet.named(rules) else { throw damaged("unknown rule set '\(rules)' (this build plays \(RuleSet.names))") }
        if let height = json["height"] {
            guard let value = height.intValue, ruleSet.startingHeights.contains(Int(value)) else {
                throw damaged("header's height \(height.serialized) is not a starting height of \(rules) (\(ruleSet.startingHeights))")
            }
        }
        if let flag = json["receiver"] {
            guard let value = flag.boolValue else { throw damaged("header's receiver \(flag.serialized) is not true or false") }
            headerReceiver = value
        }
        sawHeader = true
        return .header(peer: PeerID(peer), room: room, rules: rules)
    }

    /// A view line: at most ``MessageLog/viewMembersMax`` members, none twice; joiners among the
    /// members; departed ones not.
    private func view(_ v: JSONValue) throws(ReplayError) -> MembershipView {
        func ids(_ key: String) throws(ReplayError) -> [PeerID] {
            guard let raw = v[key]?.arrayValue, raw.count <= MessageLog.viewMembersMax else {
                throw damaged("bad view: \"\(key)\" missing or over \(MessageLog.viewMembersMax) peers")
            }
            let peers = raw.compactMap { parseHex16($0.stringValue) }.map(PeerID.init)
            guard peers.count == raw.count else { throw damaged("bad view: \"\(key)\" holds something not a peer ID") }
            guard Set(peers).count == peers.count else { throw damaged("bad view: \"\(key)\" names a peer twice") }
            return peers
        }
        guard let id = v["id"]?.intValue, id > 0 else { throw damaged("bad view: no positive \"id\"") }
        let members = try ids("members"), joined = try ids("joined"), departed = try ids("departed")
        let set = Set(members)
        guard joined.allSatisfy(set.contains) else { throw damaged("bad view: a joiner that is not a member") }
        guard !departed.contains(where: set.contains) else { throw damaged("bad view: a departed peer that is a member") }
        // The view key (it tells apart views that share an id) is optional: 0 when absent.
        var key: UInt64 = 0
        if let text = v["key"] {
            guard let parsed = parseHex16(text.stringValue) else { throw damaged("bad view: \"key\" is not 16 hex digits") }
            key = parsed
        }
        return MembershipView(id: UInt64(id), members: members, joined: joined, departed: departed, key: key)
    }

    /// Pairs of hex digits; nil for anything else. Digits only: `UInt8(_:radix:)` alone also
    /// takes a sign, so the pairs "+f" and "-0" read as bytes 0x0f and 0x00.
    static func parseHexBytes(_ hex: String) -> [UInt8]? {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0, utf8.allSatisfy(isHexDigit) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        for i in stride(from: 0, to: utf8.count, by: 2) {
            guard let byte = UInt8(String(decoding: utf8[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(byte)
        }
        return out
    }
}

/// The result of `replay --verify` (docs/formats.md).
public struct ReplayReport: Sendable {
    public var ok: Bool
    public var messages: Int
    public var checkpoints: Int
    public var players: [PeerID: (pairs: UInt32, hash: UInt64)]
    public var decisions: [UInt64]
    /// Every decided round with its game (round namespace), so logs that start at different
    /// points (a peer that restarted or joined late) can be compared where they overlap.
    public var decidedRounds: [(game: UInt32, round: Int, value: UInt64)] = []
    public var desyncs: [Desync]
    /// Set when the log ended mid-line.
    public var truncatedAtLine: Int?
    /// The log ends with its end line (its peer closed it); false for a crashed peer's log.
    public var complete = false
    /// Deliveries whose place in a delivery order was checked (``DeliveryOrder``): every message
    /// line of a log that verifies. 0 says the log held nothing to check but its digests.
    public var orderChecked = 0
    /// The digest of the log's last whole line (hex): it names the log as replayed.
    public var lastDigest = ""
    /// The log's last whole line.
    public var lines = 0

    public var rounds: Int { decisions.count }

    /// The one-line JSON of `replay --verify`.
    public var json: String {
        var pairs: [(String, JSONValue)] = [
            ("ok", .bool(ok)), ("messages", .int(Int64(messages))), ("checkpoints", .int(Int64(checkpoints))),
            ("players", .object(players.sorted { $0.key < $1.key }.map { id, last in
                (id.hex, .object([("pairs", .int(Int64(last.pairs))), ("hash", .string(hex16(last.hash)))]))
            })),
            ("rounds", .int(Int64(rounds))), ("decisions", .array(decisions.map { .string(hex16($0)) })),
        ]
        if let first = desyncs.first { pairs.append(("mismatch", .string(first.description))) }
        if let line = truncatedAtLine { pairs.append(("truncatedAtLine", .int(Int64(line)))) }
        pairs.append(("complete", .bool(complete)))
        pairs.append(("orderChecked", .int(Int64(orderChecked))))
        return JSONValue.object(pairs).serialized
    }
}

/// Where a replay stands when the replica reports a match event: the log's line that caused it,
/// that line's `at` and its digest (which names the log up to that line).
public struct ReplayPosition: Sendable {
    public var line: Int
    public var atMicroseconds: Int64
    public var digest: String
}

/// Replays a log through the same replica logic and verifies every checkpoint.
public struct Replay {
    private var reader: LogReader
    private var peer: MatchPeer?
    /// Called with every match event of the replica but the frequent ones (rounds decided,
    /// checkpoints verified), after the line that caused it, with the replica as it stands then
    /// (for a match history: what the log proves about each match).
    public var observer: ((MatchEvent, inout MatchPeer, ReplayPosition) -> Void)?
    /// The header of the log once read (its peer, room and rule set).
    public private(set) var header: (peer: PeerID, room: String, rules: String)?
    private var messages = 0
    private var desyncs: [Desync] = []
    private var truncatedAt: Int?
    private var complete = false

    /// - Parameter passphrase: the room's passphrase, for a log written in a passphrase room.
    public init(passphrase: String? = nil) { reader = LogReader(passphrase: passphrase) }

    /// Replays a whole log text.
    /// - Throws: ``ReplayError`` naming the 1-based line of a corrupt line.
    public static func verify(_ text: String, passphrase: String? = nil) throws(ReplayError) -> ReplayReport {
        var replay = Replay(passphrase: passphrase)
        try replay.receive(Array(text.utf8))
        return try replay.finish()
    }

    /// Feeds bytes and replays every complete line.
    public mutating func receive(_ bytes: [UInt8]) throws(ReplayError) {
        try receive(bytes[...])
    }

    /// Feeds bytes (a slice of a read buffer, not copied first) and replays every complete line.
    public mutating func receive(_ bytes: ArraySlice<UInt8>) throws(ReplayError) {
        reader.receive(bytes)
        try drain()
    }

    /// Ends the input and returns the report.
    public mutating func finish() throws(ReplayError) -> ReplayReport {
        reader.finish()
        try drain()
        let stats = peer?.stats ?? MatchStats()
        return ReplayReport(
            ok: desyncs.isEmpty, messages: messages, checkpoints: stats.checkpointsVerified + stats.desyncs - stats.garbageOverdraws,
            players: peer?.lastCheckpoints ?? [:], decisions: peer?.decisionsLog.map(\.value) ?? [],
            decidedRounds: peer?.decisionsLog ?? [], desyncs: desyncs, truncatedAtLine: truncatedAt, complete: complete,
            orderChecked: reader.deliveriesChecked, lastDigest: reader.lastDigest, lines: truncatedAt.map { $0 - 1 } ?? reader.linesRead)
    }

    private mutating func drain() throws(ReplayError) {
        while true {
            switch try reader.nextEvent() {
            case .needData, .end: return
            case .truncated(let line):
                truncatedAt = line
                return
            case .closed:
                complete = true
            case .header(let id, let room, let rules):
                header = (id, room, rules)
                var config = MatchPeerConfig(id: id, name: "replay", role: .spectator, voteSeed: 0)
                config.eventsMax = 1 << 20
                var replica = MatchPeer(config: config)
                replica.keepsDecisions = true
                peer = replica
            case .event(let event, let at, let line):
                if case .delivered = event { messages += 1 }
                // The reader yields the header before any event (`sawHeader`), so the replica exists.
                precondition(peer != nil, "a log's events follow its header")
                peer?.handle(event, now: NetTime(nanoseconds: UInt64(max(0, at)) &* 1_000))
                guard let observer else {
                    peer?.drainOutputs { if case .desync(let d) = $0 { desyncs.append(d) } }
                    continue
                }
                var observed: [MatchEvent] = []
                peer?.drainOutputs { event in
                    switch event {
                    case .desync(let d):
                        desyncs.append(d)
                        observed.append(event)
                    case .roundsDecided, .checkpointVerified: break
                    default: observed.append(event)
                    }
                }
                if !observed.isEmpty {
                    let position = ReplayPosition(line: line, atMicroseconds: at, digest: reader.lastDigest)
                    for event in observed { observer(event, &peer!, position) }
                }
            }
        }
    }
}
