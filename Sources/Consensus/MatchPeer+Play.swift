import DequeModule
import EggGame
import PeerNet

extension MatchPeer {
    /// Games a match may last at most (draws do not count towards a winner).
    static func gamesMax(_ settings: MatchSettings) -> Int { settings.gamesPerMatch * 2 + 1 }

    /// After every input: apply decisions, drain mirrors, vote ahead, let the owner spawn.
    /// - Parameter settled: the input ended with a ``processDecisions()`` that reached its fixed
    ///   point (a delivered message), so running it again here would change nothing.
    mutating func afterInput(now: NetTime, settled: Bool = false) {
        guard isSynced else { return }
        var settled = settled
        if !settled { settled = processDecisions() }
        // During a match the lobby timers only reset: nothing for a second pass to apply.
        let inMatch = isPlaying
        runLobbyTimers(now: now)
        if !(settled && inMatch) { processDecisions() }
        ownerSettle(now: now)
        flushOwner()
    }

    /// Applies every decision that is ready, until nothing changes. A pass changes something only
    /// by starting a match or finishing a game, so a few passes suffice; a backlog beyond
    /// `decisionPassesMax` passes is counted in `stats.decisionPassesCut` and the rest is applied
    /// after the next input (a limit on the work of one call, never a silent stop).
    /// - Returns: true when it stopped at its fixed point: called again with nothing changed in
    ///   between, it would change nothing (its last pass started no match, finished no game, and
    ///   drained every mirror as far as it goes; its votes and pictures went to the outbox only).
    @discardableResult
    mutating func processDecisions() -> Bool {
        guard isSynced else { return true }
        for _ in 0..<Self.decisionPassesMax {
            var changed = false
            if isInLobby, let result = startVotes[matchRound]?.result {
                startMatch(votes: result.votes, winner: result.winner)
                changed = true
            }
            if isPlaying {
                drainMirrors()
                sendPicturesIfWatched()
                voteGameOverIfSeen()
                if let winner = playing?.match.gameOver.decidedValue {
                    finishGame(winner: winner)
                    changed = true
                }
            }
            voteAhead()
            if !changed { return true }
        }
        stats.decisionPassesCut += 1
        return false
    }

    /// Passes of `processDecisions` in one call at most.
    static let decisionPassesMax = 64

    // MARK: - Start, games, match over

    private mutating func startMatch(votes: [(PeerID, StartVote)], winner: PeerID) {
        let settings = startSettings(votes: votes, winner: winner)
        let players = Array(votes.filter { $0.1.wantsToPlay }.map { $0.0 }.sorted().prefix(MatchMessage.playersMax))
        lobbyRoundDecided(matchRound)
        startVotes.removeValue(forKey: matchRound)
        myStart.removeValue(forKey: matchRound)
        matchRound &+= 1
        guard players.count >= 2 else {
            emit(.startFailed(playersCount: players.count))
            return
        }
        var state = MatchState(settings: settings, players: players, wins: [:], game: nextGame, mirrored: true)
        for player in players { if let name = lobby[player]?.name { state.names[player] = name } }
        let pending = startPlaying(state)
        precondition(pending.isEmpty, "a synced peer buffers nothing")
        nextGame &+= 1
        emit(.matchStarted(settings: settings, players: players))
        beginGame()
    }

