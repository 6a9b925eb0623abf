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
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let n): out += String(n)
        case .double(let d): out += d.isFinite ? String(d) : "null"
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let pairs):
            out += "{"
            for (index, (key, value)) in pairs.enumerated() {
                if index > 0 { out += "," }
                JSONValue.writeString(key, to: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ s: String, to out: inout String) {
        out += "\""
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
        parse(bytes: Array(text.utf8))
    }

    /// Parses one JSON document from UTF-8 bytes (strings are validated as they are read).
    public static func parse(bytes: [UInt8]) -> JSONValue? {
        var parser = JSONParser(bytes)
        guard let value = parser.value(depth: 0) else { return nil }
        parser.skipSpace()
        return parser.isAtEnd ? value : nil
    }
}

private struct JSONParser {
    let bytes: [UInt8]
    var offset = 0
    static let depthMax = 32

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func skipSpace() {
        while offset < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[offset]) { offset += 1 }
    }

    mutating func literal(_ word: String) -> Bool {
        let utf8 = Array(word.utf8)
        guard bytes.count - offset >= utf8.count, Array(bytes[offset..<offset + utf8.count]) == utf8 else {
            return false
        }
        offset += utf8.count
        return true
    }

    mutating func value(depth: Int) -> JSONValue? {
        guard depth < JSONParser.depthMax else { return nil }
        skipSpace()
        guard offset < bytes.count else { return nil }
        switch bytes[offset] {
        case UInt8(ascii: "n"): return literal("null") ? .null : nil
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "\""): return string().map { .string($0) }
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "{"): return object(depth: depth)
        default: return number()
        }
    }

    mutating func number() -> JSONValue? {
        let start = offset
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        while offset < bytes.count, digits.contains(bytes[offset]) { offset += 1 }
        guard offset > start else { return nil }
        var isInteger = true
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            while offset < bytes.count, digits.contains(bytes[offset]) { offset += 1 }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            while offset < bytes.count, digits.contains(bytes[offset]) { offset += 1 }
        }
        if isInteger, offset - start <= 18 {
            // Up to 18 digits cannot overflow: sum them directly.
            var value: Int64 = 0
            var index = start
            let negative = bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            guard index < offset else { return nil }
            while index < offset {
                value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            return .int(negative ? -value : value)
        }
        let text = String(decoding: bytes[start..<offset], as: UTF8.self)
        return isInteger ? Int64(text).map { .int($0) } : Double(text).map { .double($0) }
    }

    mutating func string() -> String? {
        offset += 1  // opening quote
        // Fast path: most strings (hex IDs, type names) have no escapes.
        var end = offset
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 { end += 1 }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            defer { offset = end + 1 }
            return String(validating: bytes[offset..<end], as: UTF8.self)
        }
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        func flush() -> Bool {
            guard !raw.isEmpty else { return true }
            guard let s = String(validating: raw, as: UTF8.self) else { return false }
            scalars.append(contentsOf: s.unicodeScalars)
            raw.removeAll()
            return true
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            if byte == UInt8(ascii: "\"") { return flush() ? String(scalars) : nil }
            if byte < 0x20 { return nil }
            guard byte == UInt8(ascii: "\\") else { raw.append(byte); continue }
            guard flush(), offset < bytes.count else { return nil }
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
                guard bytes.count - offset >= 4,
                      bytes[offset..<offset + 4].allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
                      let code = UInt32(String(decoding: bytes[offset..<offset + 4], as: UTF8.self), radix: 16), let scalar = Unicode.Scalar(code) else { return nil }
                offset += 4
                scalars.append(scalar)
            default: return nil
            }
        }
        return nil
    }

    mutating func array(depth: Int) -> JSONValue? {
        offset += 1
        var items: [JSONValue] = []
        skipSpace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") { offset += 1; return .array(items) }
        while true {
            guard let item = value(depth: depth + 1) else { return nil }
            items.append(item)
            skipSpace()
            guard offset < bytes.count else { return nil }
            let byte = bytes[offset]
            offset += 1
            if byte == UInt8(ascii: "]") { return .array(items) }
            if byte != UInt8(ascii: ",") { return nil }
        }
    }

    mutating func object(depth: Int) -> JSONValue? {
        offset += 1
        var pairs: [(String, JSONValue)] = []
        skipSpace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") { offset += 1; return .object(pairs) }
        while true {
            skipSpace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\""), let key = string() else { return nil }
            skipSpace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { return nil }
            offset += 1
            guard let item = value(depth: depth + 1) else { return nil }
            pairs.append((key, item))
            skipSpace()
            guard offset < bytes.count else { return nil }
            let byte = bytes[offset]
            offset += 1
            if byte == UInt8(ascii: "}") { return .object(pairs) }
            if byte != UInt8(ascii: ",") { return nil }
        }
    }
}

/// 16 lowercase hex digits of a 64-bit value.
func hex16(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}

/// Parses exactly 16 hex digits.
func parseHex16(_ text: String?) -> UInt64? {
    guard let text, text.utf8.count == 16 else { return nil }
    return UInt64(text, radix: 16)
}
