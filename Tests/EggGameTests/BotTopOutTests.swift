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
