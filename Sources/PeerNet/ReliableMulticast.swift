import DequeModule
import EggPrimitives

/// Reliable, per-sender ordered, duplicate-free multicast with membership and
/// view-synchronous view changes: a sans-I/O state machine.
///
/// ## Contract (quinn-proto style)
/// Inputs: `handleDatagram(_:now:)`, `handleTimeout(now:)`, commands `send`, `leave`.
/// Outputs: `pollTransmit()` (datagrams to multicast to the whole group), `pollTimeout()`
/// (when to call `handleTimeout` next), `pollEvent()` (deliveries and views, in order).
/// The core never reads a clock, never touches a socket, and draws every random delay
/// from a generator seeded by `PeerNetConfig.randomSeed`.
///
/// ## Reliable delivery
/// Each peer numbers its messages 1, 2, 3… Every data message carries (origin, origin
/// incarnation, view id, seq). Receivers deliver each origin's messages in seq order,
/// exactly once, only when tagged with the installed view. Gaps are found from data and
/// from heartbeats and stability reports (which carry the sender's highest seq, so a lost
/// *last* message is noticed). Each missing seq is NACKed a random delay (≤ `nackDelayMax`)
/// after it is first seen missing, then again every retransmit timeout (plus twice the
/// origin's RTT) until it arrives; a stream's timer is cleared as soon as its gaps fill.
/// One firing sends up to 4 NACKs of 16 ranges each. A NACK from someone else for the same
/// seqs postpones ours. Any member holding a NACKed message repairs it by multicast after a
/// short delay (the origin sooner, others later), batched with other repairs and data;
/// seeing the message go by cancels a pending repair.
///
/// ## Stability
/// Heartbeats and stability reports carry the sender's delivered-up-to vector; a message
/// delivered by every member is stable and freed. A report goes out when a stream advanced
/// by a quarter of the window, else `stabilityReportDelay` after the first unreported
/// delivery, and with every heartbeat; so windows free continuously under load. Reports
/// also echo each member's last heartbeat/report packet number and hold time: that gives
/// the round-trip times of `linkStats`. A sender may have at most
/// `windowSizeMax` unstable messages (`send` throws `.windowFull`; the member holding
/// the window back is reported `.lagging`); receivers drop anything beyond their window.
///
/// ## Membership
/// Peers discover each other by heartbeats in the same room (room hash in every
/// datagram). A member is (64-bit ID, incarnation); the incarnation is any number a restarted
/// peer never used before (no order is implied). A sender enters the peer table only through
/// the join handshake (`ReliableMulticast+Handshake.swift`): it must answer a fresh challenge,
/// so strays, replays (of this session or an earlier one) and fake IDs are never proposed and
/// crowd out nobody. A proven new incarnation of a known ID makes the old one dead at once
/// (removed by a view change, reported as `.incarnationEnded`; the new one joins by the next);
/// datagrams of the old one are dropped. A member not heard for `suspectTimeoutNanoseconds`,
/// or that announced `leave`, is removed by a view change; one that announced `leave` (or was
/// superseded by a new incarnation) counts toward no majority, so the others go on at once.
/// A fresh peer listens `discoveryNanoseconds` (up to twice that while a handshake is
/// pending); if it hears no working group (members or flushing peers of an installed view),
/// the lowest-ID fresh peer founds a view with every proven fresh peer it heard. Joiners are
/// admitted by the coordinator of the group they hear; one excluded for not answering a
/// flush is not proposed again until its exclusion (two flush timeouts) ends.
///
/// ## View change (flush), view synchrony
/// The coordinator is the lowest-ID live member of the installed view. It runs three
/// rounds, each multicast and retransmitted every `flushRetransmitNanoseconds`:
/// 1. `propose(ballot, base view, members)`: the live members plus joiners. A member acks
///    with, for every member of the base view, the highest seq it holds contiguously, and
///    its own highest sent seq. From its ack on it is *frozen*: it delivers nothing more
///    and queues its own sends. So each member's deliveries never exceed what it reported.
/// 2. When every proposed member acked, `cut(ballot, new view id, entries)`: for each base
///    member the highest seq any continuing member holds (what a dead member got to nobody
///    is lost to all), and for each joiner its own sent seq, where its stream starts.
///    Members fetch what they miss up to the cut (NACK; any holder repairs), then `ready`.
/// 3. When every member is ready, `install(ballot)`. Each member delivers every message up
///    to the cut (in sender-ID order), emits `.viewChanged`, starts every stream of the new
///    view at cut + 1 (a joiner never NACKs history) and sends its queued messages tagged
///    with the new view. A member that missed `install` keeps sending `ready`; a member that
///    installed that ballot answers with `install`; a heartbeat or proposal naming the view
///    that a ready member's cut would create also makes it install.
/// Hence every member that installs view V from view V−1 delivered exactly the messages up
/// to the cut in V−1. A proposed member that does not answer within
/// `flushTimeoutNanoseconds` is excluded and the flush restarts with a higher ballot; a
/// member of the base view that answers from another view (it missed one) is excluded too
/// and readmitted as a joiner. Members ack only the highest ballot of a base; a coordinator
/// silent for twice the timeout is excluded by the members, and the next-lowest restarts.
///
/// ## Primary component, partitions, merging
/// A view change is started only if a strict majority of the installed view's members is
/// reachable (live, or heard in an older view), or exactly half including its highest-ID
/// member (members gone by `leave` or a proven restart do not count). Otherwise the peer is
/// `.blocked`: it queues sends and delivers nothing; blocked for `blockedTimeoutNanoseconds`
/// (10 s), it gives up the view (`.viewAbandoned`, its queued sends discarded) and is a fresh,
/// joining peer again: back in the lobby, it rejoins when it hears a group. The rule of two:
/// when only this peer and one other still count, this peer is blocked only when the other is
/// the higher ID and unreachable; that one is primary alone and will install a view without
/// it, so this peer gives the view up at once (within the suspect timeout) and, having just
/// listened to the room, founds or joins a group without a discovery period
/// (`blockedBound(base:)`). Nothing is decided on the blocked side, so the two sides of a
/// partition never decide differently. Views
/// are ordered by (id, key); the coordinator of a working group admits as joiners the
/// fresh peers, the blocked peers and the peers of dominated views (lower id, or equal id
/// and lower key: groups founded apart). A joiner discards the undelivered and unstable
/// messages of its old view: when a partition heals, the blocked side rejoins the primary
/// and its messages that the primary never agreed on are dropped (its own sends queued
/// while blocked go out in the new view). When the majority of a view crashed and
/// restarted, the restarted peers are fresh: hearing only blocked peers, they found a new
/// group, which then admits the blocked ones.
///
/// ## State of a peer
/// One `phase`, with the data only that phase has (`status` names it):
/// - `joining(discoveryAt, flush, given)`: no view (fresh, or its view given up: `given` is
///   empty, its application view naming the members of the view given up). It listens until
///   `discoveryAt`, then founds a group or waits to be admitted; `flush` is the founding or
///   admission it takes part in. The install makes it a `member`.
/// - `member`: primary in the installed view, delivering. A proposal it takes part in makes it
///   `flushing`; too few members reachable make it `blocked`.
/// - `flushing(flush, …)`: frozen in a view change (`flush.participation`, and
///   `flush.coordinating` when it coordinates it). The install makes it a `member`; a change
///   that ends without one (given up, or its coordinator silent) returns it to the phase it was
///   in before (`blocked` since the same time, or `member`) until the membership is evaluated
///   at the end of the same input: a blocked peer never passes through `member` on the way.
/// - `blocked(since, …)`: non-primary. A reachable majority makes it a `member` again, a proposal
///   it takes part in `flushing`; `blockedBound` after `since` it gives the view up (`joining`).
/// - `left(view)`: after `leave`, from any phase, for good; it keeps the view it left.
/// Across member, flushing and blocked a peer carries `InView`: the view it is in
/// (`InstalledView`; the installed view is nowhere else), whether a view change it
/// coordinated was given up (the next runs even if the membership looks unchanged), and since
/// when it was blocked before the view change it is in. Timers are one table keyed by `Timer`
/// (`ReliableMulticast+Timers.swift`).
///
/// ## Known limits
/// Crossing ballots (a false suspicion during a flush together with a lost `install`) can
/// in theory install two views with the same id from one base, each by a different set of
/// members; the smaller set soon finds itself non-primary and rejoins as joiners.
/// Without a passphrase anyone on the LAN can forge any datagram (a member's identity
/// included): every field is validated so nothing traps, and flush frames from a peer that is
/// not a member of the view in question change nothing (`handleFlushFrame`), but a forger
/// posing as a member, or proving an ID of its own and claiming by heartbeats a view that
/// dominates ours (as a real group merging ours would), can still stall or reshape a group.
/// With one, only replays remain, and they are dropped.
/// Restarted peers that hear only blocked peers found a new group even if the old primary
/// lives on behind a partition; the two groups merge (as joiners) when it heals.
/// After `leave`, a peer goes silent at once (it does not linger to repair).
public final class ReliableMulticast {
    /// A sender's stream (`ReceiveWindows`).
    typealias Stream = ReceiveWindows.Stream

