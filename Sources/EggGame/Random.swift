import EggPrimitives

/// The project's own pseudo-random generators. Peers on different toolchains must agree on every
/// value, so nothing here uses Swift's `random(in:using:)` or `shuffled(using:)`.
public protocol EggRandom {
    /// The next 64 uniformly distributed bits.
    mutating func next() -> UInt64
}

extension EggRandom {
    /// An unbiased value in `0..<bound` (Lemire's multiply-shift with rejection).
    public mutating func next(below bound: UInt64) -> UInt64 {
        precondition(bound > 0, "bound must be positive")
        var product = next().multipliedFullWidth(by: bound)
        if product.low < bound {
            let threshold = (0 &- bound) % bound
            while product.low < threshold {
                product = next().multipliedFullWidth(by: bound)
            }
        }
        return product.high
    }

    /// An unbiased `Int` in `0..<bound`.
    public mutating func nextInt(below bound: Int) -> Int {
        precondition(bound > 0, "bound must be positive")
        return Int(next(below: UInt64(bound)))
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014), exactly as in the reference `splitmix64.c`: the one
/// copy in ``EggPrimitives``, with the bounded draws of ``EggRandom``.
public typealias SplitMix64 = EggPrimitives.SplitMix64

extension EggPrimitives.SplitMix64: EggRandom {}

/// xoshiro256** 1.0 (Blackman, Vigna), seeded from a ``SplitMix64`` as the authors recommend.
public struct Xoshiro256StarStar: EggRandom, Sendable, Hashable {
    var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64

    /// Seeds the four state words with four SplitMix64 outputs of `seed`.
    public init(seed: UInt64) {
        var mixer = SplitMix64(seed: seed)
        self.init(state: (mixer.next(), mixer.next(), mixer.next(), mixer.next()))
    }

    /// Uses the raw state words; they must not all be zero.
    public init(state: (UInt64, UInt64, UInt64, UInt64)) {
        (s0, s1, s2, s3) = state
        precondition(s0 | s1 | s2 | s3 != 0, "xoshiro state must not be all zero")
    }

    public mutating func next() -> UInt64 {
        let result = rotateLeft(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotateLeft(s3, 45)
        return result
    }

    private func rotateLeft(_ x: UInt64, _ k: UInt64) -> UInt64 {
        (x << k) | (x >> (64 - k))
    }
}

/// The offline shared egg sequence: pair `i` is ``EggPair/init(value:colors:)`` applied to the
/// `i`-th SplitMix64 output of `seed`. Random access, no state: every player reads it at its pace.
public struct EggSequence: Sendable, Hashable {
    public let seed: UInt64
    public let colors: Int

    public init(seed: UInt64, colors: Int = 4) {
        precondition(EggPair.colorsSupported.contains(colors), "colors must be 4, 5 or 6")
        self.seed = seed
        self.colors = colors
    }

    /// The decided round value for pair `index`.
    public func value(at index: Int) -> UInt64 {
        precondition(index >= 0, "pair index must not be negative")
        return SplitMix64.output(seed: seed, index: UInt64(index))
    }

    /// The pair at `index` (0-based).
    public func pair(at index: Int) -> EggPair {
        EggPair(value: value(at: index), colors: colors)
    }
}
