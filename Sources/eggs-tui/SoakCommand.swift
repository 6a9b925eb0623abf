import ArgumentParser
import Consensus
import EggBot
import EggGame
import EggPrimitives
import Foundation
import PeerNet
import PeerNetUDP
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension EggsCommand {
    /// Bot peers as separate processes, with optional churn, live progress and a verdict.
    struct Soak: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run bot peers as separate processes, report progress, and end with a verdict.",
            discussion: """
                Exit 0 only when no peer crashed, no checkpoint mismatched, every log verifies and all \
                logs agree on the decided egg sequence where they overlap. With --churn, peers are \
                killed (SIGKILL) and restarted under the same ID during the run. Use --interface \
                127.0.0.1 to keep the traffic on this machine.
                """
        )

        @OptionGroup var network: NetworkOptions

        @Option(parsing: .unconditional, help: "How many bot peers (processes).")
        var peers: Int = 4

        @Option(parsing: .unconditional, help: "How long the run lasts.")
        var seconds: Double = 60

        @Option(help: "The bots' level: easy, medium, hard or insane.")
        var level: BotLevel = .medium

        @Option(parsing: .unconditional, help: "How many players a match waits for.")
        var players: Int = 2

        @Option(parsing: .unconditional, help: "Fall speed of the matches, 0 to 9.")
        var speed: Int = 9

        @Option(help: "The rule set of the matches (\(RuleSet.names)).")
        var rules: String = "sfe"

        @Option(name: .customLong("starting-height"), parsing: .unconditional,
                help: "Full rows of garbage on every grid before the first pair (sfe: 0 to 9; tsu has none).")
        var startingHeight: Int = 0

        @Flag(help: "Kill and restart peers during the run.")
        var churn = false

        @Option(help: "Where the peers' logs and summaries go (default: a new folder under $XDG_STATE_HOME/eggs/).")
        var dir: String?

        @Option(parsing: .unconditional, help: "Seed of the churn schedule and the bots (default: random).")
        var seed: UInt64?

        func validate() throws {
            guard (2...16).contains(peers) else { throw ValidationError("--peers must be from 2 to 16") }
            guard seconds >= 5 && seconds <= 86_400 else { throw ValidationError("--seconds must be from 5 to 86400") }
            guard (2...8).contains(players), players <= peers else { throw ValidationError("--players must be from 2 to 8 and at most --peers") }
            guard GravityClock.speedsSupported.contains(speed) else { throw ValidationError("--speed must be from 0 to 9") }
            guard let ruleSet = RuleSet.named(rules) else { throw ValidationError("unknown rule set '\(rules)' (known: \(RuleSet.names))") }
            try MatchSettingsOptions.validateStartingHeight(startingHeight, rules: ruleSet)
        }

        func run() throws {
            var generator = SystemRandomNumberGenerator()
            var random = EggGame.SplitMix64(seed: seed ?? generator.next())
            let folder = dir ?? NetworkOptions.stateDirectory() + "/soak-\(time(nil))"
            // Only the default folder's parents are created; a --dir must be in an existing directory.
            if mkdir(folder, 0o755) != 0 && errno != EEXIST {
                throw CommandFailure.badInput("cannot create the folder '\(folder)': \(String(cString: strerror(errno)))")
            }
            let firstID = network.peerID().raw & ~0xFF
            var fleet = SoakFleet(folder: folder, binary: Self.selfPath(), arguments: childArguments())
            fleet.passphrase = network.effectivePassphrase
            for index in 0..<peers { try fleet.start(index: index, id: PeerID(firstID | UInt64(index + 1))) }
            FileHandleOutput.stderr("soak: \(peers) peers, \(Int(seconds)) s, logs in \(folder)\(churn ? ", with churn" : "")")
            StopSignals.install()
            let start = MonotonicClock.now()
            let end = start.adding(nanoseconds: UInt64(seconds * 1e9))
            // Churn stops a few seconds before the end so the last restarted peers settle.
            let churnEnd = end.nanoseconds > 8_000_000_000 ? NetTime(nanoseconds: end.nanoseconds - 8_000_000_000) : start
            var nextChurn = start.adding(nanoseconds: 4_000_000_000 + random.next() % 3_000_000_000)
            var nextProgress = start.adding(milliseconds: 1_000)
            while !StopSignals.stopRequested {
                let now = MonotonicClock.now()
                if now >= end { break }
                fleet.reap()
                if churn, now >= nextChurn, now < churnEnd {
                    try fleet.churn(random: &random)
                    nextChurn = now.adding(nanoseconds: 3_000_000_000 + random.next() % 4_000_000_000)
                }
                fleet.restartDue(now: now)
                if now >= nextProgress {
                    FileHandleOutput.stderr(fleet.progress(elapsed: Double(now.nanoseconds(since: start)) / 1e9))
                    nextProgress = now.adding(milliseconds: 1_000)
                }
                usleep(50_000)
            }
            fleet.stopAll()
            let verdict = fleet.verdict()
            FileHandleOutput.stdout(verdict.json)
            if !verdict.ok { throw CommandFailure.detected("soak failed: \(verdict.reasons.joined(separator: "; "))") }
        }

        private func childArguments() -> [String] {
            var args = ["bot", "--room", network.room, "--group", network.group, "--port", "\(network.port)",
                        "--level", level.rawValue, "--players", "\(players)", "--speed", "\(speed)",
                        "--rules", rules, "--starting-height", "\(startingHeight)", "--seconds", "\(Int(seconds) + 30)"]
            if let interface = network.interface { args += ["--interface", interface] }
            if let passphrase = network.effectivePassphrase { args += ["--passphrase", passphrase] }
            for peer in network.peers { args += ["--peer", peer] }
            if network.noMulticast { args.append("--no-multicast") }
            return args
        }

        static func selfPath() -> String {
            var buffer = [CChar](repeating: 0, count: 4096)
            let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            guard count > 0 else { return CommandLine.arguments[0] }
            return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}

