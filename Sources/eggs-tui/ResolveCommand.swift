import ArgumentParser
import Consensus
import EggGame
#if canImport(Glibc)
import Glibc
#endif

extension EggsCommand {
    /// The chain calculator of docs/rules.md.
    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resolve a board's chain and print it as JSON.",
            discussion: """
                Reads a board (FILE or standard input) as it is the moment a pair locks: up to 15 \
                lines of exactly 6 characters for sfe (a 12-line board is rows 3-14), up to 13 for \
                tsu (the top one the hidden row), top row first \
                (LF, CRLF or CR line endings), '.' empty, R B Y P G O eggs, '#' garbage. Empty input \
                is an error ("no board"). Lets everything fall and resolves every chain step in time, \
                lands --incoming garbage eggs, and prints one JSON object with the ticks from the \
                lock to the next spawn and every row of the rule set (for tsu each step's score, \
                and the garbage before offsetting). --timeline adds "timeline": the tick of each phase \
                change, the lock being tick 0 ("landing ends", "pop", "removed", every "fall" pass, \
                "fall ends" for the pass that moves nothing, "bounce ends", "garbage" when the \
                incoming eggs are put on the grid, "spawn").
                """
        )

        // Unconditional, so "--incoming -1" is read as a (bad) value, not as an unknown flag.
        @Option(parsing: .unconditional, help: "Garbage eggs to land after the chain (0 to 1000).")
        var incoming: Int = 0

        @Option(help: "The rule set (\(RuleSet.names)).")
        var rules: String = "sfe"

        @Flag(help: "Add the tick of each phase change (landing ends, pop, removed, fall passes, bounce ends, spawn) as \"timeline\".")
        var timeline = false

        @Argument(help: "The board file (default: standard input).")
        var file: String?

        func validate() throws {
            guard RuleSet.named(rules) != nil else { throw ValidationError("unknown rule set '\(rules)' (known: \(RuleSet.names))") }
            guard (0...1_000).contains(incoming) else { throw ValidationError("--incoming must be from 0 to 1000, not \(incoming)") }
        }

        func run() throws {
            let text = try readInput()
            do {
                let report = try resolveBoard(text, incoming: incoming, rules: RuleSet.named(rules) ?? .sfe)
                FileHandleOutput.stdout(Self.json(report, timeline: timeline).spacedSerialized)
            } catch {
                throw CommandFailure.badInput("\(file ?? "stdin"): \(error)")
            }
        }

        /// the object of docs/formats.md, from the one JSON encoder: rules, chain, steps, garbage, ticks, board,
        /// and with `timeline` the phase changes.
        static func json(_ report: ResolveReport, timeline: Bool = false) -> JSONValue {
            let entries: [(String, JSONValue)] = timeline ? [("timeline", .array(report.timeline.map { entry in
                .object([("tick", .int(Int64(entry.tick))), ("event", .string(entry.event.rawValue))])
            }))] : []
            return .object([
                ("rules", .string(report.rules.name)),
                ("chain", .int(Int64(report.chain.chain))),
                ("steps", .array(report.chain.steps.map { step in
                    var fields: [(String, JSONValue)] = [("popped", .int(Int64(step.popped))), ("garbageCleared", .int(Int64(step.garbageCleared)))]
                    if let score = step.score { fields.append(("score", .int(Int64(score)))) }
                    return .object(fields)
                })),
                ("garbage", .int(Int64(report.garbage))),
                ("ticks", .int(Int64(report.ticks))),
                ("board", .array(report.board.notationRows(rows: report.rules.rows).map { .string($0) })),
            ] + entries)
        }

        private func readInput() throws -> String {
            let limit = 64 * 1024
            let name = file ?? "stdin"
            let read = file.map { WholeFile.read($0, limit: limit) }
                ?? FileHandleOutput.readAll(STDIN_FILENO, limit: limit).map { .success($0) } ?? .failure(.unreadableOrTooLarge)
            let bytes: [UInt8]
            switch read {
            case .success(let all): bytes = all
            case .failure(.cannotOpen(let code)):
                throw CommandFailure.badInput("cannot open '\(name)': \(WholeFile.Failure.cannotOpen(code).reason)")
            case .failure(.unreadableOrTooLarge):
                throw CommandFailure.badInput("\(name): cannot read it, or it is over \(limit) bytes")
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw CommandFailure.badInput("\(name): not UTF-8 text")
            }
            return text
        }
    }
}