    struct CutInfo {
        var newViewID: UInt64
        var entries: [CutEntry]
    }

    /// This peer's part in a view change (as a member; the coordinator is one too).
    struct Participation {
        var ballot: Ballot
        var baseID: UInt64
        var baseKey: UInt64
        var members: [Member]
        var continuing: Bool
        var cut: CutInfo?
        var ready = false
        var installRequested = false
        var lastProgress: NetTime
    }

    struct AckInfo {
        var continuing: Bool
        var viewID: UInt64
        var ownSeq: UInt64
        var holdings: [PeerID: UInt64]
    }

    /// A view change this peer coordinates.
    struct Proposal {
        var ballot: Ballot
        var baseID: UInt64
        var baseKey: UInt64
        var baseMembers: [Member]
        var members: [Member]
        var acks: [PeerID: AckInfo] = [:]
        var cut: CutInfo?
        var ready: Set<PeerID> = []
        var deadline: NetTime
        /// By then the joiners (members not in `baseMembers`, the coordinator aside) answer the current step (ack,
        /// then ready), or they are dropped and the change restarts without them. `nil` when
        /// it proposes no joiner, or every joiner answered the current step.
        var joinersDue: NetTime?

        var joiners: [Member] { members.filter { $0.id != ballot.coordinator && !baseMembers.contains($0) } }
        /// Whether `m` answered the current step: acked before the cut, ready after it.
        func answered(_ m: Member) -> Bool { cut == nil ? acks[m.id] != nil : ready.contains(m.id) }
    }

