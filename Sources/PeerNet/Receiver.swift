import DequeModule
import EggPrimitives

/// # A receiver: a peer that follows a group's streams without being a member of it
///
/// A spectator receives every member's ordered stream and takes no part in agreement: it is in
/// no view, so no flush, vote, stability report or view change waits for it, and its joining,
/// leaving or dying changes nothing for the members. Sans-I/O like `ReliableMulticast`, which
/// runs it when `PeerNetConfig.receiveOnly` is set (same inputs, outputs and events).
///
/// ## How it starts
/// It listens until it hears a member's heartbeat (a heartbeat lists the view's members). It
/// then multicasts `listen(wantsSync)` naming one member, the *server* (the highest ID first;
/// another every `askesPerServer` unanswered asks), every `askIntervalNanoseconds`. The server
/// answers at most once a second with a new snapshot: its application (the `MatchNode`) is told
/// (`.receiversWaiting`) and sends a snapshot of its state as an ordinary message of its stream;
/// the server then multicasts `sync`: where that snapshot stands (its seq) and, for each member,
/// the seq its stream was delivered up to when the snapshot was taken. Every receiver that asks
/// within that second is answered with the same `sync`: a hundred receivers cost one snapshot.
///
/// ## Following
/// On `sync` the receiver starts each member's stream after the seq given, delivers
/// `.viewChanged` (the group's members; the receiver is not among them), then the snapshot (as
/// seq 0 of the server: the start), then every message after the start, per sender in order,
/// exactly once (the snapshot again in its place among them). It NACKs its gaps like a member
/// (its datagrams carry the envelope's receiver flag, and receivers drop each other's unread,
/// so that a receiver's work does not grow with their number); members keep
/// delivered messages a while for receivers (`ReceiverService`), and repair them from a
/// budget of their own. It multicasts `listen` once a second, so members know receivers are
/// there.
///
/// ## Starting again
/// A gap not repaired within `gapTimeoutNanoseconds`, a group silent for the suspect timeout,
/// or a member's heartbeat naming a view that dominates the one followed (the players' group
/// changed) makes it start again: `.viewAbandoned` for the view it followed, then a new sync.
final class Receiver {
    /// Asks for a sync this often until one comes.
    static let askIntervalNanoseconds: UInt64 = 250_000_000
    /// Unanswered asks before the next member is asked.
    static let askesPerServer: UInt32 = 2
    /// A following receiver says it is there this often.
    static let presenceIntervalNanoseconds: UInt64 = 1_000_000_000
    /// A gap not filled this long is not coming back: start again.
    static let gapTimeoutNanoseconds: UInt64 = 2_000_000_000
    /// At most this many messages held out of order per stream (beyond them, dropped).
    static let heldPerStreamMax = 4096

    struct Group: Hashable {
        var viewID: UInt64
        var viewKey: UInt64
    }

    /// A group heard, not followed yet.
    struct Heard {
        var group: Group
        /// Its members' IDs, from the heartbeat (highest first: the order servers are asked in).
        var servers: [PeerID]
        var at: NetTime
    }

    /// One member's stream, followed.
    final class Stream {
        let member: Member
        var delivered: UInt64
        var highestKnown: UInt64
        var messages: [UInt64: DataItem] = [:]
        /// When the oldest gap now open was first seen.
        var gapSince: NetTime?
        var nackDue: NetTime?

        init(member: Member, delivered: UInt64) {
            self.member = member
            self.delivered = delivered
            self.highestKnown = delivered
        }

        /// The seq of the snapshot, until it is here (it is asked for like a gap).
        var needs: UInt64?

        var hasGap: Bool {
            (highestKnown > delivered && messages[delivered + 1] == nil) || needs.map { messages[$0] == nil } ?? false
        }
    }

    /// The group followed since a sync.
    final class Following {
        let group: Group
        let members: [Member]
        let streams: [PeerID: Stream]
        let server: PeerID
        let snapshotSeq: UInt64
        /// `.viewChanged` and the snapshot went out.
        var started = false
        var lastHeard: NetTime
        var presenceAt: NetTime

