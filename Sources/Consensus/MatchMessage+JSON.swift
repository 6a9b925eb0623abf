import EggGame
import EggPrimitives
import PeerNet

extension MatchMessage {
    /// The message as one JSON object with a `"type"` field (the log's `"msg"`), then the fields
    /// as the description (`MatchMessage+Schema.swift`) gives them.
    /// 64-bit values (votes, hashes, peer IDs) are 16 lowercase hex digits.
    public var json: JSONValue {
        var coder = JSONWriter()
        coder.pairs.append(("type", .string(tag.jsonType.string)))
        var message = self
        message.describe(&coder)
        return .object(coder.pairs)
    }

    /// Parses the JSON rendering back; `nil` if anything is missing or out of range.
    /// Every field is checked against its limits (``isValid``) before the message is used.
    public init?(json: JSONValue) {
        guard let type = json["type"]?.stringValue,
              let tag = Tag.allCases.first(where: { $0.jsonType.string == type }) else { return nil }
        var coder = JSONReader(object: json)
        var message = MatchMessage.blank(tag)
        message.describe(&coder)
        guard !coder.failed, message.isValid else { return nil }
        self = message
    }

    static func jsonName(_ item: StreamInput) -> String {
        switch item {
        case .spawn: "spawn"
        case .move(let m): m.jsonName
        case .landGarbage(let n): "garbage:\(n)"
        case .ticks(let n): "ticks:\(n)"
        case .offsetGarbage(let n): "offset:\(n)"
        }
    }

    static func parseInput(_ text: String) -> StreamInput? {
        var text = text
        return text.withUTF8 { parseInput(utf8: $0) }
    }

    /// ``parseInput(_:)`` on the name's UTF-8 bytes (the log reader's fast path reads them in place).
    static func parseInput(utf8 name: UnsafeBufferPointer<UInt8>) -> StreamInput? {
        func equals(_ word: StaticString) -> Bool {
            word.utf8CodeUnitCount == name.count && word.withUTF8Buffer { $0.elementsEqual(name) }
        }
        /// The count after `prefix`, if the name starts with it.
        func count(after prefix: StaticString) -> Int?? {
            let length = prefix.utf8CodeUnitCount
            guard name.count > length, prefix.withUTF8Buffer({ $0.elementsEqual(name[0..<length]) }) else { return nil }
            return .some(decimal(utf8: UnsafeBufferPointer(rebasing: name[length...])))
        }
        switch name.count {
        case 2: if equals("cw") { return .move(.rotateCW) }
        case 3: if equals("ccw") { return .move(.rotateCCW) }
        case 4:
            if equals("left") { return .move(.left) }
            if equals("down") { return .move(.down) }
            if equals("drop") { return .move(.hardDrop) }
        case 5:
            if equals("spawn") { return .spawn }
            if equals("right") { return .move(.right) }
        default: break
        }
        if let n = count(after: "ticks:") {
            guard let n, (1...ticksPerItemMax).contains(n) else { return nil }
            return .ticks(n)
        }
        if let n = count(after: "offset:") {
            guard let n, (1...garbageOffsetMax).contains(n) else { return nil }
            return .offsetGarbage(n)
        }
        guard let n = count(after: "garbage:"), let n, (0...garbageLandMax).contains(n) else { return nil }
        return .landGarbage(n)
    }

    /// A count as ``jsonName(_:)`` writes it: decimal digits only, no sign, no leading zero, at
    /// most 18 digits (so it never overflows); nil otherwise.
    static func decimal(utf8 digits: UnsafeBufferPointer<UInt8>) -> Int? {
        guard (1...18).contains(digits.count), digits[0] != UInt8(ascii: "0") || digits.count == 1 else { return nil }
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            value = value &* 10 &+ Int(byte &- UInt8(ascii: "0"))
        }
        return value
    }
}

/// Builds the object's pairs in the description's order.
struct JSONWriter: MessageCoder {
    var pairs: [(String, JSONValue)] = []

    init() { pairs.reserveCapacity(8) }

    var failed: Bool { false }

    mutating func require(_ condition: @autoclosure () -> Bool) {}

