import DequeModule

/// What a member keeps and does for receivers (`Receiver.swift`), and what bounds it.
///
/// ## The cost model
/// Nothing here grows with the number of receivers but the table that counts them
/// (`trackedMax` entries). Per member, whatever the number of receivers:
/// - **Snapshots:** the server (the member a receiver asks) sends at most one snapshot a
///   second (`snapshotIntervalNanoseconds`), and repeats its `sync` at most every 100 ms.
/// - **Repairs:** at most `repairBudgetPerSecond` messages a second are repaired for
///   receivers (a repair is multicast: it serves every receiver that missed it); NACKs beyond
///   the budget are counted (`receiverRepairsRefused`) and dropped. A NACK of a message already
///   being repaired, or repaired within the retransmit timeout, is served by that repair and
///   costs nothing (`receiverRepairsShared`): receivers do not hear each other's NACKs (they
///   drop receivers' datagrams unread), so many may ask for the same loss.
/// - **NACKs:** each receiver's NACKs reach the members only; a member reads at most one per
///   receiver per gap and retransmit timeout, so they grow linearly with the receivers, and no
///   receiver reads another's.
/// - **Memory:** while a receiver was heard within `activeNanoseconds`, each delivered message
///   is kept `retainNanoseconds` more (at most `retainedMax`), so receivers can be repaired
///   after the members freed it. With no receiver around, nothing is kept.
/// Receivers never enter the peer table, are never challenged and never proposed.
struct ReceiverService {
    static let retainedMax = 4096
    static let retainNanoseconds: UInt64 = 3_000_000_000
    static let activeNanoseconds: UInt64 = 10_000_000_000
    static let repairBudgetPerSecond = 600
    static let snapshotIntervalNanoseconds: UInt64 = 1_000_000_000
    static let syncRepeatNanoseconds: UInt64 = 100_000_000
    static let trackedMax = 1024

    struct Sync {
        var viewID: UInt64
        var viewKey: UInt64
        var entries: [SyncEntry]
        var snapshotSeq: UInt64
        var at: NetTime
        var sentAt: NetTime
    }

    struct Pending {
        var viewID: UInt64
        var viewKey: UInt64
        var entries: [SyncEntry]
        var at: NetTime
    }

    var lastHeard: NetTime?
    /// Receivers heard, and when last (for counting; at most `trackedMax`).
    var heard: [PeerID: NetTime] = [:]
    var lastSweep = NetTime.zero
    var retained: [ReliableMulticast.SeqKey: DataItem] = [:]
    var order: Deque<(key: ReliableMulticast.SeqKey, at: NetTime)> = []
    var budget = Double(repairBudgetPerSecond)
    var budgetAt = NetTime.zero
    var pending: Pending?
    var lastSync: Sync?
    /// Messages repaired lately, and when (at most `recentRepairsMax`, oldest first).
    var recentRepairs: [ReliableMulticast.SeqKey: NetTime] = [:]
    var recentOrder: Deque<(key: ReliableMulticast.SeqKey, at: NetTime)> = []
    static let recentRepairsMax = 1024

    /// Notes that `key` was just repaired (multicast), for `recentlyRepaired`.
    mutating func noteRepaired(_ key: ReliableMulticast.SeqKey, now: NetTime, holdNanoseconds: UInt64) {
        while let first = recentOrder.first,
              recentOrder.count >= Self.recentRepairsMax || now.nanoseconds(since: first.at) > holdNanoseconds {
            recentOrder.removeFirst()
            if recentRepairs[first.key] == first.at { recentRepairs[first.key] = nil }
        }
        recentRepairs[key] = now
        recentOrder.append((key, now))
    }

    /// Whether `key` was repaired less than `holdNanoseconds` ago.
    func recentlyRepaired(_ key: ReliableMulticast.SeqKey, now: NetTime, holdNanoseconds: UInt64) -> Bool {
        guard let at = recentRepairs[key] else { return false }
        return now.nanoseconds(since: at) < holdNanoseconds
    }

    func isActive(now: NetTime) -> Bool {
        guard let lastHeard else { return false }
        return now.nanoseconds(since: lastHeard) < Self.activeNanoseconds
    }

    mutating func retain(_ item: DataItem, now: NetTime) {
        let key = ReliableMulticast.SeqKey(origin: item.origin.id, seq: item.seq)
        if retained.updateValue(item, forKey: key) == nil { order.append((key, now)) }
        trim(now: now)
    }

    mutating func trim(now: NetTime) {
        while let first = order.first,
              order.count > Self.retainedMax || now.nanoseconds(since: first.at) > Self.retainNanoseconds {
            order.removeFirst()
            retained[first.key] = nil
        }
    }

    /// Takes one repair from the budget (refilled continuously); false when it is spent.
    mutating func spend(now: NetTime) -> Bool {
        let elapsed = Double(now.nanoseconds(since: budgetAt)) / 1e9
        budgetAt = max(budgetAt, now)
        budget = min(Double(Self.repairBudgetPerSecond), budget + elapsed * Double(Self.repairBudgetPerSecond))
        guard budget >= 1 else { return false }
        budget -= 1
        return true
    }

    mutating func noteHeard(_ peer: PeerID, now: NetTime) {
        lastHeard = now
        // Full (a flood of made-up IDs, say): those not heard for 3 s go, at most once a second,
        // so the work stays bounded per datagram.
        if heard.count >= Self.trackedMax, heard[peer] == nil, now.nanoseconds(since: lastSweep) >= 1_000_000_000 {
            lastSweep = now
            heard = heard.filter { now.nanoseconds(since: $0.value) <= 3_000_000_000 }
        }
        if heard[peer] != nil || heard.count < Self.trackedMax { heard[peer] = now }
    }