        init(group: Group, entries: [SyncEntry], server: PeerID, snapshotSeq: UInt64, now: NetTime) {
            self.group = group
            self.members = entries.map(\.member).sorted()
            var streams: [PeerID: Stream] = [:]
            for e in entries { streams[e.member.id] = Stream(member: e.member, delivered: e.delivered) }
            streams[server]?.needs = snapshotSeq
            if let s = streams[server] { s.highestKnown = max(s.highestKnown, snapshotSeq) }
            self.streams = streams
            self.server = server
            self.snapshotSeq = snapshotSeq
            self.lastHeard = now
            self.presenceAt = now
        }

        var view: MembershipView {
            MembershipView(id: group.viewID, members: members.map(\.id), key: group.viewKey)
        }
    }

    enum Phase {
        /// No group followed: `heard` is the latest group heard, asked `asks` times so far;
        /// the next ask (or nothing, until a group is heard) at `askAt`.
        case seeking(heard: Heard?, asks: UInt32, askAt: NetTime?)
        case following(Following)
        case left
    }

    let config: PeerNetConfig
    var framing: Framing
    var rng: SplitMix64
    var phase: Phase
    var events: Deque<PeerNetEvent> = []
    var out: Deque<[UInt8]> = []
    var stats = PeerNetStats()
    var lastNow: NetTime

    init(config: PeerNetConfig, now: NetTime) {
        self.config = config
        self.framing = Framing(
            me: Member(id: config.peerID, incarnation: config.incarnation), room: config.room, passphrase: config.passphrase)
        self.rng = SplitMix64(seed: config.randomSeed)
        self.phase = .seeking(heard: nil, asks: 0, askAt: nil)
        self.lastNow = now
    }

    var me: Member { framing.me }

    var status: PeerNetStatus {
        switch phase {
        case .seeking: .joining
        case let .following(f): f.started ? .member : .joining
        case .left: .left
        }
    }

    var view: MembershipView {
        if case let .following(f) = phase, f.started { return f.view }
        return MembershipView(id: 0, members: [])
    }

    func deliveredUpTo(_ peer: PeerID) -> UInt64? {
        if case let .following(f) = phase { return f.streams[peer]?.delivered }
        return nil
    }

    // MARK: - Inputs

    func handleDatagram(_ bytes: [UInt8], now: NetTime) {
        lastNow = max(lastNow, now)
        stats.datagramsReceived += 1
        // Another receiver's (or our own echo): of no use to a receiver. On a socket these
        // never arrive (the kernel's filter drops them); here they cost one byte's read.
        if Wire.isFromReceiver(bytes) {
            stats.receiverDatagramsSkipped += 1
            return
        }
        guard case .frame(let envelope, let frame) = Wire.decode(
            bytes, room: framing.roomHash, auth: framing.auth, datagramBytesMax: config.datagramBytesMax, ownSender: me.id)
        else {
            stats.droppedMalformed += 1
            return
        }
        if case .left = phase { return }
        stats.datagramsAccepted += 1
        let sender = Member(id: envelope.sender, incarnation: envelope.incarnation)
        switch frame {
        case let .heartbeat(status, viewID, viewKey, sentSeq, delivered):
            heardHeartbeat(from: sender, status: status, group: Group(viewID: viewID, viewKey: viewKey),
                           sentSeq: sentSeq, members: delivered.map(\.0), now: now)
        case let .data(items):
            guard case let .following(f) = phase else { return }
            for item in items { receive(item, in: f) }
        case let .sync(viewID, viewKey, snapshotSeq, entries):
            heardSync(from: sender, group: Group(viewID: viewID, viewKey: viewKey), snapshotSeq: snapshotSeq,
                      entries: entries, now: now)
        case let .nack(origin, ranges):
            // A member asks for our gaps too: give the repair time to come before asking again.
            guard case let .following(f) = phase, let stream = f.streams[origin.id], stream.member == origin,
                  let due = stream.nackDue, ranges.contains(where: { $0.contains(stream.delivered + 1) }) else { break }
            stream.nackDue = max(due, now.adding(nanoseconds: config.retransmitTimeoutNanoseconds))
        case .leave, .report, .propose, .ack, .cut, .ready, .install, .challenge, .response, .listen:
            break
        }
        afterInput(now: now)
    }

    func handleTimeout(now: NetTime) {
        lastNow = max(lastNow, now)
        afterInput(now: now)
    }

