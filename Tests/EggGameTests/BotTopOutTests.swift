import Testing
@testable import EggBot
@testable import EggGame

/// A hard bot's board of a solo `sfe` game (seed 5031, its 41st pair): column 3, a spawn column,
/// stands at 10. The red–blue pair put red on it (11), and the next pair spawned resting on it and
/// locked at the first gravity step, its drop timer carried over from the last pair: a top-out.
private let tallSpawnColumn = board(
    "......",
    "......",
    "...Y..",
    "...Y..",
    "..BR..",
    "..RY.P",
    ".YBBRP",
    "BYBPRB",
    "BBPBPB",
    "YYYBRP",
    "BRPPRP",
    "BBYBBB"
)

@Suite("bots that do not wall themselves in")
struct BotTopOutTests {
    @Test("a spawn column a row below the spawn row counts as a top-out a pair later")
    func spawnColumnBelowSpawnRowIsDeadly() {
        let simulator = BotSimulator.sfe
        #expect(!simulator.isPerilous(tallSpawnColumn))
        var tall = tallSpawnColumn
        tall.setCode(column: 3, y: 10, code: 1)
        #expect(simulator.isPerilous(tall) && !tall.isSpawnBlocked(rules: .sfe))
        let tsu = BotSimulator(rules: .tsu)
        var tsuTall = Board()
        for y in 0..<11 { tsuTall.setCode(column: 2, y: y, code: 7) }
        #expect(tsu.isPerilous(tsuTall))
        tsuTall.setCode(column: 2, y: 10, code: 0)
        #expect(!tsu.isPerilous(tsuTall))
    }

    @Test("hard and insane do not bring a spawn column to a row below the spawn row while another placement is left")
    func keepsSpawnColumnsOffTheSpawnRow() {
        let pair = EggPair(pivot: .red, child: .blue)
        let preview = [EggPair(pivot: .yellow, child: .blue)]
        for level in [BotLevel.hard, .insane] {
            for seed in UInt64(0)..<8 {
                var bot = Bot(level: level, seed: seed)
                let placement = bot.choosePlacement(board: tallSpawnColumn, current: pair, preview: preview, context: BotContext())!
                let after = BotSimulator.sfe.place(pair, at: placement, on: tallSpawnColumn)
                #expect(!BotSimulator.sfe.isPerilous(after.board), "\(level) seed \(seed) played \(placement)")
            }
        }
    }
}

/// `tsu` insane's board at pair 95 of solo seed 1141 (13 rows, the hidden one first): the spawn
/// column at 10, columns 3–5 full to the spawn row, column 1 at 9 and column 0 at 3, holding a
/// 9-chain. The pairs coming are yellow–yellow, blue–red, purple–yellow, blue–blue. Insane built
/// the 9 into a 10 whose trigger is one yellow in column 0, stacked blue–red on column 1 (11, a
/// row below the spawn row) and meant to lay purple–yellow's yellow past it. Gravity had lowered
/// that pair beside column 1 first: the drop timer runs on from pair to pair (18 ticks a pair at
/// insane's pace), and it stood at 35 or 36 of 38 when the pair spawned (the only timers at which
/// that pair cannot pass). No pair reached column 0 again,
/// and insane topped out at pair 99 holding the 10-chain. The search judged its later pairs'
/// reach by the spawn row alone.
private let wallsOffItsTrigger = try! Board(notation: [
    "......",
    "....PR",
    "....PY",
    "..RPBB",
    ".PBRRY",
    ".YRBRP",
    ".PRPPR",
    ".YRYPR",
    ".PYPBB",
    ".YBPPY",
    "YPPRRY",
    "YBPBPP",
    "BRRBYY",
].joined(separator: "\n"), rowsMax: 13)

@Suite("bots that do not wall off their own trigger")
struct BotTriggerWallTests {
    /// Pairs 95–101 of seed 1141.
    private let pairs = [(EggColor.yellow, EggColor.yellow), (.blue, .red), (.purple, .yellow), (.blue, .blue), (.yellow, .red),
                         (.yellow, .yellow), (.red, .yellow)].map { EggPair(pivot: $0.0, child: $0.1) }

    /// Plays pairs 95–99 from the board, the drop timer running on 18 ticks a pair from `timer`;
    /// returns the largest chain fired, or nil on a top-out.
    private func play(seed: UInt64, timer: Int) -> Int? {
        let simulator = BotSimulator(rules: .tsu)
        let fall = RuleSet.tsu.timing.dropInterval(speed: 0)
        var bot = Bot(level: .insane, seed: seed)
        var board = wallsOffItsTrigger
        var largest = 0
        for index in 0..<5 {
            let gravity = PairGravity(fallTicks: fall, timerTicks: (timer + 18 * index) % fall,
                                      moveTicks: BotLevel.insane.ticksPerMove, pairTicks: BotLevel.insane.ticksPerPair - 1)
            guard let placement = bot.choosePlacement(board: board, current: pairs[index], preview: Array(pairs[index + 1...index + 2]),
                                                      context: BotContext(gravity: gravity), rules: .tsu) else { return nil }
            let outcome = simulator.place(pairs[index], at: placement, on: board)
            if outcome.toppedOut { return nil }
            board = outcome.board
            largest = max(largest, outcome.chain)
        }
        return largest
    }

