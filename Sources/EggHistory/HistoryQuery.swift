import Consensus
import Foundation
import GRDB
import PeerNet

/// A recorded match with its row ID (the number `history` shows).
public struct StoredMatch: Sendable, Hashable {
    public var id: Int64
    public var logPath: String
    public var record: MatchRecord

    /// The same match read from two logs (two peers', or one peer's twice with different ends)
    /// has the same players, game counters and winners: counted once in ratings and records.
    public var fingerprint: String {
        let players = record.players.map(\.id.hex).sorted().joined(separator: ",")
        let games = record.games.map { "\($0.game):\($0.winner?.hex ?? "-")" }.joined(separator: ",")
        return players + "|" + games
    }

    /// The recorder's largest chain over the match's games (any player's when it watched);
    /// nil when no game's figures are known.
    public var largestChain: Int? {
        let stats = record.games.flatMap(\.stats).filter { !record.recorderPlayed || $0.player == record.recorder }
        return stats.map(\.largestChain).max()
    }

    /// The opponents' names (every player's when the recorder watched).
    public var opponents: [String] {
        record.players.filter { $0.id != record.recorder }.map { $0.name ?? $0.id.hex }
    }

    /// "won 2-1", "lost 0-2", "drew 1-1", "abandoned 1-0", or "watched" for a spectator's log.
    public var result: String {
        guard record.recorderPlayed else { return record.abandoned ? "watched (left)" : "watched" }
        let mine = record.players.first { $0.id == record.recorder }?.wins ?? 0
        let theirs = record.players.filter { $0.id != record.recorder }.map(\.wins).max() ?? 0
        let score = "\(mine)-\(theirs)"
        if record.abandoned { return "abandoned \(score)" }
        if let winner = record.winner { return (winner == record.recorder ? "won " : "lost ") + score }
        return "drew " + score
    }
}

/// What `history` lists: filters, newest first.
public struct MatchFilter: Sendable {
    public var opponent: String?
    public var rules: String?
    /// Matches that started at or after this time (µs since the epoch).
    public var sinceMicroseconds: Int64?
    public var limit: Int?

    public init(opponent: String? = nil, rules: String? = nil, sinceMicroseconds: Int64? = nil, limit: Int? = nil) {
        self.opponent = opponent
        self.rules = rules
        self.sinceMicroseconds = sinceMicroseconds
        self.limit = limit
    }
}

extension HistoryDatabase {
    /// The recorded matches that pass `filter`, newest first.
    public func matches(_ filter: MatchFilter = MatchFilter()) throws(HistoryError) -> [StoredMatch] {
        do {
            return try queue.read { db in
                var sql = "SELECT * FROM match WHERE 1"
                var arguments: StatementArguments = []
                if let rules = filter.rules {
                    sql += " AND rules = ?"
                    _ = arguments.append(contentsOf: [rules])
                }
                if let since = filter.sinceMicroseconds {
                    sql += " AND startedAt >= ?"
                    _ = arguments.append(contentsOf: [since])
                }
                sql += " ORDER BY startedAt DESC, id DESC"
                var found: [StoredMatch] = []
                for row in try Row.fetchAll(db, sql: sql, arguments: arguments) {
                    let match = try Self.load(row, db: db)
                    if let opponent = filter.opponent, !match.record.players.contains(where: { $0.id != match.record.recorder && $0.name == opponent }) {
                        continue
                    }
                    found.append(match)
                    if let limit = filter.limit, found.count >= limit { break }
                }
                return found
            }
        } catch {
            throw HistoryError.wrap(error, path: path)
        }
    }

    /// One recorded match by its number.
    public func match(id: Int64) throws(HistoryError) -> StoredMatch? {
        do {
            return try queue.read { db in
                try Row.fetchOne(db, sql: "SELECT * FROM match WHERE id = ?", arguments: [id]).map { try Self.load($0, db: db) }
            }
        } catch {
            throw HistoryError.wrap(error, path: path)
        }
    }

