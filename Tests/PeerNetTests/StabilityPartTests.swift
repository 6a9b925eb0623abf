import Testing
@testable import PeerNet

/// `Stability`, the part of a peer that keeps the members' delivered vectors and the lagging
/// members reported, on its own (the protocol around it: `ScenarioTests`, `TwoPeerTests`).
@Suite("Stability: delivered vectors, what every member delivered, lagging")
struct StabilityPartTests {
    static let a = Member(id: PeerID(1), incarnation: 1), b = Member(id: PeerID(2), incarnation: 1)
    static let c = Member(id: PeerID(3), incarnation: 1)
    static let members = [a, b, c]

    static func entry(_ peer: Member, _ delivered: UInt64) -> ReportEntry {
        ReportEntry(peer: peer.id, delivered: delivered, echoPacket: 0, echoHoldMicroseconds: 0)
    }

    @Test("a heartbeat replaces a member's vector; a report only raises it")
    func replaceAndMerge() {
        var s = Stability()
        s.replace(from: Self.b.id, delivered: [(Self.a.id, 5), (Self.c.id, 2)])
        s.merge(from: Self.b.id, entries: [Self.entry(Self.a, 3), Self.entry(Self.c, 4)])
        #expect(s.delivered(by: Self.b.id, of: Self.a.id) == 5, "a report never lowers what was reported")
        #expect(s.delivered(by: Self.b.id, of: Self.c.id) == 4)
        s.replace(from: Self.b.id, delivered: [(Self.a.id, 1)])
        #expect(s.delivered(by: Self.b.id, of: Self.a.id) == 1, "a heartbeat's vector replaces the last")
        #expect(s.delivered(by: Self.b.id, of: Self.c.id) == 0, "not in it: nothing known")
        #expect(s.delivered(by: Self.c.id, of: Self.a.id) == 0, "never reported")
        s.checkInvariants(members: Self.members)
    }

    @Test("stable is what this peer and every other member delivered")
    func stable() {
        var s = Stability()
        s.merge(from: Self.b.id, entries: [Self.entry(Self.a, 7)])
        s.merge(from: Self.c.id, entries: [Self.entry(Self.a, 4)])
        #expect(s.stable(of: Self.a.id, delivered: 9, members: Self.members, except: Self.a) == 4)
        #expect(s.stable(of: Self.a.id, delivered: 3, members: Self.members, except: Self.a) == 3, "never beyond what this peer delivered")
        #expect(s.stable(of: Self.a.id, delivered: 9, members: [Self.a, Self.b], except: Self.a) == 7)
        #expect(s.stable(of: Self.a.id, delivered: 9, members: Self.members, except: Self.c) == 0, "a has not reported its own stream")
        #expect(s.stable(of: Self.b.id, delivered: 9, members: Self.members, except: Self.a) == 0, "no reports of that stream")
    }

    @Test("a lagging member is reported once until the window has room; a new view forgets everything")
    func laggingAndReset() {
        var s = Stability()
        let first = s.markLagging(Self.b.id), again = s.markLagging(Self.b.id)
        #expect(first && !again)
        s.clearLagging()
        let afterRoom = s.markLagging(Self.b.id)
        #expect(afterRoom)
        s.merge(from: Self.c.id, entries: [Self.entry(Self.a, 4)])
        s.checkInvariants(members: Self.members)
        s.reset()
        #expect(s.reports.isEmpty && s.laggingReported.isEmpty)
        s.checkInvariants(members: [])
    }
}
