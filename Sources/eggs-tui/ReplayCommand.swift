import ArgumentParser
import Consensus
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension EggsCommand {
    /// Plays a recorded match back, or verifies it headless (docs/playing.md, docs/formats.md).
    struct Replay: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Play a recorded match back from any peer's message log, or verify it.",
            discussion: """
                Keys during playback: space pauses, . steps one message while paused, + and - change \
                the speed, n seeks to the next game, ? shows the keys and the rules, q quits. --verify replays headless, checks every \
                checkpoint, every line's digest and the delivery order (per sender one seq after \
                another, senders members of their view, views moving forward) and prints one JSON line: exit 0 when all match, 1 naming \
                a checkpoint mismatch, 2 naming the first damaged line (an edited, missing, duplicated, \
                reordered or spliced line, even one sealed again; no header; a value out of its limits). A log cut off mid-line \
                (a killed peer) replays up to its last whole line; "complete" says whether the log has \
                its end line. A log of a passphrase room needs --passphrase (or EGGS_PASSPHRASE).
                """
        )

        @Argument(help: "The message log (JSON Lines).")
        var log: String

        @Flag(help: "Replay headless and check every checkpoint: a short summary on a terminal, else one JSON line.")
        var verify = false

        @Flag(help: "With --verify: print the one JSON line even on a terminal.")
        var json = false

        @Option(parsing: .unconditional, help: "Playback speed factor (0.25 to 64).")
        var speed: Double = 1

        @Option(help: "Render the replay headless into this asciicast v2 file (--speed applies), with a marker at every chain of 3 or more.")
        var cast: String?

        @Flag(name: .customLong("no-color"), help: "Draw without colours (NO_COLOR is respected too).")
        var noColor = false

        @Option(help: "The room's passphrase, for a log written in a passphrase room (or set EGGS_PASSPHRASE).")
        var passphrase: String?

        /// The passphrase from the flag, else from EGGS_PASSPHRASE; empty means none.
        private var effectivePassphrase: String? {
            let value = passphrase ?? getenv("EGGS_PASSPHRASE").map { String(cString: $0) }
            guard let value, !value.isEmpty else { return nil }
            return value
        }

        func validate() throws {
            guard speed >= 0.25 && speed <= 64 else { throw ValidationError("--speed must be from 0.25 to 64") }
            if json && !verify { throw ValidationError("--json goes with --verify") }
        }

        func run() throws {
            if let cast { return try CastRecorder.run(log: log, speed: speed, output: cast, passphrase: effectivePassphrase) }
            if PracticeLog.isPracticeLog(path: log) { return try runPractice() }
            if verify {
                try runVerify()
            } else {
                // A missing or unreadable log is said as such, before any terminal is needed.
                let file = try openLog()
                try? file.close()
                let term = try Terminal(noColor: noColor)
                defer { term.restore() }
                let screen = try ReplayScreen(path: log, speed: speed, unicode: term.unicode, passphrase: effectivePassphrase)
                GameLoop.run(screen, on: term)
                if let failure = screen.failure { throw failure }
            }
        }

        /// What `replay --verify` prints on a terminal: the players, games, messages and
        /// checkpoints checked, and the verdict.
        static func summary(_ report: ReplayReport, log: String) -> [String] {
            let players = report.players.keys.sorted().map(\.hex)
            let games = Set(report.decidedRounds.map(\.game)).count
            let verdict: String
            if let desync = report.desyncs.first {
                verdict = "checkpoint mismatch: \(desync)"
            } else if report.ok {
                verdict = "verified: every checkpoint, digest and delivery matches" + (report.complete ? "" : " (the log has no end line: its peer did not close it)")
            } else {
                verdict = "does not verify"
            }
            return [
                "\(log)",
                "  players      \(players.count)" + (players.isEmpty ? "" : ": " + players.joined(separator: ", ")),
                "  games        \(games)",
                "  messages     \(report.messages) (delivery order checked for \(report.orderChecked))",
                "  checkpoints  \(report.checkpoints) checked",
                "  verdict      \(verdict)",
            ]
        }

        /// A practice match's log: re-run, checked against every game's end it records, or played back.
        private func runPractice() throws {
            let loaded = try PracticeLog.Loaded(path: log, passphrase: effectivePassphrase)
            guard verify else {
                let term = try Terminal(noColor: noColor)
                defer { term.restore() }
                GameLoop.run(PracticeScreen(playback: loaded, speed: speed, unicode: term.unicode), on: term)
                return
            }
            let report = PracticeLog.verify(loaded)
            let ok = report.mismatch == nil
            let jsonLine = JSONValue.object([
                ("ok", .bool(ok)), ("format", .string(PracticeLog.format)), ("games", .int(Int64(report.games))),
                ("gamesChecked", .int(Int64(report.checked))), ("moves", .int(Int64(loaded.movesCount))),
                ("lines", .int(Int64(loaded.lines))), ("complete", .bool(loaded.complete)),
                ("mismatch", report.mismatch.map { .string($0) } ?? .null),
            ])
            if json || isatty(STDOUT_FILENO) != 1 {
                FileHandleOutput.stdout(jsonLine.serialized)
            } else {
                for line in [
                    "\(log)",
                    "  practice     \(loaded.name) against the \(loaded.level.rawValue) bot, best of \(loaded.options.bestOf)",
                    "  games        \(report.games) (\(report.checked) checked: winner and both grids)",
                    "  moves        \(loaded.movesCount)",
                    "  verdict      " + (ok ? "verified: the match re-run ends every game as the log says" + (loaded.complete ? "" : " (the log has no end line)") : "mismatch: \(report.mismatch!)"),
                ] { FileHandleOutput.stdout(line) }
            }
            if let line = loaded.truncatedAtLine {
                FileHandleOutput.stderr("eggs-tui: \(log): line \(line) is cut off; replayed up to the last whole line")
            }
            if let mismatch = report.mismatch { throw CommandFailure.detected("\(log): \(mismatch)") }
        }

        /// The log, opened for reading, or a one-line error naming it.
        private func openLog() throws -> FileDescriptor {
            do {
                return try FileDescriptor.open(log, .readOnly, options: [.closeOnExec])
            } catch {
                throw CommandFailure.badInput("cannot open '\(log)': \(LogFile.describe(Errno(thrown: error)))")
            }
        }

        private func runVerify() throws {
            let file = try openLog()
            defer { try? file.close() }
            var replay = Consensus.Replay(passphrase: effectivePassphrase)
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            let report: ReplayReport
            do {
                while true {
                    // swift-system retries EINTR.
                    let count: Int
                    do {
                        count = try buffer.withUnsafeMutableBytes { try file.read(into: $0) }
                    } catch {
                        throw CommandFailure.badInput("cannot read '\(log)': \(LogFile.describe(Errno(thrown: error)))")
                    }
                    if count == 0 { break }
                    try replay.receive(buffer[0..<count])
                }
                report = try replay.finish()
            } catch let error as ReplayError {
                throw CommandFailure.badInput("\(log): \(error)")
            }
            if json || isatty(STDOUT_FILENO) != 1 {
                FileHandleOutput.stdout(report.json)
            } else {
                for line in Self.summary(report, log: log) { FileHandleOutput.stdout(line) }
            }
            if let line = report.truncatedAtLine {
                FileHandleOutput.stderr("eggs-tui: \(log): line \(line) is cut off; replayed up to the last whole line")
            }
            if report.messages == 0 {
                FileHandleOutput.stderr("eggs-tui: \(log): the log holds no message: nothing was checked but its lines' digests")
            }
            if let desync = report.desyncs.first {
                throw CommandFailure.detected("\(log): checkpoint mismatch: \(desync)")
            }
            if !report.ok { throw CommandFailure.detected("\(log): the replay does not verify") }
        }
    }
}
