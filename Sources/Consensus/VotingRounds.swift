import EggPrimitives
import PeerNet

/// The egg rounds of one game (one namespace): every member votes once per round; round N is
/// decided when every member of the current view has voted for it; the vote of the highest-ID
/// member of the view wins.
///
/// Every member votes rounds in order (a batch covers consecutive rounds), so the rounds a member
/// has voted form a prefix `0..<next[member]`, and the decided rounds form the prefix
/// `0..<frontier` with `frontier = min(next[m])` over the members. That makes the decision depend
/// only on the view and on each sender's ordered stream, never on how senders interleave:
/// within a view a round is decided with exactly the view's members' votes; at a view change the
/// survivors (who delivered the same messages in the old view) re-evaluate with the new members.
///
/// All state changes live in this file (h11's "transition table in one file").
struct EggRounds {
    let game: UInt32
    /// Decided values of rounds `0..<frontier`.
    private(set) var decided: [UInt64] = []
    /// The next round each member is expected to vote for.
    private var next: [PeerID: UInt32] = [:]
    /// Each member's votes for rounds `frontier..<next[member]`.
    private var pending: [PeerID: [UInt64]] = [:]
    private var members: [PeerID] = []

    /// A hard limit on the rounds of one game (a game of 65 536 pairs lasts hours).
    static let roundsMax: UInt32 = 65_536

    var frontier: UInt32 { UInt32(decided.count) }

    /// Values are known from this round on (a joiner starts at a snapshot's frontier and never
    /// learns the values before it).
    private(set) var knownFrom: UInt32 = 0

    init(game: UInt32, members: [PeerID], frontier: UInt32 = 0) {
        self.game = game
        self.decided = Array(repeating: 0, count: Int(frontier))
        self.knownFrom = frontier
        self.members = members.sorted()
        for member in members { next[member] = frontier; pending[member] = [] }
        checkInvariants()
    }

    /// The decided value of `round`, `nil` if undecided or decided before this peer joined.
    func value(_ round: Int) -> UInt64? {
        guard round >= Int(knownFrom), round < decided.count else { return nil }
        return decided[round]
    }

    /// The next round `member` is expected to vote for.
    func nextRound(of member: PeerID) -> UInt32? { next[member] }

    enum VoteOutcome: Equatable {
        /// Accepted; `duplicates` leading values were for rounds already voted by the sender.
        case accepted(count: Int, duplicates: Int)
        case duplicate
        case notMember
        case gap
        case tooFar
    }

    /// Records `values` from `sender` for rounds `firstRound...`; decides what it can.
    /// - Returns: what happened to the batch, and the rounds newly decided.
    mutating func receive(from sender: PeerID, firstRound: UInt32, values: [UInt64]) -> (VoteOutcome, Range<Int>) {
        checkInvariants()
        defer { checkInvariants() }
        guard let expected = next[sender] else { return (.notMember, frontierRange(0)) }
        let end = UInt64(firstRound) + UInt64(values.count)
        guard end <= UInt64(EggRounds.roundsMax) else { return (.tooFar, frontierRange(0)) }
        guard firstRound <= expected else { return (.gap, frontierRange(0)) }
        guard end > UInt64(expected) else { return (.duplicate, frontierRange(0)) }
        let skip = Int(expected - firstRound)
        pending[sender, default: []].append(contentsOf: values[skip...])
        next[sender] = UInt32(end)
        let decidedCount = decide()
        let range = frontierRange(decidedCount)
        return (.accepted(count: values.count - skip, duplicates: skip), range)
    }

