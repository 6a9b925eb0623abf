/// # Garbage between players
///
/// One player's garbage account in a match: what the other players' chains sent it, what it
/// accepted while its pair was live, what landed on it, and what its own chain cancelled by
/// offsetting. A local match keeps one per seat, and a network match one per mirrored player
/// and one for the local player's own grid, so the rules of the exchange are written once:
///
/// 1. **Credit**: a spawn that ends a chain sends its garbage to every other player still in.
/// 2. **Accept**: while a player's pair is live, everything queued against it is accepted; what
///    arrives after the pair locked waits for the next pair.
/// 3. **Offset** (rule sets that offset, `tsu`): with no pair live, the chain garbage the player
///    will send at its next spawn first cancels garbage queued against it, the accepted first;
///    what it cancelled counts as landed, and is not sent.
/// 4. **Land**: with no pair live, the accepted garbage lands, at most the rule set's
///    ``RuleSet/garbageDropMax`` at once; the rest is accepted again during the next pair.
/// 5. **Send**: the spawn after the chain sends the chain's garbage less what was offset.
///
/// Counts only grow or reset with the game; `landed` never passes `received`.
public struct GarbageExchange: Hashable, Sendable {
    /// Garbage credited to the player by other players' spawns.
    public private(set) var received = 0
    /// Garbage landed on the player, or cancelled by its offsetting.
    public private(set) var landed = 0
    /// Of the garbage queued, what the player accepted during its live pair (lands after it).
    public private(set) var accepted = 0
    /// Of the player's pending chain garbage, what offsetting cancelled (not sent at the next spawn).
    public private(set) var offset = 0

    public init() {}

    /// Garbage sent to the player and not landed (nor cancelled) yet.
    public var queued: Int { received - landed }

    /// Garbage queued and not accepted yet (it arrived after the live pair locked).
    public var waiting: Int { queued - accepted }

    /// Another player's spawn sent `count` eggs to this player.
    public mutating func credit(_ count: Int) {
        precondition(count >= 0, "garbage sent is never negative")
        received += count
    }

    /// While the player's pair is live: everything queued is accepted.
    public mutating func acceptQueued() {
        accepted = queued
    }

    /// Offsetting, with no pair live: cancels queued garbage (the accepted first) with the
    /// chain garbage `pending` the next spawn would send. Returns the eggs cancelled.
    @discardableResult
    public mutating func offset(pending: Int) -> Int {
        let cancelled = min(queued, pending - offset)
        guard cancelled > 0 else { return 0 }
        landed += cancelled
        offset += cancelled
        accepted = max(0, accepted - cancelled)
        return cancelled
    }

    /// With no pair live: the accepted garbage that lands now, at most `dropMax`; the rest is
    /// accepted again during the next pair. Returns the eggs that land (0: nothing to land).
    public mutating func landAccepted(dropMax: Int) -> Int {
        let count = min(accepted, dropMax)
        landed += count
        accepted = 0
        return count
    }

    /// The spawn after a chain: of the chain's `sent` garbage, what goes to the others once the
    /// offset part is taken off. Clears the offset for the next chain.
    public mutating func spawnSends(_ sent: Int) -> Int {
        let rest = sent - min(sent, offset)
        offset = 0
        return rest
    }

    // MARK: - A mirror checks an owner's stream against the account

    /// Whether a landing of `count` eggs stays within what was credited (a mirror waits for the
    /// credit otherwise: the landing cannot outrun the sends its owner saw).
    public func canLand(_ count: Int) -> Bool { count >= 0 && landed + count <= received }

    /// A landing of `count` eggs that the owner's stream reports (checked with ``canLand(_:)``).
    public mutating func recordLanding(_ count: Int) {
        precondition(canLand(count), "a landing never passes what was credited")
        landed += count
    }

    /// An offset of `count` eggs that the owner's stream reports, within the queue.
    public mutating func recordOffset(_ count: Int) {
        precondition(canLand(count), "an offset never passes what was credited")
        landed += count
        offset += count
    }
}
