/// Options, errors, counters and the seeded generator of the PeerNet core.

/// Every option of a `ReliableMulticast`, with defaults for all but the identity.
///
/// Limits are named with their unit last (`windowSizeMax`, `suspectTimeoutNanoseconds`).
public struct PeerNetConfig: Sendable, Hashable {
    /// Peers in another room are ignored (their datagrams are counted as `droppedForeignRoom`).
    public var room: String
    public var peerID: PeerID
    /// Tells this life of the peer from every earlier one under the same ID: a restarted peer
    /// must use a value it never used before, e.g. a random 64-bit number (no order is implied:
    /// a restart is recognised by the join handshake, whatever the clock or the numbers say).
    public var incarnation: UInt64
    /// When set, every datagram carries a truncated HMAC-SHA256 keyed by this passphrase and
    /// datagrams without a valid one are dropped. When `nil`, datagrams carry a CRC-32C.
    public var passphrase: String?
    /// How often a heartbeat (membership, highest seq, stability vector) is multicast.
    package var heartbeatIntervalNanoseconds: UInt64
    /// A member not heard from for this long is suspected and removed by a view change.
    package var suspectTimeoutNanoseconds: UInt64
    /// A fresh peer listens this long for an existing group before it founds one.
    package var discoveryNanoseconds: UInt64
    /// Upper bound of the random delay before a NACK (suppresses NACK storms).
    package var nackDelayMaxNanoseconds: UInt64
    /// A NACK is repeated after this long (plus the origin's RFC 6298 RTO) while the gap persists.
    package var retransmitTimeoutNanoseconds: UInt64
    /// Upper bound of the random delay before a repair by a member that is not the origin.
    package var repairDelayMaxNanoseconds: UInt64
    /// A stability report (with the sent seq) follows this long after the last own send:
    /// receivers notice a lost last message without waiting for a heartbeat.
    /// (Reports also go out whenever a stream advanced by a quarter of the window.)
    package var stabilityReportDelayNanoseconds: UInt64
    /// Flush messages (propose, cut, ready) are repeated this often while a view change runs.
    package var flushRetransmitNanoseconds: UInt64
    /// A view change that makes no progress for this long is restarted without the silent peers.
    package var flushTimeoutNanoseconds: UInt64
    /// A joiner proposed in a view change (a peer not in the coordinator's view, every other
    /// peer when founding) answers each step (ack, then ready) within this long, or the
    /// coordinator drops it from the change and restarts at once without it: the members wait
    /// on a joiner no longer than this (a peer that is proven but does not run the protocol
    /// holds nobody up for the flush timeout).
    package var joinerAnswerTimeoutNanoseconds: UInt64
    /// Joiners proposed in one view change at most (the rest wait for the next).
    package var joinersPerViewChangeMax: Int
    /// A peer blocked (cut off from most of its view: non-primary) this long gives up the view
    /// (`.viewAbandoned`): it is back to joining, the lobby, like a fresh peer, and rejoins
    /// (or founds a group) once it hears others. In a view of two the lower ID gives the view
    /// up as soon as it is blocked (the rule of two, `ReliableMulticast.blockedBound(base:)`).
    package var blockedTimeoutNanoseconds: UInt64
    /// Own messages sent but not yet stable (delivered by every member); `send` throws beyond it.
    package var windowSizeMax: Int
    /// No datagram is larger than this (encoded, trailer included).
    public var datagramBytesMax: Int
    /// Seed of the generator behind every randomized delay. Never the system's randomness.
    package var randomSeed: UInt64
    /// A receiver (a spectator): it follows the group's streams and is never a member of it
    /// (`Receiver.swift`); it sends nothing but its presence and NACKs.
    public var receiveOnly = false

