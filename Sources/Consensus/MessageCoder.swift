import EggGame
import EggPrimitives
import PeerNet

/// One codec of the match messages, driven by their descriptions (`MatchMessage+Schema.swift`).
/// A description names each field once, with its JSON key, its form (``FieldForm``: how the
/// value looks on the wire, in JSON and in the log's fast path) and its limit; every codec walks
/// it: the wire writer and reader, the JSON writer and reader and the fast path. So a field is
/// stated in one place and no codec can leave it out.
///
/// A writer reads the values it is handed. A reader overwrites them (the description starts from
/// a blank value) and sets `failed` at the first malformed field; every later call is a no-op.
/// Generic, not an existential: each codec is specialised in this module (the wire codec runs
/// per datagram, the fast path per log line).
protocol MessageCoder {
    var failed: Bool { get }
    /// A reader fails unless `condition` holds of what it read (writers skip it).
    mutating func require(_ condition: @autoclosure () -> Bool)
    /// One value.
    mutating func field<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F)
    /// One value the JSON leaves out when it is `omitted` (a field added later: logs written
    /// before it read the same); inline on the wire.
    mutating func field<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F, jsonOmits omitted: F.Value)
        where F.Value: Equatable
    /// A value or none: a flag byte (0, 1) then the value on the wire; the value or `null` in JSON.
    mutating func nullable<F: FieldForm>(_ key: StaticString, _ value: inout F.Value?, _ form: F)
    /// A varint count within `count`, then the values; a JSON array.
    mutating func list<F: FieldForm>(_ key: StaticString, _ values: inout [F.Value], _ form: F, count: ClosedRange<Int>)
    /// A varint count within `count`, then each record's fields; a JSON array of objects.
    mutating func records<T>(_ key: StaticString, _ values: inout [T], count: ClosedRange<Int>, blank: T,
                             _ describe: (inout T, inout Self) -> Void)
    /// Records as ``records(_:_:count:blank:_:)`` on the wire, but in JSON one array per field
    /// (parallel arrays named by the fields' keys).
    mutating func columns<T>(_ values: inout [T], count: ClosedRange<Int>, blank: T, _ describe: (inout T, inout Self) -> Void)
    /// A record or none: a flag byte then the record on the wire; an object or `null` in JSON.
    mutating func nullable<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void)
    /// A record the message may end before (its last field, added later): on the wire present
    /// when bytes remain; in JSON left out when absent.
    mutating func trailing<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void)
    /// A field of a list's records (added later) whose wire values follow the whole list, one a
    /// record, written only when one of them is not `omitted` (a message that ends before them
    /// reads as all `omitted`); JSON leaves it out when `omitted`. The list is the message's last field.
    mutating func trailingField<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F, omitted: F.Value)
        where F.Value: Equatable
}

/// How one value is written: on the wire, in JSON, and read in place by the log's fast path. A
/// form states a representation once; descriptions pick a form (and its limit) per field.
protocol FieldForm {
    associatedtype Value
    func write(_ value: Value, to out: inout WireOut)
    func read(from input: inout WireIn) -> Value?
    func json(_ value: Value) -> JSONValue
    func value(json: JSONValue) -> Value?
    /// The value at `cursor` exactly as ``json(_:)`` serialises it; nil sends the line to the
    /// general reader.
    func take(from cursor: inout LogCursor) -> Value?
}

extension FieldForm {
    func take(from cursor: inout LogCursor) -> Value? { nil }
}

/// The wire writer's bytes, and where the bytes that share their high nibble with a later field
/// are (``NibbleForm``).
struct WireOut {
    var writer = LEB128ByteWriter()
    var packed = (0, 0)
}

/// The wire reader, and the bytes whose high nibble a later field reads (``NibbleForm``).
struct WireIn {
    var reader: LEB128ByteReader
    var packed: (UInt8, UInt8) = (0, 0)
}

// MARK: - Forms

