/// The redundancy part of a peer: the loss estimate, the own send rate and the echo schedule
/// (the policy that uses them is `ReliableMulticast+Redundancy.swift`, the only code that touches
/// this part). A value with its own invariants (``checkInvariants(echoesMax:)``) and tests.
struct Redundancy: Sendable {
    /// Weight of one packet in the loss estimate.
    static let lossGain = 1.0 / 32
    /// Packet numbers judged at most for one packet heard (a forged jump cannot pin the level).
    static let gapMax: UInt64 = 16
    /// A packet number is judged lost once the sender's highest is this far past it and it did
    /// not arrive (datagrams overtaking each other by fewer packets are no loss).
    static let reorderHorizon: UInt64 = 8
    /// Width of one bucket of the own send rate.
    static let rateBucketNanoseconds: UInt64 = 50_000_000

    /// The estimate halves in this much of the caller's time.
    let lossHalfLifeNanoseconds: UInt64
    /// Own messages a second beyond which the load is bulk.
    let rateMaxPerSecond: Int

    /// Estimated fraction of packets lost (members' packet numbers, NACKs), as of `lossEstimateAt`.
    private(set) var lossEstimate: Double = 0
    private(set) var lossEstimateAt = NetTime.zero
    /// Copies of earlier own messages the next data datagram carries per new one.
    var levelNow = 0
    /// Own messages sent in the current bucket (from `rateBucketStart`) and the one before.
    private var rateBucketStart = NetTime.zero
    private var rateBucketCount = 0
    private var ratePreviousCount = 0
    /// Echoes still to send, and the first own seq they repeat (0: none armed).
    private(set) var echoesLeft = 0
    private(set) var echoFromSeq: UInt64 = 0

    init(config: PeerNetConfig) {
        lossHalfLifeNanoseconds = config.redundancyLossHalfLifeNanoseconds
        rateMaxPerSecond = config.redundancyRateMaxPerSecond
    }

    /// The loss estimate decayed to `now` (halves in `lossHalfLifeNanoseconds`; time never goes
    /// back for it).
    mutating func decayLossEstimate(now: NetTime) {
        let elapsed = now.nanoseconds(since: lossEstimateAt)
        lossEstimateAt = max(lossEstimateAt, now)
        guard elapsed > 0, lossEstimate > 0 else { return }
        let halfLife = Double(max(1, lossHalfLifeNanoseconds))
        lossEstimate *= halfLife / (halfLife + Double(elapsed))
        if lossEstimate < 1e-6 { lossEstimate = 0 }
    }

    /// A packet of a known peer was accepted: `highestBefore` and `bitmapBefore` are its replay
    /// window before (0: nothing heard yet). Each packet number is judged once, when the highest
    /// moves `reorderHorizon` past it: received or lost. So reordering within the horizon is not
    /// loss, and a forged jump judges at most `gapMax` numbers.
    mutating func judgePackets(upTo packet: UInt64, highestBefore: UInt64, bitmapBefore: UInt64, firstHeard: UInt64, now: NetTime) {
        guard highestBefore > 0, packet > highestBefore else { return }
        let horizon = Self.reorderHorizon
        // Numbers now more than `horizon` behind `packet` that were within it before.
        let first = max(firstHeard, highestBefore > horizon ? highestBefore - horizon + 1 : 1)
        guard packet > horizon else { return }
        let last = packet - horizon
        guard first <= last else { return }
        decayLossEstimate(now: now)
        var number = max(first, last >= Self.gapMax ? last - Self.gapMax + 1 : 1)
        while number <= last {
            let received: Bool
            if number > highestBefore {
                received = false  // skipped over by this packet: never arrived
            } else if number == highestBefore {
                received = true
            } else {
                let distance = highestBefore - number
                received = distance <= 64 && bitmapBefore & (1 << (distance - 1)) != 0
            }
            lossEstimate += Self.lossGain * ((received ? 0 : 1) - lossEstimate)
            number += 1
        }
    }

    /// One loss seen elsewhere (a member NACKed an own message): counted like one lost packet.
    mutating func noteLoss(now: NetTime) {
        decayLossEstimate(now: now)
        lossEstimate += Self.lossGain * (1 - lossEstimate)
    }

    /// Counts an own message going out in the send-rate buckets.
    mutating func countOwnTransmission(now: NetTime) {
        rollRateBuckets(now: now)
        rateBucketCount += 1
    }

    private mutating func rollRateBuckets(now: NetTime) {
        let width = Self.rateBucketNanoseconds
        let elapsed = now.nanoseconds(since: rateBucketStart)
        guard elapsed >= width else { return }
        ratePreviousCount = elapsed >= 2 * width ? 0 : rateBucketCount
        rateBucketCount = 0
        rateBucketStart = NetTime(nanoseconds: now.nanoseconds - now.nanoseconds % width)
    }

    /// More own messages a second than `rateMaxPerSecond`, over the last two buckets.
    mutating func isBulkRate(now: NetTime) -> Bool {
        rollRateBuckets(now: now)
        let perTwoBuckets = UInt64(rateBucketCount + ratePreviousCount)
        let allowed = UInt64(max(0, rateMaxPerSecond)) * 2 * Self.rateBucketNanoseconds / 1_000_000_000
        return perTwoBuckets > allowed
    }

    /// Whether echoes are armed or under way.
    var hasEchoes: Bool { echoesLeft > 0 || echoFromSeq != 0 }

    /// Arms `count` echoes of the own messages from `seq` on (or from where the echoes under way
    /// started).
    mutating func armEchoes(_ count: Int, from seq: UInt64) {
        precondition(count > 0, "at least one echo is armed")
        if echoesLeft == 0 || echoFromSeq == 0 { echoFromSeq = seq }
        echoesLeft = count
    }

    /// One echo went out (or could not): one fewer left.
    mutating func echoSent() {
        echoesLeft = max(0, echoesLeft - 1)
        if echoesLeft == 0 { echoFromSeq = 0 }
    }

    /// No echoes (a burst, nothing to echo, not a member).
    mutating func clearEchoes() {
        echoesLeft = 0
        echoFromSeq = 0
    }

    func checkInvariants(echoesMax: Int) {
        precondition(echoesLeft <= max(0, echoesMax), "echoes bounded")
        precondition(lossEstimate >= 0 && lossEstimate <= 1, "loss estimate is a fraction")
        precondition(echoesLeft == 0 || echoFromSeq > 0, "armed echoes name the first seq they repeat")
    }
}
