/// The peer-table part of a peer: what is known of every proven peer (`PeerInfo`: incarnation,
/// liveness, replay window, RTT), which members are excluded from view changes for a while,
/// and which incompatible senders were reported. A value with its own invariants
/// (``checkInvariants(me:)``) and tests; admission and liveness are decided by
/// `ReliableMulticast+PeerTable.swift`.
struct PeerTable {
    /// Proven peers remembered at most.
    static let peersMax = 128
    /// Incompatible senders reported at most (each once).
    static let incompatibleReportedMax = 256

    /// Every proven peer but this one, by ID (one incarnation each).
    var peers: [PeerID: ReliableMulticast.PeerInfo] = [:]
    /// Members excluded from view changes (they did not answer a flush), until the given time.
    private(set) var forcedOut: [Member: NetTime] = [:]
    /// Senders of another protocol version already reported.
    private(set) var incompatibleReported: Set<PeerID> = []
    /// Until then, only joiners that answered the last view change dropped for silent joiners
    /// are proposed (the members are not frozen again for untried ones right away).
    private(set) var joinersHeldUntil: NetTime?

    subscript(id: PeerID) -> ReliableMulticast.PeerInfo? {
        get { peers[id] }
        set { peers[id] = newValue }
    }

    var count: Int { peers.count }

    /// Excludes `m` until `until` (the table of exclusions is pruned of expired ones when it
    /// grows past `peersMax`).
    mutating func exclude(_ m: Member, until: NetTime, now: NetTime) {
        forcedOut[m] = until
        if forcedOut.count > Self.peersMax { forcedOut = forcedOut.filter { $0.value > now } }
    }

    func isExcluded(_ m: Member, now: NetTime) -> Bool { forcedOut[m].map { now < $0 } ?? false }

    /// Holds untried joiners back until `until`.
    mutating func holdJoiners(until: NetTime) { joinersHeldUntil = until }

    func joinersHeld(now: NetTime) -> Bool { joinersHeldUntil.map { now < $0 } ?? false }

    /// The members of a new view start afresh: their exclusions end.
    mutating func forgive(_ members: [Member]) {
        forcedOut = forcedOut.filter { !members.contains($0.key) }
    }

    /// No exclusions (a view given up).
    mutating func forgiveAll() { forcedOut = [:] }

    /// Forgets every peer not heard for more than `horizon` that is not one of `members`.
    mutating func evictSilent(now: NetTime, horizon: UInt64, keeping members: [Member]) {
        for (id, info) in peers where now.nanoseconds(since: info.lastHeard) > horizon {
            if !members.contains(where: { $0.id == id }) { peers[id] = nil }
        }
    }

    /// Whether `sender` (of another protocol version) is to be reported now: the first time,
    /// while the table has room.
    mutating func reportIncompatible(_ sender: PeerID) -> Bool {
        guard !incompatibleReported.contains(sender), incompatibleReported.count < Self.incompatibleReportedMax else { return false }
        incompatibleReported.insert(sender)
        return true
    }

    func checkInvariants(me: Member) {
        precondition(peers.count <= Self.peersMax, "peer table bounded")
        precondition(peers[me.id] == nil, "this peer is not in its own peer table")
        precondition(incompatibleReported.count <= Self.incompatibleReportedMax, "incompatible reports bounded")
    }
}
