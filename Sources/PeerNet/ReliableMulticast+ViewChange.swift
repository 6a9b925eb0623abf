import EggPrimitives

/// The view change (flush) of `ReliableMulticast`: every transition of the membership state
/// machine lives in this file. The algorithm is documented on `ReliableMulticast`.
extension ReliableMulticast {
    // MARK: - Phase

    var isLeft: Bool {
        if case .left = phase { true } else { false }
    }

    var isBlocked: Bool {
        if case .blocked = phase { true } else { false }
    }

    /// Whether a view is installed (member, flushing, blocked).
    var hasView: Bool {
        switch phase {
        case .member, .flushing, .blocked: true
        case .joining, .left: false
        }
    }

    /// The view change this peer takes part in (flushing, or joining by a founding or an admission).
    var flush: Flush? {
        switch phase {
        case let .joining(_, flush, _): flush
        case let .flushing(flush, _): flush
        case .member, .blocked, .left: nil
        }
    }

    var participation: Participation? { flush?.participation }
    var coordinating: Proposal? { flush?.coordinating }

    var flushAbandoned: Bool {
        switch phase {
        case let .member(inView), let .flushing(_, inView), let .blocked(_, inView): inView.flushAbandoned
        case .joining, .left: false
        }
    }

    /// Since when this peer is cut off from a primary view: blocked since then, or blocked
    /// before the view change it is in.
    var cutOffSince: NetTime? {
        switch phase {
        case let .member(inView), let .flushing(_, inView): inView.blockedBefore
        case let .blocked(since, _): since
        case .joining, .left: nil
        }
    }

    /// Changes the view change this peer takes part in, in place (none: nothing changes).
    func updateFlush(_ change: (Flush) -> Void) {
        switch phase {
        case .joining(_, let flush?, _), .flushing(let flush, _):
            change(flush)
        case .joining(_, nil, _), .member, .blocked, .left:
            break
        }
    }

    /// Enters view change `flush` (or moves on to it from another): frozen from now on.
    func enterFlush(_ flush: Flush) {
        switch phase {
        case let .joining(discoveryAt, _, given):
            phase = .joining(discoveryAt: discoveryAt, flush: flush, given: given)
        case let .member(inView), let .flushing(_, inView):
            phase = .flushing(flush, inView)
        case .blocked(let since, var inView):
            inView.blockedBefore = since
            phase = .flushing(flush, inView)
        case .left:
            preconditionFailure("no view change after leave")
        }
    }

    /// The view change ends without an install (`abandoned`: this peer coordinated it and gave
    /// it up). Joining, it listens on; in a view it returns to the phase it was in before: blocked
    /// (since when it was blocked then) or a member. The membership is evaluated again at the
    /// end of the same input and decides between the two; until then a peer blocked before
    /// neither transmits nor delivers.
    func endFlush(abandoned: Bool) {
        switch phase {
        case let .joining(discoveryAt, _, given):
            phase = .joining(discoveryAt: discoveryAt, flush: nil, given: given)
        case .flushing(_, var inView):
            inView.flushAbandoned = inView.flushAbandoned || abandoned
            if let since = inView.blockedBefore {
                inView.blockedBefore = nil
                phase = .blocked(since: since, inView)
            } else {
                phase = .member(inView)
            }
        case .member, .blocked, .left:
            break
        }
    }

    /// A new proposal of this peer's supersedes one it gave up.
    func clearFlushAbandoned() {
        switch phase {
        case var .member(inView):
            inView.flushAbandoned = false
            phase = .member(inView)
        case .flushing(let flush, var inView):
            inView.flushAbandoned = false
            phase = .flushing(flush, inView)
        case .blocked(let since, var inView):
            inView.flushAbandoned = false
            phase = .blocked(since: since, inView)
        case .joining, .left:
            break
        }
    }

    // MARK: - Flush frames

    /// Multicasts a flush frame and handles it locally too: the coordinator is also a member.
    func emitFlush(_ frame: Frame, now: NetTime) {
        emit(frame)
        handleFlushFrame(frame, from: me, now: now)
    }