    /// Matches recorded, and games.
    public func counts() throws(HistoryError) -> (matches: Int, games: Int) {
        do {
            return try queue.read { db in
                (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM match") ?? 0, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM game") ?? 0)
            }
        } catch {
            throw HistoryError.wrap(error, path: path)
        }
    }

    private static func load(_ row: Row, db: Database) throws -> StoredMatch {
        let id: Int64 = row["id"]
        let peer = { (text: String?) -> PeerID? in text.flatMap { PeerID(hex: $0) } }
        let players = try Row.fetchAll(db, sql: "SELECT * FROM player WHERE matchId = ? ORDER BY peer", arguments: [id]).map {
            MatchRecord.Player(id: peer($0["peer"]) ?? PeerID(0), name: $0["name"], wins: $0["wins"])
        }
        var games: [MatchRecord.Game] = []
        for game in try Row.fetchAll(db, sql: "SELECT * FROM game WHERE matchId = ? ORDER BY number", arguments: [id]) {
            let stats = try Row.fetchAll(db, sql: "SELECT * FROM gameStat WHERE gameId = ? ORDER BY peer", arguments: [game["id"] as Int64]).map {
                MatchRecord.PlayerStats(player: peer($0["peer"]) ?? PeerID(0), largestChain: $0["largestChain"] ?? 0,
                                        pairsPlaced: $0["pairsPlaced"] ?? 0, garbageSent: $0["garbageSent"] ?? 0,
                                        garbageReceived: $0["garbageReceived"] ?? 0, toppedOut: $0["toppedOut"] ?? false)
            }
            games.append(MatchRecord.Game(number: game["number"], game: UInt32(truncatingIfNeeded: game["game"] as Int64),
                                          winner: peer(game["winner"]), durationSeconds: game["durationSeconds"],
                                          mirrored: game["mirrored"], stats: stats))
        }
        let record = MatchRecord(
            key: row["key"], startLine: row["startLine"], startedAt: row["startedAt"], endedAt: row["endedAt"], room: row["room"],
            settings: MatchRecord.Settings(rules: row["rules"], speed: row["speed"], colors: row["colors"],
                                           gamesPerMatch: row["gamesPerMatch"], startingHeight: row["startingHeight"]),
            recorder: peer(row["recorder"]) ?? PeerID(0), players: players, games: games, winner: peer(row["winner"]),
            abandoned: row["abandoned"])
        return StoredMatch(id: id, logPath: row["logPath"], record: record)
    }
}

/// A player's standing as this machine's records show it.
public struct Standing: Sendable, Hashable {
    public var name: String
    public var rating: Glicko2Rating
    /// Games the recorder ("you") won and lost against this player, in games the recorder played.
    public var youLost = 0
    public var youWon = 0
    /// Games rated.
    public var games = 0
}

public enum Ratings {
    /// Glicko-2 ratings by player name from the recorded games: one rating period per UTC day
    /// with games, each game a win of its winner over every other player of it (a draw half a
    /// point between every two). A match read from several logs counts once. Local: only what
    /// this machine recorded.
    public static func standings(_ matches: [StoredMatch]) -> [String: Standing] {
        var seen = Set<String>()
        var unique: [StoredMatch] = []
        for match in matches.sorted(by: { ($0.record.startedAt, $0.id) < ($1.record.startedAt, $1.id) }) where seen.insert(match.fingerprint).inserted {
            unique.append(match)
        }
        var standings: [String: Standing] = [:]
        func name(_ match: StoredMatch, _ id: PeerID) -> String { match.record.name(of: id) }
        // Games by day.
        var days: [Int64: [(match: StoredMatch, game: MatchRecord.Game)]] = [:]
        for match in unique {
            let day = match.record.startedAt / 86_400_000_000
            for game in match.record.games { days[day, default: []].append((match, game)) }
        }
        // The record with you: every record from its recorder's side. The same match read from
        // the other player's log is that player's record with you, so nothing counts twice.
        for match in matches where match.record.recorderPlayed {
            for game in match.record.games {
                guard let winner = game.winner else { continue }
                for player in match.record.players.map(\.id) where player != match.record.recorder {
                    let who = name(match, player)
                    if standings[who] == nil { standings[who] = Standing(name: who, rating: .initial) }
                    if winner == player { standings[who]!.youLost += 1 }
                    if winner == match.record.recorder { standings[who]!.youWon += 1 }
                }
            }
        }
        var seeded = Set(standings.keys)
        for day in days.keys.sorted() {
            var outcomes: [String: [(opponent: String, score: Double)]] = [:]
            for (match, game) in days[day]! {
                let ids = match.record.players.map(\.id)
                for a in ids {
                    for b in ids where b != a {
                        let score: Double
                        if let winner = game.winner {
                            guard winner == a || winner == b else { continue }
                            score = winner == a ? 1 : 0
                        } else {
                            score = 0.5
                        }
                        outcomes[name(match, a), default: []].append((name(match, b), score))
                    }
                }
            }
            let before = standings
            for player in Set(outcomes.keys).union(before.keys) {
                let start = before[player]?.rating ?? .initial
                let games = (outcomes[player] ?? []).map {
                    Glicko2.Outcome(opponent: before[$0.opponent]?.rating ?? .initial, score: $0.score)
                }
                // A player not yet rated and without games this day stays unrated.
                if games.isEmpty && (before[player] == nil || seeded.contains(player)) { continue }
                seeded.remove(player)
                var standing = standings[player] ?? Standing(name: player, rating: start)
                standing.rating = Glicko2.update(start, outcomes: games)
                standing.games += games.count
                standings[player] = standing
            }
        }
        return standings
    }
}
