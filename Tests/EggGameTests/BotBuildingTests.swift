import Testing
@testable import EggBot
@testable import EggGame

/// A 3-chain that one red egg in column 2 fires: reds, then blues, then yellows.
private let threeChainBoard = board(
    "Y.....",
    "Y.....",
    "Y.....",
    "B.....",
    "B.....",
    "BY....",
    "RB....",
    "RR...."
)

/// Its first two steps: a 2-chain.
private let twoChainBoard = board("B.....", "B.....", "BY....", "RB....", "RR....")

/// `count` garbage eggs stacked in `column` of `board`.
private func stacked(_ board: Board, column: Int, count: Int) -> Board {
    var board = board
    for y in board.height(column: column)..<(board.height(column: column) + count) {
        board.setCode(column: column, y: y, code: 7)
    }
    return board
}

@Suite("insane builds for the longest chain while nothing presses it")
struct BotBuildingTests {
    @Test("insane builds only with no garbage queued and no opponent holding a chain of 3; the other levels never")
    func buildsWhenUnpressed() {
        #expect(BotEvaluation(eggsMax: 3).potential(threeChainBoard) == .init(chain: 3, eggs: 1))
        #expect(BotEvaluation(eggsMax: 3).potential(twoChainBoard).chain == 2)
        let pair = EggPair(pivot: .red, child: .blue), preview = [EggPair(pivot: .green, child: .yellow)]
        func builds(_ level: BotLevel, _ context: BotContext, rules: RuleSet = .sfe) -> Bool {
            var bot = Bot(level: level, seed: 5)
            _ = bot.choosePlacement(board: Board(), current: pair, preview: rules == .tsu ? preview + preview : preview,
                                    context: context, rules: rules)
            return bot.isBuilding
        }
        #expect(builds(.insane, BotContext()))
        #expect(builds(.insane, BotContext(opponents: [Board(), twoChainBoard])))
        let pressedByChain = builds(.insane, BotContext(opponents: [Board(), threeChainBoard]))
        #expect(!pressedByChain)
        let pressedByGarbage = builds(.insane, BotContext(incomingGarbage: 1))
        #expect(!pressedByGarbage)
        #expect(builds(.insane, BotContext(), rules: .tsu))
        let tsuPressed = builds(.insane, BotContext(opponents: [threeChainBoard]), rules: .tsu)
        #expect(!tsuPressed)
        for level in [BotLevel.easy, .medium, .hard] {
            let other = builds(level, BotContext())
            #expect(!other, "\(level) builds")
        }
        // The decision after a pressed one builds again: the state is set at every decision.
        var bot = Bot(level: .insane, seed: 5)
        _ = bot.choosePlacement(board: Board(), current: pair, preview: preview, context: BotContext(incomingGarbage: 4))
        #expect(!bot.isBuilding)
        _ = bot.choosePlacement(board: Board(), current: pair, preview: preview, context: BotContext())
        #expect(bot.isBuilding)
    }

    @Test("building, the potential chain counts by its steps and trigger eggs, not by its square")
    func valueBySteps() {
        var building = BotEvaluation(eggsMax: 3)
        building.building = true
        let quick = BotEvaluation(eggsMax: 3)
        #expect(building.potential(threeChainBoard).chain == 3)
        #expect(building.score(threeChainBoard) - building.shape(threeChainBoard) == 3 * 1_100 - 150)
        #expect(quick.score(threeChainBoard) - quick.shape(threeChainBoard) == BotEvaluation.chainValue(3))
    }

    @Test("building, a board built up at the sides scores above the same eggs in the spawn columns; otherwise the same")
    func surface() {
        let sides = stacked(stacked(Board(), column: 0, count: 2), column: 5, count: 2)
        let middle = stacked(stacked(Board(), column: 2, count: 2), column: 3, count: 2)
        let quick = BotEvaluation(eggsMax: 3)
        #expect(quick.score(sides) == quick.score(middle))
        var building = BotEvaluation(eggsMax: 3)
        building.building = true
        #expect(building.score(sides) > building.score(middle))
        // An empty board: each column stands its offset away from the U (3, 2, 2, 2, 2, 3).
        #expect(building.surfaceCost(Board(), heights: 0) == (3 + 2 + 2 + 2 + 2 + 3) * 45)
    }

