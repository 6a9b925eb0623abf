import EggTestSupport
import Foundation
import Testing

@Suite("command line")
struct CommandLineTests {
    @Test("resolve prints the chain of a board as one JSON object")
    func resolvePrintsJSON() throws {
        let result = try Harness.run(["resolve"], stdin: "B.....\nRB....\nRRB...\nRBB...\n")
        #expect(result.status == 0)
        // Nothing floats, so the R group pops at once (tick 1); it is removed on tick 14 and the
        // fall's first pass is on 16; the Bs above fall in passes of 2 ticks, the last one (3 rows)
        // moves on 16…26 and lands on 28, lands for 15 and pops on tick 43; removed on 56, a pass
        // that moves nothing on 58, the check on 59 ends it and the next pair spawns on tick 60.
        #expect(result.stdout.hasPrefix(#"{"rules": "sfe", "chain": 2, "steps": [{"popped": 4, "garbageCleared": 0}, {"popped": 5, "garbageCleared": 0}], "garbage": 8, "ticks": 60, "board": ["#))
        #expect(result.stderr.isEmpty)
    }

    @Test("resolve --timeline adds the tick of each phase change")
    func resolveTimeline() throws {
        let result = try Harness.run(["resolve", "--timeline"], stdin: "R.....\n......\nRRR...\n")
        #expect(result.status == 0)
        // The R falls a row (passes 2 and 4), lands on the pass of 6, lands until 21 and pops;
        // removed on 34, the pass on 36 moves nothing, the check on 37 ends it: spawn on 38.
        #expect(result.stdout.contains(#""ticks": 38"#))
        #expect(result.stdout.hasSuffix(#""timeline": [{"tick": 2, "event": "fall"}, {"tick": 4, "event": "fall"}, {"tick": 6, "event": "fall ends"}, {"tick": 21, "event": "landing ends"}, {"tick": 21, "event": "pop"}, {"tick": 34, "event": "removed"}, {"tick": 36, "event": "fall ends"}, {"tick": 38, "event": "spawn"}]}"# + "\n"), "\(result.stdout)")
        let plain = try Harness.run(["resolve"], stdin: "R.....\n......\nRRR...\n")
        #expect(!plain.stdout.contains("timeline"))
        let help = try Harness.run(["resolve", "--help"])
        #expect(help.stdout.contains("--timeline"))
    }

    @Test("resolve lands incoming garbage after the chain")
    func resolveIncoming() throws {
        let result = try Harness.run(["resolve", "--incoming", "3"], stdin: "......\n")
        #expect(result.status == 0)
        #expect(result.stdout.contains(#""......", "...###"]"#))
    }