    private mutating func beginGame() {
        guard var m = match, let members = view?.members else { return }
        m.mirrors = [:]
        m.pictures = [:]
        m.watchers = []
        m.receiversWatching = false
        m.picturesSent = [:]
        for player in m.players {
            var mirror = PlayerMirror()
            mirror.grid = m.settings.startingGrid(garbageSeed: MatchPeer.garbageSeed(game: m.game))
            mirror.queue = Deque(futureItems[player] ?? [])
            m.mirrors[player] = mirror
        }
        futureItems = [:]
        // Players outside the view when the game begins (behind a partition, crashed and not yet
        // excluded from the match) are out of it: coming back mid-game, they do not mirror it.
        m.leftDuringGame = Set(m.players.filter { !members.contains($0) }).union(m.forfeited)
        // Forfeits of this game delivered while the one before was still being decided here.
        var outNow: [PeerID] = []
        for player in futureForfeits.sorted() where m.players.contains(player) && !m.forfeited.contains(player) {
            m.forfeited.insert(player)
            if !m.leftDuringGame.contains(player) { outNow.append(player) }
            m.leftDuringGame.insert(player)
        }
        futureForfeits = []
        m.gameOver = OneShotVote()
        m.myGameOverVote = .notCast
        for (peer, winner) in futureGameOver.sorted(by: { $0.key < $1.key }) {
            _ = m.gameOver.receive(from: peer, value: winner, members: members)
        }
        futureGameOver = [:]
        // Only the namespaces votes are accepted for now (this game and the next two) stay.
        rounds = rounds.filter { acceptsVotes($0.key) }
        votedUpTo = votedUpTo.filter { acceptsVotes($0.key) }
        if rounds[m.game] == nil { rounds[m.game] = EggRounds(game: m.game, members: members) }
        let frontier = rounds[m.game]?.frontier ?? 0
        // Rounds decided while this game was in the future are reported now.
        noteDecided(game: m.game, 0..<Int(frontier))
        var mine: OwnerState?
        for player in outNow { emit(.playerOut(player: player, name: m.names[player] ?? lobby[player]?.name ?? "", reason: .leftForLobby)) }
        if config.role == .player, m.players.contains(config.id), !m.forfeited.contains(config.id), leftMatchAt == nil {
            mine = OwnerState(game: m.game, grid: m.settings.startingGrid(garbageSeed: MatchPeer.garbageSeed(game: m.game)),
                              clock: GravityClock(speed: m.settings.speed, rules: m.settings.ruleSet))
        }
        let game = m.game
        playGame(m, owner: mine)
        emit(.gameStarted(game: game, mirrored: true))
    }

    /// The seed of a game's garbage stream (`tsu`'s nuisance columns): from the game number, which
    /// every peer agrees on.
    static func garbageSeed(game: UInt32) -> UInt64 {
        SplitMix64.output(seed: 0x6567_6773_2D67_6172, index: UInt64(game)) // "eggs-gar"
    }

    private mutating func finishGame(winner: PeerID?) {
        guard var m = match else { return }
        lastGame = FinishedGame(game: m.game, winner: winner, mirrored: m.mirrored, mirrors: m.mirrors)
        emit(.gameOver(game: m.game, winner: winner))
        if let winner, m.players.contains(winner) { m.wins[winner, default: 0] += 1 }
        rounds.removeValue(forKey: m.game)
        votedUpTo.removeValue(forKey: m.game)
        uniquePlaying?.owner = nil
        m.gamesPlayed += 1
        // Players still in the match: in the view, and not gone to the lobby.
        let present = m.players.filter { (view?.contains($0) ?? false) && !m.forfeited.contains($0) }
        let champion = m.wins.first { $0.value >= m.settings.winsNeeded }?.key
        if champion != nil || m.gamesPlayed >= MatchPeer.gamesMax(m.settings) || present.count < 2 {
            let best = m.wins.values.max() ?? 0
            let leaders = m.wins.filter { $0.value == best && best > 0 }.map(\.key)
            // The last player left in a match the others left (or lost) wins it by forfeit.
            let lastLeft = present.count == 1 && m.players.count > 1 ? present[0] : nil
            emit(.matchOver(winner: champion ?? lastLeft ?? (leaders.count == 1 ? leaders[0] : nil), wins: m.wins))
            endMatch()
            futureItems = [:]
            futureGameOver = [:]
            rounds = rounds.filter { acceptsVotes($0.key) }
            votedUpTo = votedUpTo.filter { acceptsVotes($0.key) }
            return
        }
        m.game = nextGame
        m.mirrored = true
        m.leftDuringGame = []
        m.spawnedBase = [:]
        nextGame &+= 1
        playGame(m, owner: nil)
        beginGame()
    }

    // MARK: - Mirrors

    private mutating func drainMirrors() {
        // Only the player list is read here: a copy of the whole match held across `drainOne`
        // would make every mirror update copy the mirrors' storage (copy on write).
        guard playing?.match.mirrored == true, let players = playing?.match.players else { return }
        var progress = true
        while progress {
            progress = false
            for player in players where drainOne(player) { progress = true }
        }
    }

