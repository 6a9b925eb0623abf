/// A small, deterministic JSON value with a writer and a strict parser, used for the message log.
///
/// Objects keep their keys in insertion order so a written line is byte-for-byte reproducible.
/// Numbers are integers only (the log never needs fractions; 64-bit values travel as hex strings).
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    /// A number with a fraction or an exponent (the logs never write one; reports may).
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        // Bit for bit, as the hash (of the serialised text) sees them: 0.0 and -0.0 differ.
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(serialized) }

    /// The value of `key` in an object, `nil` otherwise.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var intValue: Int64? { if case .int(let n) = self { n } else { nil } }
    public var doubleValue: Double? {
        switch self {
        case .int(let n): Double(n)
        case .double(let d): d
        default: nil
        }
    }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }

    /// One line of compact JSON (no spaces, keys in insertion order).
    public var serialized: String {
        var out = ""
        write(to: &out, spaced: false)
        return out
    }

    /// One line of JSON with a space after every `,` and `:` (reports people read: summaries,
    /// verdicts, `resolve`). The same encoder as ``serialized``.
    public var spacedSerialized: String {
        var out = ""
        write(to: &out, spaced: true)
        return out
    }

    private func write(to out: inout String, spaced: Bool) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let n): out += String(n)
        case .double(let d): out += d.isFinite ? String(d) : "null"
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += spaced ? ", " : "," }
                item.write(to: &out, spaced: spaced)
            }
            out += "]"
        case .object(let pairs):
            out += "{"
            for (index, (key, value)) in pairs.enumerated() {
                if index > 0 { out += spaced ? ", " : "," }
                JSONValue.writeString(key, to: &out)
                out += spaced ? ": " : ":"
                value.write(to: &out, spaced: spaced)
            }
            out += "}"
        }
    }

    private static func writeString(_ s: String, to out: inout String) {
        out += "\""
        // Most strings (keys, hex, names) need no escape: appended whole, not scalar by scalar.
        guard s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            out += s
            out += "\""
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// Parses one JSON document; `nil` on any syntax error or trailing garbage.
    public static func parse(_ text: String) -> JSONValue? {
        try? decode(bytes: Array(text.utf8))
    }

    /// Parses one JSON document from UTF-8 bytes; `nil` on any error.
    public static func parse(bytes: [UInt8]) -> JSONValue? {
        try? decode(bytes: bytes)
    }

    /// Parses one JSON document (RFC 8259) from UTF-8 bytes.
    /// - Throws: ``JSONError`` naming the byte offset and what was wrong there.
    public static func decode(bytes: [UInt8]) throws(JSONError) -> JSONValue {
        var parser = JSONParser(bytes)
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.isAtEnd else { throw parser.error("trailing characters after the value") }
        return value
    }
}

/// Why a JSON text did not parse: `offset` is the 0-based byte offset of the problem.
public struct JSONError: Error, Hashable, Sendable, CustomStringConvertible {
    public var offset: Int
    public var reason: String
    public var description: String { "byte \(offset + 1): \(reason)" }
}

