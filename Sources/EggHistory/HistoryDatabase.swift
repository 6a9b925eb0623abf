import Consensus
import Foundation
import GRDB
import PeerNet
#if canImport(Glibc)
import Glibc
#endif

/// Why the history database could not be used: one line naming the file.
public struct HistoryError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String
    public var description: String { "the history database '\(path)' \(reason)" }

    static func wrap(_ error: any Error, path: String) -> HistoryError {
        if let history = error as? HistoryError { return history }
        if let db = error as? DatabaseError {
            let message = db.message ?? "\(db.resultCode)"
            switch db.resultCode.primaryResultCode {
            case .SQLITE_NOTADB, .SQLITE_CORRUPT: return HistoryError(path: path, reason: "is corrupt or not a database (\(message))")
            case .SQLITE_BUSY, .SQLITE_LOCKED: return HistoryError(path: path, reason: "is locked by another program (\(message))")
            case .SQLITE_FULL: return HistoryError(path: path, reason: "cannot grow: the disk is full (\(message))")
            case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN, .SQLITE_AUTH:
                return HistoryError(path: path, reason: "cannot be opened for writing (\(message))")
            default: return HistoryError(path: path, reason: "failed: \(message)")
            }
        }
        return HistoryError(path: path, reason: "failed: \(error)")
    }
}

/// What importing one log did.
public struct ImportResult: Sendable, Hashable {
    /// Matches recorded for the first time.
    public var added = 0
    /// Matches recorded before as abandoned (a log read while the match went on) that this
    /// log shows further on.
    public var updated = 0
    /// Matches this log holds that were recorded already (as they are).
    public var unchanged = 0
    /// The log was imported before exactly as it is (its last digest is known): nothing read.
    public var knownLog = false

    public init() {}
}

/// The local match history (docs/history.md): an SQLite file through GRDB, in WAL mode with a
/// busy timeout (several `eggs-tui` write to it at once), its schema kept by migrations.
public final class HistoryDatabase: @unchecked Sendable {
    public let path: String
    let queue: DatabaseQueue

    /// How long a writer waits for another's transaction before it gives up.
    public static let busyTimeout: TimeInterval = 10

    /// `$XDG_DATA_HOME/eggs/history.sqlite` (default `~/.local/share/eggs/history.sqlite`).
    public static func defaultPath() -> String {
        let base: String
        if let xdg = getenv("XDG_DATA_HOME").map({ String(cString: $0) }), xdg.hasPrefix("/") {
            base = xdg
        } else {
            let home = getenv("HOME").map { String(cString: $0) } ?? "/tmp"
            base = home + "/.local/share"
        }
        return base + "/eggs/history.sqlite"
    }

    /// Opens (creating it and its directory when missing) and migrates the database.
    /// - Throws: ``HistoryError`` naming the file (corrupt, locked, read-only, full).
    public init(path: String = HistoryDatabase.defaultPath(), migrateUpTo target: String? = nil) throws(HistoryError) {
        self.path = path
        do {
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            var config = Configuration()
            config.journalMode = .wal
            config.busyMode = .timeout(Self.busyTimeout)
            config.foreignKeysEnabled = true
            config.label = "eggs-history"
            // Two processes opening a new file at once both find the migration missing; the
            // second fails on the tables the first made (its transaction waited and rolled
            // back) and, on the next try, finds the migration applied. Switching a new file to
            // WAL can also find it busy before the busy timeout is in force: tried again too,
            // for up to about 2 s.
            var attempt = 0
            var opened: DatabaseQueue?
            while true {
                do {
                    let queue = try opened ?? DatabaseQueue(path: path, configuration: config)
                    opened = queue
                    if let target { try Self.migrator.migrate(queue, upTo: target) } else { try Self.migrator.migrate(queue) }
                    break
                } catch let error as DatabaseError where attempt < 40 && [.SQLITE_ERROR, .SQLITE_BUSY, .SQLITE_LOCKED].contains(error.resultCode.primaryResultCode) {
                    attempt += 1
                    usleep(50_000)
                }
            }
            guard let opened else { preconditionFailure("the loop ends with the queue open") }
            queue = opened
        } catch {
            throw HistoryError.wrap(error, path: path)
        }
    }

