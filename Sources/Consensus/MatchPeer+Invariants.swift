import PeerNet

extension MatchPeer {
    /// The local invariants, checked with `precondition` (kept in release builds) when every
    /// public entry point returns, as PeerNet does. Nothing a remote peer sends can break them:
    /// what comes off the wire is validated and dropped before it reaches the state. Cheap:
    /// proportional to players and namespaces, never to queue lengths.
    func checkInvariants() {
        precondition(events.count <= config.eventsMax, "at most eventsMax events wait")
        switch phase {
        case .unsynced(let held):
            precondition(held.count <= Self.bufferedMax, "at most bufferedMax deliveries wait for a snapshot")
        case .lobby:
            break
        case .playing(let box):
            let m = box.match
            checkMatchInvariants(m)
            if let o = box.owner {
                precondition(config.role == .player, "only a player owns a grid")
                precondition(m.game == o.game, "the owned grid is of the current game")
                precondition(m.players.contains(config.id), "only a player of the match owns a grid")
                precondition(o.inputsMade >= o.grid.pairsSpawned, "every spawn is an input of the stream")
            }
        }
        if let view {
            // Membership by `contains` on the view's few members: no set is built per call, and
            // no copy of the view is taken (loops, not closures holding the member list).
            for peer in syncedMembers { precondition(view.members.contains(peer), "synced members are members") }
            for peer in unheard { precondition(view.members.contains(peer), "members awaited for a hello are members") }
        }
        precondition(rounds.count <= 3, "at most three egg-round namespaces are held")
        for (game, r) in rounds { precondition(r.game == game, "a namespace is filed under its game") }
        for (game, upTo) in votedUpTo {
            precondition(upTo <= EggRounds.roundsMax, "votes stay within roundsMax (game \(game))")
        }
    }

    private func checkMatchInvariants(_ m: borrowing MatchState) {
        precondition((1...MatchMessage.playersMax).contains(m.players.count), "a match has 1 to playersMax players")
        for player in m.wins.keys { precondition(m.players.contains(player), "only players win games") }
        for player in m.leftDuringGame { precondition(m.players.contains(player), "only players leave a game") }
        for player in m.mirrors.keys { precondition(m.players.contains(player), "mirrors are of players") }
        precondition(!m.mirrored || m.mirrors.count == m.players.count, "a mirrored game mirrors every player")
        // By index: `values[index]` is read in place, no copy of a mirror.
        for index in m.mirrors.indices {
            precondition(m.mirrors.values[index].queue.count <= PlayerMirror.queueMax, "a mirror's queue stays within queueMax")
            precondition(m.mirrors.values[index].garbageLanded <= m.mirrors.values[index].garbageReceived,
                         "a mirror never lands garbage it was not sent")
        }
    }
}