/// A count up to `max`: a varint; a JSON number.
struct CountForm: FieldForm {
    let max: UInt32
    func write(_ value: UInt32, to out: inout WireOut) { out.writer.varint(UInt64(value)) }
    func read(from input: inout WireIn) -> UInt32? { input.reader.varint(max: UInt64(max)).map { UInt32($0) } }
    func json(_ value: UInt32) -> JSONValue { .int(Int64(value)) }
    func value(json: JSONValue) -> UInt32? {
        guard let n = json.intValue, n >= 0, n <= Int64(max) else { return nil }
        return UInt32(n)
    }
    func take(from cursor: inout LogCursor) -> UInt32? {
        guard let n = cursor.number(), n <= Int64(max) else { return nil }
        return UInt32(n)
    }
}

/// An `Int` in `0...max`: a varint; a JSON number.
struct IntForm: FieldForm {
    let max: Int
    func write(_ value: Int, to out: inout WireOut) { out.writer.varint(UInt64(clamping: Swift.max(0, value))) }
    func read(from input: inout WireIn) -> Int? { input.reader.varint(max: UInt64(max)).map { Int($0) } }
    func json(_ value: Int) -> JSONValue { .int(Int64(value)) }
    func value(json: JSONValue) -> Int? {
        guard let n = json.intValue, n >= 0, n <= Int64(max) else { return nil }
        return Int(n)
    }
    func take(from cursor: inout LogCursor) -> Int? {
        guard let n = cursor.number(), n <= Int64(max) else { return nil }
        return Int(n)
    }
}

/// Any 64-bit count: a varint; a JSON number of the same bits (a view ID past `Int64.max` is negative).
struct BitsForm: FieldForm {
    func write(_ value: UInt64, to out: inout WireOut) { out.writer.varint(value) }
    func read(from input: inout WireIn) -> UInt64? { input.reader.varint() }
    func json(_ value: UInt64) -> JSONValue { .int(Int64(bitPattern: value)) }
    func value(json: JSONValue) -> UInt64? { json.intValue.map { UInt64(bitPattern: $0) } }
}

/// A uniform 64-bit value (a vote, a hash): 8 bytes; 16 hex digits in JSON.
struct HexForm: FieldForm {
    func write(_ value: UInt64, to out: inout WireOut) { out.writer.fixed64(value) }
    func read(from input: inout WireIn) -> UInt64? { input.reader.fixed64() }
    func json(_ value: UInt64) -> JSONValue { .string(hex16(value)) }
    func value(json: JSONValue) -> UInt64? { parseHex16(json.stringValue) }
    func take(from cursor: inout LogCursor) -> UInt64? {
        guard cursor.take("\""), let value = cursor.hex16(), cursor.take("\"") else { return nil }
        return value
    }
}

/// A peer ID, as ``HexForm``.
struct PeerForm: FieldForm {
    func write(_ value: PeerID, to out: inout WireOut) { out.writer.fixed64(value.raw) }
    func read(from input: inout WireIn) -> PeerID? { input.reader.fixed64().map(PeerID.init) }
    func json(_ value: PeerID) -> JSONValue { .string(value.hex) }
    func value(json: JSONValue) -> PeerID? { parseHex16(json.stringValue).map(PeerID.init) }
    func take(from cursor: inout LogCursor) -> PeerID? { HexForm().take(from: &cursor).map(PeerID.init) }
}

/// A byte 0 or 1; JSON `true`/`false`.
struct BoolForm: FieldForm {
    func write(_ value: Bool, to out: inout WireOut) { out.writer.u8(value ? 1 : 0) }
    func read(from input: inout WireIn) -> Bool? {
        guard let byte = input.reader.u8(), byte <= 1 else { return nil }
        return byte == 1
    }
    func json(_ value: Bool) -> JSONValue { .bool(value) }
    func value(json: JSONValue) -> Bool? { json.boolValue }
}

/// A string of at most `maxBytes` UTF-8 bytes: a varint length and the bytes; a JSON string. A
/// longer one is malformed, or in JSON, when `truncatesInJSON`, cut (as a lobby entry cuts names).
struct TextForm: FieldForm {
    let maxBytes: Int
    var truncatesInJSON = false
    func write(_ value: String, to out: inout WireOut) { out.writer.string(value) }
    func read(from input: inout WireIn) -> String? { input.reader.string(maxBytes: maxBytes) }
    func json(_ value: String) -> JSONValue { .string(value) }
    func value(json: JSONValue) -> String? {
        guard let text = json.stringValue else { return nil }
        if truncatesInJSON { return Hello.truncated(text) }
        return text.utf8.count <= maxBytes ? text : nil
    }
}

