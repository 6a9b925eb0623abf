import DequeModule

/// The sending part of a peer: the seqs of its own messages (assigned, transmitted, queued
/// behind a view change), the outgoing queues (control datagrams, repairs, new data) and the
/// repairs asked of it. A value with its own invariants (``checkInvariants(windowSizeMax:)``) and
/// tests; when messages go out and what is repaired is decided by `ReliableMulticast`.
struct SendWindow: Sendable {
    /// Repairs pending (and queued) at most.
    static let repairPendingMax = 1024

    /// The seq the next own message gets (1 for the first of this incarnation).
    private(set) var nextSeq: UInt64 = 1
    /// The highest own seq handed to `outData` (or given up by `abandonPending`).
    private(set) var transmittedSeq: UInt64 = 0
    /// Own messages assigned a seq but not transmitted yet (during a view change, while blocked).
    private(set) var pendingSends: Deque<(seq: UInt64, payload: [UInt8])> = []
    /// New own messages, in seq order, not yet in a datagram.
    var outData: Deque<DataItem> = []
    /// Messages (anyone's) to repair, not yet in a datagram.
    var outRepairs: Deque<DataItem> = []
    /// Encoded control datagrams, sent before any data.
    var outControl: Deque<[UInt8]> = []
    /// Messages NACKed by someone that this peer holds: repaired when the `.repair` timer fires.
    private(set) var repairPending: Set<ReliableMulticast.SeqKey> = []
    /// Own seq for which the tail-loss probe (the `.report` timer) was last armed.
    var probeArmedSeq: UInt64 = 0

    /// The highest seq assigned to an own message.
    var lastSentSeq: UInt64 { nextSeq - 1 }

    /// The highest own seq already encoded into a datagram (`outData` holds exactly the own seqs
    /// after it, in order).
    var wireSeq: UInt64 { transmittedSeq - UInt64(outData.count) }

    /// Assigns the next seq to `payload` and queues it until it can be transmitted.
    mutating func assign(_ payload: [UInt8]) -> UInt64 {
        let seq = nextSeq
        nextSeq += 1
        pendingSends.append((seq, payload))
        return seq
    }

    /// The oldest own message waiting to be transmitted, taken off the queue.
    mutating func takePending() -> (seq: UInt64, payload: [UInt8])? { pendingSends.popFirst() }

    /// `item` (the own message after `transmittedSeq`) goes into the data queue.
    mutating func transmit(_ item: DataItem) {
        precondition(item.seq == transmittedSeq + 1, "own messages go out in seq order")
        transmittedSeq = item.seq
        outData.append(item)
    }

    /// Gives up every queued own message (they are never sent: after `leave`, or a view given
    /// up); returns how many there were.
    mutating func abandonPending() -> Int {
        let count = pendingSends.count
        transmittedSeq = nextSeq - 1
        pendingSends.removeAll()
        return count
    }

    /// Someone asked for `key`, which this peer holds (dropped when the set is full).
    mutating func requestRepair(_ key: ReliableMulticast.SeqKey) {
        if repairPending.count < Self.repairPendingMax { repairPending.insert(key) }
    }

    /// `key` went by (from its origin or another repairer): no repair of it is needed.
    mutating func repairSeen(_ key: ReliableMulticast.SeqKey) {
        if !repairPending.isEmpty { repairPending.remove(key) }
    }

    /// Takes every pending repair, in (origin, seq) order.
    mutating func takeRepairs() -> [ReliableMulticast.SeqKey] {
        let keys = repairPending.sorted()
        repairPending.removeAll()
        return keys
    }

    /// No repairs pending (the streams start afresh).
    mutating func clearRepairs() { repairPending = [] }

    func checkInvariants(windowSizeMax: Int) {
        precondition(transmittedSeq < nextSeq, "transmitted seqs were assigned")
        precondition(UInt64(pendingSends.count) == nextSeq - 1 - transmittedSeq, "every assigned, untransmitted seq is pending")
        precondition(pendingSends.first.map { $0.seq == transmittedSeq + 1 } ?? true, "pending sends follow the transmitted ones")
        precondition(UInt64(outData.count) <= transmittedSeq, "queued data was transmitted")
        precondition(outData.count <= 2 * windowSizeMax + Wire.itemsPerDatagramMax, "send queue bounded")
        precondition(repairPending.count <= Self.repairPendingMax, "repair set bounded")
        precondition(outRepairs.count <= Self.repairPendingMax, "repair queue bounded")
    }
}
