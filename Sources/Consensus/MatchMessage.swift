import EggGame
import PeerNet

/// The settings a start proposal carries; the highest-ID proposal's settings win.
public struct MatchSettings: Hashable, Sendable {
    /// Gravity speed 0–9.
    public var speed: Int
    /// Colours in play, 4–6.
    public var colors: Int
    /// Best of 1, 3, 5 or 7.
    public var gamesPerMatch: Int
    /// The rule set the match plays (one of ``RuleSet/all``), agreed with the other settings.
    public var ruleSet: RuleSet
    /// Full rows of garbage on every grid before the first spawn, within the rule set's
    /// ``RuleSet/startingHeights`` (`sfe` 0–9; `tsu` has none, so only 0).
    public var startingHeight: Int

    public static let `default` = MatchSettings(speed: 3, colors: 4, gamesPerMatch: 3)
    public static let speeds = 0...9
    public static let colorCounts = 4...6
    public static let gamesPerMatchAllowed = [1, 3, 5, 7]

    public init(speed: Int, colors: Int, gamesPerMatch: Int, ruleSet: RuleSet = .sfe, startingHeight: Int = 0) {
        self.speed = speed
        self.colors = colors
        self.gamesPerMatch = gamesPerMatch
        self.ruleSet = ruleSet
        self.startingHeight = startingHeight
    }

    public var isValid: Bool {
        MatchSettings.speeds.contains(speed) && MatchSettings.colorCounts.contains(colors)
            && MatchSettings.gamesPerMatchAllowed.contains(gamesPerMatch)
            && ruleSetIndex != nil && ruleSet.speeds.contains(speed)
            && ruleSet.startingHeights.contains(startingHeight)
    }

    /// The rule set's index in ``RuleSet/all`` (how the binary encoding names it), or nil.
    var ruleSetIndex: Int? { RuleSet.all.firstIndex(of: ruleSet) }

    /// A player's grid at the start of a game under these settings: the rule set, the speed and
    /// the starting height's garbage rows, with the game's garbage stream. The settings must be
    /// valid (every decoder checks ``isValid`` before settings reach a match).
    public func startingGrid(garbageSeed: UInt64) -> PlayerGrid {
        PlayerGrid(startingHeight: startingHeight, rules: ruleSet, speed: speed, garbageSeed: garbageSeed)
    }

    /// Games a player must win to win the match.
    public var winsNeeded: Int { gamesPerMatch / 2 + 1 }
}

extension Move {
    /// The move's name in the log.
    var jsonName: String {
        switch self {
        case .left: "left"
        case .right: "right"
        case .rotateCW: "cw"
        case .rotateCCW: "ccw"
        case .down: "down"
        case .hardDrop: "drop"
        }
    }
}

/// One item of a player's input stream. A spawn carries no pair: every mirror looks the pair up
/// by index (the grid's `pairsSpawned`) in the shared, voted sequence.
public enum StreamInput: Hashable, Sendable {
    case spawn
    case move(Move)
    case landGarbage(Int)
    /// Offsetting (rule sets that offset, `tsu`): this much of the player's pending chain garbage
    /// cancelled garbage queued against it (1...``MatchMessage/garbageOffsetMax``): it counts as
    /// landed against the player and is not sent at the next spawn.
    case offsetGarbage(Int)
    /// This many logic ticks of the owner's grid passed (1...``MatchMessage/ticksPerItemMax``).
    case ticks(Int)
}

/// A peer's role in the room.
public enum PeerRole: UInt8, Hashable, Sendable {
    case player = 0
    case spectator = 1

    var jsonName: String { self == .player ? "player" : "spectator" }
}

/// What a peer announces about itself.
public struct Hello: Hashable, Sendable {
    public var name: String
    public var role: PeerRole
    public var protocolVersion: Int
    public var rules: String

    public static let nameBytesMax = 24
    /// 2: game clocks (``MatchMessage/clock(game:tick:)``) decide simultaneous top-outs.
    /// 3: the room owns the lobby (settings register, ready marks, `go`; `RoomLobby.swift`).
    public static let currentProtocol = 3

    public init(name: String, role: PeerRole, protocolVersion: Int = Hello.currentProtocol, rules: String = "sfe") {
        self.name = Hello.truncated(name)
        self.role = role
        self.protocolVersion = protocolVersion
        self.rules = rules
    }

