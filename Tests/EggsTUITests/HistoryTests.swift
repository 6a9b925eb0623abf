import EggTestSupport
@testable import eggs_tui
import Foundation
import Testing

/// The recorded bot logs of the history's tests (Tests/EggHistoryTests/Fixtures).
private enum HistoryFixtures {
    static var logs: [String] {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("EggHistoryTests/Fixtures").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".jsonl") }.sorted()
            .map { directory + "/" + $0 }
    }
}

@Suite("history")
struct HistoryCommandTests {
    /// `history` with a database of its own in `directory` (XDG_DATA_HOME).
    static func history(_ arguments: [String], data directory: String) throws -> Harness.Result {
        try Harness.run(["history"] + arguments, environment: ["XDG_DATA_HOME": directory])
    }

    @Test("history import, the table within 80 columns, show with its replay line, --json")
    func importListShow() throws {
        let directory = try Harness.temporaryDirectory("history")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logs = HistoryFixtures.logs
        try #require(logs.count >= 2)
        let imported = try Self.history(["import"] + logs, data: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.hasPrefix("\(2 * logs.count) matches added"))
        #expect(FileManager.default.fileExists(atPath: directory + "/eggs/history.sqlite"))
        let again = try Self.history(["import"] + logs, data: directory)
        #expect(again.stdout.hasPrefix("0 matches added, 0 updated, \(2 * logs.count) already recorded"))

        let table = try Self.history([], data: directory)
        #expect(table.status == 0, "\(table.stderr)")
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { $0.count <= 80 }, "\(lines)")
        #expect(lines.first?.contains("opponents") == true)
        #expect(lines.filter { $0.contains("bot-") && ($0.contains("won ") || $0.contains("lost ")) }.count == 2 * logs.count)
        #expect(table.stdout.contains("Ratings (Glicko-2"))
        #expect(table.stdout.contains("with you"))

        let json = try Self.history(["--json"], data: directory)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let matches = try #require(object?["matches"] as? [[String: Any]])
        #expect(matches.count == 2 * logs.count)
        let opponent = try #require((matches.first?["opponents"] as? [String])?.first)
        let filtered = try Self.history(["--json", "--opponent", opponent], data: directory)
        let only = try JSONSerialization.jsonObject(with: Data(filtered.stdout.utf8)) as? [String: Any]
        let onlyMatches = try #require(only?["matches"] as? [[String: Any]])
        #expect(!onlyMatches.isEmpty && onlyMatches.count < matches.count)
        let none = try Self.history(["--json", "--rules", "tsu"], data: directory)
        #expect(none.stdout.hasPrefix(#"{"matches":[]"#))
        let future = try Self.history(["--since", "2999-01-01"], data: directory)
        #expect(future.stdout.hasPrefix("No match recorded"))

        let id = try #require(matches.first?["id"] as? Int)
        let show = try Self.history(["show", "\(id)"], data: directory)
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("Game 1: "))
        #expect(show.stdout.contains("Replay: eggs-tui replay "))
        let missing = try Self.history(["show", "99999"], data: directory)
        #expect(missing.status == 2)
    }

    @Test("history import refuses a log that does not verify: exit 2 naming it and the line")
    func importRefusesDamage() throws {
        let directory = try Harness.temporaryDirectory("history-damaged")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try #require(HistoryFixtures.logs.first)
        var lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        lines.remove(at: 20)
        let damaged = directory + "/damaged.jsonl"
        try (lines.joined(separator: "\n") + "\n").write(toFile: damaged, atomically: true, encoding: .utf8)
        let result = try Self.history(["import", damaged], data: directory)
        #expect(result.status == 2)
        #expect(result.stderr.contains("'\(damaged)' does not verify: line 21"))
        let table = try Self.history(["--json"], data: directory)
        #expect(table.stdout.hasPrefix(#"{"matches":[]"#))
    }

    @Test("history on a corrupt database: exit 2, one line naming the file")
    func corruptDatabase() throws {
        let directory = try Harness.temporaryDirectory("history-corrupt")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/eggs", withIntermediateDirectories: true)
        let path = directory + "/eggs/history.sqlite"
        try Data(String(repeating: "not a database ", count: 512).utf8).write(to: URL(fileURLWithPath: path))
        for arguments in [[], ["show", "1"], ["import"] + HistoryFixtures.logs.prefix(1)] {
            let result = try Self.history(arguments, data: directory)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("'\(path)'") && result.stderr.contains("corrupt"), "\(result.stderr)")
        }
    }

    @Test("two history imports at once into one database lose no match")
    func twoProcessesAtOnce() throws {
        let directory = try Harness.temporaryDirectory("history-two")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logs = HistoryFixtures.logs
        try #require(logs.count >= 2)
        var processes: [Process] = []
        defer { for process in processes where process.isRunning { process.terminate() } }
        for (index, half) in [Array(logs.prefix(logs.count / 2)), Array(logs.dropFirst(logs.count / 2))].enumerated() {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Harness.binary)
            process.arguments = ["history", "import"] + half
            process.environment = ProcessInfo.processInfo.environment.merging(["XDG_DATA_HOME": directory]) { $1 }
            process.standardOutput = FileHandle.nullDevice
            FileManager.default.createFile(atPath: directory + "/stderr-\(index)", contents: nil)
            process.standardError = FileHandle(forWritingAtPath: directory + "/stderr-\(index)")
            processes.append(process)
        }
        for process in processes { try process.run() }
        for (index, process) in processes.enumerated() {
            process.waitUntilExit()
            let stderr = (try? String(contentsOfFile: directory + "/stderr-\(index)", encoding: .utf8)) ?? ""
            #expect(process.terminationStatus == 0, "import \(index): \(stderr)")
        }
        let json = try Self.history(["--json", "--last", "0"], data: directory)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect((object?["matches"] as? [[String: Any]])?.count == 2 * logs.count)
    }
}