    // Redundancy for game-rate traffic (`ReliableMulticast+Redundancy.swift`): while loss is
    // seen, own messages are sent again before anyone asks, so a lost datagram is repaired by
    // the next one without a NACK round trip. Off under bulk load and while no loss is seen.
    /// Bytes of copies one datagram may carry (item headers included); 0 turns redundancy off.
    package var redundancyBytesMax: Int
    /// Extra transmissions of a message at most (the level at the highest loss): copies of the
    /// latest own messages piggybacked on a data datagram, and echoes after a send.
    package var redundancyCopiesMax: Int
    /// Echo datagrams (the latest own messages again) after a game-rate send, at most; 0: only
    /// piggybacked copies. Their number follows the loss seen (at most `redundancyCopiesMax`).
    package var redundancyEchoesMax: Int
    /// Delay from a send to its first echo, and between echoes.
    package var redundancyEchoDelayNanoseconds: UInt64
    /// Level used even when no loss is seen (0: adaptive only; e.g. 1 on a link known lossy).
    package var redundancyLevelMin: Int
    /// Own messages per second above which the sender is under bulk load: no copies, no echoes.
    package var redundancyRateMaxPerSecond: Int
    /// Half-life of the loss estimate that drives the level (it also decays with every packet heard).
    package var redundancyLossHalfLifeNanoseconds: UInt64

    public init(
        room: String = "eggs",
        peerID: PeerID,
        incarnation: UInt64 = 1,
        passphrase: String? = nil,
        heartbeatIntervalNanoseconds: UInt64 = 250_000_000,
        suspectTimeoutNanoseconds: UInt64 = 3_000_000_000,
        discoveryNanoseconds: UInt64 = 1_000_000_000,
        nackDelayMaxNanoseconds: UInt64 = 5_000_000,
        retransmitTimeoutNanoseconds: UInt64 = 5_000_000,
        repairDelayMaxNanoseconds: UInt64 = 4_000_000,
        stabilityReportDelayNanoseconds: UInt64 = 20_000_000,
        flushRetransmitNanoseconds: UInt64 = 150_000_000,
        flushTimeoutNanoseconds: UInt64 = 2_000_000_000,
        joinerAnswerTimeoutNanoseconds: UInt64 = 100_000_000,
        joinersPerViewChangeMax: Int = 8,
        blockedTimeoutNanoseconds: UInt64 = 10_000_000_000,
        windowSizeMax: Int = 1024,
        datagramBytesMax: Int = 1200,
        randomSeed: UInt64? = nil,
        redundancyBytesMax: Int = 600,
        redundancyCopiesMax: Int = 3,
        redundancyEchoesMax: Int = 3,
        redundancyEchoDelayNanoseconds: UInt64 = 1_000_000,
        redundancyLevelMin: Int = 0,
        redundancyRateMaxPerSecond: Int = 500,
        redundancyLossHalfLifeNanoseconds: UInt64 = 2_000_000_000
    ) {
        self.room = room
        self.peerID = peerID
        self.incarnation = incarnation
        self.passphrase = passphrase
        self.heartbeatIntervalNanoseconds = heartbeatIntervalNanoseconds
        self.suspectTimeoutNanoseconds = suspectTimeoutNanoseconds
        self.discoveryNanoseconds = discoveryNanoseconds
        self.nackDelayMaxNanoseconds = nackDelayMaxNanoseconds
        self.retransmitTimeoutNanoseconds = retransmitTimeoutNanoseconds
        self.repairDelayMaxNanoseconds = repairDelayMaxNanoseconds
        self.stabilityReportDelayNanoseconds = stabilityReportDelayNanoseconds
        self.flushRetransmitNanoseconds = flushRetransmitNanoseconds
        self.flushTimeoutNanoseconds = flushTimeoutNanoseconds
        self.joinerAnswerTimeoutNanoseconds = joinerAnswerTimeoutNanoseconds
        self.joinersPerViewChangeMax = joinersPerViewChangeMax
        self.blockedTimeoutNanoseconds = blockedTimeoutNanoseconds
        self.windowSizeMax = windowSizeMax
        self.datagramBytesMax = datagramBytesMax
        self.randomSeed = randomSeed ?? (peerID.raw &* 0x9E37_79B9_7F4A_7C15 ^ incarnation)
        self.redundancyBytesMax = redundancyBytesMax
        self.redundancyCopiesMax = redundancyCopiesMax
        self.redundancyEchoesMax = redundancyEchoesMax
        self.redundancyEchoDelayNanoseconds = redundancyEchoDelayNanoseconds
        self.redundancyLevelMin = redundancyLevelMin
        self.redundancyRateMaxPerSecond = redundancyRateMaxPerSecond
        self.redundancyLossHalfLifeNanoseconds = redundancyLossHalfLifeNanoseconds
    }