    /// Where this peer stands (`status` names it): one phase, with the data only it has.
    enum Phase {
        /// No installed view: a fresh peer, or one that gave its view up (`given`: empty; its
        /// application view names the members of the view given up departed). It only listens
        /// until `discoveryAt`; `flush` is the founding of a group, or a group's admission of
        /// this peer, that it takes part in (its status stays `.joining` until it installs).
        case joining(discoveryAt: NetTime, flush: Flush?, given: InstalledView)
        /// In the installed view and primary: delivers, sends.
        case member(InView)
        /// In the installed view, frozen in a view change (of this view, or into a group that
        /// admits this peer): delivers nothing, queues its sends.
        case flushing(Flush, InView)
        /// In the installed view, too few of its members reachable to be primary: delivers
        /// nothing, queues its sends; `blockedBound` after `since` it gives the view up.
        case blocked(since: NetTime, InView)
        /// Announced `leave`: silent for good. It keeps the view it left, to be read.
        case left(InstalledView)
    }

    /// What a peer in an installed view carries from one phase to the next.
    struct InView {
        /// The view it is in.
        var installed: InstalledView
        /// A view change this peer coordinated was given up (someone did not answer): members may
        /// be frozen in it, so a new one runs even if the membership looks unchanged.
        var flushAbandoned = false
        /// Blocked since then before the view change it is in (only while flushing): if that
        /// change ends without an install, the peer is blocked again since then (its bound runs on).
        var blockedBefore: NetTime?
    }

    /// A view change this peer takes part in. Held by reference: the phase that carries it is
    /// read on every input, and only the phase holds it (`updateFlush` changes it in place).
    final class Flush {
        var participation: Participation
        /// The view change this peer coordinates: the ballot of `participation`. `nil` when this
        /// peer does not coordinate it, or gave it up (a proposed member died) while still frozen in it.
        var coordinating: Proposal?

        init(participation: Participation, coordinating: Proposal?) {
            self.participation = participation
            self.coordinating = coordinating
        }
    }

    struct SeqKey: Hashable, Comparable {
        var origin: PeerID
        var seq: UInt64
        static func < (a: SeqKey, b: SeqKey) -> Bool { (a.origin, a.seq) < (b.origin, b.seq) }
    }

    static var peersMax: Int { PeerTable.peersMax }
    /// NACK datagrams one stream may send per timer firing (each up to `Wire.nackRangesMax` ranges).
    static let nackDatagramsPerFireMax = 4
    /// The RTT share of the NACK retransmit timeout is capped here.
    static let rttForTimeoutsMaxNanoseconds: UInt64 = 1_000_000_000
    /// Larger RTT samples are clamped (a bogus echo cannot poison the estimate for long).
    static let rttSampleMaxNanoseconds: UInt64 = 10_000_000_000
    static var repairPendingMax: Int { SendWindow.repairPendingMax }