    /// Installs a new member set. Departed members are no longer required; new ones start at the
    /// frontier. With `resetPending` (a view with late joiners) every member's undecided votes are
    /// dropped and everyone votes again from the frontier (votes are a pure function of the
    /// voter's seed and the round, so a re-vote repeats the same value).
    mutating func install(members newMembers: [PeerID], resetPending: Bool) -> Range<Int> {
        checkInvariants()
        defer { checkInvariants() }
        members = newMembers.sorted()
        var nextNew: [PeerID: UInt32] = [:]
        var pendingNew: [PeerID: [UInt64]] = [:]
        for member in members {
            if !resetPending, let n = next[member] {
                nextNew[member] = n
                pendingNew[member] = pending[member] ?? []
            } else {
                nextNew[member] = frontier
                pendingNew[member] = []
            }
        }
        next = nextNew
        pending = pendingNew
        let decidedCount = decide()
        return frontierRange(decidedCount)
    }

    /// Decides every round all members have voted for; returns how many were decided.
    private mutating func decide() -> Int {
        guard let highest = members.last else { return 0 }
        let upTo = members.map { next[$0] ?? 0 }.min() ?? 0
        guard upTo > frontier else { return 0 }
        let count = Int(upTo - frontier)
        do {
            guard let winning = pending[highest]?[0..<count] else { preconditionFailure("every member has a pending list") }
            decided.append(contentsOf: winning)
        }
        for member in members { pending[member]?.removeFirst(count) }
        return count
    }

    private func frontierRange(_ count: Int) -> Range<Int> { (decided.count - count)..<decided.count }

    /// Checked on every vote received: no set is built (it was a few per cent of a replay).
    func checkInvariants() {
        // `members` is sorted: its distinct members are counted in one pass. Every one has its
        // bookkeeping, and as many keys as distinct members means no key of a non-member.
        var distinct = 0
        for index in members.indices {
            if index == 0 || members[index] != members[index - 1] { distinct += 1 }
            guard let upTo = next[members[index]], let votes = pending[members[index]] else {
                preconditionFailure("vote bookkeeping covers exactly the members")
            }
            precondition(upTo >= frontier, "a member's voted prefix reaches the frontier")
            precondition(votes.count == Int(upTo - frontier), "pending votes match the prefix")
        }
        precondition(next.count == distinct && pending.count == distinct, "vote bookkeeping covers exactly the members")
    }
}

/// A one-shot vote (start of a match, game over): decided when every member of the current
/// view has voted; the result carries every counted vote and the highest-ID member's.
struct OneShotVote<Value: Hashable & Sendable> {
    private(set) var votes: [PeerID: Value] = [:]
    private(set) var result: (winner: PeerID, votes: [(PeerID, Value)])?

    var isDecided: Bool { result != nil }

    /// The decided value: the winner's vote (nil while undecided).
    var decidedValue: Value? {
        guard let result else { return nil }
        return result.votes.first { $0.0 == result.winner }?.1
    }

    /// Records `sender`'s vote (first one counts). Returns false for a second vote.
    mutating func receive(from sender: PeerID, value: Value, members: [PeerID]) -> Bool {
        guard result == nil, members.contains(sender), votes[sender] == nil else { return false }
        votes[sender] = value
        evaluate(members: members)
        return true
    }

    /// Re-evaluates with a new member set; with `reset`, drops every vote (members vote again).
    mutating func install(members: [PeerID], reset: Bool) {
        guard result == nil else { return }
        if reset { votes = [:] }
        votes = votes.filter { members.contains($0.key) }
        evaluate(members: members)
    }

    private mutating func evaluate(members: [PeerID]) {
        guard let highest = members.max(), members.allSatisfy({ votes[$0] != nil }) else { return }
        result = (highest, members.sorted().map { ($0, votes[$0]!) })
    }
}

/// A peer's own votes: a pure function of its seed, the namespace and the round, so that a
/// re-vote (after a view with joiners) repeats the same value.
public struct VoteSource: Sendable, Hashable {
    public let seed: UInt64

    public init(seed: UInt64) { self.seed = seed }

    /// The first SplitMix64 output of the seed mixed with the first output of (game, round).
    public func eggVote(game: UInt32, round: UInt32) -> UInt64 {
        SplitMix64.output(seed: seed ^ SplitMix64.output(seed: UInt64(game) << 32 | UInt64(round), index: 0), index: 0)
    }
}