    /// Who may move a view change along (a proven peer that is not a member of the view in
    /// question changes nothing; such frames are counted in `framesRejected`):
    /// - a `propose` for the installed view only from a member of it, naming itself;
    /// - a `propose` from another view (founding, or a group admitting this peer) only from a
    ///   peer heard (its heartbeats) in that very view, naming itself;
    /// - a `cut` only from the coordinator of the ballot this peer acked (the ballot names it);
    /// - an `install`, and a view proving a ready cut's install, only from a member of that
    ///   ballot's proposal (its coordinator, or a member that installed it);
    /// - an `ack` or `ready` only from a member of the coordinator's own proposal.
    func handleFlushFrame(_ frame: Frame, from sender: Member, now: NetTime) {
        switch frame {
        case let .propose(attempt, baseID, baseKey, proposed):
            handlePropose(Ballot(attempt: attempt, coordinator: sender.id), from: sender, baseID: baseID, baseKey: baseKey, proposed: proposed, now: now)
        case let .ack(ballot, ackerViewID, ackerViewKey, ownSeq, holdings):
            handleAck(ballot, from: sender, viewID: ackerViewID, viewKey: ackerViewKey, ownSeq: ownSeq, holdings: holdings, now: now)
        case let .cut(attempt, baseID, baseKey, newViewID, entries):
            handleCut(Ballot(attempt: attempt, coordinator: sender.id), baseID: baseID, baseKey: baseKey, cut: CutInfo(newViewID: newViewID, entries: entries), now: now)
        case let .ready(ballot):
            handleReady(ballot, from: sender, now: now)
        case let .install(ballot, newViewID):
            handleInstall(ballot, from: sender, newViewID: newViewID, now: now)
        case .heartbeat, .data, .nack, .leave, .report, .challenge, .response, .listen, .sync:
            preconditionFailure("not a flush frame")
        }
    }

    /// (id, key) order of views: the larger one absorbs the smaller one's peers as joiners.
    static func dominates(_ a: (UInt64, UInt64), _ b: (UInt64, UInt64)) -> Bool { a > b }

    // MARK: - Member side

    /// A member of our ready ballot's proposal names (id, key) as its view: if that is the view
    /// our ready cut would install, its install happened (the message was lost or overtaken):
    /// install it too. (Anyone else naming it proves nothing.)
    func installIfProven(viewID provenID: UInt64, viewKey provenKey: UInt64, by sender: Member) {
        guard let p = participation, p.ready, let cut = p.cut, cut.newViewID == provenID,
              p.members.contains(sender) else { return }
        let newMembers = cut.entries.filter(\.inNew).map(\.member).sorted()
        guard Self.viewKey(id: provenID, members: newMembers, ballot: p.ballot) == provenKey else { return }
        install(p)
    }

    /// `own`: the proposal this peer just started (it coordinates the ballot).
    private func handlePropose(
        _ ballot: Ballot, from sender: Member, baseID: UInt64, baseKey: UInt64, proposed: [Member],
        own: Proposal? = nil, now: NetTime
    ) {
        installIfProven(viewID: baseID, viewKey: baseKey, by: sender)
        guard proposed.contains(me), !isLeft else { return }
        let continuing = hasView && viewID == baseID && viewKey == baseKey
        guard isEntitledToPropose(sender, baseID: baseID, baseKey: baseKey, proposed: proposed, continuing: continuing) else {
            stats.framesRejected += 1
            return
        }
        // A ballot far beyond any seen is forged (a real coordinator counts from what its view saw).
        guard sender == me || ballots.isPlausible(attempt: ballot.attempt) else {
            stats.ballotsOutOfBounds += 1
            stats.framesRejected += 1
            return
        }
        // Only ballots this peer takes part in raise its own next ballot (bounded on the wire).
        ballots.noteAttempt(ballot.attempt)
        if !continuing {
            // Join only a group whose view dominates ours (or found one when we have none).
            // (A blocked peer joins any working group that admits it.)
            let mine = hasView ? (viewID, viewKey) : (0, 0)
            guard !hasView || isBlocked || Self.dominates((baseID, baseKey), mine) else { return }
        }
        guard takesPart(ballot, baseID: baseID, baseKey: baseKey) else { return }
        if participation?.ballot != ballot || participation?.baseID != baseID || participation?.baseKey != baseKey {
            let p = Participation(
                ballot: ballot, baseID: baseID, baseKey: baseKey, members: proposed,
                continuing: continuing, lastProgress: now)
            enterFlush(Flush(participation: p, coordinating: own))
            scheduleFlushRetransmit(now: now)
        } else {
            updateFlush { $0.participation.lastProgress = now }
        }
        // Frozen (status .flushing, or still .joining without a view): report what we hold.
        let holdings: [(PeerID, UInt64)] = continuing ? members.map { ($0.id, streams[$0.id]!.contiguous) } : []
        emitFlush(.ack(ballot, viewID: hasView ? viewID : 0, viewKey: hasView ? viewKey : 0, ownSeq: sendWindow.transmittedSeq, holdings: holdings), now: now)
    }