    @Test("building under tsu alone, a board built up at the sides scores above the same eggs at the spawn column; otherwise, or with an opponent in view, the same")
    func oneSpawnSurface() {
        let sides = stacked(stacked(Board(), column: 0, count: 2), column: 5, count: 2)
        let middle = stacked(stacked(Board(), column: 2, count: 2), column: 3, count: 2)
        let quick = BotEvaluation(eggsMax: 3, rules: .tsu)
        #expect(quick.score(sides) == quick.score(middle))
        var building = quick
        building.building = true
        #expect(building.score(sides) > building.score(middle))
        // In sixths of an egg, by column: sides 4, 10, 8, 2, 4, 2; the middle 16, 10, 20, 14, 4, 10.
        #expect(building.surfaceCost(sides, heights: 4) == 30 * 30 / 6)
        #expect(building.surfaceCost(middle, heights: 4) == 74 * 30 / 6)
        // An empty board: each column stands its offset away from the surface (2, 1, 2, 1, 0, 1).
        #expect(building.surfaceCost(Board(), heights: 0) == (2 + 1 + 2 + 1 + 0 + 1) * 30)
        // With an opponent in view (versus) the surface is off: there it cost wins against hard.
        var versus = building
        versus.alone = false
        #expect(versus.score(sides) == versus.score(middle))
        // The bot sets it at every decision from the opponents it is shown.
        var bot = Bot(level: .insane, seed: 5)
        let pair = EggPair(pivot: .red, child: .blue), preview = [pair, pair]
        _ = bot.choosePlacement(board: Board(), current: pair, preview: preview, context: BotContext(opponents: [Board()]), rules: .tsu)
        #expect(bot.isBuilding && !bot.isAlone)
        _ = bot.choosePlacement(board: Board(), current: pair, preview: preview, context: BotContext(), rules: .tsu)
        #expect(bot.isBuilding && bot.isAlone)
    }

    @Test("building, from 50 eggs on the board only a trigger one pair can lay counts")
    func pairSizedTrigger() {
        // A red in column 5 that three more reds pop, beside 48 or 49 eggs of garbage and itself
        // (the spawn columns at 10, so a pair still reaches column 5).
        var base = Board()
        for column in 0..<2 { base = stacked(base, column: column, count: 12) }
        for column in 2..<4 { base = stacked(base, column: column, count: 10) }
        base = stacked(base, column: 4, count: 4)
        base.setCode(column: 5, y: 0, code: EggColor.red.rawValue + 1)
        let fifty = stacked(base, column: 4, count: 1), fortyNine = base
        #expect(fifty.eggsCount == 50 && fortyNine.eggsCount == 49)
        var building = BotEvaluation(eggsMax: 3)
        building.building = true
        #expect(building.potential(fortyNine) == .init(chain: 1, eggs: 3))
        #expect(building.potential(fifty).chain == 0)
        #expect(BotEvaluation(eggsMax: 3).potential(fifty) == .init(chain: 1, eggs: 3))
    }

    @Test("building under tsu (one spawn column) raises the spawn column's limits to 10 and keeps its own surface; under sfe they stay 9")
    func oneSpawnColumn() {
        var tsu = BotEvaluation(eggsMax: 3, rules: .tsu)
        #expect(tsu.dangerFrom == 9 && tsu.spawnFire == 9)
        let quick = tsu
        tsu.building = true
        #expect(tsu.dangerFrom == 10 && tsu.spawnFire == 10)
        // No value by steps, no pair-sized trigger: a low board scores as before, less its surface.
        let middle = stacked(stacked(Board(), column: 2, count: 2), column: 3, count: 2)
        for board in [threeChainBoard, middle] {
            #expect(tsu.score(board) + tsu.surfaceCost(board, heights: board.eggsCount) == quick.score(board))
        }
        // Its spawn column at 9 costs nothing building, 900 otherwise.
        let tall = stacked(Board(), column: 2, count: 9)
        #expect(tsu.score(tall) + tsu.surfaceCost(tall, heights: 9) - quick.score(tall) == 900)
        var sfe = BotEvaluation(eggsMax: 3)
        sfe.building = true
        #expect(sfe.dangerFrom == 9 && sfe.spawnFire == 9)
    }
}
