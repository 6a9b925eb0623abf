import EggTestSupport
import Foundation
import Testing
@testable import eggs_tui

/// Logs in eggs-tui's own directory are kept within the player's bound (config `logs-keep`,
/// `logs-max-mb`), oldest first, never a log in use (issue 35, "Keep").
@Suite("log retention", .serialized, .tags(.slow), .slowTier)
struct LogRetentionTests {
    /// Writes a log-named file of `bytes` bytes, last written `age` seconds ago.
    static func makeLog(_ directory: String, _ name: String, age: Int, bytes: Int = 100) throws {
        let path = directory + "/" + name
        try Data(repeating: UInt8(ascii: "x"), count: bytes).write(to: URL(fileURLWithPath: path))
        let when = time(nil) - age
        var times = [timeval(tv_sec: when, tv_usec: 0), timeval(tv_sec: when, tv_usec: 0)]
        #expect(utimes(path, &times) == 0)
    }

    static func names(_ directory: String) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory))
    }

    /// "00000000000000a1-1700000001.jsonl": a log name as eggs-tui gives it.
    static func logName(_ index: Int) -> String {
        "00000000000000a\(index)-170000000\(index).jsonl"
    }

    @Test("logs-keep: the newest remain, oldest deleted first; a log locked by its writer and other files are never deleted")
    func keepNewestNeverInUse() throws {
        let directory = try Harness.temporaryDirectory("retention")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for index in 1...6 { try Self.makeLog(directory, Self.logName(index), age: 10_000 - index * 100) }
        try Self.makeLog(directory, "mine.jsonl", age: 20_000)
        try Self.makeLog(directory, "eggs-tui.log", age: 20_000)
        // The oldest log is held as a writer holds it (a match in progress, here or in another process).
        var held = open(directory + "/" + Self.logName(1), O_WRONLY)
        #expect(held >= 0 && flock(held, LOCK_SH | LOCK_NB) == 0)
        defer { if held >= 0 { close(held) } }
        let deleted = LogRetention.prune(directory: directory, bound: .init(keep: 3, maxBytes: nil), recentSeconds: 0)
        #expect(deleted == [Self.logName(2), Self.logName(3), Self.logName(4)])
        #expect(try Self.names(directory) == [Self.logName(1), Self.logName(5), Self.logName(6), "mine.jsonl", "eggs-tui.log"])
        // Unlocked, it goes next.
        close(held)
        held = -1
        #expect(LogRetention.prune(directory: directory, bound: .init(keep: 2, maxBytes: nil), recentSeconds: 0) == [Self.logName(1)])
        // 0 keeps every log.
        #expect(LogRetention.prune(directory: directory, bound: .init(keep: 0, maxBytes: nil), recentSeconds: 0).isEmpty)
    }

    @Test("a LogFile holds its log locked while it writes: retention skips it, and deletes it once closed")
    func openLogFileIsInUse() throws {
        let directory = try Harness.temporaryDirectory("retention-open")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try LogFile(path: directory + "/" + Self.logName(1), sealed: true)
        log.write(#"{"format":"eggs-log"}"#)
        log.flush()
        try Self.makeLog(directory, Self.logName(2), age: 5_000)
        #expect(LogRetention.prune(directory: directory, bound: .init(keep: 1, maxBytes: nil), recentSeconds: 0) == [Self.logName(2)])
        #expect(LogRetention.prune(directory: directory, bound: .init(keep: 1, maxBytes: 1), recentSeconds: 0).isEmpty)
        log.finish(atMicroseconds: 0)
        let later = LogRetention.prune(directory: directory, bound: .init(keep: 1, maxBytes: 1), recentSeconds: 0)
        #expect(later == [Self.logName(1)])
    }

    @Test("a log written in the last minute is not deleted (an older eggs-tui that does not lock may be writing it)")
    func recentLogsStay() throws {
        let directory = try Harness.temporaryDirectory("retention-recent")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.makeLog(directory, Self.logName(1), age: 5)
        try Self.makeLog(directory, Self.logName(2), age: 3)
        #expect(LogRetention.prune(directory: directory, bound: .init(keep: 1, maxBytes: nil)).isEmpty)
        try Self.makeLog(directory, Self.logName(1), age: 120)
        #expect(LogRetention.prune(directory: directory, bound: .init(keep: 1, maxBytes: nil)) == [Self.logName(1)])
    }

    @Test("logs-max-mb: the oldest go until the rest fit")
    func maxBytes() throws {
        let directory = try Harness.temporaryDirectory("retention-bytes")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for index in 1...4 { try Self.makeLog(directory, Self.logName(index), age: 10_000 - index * 100, bytes: 400 << 10) }
        let deleted = LogRetention.prune(directory: directory, bound: .init(keep: nil, maxBytes: 1 << 20), recentSeconds: 0)
        #expect(deleted == [Self.logName(1), Self.logName(2)])
        #expect(try Self.names(directory) == [Self.logName(3), Self.logName(4)])
    }

    @Test("config: logs-keep and logs-max-mb are read; bad values name the file, the line and what is expected")
    func configValues() throws {
        let good = try Config.parse("logs-keep = 5\nlogs-max-mb = 300\n", source: "c.toml")
        #expect(good.logsKeep == 5 && good.logsMaxMB == 300)
        for (text, line, words) in [
            ("name = \"a\"\nlogs-keep = -1\n", 2, "logs-keep must be a whole number of logs from 0"),
            ("logs-keep = \"many\"\n", 1, "logs-keep must be a whole number"),
            ("logs-max-mb = 0\n", 1, "logs-max-mb must be a whole number of megabytes from 1"),
            ("\nlogs-keep = lots\n", 2, "logs-keep: a whole number of logs"),
        ] {
            #expect(throws: CommandFailure.self) { try Config.parse(text, source: "c.toml") }
            do {
                _ = try Config.parse(text, source: "c.toml")
            } catch {
                #expect("\(error)".contains("c.toml: line \(line): "), "\(error)")
                #expect("\(error)".contains(words), "\(error)")
            }
        }
    }

    @Test("a bot's new log in the own directory prunes it to logs-keep; another running process's log stays")
    func botPrunesOwnDirectory() throws {
        let home = try Harness.temporaryDirectory("retention-bot")
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createDirectory(atPath: home + "/config/eggs", withIntermediateDirectories: true)
        try "logs-keep = 4\ninterface = \"127.0.0.1\"\n".write(toFile: home + "/config/eggs/config.toml", atomically: true, encoding: .utf8)
        let logs = home + "/state/eggs"
        try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true)
        for index in 1...4 { try Self.makeLog(logs, Self.logName(index), age: 10_000 - index * 100) }
        let env = ["XDG_CONFIG_HOME": home + "/config", "XDG_STATE_HOME": home + "/state"]
        let port = TestPorts.next()
        // A running bot (another process, its match under way): its log is in use.
        let running = Process()
        running.executableURL = URL(fileURLWithPath: Harness.binary)
        running.arguments = ["bot", "--port", "\(port)", "--room", "keep-\(port)", "--id", "b1", "--seconds", "20", "--quiet"]
        running.environment = ProcessInfo.processInfo.environment.merging(env) { $1 }
        running.standardOutput = FileHandle.nullDevice
        running.standardError = FileHandle.nullDevice
        try running.run()
        defer { if running.isRunning { running.terminate() }; running.waitUntilExit() }
        var runningLog: String?
        let deadline = Date().addingTimeInterval(10)
        while runningLog == nil && Date() < deadline {
            runningLog = try Self.names(logs).first { $0.hasPrefix("00000000000000b1-") }
            usleep(100_000)
        }
        let busy = try #require(runningLog, "the running bot wrote no log in \(logs)")
        // Its log looks the oldest of all: only its lock keeps it.
        var old = [timeval(tv_sec: 1_000, tv_usec: 0), timeval(tv_sec: 1_000, tv_usec: 0)]
        #expect(utimes(logs + "/" + busy, &old) == 0)
        let run = try Harness.run(["bot", "--port", "\(port)", "--room", "keep-other-\(port)", "--id", "c1", "--seconds", "0.5", "--quiet"],
                                  environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        let after = try Self.names(logs)
        let mine = after.filter { $0.hasPrefix("00000000000000c1-") }
        #expect(mine.count == 1, "the new log: \(after)")
        #expect(after.contains(busy), "the running bot's log was deleted: \(after)")
        // 6 logs, 4 kept: the two oldest not in use went.
        #expect(after == Set([busy, Self.logName(3), Self.logName(4)]).union(mine), "\(after)")
        running.terminate()
        running.waitUntilExit()
    }
}
