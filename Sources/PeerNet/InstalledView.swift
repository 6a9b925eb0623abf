/// The installed view of a peer: its id, key and members, and the `MembershipView` the
/// application sees. It lives inside the phase (`ReliableMulticast.Phase`): a member, a
/// flushing or a blocked peer carries the view it is in; a joining peer carries an empty one
/// (after a view is given up, its application view names that view's members departed); a
/// peer that left keeps the view it left. Immutable, and held by reference: a phase that
/// carries it is copied often, the view seldom changes. With its own invariants and tests.
final class InstalledView: Sendable {
    /// The view's id and key (0 for an empty one).
    let id: UInt64
    let key: UInt64
    /// The view's members, sorted (none for an empty one).
    let members: [Member]
    /// The view as the application sees it (`ReliableMulticast.view`).
    let view: MembershipView

    /// No view yet.
    static let none = InstalledView(emptyNaming: [])

    /// View `id` (`key`) of `members` (sorted): `baseIDs` are the members of the view it
    /// replaces (the application sees who joined and who departed).
    init(id: UInt64, key: UInt64, members: [Member], baseIDs: Set<PeerID>) {
        let newIDs = Set(members.map(\.id))
        self.id = id
        self.key = key
        self.members = members
        view = MembershipView(
            id: id, members: members.map(\.id),
            joined: Array(newIDs.subtracting(baseIDs)), departed: Array(baseIDs.subtracting(newIDs)), key: key)
    }

    /// No view; the application's view names `departed` departed.
    private init(emptyNaming departed: [PeerID]) {
        id = 0
        key = 0
        members = []
        view = MembershipView(id: 0, members: [], departed: departed)
    }

    /// What is left once this view is given up: no view; the application's view names its
    /// members departed.
    var givenUp: InstalledView { InstalledView(emptyNaming: view.members) }

    var isEmpty: Bool { members.isEmpty }

    func checkInvariants() {
        precondition(members.count <= Wire.membersMax, "view too large")
        precondition(view.id == id && view.members.count == members.count, "the application's view is the installed one")
        for index in members.indices {
            precondition(index == 0 || !(members[index] < members[index - 1]), "members sorted")
            precondition(view.members[index] == members[index].id, "the application's view is the installed one")
        }
        precondition(members.isEmpty ? id == 0 && key == 0 : view.key == key, "an installed view carries its key; an empty one none")
    }
}

/// What a peer remembers of view changes, whatever its phase: the highest ballot attempt it
/// saw, and the last change it installed (to tell a straggler `install` again, rate-limited).
/// A value with its own invariants and tests; the view change itself is
/// `ReliableMulticast+ViewChange.swift`.
struct BallotMemory {
    /// The highest ballot attempt seen since the last install (or since this peer gave its view
    /// up): only ballots this peer takes part in raise it, and each view starts over from 0,
    /// so attempts stay small and one forged ballot cannot push them to the wire's limit for
    /// good.
    private(set) var highestAttemptSeen: UInt32 = 0
    /// A proposal's attempt may be at most this far above `highestAttemptSeen` (a real one is
    /// one above the highest its coordinator saw, and members see the same ballots).
    static let attemptStepMax: UInt32 = 1_024
    /// The last view change this peer installed, in whatever phase it is now.
    private(set) var lastInstall: (ballot: Ballot, newViewID: UInt64)?
    private(set) var lastInstallRelayAt: NetTime?

    /// View `newViewID` was installed by `ballot`: attempts count from 0 again.
    mutating func installed(_ newViewID: UInt64, by ballot: Ballot) {
        lastInstall = (ballot, newViewID)
        highestAttemptSeen = 0
    }

    /// The installed view was given up: attempts count from 0 again.
    mutating func viewGivenUp() {
        highestAttemptSeen = 0
    }

    /// Ballot `attempt` was seen in a view change this peer takes part in (or proposes: after
    /// attempts wrapped, its own low attempt starts the count again).
    mutating func noteAttempt(_ attempt: UInt32) {
        highestAttemptSeen = highestAttemptSeen >= Wire.attemptMax ? attempt : max(highestAttemptSeen, attempt)
    }

    /// Whether a proposal's `attempt` is within reach of what this peer saw.
    func isPlausible(attempt: UInt32) -> Bool { attempt <= highestAttemptSeen &+ Self.attemptStepMax }

    /// The attempt of this peer's next proposal: above every one seen, or 1 again when that
    /// would pass the wire's limit (`Wire.attemptMax`: a ballot above it is malformed). Members
    /// frozen in a higher ballot take part once they give it up (its coordinator silent).
    var nextAttempt: UInt32 { highestAttemptSeen >= Wire.attemptMax ? 1 : highestAttemptSeen + 1 }

    /// A straggler still sends `ready` for `ballot`: the new view id to tell it in an `install`
    /// when this peer installed that ballot and did not tell anyone within `spacing` before
    /// `now`; otherwise nil.
    mutating func relayInstall(of ballot: Ballot, now: NetTime, spacing: UInt64) -> UInt64? {
        guard let last = lastInstall, last.ballot == ballot else { return nil }
        if let at = lastInstallRelayAt, now.nanoseconds(since: at) < spacing { return nil }
        lastInstallRelayAt = now
        return last.newViewID
    }

    func checkInvariants() {
        precondition(highestAttemptSeen <= Wire.attemptMax, "attempts seen are bounded by the wire")
        precondition(lastInstallRelayAt == nil || lastInstall != nil, "only an installed ballot is relayed")
    }
}
