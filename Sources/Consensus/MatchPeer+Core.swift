import DequeModule
import EggGame
import EggPrimitives
import PeerNet

/// One peer's replica of the room: lobby, votes, match, mirrored grids, and (for a player) its
/// own grid. See the top of `MatchPeer.swift` for the design.
public struct MatchPeer: Sendable {
    public let config: MatchPeerConfig
    let votes: VoteSource

    /// Where this peer stands in the room, with that phase's data (`MatchPeer+Phase.swift`).
    var phase: Phase = .unsynced(buffered: [])

    // Membership and late-join sync.
    public private(set) var view: MembershipView?
    var syncedMembers: Set<PeerID> = []
    /// Members that (re)joined with no state and whose first `hello` since has not been
    /// delivered. Everything before it in their stream was sent by an earlier life of that
    /// stream (a survivor of a restart or a partition keeps playing its old game while cut off,
    /// and its queued sends go out in the view that admits it afresh): about a match and games
    /// this room does not continue, so it is dropped (`staleDropped`), never applied to a game
    /// of the same number here. A peer sends `hello` first whenever it gets the room's state.
    var unheard: Set<PeerID> = []
    static let bufferedMax = 1 << 16

    // Replicated room state.
    public internal(set) var lobby: [PeerID: Hello] = [:]
    public internal(set) var matchRound: UInt32 = 0
    public internal(set) var nextGame: UInt32 = 0
    var startVotes: [UInt32: OneShotVote<StartVote>] = [:]
    /// The room's settings and ready marks (`RoomLobby.swift`), and this peer's start timers.
    var room = RoomLobby()
    var lobbyTimers = LobbyTimers()
    /// Settings this player offers the room when it gets the room's state (`offerSettings`).
    var offeredSettings: MatchSettings?
    var rounds: [UInt32: EggRounds] = [:]
    /// Stream items for the game after the current one, delivered early.
    var futureItems: [PeerID: [StreamItem]] = [:]
    var futureGameOver: [PeerID: PeerID?] = [:]
    /// Players whose forfeit of the next game was delivered before it began (see `receiveForfeit`).
    var futureForfeits: Set<PeerID> = []
    /// Players of the match that said `leave` (their departure is a quit, not a lost connection).
    var announcedLeave: Set<PeerID> = []
    /// The game the local player left the match in (``leaveMatch(now:)``), until the match ends.
    var leftMatchAt: UInt32?
    /// The name given by ``rename(to:)`` (nil: `config.name`).
    var renamed: String?
    /// The last game that ended, as it ended (final grids and per-player figures, for a renderer).
    public internal(set) var lastGame: FinishedGame?

    // This peer's own side.
    var myStart: [UInt32: StartVote] = [:]
    var votedUpTo: [UInt32: UInt32] = [:]

    // Outputs.
    var outbox: Deque<[UInt8]> = []
    private(set) var events: Deque<MatchEvent> = []
    public internal(set) var stats = MatchStats()
    /// Every decided egg value of every game this peer saw decided, in order (for replay output).
    public internal(set) var decisionsLog: [(game: UInt32, round: Int, value: UInt64)] = []
    /// The last checkpoint verified per player (pairs, hash).
    public internal(set) var lastCheckpoints: [PeerID: (pairs: UInt32, hash: UInt64)] = [:]
    /// Whether to keep ``decisionsLog`` (replay does; a long-running peer need not).
    public var keepsDecisions = false

    public init(config: MatchPeerConfig) {
        self.config = config
        self.votes = VoteSource(seed: config.voteSeed)
        checkInvariants()
    }

    // MARK: - Polling

    /// The next payload to multicast (pass it to `ReliableMulticast.send`).
    public mutating func pollSend() -> [UInt8]? {
        defer { checkInvariants() }
        return outbox.popFirst()
    }

    /// The next payload `pollSend()` would return, left queued (a driver whose send window is
    /// full leaves it here: that is the backpressure, see ``MatchPeerConfig/sendBackpressureAt``).
    public func peekSend() -> [UInt8]? {
        outbox.first
    }

    /// Own payloads waiting for ``pollSend()``.
    public var pendingSendCount: Int { outbox.count }

