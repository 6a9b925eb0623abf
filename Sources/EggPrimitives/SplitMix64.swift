/// SplitMix64 (Steele, Lea, Flood 2014), exactly as in the reference `splitmix64.c`: a tiny,
/// portable, seeded generator (the same numbers on every platform and toolchain).
///
/// The one copy in the project: the egg sequence and the bots (EggGame), PeerNet's timer
/// jitter, vote values (Consensus) and the simulator's draws all use it.
public struct SplitMix64: Sendable, Hashable {
    /// The golden-ratio increment of the reference.
    public static let gamma: UInt64 = 0x9E37_79B9_7F4A_7C15

    @usableFromInline var current: UInt64

    /// The state: the seed plus `gamma` times the outputs drawn so far.
    @inlinable
    public var state: UInt64 { current }

    @inlinable
    public init(seed: UInt64) {
        current = seed
    }

    /// The next 64 uniformly distributed bits.
    @inlinable
    public mutating func next() -> UInt64 {
        current &+= SplitMix64.gamma
        return SplitMix64.mix(current)
    }

    /// A draw in `0...bound` by `next() % (bound + 1)`: biased towards small values when the
    /// range does not divide 2^64 (fine for delays and jitter; the game uses unbiased draws).
    @inlinable
    public mutating func next(upTo bound: UInt64) -> UInt64 {
        bound == .max ? next() : next() % (bound + 1)
    }

    /// The finaliser: a bijective 64-bit mix (without the increment).
    @inlinable
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The output at `index` (0-based) of a generator seeded with `seed`, without stepping.
    @inlinable
    public static func output(seed: UInt64, index: UInt64) -> UInt64 {
        mix(seed &+ (index &+ 1) &* gamma)
    }
}
