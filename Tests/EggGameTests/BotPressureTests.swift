import Testing
@testable import EggBot
@testable import EggGame

/// A board holding a 2-chain that one red egg in column 2 fires.
private let twoChainBoard = board(
    "B.....",
    "B.....",
    "BY....",
    "RB....",
    "RR...."
)

@Suite("bots that answer pressure")
struct BotPressureTests {
    @Test("garbage queued against it that would bury its spawn columns makes a building bot fire what it holds")
    func firesUnderBurial() {
        let pair = EggPair(pivot: .red, child: .red)
        let preview = [EggPair(pivot: .green, child: .yellow)]
        for level in [BotLevel.medium, .hard, .insane] {
            var bot = Bot(level: level, seed: 3)
            // A few eggs queued: not yet a burial, it keeps building.
            let light = bot.choosePlacement(board: twoChainBoard, current: pair, preview: preview,
                                            context: BotContext(incomingGarbage: 2))!
            #expect(BotSimulator.sfe.place(pair, at: light, on: twoChainBoard).chain == 0, "\(level) fired at \(light)")
            // Six rows queued: its spawn columns would reach 6, three below where it fires anything.
            let heavy = bot.choosePlacement(board: twoChainBoard, current: pair, preview: preview,
                                            context: BotContext(incomingGarbage: 36))!
            #expect(BotSimulator.sfe.place(pair, at: heavy, on: twoChainBoard).chain >= 2, "\(level) kept its chain at \(heavy)")
        }
    }

    @Test("a line that tops out ranks below every living one, later deaths and longer chains higher")
    func dyingOrder() {
        #expect(Bot.dyingScore(depth: 1, chain: 0) > Bot.dyingScore(depth: 0, chain: 12))
        #expect(Bot.dyingScore(depth: 1, chain: 3) > Bot.dyingScore(depth: 1, chain: 2))
        #expect(Bot.dyingScore(depth: 3, chain: 99) < -1_000_000_000)
        #expect(Bot.isDying(Bot.dyingScore(depth: 3, chain: 20)) && !Bot.isDying(-1_000_000_000))
    }
}
