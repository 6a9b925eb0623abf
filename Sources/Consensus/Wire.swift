/// Bounds-checked byte writer and reader for the compact wire encoding of ``MatchMessage``.
///
/// Integers are LEB128 varints (unsigned) except 64-bit random values and hashes, which are
/// 8 bytes little-endian (they are uniformly distributed, so a varint would only grow them).
/// The reader never traps: every read returns `nil` past the end or on an over-long varint.

struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(64) }

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func fixed64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        varint(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }
}

struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func u8() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A varint of at most 10 bytes whose value fits 64 bits.
    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        for index in 0..<10 {
            guard let byte = u8() else { return nil }
            let payload = UInt64(byte & 0x7f)
            if index == 9 && payload > 1 { return nil }
            value |= payload << UInt64(7 * index)
            if byte & 0x80 == 0 { return value }
        }
        return nil
    }

    /// A varint that must not exceed `limit`.
    mutating func varint(max limit: UInt64) -> UInt64? {
        guard let value = varint(), value <= limit else { return nil }
        return value
    }

    mutating func fixed64() -> UInt64? {
        guard bytes.count - offset >= 8 else { return nil }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << UInt64(8 * index) }
        offset += 8
        return value
    }

    /// A length-prefixed UTF-8 string of at most `maxBytes` bytes; `nil` if invalid UTF-8.
    mutating func string(maxBytes: Int) -> String? {
        guard let count = varint(max: UInt64(maxBytes)), bytes.count - offset >= Int(count) else { return nil }
        let slice = bytes[offset..<(offset + Int(count))]
        offset += Int(count)
        var iterator = slice.makeIterator()
        var decoder = UTF8()
        var scalars = String.UnicodeScalarView()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: return String(scalars)
            case .error: return nil
            }
        }
    }
}
