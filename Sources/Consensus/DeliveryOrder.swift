import PeerNet

/// What a delivery order is, checked line by line on a log (docs/formats.md): the digest proves a
/// log is unedited only where a passphrase keys it; without one anybody can re-seal any lines, so
/// the reader also checks that the lines are a delivery order one peer could have recorded.
///
/// - Every view holds the log's own peer (a log is one peer's record of one room); in the log of
///   a receiver (its header says so: a spectator follows the players' views without being in
///   them), none does.
/// - A receiver's view starts its record afresh: the first message after it is the snapshot it
///   starts from, seq 0 of a member; then each sender's stream from anywhere, in order.
/// - View ids only move forward, except when the log's peer joins afresh (it is among the view's
///   `joined`: it had given up its view and starts over, and the group's ids may start over too).
/// - A message comes from a member of the view it is delivered in, after a first view.
/// - Per sender, from its first message after it joined the view (any seq: a peer that joins
///   late starts in the middle of the others' streams), each seq is the one after the last: no
///   message twice, none missing, none out of order. A sender that departs and joins again (a new
///   incarnation counts from 1, a returning one goes on) starts over.
///
/// Sans-I/O and small: a sender table of at most a view's members.
struct DeliveryOrder: Sendable {
    let recorder: PeerID
    private var viewID: UInt64?
    private var members: Set<PeerID> = []
    /// The seq each sender's next message must have; absent until its first one in this stretch.
    private var nextSeq: [PeerID: UInt64] = [:]
    /// Deliveries checked so far.
    private(set) var checkedDeliveries = 0

    /// - Parameter receiver: the log is a receiver's (a spectator's).
    init(recorder: PeerID, receiver: Bool = false) {
        self.recorder = recorder
        self.isReceiver = receiver
    }

    /// A breach in `view`, or `nil`.
    /// Whether the log is a receiver's.
    private let isReceiver: Bool
    /// A receiver's view came; its snapshot (seq 0) has not.
    private var awaitingSnapshot = false

    mutating func view(_ view: MembershipView) -> String? {
        let receiving = !view.contains(recorder)
        if isReceiver != receiving {
            return receiving
                ? "a view without the log's peer \(recorder.hex): a line of another peer's log"
                : "a view with the log's peer \(recorder.hex) in a receiver's log: a line of another peer's log"
        }
        if receiving {
            // A receiver starts afresh at every view it follows (a sync): any view id.
            nextSeq.removeAll(keepingCapacity: true)
            awaitingSnapshot = true
            viewID = view.id
            members = Set(view.members)
            return nil
        }
        let fresh = view.joined.contains(recorder)
        if let previous = viewID, !fresh, view.id <= previous {
            return "view \(view.id) after view \(previous): views only move forward"
        }
        if fresh {
            nextSeq.removeAll(keepingCapacity: true)
        } else {
            for peer in view.joined { nextSeq[peer] = nil }
            for peer in members where !view.contains(peer) { nextSeq[peer] = nil }
        }
        viewID = view.id
        members = Set(view.members)
        return nil
    }

    /// A breach in a delivery of `seq` from `from`, or `nil`.
    mutating func delivery(from: PeerID, seq: UInt64) -> String? {
        guard let viewID else { return "a message before any view" }
        guard members.contains(from) else { return "a message from \(from.hex), not a member of view \(viewID)" }
        if awaitingSnapshot {
            guard seq == 0 else { return "\(from.hex) seq \(seq) before the snapshot a receiver starts from" }
            awaitingSnapshot = false
            checkedDeliveries += 1
            return nil
        }
        if let expected = nextSeq[from], seq != expected {
            return seq < expected
                ? "\(from.hex) seq \(seq) again or out of order (seq \(expected) comes next)"
                : "\(from.hex) seq \(seq) where seq \(expected) comes next: a message is missing or out of order"
        }
        guard seq > 0 else { return "\(from.hex) seq 0 (seqs start at 1)" }
        nextSeq[from] = seq &+ 1
        checkedDeliveries += 1
        return nil
    }
}
