/// The stability part of a peer: what each member of the installed view reported it delivered
/// of every stream (heartbeats and stability reports), from which follows what every member
/// delivered (stable, freed), and which members were reported lagging. A value with its own
/// invariants (``checkInvariants(members:)``) and tests; when reports go out and what is freed
/// is decided by `ReliableMulticast+Stability.swift`.
struct Stability {
    /// member → (origin → delivered), from the heartbeats and reports of the installed view.
    private(set) var reports: [PeerID: [PeerID: UInt64]] = [:]
    /// Members reported `.lagging` since the send window last had room.
    private(set) var laggingReported: Set<PeerID> = []

    /// What `member` last reported it delivered of `origin`'s stream (0: nothing known).
    func delivered(by member: PeerID, of origin: PeerID) -> UInt64 { reports[member]?[origin] ?? 0 }

    /// A heartbeat's delivered vector: replaces what `member` reported before.
    mutating func replace(from member: PeerID, delivered: [(PeerID, UInt64)]) {
        var report: [PeerID: UInt64] = [:]
        for (peer, seq) in delivered { report[peer] = seq }
        reports[member] = report
    }

    /// A stability report's entries: each raises what `member` reported (never lowers it).
    mutating func merge(from member: PeerID, entries: [ReportEntry]) {
        // Taken out while updated: a copy left in `reports` would make every report copy the table.
        var report = reports.removeValue(forKey: member) ?? [:]
        for e in entries { report[e.peer] = max(report[e.peer] ?? 0, e.delivered) }
        reports[member] = report
    }

    /// The highest seq of `origin`'s stream delivered by this peer (`delivered`) and by every
    /// one of `others` as far as they reported.
    func stable(of origin: PeerID, delivered: UInt64, members: [Member], except me: Member) -> UInt64 {
        var stable = delivered
        for m in members where m != me { stable = min(stable, reports[m.id]?[origin] ?? 0) }
        return stable
    }

    /// Whether `member` is to be reported lagging now (once until `clearLagging`).
    mutating func markLagging(_ member: PeerID) -> Bool { laggingReported.insert(member).inserted }

    /// The send window has room again: a member lagging from now on is reported again.
    mutating func clearLagging() { if !laggingReported.isEmpty { laggingReported.removeAll() } }

    /// A new view (or none): nothing reported yet.
    mutating func reset() {
        reports = [:]
        laggingReported = []
    }

    /// Only members of the installed view (`members`, sorted by ID) report and are reported lagging.
    func checkInvariants(members: [Member]) {
        precondition(reports.count <= members.count, "reports come from members")
        precondition(laggingReported.count <= members.count, "only members lag")
        func isMember(_ id: PeerID) -> Bool {
            for m in members where m.id == id { return true }
            return false
        }
        for id in reports.keys { precondition(isMember(id), "reports come from members") }
        for id in laggingReported { precondition(isMember(id), "only members lag") }
    }
}