    /// An incarnation for a peer process starting now: 64 bits from the system's generator,
    /// never 0. It is the session identity on the wire (every datagram names it): a restart, or
    /// an earlier session of the same room and IDs, never shares it, even when the wall clock
    /// stepped back, so nothing of another session is taken for this one's (without a
    /// passphrase too). For drivers: the core itself never draws system randomness.
    public static func freshIncarnation() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return UInt64.random(in: 1 ... .max, using: &generator)
    }

    /// The largest payload `send` accepts with this datagram size.
    package var payloadBytesMax: Int {
        datagramBytesMax - Wire.headerBytes - Wire.trailerBytesMax - Wire.dataPrefixBytes - Wire.dataItemHeaderBytes
    }
}

/// API misuse of `ReliableMulticast` (a remote peer's garbage is never thrown: it is counted).
public struct PeerNetError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Base: Hashable, Sendable {
        case windowFull, payloadTooLarge, notJoined, left, receiveOnly
    }

    private let base: Base

    private init(_ base: Base) { self.base = base }

    /// Too many own messages are not yet stable; retry after deliveries progress.
    package static let windowFull = PeerNetError(.windowFull)
    /// The payload exceeds `PeerNetConfig.payloadBytesMax`.
    package static let payloadTooLarge = PeerNetError(.payloadTooLarge)
    /// No view is installed yet: the peer is still discovering or joining the group.
    package static let notJoined = PeerNetError(.notJoined)
    /// `leave` was called.
    public static let left = PeerNetError(.left)
    /// A receiver (`PeerNetConfig.receiveOnly`) sends no messages.
    public static let receiveOnly = PeerNetError(.receiveOnly)

    public var description: String { "PeerNetError.\(base)" }
}

/// Where the peer stands in the group.
public enum PeerNetStatus: Hashable, Sendable {
    /// No view yet: discovering peers, waiting to be admitted or to found the group.
    case joining
    /// Member of an installed primary view: sending and delivering.
    case member
    /// Taking part in a view change: sends are queued, deliveries pause until the new view.
    case flushing
    /// Non-primary: too few members of the last view are reachable to form a new view.
    /// Sends are queued and nothing is delivered until a primary view admits this peer again.
    case blocked
    /// `leave` was called.
    case left
}