    /// Whether this peer takes part in a proposal of `ballot` on base (id, key), given the view
    /// change it is in (if any): on the same base a ballot not below that one's, on another base
    /// only one that dominates it.
    func takesPart(_ ballot: Ballot, baseID: UInt64, baseKey: UInt64) -> Bool {
        guard let p = participation else { return true }
        if p.baseID == baseID && p.baseKey == baseKey { return !(ballot < p.ballot) }
        return Self.dominates((baseID, baseKey), (p.baseID, p.baseKey))
    }

    /// A coordinator names itself among the proposed; for our installed view it is a member of
    /// it; for another view (founding, or a group admitting us) it was heard in that view.
    func isEntitledToPropose(_ sender: Member, baseID: UInt64, baseKey: UInt64, proposed: [Member], continuing: Bool) -> Bool {
        guard proposed.contains(sender) else { return false }
        if sender == me { return true }
        if continuing { return members.contains(sender) }
        guard let info = peers[sender.id], info.incarnation == sender.incarnation else { return false }
        return info.viewID == baseID && info.viewKey == baseKey
    }

    private func handleCut(_ ballot: Ballot, baseID: UInt64, baseKey: UInt64, cut: CutInfo, now: NetTime) {
        guard var p = participation, p.ballot == ballot, p.baseID == baseID, p.baseKey == baseKey else { return }
        // A cut must restart our own stream right after what we transmitted; otherwise it was
        // computed from a stale ack of ours: ignore it (the coordinator will exclude us and retry).
        guard cut.entries.first(where: { $0.member == me && $0.inNew })?.cut == sendWindow.transmittedSeq else { return }
        if p.cut == nil {
            guard isValidCut(cut, continuing: p.continuing) else {
                stats.framesRejected += 1
                return
            }
            p.cut = cut
            if p.continuing {
                for entry in cut.entries where entry.inBase { receiveWindows.noteKnown(entry.cut, of: entry.member) }
            }
        }
        p.lastProgress = now
        updateFlush { $0.participation = p }
        checkReady(now: now)
    }

    /// A cut a member can install: it names this peer, a continuing member finds in its `inBase`
    /// entries exactly the members of its view, never below what it delivered, and no entry
    /// of the new view is a member of the base under another incarnation. (A remote peer's
    /// cut is input: one that fails is ignored and counted, never trusted.)
    func isValidCut(_ cut: CutInfo, continuing: Bool) -> Bool {
        guard cut.entries.contains(where: { $0.member == me && $0.inNew }) else { return false }
        guard continuing else { return cut.newViewID > viewID || !hasView }
        guard cut.newViewID > viewID else { return false }
        let base = cut.entries.filter(\.inBase)
        guard base.count == members.count else { return false }
        for entry in base {
            guard members.contains(entry.member), let s = streams[entry.member.id], entry.cut >= s.delivered else { return false }
        }
        for entry in cut.entries where !entry.inBase {
            guard !members.contains(where: { $0.id == entry.member.id }) else { return false }
        }
        return true
    }

    /// Sends `ready` once every base message up to the cut is held; installs if asked to.
    func checkReady(now: NetTime? = nil) {
        guard var p = participation, let cut = p.cut else { return }
        if !p.ready {
            if p.continuing {
                for entry in cut.entries where entry.inBase {
                    guard let s = streams[entry.member.id], s.member == entry.member else { continue }
                    if s.contiguous < entry.cut { return }
                }
            }
            p.ready = true
            updateFlush { $0.participation = p }
            emitReadyNow(p.ballot)
        }
        if p.installRequested { install(p) }
    }

