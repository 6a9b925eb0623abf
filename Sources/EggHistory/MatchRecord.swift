import Consensus
import EggGame
import PeerNet

/// One match as a verified log proves it (docs/history.md): what the replica of the log's peer saw.
/// Fields a log does not prove are `nil` (stored as NULL).
public struct MatchRecord: Sendable, Hashable {
    /// The digest of the log line whose delivery started the match: it names the log up to that
    /// line (every line before it, their times included), so the same match read from the same
    /// log, whole or cut off later, has the same key, and no other match has it.
    public var key: String
    /// The line of the log that started the match (1-based).
    public var startLine: Int
    /// Wall-clock microseconds (the log's `at`) of the line that started the match, and of the
    /// line that ended it (its last game's end; for an abandoned match the last match event the
    /// log shows of it).
    public var startedAt: Int64
    public var endedAt: Int64?
    public var room: String
    public var settings: Settings
    /// The log's own peer: whose view this record is.
    public var recorder: PeerID
    public var players: [Player]
    public var games: [Game]
    /// The match's winner; `nil` for no winner (or an abandoned match).
    public var winner: PeerID?
    /// The log ends (or the peer gave its view up, or another match started) before the match
    /// was over.
    public var abandoned: Bool

    public init(key: String, startLine: Int, startedAt: Int64, endedAt: Int64?, room: String, settings: Settings,
                recorder: PeerID, players: [Player], games: [Game], winner: PeerID?, abandoned: Bool) {
        self.key = key
        self.startLine = startLine
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.room = room
        self.settings = settings
        self.recorder = recorder
        self.players = players
        self.games = games
        self.winner = winner
        self.abandoned = abandoned
    }

    public struct Settings: Sendable, Hashable {
        public var rules: String
        public var speed: Int
        public var colors: Int
        public var gamesPerMatch: Int
        public var startingHeight: Int

        public init(rules: String, speed: Int, colors: Int, gamesPerMatch: Int, startingHeight: Int) {
            self.rules = rules
            self.speed = speed
            self.colors = colors
            self.gamesPerMatch = gamesPerMatch
            self.startingHeight = startingHeight
        }
    }

    public struct Player: Sendable, Hashable {
        public var id: PeerID
        /// The name of its `hello` (nil when the log holds none for it).
        public var name: String?
        /// Games won in the match.
        public var wins: Int

        public init(id: PeerID, name: String?, wins: Int) {
            self.id = id
            self.name = name
            self.wins = wins
        }
    }

    public struct Game: Sendable, Hashable {
        /// 1-based within the match.
        public var number: Int
        /// The room's game counter (``MatchEvent/gameStarted(game:mirrored:)``).
        public var game: UInt32
        /// `nil`: a draw (no player left standing, or none observed).
        public var winner: PeerID?
        /// Seconds between the lines that began and ended the game (the recorder's clock);
        /// `nil` when the log does not hold the game's start (a peer that joined during it).
        public var durationSeconds: Double?
        /// False when the recorder joined during the game and did not mirror it: no figures.
        public var mirrored: Bool
        public var stats: [PlayerStats]

        public init(number: Int, game: UInt32, winner: PeerID?, durationSeconds: Double?, mirrored: Bool, stats: [PlayerStats]) {
            self.number = number
            self.game = game
            self.winner = winner
            self.durationSeconds = durationSeconds
            self.mirrored = mirrored
            self.stats = stats
        }
    }

    /// One player's figures in one game, from the recorder's mirror of its grid.
    public struct PlayerStats: Sendable, Hashable {
        public var player: PeerID
        public var largestChain: Int
        public var pairsPlaced: Int
        public var garbageSent: Int
        public var garbageReceived: Int
        public var toppedOut: Bool

        public init(player: PeerID, largestChain: Int, pairsPlaced: Int, garbageSent: Int, garbageReceived: Int, toppedOut: Bool) {
            self.player = player
            self.largestChain = largestChain
            self.pairsPlaced = pairsPlaced
            self.garbageSent = garbageSent
            self.garbageReceived = garbageReceived
            self.toppedOut = toppedOut
        }
    }

    /// Whether the recorder played in the match (else it watched).
    public var recorderPlayed: Bool { players.contains { $0.id == recorder } }

    /// The name of `id` in this match, else its ID.
    public func name(of id: PeerID) -> String {
        players.first { $0.id == id }?.name ?? id.hex
    }
}

/// What a verified log holds: the log itself and its matches.
public struct LogContents: Sendable {
    public var path: String
    public var peer: PeerID
    public var room: String
    /// The digest of the last whole line: the log as read.
    public var lastDigest: String
    public var lines: Int
    /// The log ends with its end line (its peer closed it).
    public var complete: Bool
    public var matches: [MatchRecord]

    public init(path: String, peer: PeerID, room: String, lastDigest: String, lines: Int, complete: Bool, matches: [MatchRecord]) {
        self.path = path
        self.peer = peer
        self.room = room
        self.lastDigest = lastDigest
        self.lines = lines
        self.complete = complete
        self.matches = matches
    }
}