    /// `name` cut to at most ``nameBytesMax`` UTF-8 bytes on a scalar boundary.
    static func truncated(_ name: String) -> String {
        var out = String.UnicodeScalarView()
        var bytes = 0
        for scalar in name.unicodeScalars {
            bytes += String(scalar).utf8.count
            if bytes > nameBytesMax { break }
            out.append(scalar)
        }
        return String(out)
    }
}

/// A lobby entry inside a snapshot.
public struct LobbyEntry: Hashable, Sendable {
    public var peer: PeerID
    public var name: String
    public var role: PeerRole

    public init(peer: PeerID, name: String, role: PeerRole) {
        self.peer = peer
        self.name = Hello.truncated(name)
        self.role = role
    }
}

/// The match part of a snapshot: what a late joiner needs to follow the match from here on.
public struct MatchSnapshot: Hashable, Sendable {
    public var settings: MatchSettings
    public var players: [PeerID]
    /// Games won, one entry per player (same order).
    public var wins: [Int]
    /// The game in progress (a global counter; it names the egg-round namespace).
    public var game: UInt32
    /// The first undecided egg round of `game`: a joiner votes from here on.
    public var frontier: UInt32
    /// Pairs each player had spawned (same order as `players`), for vote-ahead.
    public var pairsSpawned: [UInt32]

    public init(settings: MatchSettings, players: [PeerID], wins: [Int], game: UInt32, frontier: UInt32, pairsSpawned: [UInt32]) {
        self.settings = settings
        self.players = players
        self.wins = wins
        self.game = game
        self.frontier = frontier
        self.pairsSpawned = pairsSpawned
    }
}

extension MatchSnapshot {
    /// 1 to ``MatchMessage/playersMax`` players, none twice; `wins` and `pairsSpawned` one per
    /// player; wins at most the games of the match; `frontier` and every `pairsSpawned` at most
    /// the rounds a game can have (``EggRounds/roundsMax``), so adopting it allocates a bounded
    /// amount whatever the sender wrote.
    public var isValid: Bool {
        let roundsMax = UInt32(EggRounds.roundsMax)
        return settings.isValid && (1...MatchMessage.playersMax).contains(players.count)
            && Set(players).count == players.count
            && wins.count == players.count && wins.allSatisfy({ (0...settings.gamesPerMatch).contains($0) })
            && pairsSpawned.count == players.count && pairsSpawned.allSatisfy({ $0 <= roundsMax })
            && frontier <= roundsMax
    }
}

/// The replicated state as of the installation of view `view`, sent to late joiners.
public struct Snapshot: Hashable, Sendable {
    public var view: UInt64
    /// The start-vote round (match counter) the room is at.
    public var matchRound: UInt32
    /// The next game number to use.
    public var nextGame: UInt32
    public var lobby: [LobbyEntry]
    public var match: MatchSnapshot?
    /// The room's lobby: settings and ready marks of the open start round (`nil` in a snapshot
    /// of an older peer: the defaults, nobody ready).
    public var room: RoomSnapshot?

    public static let lobbyEntriesMax = 16

    /// Every field within its limits: at most ``lobbyEntriesMax`` lobby entries, no peer listed
    /// twice, names within ``Hello/nameBytesMax``, and a valid match part. A snapshot from the
    /// network or a log is checked before anything is built from it.
    public var isValid: Bool {
        guard lobby.count <= Snapshot.lobbyEntriesMax, Set(lobby.map(\.peer)).count == lobby.count,
              lobby.allSatisfy({ $0.name.utf8.count <= Hello.nameBytesMax }) else { return false }
        return (match?.isValid ?? true) && (room?.isValid ?? true)
    }

    public init(view: UInt64, matchRound: UInt32, nextGame: UInt32, lobby: [LobbyEntry], match: MatchSnapshot?,
                room: RoomSnapshot? = nil) {
        self.view = view
        self.matchRound = matchRound
        self.nextGame = nextGame
        self.lobby = lobby
        self.match = match
        self.room = room
    }
}

