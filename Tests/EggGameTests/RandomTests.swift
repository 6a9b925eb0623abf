import Testing
@testable import EggGame

@Suite("shared randomness: golden values")
struct RandomTests {
    @Test("SplitMix64 matches the reference splitmix64.c outputs")
    func splitMixReference() {
        var zero = SplitMix64(seed: 0)
        #expect([zero.next(), zero.next(), zero.next()] == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
        var seeded = SplitMix64(seed: 1_234_567)
        let outputs = (0..<5).map { _ in seeded.next() }
        #expect(outputs == [
            6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423,
            4_593_380_528_125_082_431, 16_408_922_859_458_223_821,
        ])
    }

    @Test("SplitMix64 random access equals stepping")
    func splitMixRandomAccess() {
        var stepping = SplitMix64(seed: 99)
        for index in 0..<100 {
            #expect(SplitMix64.output(seed: 99, index: UInt64(index)) == stepping.next())
        }
    }

    @Test("xoshiro256** matches the reference for state 1, 2, 3, 4 and is pinned for seed 42")
    func xoshiroReference() {
        var raw = Xoshiro256StarStar(state: (1, 2, 3, 4))
        #expect((0..<5).map { _ in raw.next() } == [11520, 0, 1_509_978_240, 1_215_971_899_390_074_240, 1_216_172_134_540_287_360])
        var seeded = Xoshiro256StarStar(seed: 42)
        #expect((0..<3).map { _ in seeded.next() } == [
            1_546_998_764_402_558_742, 6_990_951_692_964_543_102, 12_544_586_762_248_559_009,
        ])
    }

    @Test("bounded draws are pinned and stay in range")
    func boundedDraws() {
        var pinned = SplitMix64(seed: 7)
        #expect((0..<12).map { _ in pinned.next(below: 6) } == [2, 0, 5, 3, 2, 1, 2, 1, 0, 2, 0, 5])
        var rng = Xoshiro256StarStar(seed: 1)
        var counts = [Int](repeating: 0, count: 6)
        for _ in 0..<60_000 { counts[rng.nextInt(below: 6)] += 1 }
        #expect(counts.allSatisfy { (9_500...10_500).contains($0) }, "counts \(counts)")
    }

    @Test("the egg sequence of seed 2024 is pinned for 4 and 6 colours")
    func eggSequenceGolden() {
        func letters(_ sequence: EggSequence) -> String {
            (0..<12).map { "\(sequence.pair(at: $0).pivot.letter)\(sequence.pair(at: $0).child.letter)" }
                .joined(separator: " ")
        }
        #expect(letters(EggSequence(seed: 2024, colors: 4)) == "YB BB PP BY RB RB BY YP PP BP RY BR")
        #expect(letters(EggSequence(seed: 2024, colors: 6)) == "PB YY OO YP RB BB YG PO OG YO RG YR")
        #expect(EggSequence(seed: 2024).value(at: 0) == 0x9F6D_8FEC_F88E_ECD5)
    }

    @Test("a decided round value maps to a pair, using only the first N colours")
    func pairFromValue() {
        #expect(EggPair(value: 0, colors: 4) == EggPair(pivot: .purple, child: .blue))
        #expect(EggPair(value: .max, colors: 5) == EggPair(pivot: .green, child: .green))
        for colors in EggPair.colorsSupported {
            var seen = Set<EggColor>()
            for value in UInt64(0)..<2_000 {
                let pair = EggPair(value: SplitMix64.mix(value), colors: colors)
                seen.insert(pair.pivot)
                seen.insert(pair.child)
            }
            #expect(seen == Set(EggColor.allCases.prefix(colors)))
        }
    }
}
