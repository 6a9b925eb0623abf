import Testing
@testable import PeerNet

/// `Handshake`, the part of a peer that challenges unknown senders, on its own (the protocol
/// around it: `MembershipTests`, `ForgedFlushTests`, `SessionReplayTests`).
@Suite("Handshake: cookies, the challenge queue, the response budget, retired incarnations")
struct HandshakePartTests {
    static func at(_ milliseconds: UInt64) -> NetTime { NetTime(nanoseconds: milliseconds * 1_000_000) }
    static let stranger = Member(id: PeerID(7), incarnation: 3)

    @Test("a cookie is valid in its epoch and the next, only for its target and only under its secret")
    func cookies() {
        let h = Handshake(cookieSecret: 42)
        let epochMs = Handshake.cookieEpochNanoseconds / 1_000_000
        let cookie = h.cookie(for: Self.stranger, epoch: 5)
        #expect(h.isValidCookie(cookie, for: Self.stranger, now: Self.at(5 * epochMs)))
        #expect(h.isValidCookie(cookie, for: Self.stranger, now: Self.at(6 * epochMs + 1)))
        #expect(!h.isValidCookie(cookie, for: Self.stranger, now: Self.at(7 * epochMs)), "two epochs on: expired")
        #expect(!h.isValidCookie(cookie, for: Member(id: PeerID(7), incarnation: 4), now: Self.at(5 * epochMs)),
                "another incarnation of the same ID")
        #expect(!Handshake(cookieSecret: 43).isValidCookie(cookie, for: Self.stranger, now: Self.at(5 * epochMs)),
                "another incarnation of the challenger (another secret)")
    }

    @Test("a candidate is queued once, not again within the rechallenge time, and the queue is bounded")
    func queue() {
        var h = Handshake(cookieSecret: 1)
        let queued = h.enqueue(Self.stranger, now: Self.at(0)), twice = h.enqueue(Self.stranger, now: Self.at(1))
        #expect(queued == Self.at(0))
        #expect(twice == nil, "queued already")
        let entries = h.takeChallenges(now: Self.at(2))
        #expect(entries.map(\.target) == [Self.stranger])
        #expect(h.isValidCookie(entries[0].cookie, for: Self.stranger, now: Self.at(3)))
        #expect(h.isPending(now: Self.at(50)), "challenged, no answer yet")
        let soon = h.enqueue(Self.stranger, now: Self.at(50)), later = h.enqueue(Self.stranger, now: Self.at(103))
        #expect(soon == nil, "challenged 48 ms ago")
        #expect(later == Self.at(103))
        for id in 100..<(100 + Handshake.queueMax + 10) {
            _ = h.enqueue(Member(id: PeerID(UInt64(id)), incarnation: 1), now: Self.at(104))
        }
        #expect(h.queue.count == Handshake.queueMax)
        h.checkInvariants()
    }

    @Test("challenges go out spaced; the challenged table stays bounded under a storm of IDs")
    func spacingAndStorm() {
        var h = Handshake(cookieSecret: 1)
        _ = h.enqueue(Self.stranger, now: Self.at(0))
        _ = h.takeChallenges(now: Self.at(0))
        let next = h.enqueue(Member(id: PeerID(8), incarnation: 1), now: Self.at(1))
        #expect(next == Self.at(0).adding(nanoseconds: Handshake.spacingNanoseconds))
        for round in 0..<50 {
            for index in 0..<Handshake.queueMax {
                _ = h.enqueue(Member(id: PeerID(UInt64(1_000 + round * 100 + index)), incarnation: 1), now: Self.at(UInt64(round)))
            }
            _ = h.takeChallenges(now: Self.at(UInt64(round)))
            h.checkInvariants()
        }
        #expect(h.challengedAt.count <= Handshake.challengedRecentlyMax)
    }

    @Test("the response budget is spent at responsesPerIntervalMax and renewed each interval")
    func responseBudget() {
        var h = Handshake(cookieSecret: 1)
        var taken = 0
        for _ in 0..<Handshake.responsesPerIntervalMax + 5 where h.takeResponse() { taken += 1 }
        #expect(taken == Handshake.responsesPerIntervalMax)
        h.newInterval()
        let renewed = h.takeResponse()
        #expect(renewed)
    }

    @Test("retired incarnations: once each, the oldest forgotten past retiredMax")
    func retired() {
        var h = Handshake(cookieSecret: 1)
        let first = h.retire(Self.stranger), again = h.retire(Self.stranger)
        #expect(first && !again)
        #expect(h.isRetired(Self.stranger))
        for index in 0..<Handshake.retiredMax { _ = h.retire(Member(id: PeerID(UInt64(500 + index)), incarnation: 1)) }
        #expect(!h.isRetired(Self.stranger))
        #expect(h.retired.count == Handshake.retiredMax)
        h.checkInvariants()
    }
}