/// The soak's child processes: one bot peer each, some killed and restarted on purpose.
struct SoakFleet {
    struct Child {
        var index: Int
        var id: PeerID
        var process: Process
        var life: Int
        var log: String
        var summary: String
        var killedOnPurpose = false
        var exit: Exit?

        var pid: pid_t { process.processIdentifier }
    }

    /// How a child ended.
    enum Exit: Equatable {
        case code(Int32)
        case signal(Int32)
    }

    let folder: String
    let binary: String
    let arguments: [String]
    private(set) var lives: [Child] = []
    private var restartAt: [Int: NetTime] = [:]
    private(set) var kills = 0
    /// The IDs killed, in order.
    private(set) var killed: [PeerID] = []
    /// Checks the peers' log digests (a passphrase room's logs are keyed by it).
    var passphrase: String?

    init(folder: String, binary: String, arguments: [String]) {
        self.folder = folder
        self.binary = binary
        self.arguments = arguments
    }

    mutating func start(index: Int, id: PeerID) throws {
        let life = lives.filter { $0.index == index }.count + 1
        let log = "\(folder)/peer\(index)-life\(life).jsonl"
        let summary = "\(folder)/peer\(index)-life\(life).summary.json"
        let args = [binary] + arguments + ["--id", id.hex, "--seed", "\(id.raw &+ UInt64(life))", "--log", log, "--summary", summary]
        let process = try Self.spawn(args, stderrPath: "\(folder)/peer\(index)-life\(life).stderr")
        lives.append(Child(index: index, id: id, process: process, life: life, log: log, summary: summary))
    }

    /// Collects children that exited.
    mutating func reap() {
        for i in lives.indices where lives[i].exit == nil && !lives[i].process.isRunning {
            lives[i].exit = Self.exit(of: lives[i].process)
        }
    }

    /// Kills one running peer (SIGKILL, like a crash) and schedules its restart under the same
    /// ID. One peer is down at a time, so at least one stays up for any fleet of 2 or more; the
    /// first victim is the highest ID (the coordinator, whose loss is the hardest case), later
    /// ones are drawn at random.
    mutating func churn(random: inout EggGame.SplitMix64) throws {
        guard restartAt.isEmpty else { return }
        let running = lives.indices.filter { lives[$0].exit == nil }
        guard running.count >= 2 else { return }
        let victim = kills == 0
            ? running.max { lives[$0].id < lives[$1].id }!
            : running[Int(random.next() % UInt64(running.count))]
        lives[victim].killedOnPurpose = true
        kill(lives[victim].pid, SIGKILL)
        kills += 1
        killed.append(lives[victim].id)
        restartAt[lives[victim].index] = MonotonicClock.now().adding(nanoseconds: 1_000_000_000 + random.next() % 2_000_000_000)
    }

