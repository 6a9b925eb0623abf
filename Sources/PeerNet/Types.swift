/// The public vocabulary of PeerNet, shared by the protocol core, the UDP adapter,
/// the simulator and the consensus layer.

import EggPrimitives

/// A peer's 64-bit identity. Written as 16 lowercase hex digits everywhere.
public struct PeerID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let raw: UInt64

    public init(_ raw: UInt64) { self.raw = raw }

    /// Parses 1 to 16 hex digits (case-insensitive); `nil` for anything else (a sign included,
    /// which `UInt64(_:radix:)` alone takes: "+5" and "-0" are no peer IDs).
    public init?(hex: some StringProtocol) {
        guard (1...16).contains(hex.utf8.count), hex.utf8.allSatisfy(isHexDigit),
              let value = UInt64(hex, radix: 16) else { return nil }
        self.raw = value
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(raw) }

    /// The hash a dictionary or set keyed by peers uses: the one-shot hash of the 64-bit ID, as
    /// `UInt64` has it, rather than a whole `Hasher` fed one value (peer-keyed tables are looked
    /// up several times a delivered message).
    public func _rawHashValue(seed: Int) -> Int { raw._rawHashValue(seed: seed) }

    /// 16 lowercase hex digits.
    public var hex: String { hex16(raw) }

    public var description: String { hex }

    public static func < (lhs: PeerID, rhs: PeerID) -> Bool { lhs.raw < rhs.raw }
}

/// A point on the caller's clock, in nanoseconds. The core never reads a clock:
/// the adapter passes a monotonic time, the simulator a virtual one.
public struct NetTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    public static let zero = NetTime(nanoseconds: 0)

    public static func milliseconds(_ ms: UInt64) -> NetTime { NetTime(nanoseconds: ms * 1_000_000) }

    public static func < (lhs: NetTime, rhs: NetTime) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// `self` moved forward by `nanoseconds`, saturating at the end of time.
    public func adding(nanoseconds delta: UInt64) -> NetTime {
        let (sum, overflow) = nanoseconds.addingReportingOverflow(delta)
        return NetTime(nanoseconds: overflow ? .max : sum)
    }

    public func adding(milliseconds delta: UInt64) -> NetTime { adding(nanoseconds: delta &* 1_000_000) }

    /// Nanoseconds from `earlier` to `self`, 0 when `earlier` is later.
    public func nanoseconds(since earlier: NetTime) -> UInt64 {
        nanoseconds >= earlier.nanoseconds ? nanoseconds - earlier.nanoseconds : 0
    }

    /// Milliseconds with three decimals (whole microseconds, rounded down): 1.005 ms is "1.005ms".
    public var description: String {
        let micros = String(nanoseconds / 1_000 % 1_000)
        return "\(nanoseconds / 1_000_000)." + String(repeating: "0", count: 3 - micros.count) + micros + "ms"
    }
}

/// A numbered membership view. Every member of a view sees the same sequence of
/// views and, between two views, the same set of delivered messages.
public struct MembershipView: Hashable, Sendable {
    /// Increases by one (at least) with every view a peer installs (a peer that abandoned its
    /// view, `.viewAbandoned`, starts over like a fresh one: its next view may count from 1).
    public var id: UInt64
    /// The members, sorted by ID ascending.
    public var members: [PeerID]
    /// Members new in this view compared with the previous one.
    public var joined: [PeerID]
    /// Members of the previous view that are gone (left, failed or partitioned away).
    public var departed: [PeerID]
    /// Tells apart views that share an `id` but are not the same view (e.g. a group founded
    /// afresh after all its members restarted counts from low ids again). 0 when unknown.
    public var key: UInt64

    public init(id: UInt64, members: [PeerID], joined: [PeerID] = [], departed: [PeerID] = [], key: UInt64 = 0) {
        self.id = id
        self.members = members.sorted()
        self.joined = joined.sorted()
        self.departed = departed.sorted()
        self.key = key
    }