    @Test("tsu insane knows its next pairs' gravity: it fires its long chain while it can still reach the trigger (seed 1141)")
    func firesBeforeTheTriggerIsWalledOff() {
        #expect(BotEvaluation(eggsMax: 3, rules: .tsu).potential(wallsOffItsTrigger).chain == 9)
        for seed in UInt64(0)..<4 {
            // 37 at pair 95, so 35 at pair 97: purple–yellow reaches column 0 past column 1 (11) with
            // the timer at 0–34 but not at 35 or 36, as in the game, where it did not.
            let largest = play(seed: seed, timer: 37)
            #expect((largest ?? 0) >= 8, "seed \(seed): largest chain \(String(describing: largest)) (nil: topped out)")
        }
    }

    @Test("the next pair's gravity runs on from the current pair's; unknown without the ticks of a pair")
    func nextGravity() {
        let gravity = PairGravity(fallTicks: 38, timerTicks: 37, moveTicks: 2, pairTicks: 18)
        #expect(gravity.next?.timerTicks == 17 && gravity.next?.next?.timerTicks == 35)
        #expect(PairGravity(fallTicks: 38, timerTicks: 37, moveTicks: 2).next == nil)
    }

    @Test("with gravity unknown, insane's later pairs reach only the columns the evaluation counts as reachable")
    func laterPairsWithinReach() {
        let simulator = BotSimulator(rules: .tsu)
        var walled = wallsOffItsTrigger
        walled.setCode(column: 1, y: 9, code: 2)
        walled.setCode(column: 1, y: 10, code: 1)
        let pair = EggPair(pivot: .purple, child: .yellow)
        #expect(simulator.reachableColumns(walled).low == 1)
        #expect(!simulator.placements(for: pair, on: walled, withinReach: true).contains { $0.column == 0 })
        #expect(simulator.placements(for: pair, on: walled).contains { $0.column == 0 })
    }
}

@Suite("bots that do not wall off a side column")
struct BotWallTests {
    /// Three eggs of one colour in column 5 that one more of it pops; column 4 between them and the spawn columns.
    private func sideTrigger(wall: Int) -> Board {
        var board = Board()
        for y in 0..<3 { board.setCode(column: 5, y: y, code: 1) }
        for y in 0..<wall { board.setCode(column: 4, y: y, code: 7) }
        return board
    }

    @Test("a column a row below the spawn row walls off the columns beyond it: their trigger does not count, their empty cells cost")
    func wallCutsOffTriggers() {
        let evaluation = BotEvaluation(eggsMax: 2)
        let open = sideTrigger(wall: 10), walled = sideTrigger(wall: 11)
        let openReach = BotSimulator.sfe.reachableColumns(open), walledReach = BotSimulator.sfe.reachableColumns(walled)
        #expect(openReach.low == 0 && openReach.high == 5)
        #expect(walledReach.low == 0 && walledReach.high == 4)
        #expect(evaluation.potential(open).chain == 1)
        #expect(evaluation.potential(walled).chain == 0 && evaluation.potential(walled, anyColumn: true).chain == 1)
        #expect(evaluation.walledCells(open) == 0)
        #expect(evaluation.walledCells(walled) == 9)
        #expect(evaluation.shape(open) - evaluation.shape(walled) >= 9 * BotEvaluation.Weights().walledCell)
    }
}

@Suite("the bench's record of top-outs")
struct BotBenchTopOutTests {
    @Test("a solo game that tops out is kept with its seed, pairs, last board and the chain that board held")
    func recordsTopOuts() {
        // Medium alone tops out on seed 1031 (pair 88) and lives through seed 1030.
        let result = BotBench.solo(level: .medium, seeds: [1030, 1031], clock: { 0 })
        #expect(result.topOuts == 1 && result.topOutGames.count == 1)
        let game = result.topOutGames[0]
        #expect(game.seed == 1031 && game.pairs == 88)
        #expect(game.board.isSpawnBlocked(rules: .sfe))
        #expect(game.heldChain == BotEvaluation(eggsMax: 2).potential(game.board, anyColumn: true).chain)
        #expect(result.topOutsHoldingChain == (game.heldChain >= BotBench.heldChainMin ? 1 : 0))
    }
}