    /// Whether the local player's grid holds still until the send queue drains (the peer is
    /// lagging: its sends are not taken as fast as it makes them).
    public var isSendBackpressured: Bool { pendingSendCount >= config.sendBackpressureAt }

    /// The next application event.
    public mutating func pollEvent() -> MatchEvent? {
        defer { checkInvariants() }
        return events.popFirst()
    }

    /// For a replay, which sends nothing: drops every payload waiting for ``pollSend()`` and
    /// hands every waiting event to `body`, in order. What calling both until `nil` does, with
    /// the invariants checked once instead of once a payload and once an event.
    public mutating func drainOutputs(events body: (MatchEvent) -> Void) {
        defer { checkInvariants() }
        outbox.removeAll(keepingCapacity: true)
        while let event = events.popFirst() { body(event) }
    }

    mutating func emit(_ event: MatchEvent) {
        // Consecutive lobby notices say nothing more than one.
        if event == .lobbyChanged, events.last == .lobbyChanged { return }
        precondition(events.count < config.eventsMax,
                     "\(config.eventsMax) match events not polled: the driver must drain pollEvent() after every call")
        events.append(event)
    }

    mutating func send(_ message: MatchMessage) {
        let bytes = message.encoded()
        precondition(bytes.count <= MatchMessage.bytesMax, "every message fits one datagram")
        outbox.append(bytes)
        stats.sent += 1
    }

    // MARK: - Inputs from PeerNet

    /// Feeds one PeerNet event, in delivery order. `now` times egg waits.
    public mutating func handle(_ event: PeerNetEvent, now: NetTime = .zero) {
        defer { checkInvariants() }
        // A delivery that ends in `processDecisions` at its fixed point spares `afterInput` the
        // same call again (one pass of it a message instead of three).
        var settled = false
        switch event {
        case .viewChanged(let newView): install(newView)
        case .delivered(let delivery):
            stats.delivered += 1
            if isSynced {
                settled = deliver(delivery)
            } else if case .snapshot(let snapshot)? = MatchMessage.decode(delivery.payload), snapshot.view == view?.id {
                adopt(snapshot)
            } else {
                buffer(delivery)
            }
        case .viewAbandoned:
            abandonView()
        case .incompatible, .lagging, .incarnationEnded, .resumedAfterPause, .idCollision, .receiversWaiting:
            break
        }
        afterInput(now: now, settled: settled)
    }

    /// PeerNet gave up the view (blocked too long, cut off from most of it): this peer's part of
    /// the match ends here and it is back in the lobby with no room state, like a fresh peer. The
    /// group it joins next (or founds) gives it the room's state; what it sent while blocked was
    /// discarded by PeerNet, and what is still queued here is about the state dropped now.
    private mutating func abandonView() {
        if let m = match {
            if let rival = lastRivalLost(m) {
                // The rule of two (PeerNet): of two members, the lower ID gives the view up when
                // the higher one goes silent, where the higher ID would install a view without
                // the lower one. Both ends of a lost connection say the same: the rival is out
                // and this player wins the game under way by forfeit, and with it the match.
                emit(.playerOut(player: rival, name: m.names[rival] ?? lobby[rival]?.name ?? "",
                                reason: announcedLeave.contains(rival) ? .quit : .connectionLost))
                var wins = m.wins
                wins[config.id, default: 0] += 1
                lastGame = FinishedGame(game: m.game, winner: config.id, mirrored: m.mirrored, mirrors: m.mirrors)
                emit(.gameOver(game: m.game, winner: config.id))
                emit(.matchOver(winner: config.id, wins: wins))
            } else {
                // Only this peer's side ends: the others decide the match without it.
                emit(.matchOver(winner: nil, wins: m.wins))
            }
        }
        becomeUnsynced()
        stats.staleUnsent += pendingSendCount
        outbox.removeAll()
        view = nil
        syncedMembers = []
        unheard = []
        emit(.lobbyChanged)
    }

    /// The one rival still in the game, when this peer gives up a view of two in which it plays
    /// the match's game under way against it: the other member went silent (see `abandonView`).
    private func lastRivalLost(_ m: MatchState) -> PeerID? {
        guard let view, view.members.count == 2, m.mirrored, m.players.contains(config.id),
              !m.forfeited.contains(config.id), !m.leftDuringGame.contains(config.id) else { return nil }
        let rivals = m.players.filter { $0 != config.id && !m.leftDuringGame.contains($0) && !m.forfeited.contains($0) }
        guard rivals.count == 1, view.members.contains(rivals[0]) else { return nil }
        return rivals[0]
    }

