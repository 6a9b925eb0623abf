import PeerNet

/// The message log (SPEC §5): JSON Lines. A header line, then one line per delivered message
/// (in delivery order, the peer's own included) and one per view change.
///
///     {"format":"eggs-log","version":1,"peer":"<16 hex>","room":"eggs","rules":"sfe"}
///     {"at":<µs>,"view":{"id":1,"members":["<hex>",...],"joined":[...],"departed":[...],"key":"<16 hex>"}}
///     {"from":"<hex>","seq":1,"at":<µs>,"msg":{"type":"hello",...}}
///
/// A payload that does not decode is logged as `{"type":"invalid","bytes":"<hex>"}` so a replay
/// counts it the same way.
public enum MessageLog {
    public static let format = "eggs-log"
    public static let version = 1

    public static func header(peer: PeerID, room: String, rules: String = "sfe") -> String {
        JSONValue.object([("format", .string(format)), ("version", .int(Int64(version))), ("peer", .string(peer.hex)),
                          ("room", .string(room)), ("rules", .string(rules))]).serialized
    }

    /// The line of one PeerNet event (`nil` for events that are not logged).
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
        case .incompatible, .lagging, .incarnationEnded, .viewAbandoned:
            return nil
        }
    }

    static func hex2(_ byte: UInt8) -> String {
        let s = String(byte, radix: 16)
        return s.count == 1 ? "0" + s : s
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
    case end
}

/// Reads a log h11-style: ``receive(_:)`` buffers bytes, ``nextEvent()`` parses one line at a time.
public struct LogReader: Sendable {
    private var buffer: [UInt8] = []
    private var offset = 0
    private var lineNumber = 0
    private var isFinished = false
    private var sawHeader = false
    private var done = false

    /// Lines longer than this are corrupt.
    public static let lineBytesMax = 1 << 16

    public init() {}

    public mutating func receive(_ bytes: some Sequence<UInt8>) {
        precondition(!isFinished, "receive after finish")
        buffer.append(contentsOf: bytes)
    }

    /// No more bytes will come.
    public mutating func finish() { isFinished = true }