/// Why a log was refused.
public struct LogRefused: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String
    public var description: String { "'\(path)' does not verify: \(reason)" }

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// Reads a log through ``Replay`` and builds its ``MatchRecord``s from the replica's events.
public enum LogImporter {
    /// Verifies the log text and returns its matches.
    /// - Throws: ``LogRefused`` naming the first damaged line or the first checkpoint that does
    ///   not match (what `replay --verify` would report).
    public static func read(text bytes: [UInt8], path: String, passphrase: String? = nil) throws(LogRefused) -> LogContents {
        var replay = Replay(passphrase: passphrase)
        let collect = BuilderBox(Builder())
        replay.observer = { event, peer, position in collect.builder.observe(event, peer: &peer, at: position) }
        let report: ReplayReport
        do {
            try replay.receive(bytes[...])
            report = try replay.finish()
        } catch {
            throw LogRefused(path: path, reason: error.description)
        }
        guard report.ok else {
            throw LogRefused(path: path, reason: report.desyncs.first.map { "\($0)" } ?? "a checkpoint does not match")
        }
        guard let header = replay.header else { throw LogRefused(path: path, reason: "no header") }
        var builder = collect.builder
        builder.finish(lastAt: builder.lastAt)
        let matches = builder.done.map { record -> MatchRecord in
            var record = record
            record.room = header.room
            record.recorder = header.peer
            return record
        }
        return LogContents(path: path, peer: header.peer, room: header.room, lastDigest: report.lastDigest, lines: report.lines,
                           complete: report.complete, matches: matches)
    }

    /// A reference the replay's observer closure writes through.
    private final class BuilderBox {
        var builder: Builder
        init(_ builder: Builder) { self.builder = builder }
    }

    /// Turns the replica's match events into records.
    struct Builder {
        var done: [MatchRecord] = []
        var current: MatchRecord?
        var gameStartedAt: [UInt32: Int64] = [:]
        var lastAt: Int64 = 0

        mutating func observe(_ event: MatchEvent, peer: inout MatchPeer, at position: ReplayPosition) {
            lastAt = position.atMicroseconds
            switch event {
            case .matchStarted(let settings, let players):
                finish(lastAt: position.atMicroseconds)
                let names = peer.lobby
                current = MatchRecord(
                    key: position.digest, startLine: position.line, startedAt: position.atMicroseconds, endedAt: nil,
                    room: "", settings: MatchRecord.Settings(rules: settings.ruleSet.name, speed: settings.speed, colors: settings.colors,
                                                              gamesPerMatch: settings.gamesPerMatch, startingHeight: settings.startingHeight),
                    recorder: peer.config.id, players: players.map { MatchRecord.Player(id: $0, name: names[$0]?.name, wins: 0) },
                    games: [], winner: nil, abandoned: false)
                gameStartedAt = [:]
            case .gameStarted(let game, _):
                gameStartedAt[game] = position.atMicroseconds
            case .gameOver(let game, let winner):
                guard current != nil else { return }
                let finished = peer.lastGame.flatMap { $0.game == game ? $0 : nil }
                var stats: [MatchRecord.PlayerStats] = []
                if let finished, finished.mirrored {
                    for (id, mirror) in finished.mirrors.sorted(by: { $0.key < $1.key }) {
                        let grid = mirror.grid
                        stats.append(MatchRecord.PlayerStats(
                            player: id, largestChain: mirror.largestChain,
                            pairsPlaced: max(0, grid.pairsSpawned - (grid.state == .awaitingSpawn ? 0 : 1)),
                            garbageSent: mirror.garbageSent, garbageReceived: mirror.garbageReceived, toppedOut: mirror.isToppedOut))
                    }
                }
                let duration = gameStartedAt[game].map { Double(position.atMicroseconds - $0) / 1e6 }
                current!.games.append(MatchRecord.Game(
                    number: current!.games.count + 1, game: game, winner: winner, durationSeconds: duration,
                    mirrored: finished?.mirrored ?? false, stats: stats))
                current!.endedAt = position.atMicroseconds
                if let winner, let index = current!.players.firstIndex(where: { $0.id == winner }) { current!.players[index].wins += 1 }
            case .matchOver(let winner, let wins):
                guard var record = current else { return }
                record.winner = winner
                for index in record.players.indices { record.players[index].wins = wins[record.players[index].id] ?? 0 }
                record.endedAt = position.atMicroseconds
                done.append(record)
                current = nil
            default:
                break
            }
        }

        /// Ends the match in progress, if any, as abandoned (the log ends, or another starts).
        mutating func finish(lastAt: Int64) {
            guard var record = current else { return }
            record.abandoned = true
            record.endedAt = record.endedAt ?? lastAt
            done.append(record)
            current = nil
        }
    }
}
