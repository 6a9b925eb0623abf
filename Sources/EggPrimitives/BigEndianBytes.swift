/// Appends fixed-width integers most significant byte first (network order): PeerNet's wire.
public struct BigEndianByteWriter: Sendable {
    /// Everything written so far; callers may append raw bytes (payloads, trailers) directly.
    public var bytes: [UInt8] = []

    @inlinable
    public init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    @inlinable
    public mutating func u8(_ v: UInt8) { bytes.append(v) }
    @inlinable
    public mutating func u16(_ v: UInt16) { u8(UInt8(v >> 8)); u8(UInt8(truncatingIfNeeded: v)) }
    @inlinable
    public mutating func u32(_ v: UInt32) { u16(UInt16(v >> 16)); u16(UInt16(truncatingIfNeeded: v)) }
    @inlinable
    public mutating func u64(_ v: UInt64) { u32(UInt32(v >> 32)); u32(UInt32(truncatingIfNeeded: v)) }

    /// A list length in one byte. The encoder keeps its lists short: a longer one is a local bug.
    @inlinable
    public mutating func count(_ n: Int) { precondition(n <= 255, "list too long for the wire"); u8(UInt8(n)) }
}

/// Reads fixed-width big-endian integers, bounds-checked: every read returns `nil` on
/// underrun, never traps (what a remote peer sends is read with it).
public struct BigEndianByteReader: Sendable {
    @usableFromInline let bytes: [UInt8]
    @usableFromInline var position: Int
    @usableFromInline let end: Int

    /// Where the next read starts.
    @inlinable
    public var offset: Int { position }

    /// Reads `bytes[offset..<end]` (`end` defaults to, and is clamped to, the end of `bytes`).
    @inlinable
    public init(_ bytes: [UInt8], offset: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.position = offset
        self.end = min(end ?? bytes.count, bytes.count)
    }

    /// Bytes left before `end`.
    @inlinable
    public var remaining: Int { end - position }

    @inlinable
    public mutating func u8() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    @inlinable
    public mutating func u16() -> UInt16? {
        guard let hi = u8(), let lo = u8() else { return nil }
        return UInt16(hi) << 8 | UInt16(lo)
    }

    @inlinable
    public mutating func u32() -> UInt32? {
        guard let hi = u16(), let lo = u16() else { return nil }
        return UInt32(hi) << 16 | UInt32(lo)
    }

    @inlinable
    public mutating func u64() -> UInt64? {
        guard let hi = u32(), let lo = u32() else { return nil }
        return UInt64(hi) << 32 | UInt64(lo)
    }

    /// The next `count` bytes, `nil` if fewer are left (or `count` is negative).
    @inlinable
    public mutating func bytes(_ count: Int) -> [UInt8]? {
        guard count >= 0, remaining >= count else { return nil }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    /// A one-byte list length, `nil` when above `max`.
    @inlinable
    public mutating func count(max: Int) -> Int? {
        guard let n = u8(), Int(n) <= max else { return nil }
        return Int(n)
    }
}
