import ArgumentParser
import EggGame
#if canImport(Glibc)
import Glibc
#endif

extension EggsCommand {
    /// The chain calculator of SPEC §4.
    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resolve a board's chain and print it as JSON.",
            discussion: """
                Reads a board (FILE or standard input): up to 12 lines of exactly 6 characters, \
                top row first, '.' empty, R B Y P G O eggs, '#' garbage. Lets everything fall, \
                resolves every chain step, lands --incoming garbage eggs, and prints one JSON object.
                """
        )

        @Option(help: "Garbage eggs to land after the chain.")
        var incoming: Int = 0

        @Option(help: "The rule set (only 'sfe').")
        var rules: String = "sfe"

        @Argument(help: "The board file (default: standard input).")
        var file: String?

        func validate() throws {
            guard rules == "sfe" else { throw ValidationError("unknown rule set '\(rules)' (known: sfe)") }
            guard (0...1_000).contains(incoming) else { throw ValidationError("--incoming must be from 0 to 1000") }
        }

        func run() throws {
            let text = try readInput()
            do {
                let report = try resolveBoard(text, incoming: incoming)
                FileHandleOutput.stdout(report.json)
            } catch {
                throw CommandFailure.badInput("\(file ?? "stdin"): \(error)")
            }
        }

        private func readInput() throws -> String {
            let limit = 64 * 1024
            let name = file ?? "stdin"
            var fd = STDIN_FILENO
            if let file {
                fd = open(file, O_RDONLY)
                guard fd >= 0 else {
                    throw CommandFailure.badInput("cannot open '\(file)': \(String(cString: strerror(errno)))")
                }
            }
            defer { if file != nil { close(fd) } }
            guard let bytes = FileHandleOutput.readAll(fd, limit: limit) else {
                throw CommandFailure.badInput("\(name): cannot read it, or it is over \(limit) bytes")
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw CommandFailure.badInput("\(name): not UTF-8 text")
            }
            return text
        }
    }
}
