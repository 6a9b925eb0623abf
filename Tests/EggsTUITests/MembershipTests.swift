import EggTestSupport
import Foundation
import Testing

/// One `eggs-tui bot` process of a membership test, with its own log and summary.
final class BotProcess {
    let id: String
    let log: String
    let summary: String
    let process = Process()

    init(id: String, port: Int, players: Int, directory: String, life: Int = 1, seconds: Int = 90) throws {
        self.id = id
        log = "\(directory)/\(id)-life\(life).jsonl"
        summary = "\(directory)/\(id)-life\(life).json"
        process.executableURL = URL(fileURLWithPath: Harness.binary)
        process.arguments = [
            "bot", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "members-\(port)", "--players", "\(players)",
            "--speed", "9", "--best-of", "7", "--level", "medium", "--seconds", "\(seconds)", "--id", id, "--log", log,
            "--summary", summary,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
    }

    var isRunning: Bool { process.isRunning }

    func signal(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits for the exit (at most `seconds`, then SIGKILL); returns the exit status, or nil if killed here.
    @discardableResult
    func wait(seconds: Double = 20) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : -process.terminationStatus
    }

    /// The summary's first entry (written every second while running).
    var report: [String: Any]? {
        guard let data = FileManager.default.contents(atPath: summary),
              let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return (root["bots"] as? [[String: Any]])?.first
    }

    /// Every membership view in the log: (wall-clock µs, members, departed).
    var views: [(at: Int64, members: [String], departed: [String])] {
        guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let view = json["view"] as? [String: Any], let at = json["at"] as? Int64 else { return nil }
            return (at, view["members"] as? [String] ?? [], view["departed"] as? [String] ?? [])
        }
    }
}

/// Membership over real sockets on 127.0.0.1 (bot processes with fixed IDs): graceful leaves in
/// both ID orders, kill -9 and a restart under the same ID.
@Suite("membership on 127.0.0.1", .serialized, .tags(.slow), .slowTier)
struct MembershipTests {
    static func hex(_ index: Int) -> String { String(format: "%016llx", UInt64(0x1000 * (index + 1))) }

    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "eggs-members-\(getpid())-\(Int.random(in: 0...1_000_000))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func nowMicroseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1e6) }

