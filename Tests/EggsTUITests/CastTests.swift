import EggTestSupport
import Foundation
import Testing

/// `eggs-tui replay LOG --cast FILE`: an asciicast v2 recording of a real bot match, played
/// back by the asciinema package (`asciinema cat`, installed by scripts/setup.sh), with a
/// marker at every chain of 3 or more.
@Suite("asciicast recordings", .serialized, .tags(.slow), .slowTier)
struct CastTests {
    struct Event {
        var time: Double
        var code: String
        var data: String
    }

    /// The header and events of an asciicast v2 file.
    static func read(_ path: String) throws -> (header: [String: Any], events: [Event]) {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let header = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        let events = try lines.dropFirst().map { line -> Event in
            let array = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [Any], "not an event: \(line)")
            return Event(time: try #require((array[0] as? NSNumber)?.doubleValue), code: try #require(array[1] as? String),
                         data: try #require(array[2] as? String))
        }
        return (header, events)
    }

    /// Plays a recording back with `asciinema cat` (found on PATH): its output as a
    /// terminal would get it.
    static func cat(_ cast: String) throws -> Harness.Result {
        try Harness.runProcess(
            "/bin/sh",
            ["-c", "command -v asciinema >/dev/null || { echo 'asciinema is missing: run scripts/setup.sh' >&2; exit 127; }; exec asciinema cat \"$0\"", cast])
    }

    @Test("a bot match becomes an asciicast that asciinema plays, with one marker per chain of 3 or more, scaled by --speed")
    func botMatchCast() throws {
        let directory = try Harness.temporaryDirectory("cast")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Two games of medium bots on a random egg sequence hold a chain of 3 or more almost
        // always; a match without one has nothing to mark, so it is played again (twice at most).
        var summary: [[String: Any]] = []
        var chainsByBot: [String: Int] = [:]
        for attempt in 0..<3 where chainsByBot.values.reduce(0, +) == 0 {
            let port = TestPorts.next()
            let bots = try Harness.run([
                "bot", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "cast-\(port)", "--count", "2",
                "--players", "2", "--games", "2", "--level", "medium", "--speed", "7", "--seconds", "50", "--id", "a00",
                "--log", "\(directory)/bot\(attempt).jsonl", "--summary", "\(directory)/summary.json",
            ], timeoutSeconds: 60)
            try #require(bots.status == 0, "bots: \(bots.stderr)")
            summary = try BotAndReplayTests.summaryEntries("\(directory)/summary.json")
            chainsByBot = [:]
            for entry in summary {
                let peer = try #require(entry["peer"] as? String)
                chainsByBot["bot-" + peer.suffix(4)] = try #require(entry["chainsOf3"] as? Int)
            }
        }
        let log = try #require(summary.first?["log"] as? String)

        let cast = "\(directory)/match.cast"
        let run = try Harness.run(["replay", log, "--cast", cast, "--speed", "2"])
        try #require(run.status == 0, "replay --cast: \(run.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(report["cast"] as? String == cast)

        let (header, events) = try Self.read(cast)
        #expect(header["version"] as? Int == 2)
        #expect((header["width"] as? Int ?? 0) >= 48 && (header["height"] as? Int ?? 0) >= 18)
        #expect(events.count > 50)
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.time <= $1.time }, "event times go back")
        #expect(Set(events.map(\.code)).isSubset(of: ["o", "m"]))

        // One marker per chain of 3 or more, named for the player who made it: the same
        // counts the bots kept of their own locks.
        var markersByBot: [String: Int] = [:]
        for marker in events where marker.code == "m" {
            let match = try #require(marker.data.firstMatch(of: /^(bot-[0-9a-f]{4}): (\d+)-chain$/), "marker '\(marker.data)'")
            #expect(Int(match.2)! >= 3)
            markersByBot[String(match.1), default: 0] += 1
        }
        #expect(chainsByBot.values.reduce(0, +) > 0, "the medium bots made no chain of 3 or more in 2 games: nothing to mark")
        #expect(markersByBot.filter { $0.value > 0 } == chainsByBot.filter { $0.value > 0 }, "markers \(markersByBot), bots' own count \(chainsByBot)")
        #expect(report["markers"] as? Int == markersByBot.values.reduce(0, +))

        // At real speed / 2: the recording lasts half the log's span (first to last message).
        let times = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").dropFirst().compactMap { line -> Double? in
            guard let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return (json["at"] as? NSNumber)?.doubleValue
        }
        let span = (try #require(times.max()) - (try #require(times.min()))) / 1e6
        // A log that ends during the last game's banner runs on to the banner's end (3 s / 2).
        let duration = try #require(events.last?.time)
        #expect(duration > span / 2 - 0.1 && duration < span / 2 + 1.5 + 0.1, "cast lasts \(duration) s, the log spans \(span) s")

        // asciinema plays it: the screen shows both players' grids and the end of the log.
        let played = try Self.cat(cast)
        #expect(played.status == 0, "asciinema cat: \(played.stderr)")
        for name in chainsByBot.keys { #expect(played.stdout.contains(name)) }
        #expect(played.stdout.contains("┌────────────┐"))
        #expect(played.stdout.contains("end of log"))
    }

    @Test("--cast to a file that cannot be written, or of a log that is not one, exits 2 with one line")
    func badCast() throws {
        let directory = try Harness.temporaryDirectory("cast-bad")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "not a log\n".write(toFile: "\(directory)/bad.jsonl", atomically: true, encoding: .utf8)
        let bad = try Harness.run(["replay", "\(directory)/bad.jsonl", "--cast", "\(directory)/x.cast"])
        #expect(bad.status == 2)
        #expect(bad.stderr.split(separator: "\n").count == 1, "\(bad.stderr)")
        let itself = try Harness.run(["replay", "\(directory)/bad.jsonl", "--cast", "\(directory)/bad.jsonl"])
        #expect(itself.status == 2)
        #expect(try String(contentsOfFile: "\(directory)/bad.jsonl", encoding: .utf8) == "not a log\n", "the log was overwritten")
        // A sealed header alone (its digest: SHA-256 of "eggs-log-v2", 16 zero bytes and the line).
        let header = #"{"format":"eggs-log","version":3,"peer":"00000000000000aa","room":"eggs","rules":"sfe","d":"4f7b197bdfff5575d31f85a07ce4f507"}"#
        try (header + "\n").write(toFile: "\(directory)/empty.jsonl", atomically: true, encoding: .utf8)
        let unwritable = try Harness.run(["replay", "\(directory)/empty.jsonl", "--cast", "\(directory)/no/such/dir/x.cast"])
        #expect(unwritable.status == 2)
        #expect(unwritable.stderr.contains("cannot write"), "\(unwritable.stderr)")
        let missing = try Harness.run(["replay", "\(directory)/none.jsonl", "--cast", "\(directory)/x.cast"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("none.jsonl"))
    }
}