    private func emitReadyNow(_ ballot: Ballot) {
        emit(.ready(ballot))
        if coordinating?.ballot == ballot {
            updateFlush { _ = $0.coordinating?.ready.insert(me.id) }
            maybeInstall()
        }
    }

    private func handleInstall(_ ballot: Ballot, from sender: Member, newViewID: UInt64, now: NetTime) {
        guard var p = participation, p.ballot == ballot, let cut = p.cut, cut.newViewID == newViewID else { return }
        guard p.members.contains(sender) else {
            stats.framesRejected += 1
            return
        }
        p.installRequested = true
        updateFlush { $0.participation = p }
        if p.ready { install(p) }
    }

    /// Delivers the old view up to the cut, announces the new view, restarts every stream at its cut.
    private func install(_ p: Participation) {
        guard let cut = p.cut else { preconditionFailure("install without a cut") }
        let byID = Dictionary(cut.entries.map { ($0.member.id, $0) }, uniquingKeysWith: { a, _ in a })
        if p.continuing {
            for entry in cut.entries.sorted(by: { $0.member < $1.member }) where entry.inBase {
                guard streams[entry.member.id]?.member == entry.member else { continue }
                while streams[entry.member.id]!.delivered < entry.cut {
                    let next = streams[entry.member.id]!.delivered + 1
                    guard let item = streams[entry.member.id]!.messages[next] else {
                        preconditionFailure("ready implies every message up to the cut is held")
                    }
                    deliver(item)
                }
            }
        }
        let newMembers = cut.entries.filter(\.inNew).map(\.member).sorted()
        let baseIDs = Set(cut.entries.filter(\.inBase).map(\.member.id))
        var newStreams: [PeerID: Stream] = [:]
        for m in newMembers {
            let start = byID[m.id]!.cut
            var s = Stream(member: m, start: start)
            if p.continuing, let old = streams[m.id], old.member == m {
                s.messages = old.messages.filter { $0.key > start && $0.value.viewID >= cut.newViewID }
                s.highestKnown = max(old.highestKnown, start)
            }
            newStreams[m.id] = s
        }
        precondition(newStreams[me.id] != nil, "an installed view contains this peer")
        precondition(byID[me.id]!.cut == sendWindow.transmittedSeq, "own stream restarts after everything transmitted")
        receiveWindows.replace(with: newStreams)
        let newKey = Self.viewKey(id: cut.newViewID, members: newMembers, ballot: p.ballot)
        ballots.installed(cut.newViewID, by: p.ballot)
        phase = .member(InView(installed: InstalledView(id: cut.newViewID, key: newKey, members: newMembers, baseIDs: baseIDs)))
        stability.reset()
        // Members start afresh; a candidate excluded for not answering waits out its exclusion.
        peerTable.forgive(newMembers)
        sendWindow.clearRepairs()
        for m in newMembers where m != me { peerTable[m.id]?.staleViewSince = nil }
        vouch(for: newMembers, now: lastNow)
        timers[.flushRetransmit] = nil
        disarmNacks()  // the streams start afresh
        stats.viewsInstalled += 1
        events.append(.viewChanged(view))
        transmitPending()
        deliverReady()
    }

    /// Blocked too long: gives up the view and starts over as a fresh peer (joining). Own
    /// messages queued while blocked are discarded (the group never agreed on them).
    /// `listened`: the peer table is current (every member was heard or suspected over the
    /// last suspect timeout), so no discovery period is needed before founding or joining.
    func abandonView(now: NetTime, listened: Bool = false) {
        stats.viewsAbandoned += 1
        stats.messagesAbandoned += UInt64(sendWindow.abandonPending())
        let old = view
        phase = .joining(
            discoveryAt: listened ? now : now.adding(nanoseconds: config.discoveryNanoseconds), flush: nil,
            given: installed.givenUp)
        ballots.viewGivenUp()
        receiveWindows.removeAll()
        stability.reset()
        sendWindow.clearRepairs()
        peerTable.forgiveAll()
        timers[.report] = nil
        disarmNacks()
        events.append(.viewAbandoned(old))
    }