    /// Waits until every bot's summary shows play (verified checkpoints), at most `seconds`.
    static func waitForPlay(_ bots: [BotProcess], seconds: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if bots.allSatisfy({ ($0.report?["checkpointsVerified"] as? Int ?? 0) >= 3 }) { return true }
            usleep(100_000)
        }
        return false
    }

    /// `replay --verify` of every log exits 0.
    static func expectLogsVerify(_ bots: [BotProcess]) throws {
        for bot in bots {
            let result = try Harness.run(["replay", "--verify", bot.log])
            #expect(result.status == 0, "\(bot.log): \(result.stdout.prefix(300)) \(result.stderr.prefix(300))")
        }
    }

    @Test("a graceful leave (SIGTERM) of the highest or the lowest ID, 2 or 3 players: the others install the view without it within a second, and every log verifies",
          arguments: [(2, true), (2, false), (3, true), (3, false)])
    func gracefulLeave(players: Int, highest: Bool) throws {
        try Self.leave(players: players, highest: highest)
    }

    static func leave(players: Int, highest: Bool) throws {
        let directory = try Self.temporaryDirectory()
        let port = TestPorts.next()
        let bots = try (0..<players).map { try BotProcess(id: Self.hex($0), port: port, players: players, directory: directory) }
        defer {
            for bot in bots { bot.signal(SIGKILL); bot.wait() }
        }
        try #require(Self.waitForPlay(bots), "the match did not start")
        let leaver = highest ? bots.last! : bots.first!
        let others = bots.filter { $0 !== leaver }
        let leftAt = Self.nowMicroseconds()
        leaver.signal(SIGTERM)
        #expect(leaver.wait() == 0, "the leaver exits 0")
        // Each other peer installs a view without the leaver; a 2-player game is over with it.
        var seen: [String: Int64] = [:]
        let deadline = Date().addingTimeInterval(10)
        while seen.count < others.count && Date() < deadline {
            for bot in others where seen[bot.id] == nil {
                if let view = bot.views.first(where: { $0.at >= leftAt && !$0.members.contains(leaver.id) }) { seen[bot.id] = view.at - leftAt }
            }
            usleep(50_000)
        }
        for bot in others {
            let took = try #require(seen[bot.id], "\(bot.id) never installed a view without \(leaver.id) (10 s)")
            #expect(took <= 1_500_000, "\(bot.id) saw \(leaver.id) leave after \(took / 1_000) ms")
        }
        if players == 3 {
            // The two left go on playing.
            let before = others.map { $0.report?["delivered"] as? Int ?? 0 }
            usleep(3_000_000)
            let after = others.map { $0.report?["delivered"] as? Int ?? 0 }
            #expect(zip(before, after).allSatisfy { $0 < $1 }, "play went on: \(before) → \(after)")
        }
        for bot in others { bot.signal(SIGTERM) }
        for bot in others { #expect(bot.wait() == 0, "\(bot.id) exits 0") }
        for bot in bots { #expect(bot.report?["desyncs"] as? Int == 0, "\(bot.id): \(bot.report ?? [:])") }
        try Self.expectLogsVerify(bots)
        try? FileManager.default.removeItem(atPath: directory)
    }

    @Test("SIGSTOP of the highest or the lowest ID for 20 s mid-match, then SIGCONT: it rejoins instead of exiting, both play on together, every log verifies",
          arguments: [true, false])
    func suspendAndResume(highest: Bool) throws {
        let directory = try Self.temporaryDirectory()
        let port = TestPorts.next()
        let bots = try (0..<2).map { try BotProcess(id: Self.hex($0), port: port, players: 2, directory: directory, seconds: 150) }
        defer {
            for bot in bots { bot.signal(SIGCONT); bot.signal(SIGKILL); bot.wait() }
        }
        try #require(Self.waitForPlay(bots), "the match did not start")
        let sleeper = bots[highest ? 1 : 0], other = bots[highest ? 0 : 1]
        sleeper.signal(SIGSTOP)
        usleep(20_000_000)
        sleeper.signal(SIGCONT)
        let resumedAt = Self.nowMicroseconds()
        // Both in one room again, and both play on (checkpoints verified after the pause).
        let checked = bots.map { $0.report?["checkpointsVerified"] as? Int ?? 0 }
        var togetherAfter: Int64?
        var playing = false
        let deadline = Date().addingTimeInterval(40)
        while !(togetherAfter != nil && playing) && Date() < deadline && sleeper.isRunning {
            if togetherAfter == nil, let view = sleeper.views.last(where: { $0.at >= resumedAt }),
               view.members.contains(other.id) && view.members.contains(sleeper.id) {
                togetherAfter = view.at - resumedAt
            }
            playing = zip(bots, checked).allSatisfy { ($0.report?["checkpointsVerified"] as? Int ?? 0) > $1 }
            usleep(100_000)
        }
        #expect(sleeper.isRunning, "the paused bot exited (status \(sleeper.wait(seconds: 1).map(String.init) ?? "?"))")
        let took = try #require(togetherAfter, "the paused peer never shared a view with the other again (40 s)")
        #expect(playing, "no play after the pause")
        #expect((sleeper.report?["pauses"] as? Int ?? 0) >= 1, "the pause is counted: \(sleeper.report ?? [:])")
        for bot in bots { bot.signal(SIGTERM) }
        for bot in bots { #expect(bot.wait() == 0, "\(bot.id) exits 0") }
        for bot in bots { #expect(bot.report?["desyncs"] as? Int == 0, "\(bot.id): \(bot.report ?? [:])") }
        try Self.expectLogsVerify(bots)
        print("suspend highest=\(highest): together again \(took / 1_000) ms after SIGCONT")
        try? FileManager.default.removeItem(atPath: directory)
    }

    @Test("kill -9 of the highest or the lowest ID mid-match and a restart under the same ID at once: back in the room within 5 s, no desync, every log verifies",
          arguments: [true, false])
    func killAndRestart(highest: Bool) throws {
        let directory = try Self.temporaryDirectory()
        let port = TestPorts.next()
        var bots = try (0..<2).map { try BotProcess(id: Self.hex($0), port: port, players: 2, directory: directory) }
        defer {
            for bot in bots { bot.signal(SIGKILL); bot.wait() }
        }
        try #require(Self.waitForPlay(bots), "the match did not start")
        let index = highest ? 1 : 0
        let victim = bots[index]
        victim.signal(SIGKILL)
        #expect(victim.wait() == -SIGKILL)
        let restartedAt = Self.nowMicroseconds()
        let reborn = try BotProcess(id: victim.id, port: port, players: 2, directory: directory, life: 2)
        bots.append(reborn)
        let survivor = bots[1 - index]
        var backAfter: Int64?
        let deadline = Date().addingTimeInterval(15)
        while backAfter == nil && Date() < deadline {
            if let view = reborn.views.first(where: { $0.members.contains(survivor.id) && $0.members.contains(reborn.id) }) {
                backAfter = view.at - restartedAt
            }
            usleep(50_000)
        }
        let took = try #require(backAfter, "the restarted peer never shared a view with the survivor (15 s)")
        #expect(took <= 5_000_000, "back in the room after \(took / 1_000) ms")
        // They play a match together again.
        #expect(Self.waitForPlay([reborn, survivor], seconds: 20), "no play after the restart")
        usleep(2_000_000)
        for bot in [survivor, reborn] { bot.signal(SIGTERM) }
        for bot in [survivor, reborn] { #expect(bot.wait() == 0, "\(bot.id) exits 0") }
        for bot in [survivor, reborn] { #expect(bot.report?["desyncs"] as? Int == 0, "\(bot.id): \(bot.report ?? [:])") }
        try Self.expectLogsVerify(bots)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
