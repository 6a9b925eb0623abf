import PeerNet

/// This peer's local start timers (not replicated: they only decide when this peer sends `go`;
/// the start itself is the replicated start vote, see `RoomLobby`).
struct LobbyTimers: Sendable, Hashable {
    /// Since when every player of the room has been ready (at least two wanting to play).
    var allReadySince: NetTime?
    /// Since when at least one current ready mark has been seen.
    var firstReadySince: NetTime?
}

/// What the lobby is waiting for, for a renderer.
public enum LobbyCountdown: Hashable, Sendable {
    /// Every player is ready: the match starts in `nanoseconds` unless someone cancels.
    case allReady(nanoseconds: UInt64)
    /// Some players are ready: once at least two are, a ready player may start the match with
    /// the ready players in `nanoseconds` (0: now; see ``MatchPeer/startNow(now:)``).
    case firstReady(nanoseconds: UInt64)
    /// The start vote is under way.
    case starting
}

extension MatchPeer {
    /// The settings each member whose start vote for the coming match was delivered proposed
    /// (the highest ID's apply when the start is decided).
    public var proposedSettings: [PeerID: MatchSettings] {
        (startVotes[matchRound]?.votes ?? [:]).mapValues(\.settings)
    }

    // MARK: - The room's settings and ready marks

    /// The room's match settings (the settings register's value).
    public var roomSettings: MatchSettings { room.settings }

    /// Who wrote (or offered) the room's settings (`nil`: nobody, the defaults apply).
    public var roomSettingsAuthor: PeerID? { room.key == .initial ? nil : room.key.author }

    /// Members ready in the open start round on the room's settings (mark or start vote), with
    /// whether each wants to play.
    public var readyMarks: [PeerID: Bool] {
        var ready = room.current(match: matchRound)
        for (peer, vote) in startVotes[matchRound]?.votes ?? [:] where ready[peer] == nil { ready[peer] = vote.wantsToPlay }
        return ready
    }

    /// Whether this peer's own ready mark is current (on the room's settings, this round).
    public var isMarkedReady: Bool { room.current(match: matchRound)[config.id] != nil }

    /// Whether the start of the coming match is under way (a `go` of the open round arrived):
    /// settings and marks no longer change it. (A start vote alone, like a spectator's or a
    /// bot's, starts nothing.)
    public var isStarting: Bool {
        !isPlaying && !(room.goSenders[matchRound] ?? []).isEmpty
    }

    /// A player changes the room's settings (before the start). Spectators cannot; ignored while
    /// a match runs or its start is under way. Applied when delivered (to everyone at once).
    public mutating func changeSettings(_ settings: MatchSettings) {
        defer { checkInvariants() }
        guard settings.isValid, isInLobby, config.role == .player, myStart[matchRound] == nil,
              room.key.version < UInt32.max else { return }
        send(.roomSettings(version: room.key.version + 1, settings: settings))
    }

    /// Offers `settings` as the room's if nobody has set the room's yet: sent (as version 0 of the
    /// register) as soon as this peer has the room's state, and only if the room's settings are
    /// still the defaults nobody offered; the highest-ID offer applies. A peer joining a room
    /// whose settings were offered or set takes them.
    public mutating func offerSettings(_ settings: MatchSettings) {
        defer { checkInvariants() }
        guard settings.isValid, config.role == .player else { return }
        offeredSettings = settings
        if isSynced { sendOffer() }
    }

    /// Sends this peer's offer, once, if the room's settings are still nobody's.
    mutating func sendOffer() {
        guard let offer = offeredSettings, room.key == .initial, !isPlaying else { return }
        offeredSettings = nil
        send(.roomSettings(version: 0, settings: offer))
    }

    /// Marks this peer ready on the room's current settings (a spectator is ready to watch).
    public mutating func markReady(wantsToPlay: Bool = true, now: NetTime) {
        defer { checkInvariants() }
        guard isInLobby, myStart[matchRound] == nil else { return }
        send(.ready(match: matchRound, key: room.key, settings: room.settings, wantsToPlay: wantsToPlay && config.role == .player))
        afterInput(now: now)
    }

    /// Withdraws this peer's ready mark (cancels a countdown that needed it).
    public mutating func unready(now: NetTime) {
        defer { checkInvariants() }
        guard isInLobby, myStart[matchRound] == nil else { return }
        send(.unready(match: matchRound))
        afterInput(now: now)
    }

    /// Where the start stands at `now`, `nil` while nothing counts down.
    public func lobbyCountdown(now: NetTime) -> LobbyCountdown? {
        guard isInLobby else { return nil }
        if isStarting { return .starting }
        if let since = lobbyTimers.allReadySince {
            return .allReady(nanoseconds: config.startCountdownNanoseconds &- min(config.startCountdownNanoseconds, now.nanoseconds(since: since)))
        }
        if let since = lobbyTimers.firstReadySince {
            let limit = config.startAfterFirstReadyNanoseconds
            return .firstReady(nanoseconds: limit &- min(limit, now.nanoseconds(since: since)))
        }
        return nil
    }

    /// Whether this peer may start the match now with the ready players (docs/playing.md, the lobby: after 30 s with
    /// at least two players ready, a ready player may start): it is a player whose own ready mark
    /// is current, at least two players are ready wanting to play, its first-ready timer has run
    /// ``MatchPeerConfig/startAfterFirstReadyNanoseconds``, and no start is under way. The timer
    /// is this peer's own (a renderer shows the key when this is true).
    public func canStartNow(now: NetTime) -> Bool {
        guard isInLobby, !isStarting, myStart[matchRound] == nil, config.role == .player,
              room.current(match: matchRound)[config.id] == true else { return false }
        guard readyMarks.values.filter({ $0 }).count >= 2, let since = lobbyTimers.firstReadySince else { return false }
        return now.nanoseconds(since: since) >= config.startAfterFirstReadyNanoseconds
    }

