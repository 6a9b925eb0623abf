import Foundation
import Testing
@testable import PeerNet

/// `Redundancy`, the part of a peer that estimates loss, counts its own send rate and schedules
/// echoes, on its own (the policy around it: `RedundancyTests`).
@Suite("Redundancy: the loss estimate, the send rate and the echoes")
struct RedundancyPartTests {
    static func part(halfLife: UInt64 = 1_000_000_000, rate: Int = 100) -> Redundancy {
        var config = PeerNetConfig(peerID: PeerID(1))
        config.redundancyLossHalfLifeNanoseconds = halfLife
        config.redundancyRateMaxPerSecond = rate
        return Redundancy(config: config)
    }

    static func at(_ milliseconds: UInt64) -> NetTime { NetTime(nanoseconds: milliseconds * 1_000_000) }

    @Test("packets judged once past the reorder horizon: every other one missing moves the estimate towards 1/2")
    func judgesPastTheHorizon() {
        var r = Self.part()
        // Packets 1...40 heard, every odd one missing: each arrival is judged against the window.
        var highest: UInt64 = 0, bitmap: UInt64 = 0
        for packet in stride(from: UInt64(2), through: 400, by: 2) {
            r.judgePackets(upTo: packet, highestBefore: highest, bitmapBefore: bitmap, firstHeard: 2, now: Self.at(0))
            let shift = packet - highest
            bitmap = highest == 0 ? 0 : (shift >= 64 ? 0 : (bitmap << shift) | (1 << (shift - 1)))
            highest = packet
        }
        #expect(abs(r.lossEstimate - 0.5) < 0.05, "\(r.lossEstimate)")
        r.checkInvariants(echoesMax: 3)
    }

    @Test("reordering within the horizon is no loss; nothing is judged before the horizon")
    func reorderingIsNoLoss() {
        var r = Self.part()
        r.judgePackets(upTo: 5, highestBefore: 1, bitmapBefore: 0, firstHeard: 1, now: Self.at(0))
        #expect(r.lossEstimate == 0, "numbers 2-4 are within the horizon of 5: not judged yet")
        r.judgePackets(upTo: 2, highestBefore: 0, bitmapBefore: 0, firstHeard: 2, now: Self.at(0))
        #expect(r.lossEstimate == 0, "nothing heard before: nothing judged")
    }

    @Test("a forged jump judges at most gapMax numbers")
    func forgedJumpIsBounded() {
        var r = Self.part()
        r.judgePackets(upTo: 1 << 40, highestBefore: 1, bitmapBefore: 0, firstHeard: 1, now: Self.at(0))
        let most = 1 - pow(1 - Redundancy.lossGain, Double(Redundancy.gapMax))
        #expect(r.lossEstimate <= most + 1e-9 && r.lossEstimate > 0, "\(r.lossEstimate)")
    }

    @Test("the estimate halves in the half-life, never grows with time, and a NACK counts one loss")
    func decay() {
        var r = Self.part(halfLife: 1_000_000_000)
        r.noteLoss(now: Self.at(0))
        let one = r.lossEstimate
        #expect(abs(one - Redundancy.lossGain) < 1e-12)
        r.decayLossEstimate(now: Self.at(1_000))
        #expect(abs(r.lossEstimate - one / 2) < 1e-12)
        r.decayLossEstimate(now: Self.at(500))
        #expect(abs(r.lossEstimate - one / 2) < 1e-12, "time going back decays nothing")
    }

    @Test("bulk: more own messages than the rate allows over the last two buckets")
    func bulkRate() {
        var r = Self.part(rate: 100)  // 10 per two 50-ms buckets
        for index in 0..<10 { r.countOwnTransmission(now: Self.at(UInt64(index))) }
        let atTen = r.isBulkRate(now: Self.at(10))
        r.countOwnTransmission(now: Self.at(11))
        let atEleven = r.isBulkRate(now: Self.at(12))
        let bucketLater = r.isBulkRate(now: Self.at(60))
        let twoLater = r.isBulkRate(now: Self.at(200))
        #expect(!atTen && atEleven)
        #expect(bucketLater, "the bucket before still counts")
        #expect(!twoLater, "two buckets later the load is gone")
    }

    @Test("echoes: armed from the first seq of a run, counted down, cleared at the end")
    func echoes() {
        var r = Self.part()
        #expect(!r.hasEchoes)
        r.armEchoes(2, from: 7)
        r.armEchoes(3, from: 9)
        #expect((r.echoesLeft, r.echoFromSeq) == (3, 7), "a run under way keeps its first seq")
        r.echoSent()
        r.echoSent()
        #expect((r.echoesLeft, r.echoFromSeq) == (1, 7))
        r.echoSent()
        #expect(!r.hasEchoes)
        r.checkInvariants(echoesMax: 3)
    }
}