    /// The local player leaves the match under way for the lobby of the same room (`q` in a
    /// match): its grid stops here, and a ``MatchMessage/forfeit(game:)`` tells the room, which
    /// takes it out of the match where that message stands in its stream (it forfeits the game
    /// under way; a match of two is over then, and everyone is back in the lobby). It stays a
    /// member of the room, not ready. Returns whether it left (false: no match, a spectator, or
    /// already out).
    @discardableResult
    public mutating func leaveMatch(now: NetTime) -> Bool {
        defer { checkInvariants() }
        guard let m = match, config.role == .player, m.players.contains(config.id), !m.forfeited.contains(config.id),
              !hasLeftMatch else { return false }
        flushOwner()
        send(.forfeit(game: m.game))
        uniquePlaying?.owner = nil
        leftMatchAt = m.game
        afterInput(now: now)
        return true
    }

    /// Whether the local player left the match under way (``leaveMatch(now:)``), its forfeit
    /// delivered or not yet.
    public var hasLeftMatch: Bool {
        guard let m = match else { return false }
        return m.forfeited.contains(config.id) || leftMatchAt != nil
    }

    /// The name this peer goes by in the room: the configured one until ``rename(to:)``.
    public var name: String { renamed ?? config.name }

    /// Changes this peer's name in the room (in the lobby): a new `hello` with it, which every
    /// member applies when delivered, as it does any hello. Cut to ``Hello/nameBytesMax`` bytes;
    /// an empty name, or one with control characters, is refused (returns false).
    @discardableResult
    public mutating func rename(to newName: String) -> Bool {
        defer { checkInvariants() }
        let cut = Hello.truncated(newName)
        guard isInLobby, !cut.isEmpty, !cut.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return false }
        renamed = cut
        send(.hello(Hello(name: cut, role: config.role, rules: config.rules)))
        return true
    }

    /// Marks this peer ready: votes `settings` in the open start round.
    public mutating func setReady(settings: MatchSettings, wantsToPlay: Bool) {
        defer { checkInvariants() }
        precondition(settings.isValid, "settings must be valid")
        guard myStart[matchRound] == nil else { return }
        let vote = StartVote(settings: settings, wantsToPlay: wantsToPlay && config.role == .player)
        myStart[matchRound] = vote
        if isSynced { voteAhead() }
        if isSynced { send(.startProposal(match: matchRound, settings: vote.settings, wantsToPlay: vote.wantsToPlay)) }
    }

    /// Whether this peer voted in the open start round.
    public var isReady: Bool { myStart[matchRound] != nil }

    /// The members whose start vote for the coming match has been delivered (they are ready),
    /// with whether each wants to play.
    public var readyPeers: [PeerID: Bool] {
        (startVotes[matchRound]?.votes ?? [:]).mapValues(\.wantsToPlay)
    }

    /// Announces that this peer leaves the room.
    public mutating func leave() {
        defer { checkInvariants() }
        send(.leave)
    }

    // MARK: - View changes

    private mutating func install(_ newView: MembershipView) {
        let firstView = view == nil
        view = newView
        emit(.viewChanged(newView))
        let isJoiner = newView.joined.contains(config.id) || !isSynced
        if isJoiner {
            becomeUnsynced()
            // Who holds room state for this view: for a peer new to it (its first view, or a
            // group of its own merged into another), every member not new to the view; for a
            // member still waiting for a snapshot, the members it knew to be synced. A peer that
            // founded a room of its own before it heard of the others drops that state here and
            // takes the others' from their snapshot: two rooms never run side by side in one view.
            let joinsOthers = firstView || newView.joined.contains(config.id)
            let others = Set(joinsOthers ? newView.members : Array(syncedMembers.intersection(newView.members)))
                .subtracting(newView.joined).subtracting([config.id])
            syncedMembers = others
            unheard = Set(newView.members).subtracting(others)
            if others.isEmpty {
                // Nobody has state: everyone in this view starts from the empty lobby, with game
                // numbers no earlier room state used (see `firstGame(of:)`).
                nextGame = Self.firstGame(of: newView)
                _ = enterLobby()
                syncedMembers = Set(newView.members)
                emit(.synced(fromSnapshot: false))
                // A peer new in this view takes this one (not new here) for a synced member and
                // waits for a snapshot: send one, of the empty lobby (a snapshot sender that died
                // before its snapshot arrived left nobody with state).
                if !newView.joined.isEmpty, !newView.joined.contains(config.id) {
                    send(.snapshot(makeSnapshot(viewID: newView.id)))
                }
                send(.hello(Hello(name: name, role: config.role, rules: config.rules)))
                sendOffer()
                voteAhead()
                if let vote = myStart[matchRound] {
                    send(.startProposal(match: matchRound, settings: vote.settings, wantsToPlay: vote.wantsToPlay))
                }
                applyView(newView, reset: false)
            }
            return
        }
        syncedMembers = syncedMembers.intersection(newView.members).subtracting(newView.joined)
        let unsynced = Set(newView.members).subtracting(syncedMembers)
        unheard = unheard.intersection(newView.members).union(unsynced)
        applyView(newView, reset: !unsynced.isEmpty)
        guard !unsynced.isEmpty else { return }
        let snapshot = makeSnapshot(viewID: newView.id)
        if syncedMembers.max() == config.id { send(.snapshot(snapshot)) }
        noteWatchers(unsynced)
        resendVotesAfterReset()
    }

    /// Re-evaluates every open vote with the view's members; with `reset`, drops undecided votes.
    private mutating func applyView(_ newView: MembershipView, reset: Bool) {
        let members = newView.members
        for gone in newView.departed {
            guard let m = playing?.match, m.players.contains(gone) else { continue }
            if !m.leftDuringGame.contains(gone) && !m.forfeited.contains(gone) {
                emit(.playerOut(player: gone, name: m.names[gone] ?? lobby[gone]?.name ?? "",
                                reason: announcedLeave.contains(gone) ? .quit : .connectionLost))
            }
            uniquePlaying?.match.leftDuringGame.insert(gone)
        }
        announcedLeave = announcedLeave.filter { members.contains($0) }
        lobby = lobby.filter { members.contains($0.key) }
        room.keepMembers(members)
        for key in startVotes.keys.sorted() { startVotes[key]?.install(members: members, reset: false) }
        for game in rounds.keys.sorted() {
            let decided = rounds[game]?.install(members: members, resetPending: false) ?? 0..<0
            noteDecided(game: game, decided)
        }
        uniquePlaying?.match.gameOver.install(members: members, reset: false)
        futureItems = futureItems.filter { members.contains($0.key) }
        futureGameOver = futureGameOver.filter { members.contains($0.key) }
        processDecisions()
        flagGarbageOverdraws()
        guard reset else { return }
        for key in startVotes.keys.sorted() { startVotes[key]?.install(members: members, reset: true) }
        for game in rounds.keys.sorted() { _ = rounds[game]?.install(members: members, resetPending: true) }
        uniquePlaying?.match.gameOver.install(members: members, reset: true)
        futureGameOver = [:]
        for game in votedUpTo.keys { votedUpTo[game] = rounds[game]?.frontier ?? 0 }
        // Future games (`nextGame` on): nobody has used their values yet, and the joiners cannot
        // learn them from the snapshot. Every old member drops them at this same point of its
        // stream and everyone votes them again from round 0.
        rounds = rounds.filter { !isFutureGame($0.key) }
        votedUpTo = votedUpTo.filter { !isFutureGame($0.key) }
    }

    /// The first game number of a room state founded afresh in `view` (everyone in it new). A
    /// game number names a game everywhere (votes, inputs, checkpoints, logs), so a room founded
    /// again after restarts must not count from the same place: a game of the earlier state and
    /// one of the new state would share a number (a replayed or queued message of one could be
    /// taken for the other, and logs of the two could not be told apart). The view key mixes
    /// every member's incarnation, so it differs whenever any member restarted; all members of
    /// the view derive the same number. A view without a key (0, e.g. a test harness) counts
    /// from 0. Game numbers wrap around: every comparison of them is modular.
    static func firstGame(of view: MembershipView) -> UInt32 {
        guard view.key != 0 else { return 0 }
        return UInt32(truncatingIfNeeded: SplitMix64.mix(view.key &+ view.id &* SplitMix64.gamma))
    }

    private mutating func resendVotesAfterReset() {
        voteAhead()
        resendOpenVotes()
    }

    /// Sends again this peer's start vote and game-over vote while undecided, and its forfeit:
    /// for peers that start from a snapshot (which carries none of them).
    private mutating func resendOpenVotes() {
        if let vote = myStart[matchRound], !(startVotes[matchRound]?.isDecided ?? false) {
            send(.startProposal(match: matchRound, settings: vote.settings, wantsToPlay: vote.wantsToPlay))
        }
        if let m = match, case .cast(let mine) = m.myGameOverVote, !m.gameOver.isDecided {
            send(.gameOverVote(game: m.game, winner: mine))
        }
        // A snapshot does not say who left the match for the lobby: each of them says it again
        // for the joiners (the others have it already and count it as ignored).
        if let m = match, hasLeftMatch { send(.forfeit(game: m.game)) }
    }

    // MARK: - Snapshots

    /// This peer's state as a snapshot message, for receivers (spectators outside the view)
    /// that start from it (`PeerNetEvent.receiversWaiting`); `nil` while it has no state.
    public func snapshotForReceivers() -> [UInt8]? {
        guard isSynced, let view, view.contains(config.id) else { return nil }
        let bytes = MatchMessage.snapshot(makeSnapshot(viewID: view.id)).encoded()
        return bytes.count <= MatchMessage.bytesMax ? bytes : nil
    }

    /// A snapshot was delivered in this view: a receiver may start from where it was taken, and
    /// has none of the messages before that point. So every vote this peer cast that is not
    /// decided where the snapshot was taken goes out again (members take them as duplicates):
    /// the egg votes of the game under way from the snapshot's frontier, of later games from
    /// round 0 (a snapshot carries no round of them), the start vote, the game-over vote and a
    /// forfeit. Pictures of a mirrored game go out until it ends.
    private mutating func resendForReceivers(_ snapshot: Snapshot) {
        guard let view, view.contains(config.id), config.role == .player else { return }
        for game in votedUpTo.keys.sorted() where acceptsVotes(game) {
            guard let upTo = votedUpTo[game] else { continue }
            var from: UInt32 = 0
            if let m = playing?.match, m.game == game {
                let own = rounds[game]?.frontier ?? 0
                from = min(own, snapshot.match?.game == game ? snapshot.match?.frontier ?? own : own)
            }
            sendVotes(game: game, from: from, upTo: upTo)
        }
        resendOpenVotes()
        noteReceiversWatching()
    }

    private func makeSnapshot(viewID: UInt64) -> Snapshot {
        let entries = lobby.sorted { $0.key < $1.key }.prefix(Snapshot.lobbyEntriesMax).map { peer, hello in
            LobbyEntry(peer: peer, name: hello.name, role: hello.role)
        }
        var snapshot = Snapshot(view: viewID, matchRound: matchRound, nextGame: nextGame, lobby: Array(entries), match: nil,
                                room: room.snapshot(match: matchRound))
        if let m = match {
            snapshot.match = MatchSnapshot(
                settings: m.settings, players: m.players, wins: m.players.map { m.wins[$0] ?? 0 }, game: m.game,
                frontier: rounds[m.game]?.frontier ?? 0, pairsSpawned: m.players.map { UInt32(m.pairsSpawned($0)) })
        }
        return snapshot
    }

    private mutating func adopt(_ snapshot: Snapshot) {
        guard let view else { return }
        // Off the network: a snapshot listing a player twice or a frontier past the round limit
        // is dropped and counted, never built into a match (the decoders check this too).
        guard snapshot.isValid else {
            stats.invalidDropped += 1
            return
        }
        resetToEmpty()
        for entry in snapshot.lobby { lobby[entry.peer] = Hello(name: entry.name, role: entry.role) }
        matchRound = snapshot.matchRound
        nextGame = snapshot.nextGame
        if let r = snapshot.room { room = RoomLobby(r, match: matchRound) }
        let pending: [Delivery]
        if let m = snapshot.match {
            var state = MatchState(settings: m.settings, players: m.players,
                                   wins: Dictionary(uniqueKeysWithValues: zip(m.players, m.wins)),
                                   game: m.game, mirrored: false)
            for player in m.players { if let name = lobby[player]?.name { state.names[player] = name } }
            state.spawnedBase = Dictionary(uniqueKeysWithValues: zip(m.players, m.pairsSpawned.map { Int($0) }))
            pending = startPlaying(state)
            rounds[m.game] = EggRounds(game: m.game, members: view.members, frontier: m.frontier)
            votedUpTo[m.game] = m.frontier
        } else {
            pending = enterLobby()
        }
        syncedMembers = Set(view.members)
        emit(.synced(fromSnapshot: true))
        emit(.lobbyChanged)
        send(.hello(Hello(name: name, role: config.role, rules: config.rules)))
        sendOffer()
        voteAhead()
        if let vote = myStart[matchRound] {
            send(.startProposal(match: matchRound, settings: vote.settings, wantsToPlay: vote.wantsToPlay))
        } else if isInLobby, !(room.goSenders[matchRound] ?? []).isEmpty {
            // The start was under way when this peer joined: it votes like everyone else.
            voteStartFromMark()
        }
        for delivery in pending { _ = deliver(delivery) }
    }

    // MARK: - Deliveries

    /// Applies one delivered message, then every decision it made ready.
    /// - Returns: whether it ended with ``processDecisions()`` at its fixed point (false for a
    ///   message dropped before that).
    private mutating func deliver(_ delivery: Delivery) -> Bool {
        guard let message = MatchMessage.decode(delivery.payload) else {
            stats.invalidDropped += 1
            return false
        }
        let from = delivery.from
        guard view?.contains(from) ?? false else {
            stats.ignoredMessages += 1
            return false
        }
        if unheard.contains(from) {
            switch message {
            case .hello: unheard.remove(from)
            case .snapshot, .leave: break
            default:
                stats.staleDropped += 1
                return false
            }
        }
        switch message {
        case .hello(let hello):
            lobby[from] = hello
            emit(.lobbyChanged)
        case .votes(let game, let firstRound, let values):
            receiveVotes(from: from, game: game, firstRound: firstRound, values: values)
        case .startProposal(let round, let settings, let wantsToPlay):
            receiveStart(from: from, round: round, vote: StartVote(settings: settings, wantsToPlay: wantsToPlay))
        case .inputs(let game, let items):
            receiveStream(from: from, game: game, items: items.map { .input($0) })
        case .checkpoint(let game, let pairs, let hash):
            receiveStream(from: from, game: game, items: [.checkpoint(pairs: pairs, hash: hash)])
        case .gameOverVote(let game, let winner):
            receiveGameOver(from: from, game: game, winner: winner)
        case .clock(let game, let tick):
            receiveStream(from: from, game: game, items: [.clock(tick: tick)])
        case .snapshot(let snapshot):
            if let view, snapshot.view == view.id {
                syncedMembers = Set(view.members)
                // Receivers may start from it: what they cannot have seen goes out again.
                resendForReceivers(snapshot)
            }
        case .leave:
            // Said before it goes: its departure is a quit, not a lost connection.
            if playing?.match.players.contains(from) == true { announcedLeave.insert(from) }
        case .forfeit(let game):
            receiveForfeit(from: from, game: game)
        case .roomSettings, .ready, .unready, .go:
            receiveLobby(message, from: from)
        case .grids(let game, let pictures):
            receivePictures(game: game, pictures: pictures)
        }
        return processDecisions()
    }

    /// Games whose messages are accepted: the current one and the next one.
    private func acceptsGame(_ game: UInt32) -> Bool {
        game == nextGame || playing?.match.game == game
    }

    /// Games whose votes are accepted: the current one and the next two (a peer that began game
    /// g + 1 votes the opening rounds of g + 2 while a slower peer may still be finishing game g).
    /// In the lobby: `nextGame` and the one after. At most three namespaces are ever held.
    func acceptsVotes(_ game: UInt32) -> Bool {
        let first = playing?.match.game ?? nextGame
        return game &- first <= (isPlaying ? 2 : 1)
    }

    /// A game that has not begun yet: its decisions are held back from events and the decisions
    /// log until it begins (a view with joiners may drop them, see `applyView`).
    func isFutureGame(_ game: UInt32) -> Bool { game &- nextGame < UInt32.max / 2 }

    private mutating func receiveVotes(from: PeerID, game: UInt32, firstRound: UInt32, values: [UInt64]) {
        guard acceptsVotes(game), let members = view?.members else {
            stats.ignoredMessages += 1
            return
        }
        let (outcome, decided) = rounds[game, default: EggRounds(game: game, members: members)]
            .receive(from: from, firstRound: firstRound, values: values)
        switch outcome {
        case .accepted(_, let duplicates): stats.duplicateVotes += duplicates
        case .duplicate: stats.duplicateVotes += values.count
        case .gap, .notMember, .tooFar: stats.ignoredMessages += 1
        }
        noteDecided(game: game, decided)
    }

    mutating func noteDecided(game: UInt32, _ decided: Range<Int>) {
        guard !decided.isEmpty, !isFutureGame(game) else { return }
        emit(.roundsDecided(game: game, rounds: decided))
        if keepsDecisions, let r = rounds[game] {
            for round in decided { if let v = r.value(round) { decisionsLog.append((game, round, v)) } }
        }
    }

    private mutating func receiveStart(from: PeerID, round: UInt32, vote: StartVote) {
        guard round == matchRound || round == matchRound &+ 1, let members = view?.members else {
            stats.ignoredMessages += 1
            return
        }
        if !(startVotes[round, default: OneShotVote()].receive(from: from, value: vote, members: members)) {
            stats.duplicateVotes += 1
        }
        emit(.lobbyChanged)
    }

    private mutating func receiveGameOver(from: PeerID, game: UInt32, winner: PeerID?) {
        guard let members = view?.members else {
            stats.ignoredMessages += 1
            return
        }
        if playing?.match.game == game {
            if uniquePlaying?.match.gameOver.receive(from: from, value: winner, members: members) == false { stats.duplicateVotes += 1 }
            if playing?.match.mirrored == false && playing?.match.myGameOverVote == .notCast {
                uniquePlaying?.match.myGameOverVote = .cast(winner: nil)
                send(.gameOverVote(game: game, winner: nil))
            }
        } else if game == nextGame, futureGameOver[from] == nil {
            futureGameOver[from] = winner
        } else {
            stats.ignoredMessages += 1
        }
    }

    /// `from` leaves the match for the lobby, forfeiting `game`. Taken for the game under way
    /// when `game` is it or the one before (the sender may have left just as that one ended
    /// here, its forfeit being behind its own game-over vote); held for the next game when it
    /// is that one (this peer is still finishing the game the sender already saw end). From then
    /// on the sender is out of every game of the match, at the same point of its stream on every
    /// peer; anything else is counted and ignored.
    private mutating func receiveForfeit(from: PeerID, game: UInt32) {
        guard let m = playing?.match, m.players.contains(from), !m.forfeited.contains(from) else {
            stats.ignoredMessages += 1
            return
        }
        if game == m.game || game == m.game &- 1 {
            uniquePlaying?.match.forfeited.insert(from)
            let wasOut = m.leftDuringGame.contains(from)
            uniquePlaying?.match.leftDuringGame.insert(from)
            if from == config.id { uniquePlaying?.owner = nil }
            if !wasOut { emit(.playerOut(player: from, name: m.names[from] ?? lobby[from]?.name ?? "", reason: .leftForLobby)) }
        } else if game == nextGame {
            futureForfeits.insert(from)
        } else {
            stats.ignoredMessages += 1
        }
    }

    private mutating func receiveStream(from: PeerID, game: UInt32, items: [StreamItem]) {
        guard acceptsGame(game) else {
            stats.ignoredMessages += 1
            return
        }
        if playing?.match.game == game {
            // Changed in place (`MatchState.receive`): no copy of the match or a mirror is held.
            if uniquePlaying?.match.receive(items, from: from) == false { stats.ignoredMessages += 1 }
        } else if futureItems[from, default: []].count + items.count <= PlayerMirror.queueMax {
            futureItems[from, default: []].append(contentsOf: items)
        }
    }
}