    public mutating func nextEvent() throws(ReplayError) -> LogReaderEvent {
        while true {
            if done { return .end }
            guard let newline = buffer[offset...].firstIndex(of: 0x0a) else {
                if buffer.count - offset > Self.lineBytesMax { throw ReplayError(line: lineNumber + 1, reason: "line too long") }
                guard isFinished else { return .needData }
                done = true
                let rest = Array(buffer[offset...])
                offset = buffer.count
                if rest.allSatisfy({ $0 == 0x20 || $0 == 0x0d || $0 == 0x09 }) { return .end }
                lineNumber += 1
                // A last line without its newline: complete JSON is accepted, anything else is truncation.
                guard let event = try? parse(rest) else { return .truncated(line: lineNumber) }
                return event
            }
            let line = Array(buffer[offset..<newline])
            offset = newline + 1
            if offset > 1 << 20 { buffer.removeFirst(offset); offset = 0 }
            lineNumber += 1
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x0d || $0 == 0x09 }) { continue }
            return try parse(line)
        }
    }

    private mutating func parse(_ bytes: [UInt8]) throws(ReplayError) -> LogReaderEvent {
        guard let json = JSONValue.parse(bytes: bytes) else {
            throw ReplayError(line: lineNumber, reason: "not a JSON object")
        }
        if !sawHeader {
            guard json["format"]?.stringValue == MessageLog.format else {
                throw ReplayError(line: lineNumber, reason: "missing eggs-log header")
            }
            guard json["version"]?.intValue == Int64(MessageLog.version) else {
                throw ReplayError(line: lineNumber, reason: "unsupported log version")
            }
            guard let peer = parseHex16(json["peer"]?.stringValue), let room = json["room"]?.stringValue else {
                throw ReplayError(line: lineNumber, reason: "header lacks peer or room")
            }
            sawHeader = true
            return .header(peer: PeerID(peer), room: room, rules: json["rules"]?.stringValue ?? "sfe")
        }
        guard let at = json["at"]?.intValue else { throw ReplayError(line: lineNumber, reason: "missing \"at\"") }
        if let v = json["view"] {
            let ids: (String) -> [PeerID]? = { key in
                guard let raw = v[key]?.arrayValue else { return nil }
                let peers = raw.compactMap { parseHex16($0.stringValue) }.map(PeerID.init)
                return peers.count == raw.count ? peers : nil
            }
            guard let id = v["id"]?.intValue, let members = ids("members"), let joined = ids("joined"),
                  let departed = ids("departed") else { throw ReplayError(line: lineNumber, reason: "bad view") }
            // The key (it numbers the games of a room founded in this view) is absent from older logs: 0.
            var key: UInt64 = 0
            if let text = v["key"]?.stringValue {
                guard let parsed = parseHex16(text) else { throw ReplayError(line: lineNumber, reason: "bad view key") }
                key = parsed
            }
            let view = MembershipView(id: UInt64(bitPattern: id), members: members, joined: joined, departed: departed, key: key)
            return .event(.viewChanged(view), atMicroseconds: at, line: lineNumber)
        }
        guard let from = parseHex16(json["from"]?.stringValue), let seq = json["seq"]?.intValue,
              let msg = json["msg"] else { throw ReplayError(line: lineNumber, reason: "bad message line") }
        let payload: [UInt8]
        if msg["type"]?.stringValue == "invalid" {
            guard let hex = msg["bytes"]?.stringValue, let bytes = Self.parseHexBytes(hex) else {
                throw ReplayError(line: lineNumber, reason: "bad invalid-payload bytes")
            }
            payload = bytes
        } else {
            guard let message = MatchMessage(json: msg) else { throw ReplayError(line: lineNumber, reason: "bad \"msg\"") }
            payload = message.encoded()
        }
        let delivery = Delivery(from: PeerID(from), seq: UInt64(bitPattern: seq), payload: payload)
        return .event(.delivered(delivery), atMicroseconds: at, line: lineNumber)
    }

    static func parseHexBytes(_ hex: String) -> [UInt8]? {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        for i in stride(from: 0, to: utf8.count, by: 2) {
            guard let byte = UInt8(String(decoding: utf8[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(byte)
        }
        return out
    }
}

/// The result of `replay --verify` (SPEC §5).
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

    public var rounds: Int { decisions.count }

    /// The one-line JSON of `replay --verify`.
    public var json: String {
        var pairs: [(String, JSONValue)] = [
            ("ok", .bool(ok)), ("messages", .int(Int64(messages))), ("checkpoints", .int(Int64(checkpoints))),
            ("players", .object(players.keys.sorted().map { id in
                (id.hex, .object([("pairs", .int(Int64(players[id]!.pairs))), ("hash", .string(hex16(players[id]!.hash)))]))
            })),
            ("rounds", .int(Int64(rounds))), ("decisions", .array(decisions.map { .string(hex16($0)) })),
        ]
        if let first = desyncs.first { pairs.append(("mismatch", .string(first.description))) }
        if let line = truncatedAtLine { pairs.append(("truncatedAtLine", .int(Int64(line)))) }
        return JSONValue.object(pairs).serialized
    }
}

/// Replays a log through the same replica logic and verifies every checkpoint.
public struct Replay {
    private var reader = LogReader()
    private var peer: MatchPeer?
    private var messages = 0
    private var desyncs: [Desync] = []
    private var truncatedAt: Int?

    public init() {}

    /// Replays a whole log text.
    /// - Throws: ``ReplayError`` naming the 1-based line of a corrupt line.
    public static func verify(_ text: String) throws(ReplayError) -> ReplayReport {
        var replay = Replay()
        try replay.receive(Array(text.utf8))
        return try replay.finish()
    }

    /// Feeds bytes and replays every complete line.
    public mutating func receive(_ bytes: [UInt8]) throws(ReplayError) {
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
            decidedRounds: peer?.decisionsLog ?? [], desyncs: desyncs, truncatedAtLine: truncatedAt)
    }

    private mutating func drain() throws(ReplayError) {
        while true {
            switch try reader.nextEvent() {
            case .needData, .end: return
            case .truncated(let line):
                truncatedAt = line
                return
            case .header(let id, _, _):
                var config = MatchPeerConfig(id: id, name: "replay", role: .spectator, voteSeed: 0)
                config.eventsMax = 1 << 20
                var replica = MatchPeer(config: config)
                replica.keepsDecisions = true
                peer = replica
            case .event(let event, let at, _):
                if case .delivered = event { messages += 1 }
                peer!.handle(event, now: NetTime(nanoseconds: UInt64(max(0, at)) &* 1_000))
                while peer!.pollSend() != nil {}
                while let e = peer!.pollEvent() { if case .desync(let d) = e { desyncs.append(d) } }
            }
        }
    }
}
