import EggPrimitives

/// The join-handshake part of a peer: the secret behind its challenge cookies, whom it has to
/// challenge and has challenged, its response budget, and the incarnations proven dead (the
/// protocol is `ReliableMulticast+Handshake.swift`, the only code that touches this part). A
/// value with its own invariants (``checkInvariants()``) and tests; it keeps no state per
/// candidate beyond the bounded queue and table.
struct Handshake: Sendable {
    /// Targets queued for the next challenge datagram (also the cap of one datagram).
    static let queueMax = Wire.challengeEntriesMax
    /// Recently challenged candidates remembered (to challenge each at most every `rechallengeNanoseconds`).
    static let challengedRecentlyMax = 128
    static let rechallengeNanoseconds: UInt64 = 100_000_000
    static let spacingNanoseconds: UInt64 = 10_000_000
    /// A cookie is valid in the epoch it was made and the next one.
    static let cookieEpochNanoseconds: UInt64 = 2_000_000_000
    /// Responses sent per heartbeat interval at most (challenges naming us can be replayed or forged).
    static let responsesPerIntervalMax = 64
    /// Superseded incarnations remembered (their datagrams are stale).
    static let retiredMax = 64

    /// Secret of this incarnation behind the challenge cookies.
    let cookieSecret: UInt64
    private(set) var queue: [Member] = []
    private(set) var challengedAt: [Member: NetTime] = [:]
    private(set) var lastSentAt: NetTime?
    private(set) var responsesThisInterval = 0
    /// Incarnations superseded by a proven newer one, oldest first.
    private(set) var retired: [Member] = []
    /// ID collisions reported (a new incarnation refused while the old one speaks; this peer's
    /// own ID heard from another incarnation): each once, at most `collisionsReportedMax`.
    private(set) var collisionsReported: Set<Member> = []
    static let collisionsReportedMax = 64
    /// This peer's own ID heard from another incarnation: which one, how often, since when, and
    /// its highest packet number (a replayed datagram does not count twice).
    private(set) var ownIDElsewhere: (incarnation: UInt64, count: Int, since: NetTime, packet: UInt64)?
    /// Datagrams of another incarnation of our own ID, over at least `ownIDSpanNanoseconds`,
    /// that make it a live peer using our ID.
    static let ownIDDatagramsMin = 3
    static let ownIDSpanNanoseconds: UInt64 = 200_000_000

    init(cookieSecret: UInt64) {
        self.cookieSecret = cookieSecret
    }

    /// The cookie for `target` in `epoch`: a keyed hash under this incarnation's secret.
    func cookie(for target: Member, epoch: UInt64) -> UInt64 {
        var w = BigEndianByteWriter(capacity: 32)
        w.u64(cookieSecret)
        w.u64(epoch)
        w.u64(target.id.raw)
        w.u64(target.incarnation)
        return FNV1a64.hash(w.bytes, seed: cookieSecret ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// Whether `value` is `target`'s cookie of this epoch or the one before.
    func isValidCookie(_ value: UInt64, for target: Member, now: NetTime) -> Bool {
        let epoch = now.nanoseconds / Self.cookieEpochNanoseconds
        if cookie(for: target, epoch: epoch) == value { return true }
        return epoch > 0 && cookie(for: target, epoch: epoch - 1) == value
    }

    /// Some sender is queued, or was challenged within `rechallengeNanoseconds` and has not
    /// answered yet.
    func isPending(now: NetTime) -> Bool {
        !queue.isEmpty || challengedAt.values.contains { now.nanoseconds(since: $0) < Self.rechallengeNanoseconds }
    }

    func isRetired(_ m: Member) -> Bool { retired.contains(m) }

    /// Queues `candidate` for a challenge, unless it was challenged lately, is queued already or
    /// the queue is full (it is heard again). Returns when the challenges may go out (spaced by
    /// `spacingNanoseconds`), or nil when nothing was queued.
    mutating func enqueue(_ candidate: Member, now: NetTime) -> NetTime? {
        if let at = challengedAt[candidate], now.nanoseconds(since: at) < Self.rechallengeNanoseconds { return nil }
        guard queue.count < Self.queueMax, !queue.contains(candidate) else { return nil }
        queue.append(candidate)
        let earliest = lastSentAt.map { $0.adding(nanoseconds: Self.spacingNanoseconds) } ?? now
        return max(earliest, now)
    }

    /// Takes the queued challenges for one datagram, each with its cookie, and remembers them
    /// as challenged now (the table stays within `challengedRecentlyMax`).
    mutating func takeChallenges(now: NetTime) -> [ChallengeEntry] {
        guard !queue.isEmpty else { return [] }
        let epoch = now.nanoseconds / Self.cookieEpochNanoseconds
        let entries = queue.map { ChallengeEntry(target: $0, cookie: cookie(for: $0, epoch: epoch)) }
        queue.removeAll(keepingCapacity: true)
        if challengedAt.count + entries.count > Self.challengedRecentlyMax {
            challengedAt = challengedAt.filter { now.nanoseconds(since: $0.value) < Self.rechallengeNanoseconds }
            if challengedAt.count + entries.count > Self.challengedRecentlyMax { challengedAt.removeAll() }
        }
        for e in entries { challengedAt[e.target] = now }
        lastSentAt = now
        return entries
    }

    /// Spends one response of this interval's budget; false when it is spent.
    mutating func takeResponse() -> Bool {
        guard responsesThisInterval < Self.responsesPerIntervalMax else { return false }
        responsesThisInterval += 1
        return true
    }

    /// A new heartbeat interval: a fresh response budget.
    mutating func newInterval() { responsesThisInterval = 0 }

    /// `m` proved itself: no longer awaited.
    mutating func proved(_ m: Member) { challengedAt[m] = nil }

    /// `old` is dead: remembered as stale (the oldest forgotten past `retiredMax`). Returns
    /// false when it was retired already.
    mutating func retire(_ old: Member) -> Bool {
        guard !retired.contains(old) else { return false }
        if retired.count >= Self.retiredMax { retired.removeFirst() }
        retired.append(old)
        return true
    }

    /// Whether `m`'s collision is news (then it is remembered; false past the bound).
    mutating func reportCollision(_ m: Member) -> Bool {
        guard !collisionsReported.contains(m), collisionsReported.count < Self.collisionsReportedMax else { return false }
        collisionsReported.insert(m)
        return true
    }

    /// A datagram under this peer's own ID from `incarnation` (not ours), with `packet`: true
    /// once enough of them, increasing, over a long enough span say that a live peer uses our ID.
    mutating func heardOwnID(incarnation: UInt64, packet: UInt64, now: NetTime) -> Bool {
        if var seen = ownIDElsewhere, seen.incarnation == incarnation, now.nanoseconds(since: seen.since) <= 10 * Self.ownIDSpanNanoseconds {
            guard packet > seen.packet else { return false }
            seen.count += 1
            seen.packet = packet
            ownIDElsewhere = seen
            return seen.count >= Self.ownIDDatagramsMin && now.nanoseconds(since: seen.since) >= Self.ownIDSpanNanoseconds
        }
        ownIDElsewhere = (incarnation, 1, now, packet)
        return false
    }

    func checkInvariants() {
        precondition(queue.count <= Self.queueMax, "challenge queue bounded")
        precondition(collisionsReported.count <= Self.collisionsReportedMax, "collisions reported bounded")
        precondition(challengedAt.count <= Self.challengedRecentlyMax, "challenged table bounded")
        precondition(retired.count <= Self.retiredMax, "retired incarnations bounded")
        precondition(responsesThisInterval <= Self.responsesPerIntervalMax, "responses within the budget")
    }
}