    /// Applies the queued items of `player` that can be applied now; true if any was.
    private mutating func drainOne(_ player: PeerID) -> Bool {
        // Most calls find nothing queued: answered without copying the mirror.
        guard uniquePlaying?.match.readMirror(player, { !$0.queue.isEmpty }) == true,
              let game = playing?.match.game, let settings = playing?.match.settings,
              // Taken out of the table while it changes, so its grid and queue are uniquely held
              // and change in place (no copy on write); put back on every way out.
              var mirror = uniquePlaying?.match.mirrors.removeValue(forKey: player)
        else { return false }
        var applied = false
        defer { uniquePlaying?.match.mirrors[player] = mirror }
        while let item = mirror.queue.first {
            switch item {
            case .input(.spawn):
                guard let value = rounds[game]?.value(mirror.grid.pairsSpawned) else { return applied }
                let pair = EggPair(value: value, colors: settings.colors)
                switch mirror.grid.apply(.spawn(pair)) {
                case .spawned(let sent), .toppedOut(let sent):
                    // Offsetting already cancelled part of it against garbage queued here.
                    let rest = mirror.garbage.spawnSends(sent)
                    credit(garbage: rest, from: player)
                    mirror.garbageSent += rest
                default: stats.ignoredMessages += 1
                }
            case .input(.move(let move)):
                if !mirror.grid.apply(.move(move)).isAccepted { stats.ignoredMessages += 1 }
            case .input(.ticks(let count)):
                switch mirror.grid.apply(.ticks(count)) {
                case .rejected: stats.ignoredMessages += 1
                case .ticked(_, let chain?): mirror.largestChain = max(mirror.largestChain, chain.chain)
                default: break
                }
            case .input(.landGarbage(let count)):
                guard mirror.garbage.canLand(count) else {
                    stats.garbageOverdrawStalls += 1
                    return applied
                }
                mirror.garbage.recordLanding(count)
                if !mirror.grid.apply(.landGarbage(count)).isAccepted { stats.ignoredMessages += 1 }
            case .input(.offsetGarbage(let count)):
                if receiveOffset(count, mirror: &mirror, ruleSet: settings.ruleSet) == .stalled { return applied }
            case .checkpoint(let pairs, let hash):
                verify(mirror.grid, player: player, game: game, pairs: pairs, hash: hash)
            case .clock(let tick):
                receiveClock(tick, mirror: &mirror)
            }
            if case .input = item { mirror.inputsApplied += 1 }
            mirror.queue.removeFirst()
            applied = true
        }
        return applied
    }

    /// What a mirror did with an offset item.
    enum OffsetOutcome: Equatable { case applied, ignored, stalled }

    /// Checks an `offset:N` item of a player's stream against its mirror and applies it: only in
    /// a rule set that offsets, only with no pair live, with `count` in
    /// 1...``MatchMessage/garbageOffsetMax`` and never more than the chain garbage still pending;
    /// anything else is ignored (counted in `ignoredMessages`, the grid untouched). A valid offset
    /// larger than the garbage credited to the player and not yet landed waits for the credit
    /// (counted in `garbageOverdrawStalls`), as a landing does.
    mutating func receiveOffset(_ count: Int, mirror: inout PlayerMirror, ruleSet: RuleSet) -> OffsetOutcome {
        guard ruleSet.offsetting, mirror.grid.state == .awaitingSpawn, (1...MatchMessage.garbageOffsetMax).contains(count),
              count <= mirror.grid.garbagePending - mirror.garbage.offset else {
            stats.ignoredMessages += 1
            return .ignored
        }
        guard mirror.garbage.canLand(count) else {
            stats.garbageOverdrawStalls += 1
            return .stalled
        }
        mirror.garbage.recordOffset(count)
        return .applied
    }

    /// Credits `garbage` sent by `sender` to every other player of the game.
    private mutating func credit(garbage: Int, from sender: PeerID) {
        guard garbage > 0, let players = playing?.match.players else { return }
        for player in players where player != sender {
            uniquePlaying?.match.mirrors[player]?.garbage.credit(garbage)
        }
        // The local player's own account, in step with its mirror's.
        if sender != config.id { uniquePlaying?.owner?.garbage.credit(garbage) }
    }

