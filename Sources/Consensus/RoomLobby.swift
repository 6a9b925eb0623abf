import PeerNet

/// Names one version of the room's settings register: a version number and the player that
/// wrote it. Versions are ordered by number, then by author ID, so two players changing the
/// settings at once (each writing version n + 1) end on the same winner everywhere.
public struct SettingsKey: Hashable, Comparable, Sendable {
    public var version: UInt32
    /// The writer; `PeerID(0)` for version 0 (the defaults nobody wrote).
    public var author: PeerID

    public static let initial = SettingsKey(version: 0, author: PeerID(0))

    public init(version: UInt32, author: PeerID) {
        self.version = version
        self.author = author
    }

    public static func < (a: SettingsKey, b: SettingsKey) -> Bool {
        (a.version, a.author.raw) < (b.version, b.author.raw)
    }
}

/// The lobby part of a snapshot: the settings register and who is ready on it.
public struct RoomSnapshot: Hashable, Sendable {
    public var settings: MatchSettings
    public var key: SettingsKey
    /// Members ready in the open start round on `key`, with whether each wants to play.
    public var marks: [PeerID: Bool]
    /// The highest-ID member whose start trigger fired in the open start round (the start is
    /// under way: a joiner votes at once), `nil` when none fired.
    public var goLeader: PeerID?

    public init(settings: MatchSettings, key: SettingsKey, marks: [PeerID: Bool], goLeader: PeerID?) {
        self.settings = settings
        self.key = key
        self.marks = marks
        self.goLeader = goLeader
    }

    /// Valid settings and at most ``Snapshot/lobbyEntriesMax`` marks.
    public var isValid: Bool { settings.isValid && marks.count <= Snapshot.lobbyEntriesMax }
}

/// One member's ready mark as delivered (its latest `ready`/`unready`).
struct ReadyMark: Hashable, Sendable {
    var match: UInt32
    var key: SettingsKey
    var settings: MatchSettings
    var wantsToPlay: Bool
}

/// The replicated lobby of a room: its settings register and ready marks, every change of them in
/// this file. What a peer does with them (its start timers, the `go` trigger and its start vote)
/// is `MatchPeer+Lobby.swift`; the start of the match itself is a phase transition
/// (`MatchPeer+Phase.swift`).
///
/// - **Settings** are a last-writer-wins register: a player writes version n + 1 of the version n
///   it has; the highest ``SettingsKey`` delivered applies. Every peer that delivered the same
///   writes holds the same settings, whatever the interleaving.
/// - **Ready marks** name the start round and the settings (version and content) they were given
///   on. A mark counts only in the open round, on the register's current version and content, so
///   any settings change clears every mark (two players writing the same version at once with the
///   same content, e.g. equal offers, clear nothing), and a new round (a match started) starts
///   with none. Each member's latest mark replaces its earlier
///   one (a member's stream is delivered in order), so un-ready is just a newer mark.
/// - **Start**: the decision is the one-shot start vote of `MatchPeer` (decided when every member
///   voted). A ready player's peer triggers it: by itself (``MatchPeer/lobbyTick(now:)``) when
///   every player of the room is ready (at least two wanting to play) for
///   ``MatchPeerConfig/startCountdownNanoseconds``; or when the player asks to start now
///   (``MatchPeer/startNow(now:)``), allowed ``MatchPeerConfig/startAfterFirstReadyNanoseconds``
///   after the first current mark with at least two players ready. It sends `go`, then its start vote; every member that delivers a `go` of the
///   open round votes at once (ready or not, spectators too: nobody blocks the start), wanting to
///   play if its own mark is current. The players are the voters wanting to play; the settings
///   are those voted by the highest-ID member that sent `go` (a `go` precedes its sender's vote,
///   so every peer knows the same senders when the round is decided).
struct RoomLobby: Sendable, Hashable {
    var settings = MatchSettings.default
    var key = SettingsKey.initial
    var marks: [PeerID: ReadyMark] = [:]
    /// Senders of `go` per start round (the open one and the next).
    var goSenders: [UInt32: Set<PeerID>] = [:]

    /// A settings write from `author`; returns whether it is now the register's value.
    mutating func write(version: UInt32, settings: MatchSettings, author: PeerID) -> Bool {
        let candidate = SettingsKey(version: version, author: author)
        guard key < candidate else { return false }
        key = candidate
        self.settings = settings
        return true
    }

    /// The members ready in round `match` on the current settings, with whether each wants to play.
    func current(match: UInt32) -> [PeerID: Bool] {
        marks.filter { $0.value.match == match && $0.value.key.version == key.version && $0.value.settings == settings }
            .mapValues(\.wantsToPlay)
    }

    mutating func keepMembers(_ members: [PeerID]) {
        marks = marks.filter { members.contains($0.key) }
    }

    /// The state as a snapshot carries it (round `match`).
    /// At most ``Snapshot/lobbyEntriesMax`` marks, the lowest IDs' (a snapshot stays one datagram).
    func snapshot(match: UInt32) -> RoomSnapshot {
        let marks = current(match: match).sorted { $0.key < $1.key }.prefix(Snapshot.lobbyEntriesMax)
        return RoomSnapshot(settings: settings, key: key, marks: Dictionary(uniqueKeysWithValues: Array(marks)),
                            goLeader: goSenders[match]?.max())
    }

    init() {}

    init(_ snapshot: RoomSnapshot, match: UInt32) {
        settings = snapshot.settings
        key = snapshot.key
        for (peer, wants) in snapshot.marks {
            marks[peer] = ReadyMark(match: match, key: key, settings: settings, wantsToPlay: wants)
        }
        if let leader = snapshot.goLeader { goSenders[match] = [leader] }
    }
}
