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
                Solo: one game per seed (seeds --first-seed..<--first-seed + --games), the bot alone at its own \
                pace, speed 0, until it tops out or has placed --pairs pairs; prints per level the mean and max \
                largest chain per game, the mean largest chain fired by pair 50, the games that topped out before \
                their last pair (with a 95 % Wilson interval; and how many of them held a chain of 6 or more, \
                --show-top-outs printing each), the pairs per second of game time and the time per \
                decision (mean and p99, CPU time of one thread). \
                Versus: --matches games (seeds --first-seed..<--first-seed + --matches, seats alternating) a \
                pairing. --versus next (the default): each level against the next, each at its own pace, and \
                insane's decisions at hard's pace against hard; prints the stronger level's wins. --versus greedy: \
                each level against the greedy reference player (it pops as soon as any placement pops, the one \
                popping the most, and otherwise plays flat), the greedy player at the level's pace or at \
                --greedy-pace's. Win rates come with 95 % Wilson intervals. Each rule set of --rules is measured in turn (default sfe; `--rules sfe,tsu` for both); \
                the bots see the pairs the rule set shows (sfe one, tsu two).
                """
        )

        @Option(parsing: .unconditional, help: "Solo games per level (seeds --first-seed..<--first-seed + N).")
        var games: Int = 100

        @Option(parsing: .unconditional, help: "The first seed played (solo games and matches alike).")
        var firstSeed: Int = 0

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

        @Option(help: "Pairings (comma-separated): next (each level against the next), greedy (each level against the greedy player).")
        var versus: String = "next"

        @Flag(help: "Print every solo game that topped out: its seed, pairs, the chain its last board held, and that board.")
        var showTopOuts = false

        @Option(help: "The greedy player's pace, a level's (default: the pace of the level it plays).")
        var greedyPace: String?

        func validate() throws {
            guard (0...10_000).contains(games) else { throw ValidationError("--games must be from 0 to 10000") }
            guard (1...10_000).contains(pairs) else { throw ValidationError("--pairs must be from 1 to 10000") }
            guard (0...10_000).contains(matches) else { throw ValidationError("--matches must be from 0 to 10000") }
            guard EggPair.colorsSupported.contains(colors) else { throw ValidationError("--colors must be 4, 5 or 6") }
            guard (0...1_000_000_000).contains(firstSeed) else { throw ValidationError("--first-seed must be from 0 to 1000000000") }
            _ = try parsedLevels()
            _ = try parsedPairings()
            _ = try parsedGreedyPace()
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

        func parsedPairings() throws -> Set<String> {
            let names = Set(versus.split(separator: ",", omittingEmptySubsequences: false).map(String.init))
            for name in names where name != "next" && name != "greedy" {
                throw ValidationError("--versus: unknown pairing '\(name)' (known: next, greedy)")
            }
            return names
        }

        func parsedGreedyPace() throws -> BotLevel? {
            guard let greedyPace else { return nil }
            guard let level = BotLevel(rawValue: greedyPace) else { throw ValidationError("--greedy-pace: unknown level '\(greedyPace)'") }
            return level
        }

        /// `count` seeds from --first-seed.
        func seeds(_ count: Int) -> [UInt64] {
            (0..<UInt64(count)).map { UInt64(firstSeed) + $0 }
        }

        /// "seeds A–B" of `count` seeds from --first-seed.
        func seedsText(_ count: Int) -> String {
            "seeds \(firstSeed)–\(firstSeed + max(count, 1) - 1)"
        }

        /// A win rate with its 95 % Wilson interval: "W of N (R %, 95 % L–H %)".
        func rateText(_ wins: Int, of games: Int) -> String {
            let rate = games == 0 ? 0 : Double(wins) * 100 / Double(games)
            let interval = BotBench.wilson(wins, of: games)
            return "\(wins) of \(games) (\(format2(rate)) %, 95 % \(format2(interval.low * 100))–\(format2(interval.high * 100)) %)"
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
                print("solo, \(games) games (\(seedsText(games))) of at most \(pairs) pairs, \(colors) colours, speed 0, "
                      + "rules \(rules.name)")
                print("level   largest chain mean  max  by pair 50  pairs/s  decision mean  p99      pairs/game")
                var topOuts: [String] = []
                for level in levels {
                    let result = BotBench.solo(level: level, seeds: seeds(games), colors: colors,
                                               pairsMax: pairs, rules: rules, clock: clock)
                    print(pad(level.rawValue, 8) + pad(format2(result.meanLargestChain), 20) + pad("\(result.maxLargestChain)", 5)
                          + pad(format2(result.meanEarlyLargestChain), 12)
                          + pad(format2(result.pairsPerSecond), 9) + pad(format2(result.meanDecisionMicroseconds / 1000) + " ms", 15)
                          + pad(format2(result.p99DecisionMicroseconds / 1000) + " ms", 9)
                          + format2(Double(result.pairsPlaced) / Double(max(1, result.games))))
                    topOuts.append("\(level.rawValue) topped out before \(pairs) pairs: \(rateText(result.topOuts, of: result.games)); "
                                   + "holding a chain of \(BotBench.heldChainMin) or more: \(result.topOutsHoldingChain)")
                    if showTopOuts {
                        for game in result.topOutGames {
                            print("\(level.rawValue) seed \(game.seed) topped out at pair \(game.pairs) holding a chain of \(game.heldChain):")
                            game.board.notationRows(rows: rules.rows).forEach { print("  " + $0) }
                        }
                    }
                }
                topOuts.forEach { print($0) }
            }
            let pairings = try parsedPairings()
            if matches > 0 && levels.count > 1 && pairings.contains("next") {
                print("versus, \(matches) games each (\(seedsText(matches))), \(colors) colours, speed 0, rules \(rules.name), "
                      + "each level at its own pace")
                for index in 1..<levels.count {
                    let stronger = levels[index], weaker = levels[index - 1]
                    let result = BotBench.versus(stronger, weaker, seeds: seeds(matches), colors: colors, rules: rules)
                    print("\(stronger.rawValue) beats \(weaker.rawValue): \(rateText(result.first, of: result.games)), "
                          + "lost \(result.second), undecided \(result.undecided)")
                }
                if let hard = levels.firstIndex(of: .hard), let insane = levels.firstIndex(of: .insane), hard < insane {
                    // Skill alone: insane's decisions at hard's pace.
                    let result = BotBench.versus(.insane, .hard, seeds: seeds(matches), colors: colors,
                                                 firstPace: .hard, rules: rules)
                    print("insane at hard's pace beats hard: \(rateText(result.first, of: result.games)), "
                          + "lost \(result.second), undecided \(result.undecided)")
                }
            }
            if matches > 0 && pairings.contains("greedy") {
                let pace = try parsedGreedyPace()
                print("versus greedy, \(matches) games each (\(seedsText(matches))), \(colors) colours, speed 0, rules \(rules.name), "
                      + "greedy at \(pace.map { $0.rawValue + "'s" } ?? "each level's") pace")
                for level in levels {
                    let result = BotBench.versusGreedy(level, seeds: seeds(matches), colors: colors, greedyPace: pace, rules: rules)
                    print("\(level.rawValue) beats greedy: \(rateText(result.first, of: result.games)), "
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