    // The state: the configuration, the phase, and one owned part per concern. Each part is a
    // value with its own invariants (checked after every input by `checkInvariants`) and tests;
    // the protocol that moves them is in this file and its extensions.
    let config: PeerNetConfig
    /// Identity, room hash, authenticator, packet numbers, send times of heartbeats and reports.
    var framing: Framing
    /// Every random delay is drawn from it (seeded by `config.randomSeed`).
    var rng: SplitMix64
    /// The phase, with the installed view inside it.
    var phase: Phase
    /// The ballots seen and the last install, whatever the phase.
    var ballots = BallotMemory()
    /// One stream per member of the installed view.
    var receiveWindows = ReceiveWindows()
    /// Own seqs, the outgoing queues and the repairs asked of this peer.
    var sendWindow = SendWindow()
    var events: Deque<PeerNetEvent> = []
    /// Proven peers, exclusions from view changes, incompatible senders reported.
    var peerTable = PeerTable()
    /// The members' delivered vectors and the lagging members reported.
    var stability = Stability()
    /// Every armed timer and when it is due (`ReliableMulticast+Timers.swift`).
    var timers: [Timer: NetTime] = [:]
    /// The loss estimate, the own send rate and the echoes (`ReliableMulticast+Redundancy.swift`).
    var redundancy: Redundancy
    /// The latest `now` seen: condition deadlines already past are not polled again.
    var lastNow: NetTime
    /// Cookies, challenges, the response budget and retired incarnations (`ReliableMulticast+Handshake.swift`).
    var handshake: Handshake
    /// What this member keeps and does for receivers (`ReliableMulticast+Receivers.swift`).
    var receiverService = ReceiverService()
    /// With `config.receiveOnly`, the receiver this core runs instead of membership: every
    /// public input and output goes to it.
    let receiver: Receiver?

    public internal(set) var stats = PeerNetStats()

    // Read-only views of the parts that most of the protocol reads.
    var me: Member { framing.me }
    var roomHash: UInt64 { framing.roomHash }
    /// The installed view, from the phase: the one a member, flushing or blocked peer is in,
    /// the one a peer left (kept after `leave`), or an empty one while joining.
    var installed: InstalledView {
        switch phase {
        case let .joining(_, _, given): given
        case let .member(inView), let .flushing(_, inView), let .blocked(_, inView): inView.installed
        case let .left(installed): installed
        }
    }
    var viewID: UInt64 { installed.id }
    var viewKey: UInt64 { installed.key }
    var members: [Member] { installed.members }
    /// The installed view as the application sees it.
    public var view: MembershipView { receiver?.view ?? installed.view }

    /// Whether this core is a receiver (`PeerNetConfig.receiveOnly`): it sends no messages.
    public var isReceiveOnly: Bool { receiver != nil }

    /// Whether `datagram` was sent by a receiver (its envelope's flag bit 1; nothing else is
    /// read or checked). A receiver drops these unread, so it may as well never be handed them:
    /// a socket filter does this in the kernel (`PeerNetUDP`), the simulator at sending.
    public static func isFromReceiver(_ datagram: [UInt8]) -> Bool { Wire.isFromReceiver(datagram) }

    /// Where the receiver flag sits: the byte at `offset` of a datagram at least `minimumBytes`
    /// long, under the mask `mask` (for a socket filter that drops receivers' datagrams).
    public static let receiverFlag = (offset: Wire.flagsOffset, mask: Wire.flagFromReceiver, minimumBytes: Wire.headerBytes + Wire.crcBytes)
    var streams: [PeerID: Stream] { receiveWindows.streams }
    var peers: [PeerID: PeerInfo] { peerTable.peers }

    /// - Parameters:
    ///   - config: identity, room and every limit; `config.randomSeed` seeds all random delays.
    ///   - now: the caller's clock; the first heartbeat goes out at once.
    public init(config: PeerNetConfig, now: NetTime) {
        precondition(config.datagramBytesMax >= 1100, "datagramBytesMax below 1100 cannot carry a cut")
        precondition(config.windowSizeMax >= 1 && config.windowSizeMax <= 1 << 16, "windowSizeMax out of range")
        precondition(config.heartbeatIntervalNanoseconds > 0, "heartbeat interval must be positive")
        self.config = config
        self.framing = Framing(
            me: Member(id: config.peerID, incarnation: config.incarnation), room: config.room, passphrase: config.passphrase)
        self.redundancy = Redundancy(config: config)
        self.rng = SplitMix64(seed: config.randomSeed)
        var secretSource = SplitMix64(seed: config.randomSeed ^ 0x5EC2_E7C0_0C1E_5EED ^ config.incarnation)
        self.handshake = Handshake(cookieSecret: secretSource.next())
        self.phase = .joining(discoveryAt: now.adding(nanoseconds: config.discoveryNanoseconds), flush: nil, given: .none)
        self.receiver = config.receiveOnly ? Receiver(config: config, now: now) : nil
        self.timers[.heartbeat] = now
        self.lastNow = now
        checkInvariants()
    }

    /// Where this peer stands: joining, member, flushing (view change), blocked (non-primary), left.
    public var status: PeerNetStatus {
        if let receiver { return receiver.status }
        return switch phase {
        case .joining: .joining
        case .member: .member
        case .flushing: .flushing
        case .blocked: .blocked
        case .left: .left
        }
    }

