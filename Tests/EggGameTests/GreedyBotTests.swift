import Testing
@testable import EggBot
@testable import EggGame

@Suite("the greedy reference player")
struct GreedyBotTests {
    @Test("it pops as soon as a placement pops, taking the largest pop", arguments: [RuleSet.sfe, .tsu])
    func popsAtOnce(rules: RuleSet) {
        // Two reds in column 0 and three in column 5: a red pair pops either group, the five
        // in column 5 the larger.
        let start = board(
            "R....R",
            "R....R",
            "Y....R"
        )
        let pair = EggPair(pivot: .red, child: .red)
        let target = GreedyBot().choosePlacement(board: start, current: pair, rules: rules)!
        let outcome = BotSimulator(rules: rules).place(pair, at: target, on: start)
        #expect(outcome.chain == 1)
        #expect(start.eggsCount + 2 - outcome.board.eggsCount == 5, "placement \(target)")
    }

    @Test("with nothing to pop it plays flat: the lowest tallest column")
    func playsFlat() {
        let start = board(
            "Y.....",
            "B..G..",
            "YB.BGY"
        )
        let pair = EggPair(pivot: .red, child: .red)
        let target = GreedyBot().choosePlacement(board: start, current: pair, rules: .sfe)!
        let outcome = BotSimulator.sfe.place(pair, at: target, on: start)
        #expect(outcome.chain == 0)
        #expect(target.orientation == .left || target.orientation == .right, "placement \(target)")
        let tallest = (0..<Board.columnsCount).map { outcome.board.height(column: $0) }.max()!
        #expect(tallest == 3)
    }

    @Test("bot-eval's greedy pairing plays whole games; the Wilson interval brackets the rate")
    func versusGreedyPlays() {
        let result = BotBench.versusGreedy(.easy, seeds: [1000, 1001], rules: .sfe)
        #expect(result.games == 2)
        let interval = BotBench.wilson(80, of: 100)
        #expect(abs(interval.low - 0.7112) < 0.001 && abs(interval.high - 0.8666) < 0.001, "\(interval)")
        #expect(BotBench.wilson(0, of: 10).low == 0)
    }
}