    public func contains(_ peer: PeerID) -> Bool { members.contains(peer) }
}

/// One application message, delivered once, in its sender's order.
public struct Delivery: Hashable, Sendable {
    public var from: PeerID
    /// The sender's sequence number of this message (1 for its first message).
    public var seq: UInt64
    public var payload: [UInt8]

    public init(from: PeerID, seq: UInt64, payload: [UInt8]) {
        self.from = from
        self.seq = seq
        self.payload = payload
    }
}

/// What the core reports to the application, in order.
public enum PeerNetEvent: Hashable, Sendable {
    /// A message from a member (or from this peer itself), in sender order, exactly once.
    case delivered(Delivery)
    /// A new membership view takes effect. Messages delivered before it belong to the old view.
    case viewChanged(MembershipView)
    /// A peer speaking another protocol version was heard and not admitted.
    case incompatible(peer: PeerID, version: UInt16)
    /// A member is too slow to keep up (its stability lags the send window); it may be excluded.
    case lagging(peer: PeerID)
    /// A member of the installed view restarted under its ID: a new incarnation of `peer` proved
    /// itself (join handshake), so the old one is dead. Its stream ends: nothing of the old
    /// incarnation is delivered after the view change that removes it, which starts at once;
    /// the new incarnation joins by a later view change as a new member (a `joined` entry).
    /// Whatever the layer above queued for, or expects from, the old incarnation is void.
    case incarnationEnded(peer: PeerID)
    /// This peer was blocked (cut off from most of its view) for `blockedTimeoutNanoseconds`
    /// (in a view of two, the lower ID cut off from the other: at once, the rule of two) and
    /// gave up `view`: it is joining again (the lobby), like a fresh peer; its own messages
    /// queued while blocked are discarded. It rejoins a group it hears (or founds one).
    case viewAbandoned(MembershipView)
    /// This process was stopped (suspended) for `awayNanoseconds`, longer than its view waits
    /// for a silent member: it rejoins (a `.viewAbandoned` follows when it had a view of others).
    case resumedAfterPause(awayNanoseconds: UInt64)
    /// Two live incarnations use the ID `peer`: another peer's new incarnation was refused while
    /// its old one still speaks, or (`peer` is this peer's own ID) this peer hears its own ID
    /// from another live incarnation. Reported once per incarnation.
    case idCollision(peer: PeerID)
    /// Receivers (spectators, not members) ask for a snapshot, and this peer is the one they
    /// asked: the application answers with ``ReliableMulticast/answerReceivers(snapshot:now:)``,
    /// its state as of this event. Ignoring it is safe (they ask again, or ask another member).
    case receiversWaiting
}

/// How the link from one peer looks from here (for a status line). See `ReliableMulticast.linkStats`.
public struct LinkStats: Hashable, Sendable {
    /// Smoothed round-trip time (gain 1/8); `nil` until the first echo came back.
    public var roundTripNanoseconds: UInt64?
    package var roundTripMinNanoseconds: UInt64?
    package var roundTripLatestNanoseconds: UInt64?
    /// Fraction (0...1) of the peer's datagrams that never arrived, over its recent packets.
    public var lossFraction: Double
    /// How many of the peer's packet numbers `lossFraction` is based on (256...512 once warmed up).
    package var packetsObserved: UInt64
    package var lastHeard: NetTime

    package init(
        roundTripNanoseconds: UInt64?, roundTripMinNanoseconds: UInt64?, roundTripLatestNanoseconds: UInt64?,
        lossFraction: Double, packetsObserved: UInt64, lastHeard: NetTime
    ) {
        self.roundTripNanoseconds = roundTripNanoseconds
        self.roundTripMinNanoseconds = roundTripMinNanoseconds
        self.roundTripLatestNanoseconds = roundTripLatestNanoseconds
        self.lossFraction = lossFraction
        self.packetsObserved = packetsObserved
        self.lastHeard = lastHeard
    }
}