/// A role: its raw byte; its name in JSON.
struct RoleForm: FieldForm {
    func write(_ value: PeerRole, to out: inout WireOut) { out.writer.u8(value.rawValue) }
    func read(from input: inout WireIn) -> PeerRole? { input.reader.u8().flatMap(PeerRole.init(rawValue:)) }
    func json(_ value: PeerRole) -> JSONValue { .string(value.jsonName) }
    func value(json: JSONValue) -> PeerRole? {
        switch json.stringValue {
        case "player": .player
        case "spectator": .spectator
        default: nil
        }
    }
}

/// A stream item: a code byte (0–5 the moves, 6 spawn, 7 landed garbage, 8 ticks, 9 offset
/// garbage) and, for a counted item, a varint count; in JSON its name (``MatchMessage/jsonName(_:)``).
struct ItemForm: FieldForm {
    func write(_ item: StreamInput, to out: inout WireOut) {
        switch item {
        case .move(let move): out.writer.u8(move.rawValue)
        case .spawn: out.writer.u8(6)
        case .landGarbage(let n):
            out.writer.u8(7)
            out.writer.varint(UInt64(max(0, n)))
        case .ticks(let n):
            out.writer.u8(8)
            out.writer.varint(UInt64(max(0, n)))
        case .offsetGarbage(let n):
            out.writer.u8(9)
            out.writer.varint(UInt64(max(0, n)))
        }
    }

    func read(from input: inout WireIn) -> StreamInput? {
        guard let code = input.reader.u8() else { return nil }
        switch code {
        case 0...5: return Move(rawValue: code).map { .move($0) }
        case 6: return .spawn
        case 7: return input.reader.varint(max: UInt64(MatchMessage.garbageLandMax)).map { .landGarbage(Int($0)) }
        case 8:
            guard let n = input.reader.varint(max: UInt64(MatchMessage.ticksPerItemMax)), n > 0 else { return nil }
            return .ticks(Int(n))
        case 9:
            guard let n = input.reader.varint(max: UInt64(MatchMessage.garbageOffsetMax)), n > 0 else { return nil }
            return .offsetGarbage(Int(n))
        default: return nil
        }
    }

    func json(_ item: StreamInput) -> JSONValue { .string(MatchMessage.jsonName(item)) }
    func value(json: JSONValue) -> StreamInput? { json.stringValue.flatMap(MatchMessage.parseInput) }
    func take(from cursor: inout LogCursor) -> StreamInput? { cursor.item() }
}

/// `count` cell codes (0...7): two a byte, the first in the high nibble; in JSON one digit each.
struct CellsForm: FieldForm {
    let count: Int
    func write(_ cells: [UInt8], to out: inout WireOut) {
        for index in stride(from: 0, to: cells.count, by: 2) {
            let high = cells[index]
            let low = index + 1 < cells.count ? cells[index + 1] : 0
            out.writer.u8(high << 4 | (low & 0x0F))
        }
    }

    func read(from input: inout WireIn) -> [UInt8]? {
        var cells: [UInt8] = []
        cells.reserveCapacity(count)
        for _ in 0..<(count / 2) {
            guard let byte = input.reader.u8() else { return nil }
            cells.append(byte >> 4)
            cells.append(byte & 0x0F)
        }
        return cells
    }

    func json(_ cells: [UInt8]) -> JSONValue { .string(String(cells.map { Character(String($0)) })) }
    func value(json: JSONValue) -> [UInt8]? {
        // At most `count` bytes (a longer string is malformed however it reads); ASCII digits only.
        guard let digits = json.stringValue, digits.utf8.count <= count else { return nil }
        return GridPicture.cells(digits: digits)
    }
}

/// A small count in one byte (clamped when written); a JSON number.
struct ByteForm: FieldForm {
    func write(_ value: Int, to out: inout WireOut) { out.writer.u8(UInt8(clamping: value)) }
    func read(from input: inout WireIn) -> Int? { input.reader.u8().map { Int($0) } }
    func json(_ value: Int) -> JSONValue { .int(Int64(value)) }
    func value(json: JSONValue) -> Int? {
        guard let n = json.intValue, (0...255).contains(n) else { return nil }
        return Int(n)
    }
}