/// Every application message of the eggs protocol. Compact binary on the wire
/// (``encoded()``/``decode(_:)``), one JSON object with a `"type"` in the log.
public enum MatchMessage: Hashable, Sendable {
    indirect case hello(Hello)
    /// One sender's votes for consecutive egg rounds `firstRound...` of game `game`.
    case votes(game: UInt32, firstRound: UInt32, values: [UInt64])
    /// A ready member's vote in start round `match`.
    indirect case startProposal(match: UInt32, settings: MatchSettings, wantsToPlay: Bool)
    /// A batch of the sender's own input stream for game `game`.
    case inputs(game: UInt32, items: [StreamInput])
    /// The sender's grid hash after `pairs` pairs settled in game `game`.
    case checkpoint(game: UInt32, pairs: UInt32, hash: UInt64)
    /// The sender's observed winner of game `game` (`nil`: no winner or not observed).
    case gameOverVote(game: UInt32, winner: PeerID?)
    /// The sender's own game clock in game `game`: ticks (60 a second) since the game began on
    /// it. Sent in its stream right after the spawn that topped it out (the tick it topped out
    /// on), and while it is still playing once a rival has topped out (it was alive at `tick`).
    /// Simultaneous top-outs are decided from these clocks (see `MatchPeer+TopOut.swift`).
    case clock(game: UInt32, tick: UInt32)
    indirect case snapshot(Snapshot)
    case leave
    /// A player sets the room's match settings: version `version` of the settings register,
    /// written by the sender (see `RoomLobby`). Version 0 is a player's offer on joining a room
    /// nobody has set yet (the highest-ID offer applies until a player changes the settings).
    indirect case roomSettings(version: UInt32, settings: MatchSettings)
    /// The sender is ready for start round `match` with the room's settings `settings`, version
    /// `key` of the register as the sender had it.
    indirect case ready(match: UInt32, key: SettingsKey, settings: MatchSettings, wantsToPlay: Bool)
    /// The sender is no longer ready in start round `match`.
    case unready(match: UInt32)
    /// The sender's start trigger fired in start round `match`: every member votes now.
    case go(match: UInt32)
    /// Players' settled grids in game `game`, for peers that joined during it (``GridPicture``).
    case grids(game: UInt32, pictures: [GridPicture])
    /// The sender leaves the match under way for the lobby (`q` in a match): it forfeits game
    /// `game` (the game it was in when it left) and plays no further game of the match, but stays
    /// a member of the room. Every peer takes it out at the same point of the sender's stream.
    case forfeit(game: UInt32)

    /// The wire size limit every encoded message stays under.
    public static let bytesMax = 1000
    public static let votesPerMessageMax = 100
    public static let inputsPerMessageMax = 400
    public static let playersMax = 8

    /// Bytes of a hello's rule-set name at most.
    public static let rulesBytesMax = 16

    /// Every field within its limits (the decoders of both encodings check this, so a message
    /// off the network or out of a log that breaks one is dropped and counted, never used).
    public var isValid: Bool {
        switch self {
        case .hello(let h):
            return h.name.utf8.count <= Hello.nameBytesMax && h.rules.utf8.count <= Self.rulesBytesMax
                && (0...65_535).contains(h.protocolVersion)
        case .votes(_, let first, let values):
            return (1...Self.votesPerMessageMax).contains(values.count)
                && UInt64(first) + UInt64(values.count) <= UInt64(EggRounds.roundsMax)
        case .startProposal(_, let settings, _):
            return settings.isValid
        case .inputs(_, let items):
            return (1...Self.inputsPerMessageMax).contains(items.count) && items.allSatisfy {
                switch $0 {
                case .landGarbage(let n): return (0...Self.garbageLandMax).contains(n)
                case .offsetGarbage(let n): return (1...Self.garbageOffsetMax).contains(n)
                case .ticks(let n): return (1...Self.ticksPerItemMax).contains(n)
                case .spawn, .move: return true
                }
            }
        case .snapshot(let s):
            return s.isValid
        case .roomSettings(_, let settings), .ready(_, _, let settings, _):
            return settings.isValid
        case .grids(_, let pictures):
            return (1...Self.playersMax).contains(pictures.count) && pictures.allSatisfy(\.isValid)
                && Set(pictures.map(\.player)).count == pictures.count
        case .checkpoint, .gameOverVote, .clock, .leave, .unready, .go, .forfeit:
            return true
        }
    }

    /// Garbage eggs one landing can bring at most (a whole grid).
    public static let garbageLandMax = Board.columnsCount * Board.rowsCount
    /// The most garbage one offset item cancels (far beyond any chain's).
    public static let garbageOffsetMax = 1 << 20
    /// Ticks one stream item may carry at most.
    public static let ticksPerItemMax = PlayerGrid.ticksPerInputMax

    enum Tag: UInt8, CaseIterable {
        case hello = 1, votes, startProposal, inputs, checkpoint, gameOverVote, snapshot, leave, clock
        case roomSettings = 20, ready, unready, go, grids, forfeit
    }
}