/// Counters. Every datagram handed to `handleDatagram` lands in exactly one of
/// `datagramsAccepted`, `datagramsLoopback` or one `dropped…` counter.
public struct PeerNetStats: Hashable, Sendable {
    package var datagramsSent: UInt64 = 0
    /// Bytes of the datagrams sent (UDP payload: every byte `pollTransmit` returned).
    package var bytesSent: UInt64 = 0
    package var datagramsReceived: UInt64 = 0
    package var datagramsAccepted: UInt64 = 0
    /// Own datagrams echoed back by the multicast group.
    package var datagramsLoopback: UInt64 = 0
    public var messagesSent: UInt64 = 0
    public var messagesRetransmitted: UInt64 = 0
    package var messagesReceived: UInt64 = 0
    package var messagesDuplicate: UInt64 = 0
    public var messagesDelivered: UInt64 = 0
    /// Messages discarded because they were outside the receive window or of a stale view.
    package var messagesDiscarded: UInt64 = 0
    package var nacksSent: UInt64 = 0
    /// Status datagrams: heartbeats and stability reports (`reportsSent` counts the latter alone).
    package var heartbeatsSent: UInt64 = 0
    /// Stability reports (with RTT echoes) sent: one per heartbeat plus those driven by deliveries.
    package var reportsSent: UInt64 = 0
    public var viewsInstalled: UInt64 = 0
    /// Views given up after being blocked for `blockedTimeoutNanoseconds`, and the own queued
    /// messages discarded with them (never sent: the group never agreed on them).
    package var viewsAbandoned: UInt64 = 0
    /// Times the host found this process had been stopped longer than the suspect timeout
    /// (``ReliableMulticast/resumeAfterPause(awayNanoseconds:now:)``).
    package var pausesResumed: UInt64 = 0
    /// New incarnations of a live member's ID refused (an ID collision or an impostor), and
    /// times this peer heard its own ID from another live incarnation.
    package var collisionsRefused: UInt64 = 0
    package var collisionsHeard: UInt64 = 0
    /// Data items tagged with a view after the installed one: never stored (a forged one
    /// could otherwise hold a real message's place), repaired after the install if real.
    package var messagesFutureView: UInt64 = 0
    /// Proposals whose ballot attempt is beyond what this peer has seen by more than
    /// `attemptStepMax` (one forged propose could otherwise exhaust the attempts).
    package var ballotsOutOfBounds: UInt64 = 0
    package var messagesAbandoned: UInt64 = 0
    /// Joiners dropped from a view change for not answering a step within
    /// `joinerAnswerTimeoutNanoseconds` (each is left out of view changes for a while, longer
    /// at each repeat).
    package var joinersDropped: UInt64 = 0
    /// Frames that passed every envelope check but contradict the protocol state (a cut below
    /// what was delivered, naming members this peer's view lacks, ...): ignored, never trusted.
    /// Counted on top of `datagramsAccepted` (their datagram was well formed).
    package var framesRejected: UInt64 = 0

    package var droppedTruncated: UInt64 = 0
    package var droppedOversized: UInt64 = 0
    package var droppedMalformed: UInt64 = 0
    package var droppedBadChecksum: UInt64 = 0
    public var droppedUnauthenticated: UInt64 = 0
    package var droppedWrongVersion: UInt64 = 0
    package var droppedForeignRoom: UInt64 = 0
    package var droppedStaleIncarnation: UInt64 = 0
    /// Datagrams seen before (same sender, incarnation and packet number) or too old to tell.
    package var droppedReplayed: UInt64 = 0
    /// Datagrams from a peer the table has no room for.
    package var droppedOverload: UInt64 = 0
    /// Datagrams from a sender (or a sender's incarnation) that has not answered a challenge
    /// of the join handshake yet: not acted upon; the sender is challenged.
    package var droppedUnproven: UInt64 = 0
    /// Challenge datagrams sent, responses sent, responses not sent (budget spent), senders proven.
    package var challengesSent: UInt64 = 0
    package var responsesSent: UInt64 = 0
    package var responsesSuppressed: UInt64 = 0
    package var peersProven: UInt64 = 0
    /// Redundancy: copies of own messages sent before anyone asked (piggybacked on data
    /// datagrams or in echoes), and echo datagrams sent. Not counted in `messagesRetransmitted`.
    package var messagesCopied: UInt64 = 0
    package var echoesSent: UInt64 = 0
    // Receivers (`Receiver.swift`), on the receiver:
    package var receiverAsks: UInt64 = 0
    package var receiverSyncs: UInt64 = 0
    package var receiverRestarts: UInt64 = 0
    package var receiverGapsLost: UInt64 = 0
    /// Datagrams of other receivers (flagged), dropped unread.
    package var receiverDatagramsSkipped: UInt64 = 0
    // and on a member:
    package var receiverSnapshotsAsked: UInt64 = 0
    package var receiverSnapshotsSent: UInt64 = 0
    package var receiverRepairsRefused: UInt64 = 0
    /// Receivers' NACKs of a message already being repaired, or repaired within the
    /// retransmit timeout: served by that repair, at no cost to the budget.
    package var receiverRepairsShared: UInt64 = 0

    public init() {}

    /// Every datagram dropped for being invalid, of any reason.
    public var droppedInvalid: UInt64 {
        droppedTruncated + droppedOversized + droppedMalformed + droppedBadChecksum + droppedUnauthenticated
            + droppedWrongVersion + droppedForeignRoom + droppedStaleIncarnation + droppedReplayed + droppedOverload
            + droppedUnproven
    }
}
