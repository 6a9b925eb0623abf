import EggPrimitives

/// 64-bit FNV-1a over bytes, for ``PlayerGrid/stableHash``: the one copy in ``EggPrimitives``.
public typealias StableHasher = FNV1a64