    static func viewKey(id: UInt64, members: [Member], ballot: Ballot) -> UInt64 {
        var w = BigEndianByteWriter()
        w.u64(id)
        w.u32(ballot.attempt)
        w.u64(ballot.coordinator.raw)
        for m in members { w.u64(m.id.raw); w.u64(m.incarnation) }
        return FNV1a64.hash(w.bytes)
    }

    // MARK: - Coordinator side

    private func handleAck(
        _ ballot: Ballot, from sender: Member, viewID ackerViewID: UInt64, viewKey ackerViewKey: UInt64,
        ownSeq: UInt64, holdings: [(PeerID, UInt64)], now: NetTime
    ) {
        guard var c = coordinating, c.ballot == ballot, c.members.contains(sender), c.cut == nil else { return }
        let continuing = c.baseID != 0 && ackerViewID == c.baseID && ackerViewKey == c.baseKey
        if c.baseMembers.contains(sender), !continuing {
            // A member of our view that is not in it any more (it missed a view): exclude it
            // now and restart; it rejoins as a joiner by the next view change.
            exclude(sender, now: now)
            endFlush(abandoned: false)
            return
        }
        var held: [PeerID: UInt64] = [:]
        for (peer, seq) in holdings { held[peer] = seq }
        c.acks[sender.id] = AckInfo(continuing: continuing, viewID: ackerViewID, ownSeq: ownSeq, holdings: held)
        guard c.members.allSatisfy({ c.acks[$0.id] != nil }) else {
            updateFlush { $0.coordinating = c }
            return
        }
        let cut = computeCut(c)
        c.cut = cut
        if !c.joiners.isEmpty { c.joinersDue = now.adding(nanoseconds: joinerAnswerNanoseconds) }
        updateFlush { $0.coordinating = c }
        emitFlush(.cut(attempt: ballot.attempt, baseID: c.baseID, baseKey: c.baseKey, newViewID: cut.newViewID, entries: cut.entries), now: now)
    }

    /// Base members: the most any continuing member holds. Joiners: their own seq (their stream starts after it).
    private func computeCut(_ c: Proposal) -> CutInfo {
        var entries: [CutEntry] = []
        let newSet = Set(c.members)
        for m in c.baseMembers {
            var cut: UInt64 = 0
            for ack in c.acks.values where ack.continuing { cut = max(cut, ack.holdings[m.id] ?? 0) }
            if let own = c.acks[m.id], own.continuing { cut = max(cut, own.ownSeq) }
            entries.append(CutEntry(member: m, cut: cut, inBase: true, inNew: newSet.contains(m)))
        }
        let baseSet = Set(c.baseMembers)
        for m in c.members where !baseSet.contains(m) {
            entries.append(CutEntry(member: m, cut: c.acks[m.id]!.ownSeq, inBase: false, inNew: true))
        }
        precondition(entries.count <= Wire.cutEntriesMax, "cut too large for one datagram")
        // View ids only grow for every member, joiners included (a blocked joiner may come
        // from a view numbered higher than the group it joins).
        let newViewID = max(c.baseID, c.acks.values.map(\.viewID).max() ?? 0) + 1
        return CutInfo(newViewID: newViewID, entries: entries)
    }

    private func handleReady(_ ballot: Ballot, from sender: Member, now: NetTime) {
        if var c = coordinating, c.ballot == ballot, c.cut != nil, c.members.contains(sender) {
            c.ready.insert(sender.id)
            updateFlush { $0.coordinating = c }
            maybeInstall()
            return
        }
        // A straggler missed the install of a ballot we installed: tell it again (rate-limited).
        if sender != me, let newViewID = ballots.relayInstall(of: ballot, now: now, spacing: config.flushRetransmitNanoseconds / 2) {
            emit(.install(ballot, newViewID: newViewID))
        }
    }

    private func maybeInstall() {
        guard let c = coordinating, let cut = c.cut, c.members.allSatisfy({ c.ready.contains($0.id) }) else { return }
        emit(.install(c.ballot, newViewID: cut.newViewID))
        if var p = participation, p.ballot == c.ballot {
            p.installRequested = true
            updateFlush { $0.participation = p }
            if p.ready { install(p) }
        }
    }