    mutating func restartDue(now: NetTime) {
        for (index, at) in restartAt where now >= at {
            restartAt[index] = nil
            guard let id = lives.last(where: { $0.index == index })?.id else { continue }
            try? start(index: index, id: id)
        }
    }

    /// Asks every running peer to stop (SIGTERM: it writes its summary and leaves), then waits.
    mutating func stopAll() {
        for child in lives where child.exit == nil { child.process.terminate() }
        let deadline = MonotonicClock.now().adding(milliseconds: 15_000)
        while lives.contains(where: { $0.exit == nil }) && MonotonicClock.now() < deadline {
            reap()
            usleep(50_000)
        }
        for i in lives.indices where lives[i].exit == nil {
            kill(lives[i].pid, SIGKILL)
            lives[i].process.waitUntilExit()
            lives[i].exit = Self.exit(of: lives[i].process)
        }
    }

    func progress(elapsed: Double) -> String {
        let reports = lives.compactMap { Self.readSummary($0.summary) }
        let games = reports.map(\.games).max() ?? 0
        let messages = reports.map(\.delivered).reduce(0, +)
        let retransmitted = reports.map(\.retransmitted).reduce(0, +)
        let checkpoints = reports.map(\.checkpoints).reduce(0, +)
        let desyncs = reports.map(\.desyncs).reduce(0, +)
        let wait = reports.map(\.maxEggWaitMs).max() ?? 0
        let alive = lives.filter { $0.exit == nil }.count
        return "soak \(Int(elapsed))s: \(alive) peers up, \(kills) killed, games \(games), delivered \(messages), retransmitted \(retransmitted), checkpoints \(checkpoints), desyncs \(desyncs), worst egg wait \(format3(wait)) ms"
    }

    struct SummaryFields {
        var games = 0, delivered = 0, retransmitted = 0, checkpoints = 0, desyncs = 0
        var maxEggWaitMs = 0.0
    }

    static func readSummary(_ path: String) -> SummaryFields? {
        guard case .success(let bytes) = WholeFile.read(path, limit: 1 << 20),
              let bot = JSONValue.parse(String(decoding: bytes, as: UTF8.self))?["bots"]?.arrayValue?.first else { return nil }
        let int = { (key: String) in Int(bot[key]?.intValue ?? 0) }
        return SummaryFields(games: int("games"), delivered: int("delivered"), retransmitted: int("retransmitted"),
                             checkpoints: int("checkpointsVerified"), desyncs: int("desyncs"),
                             maxEggWaitMs: bot["maxEggWaitMs"]?.doubleValue ?? 0)
    }

    struct Verdict {
        var ok: Bool
        var reasons: [String]
        var json: String
    }