/// A count 0...15 in half a byte: the low nibble of a new byte (remembered as `slot`), or the high
/// nibble of the byte in `slot` (a field added later in the spare bits: 0 leaves the byte as it
/// was). Out-of-range values are written as the wire always wrote them (low: clamped to a byte
/// and masked; high: clamped to 0...15); a JSON number.
struct NibbleForm: FieldForm {
    let slot: Int
    let high: Bool
    func write(_ value: Int, to out: inout WireOut) {
        if high {
            let offset = slot == 0 ? out.packed.0 : out.packed.1
            out.writer.bytes[offset] |= UInt8(clamping: min(max(value, 0), 0x0F)) << 4
        } else {
            if slot == 0 { out.packed.0 = out.writer.bytes.count } else { out.packed.1 = out.writer.bytes.count }
            out.writer.u8(UInt8(clamping: value) & 0x0F)
        }
    }

    func read(from input: inout WireIn) -> Int? {
        if high { return Int((slot == 0 ? input.packed.0 : input.packed.1) >> 4) }
        guard let byte = input.reader.u8() else { return nil }
        if slot == 0 { input.packed.0 = byte } else { input.packed.1 = byte }
        return Int(byte & 0x0F)
    }

    func json(_ value: Int) -> JSONValue { .int(Int64(value)) }
    func value(json: JSONValue) -> Int? {
        guard let n = json.intValue, (0...15).contains(n) else { return nil }
        return Int(n)
    }
}

/// A rule set: its index in ``RuleSet/all`` in the high nibble of the byte in `slot` (15 for one
/// not in it; an index naming none is malformed); its name in JSON.
struct RuleSetForm: FieldForm {
    let slot: Int
    func write(_ value: RuleSet, to out: inout WireOut) {
        NibbleForm(slot: slot, high: true).write(RuleSet.all.firstIndex(of: value) ?? 0x0F, to: &out)
    }

    func read(from input: inout WireIn) -> RuleSet? {
        guard let index = NibbleForm(slot: slot, high: true).read(from: &input), index < RuleSet.all.count else { return nil }
        return RuleSet.all[index]
    }

    func json(_ value: RuleSet) -> JSONValue { .string(value.name) }
    func value(json: JSONValue) -> RuleSet? { json.stringValue.flatMap(RuleSet.named) }
}

extension FieldForm where Self == CountForm {
    static var u32: CountForm { CountForm(max: .max) }
    static func u32(max: UInt32) -> CountForm { CountForm(max: max) }
}

extension FieldForm where Self == IntForm {
    static func int(max: Int) -> IntForm { IntForm(max: max) }
}

extension FieldForm where Self == BitsForm { static var bits64: BitsForm { BitsForm() } }
extension FieldForm where Self == HexForm { static var hex64: HexForm { HexForm() } }
extension FieldForm where Self == PeerForm { static var peer: PeerForm { PeerForm() } }
extension FieldForm where Self == BoolForm { static var bool: BoolForm { BoolForm() } }
extension FieldForm where Self == RoleForm { static var role: RoleForm { RoleForm() } }
extension FieldForm where Self == ItemForm { static var item: ItemForm { ItemForm() } }
extension FieldForm where Self == ByteForm { static var byte: ByteForm { ByteForm() } }

extension FieldForm where Self == TextForm {
    static func text(maxBytes: Int, truncatesInJSON: Bool = false) -> TextForm {
        TextForm(maxBytes: maxBytes, truncatesInJSON: truncatesInJSON)
    }
}

extension FieldForm where Self == CellsForm { static func cells(_ count: Int) -> CellsForm { CellsForm(count: count) } }

extension FieldForm where Self == NibbleForm {
    static func nibble(_ slot: Int) -> NibbleForm { NibbleForm(slot: slot, high: false) }
    static func highNibble(_ slot: Int) -> NibbleForm { NibbleForm(slot: slot, high: true) }
}

extension FieldForm where Self == RuleSetForm { static func ruleSet(highNibble slot: Int) -> RuleSetForm { RuleSetForm(slot: slot) } }

extension StaticString {
    /// The literal as a `String` (keys are short: small strings, no allocation).
    var string: String {
        String(decoding: UnsafeBufferPointer(start: utf8Start, count: utf8CodeUnitCount), as: UTF8.self)
    }
}