/// A strict RFC 8259 reader: no leading zeros, no bare `.`/exponent, numbers in range (integers
/// in Int64, others finite doubles), surrogate pairs joined and lone surrogates rejected, strings
/// valid UTF-8 without raw control characters, nesting at most ``depthMax`` deep.
private struct JSONParser {
    let bytes: [UInt8]
    var offset = 0
    static let depthMax = 32

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset >= bytes.count }

    func error(_ reason: String, at position: Int? = nil) -> JSONError {
        JSONError(offset: position ?? offset, reason: reason)
    }

    mutating func skipSpace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0a, 0x0d: offset += 1
            default: return
            }
        }
    }

    mutating func literal(_ word: StaticString, _ value: JSONValue) throws(JSONError) -> JSONValue {
        let count = word.utf8CodeUnitCount
        let matches = bytes.count - offset >= count && word.withUTF8Buffer { utf8 in
            (0..<count).allSatisfy { bytes[offset + $0] == utf8[$0] }
        }
        guard matches else { throw error("expected \(word)") }
        offset += count
        return value
    }

    mutating func value(depth: Int) throws(JSONError) -> JSONValue {
        guard depth < JSONParser.depthMax else { throw error("nested deeper than \(JSONParser.depthMax)") }
        skipSpace()
        guard offset < bytes.count else { throw error("unexpected end of input") }
        switch bytes[offset] {
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected character")
        }
    }

    private func isDigit(_ index: Int) -> Bool {
        index < bytes.count && bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9")
    }

    /// Advances past one or more digits; throws if there is none.
    private mutating func digits(_ what: String) throws(JSONError) {
        guard isDigit(offset) else { throw error("expected a digit \(what)") }
        while isDigit(offset) { offset += 1 }
    }

    mutating func number() throws(JSONError) -> JSONValue {
        let start = offset
        let negative = bytes[offset] == UInt8(ascii: "-")
        if negative { offset += 1 }
        let intStart = offset
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "0") {
            offset += 1
            if isDigit(offset) { throw error("a number has a leading zero", at: intStart) }
        } else {
            try digits("in a number")
        }
        let intEnd = offset
        var isInteger = true
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            try digits("after the decimal point")
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            try digits("in the exponent")
        }
        if isInteger {
            // Accumulate negatively so Int64.min parses; any overflow is out of range.
            var value: Int64 = 0
            for index in intStart..<intEnd {
                let digit = Int64(bytes[index] - UInt8(ascii: "0"))
                let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                let (next, o2) = times10.subtractingReportingOverflow(digit)
                guard !o1, !o2 else { throw error("integer out of range (64-bit signed)", at: start) }
                value = next
            }
            if negative { return .int(value) }
            guard value != .min else { throw error("integer out of range (64-bit signed)", at: start) }
            return .int(-value)
        }
        let text = String(decoding: bytes[start..<offset], as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw error("number out of range", at: start) }
        return .double(double)
    }

    /// Four hex digits of a `\\u` escape.
    private mutating func hex4() throws(JSONError) -> UInt32 {
        guard bytes.count - offset >= 4 else { throw error("a \\u escape needs 4 hex digits") }
        var code: UInt32 = 0
        for index in offset..<offset + 4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("a \\u escape needs 4 hex digits", at: index)
            }
            code = code << 4 | UInt32(digit)
        }
        offset += 4
        return code
    }

    /// Strings the message log writes on most lines (keys, message types, stream items), as
    /// literals, keyed by their bytes packed into a `UInt64` (at most 8 bytes, none of them NUL,
    /// so the packing is one to one), sorted for a binary search.
    private static let internedTable: [(key: UInt64, string: String)] = {
        let words = ["from", "seq", "at", "msg", "d", "type", "game", "inputs", "values", "first", "pairs", "hash",
                     "tick", "winner", "view", "id", "members", "joined", "departed", "key", "end", "lines",
                     "votes", "clock", "gameOver", "hello", "name", "role", "protocol", "rules", "player", "sfe", "tsu",
                     "spawn", "left", "right", "cw", "ccw", "down", "drop", "match", "speed", "colors", "games", "play",
                     "start", "grids", "cells", "ready", "go", "version", "author", "settings", "unready", "leave"]
            + (1...12).map { "ticks:\($0)" }
        var table: [(key: UInt64, string: String)] = []
        for word in Set(words) where word.utf8.count <= 8 {
            let utf8 = Array(word.utf8)
            table.append((pack(utf8, 0, utf8.count), word))
        }
        return table.sorted { $0.key < $1.key }
    }()

    private static func pack(_ bytes: [UInt8], _ start: Int, _ end: Int) -> UInt64 {
        var key: UInt64 = 0
        var shift: UInt64 = 0
        for index in start..<end {
            key |= UInt64(bytes[index]) &<< shift
            shift &+= 8
        }
        return key
    }

    /// The interned literal for the ASCII bytes `start..<end`, if they are one.
    private static func interned(_ bytes: [UInt8], _ start: Int, _ end: Int) -> String? {
        guard end - start <= 8, end > start else { return nil }
        let key = pack(bytes, start, end)
        return internedTable.withUnsafeBufferPointer { table in
            var low = 0, high = table.count
            while low < high {
                let mid = (low + high) / 2
                if table[mid].key < key { low = mid + 1 } else { high = mid }
            }
            return low < table.count && table[low].key == key ? table[low].string : nil
        }
    }

    mutating func string() throws(JSONError) -> String {
        let open = offset
        offset += 1  // opening quote
        // Fast path: most strings (hex IDs, type names) have no escapes.
        var end = offset
        var ascii = true
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 {
            ascii = ascii && bytes[end] < 0x80
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            // The log's keys and short names come back as the same immortal literals (no
            // allocation, no UTF-8 check, no reference counting).
            if ascii, let known = JSONParser.interned(bytes, offset, end) {
                offset = end + 1
                return known
            }
            // ASCII needs no validation (and String(decoding:) is the fast, specialised path).
            let s: String? = ascii ? String(decoding: bytes[offset..<end], as: UTF8.self) : String(validating: bytes[offset..<end], as: UTF8.self)
            guard let s else { throw error("a string is not valid UTF-8", at: open) }
            offset = end + 1
            return s
        }
        var scalars = String.UnicodeScalarView()
        var rawStart = offset
        func flush(upTo rawEnd: Int) throws(JSONError) {
            guard rawEnd > rawStart else { return }
            guard let s = String(validating: bytes[rawStart..<rawEnd], as: UTF8.self) else {
                throw error("a string is not valid UTF-8", at: rawStart)
            }
            scalars.append(contentsOf: s.unicodeScalars)
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                try flush(upTo: offset)
                offset += 1
                return String(scalars)
            }
            if byte < 0x20 { throw error("a raw control character in a string") }
            guard byte == UInt8(ascii: "\\") else { offset += 1; continue }
            try flush(upTo: offset)
            let escapeAt = offset
            offset += 1
            guard offset < bytes.count else { break }
            let escape = bytes[offset]
            offset += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0c}")
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xDC00...0xDFFF).contains(code) { throw error("a lone low surrogate", at: escapeAt) }
                if (0xD800...0xDBFF).contains(code) {
                    guard bytes.count - offset >= 6, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
                        throw error("a high surrogate without its low surrogate", at: escapeAt)
                    }
                    offset += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else {
                        throw error("a high surrogate without its low surrogate", at: escapeAt)
                    }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { throw error("an invalid \\u escape", at: escapeAt) }
                scalars.append(scalar)
            default: throw error("an unknown escape", at: escapeAt)
            }
            rawStart = offset
        }
        throw error("an unterminated string", at: open)
    }

    mutating func array(depth: Int) throws(JSONError) -> JSONValue {
        offset += 1
        var items: [JSONValue] = []
        items.reserveCapacity(8)
        skipSpace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") { offset += 1; return .array(items) }
        while true {
            items.append(try value(depth: depth + 1))
            skipSpace()
            guard offset < bytes.count else { throw error("an unterminated array") }
            let byte = bytes[offset]
            if byte == UInt8(ascii: "]") { offset += 1; return .array(items) }
            guard byte == UInt8(ascii: ",") else { throw error("expected ',' or ']'") }
            offset += 1
        }
    }

    mutating func object(depth: Int) throws(JSONError) -> JSONValue {
        offset += 1
        var pairs: [(String, JSONValue)] = []
        pairs.reserveCapacity(8)
        skipSpace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") { offset += 1; return .object(pairs) }
        while true {
            skipSpace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw error("expected a key string") }
            let key = try string()
            skipSpace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw error("expected ':'") }
            offset += 1
            pairs.append((key, try value(depth: depth + 1)))
            skipSpace()
            guard offset < bytes.count else { throw error("an unterminated object") }
            let byte = bytes[offset]
            if byte == UInt8(ascii: "}") { offset += 1; return .object(pairs) }
            guard byte == UInt8(ascii: ",") else { throw error("expected ',' or '}'") }
            offset += 1
        }
    }
}
