/// 64-bit FNV-1a over bytes: a stable hash, the same on every machine and in every process
/// (unlike `Hasher`). Not a cryptographic hash.
public struct FNV1a64: Sendable, Hashable {
    /// The FNV-1a 64 offset basis: the hash of no bytes.
    public static let offsetBasis: UInt64 = 0xCBF2_9CE4_8422_2325
    /// The FNV-1a 64 prime.
    public static let prime: UInt64 = 0x0000_0100_0000_01B3

    @usableFromInline var current: UInt64

    /// The hash of every byte combined so far.
    @inlinable
    public var value: UInt64 { current }

    /// Starts from `seed` (the offset basis unless a keyed variant wants another start).
    @inlinable
    public init(seed: UInt64 = FNV1a64.offsetBasis) {
        current = seed
    }

    @inlinable
    public mutating func combine(_ byte: UInt8) {
        current = (current ^ UInt64(byte)) &* FNV1a64.prime
    }

    /// Feeds the 8 bytes of `word`, least significant first.
    @inlinable
    public mutating func combine(_ word: UInt64) {
        for index in 0..<8 { combine(UInt8(truncatingIfNeeded: word >> (8 * index))) }
    }

    /// The hash of `bytes`, starting from `seed`.
    @inlinable
    public static func hash(_ bytes: some Sequence<UInt8>, seed: UInt64 = FNV1a64.offsetBasis) -> UInt64 {
        var hasher = FNV1a64(seed: seed)
        for byte in bytes { hasher.combine(byte) }
        return hasher.value
    }
}
