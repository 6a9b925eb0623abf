import Testing
@testable import PeerNet

/// `ViewState`, the part of a peer that holds its installed view and what it remembers of view
/// changes, on its own (the protocol around it: `MembershipTests`, `ForgedFlushTests`,
/// `BlockedFlushTests`).
@Suite("ViewState: the installed view, its abandonment, ballots, install relays")
struct ViewStatePartTests {
    static let a = Member(id: PeerID(1), incarnation: 1), b = Member(id: PeerID(2), incarnation: 1)
    static let c = Member(id: PeerID(3), incarnation: 1)
    static let ballot = Ballot(attempt: 3, coordinator: PeerID(1))

    @Test("an install sets id, key and members, and the application's view with who joined and departed")
    func install() {
        var v = ViewState()
        v.noteAttempt(Self.ballot.attempt)
        v.install(id: 4, key: 99, members: [Self.a, Self.c], baseIDs: [Self.a.id, Self.b.id], by: Self.ballot)
        #expect(v.id == 4 && v.key == 99 && v.members == [Self.a, Self.c])
        #expect(v.view == MembershipView(id: 4, members: [Self.a.id, Self.c.id], joined: [Self.c.id], departed: [Self.b.id], key: 99))
        #expect(v.lastInstall?.ballot == Self.ballot && v.lastInstall?.newViewID == 4)
        v.checkInvariants()
    }

    @Test("giving the view up leaves no view; the application's view names the old members departed")
    func abandon() {
        var v = ViewState()
        v.noteAttempt(Self.ballot.attempt)
        v.install(id: 4, key: 99, members: [Self.a, Self.b], baseIDs: [], by: Self.ballot)
        let old = v.abandon()
        #expect(old.id == 4 && old.members == [Self.a.id, Self.b.id])
        #expect(v.id == 0 && v.key == 0 && v.members.isEmpty)
        #expect(v.view == MembershipView(id: 0, members: [], departed: [Self.a.id, Self.b.id]))
        v.checkInvariants()
    }

    @Test("the next attempt is above every attempt seen, starts again at 1 past the wire's limit, and a far one is implausible")
    func attempts() {
        var v = ViewState()
        #expect(v.nextAttempt == 1)
        v.noteAttempt(7)
        v.noteAttempt(5)
        #expect(v.nextAttempt == 8)
        #expect(v.isPlausible(attempt: 7 + ViewState.attemptStepMax) && !v.isPlausible(attempt: 8 + ViewState.attemptStepMax))
        v.noteAttempt(Wire.attemptMax)
        #expect(v.nextAttempt == 1, "never a malformed ballot")
        v.noteAttempt(1)
        #expect(v.nextAttempt == 2, "counting starts again")
        v.checkInvariants()
    }

    @Test("an install is relayed only for the ballot installed, at most once per spacing")
    func relay() {
        var v = ViewState()
        let none = v.relayInstall(of: Self.ballot, now: .zero, spacing: 10)
        #expect(none == nil, "nothing installed")
        v.noteAttempt(Self.ballot.attempt)
        v.install(id: 4, key: 99, members: [Self.a], baseIDs: [], by: Self.ballot)
        let first = v.relayInstall(of: Self.ballot, now: .milliseconds(1), spacing: 10_000_000)
        let soon = v.relayInstall(of: Self.ballot, now: .milliseconds(5), spacing: 10_000_000)
        let other = v.relayInstall(of: Ballot(attempt: 2, coordinator: PeerID(1)), now: .milliseconds(50), spacing: 10_000_000)
        let later = v.relayInstall(of: Self.ballot, now: .milliseconds(11), spacing: 10_000_000)
        #expect(first == 4 && soon == nil && other == nil && later == 4)
        v.checkInvariants()
    }
}