    /// Proposes `proposed` as the next view, coordinated by this peer (a member of it too). Not
    /// while it is frozen in a view change of another base that ours does not dominate (one
    /// whose coordinator went silent: it is given up at the next timeout, then we propose).
    private func startProposal(members proposed: [Member], now: NetTime) {
        let attempt = ballots.nextAttempt
        let ballot = Ballot(attempt: attempt, coordinator: me.id)
        let baseID = hasView ? viewID : 0
        let baseKey = hasView ? viewKey : 0
        guard takesPart(ballot, baseID: baseID, baseKey: baseKey) else { return }
        ballots.noteAttempt(attempt)
        clearFlushAbandoned()
        var proposal = Proposal(
            ballot: ballot, baseID: baseID, baseKey: baseKey,
            baseMembers: hasView ? members : [], members: proposed.sorted(),
            deadline: now.adding(nanoseconds: config.flushTimeoutNanoseconds))
        if !proposal.joiners.isEmpty {
            proposal.joinersDue = now.adding(nanoseconds: joinerAnswerNanoseconds)
            // A joiner takes part only in a change of a view it heard its coordinator in: a
            // heartbeat goes first (and with each retransmission while joiners are due).
            if hasView { emitHeartbeat(now: now) }
        }
        emit(.propose(attempt: ballot.attempt, baseID: baseID, baseKey: baseKey, members: proposal.members))
        handlePropose(ballot, from: me, baseID: baseID, baseKey: baseKey, proposed: proposal.members, own: proposal, now: now)
        scheduleFlushRetransmit(now: now)
    }

    /// How long a joiner has to answer a step of a view change: `joinerAnswerTimeoutNanoseconds`,
    /// or three of the slowest member's retransmit timeouts (smoothed RTT plus four deviations)
    /// on a slower link (a joiner's own RTT is not known yet). Founding a group, ten times
    /// that: no group is frozen meanwhile, only peers that have none yet (and a lossy link
    /// should not split the founders).
    var joinerAnswerNanoseconds: UInt64 {
        guard hasView else { return 10 * config.joinerAnswerTimeoutNanoseconds }
        let slowest = members.compactMap { m -> UInt64? in
            guard m != me, let info = peers[m.id], let srtt = info.rttSmoothed else { return nil }
            return min(srtt + 4 * info.rttVariation, Self.rttForTimeoutsMaxNanoseconds)
        }.max() ?? 0
        return max(config.joinerAnswerTimeoutNanoseconds, 3 * slowest)
    }

    /// Arms the flush retransmission: every `flushRetransmitNanoseconds`, or four times per
    /// joiner answer timeout while joiners are due to answer (a joiner that had not proven this
    /// peer yet drops the first propose; it must get another within its answer time).
    private func scheduleFlushRetransmit(now: NetTime) {
        var interval = config.flushRetransmitNanoseconds
        if coordinating?.joinersDue != nil { interval = min(interval, max(1, joinerAnswerNanoseconds / 4)) }
        let at = now.adding(nanoseconds: interval)
        if let armed = timers[.flushRetransmit], armed <= at { return }
        timers[.flushRetransmit] = at
    }

    // MARK: - Timers

    /// The `.flushRetransmit` timer fired: the running view change's frames go out again.
    func retransmitFlush(now: NetTime) {
        timers[.flushRetransmit] = nil
        if let c = coordinating {
            if c.joinersDue != nil, hasView { emitHeartbeat(now: now) }
            if let cut = c.cut {
                emit(.cut(attempt: c.ballot.attempt, baseID: c.baseID, baseKey: c.baseKey, newViewID: cut.newViewID, entries: cut.entries))
            } else {
                emit(.propose(attempt: c.ballot.attempt, baseID: c.baseID, baseKey: c.baseKey, members: c.members))
            }
        }
        if let p = participation, p.ready { emit(.ready(p.ballot)) }
        if coordinating != nil || participation != nil { scheduleFlushRetransmit(now: now) }
    }

