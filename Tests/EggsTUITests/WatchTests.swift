import EggTestSupport
import Foundation
import Testing
import PeerNet
@testable import eggs_tui

/// Replays, recordings and spectators show a match as its players saw it: games counted from 1,
/// each game's banner and winner, and the results table with the wins (issue 35, "Watch").
@Suite("watching a match: replays, casts and spectators", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"),
       .tags(.slow), .slowTier)
struct WatchTests {
    /// Two bots in one process play one match of one game on 127.0.0.1; returns a log of it.
    /// The bots stop when the game ends; their 300 s limit only bounds a stuck run (a game of
    /// medium bots at speed 7 has outlasted 80 s: the log then held no result).
    static func botMatchLog(directory: String, room: String, port: Int) throws -> String {
        let bots = try Harness.run([
            "bot", "--interface", "127.0.0.1", "--port", "\(port)", "--room", room, "--count", "2",
            "--players", "2", "--games", "1", "--level", "medium", "--speed", "7", "--seconds", "300", "--id", "a00", "--quiet",
            "--log", "\(directory)/bot.jsonl", "--summary", "\(directory)/summary.json",
        ], timeoutSeconds: 320)
        try #require(bots.status == 0, "bots: \(bots.stderr)")
        let summary = try BotAndReplayTests.summaryEntries("\(directory)/summary.json")
        return try #require(summary.first?["log"] as? String)
    }

    /// The results row of `name` in a screen's table: its wins column.
    static func wins(of name: String, in screen: String) -> Int? {
        for line in screen.split(separator: "\n") {
            let cells = line.split(separator: " ", omittingEmptySubsequences: true)
            if cells.count >= 7, cells[0] == name { return Int(cells[1]) }
        }
        return nil
    }

    @Test("a replay ends on the winner and the results table with the wins; its cast counts games from 1 and shows the banner and the winner")
    func replayAndCastTellTheEnd() throws {
        let directory = try Harness.temporaryDirectory("watch-replay")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = TestPorts.next()
        let log = try Self.botMatchLog(directory: directory, room: "watch-\(port)", port: port)

        // The recording: "game 1" (not the match's internal game counter), the game's banner
        // over its final boards, and the results with the winner.
        let cast = "\(directory)/match.cast"
        let run = try Harness.run(["replay", log, "--cast", cast, "--speed", "8"])
        try #require(run.status == 0, "replay --cast: \(run.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let headline = try #require(report["result"] as? String, "no result in \(run.stdout)")
        let winner = try #require(headline.firstMatch(of: /^(bot-[0-9a-f]{4}) wins the match\.$/), "headline '\(headline)'").1
        let (_, events) = try CastTests.read(cast)
        let output = events.filter { $0.code == "o" }.map(\.data).joined()
        let games = output.matches(of: /game (\d+)[, ]/).map { Int($0.1)! }
        #expect(!games.isEmpty && games.allSatisfy { $0 == 1 }, "game numbers in the cast: \(Set(games))")
        #expect(output.contains("game 1, best of 1"), "no 'game 1, best of 1' in the cast")
        #expect(output.contains("\(winner) wins game 1."), "no banner naming the winner of game 1")
        #expect(output.contains("Games won: "), "no banner with the games won")
        #expect(output.contains("\(winner) wins the match."), "no results headline")
        #expect(output.contains("largest chain"), "no results table")
        let played = try CastTests.cat(cast)
        #expect(played.status == 0, "asciinema cat: \(played.stderr)")
        // The results table's row of the winner: its name, then 1 win.
        let row = try Regex("  \(winner) +1 +[0-9]+ +[0-9]+ ")
        #expect(played.stdout.contains(row), "the winner's row: \(played.stdout.suffix(2000))")

        // The terminal replay ends on the same results, the winner's win counted.
        let state = try Harness.temporaryDirectory("watch-replay-state")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let session = try TmuxSession(command: "\(Harness.binary) replay \(log) --speed 16; echo EXIT=$?; sleep 60",
                                      environment: ["XDG_STATE_HOME": state])
        defer { session.close() }
        let results = try #require(session.waitFor("largest chain", seconds: 60), "the replay did not end on results: \(session.screen())")
        #expect(results.contains("\(winner) wins the match."), "\(results)")
        #expect(results.contains("Match over: 1 game,"), "\(results)")
        #expect(results.contains("end of log"), "\(results)")
        #expect(Self.wins(of: String(winner), in: results) == 1, "\(results)")
        let loser = results.split(separator: "\n").compactMap { line -> String? in
            let cells = line.split(separator: " ")
            return cells.count >= 7 && cells[0].hasPrefix("bot-") && cells[0] != winner ? String(cells[0]) : nil
        }.first
        #expect(loser.flatMap { Self.wins(of: $0, in: results) } == 0, "\(results)")
        session.send("q")
        #expect(session.waitFor("EXIT=0") != nil, "\(session.screen())")
    }

