import Consensus
import Foundation
import PeerNet
import Testing
@testable import EggHistory

/// A directory of its own under the system's temporary directory, removed when the test ends
/// (passed or failed).
func withTemporaryDirectory<T>(_ name: String, _ body: (String) throws -> T) throws -> T {
    let path = NSTemporaryDirectory() + "eggs-history-\(name)-\(getpid())-\(Int.random(in: 0...1_000_000))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// The recorded bot logs (Fixtures/): real logs of `eggs-tui bot` on 127.0.0.1.
enum Fixtures {
    static var directory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path
    }

    static var logs: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".jsonl") }.sorted()
            .map { directory + "/" + $0 }
    }
}

@Suite struct MigrationTests {
    @Test func anEmptyFileIsMigratedToTheLatestSchema() throws {
        try withTemporaryDirectory("empty") { dir in
            let path = dir + "/history.sqlite"
            FileManager.default.createFile(atPath: path, contents: Data())
            let database = try HistoryDatabase(path: path)
            #expect(try database.appliedMigrations() == ["v1", "v2"])
            let counts = try database.counts()
            #expect(counts.matches == 0 && counts.games == 0)
            // WAL mode, as every writer expects.
            let mode = try database.queue.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
            #expect(mode == "wal")
        }
    }

    @Test func aMissingDirectoryIsCreated() throws {
        try withTemporaryDirectory("missing") { dir in
            let database = try HistoryDatabase(path: dir + "/a/b/history.sqlite")
            #expect(try database.appliedMigrations() == ["v1", "v2"])
        }
    }

    @Test func theFirstSchemaIsMigratedKeepingItsMatches() throws {
        try withTemporaryDirectory("v1") { dir in
            let path = dir + "/history.sqlite"
            do {
                let first = try HistoryDatabase(path: path, migrateUpTo: "v1")
                #expect(try first.appliedMigrations() == ["v1"])
                try first.record(Samples.log(matches: [Samples.match(key: "k1", startedAt: 1_000_000)]))
            }
            let latest = try HistoryDatabase(path: path)
            #expect(try latest.appliedMigrations() == ["v1", "v2"])
            let matches = try latest.matches()
            #expect(matches.count == 1)
            #expect(matches.first?.record == Samples.match(key: "k1", startedAt: 1_000_000))
        }
    }

    @Test func aCorruptFileIsAnErrorNamingIt() throws {
        try withTemporaryDirectory("corrupt") { dir in
            let path = dir + "/history.sqlite"
            let garbage = Data((0..<8_192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            FileManager.default.createFile(atPath: path, contents: garbage)
            do {
                _ = try HistoryDatabase(path: path)
                Issue.record("a corrupt file opened")
            } catch let error as HistoryError {
                #expect(error.description.contains(path))
                #expect(error.description.contains("corrupt or not a database"))
                #expect(!error.description.contains("\n"))
            }
        }
    }
}

/// Records made by hand (the database's round trip), and the Glicko-2 worked example.
enum Samples {
    static let alice = PeerID(0xa11ce), bob = PeerID(0xb0b)

    /// Players and figures in ID order, as the database returns them.
    static func match(key: String, startedAt: Int64, winner: PeerID? = Samples.alice, abandoned: Bool = false, game: UInt32 = 0,
                      recorder: PeerID = Samples.alice) -> MatchRecord {
        MatchRecord(
            key: key, startLine: 12, startedAt: startedAt, endedAt: startedAt + 60_000_000, room: "eggs",
            settings: .init(rules: "sfe", speed: 3, colors: 4, gamesPerMatch: 1, startingHeight: 0), recorder: recorder,
            players: [.init(id: bob, name: "bob", wins: winner == bob ? 1 : 0), .init(id: alice, name: "alice", wins: winner == alice ? 1 : 0)],
            games: [.init(number: 1, game: game, winner: winner, durationSeconds: 59.5, mirrored: true, stats: [
                .init(player: bob, largestChain: 2, pairsPlaced: 38, garbageSent: 5, garbageReceived: 12, toppedOut: winner != bob),
                .init(player: alice, largestChain: 3, pairsPlaced: 40, garbageSent: 12, garbageReceived: 5, toppedOut: winner != alice),
            ])],
            winner: winner, abandoned: abandoned)
    }

    static func log(matches: [MatchRecord], digest: String = UUID().uuidString) -> LogContents {
        LogContents(path: "/tmp/x.jsonl", peer: alice, room: "eggs", lastDigest: digest, lines: 100, complete: true, matches: matches)
    }
}

@Suite struct GlickoTests {
    /// Glickman's worked example ("Example of the Glicko-2 system"): 1500/200/0.06 against
    /// 1400/30, 1550/100 and 1700/300, winning the first and losing the others, τ = 0.5.
    @Test func theWorkedExampleOfThePaper() {
        let player = Glicko2Rating(rating: 1500, deviation: 200, volatility: 0.06)
        let after = Glicko2.update(player, outcomes: [
            .init(opponent: Glicko2Rating(rating: 1400, deviation: 30, volatility: 0.06), score: 1),
            .init(opponent: Glicko2Rating(rating: 1550, deviation: 100, volatility: 0.06), score: 0),
            .init(opponent: Glicko2Rating(rating: 1700, deviation: 300, volatility: 0.06), score: 0),
        ], tau: 0.5)
        #expect(abs(after.rating - 1464.06) < 0.01)
        #expect(abs(after.deviation - 151.52) < 0.01)
        #expect(abs(after.volatility - 0.05999) < 0.00001)
    }

    @Test func aPeriodWithoutGamesOnlyWidensTheDeviation() {
        let player = Glicko2Rating(rating: 1500, deviation: 200, volatility: 0.06)
        let after = Glicko2.update(player, outcomes: [])
        #expect(after.rating == 1500)
        #expect(abs(after.deviation - (200.0 * 200 / (173.7178 * 173.7178) + 0.0036).squareRoot() * 173.7178) < 1e-9)
    }

    @Test func winsRaiseTheWinnerAndCountWithYou() throws {
        try withTemporaryDirectory("ratings") { dir in
            let database = try HistoryDatabase(path: dir + "/h.sqlite")
            try database.record(Samples.log(matches: [
                Samples.match(key: "a", startedAt: 1_000_000, game: 0), Samples.match(key: "b", startedAt: 2_000_000, game: 1),
                Samples.match(key: "c", startedAt: 90_000_000_000, winner: Samples.bob, game: 2),
                // The first match again, from bob's log: rated once, and bob's record with alice.
                Samples.match(key: "a-bob", startedAt: 1_000_000, game: 0, recorder: Samples.bob),
            ]))
            let standings = Ratings.standings(try database.matches())
            let bob = try #require(standings["bob"]), alice = try #require(standings["alice"])
            #expect(bob.youWon == 2 && bob.youLost == 1)
            #expect(alice.youWon == 0 && alice.youLost == 1)
            // Rated once: the match read from both logs is one game for each.
            #expect(alice.games == 3 && bob.games == 3)
            #expect(alice.rating.rating > bob.rating.rating)
            #expect(HistoryReport.headToHead(name: "bob", standings: standings).hasSuffix(", 2-1 with you"))
            #expect(HistoryReport.headToHead(name: "carol", standings: standings) == "carol")
        }
    }
}
