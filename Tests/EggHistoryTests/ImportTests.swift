import Consensus
import Foundation
import PeerNet
import Testing
@testable import EggHistory

@Suite struct ImportTests {
    @Test func realBotLogsImportWithTheirGames() throws {
        let logs = Fixtures.logs
        try #require(logs.count >= 2, "Fixtures/ holds the recorded bot logs")
        try withTemporaryDirectory("import") { dir in
            let database = try HistoryDatabase(path: dir + "/h.sqlite")
            var added = 0
            for log in logs { added += try database.importLog(path: log).added }
            let matches = try database.matches()
            #expect(matches.count == added)
            #expect(added >= 2 * logs.count, "each log holds two matches of one game")
            for match in matches {
                let record = match.record
                #expect(record.players.count == 2)
                #expect(record.players.allSatisfy { $0.name?.hasPrefix("bot-") == true })
                #expect(!record.abandoned)
                #expect(record.games.count == 1)
                #expect(record.settings.speed == 9)
                for game in record.games {
                    #expect(game.mirrored)
                    #expect(game.stats.count == 2)
                    #expect((game.durationSeconds ?? 0) > 0)
                    #expect(game.stats.allSatisfy { $0.pairsPlaced > 0 })
                }
                if let winner = record.winner { #expect(record.players.first { $0.id == winner }?.wins == 1) }
            }
        }
    }

    /// The two peers of one match recorded it from their own logs: the same games, winners,
    /// chains and figures (the log proves them the same way on both sides).
    @Test func bothPeersRecordTheirMatchesIdentically() throws {
        let logs = Fixtures.logs
        try #require(logs.count >= 2)
        try withTemporaryDirectory("peers") { dir in
            let database = try HistoryDatabase(path: dir + "/h.sqlite")
            for log in logs { try database.importLog(path: log) }
            let byMatch = Dictionary(grouping: try database.matches(), by: \.fingerprint)
            let pairs = byMatch.values.filter { $0.count == 2 }
            #expect(!pairs.isEmpty, "the fixtures hold both peers' logs of the same matches")
            for pair in pairs {
                let (a, b) = (pair[0].record, pair[1].record)
                #expect(a.recorder != b.recorder)
                #expect(a.winner == b.winner)
                #expect(a.players == b.players)
                #expect(a.games.map(\.stats) == b.games.map(\.stats))
                #expect(a.games.map(\.winner) == b.games.map(\.winner))
            }
        }
    }

    @Test func importingTheSameLogTwiceChangesNothing() throws {
        let log = try #require(Fixtures.logs.first)
        try withTemporaryDirectory("twice") { dir in
            let database = try HistoryDatabase(path: dir + "/h.sqlite")
            let first = try database.importLog(path: log)
            let before = try database.matches()
            let second = try database.importLog(path: log)
            #expect(first.added >= 1)
            #expect(second.added == 0 && second.updated == 0)
            #expect(second.knownLog)
            #expect(try database.matches() == before)
        }
    }

    @Test func aDamagedLogIsRefusedNamingTheLine() throws {
        let log = try #require(Fixtures.logs.first)
        try withTemporaryDirectory("damaged") { dir in
            var lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
            // Line 30: one digit of its "at" changed.
            let line = lines[29]
            let at = try #require(line.range(of: "\"at\":"))
            let digit = line.index(at.upperBound, offsetBy: 3)
            lines[29] = line.replacingCharacters(in: digit...digit, with: line[digit] == "1" ? "2" : "1")
            let damaged = dir + "/damaged.jsonl"
            try (lines.joined(separator: "\n") + "\n").write(toFile: damaged, atomically: true, encoding: .utf8)
            let database = try HistoryDatabase(path: dir + "/h.sqlite")
            do {
                try database.importLog(path: damaged)
                Issue.record("a damaged log was imported")
            } catch let refused as LogRefused {
                #expect(refused.description.contains(damaged))
                #expect(refused.description.contains("line 30"))
            }
            #expect(try database.matches().isEmpty)
        }
    }

    /// A log read while its second match went on (a cut copy) records that match as abandoned;
    /// the whole log then completes the same record (same key), adding nothing twice.
    @Test func aMatchInProgressIsAbandonedUntilTheLogShowsItsEnd() throws {
        let log = try #require(Fixtures.logs.first)
        try withTemporaryDirectory("cut") { dir in
            let whole = try HistoryDatabase(path: dir + "/whole.sqlite")
            try whole.importLog(path: log)
            let last = try #require(try whole.matches().first)
            let text = try String(contentsOfFile: log, encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            // Cut a few lines after the last match started.
            let cut = dir + "/cut.jsonl"
            try (lines.prefix(last.record.startLine + 5).joined(separator: "\n") + "\n").write(toFile: cut, atomically: true, encoding: .utf8)
            let database = try HistoryDatabase(path: dir + "/h.sqlite")
            try database.importLog(path: cut)
            let partial = try database.matches()
            #expect(partial.first?.record.key == last.record.key)
            #expect(partial.first?.record.abandoned == true)
            let result = try database.importLog(path: log)
            #expect(result.updated == 1)
            let after = try database.matches()
            #expect(after.count == partial.count)
            #expect(after.first?.record == last.record)
        }
    }

    /// Two connections (as two processes would) write at once: WAL and the busy timeout make
    /// the second wait for the first, and no match is lost.
    @Test func twoWritersAtOnceLoseNoMatch() throws {
        try withTemporaryDirectory("writers") { dir in
            let path = dir + "/h.sqlite"
            let perWriter = 60
            let failures = Failures()
            DispatchQueue.concurrentPerform(iterations: 2) { writer in
                do {
                    let database = try HistoryDatabase(path: path)
                    for index in 0..<perWriter {
                        let key = "w\(writer)-\(index)"
                        try database.record(Samples.log(matches: [Samples.match(key: key, startedAt: Int64(index) * 1_000_000)], digest: key))
                    }
                } catch {
                    failures.add("\(error)")
                }
            }
            #expect(failures.all.isEmpty)
            let counts = try HistoryDatabase(path: path).counts()
            #expect(counts.matches == 2 * perWriter)
        }
    }
}

final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ item: String) { lock.withLock { items.append(item) } }
    var all: [String] { lock.withLock { items } }
}
