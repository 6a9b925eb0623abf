import Testing
@testable import PeerNet

/// `InstalledView` (the view a phase carries) and `BallotMemory` (the ballots a peer saw,
/// whatever its phase), each on its own; the protocol around them: `MembershipTests`,
/// `ForgedFlushTests`, `BlockedFlushTests`.
@Suite("InstalledView and BallotMemory: the view in the phase, its abandonment, ballots, install relays")
struct InstalledViewPartTests {
    static let a = Member(id: PeerID(1), incarnation: 1), b = Member(id: PeerID(2), incarnation: 1)
    static let c = Member(id: PeerID(3), incarnation: 1)
    static let ballot = Ballot(attempt: 3, coordinator: PeerID(1))

    @Test("a view has id, key and members, and the application's view with who joined and departed")
    func install() {
        let v = InstalledView(id: 4, key: 99, members: [Self.a, Self.c], baseIDs: [Self.a.id, Self.b.id])
        #expect(v.id == 4 && v.key == 99 && v.members == [Self.a, Self.c] && !v.isEmpty)
        #expect(v.view == MembershipView(id: 4, members: [Self.a.id, Self.c.id], joined: [Self.c.id], departed: [Self.b.id], key: 99))
        v.checkInvariants()
    }

    @Test("a view given up is empty; the application's view names the old members departed")
    func abandon() {
        let v = InstalledView(id: 4, key: 99, members: [Self.a, Self.b], baseIDs: [])
        let given = v.givenUp
        #expect(given.id == 0 && given.key == 0 && given.members.isEmpty && given.isEmpty)
        #expect(given.view == MembershipView(id: 0, members: [], departed: [Self.a.id, Self.b.id]))
        #expect(InstalledView.none.view == MembershipView(id: 0, members: []))
        given.checkInvariants()
    }

    @Test("installs and give-ups start the attempt count over; the last install is remembered")
    func installAndGiveUp() {
        var m = BallotMemory()
        m.noteAttempt(9)
        m.installed(4, by: Self.ballot)
        #expect(m.lastInstall?.ballot == Self.ballot && m.lastInstall?.newViewID == 4)
        #expect(m.nextAttempt == 1)
        m.noteAttempt(6)
        m.viewGivenUp()
        #expect(m.nextAttempt == 1)
        #expect(m.lastInstall?.newViewID == 4, "a straggler can still be told of the last install")
        m.checkInvariants()
    }

    @Test("the next attempt is above every attempt seen, starts again at 1 past the wire's limit, and a far one is implausible")
    func attempts() {
        var m = BallotMemory()
        #expect(m.nextAttempt == 1)
        m.noteAttempt(7)
        m.noteAttempt(5)
        #expect(m.nextAttempt == 8)
        #expect(m.isPlausible(attempt: 7 + BallotMemory.attemptStepMax) && !m.isPlausible(attempt: 8 + BallotMemory.attemptStepMax))
        m.noteAttempt(Wire.attemptMax)
        #expect(m.nextAttempt == 1, "never a malformed ballot")
        m.noteAttempt(1)
        #expect(m.nextAttempt == 2, "counting starts again")
        m.checkInvariants()
    }

    @Test("an install is relayed only for the ballot installed, at most once per spacing")
    func relay() {
        var m = BallotMemory()
        let none = m.relayInstall(of: Self.ballot, now: NetTime.zero, spacing: 10)
        #expect(none == nil, "nothing installed")
        m.noteAttempt(Self.ballot.attempt)
        m.installed(4, by: Self.ballot)
        let first = m.relayInstall(of: Self.ballot, now: NetTime.milliseconds(1), spacing: 10_000_000)
        let soon = m.relayInstall(of: Self.ballot, now: NetTime.milliseconds(5), spacing: 10_000_000)
        let other = m.relayInstall(of: Ballot(attempt: 2, coordinator: PeerID(1)), now: NetTime.milliseconds(50), spacing: 10_000_000)
        let later = m.relayInstall(of: Self.ballot, now: NetTime.milliseconds(11), spacing: 10_000_000)
        #expect(first == 4 && soon == nil && other == nil && later == 4)
        m.checkInvariants()
    }
}
