/// Appends unsigned integers as LEB128 varints (7 bits a byte, least significant group first),
/// 64-bit random values and hashes as 8 bytes little-endian (uniformly distributed, a varint
/// would only grow them), and strings as a varint length and UTF-8: the match messages' wire.
public struct LEB128ByteWriter: Sendable {
    /// Everything written so far.
    public var bytes: [UInt8] = []

    @inlinable
    public init() { bytes.reserveCapacity(64) }

    @inlinable
    public mutating func u8(_ value: UInt8) { bytes.append(value) }

    @inlinable
    public mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// 8 bytes, least significant first.
    @inlinable
    public mutating func fixed64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    /// A varint byte count, then the UTF-8 bytes.
    @inlinable
    public mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        varint(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }
}

/// Reads what ``LEB128ByteWriter`` writes, bounds-checked: every read returns `nil` past the
/// end, on an over-long varint or on invalid UTF-8, never traps.
public struct LEB128ByteReader: Sendable {
    @usableFromInline let bytes: [UInt8]
    @usableFromInline var offset = 0

    @inlinable
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    @inlinable
    public var isAtEnd: Bool { offset == bytes.count }

    @inlinable
    public mutating func u8() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A varint of at most 10 bytes whose value fits 64 bits.
    @inlinable
    public mutating func varint() -> UInt64? {
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
    @inlinable
    public mutating func varint(max limit: UInt64) -> UInt64? {
        guard let value = varint(), value <= limit else { return nil }
        return value
    }

    /// 8 bytes, least significant first.
    @inlinable
    public mutating func fixed64() -> UInt64? {
        guard bytes.count - offset >= 8 else { return nil }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << UInt64(8 * index) }
        offset += 8
        return value
    }

    /// A length-prefixed UTF-8 string of at most `maxBytes` bytes; `nil` if invalid UTF-8.
    public mutating func string(maxBytes: Int) -> String? {
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
