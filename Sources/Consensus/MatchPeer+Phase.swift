import PeerNet

/// # Where a peer stands in the room
///
/// A ``MatchPeer`` is in exactly one ``MatchPeer/Phase`` at a time, and the phase holds the data
/// that only it has. Every change of phase is one of the transitions in this file:
///
/// ```
///              view with no state ─┐            ┌─ snapshot with a match
///  unsynced ──(fresh room, snapshot)──▶ lobby ──(start decided)──▶ playing
///     ▲                                  ▲                           │
///     │                                  └────(match over)───────────┘
///     └──(joiner again, view abandoned)── any phase
/// ```
///
/// - ``Phase/unsynced(buffered:)``: no room state yet; what the view delivers waits for the
///   snapshot (at most ``MatchPeer/bufferedMax`` deliveries).
/// - ``Phase/lobby``: the room's state, no match under way.
/// - ``Phase/playing(_:)``: a match under way, and this peer's own grid while it plays the game
///   in progress (`nil` for a spectator, a player out of this game, or a peer that joined during
///   it), in one copy-on-write box (``MatchPeer/Playing``).
///
/// The per-phase invariants are in `MatchPeer+Invariants.swift`.
extension MatchPeer {
    /// Where this peer stands in the room, with the data of that phase.
    enum Phase: Sendable {
        /// Without the room's state: deliveries of the current view wait for its snapshot.
        case unsynced(buffered: [Delivery])
        /// With the room's state, no match under way.
        case lobby
        /// A match under way, and the local player's grid in the game in progress.
        case playing(Playing)
    }

    /// The data of ``Phase/playing(_:)``: the match and the local player's grid, held by one
    /// reference so that they are read in place and changed in place (a phase change moves one
    /// pointer, never the match's dozen buffers). Copied on write: a copy of the peer (a
    /// renderer's snapshot) shares it until either side changes it.
    final class Playing: @unchecked Sendable {
        /// Exclusive access is proven statically instead of checked at run time: only this
        /// file's accessors reach these, within an access to the peer that is itself exclusive,
        /// and a box that two copies of a peer share is only read (``MatchPeer/uniquePlaying``
        /// copies it before a change).
        @exclusivity(unchecked) var match: MatchState
        @exclusivity(unchecked) var owner: OwnerState?

        init(match: MatchState, owner: OwnerState?) {
            self.match = match
            self.owner = owner
        }

        func copy() -> Playing { Playing(match: match, owner: owner) }
    }

    /// The playing phase's data, to read (`playing?.match.game`): in place, no copy. Never
    /// changed through this reference: a copy of the peer may share it (see ``uniquePlaying``).
    var playing: Playing? {
        if case .playing(let box) = phase { return box }
        return nil
    }

    /// The playing phase's data, to change in place (`uniquePlaying?.match.watchers = []`): made
    /// this peer's own first (copied if a copy of the peer shares it).
    var uniquePlaying: Playing? {
        mutating get {
            guard case .playing(var box) = phase else { return nil }
            // The phase lets go of its reference, so ours is the only one unless a copy of the
            // peer shares the box.
            phase = .lobby
            if !isKnownUniquelyReferenced(&box) { box = box.copy() }
            phase = .playing(box)
            return box
        }
    }

    /// Whether this peer has the room's state (it left ``Phase/unsynced(buffered:)``).
    public var isSynced: Bool {
        if case .unsynced = phase { return false }
        return true
    }

    /// Whether this peer has the room's state and no match is under way.
    public var isInLobby: Bool {
        if case .lobby = phase { return true }
        return false
    }

    /// Whether a match is under way.
    public var isPlaying: Bool {
        if case .playing = phase { return true }
        return false
    }

    /// Deliveries waiting for the snapshot (none once synced).
    var buffered: [Delivery] {
        if case .unsynced(let buffered) = phase { return buffered }
        return []
    }

    /// The number of the game under way, or `nil` outside a match (no copy of the match).
    public var currentGame: UInt32? { playing?.match.game }

    /// The match under way (``Phase/playing(_:)``), or `nil`: a copy, for a renderer or a test.
    /// This file's transitions start and end it; the peer reads it in place through ``playing``
    /// and changes it through ``uniquePlaying``.
    public var match: MatchState? { playing?.match }

    /// The local player's grid in the game in progress, or `nil` (a copy; see ``match``). Set
    /// at the start of a game (`beginGame`) and cleared at its end.
    public var owner: OwnerState? { playing?.owner }

    // MARK: - Transitions

    /// Back to no room state (a joiner of a view, or a peer whose view was abandoned): whatever
    /// state it held is dropped, and the deliveries of the view wait for a snapshot.
    mutating func becomeUnsynced() {
        if isSynced { resetToEmpty() }
        phase = .unsynced(buffered: [])
    }

    /// Holds a delivery until the snapshot arrives; counted and dropped past `bufferedMax`.
    mutating func buffer(_ delivery: Delivery) {
        guard case .unsynced(var held) = phase else { preconditionFailure("only an unsynced peer buffers") }
        guard held.count < Self.bufferedMax else {
            stats.ignoredMessages += 1
            return
        }
        phase = .lobby
        held.append(delivery)
        phase = .unsynced(buffered: held)
    }

    /// The room's state is here (founded afresh, or a snapshot with no match): the lobby.
    /// - Returns: the deliveries that waited for it, to apply now in order.
    mutating func enterLobby() -> [Delivery] {
        let held = buffered
        phase = .lobby
        return held
    }

    /// A match begins (a start round decided, or a snapshot of a match under way). Its first game
    /// begins separately (`beginGame`), which gives the local player its grid.
    /// - Returns: the deliveries that waited for a snapshot, to apply now in order.
    mutating func startPlaying(_ state: MatchState) -> [Delivery] {
        let held = buffered
        phase = .playing(Playing(match: state, owner: nil))
        return held
    }

    /// A game of the match under way begins (or the next one replaces the game that ended): the
    /// match's state for it, and the local player's grid if it plays it.
    mutating func playGame(_ state: MatchState, owner: OwnerState?) {
        guard case .playing = phase else { preconditionFailure("a game begins only in a match under way") }
        phase = .playing(Playing(match: state, owner: owner))
    }

    /// The match is over: back to the lobby.
    mutating func endMatch() {
        guard case .playing = phase else { preconditionFailure("only a match under way ends") }
        phase = .lobby
        futureForfeits = []
        announcedLeave = []
        leftMatchAt = nil
    }

    /// Drops the room's state: the lobby, votes and rounds, and the match under way (back to
    /// ``Phase/lobby``; an unsynced peer keeps its buffered deliveries).
    mutating func resetToEmpty() {
        // Own payloads not handed to the driver yet are about the state dropped here.
        stats.staleUnsent += pendingSendCount
        outbox.removeAll()
        lobby = [:]
        matchRound = 0
        nextGame = 0
        if case .playing = phase { endMatch() }
        startVotes = [:]
        room = RoomLobby()
        lobbyTimers = LobbyTimers()
        rounds = [:]
        futureItems = [:]
        futureGameOver = [:]
        myStart = [:]
        votedUpTo = [:]
    }
}