    private mutating func verify(_ grid: PlayerGrid, player: PeerID, game: UInt32, pairs: UInt32, hash: UInt64) {
        let mirrorHash = grid.stableHash
        if UInt32(grid.pairsSpawned) == pairs && mirrorHash == hash {
            stats.checkpointsVerified += 1
            lastCheckpoints[player] = (pairs, hash)
            emit(.checkpointVerified(player: player, game: game, pairs: pairs))
        } else {
            stats.desyncs += 1
            emit(.desync(Desync(player: player, game: game, pairs: pairs, ownerHash: hash, mirrorHash: mirrorHash)))
        }
    }

    /// Raises a desync for every present player whose mirror is stalled on a `landGarbage` beyond
    /// the garbage credited to it, right after a view change. Why that is conclusive: the owner
    /// landed only garbage credited by spawns it had applied, i.e. delivered; view synchrony
    /// gives every continuing member the same messages of the old view, and the rounds those
    /// spawns needed were decided from the same votes; so by the installation of the next view
    /// every such spawn was applied here too. (Departed players are skipped: a message only they
    /// had delivered may be lost with its crashed sender.) Between view changes a stall may be
    /// a message still in flight, so it only waits.
    mutating func flagGarbageOverdraws() {
        guard let m = match, m.mirrored, let view else { return }
        for player in m.players where view.contains(player) && !m.leftDuringGame.contains(player) {
            guard let mirror = m.mirrors[player], !mirror.overdrawReported,
                  let count = Self.garbageDrawn(by: mirror.queue.first),
                  !mirror.garbage.canLand(count)
            else { continue }
            uniquePlaying?.match.mirrors[player]?.overdrawReported = true
            stats.desyncs += 1
            stats.garbageOverdraws += 1
            var desync = Desync(player: player, game: m.game, pairs: UInt32(mirror.grid.pairsSpawned), ownerHash: 0,
                                mirrorHash: mirror.grid.stableHash)
            desync.garbageOverdraw = mirror.garbageLanded + count - mirror.garbageReceived
            emit(.desync(desync))
        }
    }

    /// The garbage a stream item draws from what was credited to its player (a landing or an
    /// offset), or nil.
    static func garbageDrawn(by item: StreamItem?) -> Int? {
        switch item {
        case .input(.landGarbage(let count))?, .input(.offsetGarbage(let count))?: count
        default: nil
        }
    }

    /// Votes the winner once the players' streams decide the game (see `gameResult`).
    private mutating func voteGameOverIfSeen() {
        guard playing?.match.mirrored == true, playing?.match.myGameOverVote == .notCast, let view,
              let game = playing?.match.game, let winner = uniquePlaying?.match.gameResult(view: view) else { return }
        uniquePlaying?.match.myGameOverVote = .cast(winner: winner)
        send(.gameOverVote(game: game, winner: winner))
    }

    // MARK: - Voting ahead

    /// Votes the current game up to the highest spawned pair + `lookaheadRounds`, and the opening
    /// `lookaheadRounds` of the next game (`nextGame`: the next game of this match, or the first
    /// game of the next match in the lobby), so that no game's first pairs wait for a round trip.
    mutating func voteAhead() {
        guard isSynced, view?.contains(config.id) ?? false else { return }
        let lookahead = min(Int(EggRounds.roundsMax), config.lookaheadRounds)
        if let game = playing?.match.game, let frontier = rounds[game]?.frontier {
            var spawned = playing?.owner?.grid.pairsSpawned ?? 0
            for player in playing?.match.players ?? [] {
                // In place: `pairsSpawned(_:)` would copy the mirror.
                let pairs = uniquePlaying?.match.readMirror(player) { $0.grid.pairsSpawned } ?? playing?.match.spawnedBase[player] ?? 0
                spawned = max(spawned, pairs)
            }
            let target = min(Int(EggRounds.roundsMax), spawned + lookahead)
            voteRounds(game: game, upTo: UInt32(target), from: votedUpTo[game] ?? frontier)
        }
        voteRounds(game: nextGame, upTo: UInt32(lookahead), from: votedUpTo[nextGame] ?? rounds[nextGame]?.frontier ?? 0)
    }