    /// A ready player starts the match now with the ready players, when ``canStartNow(now:)``
    /// allows it; returns whether it did. Like the countdown's trigger, it sends `go`, then its
    /// start vote: every member votes when it delivers the `go` (wanting to play if its own mark
    /// is current), and the replicated start vote decides the players and settings, the same on
    /// every peer. A player who is not ready watches the match.
    @discardableResult
    public mutating func startNow(now: NetTime) -> Bool {
        defer { checkInvariants() }
        runLobbyTimers(now: now)
        guard canStartNow(now: now) else { return false }
        send(.go(match: matchRound))
        voteStartFromMark()
        lobbyTimers = LobbyTimers()
        return true
    }

    /// Runs this peer's start timers at `now` (the driver calls it every tick in the lobby;
    /// every input runs it too).
    public mutating func lobbyTick(now: NetTime) {
        defer { checkInvariants() }
        runLobbyTimers(now: now)
    }

    // MARK: - Internals

    /// The room's players in the view (their `hello` said player).
    var roomPlayers: [PeerID] {
        (view?.members ?? []).filter { lobby[$0]?.role == .player }
    }

    mutating func runLobbyTimers(now: NetTime) {
        guard isInLobby, (room.goSenders[matchRound] ?? []).isEmpty else {
            lobbyTimers = LobbyTimers()
            return
        }
        let ready = readyMarks
        let playing = ready.values.filter { $0 }.count
        let players = roomPlayers
        if playing >= 2, !players.isEmpty, players.allSatisfy({ ready[$0] != nil }) {
            if lobbyTimers.allReadySince == nil { lobbyTimers.allReadySince = now }
        } else {
            lobbyTimers.allReadySince = nil
        }
        // Spectators' start votes (they vote by themselves) do not start the 30-s clock.
        if !ready.keys.contains(where: { lobby[$0]?.role == .player }) {
            lobbyTimers.firstReadySince = nil
        } else if lobbyTimers.firstReadySince == nil {
            lobbyTimers.firstReadySince = now
        }
        // Only a ready player's peer that has not voted fires (spectators and players not ready
        // never start it; every peer shows the countdown). The first-ready timer fires nothing:
        // once it has run, a ready player may start (`startNow`).
        guard myStart[matchRound] == nil, config.role == .player, room.current(match: matchRound)[config.id] != nil,
              playing >= 2 else { return }
        let allReadyDue = lobbyTimers.allReadySince.map { now.nanoseconds(since: $0) >= config.startCountdownNanoseconds } ?? false
        guard allReadyDue else { return }
        send(.go(match: matchRound))
        voteStartFromMark()
        lobbyTimers = LobbyTimers()
    }

    /// Votes in the open start round with the room's settings, wanting to play if this peer's
    /// own mark is current.
    mutating func voteStartFromMark() {
        guard myStart[matchRound] == nil else { return }
        let wants = room.current(match: matchRound)[config.id] ?? false
        let vote = StartVote(settings: room.settings, wantsToPlay: wants && config.role == .player)
        myStart[matchRound] = vote
        voteAhead()
        send(.startProposal(match: matchRound, settings: vote.settings, wantsToPlay: vote.wantsToPlay))
    }

    /// A lobby message from `from` (already checked to be a member).
    mutating func receiveLobby(_ message: MatchMessage, from: PeerID) {
        switch message {
        case .roomSettings(let version, let settings):
            guard lobby[from]?.role == .player else {
                stats.ignoredMessages += 1
                return
            }
            if room.write(version: version, settings: settings, author: from) { emit(.lobbyChanged) }
        case .ready(let round, let key, let settings, let wants):
            guard round == matchRound || round == matchRound &+ 1 else {
                stats.ignoredMessages += 1
                return
            }
            room.marks[from] = ReadyMark(match: round, key: key, settings: settings, wantsToPlay: wants && lobby[from]?.role == .player)
            emit(.lobbyChanged)
        case .unready(let round):
            guard round == matchRound || round == matchRound &+ 1 else {
                stats.ignoredMessages += 1
                return
            }
            room.marks.removeValue(forKey: from)
            emit(.lobbyChanged)
        case .go(let round):
            guard round == matchRound || round == matchRound &+ 1 else {
                stats.ignoredMessages += 1
                return
            }
            guard room.goSenders[round, default: []].count < Snapshot.lobbyEntriesMax * 2 else { return }
            room.goSenders[round, default: []].insert(from)
            emit(.lobbyChanged)
            if round == matchRound, isInLobby { voteStartFromMark() }
        default:
            break
        }
    }

    /// The settings of a decided start: those voted by the highest-ID member that sent `go` in
    /// the round, else the highest-ID voter wanting to play, else the highest-ID voter.
    func startSettings(votes: [(PeerID, StartVote)], winner: PeerID) -> MatchSettings {
        let gos = room.goSenders[matchRound] ?? []
        if let leader = votes.filter({ gos.contains($0.0) }).max(by: { $0.0 < $1.0 }) { return leader.1.settings }
        if let player = votes.filter({ $0.1.wantsToPlay }).max(by: { $0.0 < $1.0 }) { return player.1.settings }
        guard let chosen = votes.first(where: { $0.0 == winner }) else {
            preconditionFailure("the winner of a decided round voted in it")
        }
        return chosen.1.settings
    }

    /// A start round was decided: every mark and trigger of it is spent.
    mutating func lobbyRoundDecided(_ round: UInt32) {
        room.goSenders.removeValue(forKey: round)
        room.marks = room.marks.filter { $0.value.match != round }
        lobbyTimers = LobbyTimers()
    }
}