    /// The schema, migration by migration (never edited once released: a new change is a new
    /// migration). `v1`: the tables; `v2`: the indexes the queries use.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE log (
                    id INTEGER PRIMARY KEY,
                    path TEXT NOT NULL,
                    peer TEXT NOT NULL,
                    room TEXT NOT NULL,
                    lastDigest TEXT NOT NULL UNIQUE,
                    lines INTEGER NOT NULL,
                    complete INTEGER NOT NULL,
                    importedAt INTEGER NOT NULL
                );
                CREATE TABLE match (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    key TEXT NOT NULL UNIQUE,
                    logPath TEXT NOT NULL,
                    logDigest TEXT NOT NULL,
                    startLine INTEGER NOT NULL,
                    startedAt INTEGER NOT NULL,
                    endedAt INTEGER,
                    room TEXT NOT NULL,
                    rules TEXT NOT NULL,
                    speed INTEGER NOT NULL,
                    colors INTEGER NOT NULL,
                    gamesPerMatch INTEGER NOT NULL,
                    startingHeight INTEGER NOT NULL,
                    recorder TEXT NOT NULL,
                    winner TEXT,
                    abandoned INTEGER NOT NULL
                );
                CREATE TABLE player (
                    matchId INTEGER NOT NULL REFERENCES match(id) ON DELETE CASCADE,
                    peer TEXT NOT NULL,
                    name TEXT,
                    incarnation INTEGER,
                    wins INTEGER NOT NULL,
                    PRIMARY KEY (matchId, peer)
                );
                CREATE TABLE game (
                    id INTEGER PRIMARY KEY,
                    matchId INTEGER NOT NULL REFERENCES match(id) ON DELETE CASCADE,
                    number INTEGER NOT NULL,
                    game INTEGER NOT NULL,
                    winner TEXT,
                    durationSeconds REAL,
                    mirrored INTEGER NOT NULL,
                    UNIQUE (matchId, number)
                );
                CREATE TABLE gameStat (
                    gameId INTEGER NOT NULL REFERENCES game(id) ON DELETE CASCADE,
                    peer TEXT NOT NULL,
                    largestChain INTEGER,
                    pairsPlaced INTEGER,
                    garbageSent INTEGER,
                    garbageReceived INTEGER,
                    toppedOut INTEGER,
                    PRIMARY KEY (gameId, peer)
                );
                """)
        }
        migrator.registerMigration("v2") { db in
            try db.execute(sql: """
                CREATE INDEX matchStartedAt ON match(startedAt);
                CREATE INDEX playerName ON player(name);
                CREATE INDEX gameMatch ON game(matchId);
                """)
        }
        return migrator
    }

    /// The migrations applied, in order.
    public func appliedMigrations() throws(HistoryError) -> [String] {
        do {
            return try queue.read { db in try Self.migrator.appliedMigrations(db) }
        } catch {
            throw HistoryError.wrap(error, path: path)
        }
    }

    /// Whether a log with this last digest was imported before.
    public func knowsLog(lastDigest: String) throws(HistoryError) -> Bool {
        do {
            return try queue.read { db in
                try Int.fetchOne(db, sql: "SELECT 1 FROM log WHERE lastDigest = ?", arguments: [lastDigest]) != nil
            }
        } catch {
            throw HistoryError.wrap(error, path: path)
        }
    }

    /// Records a verified log's matches in one transaction: a match whose key is known is left
    /// as it is, unless it was recorded abandoned and this log shows more of it (more games, or
    /// its end), which replaces it under the same key.
    @discardableResult
    public func record(_ log: LogContents) throws(HistoryError) -> ImportResult {
        do {
            return try queue.writeWithoutTransaction { db in
                var result = ImportResult()
                try db.inTransaction(.immediate) {
                    if try Int.fetchOne(db, sql: "SELECT 1 FROM log WHERE lastDigest = ?", arguments: [log.lastDigest]) != nil {
                        result.knownLog = true
                        result.unchanged = log.matches.count
                        return .commit
                    }
                    try db.execute(sql: """
                        INSERT INTO log (path, peer, room, lastDigest, lines, complete, importedAt) VALUES (?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [log.path, log.peer.hex, log.room, log.lastDigest, log.lines, log.complete,
                                         Int64(Date().timeIntervalSince1970)])
                    for match in log.matches {
                        let existing = try Row.fetchOne(db, sql: """
                            SELECT id, abandoned, (SELECT COUNT(*) FROM game WHERE matchId = match.id) AS games FROM match WHERE key = ?
                            """, arguments: [match.key])
                        if let existing {
                            let wasAbandoned: Bool = existing["abandoned"]
                            let games: Int = existing["games"]
                            guard wasAbandoned, !match.abandoned || match.games.count > games else {
                                result.unchanged += 1
                                continue
                            }
                            try db.execute(sql: "DELETE FROM match WHERE id = ?", arguments: [existing["id"] as Int64])
                            result.updated += 1
                        } else {
                            result.added += 1
                        }
                        try Self.insert(match, logPath: log.path, logDigest: log.lastDigest, db: db)
                    }
                    return .commit
                }
                return result
            }
        } catch {
            throw HistoryError.wrap(error, path: path)
        }
    }

    private static func insert(_ match: MatchRecord, logPath: String, logDigest: String, db: Database) throws {
        try db.execute(sql: """
            INSERT INTO match (key, logPath, logDigest, startLine, startedAt, endedAt, room, rules, speed, colors, gamesPerMatch,
                               startingHeight, recorder, winner, abandoned)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [match.key, logPath, logDigest, match.startLine, match.startedAt, match.endedAt, match.room,
                             match.settings.rules, match.settings.speed, match.settings.colors, match.settings.gamesPerMatch,
                             match.settings.startingHeight, match.recorder.hex, match.winner?.hex, match.abandoned])
        let matchId = db.lastInsertedRowID
        for player in match.players {
            try db.execute(sql: "INSERT INTO player (matchId, peer, name, incarnation, wins) VALUES (?, ?, ?, NULL, ?)",
                           arguments: [matchId, player.id.hex, player.name, player.wins])
        }
        for game in match.games {
            try db.execute(sql: "INSERT INTO game (matchId, number, game, winner, durationSeconds, mirrored) VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: [matchId, game.number, Int64(game.game), game.winner?.hex, game.durationSeconds, game.mirrored])
            let gameId = db.lastInsertedRowID
            for stat in game.stats {
                try db.execute(sql: """
                    INSERT INTO gameStat (gameId, peer, largestChain, pairsPlaced, garbageSent, garbageReceived, toppedOut)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [gameId, stat.player.hex, stat.largestChain, stat.pairsPlaced, stat.garbageSent,
                                     stat.garbageReceived, stat.toppedOut])
            }
        }
    }

    /// Reads and verifies the log at `path` (every time: a log is never taken on its last
    /// digest alone), then records its matches (``record(_:)``).
    /// - Throws: ``LogRefused`` (the log does not verify, or cannot be read), ``HistoryError``.
    @discardableResult
    public func importLog(path logPath: String, passphrase: String? = nil) throws -> ImportResult {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: logPath)))
        } catch {
            throw LogRefused(path: logPath, reason: "cannot be read (\((error as NSError).localizedDescription))")
        }
        var contents = try LogImporter.read(text: bytes, path: logPath, passphrase: passphrase)
        // Recorded with its absolute path, so `history show`'s replay line works from anywhere.
        if !logPath.hasPrefix("/") { contents.path = FileManager.default.currentDirectoryPath + "/" + logPath }
        return try record(contents)
    }
}
