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
///   game (it does not count, and is played again), as in a ``EggGame/LocalMatch``.
/// Players who left the view (or are out of this game) do not take part.
extension MatchPeer {
    /// The winner (`.some(nil)`: a draw) once the streams decide the game; `nil` while undecided.
    static func gameResult(_ m: MatchState, view: MembershipView) -> PeerID?? {
        let playing = m.players.filter { view.contains($0) && !m.leftDuringGame.contains($0) && m.mirrors[$0] != nil }
        guard playing.count > 1 else { return .some(playing.first) }
        var live: [PeerID] = []
        var toppedOut: [PeerID: UInt32] = [:]
        for player in playing {
            let mirror = m.mirrors[player]!
            if mirror.isToppedOut {
                // Its top-out tick follows the topping-out spawn in its stream.
                guard let tick = mirror.toppedOutTick else { return nil }
                toppedOut[player] = tick
            } else {
                live.append(player)
            }
        }
        guard live.count <= 1, let latest = toppedOut.values.max() else { return nil }
        if let survivor = live.first {
            // The survivor wins once its stream shows it alive after the last top-out.
            guard let clock = m.mirrors[survivor]!.clock, clock > latest else { return nil }
            return .some(survivor)
        }
        let last = toppedOut.filter { $0.value == latest }.map(\.key)
        return .some(last.count == 1 ? last[0] : nil)
    }

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
        owner!.topOutClockDue = false
        owner!.clockSent = o.ticks
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
        owner!.clockSent = o.ticks
    }
}