    @Test("a spectator that came in during the match says from when it watched on its results")
    func spectatorResultsSayFromWhen() throws {
        let directory = try Harness.temporaryDirectory("watch-late")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = TestPorts.next()
        let room = "late-\(port)"
        let bots = Process()
        bots.executableURL = URL(fileURLWithPath: Harness.binary)
        bots.arguments = ["bot", "--interface", "127.0.0.1", "--port", "\(port)", "--room", room, "--count", "2", "--players", "2",
                          "--games", "1", "--level", "medium", "--speed", "5", "--seconds", "300", "--quiet",
                          "--log", "\(directory)/bots.jsonl"]
        bots.standardOutput = FileHandle.nullDevice
        bots.standardError = FileHandle.nullDevice
        try bots.run()
        defer { if bots.isRunning { bots.terminate() }; bots.waitUntilExit() }
        // The bots' match starts about 3 s after both are in the room; the spectator comes later.
        usleep(8_000_000)
        try #require(bots.isRunning, "the bots' match is over before the spectator came")
        let carol = try TmuxSession(
            command: "\(Harness.binary) play --interface 127.0.0.1 --port \(port) --room \(room) --name carol --id c3 --spectate; echo EXIT=$?; sleep 60",
            environment: ["XDG_STATE_HOME": directory])
        defer { carol.close() }
        // A game of two medium bots at speed 5 lasts one to a few minutes: the bots run up to
        // 300 s, so the match ends with results rather than with the bots' time limit.
        let results = try #require(carol.waitFor("largest chain", seconds: 280), "no results on the spectator's screen: \(carol.screen())")
        #expect(results.firstMatch(of: /Watched from [0-9]{2}:[0-9]{2}:[0-9]{2}, mid-match: figures of the [0-9]+ games? seen whole/) != nil,
                "the spectator's results do not say from when it watched: \(results)")
        carol.send("q")
        #expect(carol.waitFor("EXIT=0") != nil, "\(carol.screen())")
    }

    @Test("the story of a match: games from 1; a story that saw the start has no note, one that came late says from when")
    func storyNotes() {
        let alice = PeerID(0xa1), bob = PeerID(0xb2)
        let name = { (id: PeerID) in id == alice ? "alice" : "bob" }
        var whole = MatchStory(local: nil)
        whole.matchStarted()
        _ = whole.gameEnded(nil, winner: alice, seconds: 10, name: name)
        #expect(whole.gamesFinished == 1)
        let full = whole.results(winner: alice, wins: [alice: 1, bob: 0], name: name)
        #expect(full.note == nil)
        #expect(full.headline == "alice wins the match.")
        #expect(full.players.map(\.wins) == [1, 0])

        var late = MatchStory(local: bob)
        late.seen(atMicroseconds: 1_700_000_000_000_000)
        _ = late.gameEnded(nil, winner: alice, seconds: 10, name: name)
        let partial = late.results(winner: alice, wins: [alice: 2, bob: 1], name: name)
        #expect(partial.note?.hasPrefix("Watched from ") == true, "\(partial.note ?? "no note")")
        #expect(partial.note?.hasSuffix("mid-match: figures of the 0 games seen whole") == true, "\(partial.note ?? "no note")")
        #expect(partial.headline == "You lose: alice wins the match.")
        #expect(partial.players.first?.isLocal == true)
    }
}
