/// The receiving part of a peer: one stream per member of the installed view (its own
/// included), each a window of that sender's messages from the stable floor on, what was
/// delivered of it and the gaps found in it. A value with its own invariants
/// (``checkInvariants(windowSizeMax:)``) and tests; deliveries, NACKs and stability are decided
/// by `ReliableMulticast` (`deliverReady`, `+LossRecovery`, `+Stability`).
struct ReceiveWindows {
    /// A sender's stream as seen by this peer. A class: one dictionary lookup yields it for
    /// reading and writing alike, and no copy of it (and of its buffers) is ever made.
    final class Stream {
        var member: Member
        /// Highest seq delivered (all before it delivered too).
        var delivered: UInt64
        /// Everything at or below is stable (delivered by every member) and freed.
        var stableFloor: UInt64
        /// Highest seq known to exist (from data, heartbeats, cuts).
        var highestKnown: UInt64
        /// seq → message, for stableFloor < seq.
        var messages: [UInt64: DataItem] = [:]
        /// Every seq at or below was examined for gaps; the missing ones are in `gaps`.
        var scannedUpTo: UInt64
        /// Missing seq → when it is next due in a NACK (first after a random delay, then
        /// every retransmit timeout). At most `2 × windowSizeMax` entries. The timer
        /// `.nack(member)` is armed at the earliest (maybe earlier: a spurious fire recomputes it).
        var gaps: [UInt64: NetTime] = [:]
        /// `delivered` as of this peer's last stability report.
        var reportedDelivered: UInt64

        init(member: Member, start: UInt64) {
            self.member = member
            delivered = start
            stableFloor = start
            highestKnown = start
            scannedUpTo = start
            reportedDelivered = start
        }

        /// Highest seq held with no gap after `delivered`.
        var contiguous: UInt64 {
            var s = delivered
            while messages[s + 1] != nil { s += 1 }
            return s
        }

        /// Keeps the buffer bounded (below `cap` messages) even when stability reports lag:
        /// frees the oldest delivered (not yet known stable) messages, which this peer then
        /// cannot repair. Returns how many it freed.
        func evict(toBelow cap: Int) -> Int {
            guard messages.count >= cap else { return 0 }
            var freed = 0
            var seq = stableFloor
            while messages.count >= cap, seq < delivered {
                seq += 1
                if messages.removeValue(forKey: seq) != nil { freed += 1 }
            }
            stableFloor = seq
            return freed
        }

        /// Frees every message up to `stable` (delivered by every member) and raises the floor.
        func free(upTo stable: UInt64) {
            guard stable > stableFloor else { return }
            for seq in (stableFloor + 1)...stable { messages[seq] = nil }
            stableFloor = stable
        }
    }

    /// What became of a received data item of another sender.
    enum Arrival: Equatable {
        /// No stream of that sender (incarnation) in the installed view.
        case unknownSender
        /// Delivered or held already.
        case duplicate
        /// Too far ahead of what was delivered (beyond twice the window).
        case beyondWindow
        /// Held for delivery; `evicted` old delivered messages were freed to make room.
        case stored(evicted: Int)
    }

    /// One stream per member of the installed view, by ID (empty without a view).
    private(set) var streams: [PeerID: Stream] = [:]

    subscript(id: PeerID) -> Stream? { streams[id] }

    var isEmpty: Bool { streams.isEmpty }
    var count: Int { streams.count }

    /// Takes `item` of another sender into its stream: held once, within twice the window,
    /// the buffer kept within four windows; a held seq is no gap any more and raises
    /// `highestKnown`.
    func accept(_ item: DataItem, windowSizeMax: Int) -> Arrival {
        guard let stream = streams[item.origin.id], stream.member == item.origin else { return .unknownSender }
        let delivered = stream.delivered
        if item.seq <= delivered || stream.messages[item.seq] != nil { return .duplicate }
        guard item.seq <= delivered + 2 * UInt64(windowSizeMax) else { return .beyondWindow }
        let evicted = stream.evict(toBelow: 4 * windowSizeMax)
        stream.messages[item.seq] = item
        if item.seq <= stream.scannedUpTo { stream.gaps[item.seq] = nil }
        if item.seq > stream.highestKnown { stream.highestKnown = item.seq }
        return .stored(evicted: evicted)
    }

    /// `sentSeq` of `sender` is known to exist (a heartbeat, report, leave or cut said so).
    func noteKnown(_ sentSeq: UInt64, of sender: Member) {
        guard let s = streams[sender.id], s.member == sender else { return }
        s.highestKnown = max(s.highestKnown, sentSeq)
    }

    /// The streams of a newly installed view.
    mutating func replace(with newStreams: [PeerID: Stream]) { streams = newStreams }

    /// No view: no streams.
    mutating func removeAll() { streams = [:] }

    func checkInvariants(windowSizeMax: Int) {
        for (id, stream) in streams {
            precondition(stream.member.id == id, "a stream is filed under its sender")
            precondition(stream.delivered >= stream.stableFloor, "stable messages were delivered here")
            precondition(stream.highestKnown >= stream.stableFloor, "stable messages are known to exist")
            precondition(stream.gaps.count <= 2 * windowSizeMax, "gap table bounded")
            precondition(stream.messages.count <= 4 * windowSizeMax + 4, "stream buffer bounded")
        }
    }
}