    @Test("resolve --rules names the rule set; an unknown one is bad usage")
    func resolveRules() throws {
        let result = try Harness.run(["resolve", "--rules", "sfe"], stdin: "RRRR..\n")
        #expect(result.status == 0)
        #expect(result.stdout.contains(#""rules": "sfe""#))
        let unknown = try Harness.run(["resolve", "--rules", "nope"], stdin: "RRRR..\n")
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("unknown rule set 'nope'"))
    }

    @Test("bot-eval --rules measures each named rule set in turn; an unknown one is bad usage")
    func botEvalRules() throws {
        let result = try Harness.run(["bot-eval", "--rules", "sfe,tsu", "--levels", "easy", "--games", "1", "--pairs", "5",
                                      "--matches", "0"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("speed 0, rules sfe\n"))
        #expect(result.stdout.contains("speed 0, rules tsu\n"))
        // One table row a rule set (the name padded to 8), besides the top-out lines.
        #expect(result.stdout.components(separatedBy: "\neasy    ").count == 3, "\(result.stdout)")
        let unknown = try Harness.run(["bot-eval", "--rules", "sfe,nope", "--games", "1", "--matches", "0"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("unknown rule set 'nope'"))
    }

    @Test("bot-eval --first-seed picks the seeds played (0 by default); --versus greedy plays each level against greedy")
    func botEvalFirstSeedAndGreedy() throws {
        let common = ["bot-eval", "--levels", "easy", "--games", "2", "--pairs", "5", "--matches", "1"]
        let plain = try Harness.run(common)
        #expect(plain.status == 0)
        #expect(plain.stdout.contains("solo, 2 games (seeds 0–1)"), "\(plain.stdout)")
        #expect(!plain.stdout.contains("greedy"))
        let later = try Harness.run(common + ["--first-seed", "1000", "--versus", "greedy"])
        #expect(later.status == 0)
        #expect(later.stdout.contains("solo, 2 games (seeds 1000–1001)"), "\(later.stdout)")
        #expect(later.stdout.contains("versus greedy, 1 games each (seeds 1000–1000)"), "\(later.stdout)")
        #expect(later.stdout.contains("easy beats greedy: "), "\(later.stdout)")
        #expect(later.stdout.contains("easy topped out before 5 pairs: "), "\(later.stdout)")
        #expect(later.stdout.contains("; holding a chain of 6 or more: 0\n"), "\(later.stdout)")
        let unknown = try Harness.run(["bot-eval", "--versus", "nope", "--games", "1"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("unknown pairing 'nope'"))
    }

    @Test("resolve --rules tsu: 13 rows, a score per step, garbage by target points; a 14th row is bad input")
    func resolveTsu() throws {
        let result = try Harness.run(["resolve", "--rules", "tsu"], stdin: "B.....\nRRR...\nRBBB..\n")
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix(#"{"rules": "tsu", "chain": 2, "steps": [{"popped": 4, "garbageCleared": 0, "score": 40}, {"popped": 4, "garbageCleared": 0, "score": 320}], "garbage": 5, "ticks": "#))
        let board = result.stdout.split(separator: "[").last ?? ""
        #expect(board.split(separator: ",").count == 13)
        let thirteen = try Harness.run(["resolve", "--rules", "tsu"], stdin: String(repeating: "......\n", count: 13))
        #expect(thirteen.status == 0)
        let fourteen = try Harness.run(["resolve", "--rules", "tsu"], stdin: String(repeating: "......\n", count: 14))
        #expect(fourteen.status == 2)
        #expect(fourteen.stderr.contains("line 14, column 1: a board has at most 13 rows"))
    }

    @Test("--starting-height on play, bot and soak: out of sfe's 0–9, or any height under tsu, is bad usage")
    func startingHeightFlag() throws {
        for command in [["play", "--practice"], ["bot"], ["soak"]] {
            for (extra, message) in [(["--starting-height", "10"], "--starting-height must be from 0 to 9 under sfe"),
                                     (["--starting-height=-1"], "--starting-height must be from 0 to 9 under sfe"),
                                     (["--rules", "tsu", "--starting-height", "1"], "--starting-height must be 0 under tsu")] {
                let result = try Harness.run(command + extra + ["--interface", "127.0.0.1"])
                #expect(result.status == 2, "\(command + extra): \(result.stderr)")
                #expect(result.stderr.contains(message), "\(command + extra): \(result.stderr)")
            }
        }
    }

    @Test("a negative number after a numeric option is its range error (exit 2 naming the option), never \"Missing value\"")
    func negativeNumbers() throws {
        let cases: [([String], String)] = [
            (["play", "--practice", "--speed", "-1"], "--speed"),
            (["play", "--practice", "--colors", "-4"], "--colors"),
            (["play", "--practice", "--best-of", "-3"], "--best-of"),
            (["play", "--practice", "--starting-height", "-1"], "--starting-height"),
            (["play", "--port", "-1"], "--port"),
            (["bot", "--count", "-1"], "--count"),
            (["bot", "--games", "-1"], "--games"),
            (["bot", "--players", "-2"], "--players"),
            (["bot", "--spectators", "-1"], "--spectators"),
            (["bot", "--seconds", "-5"], "--seconds"),
            (["bot", "--engine-timeout", "-1"], "--engine-timeout"),
            (["bot", "--starting-height", "-1"], "--starting-height"),
            (["soak", "--peers", "-1"], "--peers"),
            (["soak", "--seconds", "-1"], "--seconds"),
            (["soak", "--players", "-1"], "--players"),
            (["soak", "--speed", "-1"], "--speed"),
            (["soak", "--starting-height", "-1"], "--starting-height"),
            (["replay", "--speed", "-1", "/dev/null"], "--speed"),
            (["bot-eval", "--games", "-1"], "--games"),
            (["bot-eval", "--pairs", "-1"], "--pairs"),
            (["bot-eval", "--matches", "-1"], "--matches"),
            (["bot-eval", "--colors", "-4"], "--colors"),
        ]
        for (arguments, option) in cases {
            let network = ["replay", "bot-eval"].contains(arguments[0]) ? [] : ["--interface", "127.0.0.1"]
            let result = try Harness.run(arguments + network)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Missing value"), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(option), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
    }

    @Test("a bad board exits 2 naming the line and column")
    func resolveBadBoard() throws {
        let result = try Harness.run(["resolve"], stdin: "......\n..RXR.\n")
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("line 2, column 4"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test("too many rows and a wrong width are bad input")
    func resolveTooManyRows() throws {
        let rows = String(repeating: "......\n", count: 16)
        let tooMany = try Harness.run(["resolve"], stdin: rows)
        #expect(tooMany.status == 2)
        #expect(tooMany.stderr.contains("line 16"))
        let fifteen = try Harness.run(["resolve"], stdin: String(repeating: "......\n", count: 15))
        #expect(fifteen.status == 0)
        let narrow = try Harness.run(["resolve"], stdin: "....\n")
        #expect(narrow.status == 2)
        #expect(narrow.stderr.contains("line 1"))
    }

    @Test("a missing board file exits 2 with its name")
    func resolveMissingFile() throws {
        let result = try Harness.run(["resolve", "/nonexistent/board.txt"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("/nonexistent/board.txt"))
    }

    @Test("an unknown flag exits 2 with one line on stderr")
    func unknownFlag() throws {
        let result = try Harness.run(["resolve", "--frobnicate"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--frobnicate"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test("--help exits 0 and lists the subcommands")
    func help() throws {
        let result = try Harness.run(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("resolve"))
        #expect(result.stdout.contains("play"))
    }

    @Test("play without a terminal says so and exits 2")
    func playWithoutTerminal() throws {
        let result = try Harness.run(["play", "--practice"], stdin: "")
        #expect(result.status == 2)
        #expect(result.stderr.contains("no usable terminal"))
    }

    @Test("a bad --keys binding exits 2 naming it")
    func badKeys() throws {
        let result = try Harness.run(["play", "--practice", "--keys", "jump=w"], stdin: "")
        #expect(result.status == 2)
        #expect(result.stderr.contains("jump=w"))
    }

    @Test("bot with neither players nor spectators exits 2 saying so")
    func botWithNobody() throws {
        let result = try Harness.run(["bot", "--interface", "127.0.0.1", "--count", "0"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("nothing to run"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test("an EGGS_TRACE_INPUT that cannot be written exits 2 naming it")
    func unwritableTrace() throws {
        let result = try Harness.run(["play", "--interface", "127.0.0.1", "--port", "\(TestPorts.next())"],
                                     stdin: "", environment: ["EGGS_TRACE_INPUT": "/"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("'/'"), "stderr: \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
    }
}
