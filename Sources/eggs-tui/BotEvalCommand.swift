import ArgumentParser
import EggBot
import EggGame
#if canImport(Glibc)
import Glibc
#endif

extension EggsCommand {
    /// Measures the bot levels headless: the chains they build alone, their pace, their decision
    /// time, and how each level fares against the next at their own paces.
    struct BotEval: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bot-eval",
            abstract: "Measure the bot levels: solo chains, pace, decision time, win rates.",
            discussion: """
                Solo: one game per seed (seeds 0..<--games), the bot alone at its own pace, speed 0, until it \
                tops out or has placed --pairs pairs; prints per level the mean and max largest chain per game, \
                the pairs per second of game time and the time per decision (mean and p99, CPU time of one thread). \
                Versus: --matches games (seeds 0..<--matches, seats alternating) of each level against the \
                next, each at its own pace, and insane's decisions at hard's pace against hard; prints the stronger \
                level's wins. Each rule set of --rules is measured in turn (default sfe; `--rules sfe,tsu` for both); \
                the bots see the pairs the rule set shows (sfe one, tsu two).
                """
        )

        @Option(parsing: .unconditional, help: "Solo games per level (seeds 0..<N).")
        var games: Int = 100

        @Option(parsing: .unconditional, help: "Pairs per solo game at most.")
        var pairs: Int = 150

        @Option(parsing: .unconditional, help: "Games of each level against the next (0: none).")
        var matches: Int = 100

        @Option(parsing: .unconditional, help: "Colours: 4, 5 or 6.")
        var colors: Int = 4

        @Option(help: "Levels to measure (comma-separated; default all).")
        var levels: String?

        @Option(help: "Rule sets to measure, in turn (comma-separated: sfe, tsu).")
        var rules: String = "sfe"

        func validate() throws {
            guard (0...10_000).contains(games) else { throw ValidationError("--games must be from 0 to 10000") }
            guard (1...10_000).contains(pairs) else { throw ValidationError("--pairs must be from 1 to 10000") }
            guard (0...10_000).contains(matches) else { throw ValidationError("--matches must be from 0 to 10000") }
            guard EggPair.colorsSupported.contains(colors) else { throw ValidationError("--colors must be 4, 5 or 6") }
            _ = try parsedLevels()
            _ = try parsedRules()
        }

        func parsedRules() throws -> [RuleSet] {
            let names = rules.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return try names.map { name in
                guard let ruleSet = RuleSet.named(name) else {
                    throw ValidationError("--rules: unknown rule set '\(name)' (known: \(RuleSet.names))")
                }
                return ruleSet
            }
        }

        func parsedLevels() throws -> [BotLevel] {
            guard let levels else { return BotLevel.allCases }
            return try levels.split(separator: ",").map { name in
                guard let level = BotLevel(rawValue: String(name)) else { throw ValidationError("--levels: unknown level '\(name)'") }
                return level
            }
        }

        func run() throws {
            for ruleSet in try parsedRules() {
                try run(rules: ruleSet)
            }
        }

        private func run(rules: RuleSet) throws {
            let levels = try parsedLevels()
            // CPU time of this thread: what a decision costs on one core, whatever else the machine runs.
            let clock: () -> UInt64 = {
                var ts = timespec()
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
                return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
            }
            if games > 0 {
                print("solo, \(games) games of at most \(pairs) pairs, \(colors) colours, speed 0, rules \(rules.name)")
                print("level   largest chain mean  max  pairs/s  decision mean  p99      pairs/game")
                for level in levels {
                    let result = BotBench.solo(level: level, seeds: (0..<UInt64(games)).map { $0 }, colors: colors,
                                               pairsMax: pairs, rules: rules, clock: clock)
                    print(pad(level.rawValue, 8) + pad(format2(result.meanLargestChain), 20) + pad("\(result.maxLargestChain)", 5)
                          + pad(format2(result.pairsPerSecond), 9) + pad(format2(result.meanDecisionMicroseconds / 1000) + " ms", 15)
                          + pad(format2(result.p99DecisionMicroseconds / 1000) + " ms", 9)
                          + format2(Double(result.pairsPlaced) / Double(max(1, result.games))))
                }
            }
            if matches > 0 && levels.count > 1 {
                print("versus, \(matches) games each, \(colors) colours, speed 0, rules \(rules.name), each level at its own pace")
                for index in 1..<levels.count {
                    let stronger = levels[index], weaker = levels[index - 1]
                    let result = BotBench.versus(stronger, weaker, seeds: (0..<UInt64(matches)).map { $0 }, colors: colors, rules: rules)
                    let rate = result.games == 0 ? 0 : Double(result.first) * 100 / Double(result.games)
                    print("\(stronger.rawValue) beats \(weaker.rawValue): \(result.first) of \(result.games) (\(format2(rate)) %), "
                          + "lost \(result.second), undecided \(result.undecided)")
                }
                if let hard = levels.firstIndex(of: .hard), let insane = levels.firstIndex(of: .insane), hard < insane {
                    // Skill alone: insane's decisions at hard's pace.
                    let result = BotBench.versus(.insane, .hard, seeds: (0..<UInt64(matches)).map { $0 }, colors: colors,
                                                 firstPace: .hard, rules: rules)
                    let rate = result.games == 0 ? 0 : Double(result.first) * 100 / Double(result.games)
                    print("insane at hard's pace beats hard: \(result.first) of \(result.games) (\(format2(rate)) %), "
                          + "lost \(result.second), undecided \(result.undecided)")
                }
            }
        }

        private func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
        }

        private func format2(_ value: Double) -> String {
            let scaled = Int((value * 100).rounded())
            return "\(scaled / 100).\(String(scaled % 100 + 100).dropFirst())"
        }
    }
}