    /// The deadlines of a running view change (polled by `nextDeadline`): the coordinator gives
    /// up its proposal at its flush timeout; a member gives up a ballot whose coordinator went silent.
    func expireFlush(now: NetTime) {
        if let c = coordinating, let due = c.joinersDue, now >= due {
            let silent = c.joiners.filter { !c.answered($0) }
            if silent.isEmpty {
                updateFlush { $0.coordinating?.joinersDue = nil }
            } else {
                // Joiners that do not answer hold the members up no longer: drop them, keep
                // those that answered, and restart at once (members frozen in this ballot move
                // on to the next). Untried joiners wait a while, so the members are not frozen
                // again right away.
                for m in silent { dropJoiner(m, now: now) }
                for m in c.joiners where c.answered(m) { peerTable[m.id]?.answeredJoin = true }
                peerTable.holdJoiners(until: now.adding(nanoseconds: 5 * config.joinerAnswerTimeoutNanoseconds))
                endFlush(abandoned: true)
            }
        }
        if let c = coordinating, now >= c.deadline {
            // Exclude whoever did not answer and restart with a higher ballot.
            for m in c.members where m != me {
                let answered = c.cut == nil ? c.acks[m.id] != nil : c.ready.contains(m.id)
                if !answered { exclude(m, now: now) }
            }
            // Members that acked are frozen in this ballot: the next one must run even if the
            // membership looks unchanged, or they wait for us until they exclude us.
            endFlush(abandoned: true)
        }
        if let p = participation, coordinating == nil,
           now.nanoseconds(since: p.lastProgress) >= 2 * config.flushTimeoutNanoseconds {
            // The coordinator went silent: exclude it; the next-lowest member takes over.
            if let coordinator = p.members.first(where: { $0.id == p.ballot.coordinator }) { exclude(coordinator, now: now) }
            endFlush(abandoned: false)
        }
    }

    // MARK: - Deciding on a view change

    /// Starts a view change when this peer is the coordinator of a needed one. Outside a view
    /// change, decides whether it is a member or blocked (too few members of the installed view
    /// reachable to form a primary view).
    func evaluateMembership(now: NetTime) {
        guard !isLeft else { return }
        guard hasView else { return evaluateBootstrap(now: now) }
        let alive = members.filter { isAlive($0, now: now) }
        // Primary if a majority of the view is reachable: live members plus members that are
        // behind (in an older view, e.g. they missed an install); those cannot belong to a
        // competing newer view. Behind members are excluded by this change and readmitted
        // as joiners by the next one.
        let reachable = members.filter { isReachable($0, now: now) }
        // A member that announced `leave` is gone for good: it counts toward no majority.
        let base = members.filter { !isGone($0) }
        let primary = Self.isPrimary(alive: reachable, of: base)
        if participation == nil {  // member or blocked: which one is decided here
            let inView = InView(installed: installed, flushAbandoned: flushAbandoned)
            if primary {
                phase = .member(inView)
            } else {
                let since = cutOffSince ?? now
                phase = .blocked(since: since, inView)
                if now.nanoseconds(since: since) >= blockedBound(base: base) {
                    abandonView(now: now, listened: base.count == 2)
                    return evaluateBootstrap(now: now)
                }
            }
        }
        // A working group in a dominating view is around: wait for it to admit us.
        let mine = (viewID, viewKey)
        if peers.values.contains(where: { isFreshPrimary($0, now: now) && Self.dominates(($0.viewID, $0.viewKey), mine) }) { return }
        if let c = coordinating {
            let stillGood = c.members.allSatisfy { m in
                c.baseMembers.contains(m) ? isAlive(m, now: now) : (peers[m.id].map { isFresh($0, now: now) && $0.incarnation == m.incarnation } ?? false)
            }
            if stillGood { return }
            // Given up; this peer stays frozen in it until a new ballot (or its own silence timeout).
            updateFlush { $0.coordinating = nil }
        }
        if let p = participation, now.nanoseconds(since: p.lastProgress) < 2 * config.flushTimeoutNanoseconds,
           p.ballot.coordinator != me.id { return }
        let joiners = joinerCandidates(now: now, aliveCount: alive.count)
        guard alive.count != members.count || !joiners.isEmpty || flushAbandoned else { return }
        // The coordinator is the lowest-ID live, unblocked member of the installed view (never
        // a joiner: joiners wait to be admitted by the group they join).
        // A blocked member cannot coordinate: the next-lowest live one does.
        let coordinator = alive.filter { $0 == me || peers[$0.id]?.status != .blocked }.min()
        guard primary, coordinator == me else { return }
        startProposal(members: alive + joiners, now: now)
    }