    func count(now: NetTime, within: UInt64) -> Int {
        heard.values.filter { now.nanoseconds(since: $0) <= within }.count
    }

    func checkInvariants() {
        precondition(retained.count == order.count && retained.count <= Self.retainedMax + 1, "retention bounded, one entry per message")
        precondition(heard.count <= Self.trackedMax, "receiver table bounded")
        precondition(recentRepairs.count <= recentOrder.count && recentOrder.count <= Self.recentRepairsMax, "recent repairs bounded")
    }
}

extension ReliableMulticast {
    /// Receivers heard within the last 3 s (a lobby's "watching" count).
    public func receiversHeard(now: NetTime) -> Int {
        receiverService.count(now: now, within: 3_000_000_000)
    }

    /// Whether `frame` from `envelope`'s sender is a receiver's: a `listen`, or a NACK from a
    /// sender not proven (members are).
    func isReceiverFrame(_ frame: Frame, _ envelope: Envelope) -> Bool {
        switch frame {
        case .listen: true
        case .nack: peers[envelope.sender]?.incarnation != envelope.incarnation
        default: false
        }
    }

    func handleReceiverFrame(_ frame: Frame, from sender: PeerID, now: NetTime) {
        switch frame {
        case let .listen(_, _, server, wantsSync):
            receiverService.noteHeard(sender, now: now)
            if wantsSync, server == me.id { serveSync(now: now) }
        case let .nack(origin, ranges):
            receiverService.noteHeard(sender, now: now)
            repairForReceiver(origin: origin, ranges: ranges, now: now)
        default:
            break
        }
    }

    private func serveSync(now: NetTime) {
        guard status == .member else { return }
        if let last = receiverService.lastSync, last.viewID == viewID, last.viewKey == viewKey,
           now.nanoseconds(since: last.at) < ReceiverService.snapshotIntervalNanoseconds {
            if now.nanoseconds(since: last.sentAt) >= ReceiverService.syncRepeatNanoseconds {
                emit(.sync(viewID: last.viewID, viewKey: last.viewKey, snapshotSeq: last.snapshotSeq, entries: last.entries))
                receiverService.lastSync?.sentAt = now
            }
            return
        }
        if let pending = receiverService.pending,
           now.nanoseconds(since: pending.at) < ReceiverService.snapshotIntervalNanoseconds { return }
        // Where every stream stands now, as the application will have delivered it when it
        // reads the event below (the deliveries before it are in the queue already).
        let entries = members.map { SyncEntry(member: $0, delivered: streams[$0.id]?.delivered ?? 0) }
        receiverService.pending = .init(viewID: viewID, viewKey: viewKey, entries: entries, at: now)
        stats.receiverSnapshotsAsked += 1
        events.append(.receiversWaiting)
    }

    /// The application's answer to `.receiversWaiting`: its state as of that event, encoded as
    /// one message. It goes out in this peer's stream, then a `sync` says where it stands.
    /// Ignored when nothing waits, or the view changed since the event.
    public func answerReceivers(snapshot: [UInt8], now: NetTime) {
        guard receiver == nil else { return }
        defer { checkInvariants() }
        guard let pending = receiverService.pending else { return }
        receiverService.pending = nil
        guard status == .member, pending.viewID == viewID, pending.viewKey == viewKey,
              let seq = try? send(snapshot, now: now) else { return }
        stats.receiverSnapshotsSent += 1
        receiverService.lastSync = .init(viewID: viewID, viewKey: viewKey, entries: pending.entries, snapshotSeq: seq, at: now, sentAt: now)
        emit(.sync(viewID: viewID, viewKey: viewKey, snapshotSeq: seq, entries: pending.entries))
    }

    private func repairForReceiver(origin: Member, ranges: [ClosedRange<UInt64>], now: NetTime) {
        guard status == .member || status == .flushing || status == .blocked else { return }
        let stream = streams[origin.id].flatMap { $0.member == origin ? $0 : nil }
        var looked: UInt64 = 0
        var requested = false
        outer: for range in ranges {
            var seq = range.lowerBound
            while seq <= range.upperBound {
                guard looked < Wire.nackSpanMax else { break outer }
                looked += 1
                let key = SeqKey(origin: origin.id, seq: seq)
                let held = stream?.messages[seq].map { $0.origin == origin } ?? false
                    || receiverService.retained[key]?.origin == origin
                if held, sendWindow.repairPending.contains(key)
                    || receiverService.recentlyRepaired(key, now: now, holdNanoseconds: config.retransmitTimeoutNanoseconds) {
                    stats.receiverRepairsShared += 1
                } else if held {
                    guard receiverService.spend(now: now) else {
                        stats.receiverRepairsRefused += 1
                        break outer
                    }
                    sendWindow.requestRepair(key)
                    requested = true
                }
                seq += 1
            }
        }
        guard requested else { return }
        let quarter = config.repairDelayMaxNanoseconds / 4
        let delay = origin == me ? rng.next(upTo: max(1, quarter)) : quarter + rng.next(upTo: max(1, config.repairDelayMaxNanoseconds))
        armEarliest(.repair, at: now.adding(nanoseconds: delay))
    }

    /// Keeps a delivered message for receivers while any is around.
    @inline(__always)
    func retainForReceivers(_ item: DataItem) {
        guard receiverService.lastHeard != nil, receiverService.isActive(now: lastNow) else { return }
        receiverService.retain(item, now: lastNow)
    }
}
