import PeerNet

/// What a delivery order is, checked line by line on a log (docs/formats.md): the digest proves a
/// log is unedited only where a passphrase keys it; without one anybody can re-seal any lines, so
/// the reader also checks that the lines are a delivery order one peer could have recorded.
///
/// - Every view holds the log's own peer (a log is one peer's record of one room).
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

    init(recorder: PeerID) { self.recorder = recorder }

    /// A breach in `view`, or `nil`.
    mutating func view(_ view: MembershipView) -> String? {
        guard view.contains(recorder) else {
            return "a view without the log's peer \(recorder.hex): a line of another peer's log"
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