    /// Since when this peer is blocked (non-primary, `.blocked`), while it is: a UI can show
    /// how long it has been cut off; at `blockedTimeoutNanoseconds` it gives up the view.
    package var blockedSince: NetTime? {
        if case let .blocked(since, _) = phase { since } else { nil }
    }

    /// The highest seq this peer has assigned to its own messages.
    package var lastSentSeq: UInt64 { sendWindow.lastSentSeq }

    /// Own messages assigned a seq but not yet sent (queued during a view change or while blocked).
    package var pendingSendCount: Int { sendWindow.pendingSends.count }

    /// The highest seq delivered here from `peer`, `nil` when `peer` is not in the installed view.
    package func deliveredUpTo(_ peer: PeerID) -> UInt64? { receiver?.deliveredUpTo(peer) ?? streams[peer]?.delivered }

    /// Round-trip time and loss of the link from `peer`, for a status line; `nil` for a peer
    /// never heard (or forgotten). Pure: computed from datagrams and the `now` of past inputs.
    ///
    /// RTT: every stability report echoes, per member, the packet number of the last heartbeat
    /// or report heard from it and how long it held it; the member that sent that packet
    /// subtracts the hold from the time since it sent it. Loss: the fraction of `peer`'s packet
    /// numbers (all its datagrams are numbered in one sequence) that never arrived, over its
    /// last 256 to 512 packet numbers.
    public func linkStats(_ peer: PeerID) -> LinkStats? {
        guard let info = peers[peer] else { return nil }
        let lost = info.packetsExpected - min(info.packetsReceived, info.packetsExpected)
        return LinkStats(
            roundTripNanoseconds: info.rttSmoothed, roundTripMinNanoseconds: info.rttMin,
            roundTripLatestNanoseconds: info.rttLatest,
            lossFraction: info.packetsExpected == 0 ? 0 : Double(lost) / Double(info.packetsExpected),
            packetsObserved: info.packetsExpected, lastHeard: info.lastHeard)
    }

    // MARK: - Commands

    /// Queues `payload` for reliable delivery to every member (this peer included).
    /// - Returns: the message's seq (1 for the first message of this incarnation).
    /// - Throws: `.notJoined` before the first view, `.left` after `leave`,
    ///   `.payloadTooLarge`, `.windowFull` while `windowSizeMax` own messages are unstable.
    /// During a view change or while blocked, the message waits and goes out in the next view.
    @discardableResult
    public func send(_ payload: [UInt8], now: NetTime) throws(PeerNetError) -> UInt64 {
        guard receiver == nil else { throw .receiveOnly }
        defer { checkInvariants() }
        guard !isLeft else { throw .left }
        guard hasView else { throw .notJoined }
        guard payload.count <= config.payloadBytesMax else { throw .payloadTooLarge }
        let floor = streams[me.id]?.stableFloor ?? sendWindow.transmittedSeq
        guard lastSentSeq - floor < UInt64(config.windowSizeMax) else {
            reportLagging()
            throw .windowFull
        }
        lastNow = max(lastNow, now)
        let seq = sendWindow.assign(payload)
        stats.messagesSent += 1
        if status == .member {
            transmitPending()
            if redundancyEnabled {
                countOwnTransmission(now: now)
                noteGameRateSend(seq: seq, now: now)
            }
            deliverReady()
            considerReport(now: now)
        }
        return seq
    }

    /// Announces a graceful leave; the peer then goes silent and throws `.left` on `send`.
    public func leave(now: NetTime) {
        if let receiver {
            receiver.leave()
            return
        }
        defer { checkInvariants() }
        guard !isLeft else { return }
        emit(.leave(sentSeq: sendWindow.transmittedSeq))
        emit(.leave(sentSeq: sendWindow.transmittedSeq))
        phase = .left(installed)
        // Messages queued during a view change are never sent now: they count as abandoned.
        _ = sendWindow.abandonPending()
    }

    /// The host found this process was stopped (SIGSTOP, a suspended laptop) for
    /// `awayNanoseconds`: its timer ran that late, longer than the others wait before they
    /// suspect a silent member. They have gone on without it, so rather than wait to find itself
    /// blocked, it gives up its view now and rejoins like a fresh peer (`.viewAbandoned`, after
    /// `.resumedAfterPause`, which says why). A peer alone or still joining only reports it.
    public func resumeAfterPause(awayNanoseconds: UInt64, now: NetTime) {
        guard receiver == nil else { return }  // a receiver's own timeouts start it again
        defer { checkInvariants() }
        lastNow = max(lastNow, now)
        guard !isLeft else { return }
        stats.pausesResumed += 1
        events.append(.resumedAfterPause(awayNanoseconds: awayNanoseconds))
        if hasView, members.count > 1 { abandonView(now: now) }
        afterInput(now: now)
    }

