import Testing
@testable import PeerNet

/// `PeerTable`, the part of a peer that remembers the proven peers, the exclusions from view
/// changes and the incompatible senders reported, on its own (the protocol around it:
/// `MembershipTests`, `WireTests`, `SessionReplayTests`).
@Suite("PeerTable: proven peers, exclusions, silent peers, incompatible senders")
struct PeerTablePartTests {
    static let me = Member(id: PeerID(1), incarnation: 1)
    static func at(_ milliseconds: UInt64) -> NetTime { .milliseconds(milliseconds) }
    static func info(heard milliseconds: UInt64) -> ReliableMulticast.PeerInfo {
        ReliableMulticast.PeerInfo(incarnation: 1, lastHeard: at(milliseconds))
    }

    @Test("an exclusion lasts until its end, a new view's members are forgiven, the table is pruned when it grows")
    func exclusions() {
        var t = PeerTable()
        let a = Member(id: PeerID(2), incarnation: 1), b = Member(id: PeerID(3), incarnation: 1)
        t.exclude(a, until: Self.at(100), now: Self.at(0))
        t.exclude(b, until: Self.at(100), now: Self.at(0))
        #expect(t.isExcluded(a, now: Self.at(99)))
        #expect(!t.isExcluded(a, now: Self.at(100)), "the exclusion ended")
        #expect(!t.isExcluded(Member(id: PeerID(2), incarnation: 2), now: Self.at(0)), "another incarnation is not excluded")
        t.forgive([a])
        #expect(!t.isExcluded(a, now: Self.at(0)) && t.isExcluded(b, now: Self.at(0)))
        for id in 10..<UInt64(10 + PeerTable.peersMax) { t.exclude(Member(id: PeerID(id), incarnation: 1), until: Self.at(50), now: Self.at(0)) }
        #expect(t.forcedOut.count == PeerTable.peersMax + 1, "all still running: nothing to prune")
        t.exclude(a, until: Self.at(500), now: Self.at(200))
        #expect(t.forcedOut.count == 1 && t.isExcluded(a, now: Self.at(200)), "expired ones pruned past peersMax")
        t.forgiveAll()
        #expect(!t.isExcluded(a, now: Self.at(200)))
        t.checkInvariants(me: Self.me)
    }

    @Test("silent peers are forgotten past the horizon unless they are members")
    func evictSilent() {
        var t = PeerTable()
        t[PeerID(2)] = Self.info(heard: 0)
        t[PeerID(3)] = Self.info(heard: 0)
        t[PeerID(4)] = Self.info(heard: 900)
        t.evictSilent(now: Self.at(1_000), horizon: 500_000_000, keeping: [Self.me, Member(id: PeerID(3), incarnation: 1)])
        #expect(t.peers.keys.sorted() == [PeerID(3), PeerID(4)])
        #expect(t.count == 2)
        t.checkInvariants(me: Self.me)
    }

    @Test("an incompatible sender is reported once, and only while the table has room")
    func incompatible() {
        var t = PeerTable()
        let first = t.reportIncompatible(PeerID(9)), again = t.reportIncompatible(PeerID(9))
        #expect(first && !again)
        var reported = 1
        for id in 100..<UInt64(100 + PeerTable.incompatibleReportedMax + 10) where t.reportIncompatible(PeerID(id)) { reported += 1 }
        #expect(reported == PeerTable.incompatibleReportedMax)
        t.checkInvariants(me: Self.me)
    }

    @Test("a peer's replay window accepts each packet once, 64 behind the highest at most, and estimates loss")
    func replayWindow() {
        var info = Self.info(heard: 0)
        var accepted: [UInt64] = []
        for packet: UInt64 in [5, 7, 6, 7, 100, 35, 36, 36] where info.acceptPacket(packet) { accepted.append(packet) }
        #expect(accepted == [5, 7, 6, 100, 36], "35 is more than 64 behind 100; duplicates dropped")
        #expect(info.packetFirst == 5 && info.packetHighest == 100)
        #expect(info.packetsExpected == 96 && info.packetsReceived == 5)
    }
}
