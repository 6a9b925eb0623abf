import Consensus
import EggTestSupport
import Foundation
import PeerNet
import Testing

/// Logs, summaries and boards from the command line: damaged files, full disks, missing
/// directories, hostile input. Sockets only on 127.0.0.1.
@Suite("logs and files", .serialized, .tags(.slow), .slowTier)
struct LogFileTests {
    static func temporaryDirectory(_ name: String) throws -> String {
        try Harness.temporaryDirectory(name)
    }

    /// Arguments of a short bot run alone on 127.0.0.1 (no group ever forms: it only logs its view).
    static func loneBot(seconds: Int = 2) -> [String] {
        let port = TestPorts.next()
        return ["bot", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "files-\(port)", "--seconds", "\(seconds)"]
    }

    @Test("replay --verify of an empty file, /dev/null or a log without its header exits 2 naming line 1")
    func emptyAndHeaderless() throws {
        let directory = try Self.temporaryDirectory("empty")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let empty = directory + "/empty.jsonl"
        try "".write(toFile: empty, atomically: true, encoding: .utf8)
        let headerless = directory + "/headerless.jsonl"
        try #"{"at":1,"view":{"id":1,"members":[],"joined":[],"departed":[]}}"#.appending("\n")
            .write(toFile: headerless, atomically: true, encoding: .utf8)
        for path in [empty, "/dev/null", headerless] {
            let result = try Harness.run(["replay", "--verify", path])
            #expect(result.status == 2, "\(path): \(result.stdout)")
            #expect(result.stderr.contains("line 1:"), "\(path): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
    }

    @Test("replay --verify of a log with no message verifies and says that nothing but its digests was checked")
    func logWithoutMessages() throws {
        let directory = try Self.temporaryDirectory("nomessages")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/quiet.jsonl"
        let me = PeerID(0x51)
        let lines = [MessageLog.header(peer: me, room: "eggs"),
                     MessageLog.line(for: .viewChanged(MembershipView(id: 1, members: [me], joined: [me])), atMicroseconds: 1)!,
                     MessageLog.end(lines: 2, atMicroseconds: 2)]
        try MessageLog.sealed(lines).write(toFile: path, atomically: true, encoding: .utf8)
        let result = try Harness.run(["replay", "--verify", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""messages":0"#) && result.stdout.contains(#""orderChecked":0"#), "\(result.stdout)")
        #expect(result.stderr.contains("holds no message: nothing was checked but its lines' digests"), "\(result.stderr)")
    }

    @Test("replay of a missing file without a terminal says it cannot open it")
    func replayMissingFile() throws {
        let result = try Harness.run(["replay", "/nonexistent/missing.jsonl"], environment: ["TERM": "dumb"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("cannot open '/nonexistent/missing.jsonl'"), "\(result.stderr)")
    }

    @Test("a bot log verifies whole (with its end line), keyed by the passphrase; every line carries its digest")
    func botLogIsSealed() throws {
        let directory = try Self.temporaryDirectory("sealed")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = directory + "/bot.jsonl"
        let run = try Harness.run(Self.loneBot() + ["--passphrase", "sesame", "--log", log])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.count >= 2)
        #expect(lines.allSatisfy { $0.range(of: #","d":"[0-9a-f]{32}"\}$"#, options: .regularExpression) != nil })
        #expect(lines.last?.contains(#""end":{"lines":"#) == true)
        let keyed = try Harness.run(["replay", "--verify", "--passphrase", "sesame", log])
        #expect(keyed.status == 0, "\(keyed.stderr)")
        #expect(keyed.stdout.contains(#""complete":true"#))
        let fromEnvironment = try Harness.run(["replay", "--verify", log], environment: ["EGGS_PASSPHRASE": "sesame"])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
        let without = try Harness.run(["replay", "--verify", log], environment: ["EGGS_PASSPHRASE": ""])
        #expect(without.status == 2)
        #expect(without.stderr.contains("line 1:") && without.stderr.contains("passphrase"), "\(without.stderr)")
    }

    @Test("--log in a directory that does not exist exits 2 naming it and creates nothing")
    func missingLogDirectory() throws {
        let directory = try Self.temporaryDirectory("nodir")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let missing = directory + "/not/there"
        let result = try Harness.run(Self.loneBot() + ["--log", missing + "/bot.jsonl"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("'\(missing)' does not exist"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/not"))
    }

    @Test("bot --help says how --log is named with several peers")
    func botHelpNamesLogs() throws {
        let result = try Harness.run(["bot", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("-<peer ID>"), "\(result.stdout)")
    }

    @Test("a log on a full device stops the bot: one line naming the file and the error, exit 1")
    func logOnFullDevice() throws {
        let result = try Harness.run(Self.loneBot(seconds: 20) + ["--log", "/dev/full"], timeoutSeconds: 30)
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot write the log '/dev/full': No space left on device"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    static var mountNamespace: Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["-rm", "sh", "-c", "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs \"$d\" && umount \"$d\"; r=$?; rmdir \"$d\"; exit $r"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }

    /// Runs `script` in a private mount namespace with `$D` a fresh 64 KiB tmpfs and `$EGGS`
    /// the binary; the mount disappears with the namespace.
    static func onSmallFilesystem(_ script: String, kilobytes: Int = 64) throws -> Harness.Result {
        let directory = try temporaryDirectory("tmpfs")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-rm", "sh", "-c", "mount -t tmpfs -o size=\(kilobytes)k tmpfs \"$D\" && \(script)"]
        process.environment = ProcessInfo.processInfo.environment.merging(["D": directory, "EGGS": Harness.binary]) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let deadline = Date().addingTimeInterval(90)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            process.terminate()
            Issue.record("the small-filesystem run did not finish within 90 s")
        }
        process.waitUntilExit()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return Harness.Result(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    @Test("bots filling a 64 KiB filesystem stop: one line naming the log and the error, exit 1",
          .enabled(if: mountNamespace, "skipped: no private mount namespace with tmpfs here (needs unshare -rm)"))
    func logFillsFilesystem() throws {
        let port = TestPorts.next()
        let result = try Self.onSmallFilesystem("""
            "$EGGS" bot --interface 127.0.0.1 --port \(port) --room full-\(port) --count 2 --players 2 --speed 9 \
            --level insane --seconds 60 --log "$D/bots.jsonl"; echo "status $?"; ls "$D"
            """)
        #expect(result.stdout.contains("status 1"), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("cannot write the log '"), "\(result.stderr)")
        #expect(result.stderr.contains("No space left on device"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }

    @Test("a summary on a full filesystem is exit 1 naming it, never a 0-byte file",
          .enabled(if: mountNamespace, "skipped: no private mount namespace with tmpfs here (needs unshare -rm)"))
    func summaryOnFullFilesystem() throws {
        let port = TestPorts.next()
        let result = try Self.onSmallFilesystem("""
            dd if=/dev/zero of="$D/filler" bs=1k count=64 2>/dev/null; \
            "$EGGS" bot --interface 127.0.0.1 --port \(port) --room sum-\(port) --seconds 1 --log /dev/null \
            --summary "$D/summary.json"; echo "status $?"; ls "$D"
            """)
        #expect(result.stdout.contains("status 1"), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("cannot write the summary '"), "\(result.stderr)")
        #expect(!result.stdout.contains("summary.json"), "a summary file was left behind: \(result.stdout)")
    }

    @Test("a soak in a passphrase room verifies its peers' keyed logs with the passphrase")
    func soakVerifiesKeyedLogs() throws {
        let directory = try Self.temporaryDirectory("soak-keyed")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = TestPorts.next()
        let result = try Harness.run(
            ["soak", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "keyed-\(port)", "--peers", "2",
             "--seconds", "8", "--dir", directory + "/run", "--passphrase", "sesame"],
            timeoutSeconds: 90)
        #expect(result.status == 0, "\(result.stderr.suffix(1_000))")
        let verdict = try #require(SoakTests.verdict(result.stdout), "no verdict: \(result.stdout)")
        #expect(verdict["logsVerified"] as? Int == 2, "\(verdict)")
        let log = try #require(try FileManager.default.contentsOfDirectory(atPath: directory + "/run").first { $0.hasSuffix(".jsonl") })
        let unkeyed = try Harness.run(["replay", "--verify", directory + "/run/" + log], environment: ["EGGS_PASSPHRASE": ""])
        #expect(unkeyed.status == 2, "a keyed log verified without its passphrase")
    }

    @Test("resolve reads LF, CRLF and CR line endings alike")
    func resolveLineEndings() throws {
        let rows = ["B.....", "RB....", "RRB...", "RBB..."]
        var outputs: [String] = []
        for ending in ["\n", "\r\n", "\r"] {
            let result = try Harness.run(["resolve"], stdin: rows.joined(separator: ending) + ending)
            #expect(result.status == 0, "\(ending.debugDescription): \(result.stderr)")
            outputs.append(result.stdout)
        }
        #expect(Set(outputs).count == 1)
        let empty = Array(repeating: #""......""#, count: 15).joined(separator: ", ")
        #expect(outputs[0] == #"{"rules": "sfe", "chain": 2, "steps": [{"popped": 4, "garbageCleared": 0}, {"popped": 5, "garbageCleared": 0}], "garbage": 8, "ticks": 60, "board": [\#(empty)]}"# + "\n")
    }

    @Test("resolve: empty input is 'no board', a NUL is named U+0000, --incoming -1 is a range error")
    func resolveBadInput() throws {
        for input in ["", "\n\n", "  \n"] {
            let result = try Harness.run(["resolve"], stdin: input)
            #expect(result.status == 2, "\(input.debugDescription)")
            #expect(result.stderr.contains("no board"), "\(result.stderr)")
        }
        let nul = try Harness.run(["resolve"], stdin: "..\u{0}...\n")
        #expect(nul.status == 2)
        #expect(nul.stderr.contains("U+0000"), "\(nul.stderr)")
        #expect(!nul.stderr.utf8.contains(0))
        let negative = try Harness.run(["resolve", "--incoming", "-1"], stdin: "......\n")
        #expect(negative.status == 2)
        #expect(negative.stderr.contains("--incoming must be from 0 to 1000"), "\(negative.stderr)")
    }
}

@Suite("logs and files in tmux", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"), .tags(.slow), .slowTier)
struct LogFileTerminalTests {
    @Test("play with a log that cannot be written warns on screen, and exits 1 naming the file")
    func playWarnsWhenTheLogStops() throws {
        let port = TestPorts.next()
        let session = try TmuxSession(
            command: "\(Harness.binary) play --interface 127.0.0.1 --port \(port) --room warn-\(port) --log /dev/full; echo EXIT=$?; sleep 60")
        defer { session.close() }
        let warning = session.waitFor("cannot write the log '/dev/full'", seconds: 20)
        #expect(warning != nil, "no warning on screen: \(session.screen())")
        session.send("q")
        let exited = session.waitFor("EXIT=", seconds: 20)
        #expect(exited?.contains("EXIT=1") == true, "\(exited ?? session.screen())")
        #expect(exited?.contains("eggs-tui: cannot write the log '/dev/full': No space left on device") == true, "\(exited ?? "")")
    }
}