    /// Crashes, mismatches, logs that do not verify, logs that disagree on a decided round.
    func verdict() -> Verdict {
        var reasons: [String] = []
        var crashed = 0
        for child in lives where !child.killedOnPurpose {
            if child.exit != .code(0) {
                crashed += 1
                let said = Self.lastLine(of: "\(folder)/peer\(child.index)-life\(child.life).stderr")
                reasons.append("peer \(child.id.hex) life \(child.life) exited with status \(child.exit.map(Self.describe) ?? "none (still running)")"
                               + (said.map { ": \($0)" } ?? " (see its .stderr)"))
            }
        }
        var decided: [String: (UInt64, String)] = [:]
        var verified = 0, checkpoints = 0, mismatches = 0, disagreements = 0, rounds = 0
        var unstarted = 0
        for child in lives {
            // A peer killed on purpose before it opened its log has nothing to verify.
            if child.killedOnPurpose && access(child.log, F_OK) != 0 {
                unstarted += 1
                continue
            }
            do {
                let report = try Self.verifyLog(child.log, passphrase: passphrase)
                verified += 1
                checkpoints += report.checkpoints
                if !report.desyncs.isEmpty {
                    mismatches += report.desyncs.count
                    reasons.append("\(child.log): \(report.desyncs[0])")
                }
                for (game, round, value) in report.decidedRounds {
                    let key = "\(game)/\(round)"
                    if let (other, where_) = decided[key] {
                        if other != value {
                            disagreements += 1
                            if disagreements <= 3 { reasons.append("round \(key): \(child.log) decided \(hex16(value)), \(where_) decided \(hex16(other))") }
                        }
                    } else {
                        decided[key] = (value, child.log)
                        rounds += 1
                    }
                }
            } catch {
                reasons.append("\(child.log): \(error)")
            }
        }
        let summaries = lives.compactMap { Self.readSummary($0.summary) }
        let desyncs = summaries.map(\.desyncs).reduce(0, +)
        if desyncs > 0 && mismatches == 0 { reasons.append("\(desyncs) desyncs reported by the peers") }
        let ok = reasons.isEmpty && rounds > 0
        if rounds == 0 { reasons.append("no round was decided") }
        let games = summaries.map(\.games).max() ?? 0
        let wait = summaries.map(\.maxEggWaitMs).max() ?? 0
        let int = { (n: Int) in JSONValue.int(Int64(n)) }
        let json = JSONValue.object([
            ("ok", .bool(ok)), ("peers", int(Set(lives.map(\.index)).count)), ("lives", int(lives.count)), ("killed", int(kills)),
            ("killedPeers", .array(killed.map { .string($0.hex) })),
            ("crashed", int(crashed)), ("killedBeforeLog", int(unstarted)), ("logsVerified", int(verified)),
            ("checkpoints", int(checkpoints)), ("mismatches", int(mismatches)), ("roundsDecided", int(rounds)),
            ("disagreements", int(disagreements)), ("games", int(games)),
            ("maxEggWaitMs", .double((wait * 1000).rounded() / 1000)), ("dir", .string(folder)),
        ]).spacedSerialized
        return Verdict(ok: ok, reasons: reasons, json: json)
    }

    /// The exit code, or the signal that ended the process.
    static func describe(_ exit: Exit) -> String {
        switch exit {
        case .code(let code): "\(code)"
        case .signal(let signal): "signal \(signal)"
        }
    }

    static func exit(of process: Process) -> Exit {
        process.terminationReason == .uncaughtSignal ? .signal(process.terminationStatus) : .code(process.terminationStatus)
    }

    /// The last non-empty line of a small text file (a child's stderr), if any.
    static func lastLine(of path: String) -> String? {
        guard case .success(let bytes) = WholeFile.read(path, limit: 1 << 16) else { return nil }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").last.map(String.init)
    }

    static func verifyLog(_ path: String, passphrase: String? = nil) throws -> ReplayReport {
        guard let file = try? FileDescriptor.open(FilePath(path), .readOnly, options: .closeOnExec) else {
            throw CommandFailure.badInput("cannot open \(path)")
        }
        defer { try? file.close() }
        var replay = Replay(passphrase: passphrase)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            // swift-system retries EINTR; an error ends the log like its end (as before).
            guard let count = try? buffer.withUnsafeMutableBytes({ try file.read(into: $0) }), count > 0 else { break }
            try replay.receive(buffer[0..<count])
        }
        return try replay.finish()
    }

    /// Starts `args` (the first is the executable) with stdin and stdout on /dev/null and stderr
    /// in a new file at `stderrPath`.
    static func spawn(_ args: [String], stderrPath: String) throws -> Process {
        guard FileManager.default.createFile(atPath: stderrPath, contents: nil),
              let stderr = FileHandle(forWritingAtPath: stderrPath)
        else { throw CommandFailure.detected("cannot create \(stderrPath)") }
        defer { try? stderr.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: args[0])
        process.arguments = Array(args.dropFirst())
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        do {
            try process.run()
        } catch {
            throw CommandFailure.detected("cannot start \(args[0]): \(error)")
        }
        return process
    }
}