    /// How long this peer stays blocked before it gives its view up.
    ///
    /// The rule of two: when the view's members still counting (`base`: not gone by `leave` or
    /// a proven restart) are this peer and one other, this peer is blocked only when that other
    /// is the higher ID and unreachable; the other, alone, is primary (half the view including
    /// its highest ID), so once it suspects this peer it installs a view without it, and a
    /// blocked wait could never bring this peer back into the old view. So this peer gives the
    /// view up at once: its part of the match ends for it alone (no winner decided on its side,
    /// nothing sent or logged as a decision), and it is back in the lobby within the suspect
    /// timeout. Nothing is decided on this side, so a
    /// partition cannot make the two sides decide differently: only the higher ID's side, the
    /// primary one, goes on deciding. With three or more members the bound stays
    /// `blockedTimeoutNanoseconds`: a partition may leave no side primary, and all wait for it to heal.
    func blockedBound(base: [Member]) -> UInt64 {
        base.count == 2 && base.contains(me) ? 0 : config.blockedTimeoutNanoseconds
    }

    static func isPrimary(alive: [Member], of base: [Member]) -> Bool {
        let k = alive.filter { base.contains($0) }.count
        if 2 * k > base.count { return true }
        guard 2 * k == base.count, let highest = base.max() else { return false }
        return alive.contains(highest)
    }

    /// Fresh peers of dominated views (or none) not in the installed view, within the limits.
    private func joinerCandidates(now: NetTime, aliveCount: Int) -> [Member] {
        let mine = (viewID, viewKey)
        var result: [Member] = []
        for (id, info) in joinerOrder(Array(peers), now: now) {
            guard result.count < config.joinersPerViewChangeMax else { break }
            // Only proven peers are in the table; one excluded for not answering a flush waits out its exclusion.
            guard isFresh(info, now: now), !members.contains(where: { $0.id == id }),
                  !isExcluded(Member(id: id, incarnation: info.incarnation), now: now) else { continue }
            guard info.viewID == 0 || info.status == .blocked || Self.dominates(mine, (info.viewID, info.viewKey)) else { continue }
            guard aliveCount + result.count < Wire.membersMax, members.count + result.count < Wire.cutEntriesMax else { break }
            result.append(Member(id: id, incarnation: info.incarnation))
        }
        return result
    }

    /// No view yet: after discovery, the lowest-ID fresh peer founds view 1 if no group is heard.
    private func evaluateBootstrap(now: NetTime) {
        guard case let .joining(discoveryAt, flush, _) = phase, now >= discoveryAt, flush?.coordinating == nil else { return }
        // A peer heard but not proven yet (a lost challenge or response) would be left out:
        // wait for it up to one more discovery period (a storm of strangers delays no longer).
        if handshakesPending(now: now), now < discoveryAt.adding(nanoseconds: config.discoveryNanoseconds) {
            return
        }
        if let p = participation, now.nanoseconds(since: p.lastProgress) < 2 * config.flushTimeoutNanoseconds { return }
        // Wait while a working group is around (it admits us). Blocked peers do not count: when
        // the majority of their last view crashed, fresh peers found a new group and admit them.
        guard !peers.values.contains(where: { isFreshPrimary($0, now: now) }) else { return }
        let fresh = peers.filter {
            isFresh($0.value, now: now) && $0.value.viewID == 0
                && !isExcluded(Member(id: $0.key, incarnation: $0.value.incarnation), now: now)
        }
        // The lowest fresh ID founds. One lower than us that has not done so a while after
        // discovery (it answers challenges, then does nothing) is not waited for: we found,
        // proposing it too (it is excluded if it does not answer). The wait grows with the
        // number of lower IDs (at most three discovery periods), so the real lowest goes first.
        let lower = fresh.keys.filter { $0 < me.id }.count
        if lower > 0 {
            let patience = UInt64(min(lower, 3)) * 2 * config.discoveryNanoseconds
            guard now >= discoveryAt.adding(nanoseconds: patience) else { return }
        }
        let others = joinerOrder(Array(fresh), now: now).prefix(min(config.joinersPerViewChangeMax, Wire.membersMax - 1))
        startProposal(members: [me] + others.map { Member(id: $0.key, incarnation: $0.value.incarnation) }, now: now)
    }
}