    // MARK: - Polling

    /// The next datagram to multicast to the group, or `nil`. Control first, then repairs, then new data.
    public func pollTransmit() -> [UInt8]? {
        if let receiver {
            defer { stats = receiver.stats }
            return receiver.pollTransmit()
        }
        if let datagram = sendWindow.outControl.popFirst() {
            stats.datagramsSent += 1
            stats.bytesSent += UInt64(datagram.count)
            return datagram
        }
        guard !sendWindow.outRepairs.isEmpty || !sendWindow.outData.isEmpty else { return nil }
        // Encoded in place: items go from the queues straight into the datagram's bytes.
        let envelope = framing.nextEnvelope(kind: .data)
        var w = BigEndianByteWriter(capacity: config.datagramBytesMax)
        Wire.encodeHeader(kind: .data, envelope: envelope, auth: framing.auth, into: &w)
        let countOffset = w.bytes.count
        w.u8(0)
        var count = 0
        var newOwn = 0
        var firstNewSeq: UInt64 = 0
        let limit = config.datagramBytesMax - Wire.trailerBytesMax
        while count < Wire.itemsPerDatagramMax {
            let fromRepairs = !sendWindow.outRepairs.isEmpty
            guard let next = fromRepairs ? sendWindow.outRepairs.first : sendWindow.outData.first,
                  w.bytes.count + next.encodedBytes <= limit
            else { break }
            if fromRepairs {
                sendWindow.outRepairs.removeFirst()
            } else {
                sendWindow.outData.removeFirst()
                if newOwn == 0 { firstNewSeq = next.seq }
                newOwn += 1
            }
            Wire.encodeItem(next, into: &w)
            count += 1
        }
        precondition(count > 0, "a single item always fits a datagram")
        // Game rate (a few new own messages, nothing queued behind them): copies of the ones before.
        if redundancy.levelNow > 0, newOwn > 0, newOwn <= Self.redundancyBulkItemsMax, sendWindow.outData.isEmpty {
            count += appendCopies(before: firstNewSeq, into: &w, limit: limit, itemsRoom: Wire.itemsPerDatagramMax - count)
        }
        w.bytes[countOffset] = UInt8(count)
        framing.auth.appendTrailer(to: &w.bytes)
        stats.datagramsSent += 1
        stats.bytesSent += UInt64(w.bytes.count)
        return w.bytes
    }

    /// When `handleTimeout` should be called next; `nil` after `leave`.
    public func pollTimeout() -> NetTime? {
        if let receiver { return receiver.pollTimeout() }
        guard !isLeft else { return nil }
        return nextDeadline()
    }

    /// The next delivery or view change, in order.
    public func pollEvent() -> PeerNetEvent? { receiver?.pollEvent() ?? events.popFirst() }

    // MARK: - Inputs

    /// Handles one received datagram (any bytes). Invalid ones are counted and dropped.
    public func handleDatagram(_ bytes: [UInt8], now: NetTime) {
        if let receiver {
            receiver.handleDatagram(bytes, now: now)
            stats = receiver.stats
            return
        }
        defer { checkInvariants() }
        lastNow = max(lastNow, now)
        stats.datagramsReceived += 1
        let outcome = Wire.decode(bytes, room: roomHash, auth: framing.auth, datagramBytesMax: config.datagramBytesMax, ownSender: me.id)
        switch outcome {
        case let .drop(reason):
            countDrop(reason)
        case let .own(envelope):
            // Our own echo (or an older incarnation's): counted by `admit`, which never accepts it.
            let admission = admit(envelope, frame: nil, now: now)
            precondition(admission == .dropped, "own datagrams are never admitted")
        case let .frame(envelope, frame):
            if isReceiverFrame(frame, envelope) {
                // A receiver's: it never enters the peer table (`ReliableMulticast+Receivers.swift`).
                stats.datagramsAccepted += 1
                guard !isLeft else { return }
                handleReceiverFrame(frame, from: envelope.sender, now: now)
                afterInput(now: now, stability: false, membership: false)
                return
            }
            let sender = Member(id: envelope.sender, incarnation: envelope.incarnation)
            switch admit(envelope, frame: frame, now: now) {
            case .dropped:
                fireIfDue(.challenge, now: now)
                return
            case .stranger:
                // Only the handshake gets through from a sender not proven yet.
                stats.datagramsAccepted += 1
                if case let .challenge(entries) = frame, !isLeft { handleChallenge(entries, from: sender) }
                fireIfDue(.challenge, now: now)
                return
            case .known:
                break
            }
            stats.datagramsAccepted += 1
            guard !isLeft else { return }
            if frame.kind == .heartbeat || frame.kind == .report {
                peerTable[sender.id]?.echoPacket = envelope.packetNumber
                peerTable[sender.id]?.echoHeardAt = now
            }
            dispatch(frame, from: sender, now: now)
            switch frame.kind {
            case .data, .nack: afterInput(now: now, stability: false, membership: false)
            case .report: afterInput(now: now, stability: true, membership: false)
            default: afterInput(now: now)
            }
        }
    }

