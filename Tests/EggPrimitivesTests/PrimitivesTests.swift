import EggPrimitives
import Testing

/// Golden values: every peer, log and test depends on these bits staying the same.
@Suite("primitives: golden values")
struct PrimitivesTests {
    @Test("SplitMix64 matches the reference splitmix64.c outputs; random access equals stepping")
    func splitMix() {
        var zero = SplitMix64(seed: 0)
        #expect([zero.next(), zero.next(), zero.next()] == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
        var seeded = SplitMix64(seed: 1_234_567)
        #expect((0..<5).map { _ in seeded.next() } == [
            6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423,
            4_593_380_528_125_082_431, 16_408_922_859_458_223_821,
        ])
        #expect(seeded.state == 1_234_567 &+ 5 &* SplitMix64.gamma)
        var stepping = SplitMix64(seed: 5)
        for index in 0..<4 { #expect(SplitMix64.output(seed: 5, index: UInt64(index)) == stepping.next()) }
        #expect(SplitMix64.output(seed: 5, index: 3) == 0x196E_4EC2_DA05_B945)
    }

    @Test("the SplitMix64 finaliser is pinned (0 stays 0)")
    func splitMixFinaliser() {
        #expect(SplitMix64.mix(0) == 0)
        #expect(SplitMix64.mix(1) == 0x5692_161D_100B_05E5)
        #expect(SplitMix64.mix(.max) == 0xB4D0_55FC_F2CB_BD7B)
    }

    @Test("SplitMix64's modulo draw in 0...bound is pinned, bound .max included")
    func splitMixUpTo() {
        var rng = SplitMix64(seed: 7)
        #expect((0..<8).map { _ in rng.next(upTo: 100) } == [27, 59, 78, 16, 25, 64, 30, 46])
        var mixed = SplitMix64(seed: 7)
        #expect([mixed.next(upTo: 0), mixed.next(upTo: 1), mixed.next(upTo: .max), mixed.next(upTo: 1000)]
            == [0, 0, 16_616_101_746_815_609_346, 528])
    }

    @Test("FNV-1a 64: the empty input is the offset basis; \"a\" and \"eggs\" are the published values; a seed starts elsewhere")
    func fnv() {
        #expect(FNV1a64.hash([UInt8]()) == 0xCBF2_9CE4_8422_2325)
        #expect(FNV1a64.hash(Array("a".utf8)) == 0xAF63_DC4C_8601_EC8C)
        #expect(FNV1a64.hash(Array("eggs".utf8)) == 0x5391_9560_3A6B_ED0F)
        #expect(FNV1a64.hash(Array("eggs".utf8), seed: 0x1234 ^ SplitMix64.gamma) == 0xFC54_7B21_3FFF_D3C3)
        var streaming = FNV1a64()
        for byte in Array("eg".utf8) { streaming.combine(byte) }
        for byte in Array("gs".utf8) { streaming.combine(byte) }
        #expect(streaming.value == FNV1a64.hash(Array("eggs".utf8)))
        var word = FNV1a64(), bytes = FNV1a64()
        word.combine(UInt64(0x0102_0304_0506_0708))
        for byte: UInt8 in [8, 7, 6, 5, 4, 3, 2, 1] { bytes.combine(byte) }
        #expect(word.value == bytes.value, "a word is fed least significant byte first")
    }

    @Test("the big-endian writer puts the most significant byte first; the reader reads it back and returns nil past the end")
    func bigEndian() {
        var w = BigEndianByteWriter()
        w.u8(0xAB); w.u16(0x0102); w.u32(0x0304_0506); w.u64(0x0708_090A_0B0C_0D0E); w.count(3)
        #expect(w.bytes == [0xAB, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 3])
        var r = BigEndianByteReader(w.bytes)
        #expect(r.u8() == 0xAB && r.u16() == 0x0102 && r.u32() == 0x0304_0506 && r.u64() == 0x0708_090A_0B0C_0D0E)
        #expect(r.count(max: 2) == nil, "a list longer than its limit")
        #expect(r.remaining == 0 && r.u8() == nil && r.u16() == nil && r.bytes(1) == nil)
        var windowed = BigEndianByteReader([1, 2, 3, 4, 5], offset: 1, end: 3)
        #expect(windowed.remaining == 2)
        #expect(windowed.u32() == nil, "end bounds the read")
        var clamped = BigEndianByteReader([1, 2], offset: 0, end: 99)
        #expect(clamped.remaining == 2 && clamped.bytes(-1) == nil && clamped.bytes(2) == [1, 2] && clamped.offset == 2)
    }

    @Test("LEB128 varints: 7 bits a byte, low group first; 10 bytes at most; fixed64 is little-endian; strings carry their length")
    func leb128() {
        var w = LEB128ByteWriter()
        w.varint(0); w.varint(127); w.varint(128); w.varint(300)
        #expect(w.bytes == [0x00, 0x7F, 0x80, 0x01, 0xAC, 0x02])
        var big = LEB128ByteWriter()
        big.varint(.max)
        #expect(big.bytes == [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        var fixed = LEB128ByteWriter()
        fixed.fixed64(0x0102_0304_0506_0708); fixed.string("é"); fixed.u8(9)
        #expect(fixed.bytes == [8, 7, 6, 5, 4, 3, 2, 1, 2, 0xC3, 0xA9, 9])
        var r = LEB128ByteReader(w.bytes + big.bytes + fixed.bytes)
        #expect(r.varint() == 0 && r.varint() == 127 && r.varint() == 128 && r.varint(max: 299) == nil)
        #expect(r.varint() == .max && r.fixed64() == 0x0102_0304_0506_0708 && r.string(maxBytes: 2) == "é" && r.u8() == 9)
        #expect(r.isAtEnd && r.u8() == nil && r.varint() == nil && r.fixed64() == nil)
        var overlong = LEB128ByteReader([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02])
        #expect(overlong.varint() == nil, "a 10th byte above 1 overflows 64 bits")
        var eleven = LEB128ByteReader([UInt8](repeating: 0x80, count: 10) + [0])
        #expect(eleven.varint() == nil)
        var badUTF8 = LEB128ByteReader([2, 0xC3, 0x28])
        #expect(badUTF8.string(maxBytes: 8) == nil)
        var tooLong = LEB128ByteReader([3, 0x61, 0x62, 0x63])
        #expect(tooLong.string(maxBytes: 2) == nil)
    }

    @Test("hex16 pads to 16 lowercase digits; parseHex16 takes exactly 16")
    func hex() {
        #expect(hex16(0) == "0000000000000000")
        #expect(hex16(0xAB) == "00000000000000ab")
        #expect(hex16(.max) == "ffffffffffffffff")
        #expect(parseHex16("00000000000000ab") == 0xAB)
        #expect(parseHex16("ab") == nil && parseHex16(nil) == nil && parseHex16("000000000000000g") == nil)
        #expect(parseHex16("00000000000000AB") == 0xAB)
        #expect(parseHex16("+123456789abcdef") == nil && parseHex16("-000000000000000") == nil, "a sign is no digit")
    }
}

@Suite("primitives: nearest-rank percentile")
struct PercentileTests {
    @Test("the nearest rank of 1...100 is the value itself; q 0 is the minimum, 1 the maximum; no samples give nil")
    func nearestRanks() {
        let hundred = Array(1...100)
        #expect(nearestRank(0.5, ofSorted: hundred) == 50)
        #expect(nearestRank(0.99, ofSorted: hundred) == 99)
        #expect(nearestRank(0.999, ofSorted: hundred) == 100)
        #expect(nearestRank(0, ofSorted: hundred) == 1)
        #expect(nearestRank(1, ofSorted: hundred) == 100)
        #expect(nearestRank(0.5, ofSorted: [7]) == 7)
        #expect(nearestRank(0.5, ofSorted: [Int]()) == nil)
        #expect(nearestRank(0.25, ofSorted: [10, 20, 30]) == 10, "⌈0.75⌉ − 1 = index 0")
        #expect(nearestRank(0.34, ofSorted: [10, 20, 30]) == 20, "⌈1.02⌉ − 1 = index 1")
    }
}
