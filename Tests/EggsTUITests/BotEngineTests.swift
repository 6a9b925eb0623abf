import EggTestSupport
import Foundation
import Testing

/// `bot --engine`: external engines over the line protocol, in real matches on 127.0.0.1.
@Suite("bot engines", .serialized, .tags(.slow), .slowTier)
struct BotEngineTests {
    static let exampleEngine = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../examples/engine.py").standardized.path

    static var hasPython: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") || FileManager.default.isExecutableFile(atPath: "/usr/local/bin/python3")
            || (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
                FileManager.default.isExecutableFile(atPath: "\($0)/python3")
            }
    }

    /// Under `tsu` the engine's placements were planned by `sfe`'s rules: the pair spawning into
    /// the hidden row could not move, and all but a few became hard drops where it spawned.
    @Test("a bot driven by examples/engine.py plays a whole match against a built-in bot; its placements are the engine's",
          arguments: ["sfe", "tsu"])
    func exampleEnginePlaysMatch(rules: String) throws {
        try #require(Self.hasPython, "python3 is needed for the example engine")
        let directory = try Harness.temporaryDirectory("engine")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = TestPorts.next()
        let record = "\(directory)/answers.txt"
        var runs: [Process] = []
        for index in 0..<2 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Harness.binary)
            process.arguments = [
                "bot", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "engine-\(port)", "--players", "2",
                "--games", "1", "--level", "insane", "--speed", "9", "--seconds", "90", "--id", String(0x200 + index, radix: 16),
                "--rules", rules,
                "--log", "\(directory)/bot\(index).jsonl", "--summary", "\(directory)/summary\(index).json",
            ] + (index == 0 ? ["--engine", "python3 '\(Self.exampleEngine)' --record '\(record)'",
                               // Python's start on a loaded machine can pass the 1 s default.
                               "--engine-timeout", "10000"] : [])
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            runs.append(process)
        }
        defer { for process in runs where process.isRunning { process.terminate(); process.waitUntilExit() } }
        for process in runs { process.waitUntilExit() }
        for process in runs { #expect(process.terminationStatus == 0) }
        let entry = try #require(try BotAndReplayTests.summaryEntries("\(directory)/summary0.json").first)
        let other = try #require(try BotAndReplayTests.summaryEntries("\(directory)/summary1.json").first)
        #expect(entry["games"] as? Int == 1)
        #expect(entry["desyncs"] as? Int == 0 && other["desyncs"] as? Int == 0)
        #expect(other["engineAnswers"] as? Int == 0, "the built-in bot asked no engine")
        let answers = try #require(entry["engineAnswers"] as? Int)
        let fallbacks = try #require(entry["engineFallbacks"] as? Int)
        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n")
        let placed = lines.dropFirst().filter { $0.hasPrefix("place ") }
        // Every answer the engine gave was used (the last may have been in flight at the end).
        #expect(answers > 5, "the engine answered \(answers) times")
        #expect(placed.count == answers || placed.count == answers + 1, "engine said \(placed.count), bot used \(answers)")
        #expect(fallbacks * 2 < answers, "\(rules): \(fallbacks) of \(answers) placements were out of reach")
        // The engine's decisions are numbered 1, 2, 3... as the bot asked them.
        #expect(placed.enumerated().allSatisfy { $0.element.split(separator: " ")[1] == "\($0.offset + 1)" })
        // The bot ended its engine.
        let pid = try #require(lines.first.flatMap { Int32($0.dropFirst(4)) })
        #expect(kill(pid, 0) != 0, "the engine (pid \(pid)) outlived its bot")
        let (verified, _) = try BotAndReplayTests.verify("\(directory)/bot0.jsonl")
        #expect(verified.status == 0, "\(verified.stderr)")
    }

    @Test("an engine that answers wrongly, stays silent or exits: one line naming it, exit 2, no child left")
    func badEngines() throws {
        let cases: [(command: String, message: String)] = [
            ("echo nonsense", "bad answer 'nonsense' (expected 'ready [NAME]') to 'eggs-engine 1'"),
            ("sleep 30", "no answer to 'eggs-engine 1' within 300 ms"),
            ("true", "exited"),
        ]
        for (command, message) in cases {
            let start = Date()
            let result = try Harness.run([
                "bot", "--interface", "127.0.0.1", "--port", "\(TestPorts.next())", "--seconds", "20",
                "--engine", command, "--engine-timeout", "300",
            ], timeoutSeconds: 20)
            #expect(result.status == 2, "\(command): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains("engine '\(command)': \(message)"), "\(command): \(result.stderr)")
            #expect(Date().timeIntervalSince(start) < 5, "\(command): the bot waited for its engine to end")
        }
    }

    /// A helper an engine starts in the background holds the engine's stdout and the bot's stderr
    /// (a daemon would hold them for good): the bot must still stop at `--seconds`, and end the
    /// helper with the engine's process group.
    @Test("an engine's background child holding its pipes: the bot exits at --seconds all the same and leaves nothing of the engine's process group")
    func lingeringChild() throws {
        let directory = try Harness.temporaryDirectory("engine-child")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pidsFile = "\(directory)/pids"
        // Writes "ENGINE GROUP SLEEP" (process IDs) once, then answers the protocol until end of input.
        try """
            sleep 300 &
            echo "$$ $(cut -d' ' -f5 /proc/$$/stat) $!" > '\(pidsFile).new'
            mv '\(pidsFile).new' '\(pidsFile)'
            while read -r word seq rest; do
              case "$word" in
                eggs-engine) echo 'ready lingering' ;;
                state) echo "place $seq 2 up" ;;
              esac
            done
            """.write(toFile: "\(directory)/engine.sh", atomically: true, encoding: .utf8)
        func pids() -> [pid_t] {
            ((try? String(contentsOfFile: pidsFile, encoding: .utf8)) ?? "").split(whereSeparator: \.isWhitespace).compactMap { pid_t($0) }
        }
        // Whatever the outcome, nothing this test started outlives it.
        defer {
            let started = pids()
            if started.count == 3 {
                kill(started[2], SIGKILL)
                if started[1] > 1 && started[1] != getpgrp() { kill(-started[1], SIGKILL) }
            }
        }
        let seconds = 1.0
        let run = try Self.runBot([
            "bot", "--interface", "127.0.0.1", "--port", "\(TestPorts.next())", "--seconds", "\(seconds)",
            "--engine", "sh '\(directory)/engine.sh'", "--engine-timeout", "10000",
        ], stderrFile: "\(directory)/stderr", timeoutSeconds: seconds + 10)
        let started = pids()
        try #require(started.count == 3, "the engine wrote no process IDs")
        #expect(run.status == 0, "\((try? String(contentsOfFile: "\(directory)/stderr", encoding: .utf8)) ?? "")")
        // The goal is 1 s after --seconds; the margin is for a loaded machine.
        #expect(run.seconds - seconds < 2, "the bot exited \(run.seconds - seconds) s after --seconds")
        let group = started[1]
        #expect(group == started[0], "the engine leads its own process group")
        // Signals take effect at once, but give a loaded machine a moment.
        var left = Self.liveMembers(ofGroup: group)
        for _ in 0..<100 where !left.isEmpty {
            usleep(20_000)
            left = Self.liveMembers(ofGroup: group)
        }
        #expect(left.isEmpty, "processes \(left) of the engine's group \(group) outlived the bot")
        #expect(!left.contains(started[2]) && !Self.isLive(started[2]), "the engine's sleep (pid \(started[2])) outlived the bot")
    }

    @Test("an engine's line with control characters (ESC, NUL, DEL, C1) is quoted escaped: none reaches stderr raw")
    func controlCharactersEscaped() throws {
        let directory = try Harness.temporaryDirectory("engine-escape")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A screen clear, a window title, NUL, DEL, CSI as C1 (U+009B) and as a lone byte 0x9B (not UTF-8).
        let line = Array("hello \u{1B}[2J\u{1B}]0;owned\u{7}".utf8) + [0x00, 0x7F, 0xC2, 0x9B, 0x9B] + Array("x\n".utf8)
        try Data(line).write(to: URL(fileURLWithPath: "\(directory)/line"))
        let command = "cat '\(directory)/line'"
        let run = try Self.runBot([
            "bot", "--interface", "127.0.0.1", "--port", "\(TestPorts.next())", "--seconds", "20",
            "--engine", command, "--engine-timeout", "300",
        ], stderrFile: "\(directory)/stderr", timeoutSeconds: 20)
        #expect(run.status == 2)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(directory)/stderr"))
        let text = try #require(String(data: bytes, encoding: .utf8), "stderr is not UTF-8: \(Array(bytes))")
        let controls = text.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) }
        #expect(controls.isEmpty, "raw control characters on stderr: \(controls.map { String($0.value, radix: 16) })")
        #expect(text == "eggs-tui: engine '\(command)': bad answer 'hello \\x1b[2J\\x1b]0;owned\\x07\\0\\x7f\\u{9b}\u{FFFD}x' (expected 'ready [NAME]') to 'eggs-engine 1'\n",
                "\(text)")
    }

    /// Runs `eggs-tui` with `arguments`, its stderr to a file (reading a pipe would wait for every
    /// process holding it) and waits at most `timeoutSeconds`; then kills it and records an issue.
    /// - Returns: its exit status (nil when killed) and the seconds it ran.
    static func runBot(_ arguments: [String], stderrFile: String, timeoutSeconds: Double) throws -> (status: Int32?, seconds: Double) {
        try Data().write(to: URL(fileURLWithPath: stderrFile))
        let errors = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrFile))
        defer { try? errors.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Harness.binary)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        let clock = ContinuousClock()
        let start = clock.now
        try process.run()
        while process.isRunning && clock.now - start < .seconds(timeoutSeconds) { usleep(5_000) }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            Issue.record("eggs-tui \(arguments) did not exit within \(timeoutSeconds) s")
            return (nil, seconds)
        }
        return (process.terminationStatus, seconds)
    }

    /// The processes of process group `group` that are not zombies (dead, their parent yet to reap them).
    static func liveMembers(ofGroup group: pid_t) -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { name in
            guard let pid = pid_t(name), let fields = statFields(pid) else { return nil }
            return fields.count > 2 && fields[0] != "Z" && pid_t(fields[2]) == group ? pid : nil
        }
    }

    /// Whether process `pid` exists and is not a zombie.
    static func isLive(_ pid: pid_t) -> Bool {
        statFields(pid).map { $0.first != "Z" } ?? false
    }

    /// The fields of /proc/PID/stat after "PID (COMM)": state, parent, process group...
    static func statFields(_ pid: pid_t) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: end)...].split(separator: " ")
    }
}