    /// Runs every expired timer. Spurious calls are no-ops.
    public func handleTimeout(now: NetTime) {
        if let receiver {
            receiver.handleTimeout(now: now)
            stats = receiver.stats
            return
        }
        defer { checkInvariants() }
        lastNow = max(lastNow, now)
        guard !isLeft else { return }
        fireExpired(now: now)
        afterInput(now: now)
    }

    func dispatch(_ frame: Frame, from sender: Member, now: NetTime) {
        switch frame {
        case let .heartbeat(status, viewID, viewKey, sentSeq, delivered):
            peerTable[sender.id]?.status = status
            handleHeartbeat(from: sender, viewID: viewID, viewKey: viewKey, sentSeq: sentSeq, delivered: delivered, now: now)
        case let .data(items):
            for item in items { receiveItem(item) }
        case let .nack(origin, ranges):
            handleNack(origin: origin, ranges: ranges, from: sender, now: now)
        case let .leave(sentSeq):
            peerTable[sender.id]?.left = true
            receiveWindows.noteKnown(sentSeq, of: sender)
        case let .report(viewID, viewKey, sentSeq, entries):
            handleReport(from: sender, viewID: viewID, viewKey: viewKey, sentSeq: sentSeq, entries: entries, now: now)
        case .propose, .ack, .cut, .ready, .install:
            handleFlushFrame(frame, from: sender, now: now)
        case let .challenge(entries):
            handleChallenge(entries, from: sender)
        case .response:
            break  // a proven peer's (late or repeated) response: nothing more to learn
        case .listen, .sync:
            break  // a receiver's, or another member's answer to receivers
        }
    }

    /// After every input: deliver, schedule NACKs and reports, free stable messages, reconsider membership.
    func afterInput(now: NetTime, stability: Bool = true, membership: Bool = true) {
        guard !isLeft else { return }
        fireIfDue(.challenge, now: now)
        transmitPending()
        deliverReady()
        if stability { updateStability() }
        scheduleNacks(now: now)
        considerReport(now: now)
        checkReady()
        if membership { evaluateMembership(now: now) }
    }

    // MARK: - Encoding and emitting

    func encode(_ frame: Frame) -> [UInt8] {
        let envelope = framing.nextEnvelope(kind: frame.kind)
        let bytes = Wire.encode(frame, envelope: envelope, auth: framing.auth)
        precondition(bytes.count <= config.datagramBytesMax, "encoded datagram exceeds datagramBytesMax")
        return bytes
    }

    /// Queues a control frame; flush frames are also handled locally (the coordinator is a member too).
    func emit(_ frame: Frame) {
        sendWindow.outControl.append(encode(frame))
    }

    func emitHeartbeat(now: NetTime) {
        stats.heartbeatsSent += 1
        let delivered: [(PeerID, UInt64)] = hasView ? members.map { ($0.id, streams[$0.id]?.delivered ?? 0) } : []
        let statusCode: WireStatus = switch status {
        case .joining: .joining
        case .member: .member
        case .flushing: .flushing
        case .blocked: .blocked
        case .left: .left
        }
        emit(.heartbeat(status: statusCode, viewID: hasView ? viewID : 0, viewKey: hasView ? viewKey : 0, sentSeq: wireSeq, delivered: delivered))
        framing.rememberSent(now: now)
        // With every heartbeat, a report: it echoes the members' last packets (their RTT).
        if hasView, members.count > 1 { emitReport(now: now) }
    }

    // MARK: - Data path

    /// Sends an own message (tagged with the installed view) and stores it for delivery and repair.
    /// Sends every queued own message; only as a member of an installed, primary view.
    func transmitPending() {
        guard status == .member else { return }
        while let pending = sendWindow.takePending() { transmitOwn(seq: pending.seq, payload: pending.payload) }
    }

    /// The highest own seq already encoded into a datagram. Heartbeats and reports announce
    /// this one, not `transmittedSeq`: control goes out before queued data, and a status that
    /// ran ahead of its data would make every receiver see a gap that is only in flight.
    /// (`outData` holds exactly the own seqs after it, in order.)
    var wireSeq: UInt64 { sendWindow.wireSeq }

    func transmitOwn(seq: UInt64, payload: [UInt8]) {
        let item = DataItem(origin: me, viewID: viewID, seq: seq, payload: payload)
        sendWindow.transmit(item)
        streams[me.id]?.messages[seq] = item
        streams[me.id]?.highestKnown = seq
    }