    func leave() { phase = .left }

    // MARK: - Hearing the group

    private func heardHeartbeat(from sender: Member, status: WireStatus, group: Group, sentSeq: UInt64,
                                members: [PeerID], now: NetTime) {
        guard status == .member, group.viewID > 0, members.contains(sender.id) else { return }
        switch phase {
        case let .seeking(heard, asks, askAt):
            // The group to ask: the one heard, or one that dominates it (a newer view).
            if let heard, heard.group != group, !ReliableMulticast.dominates((group.viewID, group.viewKey), (heard.group.viewID, heard.group.viewKey)) {
                return
            }
            let sameGroup = heard?.group == group
            phase = .seeking(heard: Heard(group: group, servers: members.sorted(by: >), at: now),
                             asks: sameGroup ? asks : 0, askAt: sameGroup ? askAt : (askAt ?? now))
        case let .following(f):
            guard let stream = f.streams[sender.id], stream.member == sender else { return }
            if group == f.group {
                f.lastHeard = max(f.lastHeard, now)
                stream.highestKnown = max(stream.highestKnown, sentSeq)
            } else if ReliableMulticast.dominates((group.viewID, group.viewKey), (f.group.viewID, f.group.viewKey)) {
                // A member of the group followed is in a newer view: the players' group changed.
                startAgain(now: now, heard: Heard(group: group, servers: members.sorted(by: >), at: now))
            }
        case .left:
            break
        }
    }

    private func heardSync(from sender: Member, group: Group, snapshotSeq: UInt64, entries: [SyncEntry], now: NetTime) {
        guard case .seeking = phase else { return }
        // The server is one of the members it names, in the incarnation it speaks with.
        guard let own = entries.first(where: { $0.member == sender }), snapshotSeq > own.delivered else {
            stats.framesRejected += 1
            return
        }
        stats.receiverSyncs += 1
        phase = .following(Following(group: group, entries: entries, server: sender.id, snapshotSeq: snapshotSeq, now: now))
    }

    private func receive(_ item: DataItem, in f: Following) {
        stats.messagesReceived += 1
        guard item.viewID == f.group.viewID, let stream = f.streams[item.origin.id], stream.member == item.origin else {
            stats.messagesDiscarded += 1
            return
        }
        if item.seq <= stream.delivered || stream.messages[item.seq] != nil {
            stats.messagesDuplicate += 1
            return
        }
        guard item.seq <= stream.delivered + UInt64(Self.heldPerStreamMax), stream.messages.count < Self.heldPerStreamMax else {
            stats.messagesDiscarded += 1
            return
        }
        stream.messages[item.seq] = item
        stream.highestKnown = max(stream.highestKnown, item.seq)
    }

    // MARK: - After every input

    private func afterInput(now: NetTime) {
        switch phase {
        case .left:
            return
        case let .seeking(heard, asks, askAt):
            guard let heard, let askAt, askAt <= now else { return }
            if now.nanoseconds(since: heard.at) > config.suspectTimeoutNanoseconds {
                phase = .seeking(heard: nil, asks: 0, askAt: nil)  // that group went silent
                return
            }
            let server = heard.servers[Int(asks / Self.askesPerServer) % heard.servers.count]
            emit(.listen(viewID: heard.group.viewID, viewKey: heard.group.viewKey, server: server, wantsSync: true))
            stats.receiverAsks += 1
            phase = .seeking(heard: heard, asks: asks &+ 1, askAt: now.adding(nanoseconds: Self.askIntervalNanoseconds))
        case let .following(f):
            follow(f, now: now)
        }
    }

