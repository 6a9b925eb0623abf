import EggTestSupport
import Foundation
import Testing

/// Bots over real sockets (multicast on 127.0.0.1 only) and replay of their logs.
@Suite("bots and replay", .serialized, .tags(.slow), .slowTier)
struct BotAndReplayTests {
    struct Summary {
        var peer: String
        var games: Int
        var checkpointsVerified: Int
        var desyncs: Int
        var log: String
    }

    /// The entries of a `--summary` file, one a peer.
    static func summaryEntries(_ path: String) throws -> [[String: Any]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require(root["bots"] as? [[String: Any]])
    }

    static func readSummary(_ path: String) throws -> [Summary] {
        try summaryEntries(path).map { bot in
            Summary(
                peer: try #require(bot["peer"] as? String), games: try #require(bot["games"] as? Int),
                checkpointsVerified: try #require(bot["checkpointsVerified"] as? Int),
                desyncs: try #require(bot["desyncs"] as? Int), log: try #require(bot["log"] as? String))
        }
    }

    static func verify(_ log: String, passphrase: String? = nil) throws -> (Harness.Result, [String: Any]?) {
        let result = try Harness.run(["replay", "--verify", log] + (passphrase.map { ["--passphrase", $0] } ?? []))
        let json = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return (result, json)
    }

    /// Runs `count` bot processes in one room until each played `games` games.
    static func runBots(processes: Int, games: Int, directory: String, level: String = "medium") throws -> [Summary] {
        let port = TestPorts.next()
        var runs: [Process] = []
        for index in 0..<processes {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Harness.binary)
            process.arguments = [
                "bot", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "bots-\(port)",
                "--players", "\(processes)", "--games", "\(games)", "--level", level, "--speed", "9", "--seconds", "120",
                "--id", String(0x100 + index, radix: 16), "--log", "\(directory)/bot\(index).jsonl",
                "--summary", "\(directory)/summary\(index).json",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            runs.append(process)
        }
        for process in runs { process.waitUntilExit() }
        for process in runs { #expect(process.terminationStatus == 0) }
        return try (0..<processes).flatMap { try readSummary("\(directory)/summary\($0).json") }
    }

    @Test("three bot processes on 127.0.0.1 play whole matches; their logs verify and agree")
    func threeBotsPlayAndAgree() throws {
        let directory = try Harness.temporaryDirectory("bots")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bots = try Self.runBots(processes: 3, games: 2, directory: directory)
        #expect(bots.count == 3)
        var decisions: [[String]] = []
        var players: [[String: [String: AnyHashable]]] = []
        for bot in bots {
            #expect(bot.games >= 2, "bot \(bot.peer) played \(bot.games) games")
            #expect(bot.desyncs == 0)
            #expect(bot.checkpointsVerified > 10)
            let (result, json) = try Self.verify(bot.log)
            #expect(result.status == 0, "\(bot.log): \(result.stderr)")
            let report = try #require(json)
            #expect(report["ok"] as? Bool == true)
            #expect((report["checkpoints"] as? Int ?? 0) > 10)
            decisions.append(report["decisions"] as? [String] ?? [])
            players.append((report["players"] as? [String: [String: AnyHashable]]) ?? [:])
        }
        // Every log decided the same egg sequence where they overlap, and ends with the same grids.
        let shortest = decisions.map(\.count).min() ?? 0
        #expect(shortest > 20)
        for other in decisions.dropFirst() {
            #expect(Array(other.prefix(shortest)) == Array(decisions[0].prefix(shortest)))
        }
        for other in players.dropFirst() { #expect(other == players[0]) }
    }

    @Test("bot --spectators: watchers in the bots' process follow them, check every checkpoint of the games they mirror and log the same match")
    func spectatorsWatch() throws {
        let directory = try Harness.temporaryDirectory("watchers")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = TestPorts.next()
        // Two games: a watcher follows the players from a snapshot once they formed their group,
        // and the bots may start their first game before that (then it sees that one as
        // pictures); the second it mirrors from its start.
        let result = try Harness.run([
            "bot", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "watch-\(port)", "--count", "2",
            "--spectators", "2", "--players", "2", "--games", "2", "--speed", "9", "--seconds", "300",
            "--log", "\(directory)/peer.jsonl", "--summary", "\(directory)/summary.json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let entries = try Self.summaryEntries("\(directory)/summary.json")
        #expect(entries.map { $0["role"] as? String } == ["player", "player", "spectator", "spectator"])
        for entry in entries where entry["role"] as? String == "spectator" {
            let synced = entry["syncedAfterMs"] as? Double
            // About 1 s here (the players' own discovery, then a round trip); 5 s leaves room on a
            // loaded machine (the 2 s goal is measured by scripts/capacity.sh, not here).
            #expect(synced != nil && synced! < 5_000, "a watcher followed the players after \(String(describing: synced)) ms")
        }
        let summaries = try Self.readSummary("\(directory)/summary.json")
        var decisions: [[String]] = []
        for peer in summaries {
            #expect(peer.desyncs == 0)
            #expect(peer.checkpointsVerified > 10, "\(peer.peer) verified \(peer.checkpointsVerified) checkpoints")
            let (verified, json) = try Self.verify(peer.log)
            #expect(verified.status == 0, "\(peer.log): \(verified.stderr)")
            decisions.append(json?["decisions"] as? [String] ?? [])
        }
        // The players decided the same rounds; a watcher's decisions are a run of theirs (from
        // the round where its snapshot left the first game on).
        let first = decisions[0]
        let shortest = min(first.count, decisions[1].count)
        #expect(shortest > 10 && Array(decisions[1].prefix(shortest)) == Array(first.prefix(shortest)))
        for watcher in decisions.dropFirst(2) {
            let start = first.firstIndex(of: watcher.first ?? "")
            #expect(start != nil && watcher.count > 10, "a watcher's first decision is none of the players'")
            if let start {
                let common = min(watcher.count, first.count - start)
                #expect(common > 10 && Array(first[start...].prefix(common)) == Array(watcher.prefix(common)))
            }
        }
    }

    @Test("watchers alone in a room wait quietly for players instead of voting starts that fail")
    func watchersAloneWait() throws {
        let directory = try Harness.temporaryDirectory("watchers-alone")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = TestPorts.next()
        let result = try Harness.run([
            "bot", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "alone-\(port)", "--count", "0",
            "--spectators", "2", "--seconds", "4", "--log", "\(directory)/peer.jsonl", "--summary", "\(directory)/summary.json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let entries = try Self.summaryEntries("\(directory)/summary.json")
        #expect(entries.count == 2)
        for entry in entries {
            // A lobby greeting or two, not a start proposal every tick (60 a second).
            let sent = entry["sent"] as? Int ?? -1
            #expect((0..<20).contains(sent), "a lone watcher sent \(sent) messages in 4 s")
            #expect(entry["games"] as? Int == 0)
        }
    }

    @Test("replay --verify: good, edited checkpoint, removed message, truncated line, corrupt line")
    func replayChecksLogs() throws {
        let directory = try Harness.temporaryDirectory("replay")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bots = try Self.runBots(processes: 2, games: 1, directory: directory)
        let log = try #require(bots.first?.log)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count > 50)

        let (good, goodJSON) = try Self.verify(log)
        #expect(good.status == 0)
        #expect(goodJSON?["ok"] as? Bool == true)
        #expect((goodJSON?["messages"] as? Int ?? 0) > 0)

        // A flipped checkpoint hash: exit 1 naming the mismatch.
        let checkpoint = try #require(lines.lastIndex { $0.contains(#""type":"checkpoint""#) })
        var flipped = lines
        let flippedHash = try #require(flipped[checkpoint].range(of: #""hash":"[0-9a-f]+""#, options: .regularExpression))
        flipped[checkpoint].replaceSubrange(flippedHash, with: #""hash":"0123456789abcdef""#)
        let flippedPath = directory + "/flipped.jsonl"
        try (flipped.joined(separator: "\n") + "\n").write(toFile: flippedPath, atomically: true, encoding: .utf8)
        // The line's digest no longer matches: exit 2 naming it (a re-sealed edit that only
        // the checkpoints catch exits 1: ConsensusTests' ReplayTests).
        let (mismatch, _) = try Self.verify(flippedPath)
        #expect(mismatch.status == 2)
        #expect(mismatch.stderr.contains("line \(checkpoint + 1):"), "stderr: \(mismatch.stderr)")

        // A removed move message: the mirror diverges from its owner's checkpoints.
        let move = try #require(lines.firstIndex {
            $0.contains(#""type":"inputs""#) && ($0.contains(#""left""#) || $0.contains(#""right""#))
        })
        var removed = lines
        removed.remove(at: move)
        let removedPath = directory + "/removed.jsonl"
        try (removed.joined(separator: "\n") + "\n").write(toFile: removedPath, atomically: true, encoding: .utf8)
        let (broken, _) = try Self.verify(removedPath)
        #expect(broken.status == 2, "a log with a removed move still verified: \(broken.stdout)")
        #expect(broken.stderr.contains("line \(move + 1):"), "stderr: \(broken.stderr)")

        // A log cut off mid-line replays up to its last whole line and says so.
        let truncatedPath = directory + "/truncated.jsonl"
        let whole = lines.prefix(lines.count - 1).joined(separator: "\n") + "\n"
        try (whole + String(lines[lines.count - 1].prefix(20))).write(toFile: truncatedPath, atomically: true, encoding: .utf8)
        let (truncated, truncatedJSON) = try Self.verify(truncatedPath)
        #expect(truncated.status == 0)
        #expect(truncatedJSON?["truncatedAtLine"] as? Int == lines.count)
        #expect(truncated.stderr.contains("line \(lines.count)"))

        // A corrupt line in the middle: exit 2 naming it.
        var corrupt = lines
        corrupt[10] = "{\"from\": nonsense"
        let corruptPath = directory + "/corrupt.jsonl"
        try (corrupt.joined(separator: "\n") + "\n").write(toFile: corruptPath, atomically: true, encoding: .utf8)
        let (bad, _) = try Self.verify(corruptPath)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("line 11"), "stderr: \(bad.stderr)")
        #expect(bad.stderr.split(separator: "\n").count == 1)

        // A missing file is bad input.
        let (missing, _) = try Self.verify(directory + "/nope.jsonl")
        #expect(missing.status == 2)
    }
}
