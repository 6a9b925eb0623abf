import EggTestSupport
import Foundation
import Testing

/// Small things a player meets on the command line: --version, help, key conflicts, bot lines.
@Suite("command-line details")
struct DetailsTests {
    @Test("--version prints the version on the root command and on each subcommand", arguments: [[], ["play"], ["bot"], ["replay"], ["soak"], ["resolve"]])
    func version(subcommand: [String]) throws {
        let result = try Harness.run(subcommand + ["--version"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.hasPrefix("eggs-tui 0."), "stdout: \(result.stdout)")
        #expect(result.stdout.contains("protocol"))
    }

    @Test("play --help lists the lobby keys")
    func playHelpListsLobbyKeys() throws {
        let result = try Harness.run(["play", "--help"])
        #expect(result.status == 0)
        let text = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for phrase in ["In the lobby", "marks you ready", "s changes the speed", "c the colours", "g the games", "h the starting height", "b starts a practice match", "l picks its level", "n starts the match now with the ready players"] {
            #expect(text.contains(phrase), "play --help lacks '\(phrase)': \(result.stdout)")
        }
    }

    @Test("a key bound to two actions is exit 2 naming the key and both actions")
    func conflictingKeys() throws {
        let home = try Harness.temporaryDirectory("keys")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let result = try Harness.run(["play", "--practice", "--keys", "left=x"], environment: ["XDG_CONFIG_HOME": home])
        #expect(result.status == 2)
        #expect(result.stderr.contains("'x'") && result.stderr.contains("left") && result.stderr.contains("rotate-cw"),
                "stderr: \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "stderr: \(result.stderr)")
        // Moving rotate-cw off x as well resolves it (the terminal is what fails then).
        let fixed = try Harness.run(["play", "--practice", "--keys", "left=x,rotate-cw=w"], environment: ["XDG_CONFIG_HOME": home])
        #expect(!fixed.stderr.contains("bound to both"), "stderr: \(fixed.stderr)")
    }

    @Test("bot prints one line per finished game; --quiet prints none", .tags(.slow), .slowTier)
    func botGameLines() throws {
        for quiet in [false, true] {
            let port = TestPorts.next()
            let state = try Harness.temporaryDirectory("botlines")
            defer { try? FileManager.default.removeItem(atPath: state) }
            let result = try Harness.run(
                ["bot", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "lines-\(port)", "--count", "2", "--players", "2",
                 "--games", quiet ? "1" : "2", "--speed", "9", "--level", "easy", "--seconds", "100", "--log", "\(state)/bot.jsonl"] + (quiet ? ["--quiet"] : []),
                environment: ["XDG_STATE_HOME": state], timeoutSeconds: 120)
            #expect(result.status == 0, "stderr: \(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            if quiet {
                #expect(lines.isEmpty, "--quiet printed: \(result.stdout)")
                continue
            }
            // Two bots, each at least two games: "<peer> game N: won|lost (winner …)|draw".
            // (Easy bots: with chains that take time, two games of insane bots outlast the budget.)
            let pattern = #"^[0-9a-f]{16} game [0-9]+: (won|lost \(winner [0-9a-f]{16}\)|draw)$"#
            for line in lines { #expect(line.range(of: pattern, options: .regularExpression) != nil, "line: \(line)") }
            #expect(lines.count >= 4, "stdout: \(result.stdout)")
            #expect(lines.contains { $0.hasSuffix("game 2: won") || $0.contains("game 2: lost") || $0.hasSuffix("game 2: draw") })
        }
    }
}