    private func follow(_ f: Following, now: NetTime) {
        if now.nanoseconds(since: f.lastHeard) > config.suspectTimeoutNanoseconds {
            startAgain(now: now, heard: nil)
            return
        }
        if f.presenceAt <= now {
            emit(.listen(viewID: f.group.viewID, viewKey: f.group.viewKey, server: PeerID(0), wantsSync: false))
            f.presenceAt = now.adding(nanoseconds: Self.presenceIntervalNanoseconds)
        }
        if !f.started, let snapshot = f.streams[f.server]?.messages[f.snapshotSeq] {
            f.started = true
            f.streams[f.server]?.needs = nil
            stats.viewsInstalled += 1
            events.append(.viewChanged(f.view))
            // Delivered first as seq 0 of the server (the start: the stream resumes after the
            // seq the sync gave), and again in its place, like every message of the stream (a
            // member that delivers a snapshot of its own view changes nothing).
            stats.messagesDelivered += 1
            events.append(.delivered(Delivery(from: f.server, seq: 0, payload: snapshot.payload)))
        }
        if f.started {
            for m in f.members {
                guard let stream = f.streams[m.id] else { continue }
                while let item = stream.messages.removeValue(forKey: stream.delivered + 1) {
                    stream.delivered = item.seq
                    stats.messagesDelivered += 1
                    events.append(.delivered(Delivery(from: item.origin.id, seq: item.seq, payload: item.payload)))
                }
            }
        }
        scheduleNacks(f, now: now)
        for stream in f.streams.values {
            if let since = stream.gapSince, now.nanoseconds(since: since) > Self.gapTimeoutNanoseconds {
                stats.receiverGapsLost += 1
                startAgain(now: now, heard: nil)
                return
            }
        }
    }

    /// Gaps are NACKed a random delay after first seen, then every retransmit timeout.
    private func scheduleNacks(_ f: Following, now: NetTime) {
        for m in f.members where m.id != me.id {
            guard let stream = f.streams[m.id] else { continue }
            guard stream.hasGap else {
                stream.gapSince = nil
                stream.nackDue = nil
                continue
            }
            if stream.gapSince == nil {
                stream.gapSince = now
                stream.nackDue = now.adding(nanoseconds: rng.next(upTo: max(1, config.nackDelayMaxNanoseconds)))
            }
            guard let due = stream.nackDue, due <= now else { continue }
            var ranges: [ClosedRange<UInt64>] = []
            var seq = stream.delivered + 1
            let end = min(stream.highestKnown, stream.delivered + Wire.nackSpanMax)
            while seq <= end, ranges.count < Wire.nackRangesMax {
                if stream.messages[seq] == nil {
                    var last = seq
                    while last + 1 <= end, stream.messages[last + 1] == nil { last += 1 }
                    ranges.append(seq...last)
                    seq = last + 1
                } else {
                    seq += 1
                }
            }
            if !ranges.isEmpty {
                stats.nacksSent += 1
                emit(.nack(origin: stream.member, ranges: ranges))
            }
            stream.nackDue = now.adding(nanoseconds: config.retransmitTimeoutNanoseconds + Self.rttAllowanceNanoseconds)
        }
    }

    /// Added to the retransmit timeout between a receiver's NACKs (members repair after a delay).
    static let rttAllowanceNanoseconds: UInt64 = 10_000_000

    private func startAgain(now: NetTime, heard: Heard?) {
        if case let .following(f) = phase, f.started {
            stats.viewsAbandoned += 1
            events.append(.viewAbandoned(f.view))
        }
        stats.receiverRestarts += 1
        phase = .seeking(heard: heard, asks: 0, askAt: heard == nil ? nil : now)
        if heard != nil { afterInput(now: now) }
    }

    private func emit(_ frame: Frame) {
        var envelope = framing.nextEnvelope(kind: frame.kind)
        envelope.fromReceiver = true
        out.append(Wire.encode(frame, envelope: envelope, auth: framing.auth))
    }

    // MARK: - Outputs

    func pollTransmit() -> [UInt8]? {
        guard let datagram = out.popFirst() else { return nil }
        stats.datagramsSent += 1
        stats.bytesSent += UInt64(datagram.count)
        return datagram
    }

    func pollEvent() -> PeerNetEvent? { events.popFirst() }

    func pollTimeout() -> NetTime? {
        switch phase {
        case .left:
            return nil
        case let .seeking(heard, _, askAt):
            guard heard != nil else { return nil }
            return askAt
        case let .following(f):
            var next = f.presenceAt
            next = min(next, f.lastHeard.adding(nanoseconds: config.suspectTimeoutNanoseconds + 1))
            for stream in f.streams.values {
                if let due = stream.nackDue { next = min(next, due) }
                if let since = stream.gapSince { next = min(next, since.adding(nanoseconds: Self.gapTimeoutNanoseconds + 1)) }
            }
            return next
        }
    }
}
