import PeerNet

/// # One peer's match on its PeerNet core
///
/// The driver between a `ReliableMulticast` core and a ``MatchPeer``, sans-I/O like both: it
/// hands the core's events to the match in delivery order, and moves the match's payloads into
/// the core's send window. The UDP host (`eggs-tui`'s `NetPeer`, under `PeerHost`'s lock) and
/// the simulator's applications run this same code, so every simulated match exercises the send
/// path a real peer uses.
///
/// ```
///  key, tick ──▶ perform ──▶ MatchPeer ──payloads──▶ flush ──▶ core.send ──▶ datagrams
///  datagrams ──▶ core ──events──▶ handle ──▶ MatchPeer ──events──▶ the caller's handler
/// ```
///
/// **Backpressure.** A payload the send window refuses stays first in the match's queue and
/// goes out at a later flush, in order: nothing is dropped (``sendWindowFull`` counts the
/// refusals). While ``MatchPeerConfig/sendBackpressureAt`` payloads wait, the match holds the
/// local player's grid still. Only a core that has left (the peer is closing) makes the node
/// discard what waits (``discardedAfterLeave``).
public struct MatchNode: Sendable {
    /// The replicated match. What a caller queues on it directly (outside ``perform``) goes out
    /// at the next flush.
    public var peer: MatchPeer
    /// Times the send window refused a payload (it stayed queued in the match).
    public private(set) var sendWindowFull = 0
    /// Payloads the core took.
    public private(set) var payloadsSent = 0
    /// Payloads discarded because the core had left (the peer was closing).
    public private(set) var discardedAfterLeave = 0
    /// Payloads a receiver's match made (a hello, a vote) that nobody is to see: a receiver
    /// (spectator) sends nothing.
    public private(set) var discardedReceiveOnly = 0
    /// Snapshots this peer sent for receivers.
    public private(set) var receiverSnapshots = 0

    public init(peer: MatchPeer) {
        self.peer = peer
    }

    /// Feeds one event of the core to the match, then flushes (``flush(core:now:sent:events:)``).
    public mutating func handle(_ event: PeerNetEvent, core: ReliableMulticast, now: NetTime,
                                sent: ([UInt8]) -> Void = { _ in }, events: (MatchEvent) -> Void) {
        if event == .receiversWaiting {
            // Receivers asked this peer where to start: its state now, as one message.
            if let snapshot = peer.snapshotForReceivers() {
                core.answerReceivers(snapshot: snapshot, now: now)
                receiverSnapshots += 1
            }
        }
        peer.handle(event, now: now)
        flush(core: core, now: now, sent: sent, events: events)
    }

    /// Runs one local command on the match (a key, a tick, a ready mark), then flushes: a
    /// command crosses the node once.
    @discardableResult
    public mutating func perform<T>(core: ReliableMulticast, now: NetTime, sent: ([UInt8]) -> Void = { _ in },
                                    events: (MatchEvent) -> Void, _ command: (inout MatchPeer) -> T) -> T {
        let result = command(&peer)
        flush(core: core, now: now, sent: sent, events: events)
        return result
    }

    /// Moves the match's payloads into the send window while it takes them (`sent` sees each
    /// one the core took), then hands every waiting match event to `events`, in order.
    public mutating func flush(core: ReliableMulticast, now: NetTime, sent: ([UInt8]) -> Void = { _ in },
                               events: (MatchEvent) -> Void) {
        if core.isReceiveOnly {
            while peer.pollSend() != nil { discardedReceiveOnly += 1 }
        }
        while let payload = peer.peekSend() {
            do {
                _ = try core.send(payload, now: now)
            } catch {
                if error == .left {
                    // Closing: nothing more goes out.
                    while peer.pollSend() != nil { discardedAfterLeave += 1 }
                } else {
                    // The window is full (or no view yet): the payload waits for the next flush.
                    sendWindowFull += 1
                }
                break
            }
            _ = peer.pollSend()
            payloadsSent += 1
            sent(payload)
        }
        while let event = peer.pollEvent() { events(event) }
    }
}