@Suite("history recorded live", .serialized, .tags(.slow), .slowTier)
struct HistoryLiveTests {
    @Test("bot --history records every match as it ends; both bots' records agree")
    func botRecords() throws {
        let directory = try Harness.temporaryDirectory("history-live")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = TestPorts.next()
        let result = try Harness.run([
            "bot", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "history-\(port)", "--count", "2", "--players", "2",
            "--games", "2", "--speed", "9", "--seconds", "120", "--quiet", "--history", "--log", "\(directory)/x.jsonl",
        ], environment: ["XDG_DATA_HOME": directory], timeoutSeconds: 150)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("history not recorded"), "\(result.stderr)")
        let json = try HistoryCommandTests.history(["--json", "--last", "0"], data: directory)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let matches = try #require(object?["matches"] as? [[String: Any]])
        // Two bots, two matches each (one game a match), each recorded from its own log.
        #expect(matches.count == 4)
        #expect(matches.allSatisfy { $0["abandoned"] as? Bool == false })
        // Importing the logs afterwards adds nothing: the live records are the logs' own.
        let logs = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".jsonl") }.map { directory + "/" + $0 }
        let imported = try HistoryCommandTests.history(["import"] + logs, data: directory)
        #expect(imported.stdout.hasPrefix("0 matches added, 0 updated"), "\(imported.stdout)")
    }

    @Test("a read-only database is one warning line, and the bots play on")
    func readOnlyDatabase() throws {
        let directory = try Harness.temporaryDirectory("history-readonly")
        defer {
            chmod(directory + "/eggs", 0o755)
            try? FileManager.default.removeItem(atPath: directory)
        }
        // A directory where the database should be: it cannot be opened.
        try FileManager.default.createDirectory(atPath: directory + "/eggs/history.sqlite", withIntermediateDirectories: true)
        let port = TestPorts.next()
        let result = try Harness.run([
            "bot", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "history-ro-\(port)", "--count", "2", "--players", "2",
            "--games", "1", "--speed", "9", "--seconds", "120", "--quiet", "--history", "--log", "\(directory)/x.jsonl",
        ], environment: ["XDG_DATA_HOME": directory], timeoutSeconds: 150)
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = result.stderr.split(separator: "\n").filter { $0.contains("history not recorded") }
        #expect(warnings.count == 1, "\(result.stderr)")
        #expect(warnings.first?.contains(directory + "/eggs/history.sqlite") == true)
    }
}

@Suite("history recorder")
struct HistoryRecorderTests {
    @Test("the recorder imports logs on its own thread and gives the lobby's head-to-head lines")
    func headToHead() throws {
        let directory = try Harness.temporaryDirectory("history-recorder")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logs = HistoryFixtures.logs
        try #require(logs.count >= 2)
        let recorder = HistoryRecorder(path: directory + "/h.sqlite") { _ in }
        recorder.finish()
        #expect(recorder.headToHeadLines(names: ["bot-7419", "bot-741a"]).isEmpty)
        for log in logs { recorder.record(logPath: log, passphrase: nil, flush: {}) }
        recorder.finish()
        #expect(recorder.takeWarnings().isEmpty)
        #expect(recorder.matchesRecorded == 2 * logs.count)
        // Each bot recorded its matches with the other from its own log.
        let lines = recorder.headToHeadLines(names: ["bot-7419", "bot-741a", "nobody"])
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.allSatisfy { $0.hasSuffix(" with you") && $0.contains(" ±") }, "\(lines)")
    }

    @Test("a corrupt database: one warning line from the recorder, however many matches end")
    func corrupt() throws {
        let directory = try Harness.temporaryDirectory("history-recorder-corrupt")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/h.sqlite"
        try Data(String(repeating: "not a database ", count: 512).utf8).write(to: URL(fileURLWithPath: path))
        let warned = Failures()
        let recorder = HistoryRecorder(path: path) { warned.add($0) }
        for log in HistoryFixtures.logs { recorder.record(logPath: log, passphrase: nil, flush: {}) }
        recorder.finish()
        #expect(warned.all.count == 1, "\(warned.all)")
        #expect(warned.all.first?.contains("'\(path)' is corrupt") == true)
        #expect(recorder.takeWarnings() == warned.all)
    }
}

final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ item: String) { lock.withLock { items.append(item) } }
    var all: [String] { lock.withLock { items } }
}
