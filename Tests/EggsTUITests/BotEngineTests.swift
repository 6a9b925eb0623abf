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
}
