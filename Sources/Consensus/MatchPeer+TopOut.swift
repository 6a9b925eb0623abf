import PeerNet

/// # Who wins when players top out
///
/// Each player's game clock counts the ticks (60 a second) since the game began on its own peer.
/// The owner puts its clock in its stream (``MatchMessage/clock(game:tick:)``): right after the
/// spawn that topped it out (the tick it topped out on), and, while it still plays, once a rival's
/// top-out tick is known and its own clock has passed it (it was alive on that tick). The result
/// is then a function of the players' streams alone, never of the order in which a peer happened
/// to receive them, nor of peer IDs:
/// - the player who stays in longest by its own clock wins;
/// - players topping out on the same tick of their clocks, with nobody left after them, draw the
///   game (it does not count, and is played again), as in a ``EggBot/LocalMatch``.
/// Players who left the view (or are out of this game) do not take part.
extension MatchState {
    /// The winner (`.some(nil)`: a draw) once the streams decide the game; `nil` while undecided.
    /// Only reads (`mutating` so that its mirrors are read in place, see `readMirror`).
    mutating func gameResult(view: MembershipView) -> PeerID?? {
        // One pass without allocating: this runs after every delivered message.
        var playing = 0, live = 0, atLatest = 0
        var first: PeerID?, survivor: PeerID?, lastToppedOut: PeerID?
        var latest: UInt32?
        var tickUnknown = false
        for player in players where view.contains(player) && !leftDuringGame.contains(player) {
            guard let (toppedOut, toppedOutTick) = readMirror(player, { ($0.isToppedOut, $0.toppedOutTick) }) else { continue }
            playing += 1
            if first == nil { first = player }
            guard toppedOut else {
                live += 1
                survivor = player
                continue
            }
            // Its top-out tick follows the topping-out spawn in its stream.
            guard let tick = toppedOutTick else {
                tickUnknown = true
                continue
            }
            if latest.map({ tick > $0 }) ?? true {
                latest = tick
                atLatest = 1
                lastToppedOut = player
            } else if tick == latest {
                atLatest += 1
            }
        }
        guard playing > 1 else { return .some(first) }
        guard !tickUnknown, live <= 1, let latest else { return nil }
        if let survivor {
            // The survivor wins once its stream shows it alive after the last top-out.
            guard let clock = readMirror(survivor, { $0.clock }) ?? nil, clock > latest else { return nil }
            return .some(survivor)
        }
        return .some(atLatest == 1 ? lastToppedOut : nil)
    }

}

extension MatchPeer {
    /// A clock item of a mirror's stream. Clocks never go back: a lower one counts as ignored
    /// and the mirror keeps the higher one (a top-out tick is never before an "alive" tick).
    mutating func receiveClock(_ tick: UInt32, mirror: inout PlayerMirror) {
        var tick = tick
        if let known = mirror.clock, tick < known {
            stats.ignoredMessages += 1
            tick = known
        }
        mirror.clock = tick
        if mirror.isToppedOut && mirror.toppedOutTick == nil { mirror.toppedOutTick = tick }
    }

    /// After the local player's topping-out spawn went out: the tick it topped out on.
    mutating func publishTopOutClock() {
        guard let o = owner, o.topOutClockDue else { return }
        send(.clock(game: o.game, tick: o.ticks))
        uniquePlaying?.owner?.topOutClockDue = false
        uniquePlaying?.owner?.clockSent = o.ticks
    }

    /// While the local player still plays: once a rival's top-out tick is known and this clock
    /// is past it, say so (once per later top-out), so the game can be decided.
    mutating func publishAliveClock() {
        guard let o = owner, !o.isOut, let m = match, m.game == o.game else { return }
        var latest: UInt32?
        for (player, mirror) in m.mirrors where player != config.id {
            if let tick = mirror.toppedOutTick { latest = max(latest ?? 0, tick) }
        }
        guard let latest, o.ticks > latest, o.clockSent.map({ $0 <= latest }) ?? true else { return }
        send(.clock(game: o.game, tick: o.ticks))
        uniquePlaying?.owner?.clockSent = o.ticks
    }
}