    private mutating func voteRounds(game: UInt32, upTo target: UInt32, from start: UInt32) {
        sendVotes(game: game, from: start, upTo: target)
        votedUpTo[game] = max(start, target)
    }

    /// Sends this peer's votes of `game` for rounds `from..<upTo`, a message per
    /// ``MatchMessage/votesPerMessageMax`` rounds (again, for a snapshot's receivers).
    mutating func sendVotes(game: UInt32, from start: UInt32, upTo target: UInt32) {
        var from = start
        while from < target {
            let count = min(Int(target - from), MatchMessage.votesPerMessageMax)
            send(.votes(game: game, firstRound: from, values: (0..<count).map { votes.eggVote(game: game, round: from + UInt32($0)) }))
            from += UInt32(count)
        }
    }

    // MARK: - The local player's own grid

    /// The longest wait for a next egg so far, the wait in progress at `now` included (a match
    /// stalled for good never ends its wait, so `stats.maxEggWaitNanoseconds` alone would not
    /// show it). Never less than `stats.maxEggWaitNanoseconds`.
    public func longestEggWaitNanoseconds(now: NetTime) -> UInt64 {
        max(stats.maxEggWaitNanoseconds, playing?.owner?.waitingSince.map { now.nanoseconds(since: $0) } ?? 0)
    }

    /// The pair after the live one, if decided (for a bot's or a preview's look-ahead).
    public var ownerNextPair: EggPair? {
        guard let o = owner, let m = match, let value = rounds[o.game]?.value(o.grid.pairsSpawned) else { return nil }
        return EggPair(value: value, colors: m.settings.colors)
    }

    /// The decided pairs after the live one, as many as the rule set shows (`sfe` 1, `tsu` 2),
    /// up to the first not decided yet.
    public var ownerNextPairs: [EggPair] {
        guard let o = owner, let m = match, let r = rounds[o.game] else { return [] }
        var pairs: [EggPair] = []
        for round in o.grid.pairsSpawned..<o.grid.pairsSpawned + m.settings.ruleSet.nextPairsShown {
            guard let value = r.value(round) else { break }
            pairs.append(EggPair(value: value, colors: m.settings.colors))
        }
        return pairs
    }

    /// Advances the local player's grid one logic tick (60 Hz): gravity, then landing, checkpoint
    /// and the next spawn when the pair has settled. Sends the tick's inputs as one message.
    public mutating func tick(now: NetTime, softDrop: Bool = false) {
        defer { checkInvariants() }
        if !isPlaying { runLobbyTimers(now: now) }
        guard isSynced, playing?.owner?.isOut == false else { return }
        guard !isSendBackpressured else {
            stats.backpressureHolds += 1
            return
        }
        uniquePlaying?.owner?.ticks &+= 1
        if playing?.owner?.grid.state == .live, uniquePlaying?.owner?.clock.tick(softDrop: softDrop) == true {
            applyOwner(.move(.down))
        }
        if let state = playing?.owner?.grid.state, state == .live || state == .resolving {
            applyOwner(.ticks(1))
        }
        ownerSettle(now: now)
        voteAhead()
        if playing?.owner?.isFlushDue == true { flushOwner() }
        publishAliveClock()
    }

    /// Applies one move of the local player now (ignored when no pair is live).
    @discardableResult
    public mutating func applyLocal(_ move: Move, now: NetTime) -> InputOutcome? {
        defer { checkInvariants() }
        guard isSynced, playing?.owner?.grid.state == .live else { return nil }
        guard !isSendBackpressured else {
            stats.backpressureHolds += 1
            return nil
        }
        let outcome = applyOwner(.move(move))
        ownerSettle(now: now)
        flushOwner()
        return outcome
    }

    /// Idle ticks of the local grid are sent at the latest after this many (a mirror lags by at
    /// most this much while nothing else happens).
    public static let ticksFlushedAtMost = 12

