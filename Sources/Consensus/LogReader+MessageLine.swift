import EggPrimitives

extension LogReader {
    /// A message line read in place.
    struct MessageLine: Equatable {
        var from: UInt64
        var seq: Int64
        var at: Int64
        var message: MatchMessage
    }

    /// Reads the log's common lines, `inputs`, `checkpoint` and `votes` messages, in the exact
    /// form the writer gives them:
    ///
    ///     {"from":"<16 hex>","seq":N,"at":N,"msg":{"type":"inputs","game":N,"inputs":["…",…]}
    ///     {"from":"<16 hex>","seq":N,"at":N,"msg":{"type":"checkpoint","game":N,"pairs":N,"hash":"<16 hex>"}
    ///     {"from":"<16 hex>","seq":N,"at":N,"msg":{"type":"votes","game":N,"first":N,"values":["<16 hex>",…]}
    ///
    /// `body` is the line up to its `,"d":"…"}` (checked with the digest before). No JSON tree,
    /// no strings: nearly all of a replay's lines are these. The message's fields are read as its
    /// description (`MatchMessage+Schema.swift`) gives them (``InPlaceReader``). The fast path takes only lines the
    /// general reader reads to the same message (keys in the writer's order, none twice, no
    /// spaces, no escapes, numbers of 18 digits at most without a sign or a leading zero, every
    /// value within its limits); for anything else it returns nil and the general
    /// reader takes the line, with its errors. `LogFastPathTests` checks the two agree on the
    /// mutants of every such line.
    static func messageLine(_ body: UnsafeBufferPointer<UInt8>) -> MessageLine? {
        var cursor = LogCursor(bytes: body)
        guard cursor.take("{\"from\":\""), let from = cursor.hex16(), cursor.take("\",\"seq\":"),
              let seq = cursor.number(), cursor.take(",\"at\":"), let at = cursor.number(),
              cursor.take(",\"msg\":{\"type\":\"") else { return nil }
        guard let tag = inPlaceKinds.first(where: { cursor.take($0.jsonType) && cursor.take("\"") }) else { return nil }
        var coder = InPlaceReader(cursor: cursor)
        var message = MatchMessage.blank(tag)
        message.describe(&coder)
        guard !coder.failed, coder.cursor.take("}"), coder.cursor.isAtEnd, message.isValid else { return nil }
        return MessageLine(from: from, seq: seq, at: at, message: message)
    }

    /// The kinds nearly all of a replay's lines are.
    private static let inPlaceKinds: [MatchMessage.Tag] = [.inputs, .checkpoint, .votes]
}

/// Reads a message's fields in place, in the description's order, exactly as the writer writes
/// them (``FieldForm/take(from:)``); any other shape, and any field a form cannot read in place,
/// fails (the general reader then takes the line).
struct InPlaceReader: MessageCoder {
    var cursor: LogCursor
    private(set) var failed = false

    init(cursor: LogCursor) { self.cursor = cursor }

    /// `,"key":`
    private mutating func key(_ key: StaticString) -> Bool {
        cursor.take(",\"") && cursor.take(key) && cursor.take("\":")
    }

    mutating func require(_ condition: @autoclosure () -> Bool) {
        if !failed && !condition() { failed = true }
    }

    mutating func field<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F) {
        guard !failed else { return }
        guard self.key(key), let read = form.take(from: &cursor) else { return failed = true }
        value = read
    }

    mutating func list<F: FieldForm>(_ key: StaticString, _ values: inout [F.Value], _ form: F, count: ClosedRange<Int>) {
        guard !failed else { return }
        guard self.key(key), cursor.take("[") else { return failed = true }
        var read: [F.Value] = []
        read.reserveCapacity(4)
        repeat {
            guard read.count < count.upperBound, let value = form.take(from: &cursor) else { return failed = true }
            read.append(value)
        } while cursor.take(",")
        guard cursor.take("]"), count.contains(read.count) else { return failed = true }
        values = read
    }

    // Shapes the in-place kinds do not have: the general reader takes them.
    mutating func field<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F, jsonOmits omitted: F.Value)
        where F.Value: Equatable { failed = true }
    mutating func nullable<F: FieldForm>(_ key: StaticString, _ value: inout F.Value?, _ form: F) { failed = true }
    mutating func records<T>(_ key: StaticString, _ values: inout [T], count: ClosedRange<Int>, blank: T,
                             _ describe: (inout T, inout Self) -> Void) { failed = true }
    mutating func columns<T>(_ values: inout [T], count: ClosedRange<Int>, blank: T, _ describe: (inout T, inout Self) -> Void) {
        failed = true
    }
    mutating func nullable<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void) {
        failed = true
    }
    mutating func trailing<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void) {
        failed = true
    }
    mutating func trailingField<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F, omitted: F.Value)
        where F.Value: Equatable { failed = true }
}

/// A position in a log line's bytes, read in place.
struct LogCursor {
    let bytes: UnsafeBufferPointer<UInt8>
    var offset = 0

    var isAtEnd: Bool { offset == bytes.count }

    /// Advances past `literal` if the bytes here are it.
    mutating func take(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - offset >= count else { return false }
        let start = literal.utf8Start
        for index in 0..<count where bytes[offset &+ index] != start[index] { return false }
        offset += count
        return true
    }

    /// 16 hex digits (``parseHex16(utf8:)``, as the general reader reads them).
    mutating func hex16() -> UInt64? {
        guard bytes.count - offset >= 16,
              let value = parseHex16(utf8: UnsafeBufferPointer(rebasing: bytes[offset..<offset + 16])) else { return nil }
        offset += 16
        return value
    }

    /// A count as the general reader takes it for a number the writer writes: the digits here,
    /// read by ``MatchMessage/decimal(utf8:)`` (1 to 18 of them, no sign, no leading zero).
    mutating func number() -> Int64? {
        let start = offset
        while offset < bytes.count, bytes[offset] >= UInt8(ascii: "0"), bytes[offset] <= UInt8(ascii: "9") { offset += 1 }
        return MatchMessage.decimal(utf8: UnsafeBufferPointer(rebasing: bytes[start..<offset])).map(Int64.init)
    }

    /// One stream item: a string of printable ASCII without escapes, named as the writer names it.
    mutating func item() -> StreamInput? {
        guard take("\"") else { return nil }
        let start = offset
        while offset < bytes.count, bytes[offset] != UInt8(ascii: "\"") {
            let byte = bytes[offset]
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            offset += 1
        }
        guard offset < bytes.count else { return nil }
        let name = UnsafeBufferPointer(rebasing: bytes[start..<offset])
        offset += 1
        return MatchMessage.parseInput(utf8: name)
    }
}