    mutating func field<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F) {
        pairs.append((key.string, form.json(value)))
    }

    mutating func field<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F, jsonOmits omitted: F.Value)
        where F.Value: Equatable {
        if value != omitted { field(key, &value, form) }
    }

    mutating func nullable<F: FieldForm>(_ key: StaticString, _ value: inout F.Value?, _ form: F) {
        pairs.append((key.string, value.map(form.json) ?? .null))
    }

    mutating func list<F: FieldForm>(_ key: StaticString, _ values: inout [F.Value], _ form: F, count: ClosedRange<Int>) {
        pairs.append((key.string, .array(values.map(form.json))))
    }

    /// One record's object.
    private static func object<T>(_ record: T, _ describe: (inout T, inout JSONWriter) -> Void) -> JSONValue {
        var coder = JSONWriter()
        var record = record
        describe(&record, &coder)
        return .object(coder.pairs)
    }

    mutating func records<T>(_ key: StaticString, _ values: inout [T], count: ClosedRange<Int>, blank: T,
                             _ describe: (inout T, inout Self) -> Void) {
        pairs.append((key.string, .array(values.map { Self.object($0, describe) })))
    }

    mutating func columns<T>(_ values: inout [T], count: ClosedRange<Int>, blank: T, _ describe: (inout T, inout Self) -> Void) {
        // The keys from a blank record, so no records still gives every (empty) column.
        guard case .object(let keys) = Self.object(blank, describe) else { return }
        var columns = keys.map { ($0.0, [JSONValue]()) }
        for value in values {
            guard case .object(let row) = Self.object(value, describe) else { continue }
            for (index, pair) in row.enumerated() where index < columns.count { columns[index].1.append(pair.1) }
        }
        pairs.append(contentsOf: columns.map { ($0.0, .array($0.1)) })
    }

    mutating func nullable<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void) {
        pairs.append((key.string, value.map { Self.object($0, describe) } ?? .null))
    }

    mutating func trailing<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void) {
        if let value { pairs.append((key.string, Self.object(value, describe))) }
    }

    mutating func trailingField<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F, omitted: F.Value)
        where F.Value: Equatable {
        field(key, &value, form, jsonOmits: omitted)
    }
}

/// Reads the fields of a JSON object by key (the first of a key written twice; unknown keys are
/// ignored), each within its limit.
struct JSONReader: MessageCoder {
    let object: JSONValue
    private(set) var failed = false
    /// Reading row `row` of columns: a field is element `row` of the array under its key, and
    /// every column has `rows` elements (the first column read sets it).
    private var row: Int?
    private var rows: Int?

    init(object: JSONValue) { self.object = object }

    mutating func require(_ condition: @autoclosure () -> Bool) {
        if !failed && !condition() { failed = true }
    }

    /// The value under `key` (in columns, the row's element); nil if there is none.
    private mutating func lookup(_ key: StaticString) -> JSONValue? {
        let value = object[key.string]
        guard let row else { return value }
        guard let column = value?.arrayValue, column.count == rows ?? column.count, row < column.count else { return nil }
        rows = column.count
        return column[row]
    }

    mutating func field<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F) {
        guard !failed else { return }
        guard let json = lookup(key), let read = form.value(json: json) else { return failed = true }
        value = read
    }

    mutating func field<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F, jsonOmits omitted: F.Value)
        where F.Value: Equatable {
        guard !failed else { return }
        guard let json = lookup(key) else { return value = omitted }
        guard let read = form.value(json: json) else { return failed = true }
        value = read
    }

    mutating func nullable<F: FieldForm>(_ key: StaticString, _ value: inout F.Value?, _ form: F) {
        guard !failed else { return }
        guard let json = lookup(key) else { return failed = true }
        guard json != .null else { return value = nil }
        guard let read = form.value(json: json) else { return failed = true }
        value = read
    }

    mutating func list<F: FieldForm>(_ key: StaticString, _ values: inout [F.Value], _ form: F, count: ClosedRange<Int>) {
        guard !failed else { return }
        guard let items = lookup(key)?.arrayValue, count.contains(items.count) else { return failed = true }
        var read: [F.Value] = []
        read.reserveCapacity(items.count)
        for item in items {
            guard let value = form.value(json: item) else { return failed = true }
            read.append(value)
        }
        values = read
    }

    /// The record in `json`, or nil if it is malformed.
    private static func record<T>(_ json: JSONValue, blank: T, _ describe: (inout T, inout JSONReader) -> Void) -> T? {
        var coder = JSONReader(object: json)
        var record = blank
        describe(&record, &coder)
        return coder.failed ? nil : record
    }

    mutating func records<T>(_ key: StaticString, _ values: inout [T], count: ClosedRange<Int>, blank: T,
                             _ describe: (inout T, inout Self) -> Void) {
        guard !failed else { return }
        guard let items = lookup(key)?.arrayValue, count.contains(items.count) else { return failed = true }
        var read: [T] = []
        read.reserveCapacity(items.count)
        for item in items {
            guard let record = Self.record(item, blank: blank, describe) else { return failed = true }
            read.append(record)
        }
        values = read
    }

    mutating func columns<T>(_ values: inout [T], count: ClosedRange<Int>, blank: T, _ describe: (inout T, inout Self) -> Void) {
        guard !failed else { return }
        var coder = JSONReader(object: object)
        coder.row = 0
        var read: [T] = []
        repeat {
            var record = blank
            describe(&record, &coder)
            guard !coder.failed, let rows = coder.rows, count.contains(rows) else { return failed = true }
            read.append(record)
            coder.row = read.count
        } while read.count < coder.rows ?? 0
        values = read
    }

    mutating func nullable<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void) {
        guard !failed else { return }
        guard let json = lookup(key) else { return failed = true }
        guard json != .null else { return value = nil }
        guard let record = Self.record(json, blank: blank, describe) else { return failed = true }
        value = record
    }

    mutating func trailing<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void) {
        guard !failed else { return }
        guard let json = lookup(key) else { return value = nil }
        guard let record = Self.record(json, blank: blank, describe) else { return failed = true }
        value = record
    }

    mutating func trailingField<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F, omitted: F.Value)
        where F.Value: Equatable {
        field(key, &value, form, jsonOmits: omitted)
    }
}