    @discardableResult
    private mutating func applyOwner(_ input: StreamInput) -> InputOutcome {
        let gridInput: PlayerInput
        switch input {
        case .move(let move): gridInput = .move(move)
        case .landGarbage(let count): gridInput = .landGarbage(count)
        case .ticks(let count): gridInput = .ticks(count)
        case .spawn, .offsetGarbage: preconditionFailure("spawns and offsets go through ownerSettle")
        }
        let wasLive = playing?.owner?.grid.state == .live
        if wasLive {
            // Garbage is accepted while the pair is live; it lands after the pair and its chain.
            uniquePlaying?.owner?.garbage.acceptQueued()
        }
        guard let outcome = uniquePlaying?.owner?.grid.apply(gridInput) else {
            preconditionFailure("only a peer that owns a grid applies its inputs")
        }
        guard outcome.isAccepted else { return outcome }
        uniquePlaying?.owner?.queueUnsent(input)
        if wasLive && playing?.owner?.grid.state != .live { uniquePlaying?.owner?.checkpointDue = true }
        return outcome
    }

    /// With no live pair: when the next pair is decided, land the garbage received so far,
    /// publish the checkpoint of the settled grid, then spawn.
    mutating func ownerSettle(now: NetTime) {
        guard var o = owner, !o.isOut, o.grid.state == .awaitingSpawn, let m = match, m.game == o.game else { return }
        guard !isSendBackpressured else {
            stats.backpressureHolds += 1
            return
        }
        if m.settings.ruleSet.offsetting {
            // Offsetting: the pending chain garbage first cancels garbage queued against this
            // player (accepted first); the rest is sent at the spawn.
            let cancelled = o.garbage.offset(pending: o.grid.garbagePending)
            if cancelled > 0 { o.unsentInputs.append(.offsetGarbage(cancelled)) }
        }
        if o.garbage.accepted > 0 {
            // Accepted garbage lands all at once (what does not fit is discarded) and falls first;
            // beyond the rule set's most at once, the rest is accepted again during the next pair.
            let landing = o.garbage.landAccepted(dropMax: m.settings.ruleSet.garbageDropMax)
            let count = min(landing, MatchMessage.garbageLandMax)
            _ = o.grid.apply(.landGarbage(count))
            o.unsentInputs.append(.landGarbage(count))
            uniquePlaying?.owner = o
            guard o.grid.state == .awaitingSpawn else { return }
        }
        guard let value = rounds[o.game]?.value(o.grid.pairsSpawned) else {
            if o.waitingSince == nil { o.waitingSince = now }
            uniquePlaying?.owner = o
            return
        }
        if let since = o.waitingSince {
            stats.maxEggWaitNanoseconds = max(stats.maxEggWaitNanoseconds, now.nanoseconds(since: since))
            o.waitingSince = nil
        }
        if o.checkpointDue {
            uniquePlaying?.owner = o
            flushOwner()
            guard let flushed = owner else { preconditionFailure("flushing keeps the owned grid") }
            o = flushed
            send(.checkpoint(game: o.game, pairs: UInt32(o.grid.pairsSpawned), hash: o.grid.stableHash))
            o.checkpointDue = false
        }
        let outcome = o.grid.apply(.spawn(EggPair(value: value, colors: m.settings.colors)))
        o.unsentInputs.append(.spawn)
        switch outcome {
        case .spawned(let sent), .toppedOut(let sent): _ = o.garbage.spawnSends(sent)
        default: break
        }
        if case .toppedOut = outcome {
            o.isOut = true
            o.topOutClockDue = true
        }
        o.clock.reset()
        uniquePlaying?.owner = o
    }

    /// Sends the local inputs gathered so far as `inputs` messages.
    mutating func flushOwner() {
        guard let o = owner, !o.unsentInputs.isEmpty else { return }
        defer { publishTopOutClock() }
        var start = 0
        while start < o.unsentInputs.count {
            let end = min(o.unsentInputs.count, start + MatchMessage.inputsPerMessageMax)
            send(.inputs(game: o.game, items: Array(o.unsentInputs[start..<end])))
            start = end
        }
        uniquePlaying?.owner?.inputsMade += o.unsentInputs.count
        uniquePlaying?.owner?.unsentInputs = []
    }
}

extension MatchPeer {
    /// The decided egg value of `round` of `game`, if known (current and next game only).
    public func eggValue(game: UInt32, round: Int) -> UInt64? { rounds[game]?.value(round) }

    /// The first undecided egg round of `game`.
    public func frontier(game: UInt32) -> UInt32? { rounds[game]?.frontier }
}