    func receiveItem(_ item: DataItem) {
        stats.messagesReceived += 1
        let key = SeqKey(origin: item.origin.id, seq: item.seq)
        if item.origin == me {
            stats.messagesDuplicate += 1
            sendWindow.repairSeen(key)
            return
        }
        // Only what can be delivered takes a place: an item of a view after the installed one
        // (a forged one could hold a real message's seq and make it a "duplicate") is dropped;
        // if it was real, the sender repairs it after the install.
        guard item.viewID <= viewID else {
            stats.messagesFutureView += 1
            return
        }
        switch receiveWindows.accept(item, windowSizeMax: config.windowSizeMax) {
        case .unknownSender, .beyondWindow:
            stats.messagesDiscarded += 1
        case .duplicate:
            stats.messagesDuplicate += 1
            sendWindow.repairSeen(key)
        case let .stored(evicted):
            sendWindow.repairSeen(key)
            stats.messagesDiscarded += UInt64(evicted)
        }
    }

    /// Delivers, in sender-ID order, every message next in its stream and tagged with a view
    /// not after the installed one. Only as a member: frozen while flushing, blocked or joining.
    func deliverReady() {
        guard status == .member else { return }
        for m in members {  // sorted by ID
            guard let stream = streams[m.id] else { continue }
            while let item = stream.messages[stream.delivered + 1], item.viewID <= viewID {
                stream.delivered = item.seq
                stats.messagesDelivered += 1
                events.append(.delivered(Delivery(from: item.origin.id, seq: item.seq, payload: item.payload)))
                retainForReceivers(item)
            }
        }
    }

    func deliver(_ item: DataItem) {
        precondition(streams[item.origin.id]?.delivered == item.seq - 1, "deliveries are in seq order")
        streams[item.origin.id]?.delivered = item.seq
        stats.messagesDelivered += 1
        events.append(.delivered(Delivery(from: item.origin.id, seq: item.seq, payload: item.payload)))
        retainForReceivers(item)
    }

    // MARK: - Invariants

    /// What each phase implies, checked after every input.
    func checkPhase() {
        func check(_ flush: Flush) {
            if let c = flush.coordinating {
                precondition(c.ballot == flush.participation.ballot && c.ballot.coordinator == me.id, "a coordinator takes part in its own ballot")
            }
            precondition(flush.participation.members.contains(me), "a view change this peer takes part in proposes it")
            precondition(flush.participation.continuing == (hasView && flush.participation.baseID == viewID && flush.participation.baseKey == viewKey),
                         "a view change continues the installed view exactly when it is based on it")
        }
        switch phase {
        case let .joining(_, flush, given):
            precondition(given.isEmpty && receiveWindows.isEmpty, "no view while joining")
            given.checkInvariants()
            if let flush { check(flush) }
        case let .member(inView):
            precondition(inView.blockedBefore == nil, "only a flushing peer carries since when it was blocked before")
            precondition(!inView.installed.isEmpty, "a member is in a view")
            inView.installed.checkInvariants()
        case let .flushing(flush, inView):
            precondition(!inView.installed.isEmpty, "a flushing peer is in a view")
            inView.installed.checkInvariants()
            check(flush)
        case let .blocked(since, inView):
            precondition(since <= lastNow, "blocked since a time already seen")
            precondition(inView.blockedBefore == nil, "only a flushing peer carries since when it was blocked before")
            precondition(!inView.installed.isEmpty, "a blocked peer is in a view")
            inView.installed.checkInvariants()
        case let .left(installed):
            installed.checkInvariants()
        }
    }

    func checkInvariants() {
        framing.checkInvariants()
        ballots.checkInvariants()
        receiveWindows.checkInvariants(windowSizeMax: config.windowSizeMax)
        sendWindow.checkInvariants(windowSizeMax: config.windowSizeMax)
        peerTable.checkInvariants(me: me)
        stability.checkInvariants(members: members)
        redundancy.checkInvariants(echoesMax: config.redundancyEchoesMax)
        handshake.checkInvariants()
        receiverService.checkInvariants()
        // How the parts fit together.
        precondition(!hasView || members.contains(me), "an installed view contains this peer")
        precondition(!hasView || receiveWindows.count == members.count, "one stream per member")
        checkPhase()
        precondition(timers[.echo] == nil || redundancy.echoesLeft > 0, "an armed echo has echoes left")
        precondition(isLeft || timers[.heartbeat] != nil, "the heartbeat is armed until leave")
        for timer in timers.keys {
            if case let .nack(id) = timer { precondition(streams[id] != nil && id != me.id, "a NACK timer belongs to another member's stream") }
        }
    }
}
