import Testing
@testable import EggBot
@testable import EggGame
#if canImport(Glibc)
import Glibc
#endif

/// CPU time of the calling thread in nanoseconds (what bot-eval reads).
private func threadNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// A board holding a 2-chain that one red egg in column 2 fires (and a 1-chain from a blue egg in
/// column 1).
private let twoChainBoard = board(
    "B.....",
    "B.....",
    "BY....",
    "RB....",
    "RR...."
)

@Suite("bots that build chains")
struct BotChainTests {
    @Test("the evaluation finds the chain that one more egg would fire")
    func virtualDropsFindChain() {
        let one = BotEvaluation(eggsMax: 1).potential(twoChainBoard)
        #expect(one == .init(chain: 2, eggs: 1))
        #expect(BotEvaluation(eggsMax: 2).potential(twoChainBoard) == .init(chain: 2, eggs: 1))
        // Two eggs are needed to complete a group of two.
        let two = board("RR....")
        #expect(BotEvaluation(eggsMax: 1).potential(two).chain == 0)
        #expect(BotEvaluation(eggsMax: 2).potential(two) == .init(chain: 1, eggs: 2))
        #expect(BotEvaluation(eggsMax: 2).potential(Board()).chain == 0)
    }

    @Test("the potential chain counts the eggs it pops beyond four a step, and the score charges them")
    func excessEggs() {
        let evaluation = BotEvaluation(eggsMax: 3)
        var free = BotEvaluation.Weights()
        free.excess = 0
        let uncharged = BotEvaluation(eggsMax: 3, weights: free)
        // One red in column 2 joins two pairs: five pop in one step. Beside a single red, four.
        let five = board("RR.RR.")
        let four = board("RR.R..")
        #expect(evaluation.potential(five) == .init(chain: 1, eggs: 1, excess: 1))
        #expect(evaluation.potential(four) == .init(chain: 1, eggs: 1, excess: 0))
        #expect(evaluation.potential(twoChainBoard) == .init(chain: 2, eggs: 1, excess: 0))
        #expect(uncharged.score(five) - evaluation.score(five) == 100)
        #expect(uncharged.score(four) == evaluation.score(four))
    }

    @Test("a building bot keeps a short chain for later; crowded, it fires it")
    func firesWhenCrowded() {
        let pair = EggPair(pivot: .red, child: .red)
        for level in [BotLevel.hard, .insane] {
            var bot = Bot(level: level, seed: 3)
            let calm = bot.choosePlacement(board: twoChainBoard, current: pair, preview: [EggPair(pivot: .green, child: .yellow)], context: BotContext())!
            #expect(BotSimulator.sfe.place(pair, at: calm, on: twoChainBoard).chain == 0, "\(level) fired a 2-chain at \(calm)")
            var crowded = twoChainBoard
            for y in 0..<10 { crowded.setCode(column: 3, y: y, code: 7) }
            for y in 0..<10 { crowded.setCode(column: 5, y: y, code: 7) }
            let pressed = bot.choosePlacement(board: crowded, current: pair, preview: [EggPair(pivot: .green, child: .yellow)], context: BotContext())!
            #expect(BotSimulator.sfe.place(pair, at: pressed, on: crowded).chain >= 2, "\(level) kept its chain at \(pressed)")
        }
    }

    @Test("insane fires a short chain whose garbage would bury an opponent's spawn columns; alone, against a low opponent, or as hard, it keeps building")
    func pressesAnOpponent() {
        let pair = EggPair(pivot: .red, child: .red)
        let preview = [EggPair(pivot: .green, child: .yellow)]
        // Six rows of garbage: the 2-chain's garbage (8 eggs) brings its spawn columns to 7 or more.
        var tall = Board()
        for column in 0..<Board.columnsCount {
            for y in 0..<6 { tall.setCode(column: column, y: y, code: 7) }
        }
        for level in [BotLevel.hard, .insane] {
            var bot = Bot(level: level, seed: 3)
            for opponents in [[], [Board()]] {
                let calm = bot.choosePlacement(board: twoChainBoard, current: pair, preview: preview,
                                               context: BotContext(opponents: opponents))!
                #expect(BotSimulator.sfe.place(pair, at: calm, on: twoChainBoard).chain == 0,
                        "\(level) fired a 2-chain at \(calm) against \(opponents.count) low opponents")
            }
            let pressing = bot.choosePlacement(board: twoChainBoard, current: pair, preview: preview,
                                               context: BotContext(opponents: [Board(), tall]))!
            let outcome = BotSimulator.sfe.place(pair, at: pressing, on: twoChainBoard)
            if level == .insane {
                #expect(outcome.chain >= 2, "insane kept its chain at \(pressing) with an opponent six rows high")
                var landed = tall
                BotSimulator.sfe.landGarbage(outcome.garbage, on: &landed)
                #expect(BotSimulator.sfe.spawnHeight(landed) >= 7)
            } else {
                #expect(outcome.chain == 0, "hard does not read its opponents' boards")
            }
        }
    }

    @Test("the search reads the current pair and the pairs shown next, never further")
    func searchDepthIsWhatAHumanSees() {
        var rng = Xoshiro256StarStar(seed: 21)
        for trial in 0..<12 {
            var grid = PlayerGrid()
            grid.apply(.landGarbage(rng.nextInt(below: 12)))
            var board = grid.board
            for _ in 0..<10 {
                let pair = EggPair(value: rng.next(), colors: 4)
                board.drop(pair, orientation: .up, column: rng.nextInt(below: 6))
                _ = board.resolveChainCounts()
            }
            let current = EggPair(value: rng.next(), colors: 4), next = EggPair(value: rng.next(), colors: 4)
            let shown = EggPair(value: rng.next(), colors: 4)
            // Hard reads one pair ahead, insane as many as are shown (here two): a pair beyond them
            // must not change the decision.
            var first = Bot(level: .hard, seed: 9), second = Bot(level: .hard, seed: 9)
            let a = first.choosePlacement(board: board, current: current, preview: [next, EggPair(pivot: .red, child: .red)], context: .init())
            let b = second.choosePlacement(board: board, current: current, preview: [next, EggPair(pivot: .blue, child: .yellow)], context: .init())
            var third = Bot(level: .insane, seed: 9), fourth = Bot(level: .insane, seed: 9)
            let c = third.choosePlacement(board: board, current: current, preview: [next, shown, EggPair(pivot: .red, child: .red)], context: .init())
            let d = fourth.choosePlacement(board: board, current: current, preview: [next, shown, EggPair(pivot: .blue, child: .yellow)], context: .init())
            #expect(c == d, "trial \(trial): a pair beyond the two shown changed the decision")
            #expect(a == b, "trial \(trial): a pair beyond the shown one changed the decision")
        }
    }

    @Test("two bots of one level with their own seeds do not mirror each other", arguments: BotLevel.allCases)
    func noMirroring(level: BotLevel) {
        var match = LocalMatch(options: .init(seed: 4, speed: 0), seats: [.bot(level), .bot(level)])
        while !match.isOver && match.grids[0].pairsSpawned < 12 && match.grids[1].pairsSpawned < 12 { match.tick() }
        let moves = match.inputs.map { $0.filter { if case .move = $0 { true } else { false } } }
        #expect(moves[0] != moves[1], "\(level): both seats made the same moves")
    }

    @Test("each level keeps its pace; insane is no faster than 3 pairs a second", arguments: BotLevel.allCases)
    func pace(level: BotLevel) {
        let result = BotBench.solo(level: level, seeds: [1], pairsMax: 20, clock: { 0 })
        #expect(result.pairsPerSecond <= level.pairsPerSecond + 0.01, "\(level): \(result.pairsPerSecond) pairs/s")
        // The rule set's own time (lock to next spawn, chains that take time) comes on top of the
        // bot's pace, so a level places somewhat fewer pairs than its pace allows.
        #expect(result.pairsPerSecond >= level.pairsPerSecond * 0.45, "\(level): \(result.pairsPerSecond) pairs/s")
        #expect(BotLevel.insane.pairsPerSecond <= 3.0)
    }

    @Test("alone, hard builds a chain of 6 or more in each of 3 seeded games; the measurement repeats")
    func hardBuildsChains() {
        let result = BotBench.solo(level: .hard, seeds: [0, 1, 2], pairsMax: 70, clock: { 0 })
        #expect(result.largestChains.allSatisfy { $0 >= 6 }, "largest chains \(result.largestChains)")
        let again = BotBench.solo(level: .hard, seeds: [0, 1, 2], pairsMax: 70, clock: { 0 })
        #expect(again.largestChains == result.largestChains)
    }

    @Test("insane does not top out alone in 60 pairs of the seeds where it once built a tower in a spawn column by pair 23")
    func insaneSurvives() {
        let result = BotBench.solo(level: .insane, seeds: [3, 5], pairsMax: 60, clock: { 0 })
        #expect(result.pairsPlaced == 2 * 60, "\(result.pairsPlaced) pairs placed")
    }

    @Test("a placement counts as reachable only if its moves still work once the pair has fallen a cell")
    func reachableAfterFalling() throws {
        // sfe: column 3 holds 10 eggs (rows 5–14), the spawn column beside it is empty.
        let rows = (0..<15).map { $0 >= 5 ? ($0 % 2 == 0 ? "...Y.." : "...B..") : "......" }
        let board = try Board(notation: rows.joined(separator: "\n"))
        let spawned = LivePair(spawning: EggPair(pivot: .red, child: .blue), rules: .sfe)
        let half = spawned.shifted(columns: 0, halfRows: 1), lower = spawned.shifted(columns: 0, halfRows: 2)
        #expect(half.fits(on: board, topRow: RuleSet.sfe.pairTopRow) && lower.fits(on: board, topRow: RuleSet.sfe.pairTopRow))
        var onlyFromSpawn = 0
        for placement in Placement.all {
            let fromSpawn = Bot.moves(to: placement, from: spawned, on: board, rules: .sfe) != nil
            let fromLower = Bot.moves(to: placement, from: half, on: board, rules: .sfe) != nil && Bot.moves(to: placement, from: lower, on: board, rules: .sfe) != nil
            let reachable = Bot.isReachable(placement, from: spawned, on: board, rules: .sfe)
            #expect(reachable == (fromSpawn && fromLower), "\(placement)")
            if fromSpawn && !fromLower { onlyFromSpawn += 1 }
        }
        // Some placements past the tall column work only from the spawn row: those are refused.
        #expect(onlyFromSpawn > 0)
    }

    @Test("when every placement reachable with a margin tops out, the bot takes one it can reach from the spawn as it is")
    func reachesPastTallColumnsRatherThanTopOut() {
        // tsu: column 2 (the pivot's spawn column) at 10, its neighbours at 11. A pair lowered by
        // gravity could no longer pass them; from the spawn row it still can.
        let board = stackedBoard([11, 11, 10, 11, 10, 12])
        let pair = EggPair(pivot: .red, child: .green)
        let simulator = BotSimulator(rules: .tsu)
        let spawned = LivePair(spawning: pair, rules: .tsu)
        let safe = Placement.distinct(for: pair).filter { Bot.isReachable($0, from: spawned, on: board, rules: .tsu) }
        #expect(!safe.isEmpty && safe.allSatisfy { simulator.place(pair, at: $0, on: board).toppedOut }, "\(safe)")
        for level in BotLevel.allCases {
            var bot = Bot(level: level, seed: 9)
            let chosen = bot.choosePlacement(board: board, current: pair, preview: [EggPair(pivot: .blue, child: .yellow)],
                                             context: BotContext(), rules: .tsu)
            guard let chosen else { Issue.record("\(level) chose nothing"); continue }
            #expect(!simulator.place(pair, at: chosen, on: board).toppedOut, "\(level) topped out at \(chosen)")
            #expect(Bot.moves(to: chosen, from: spawned, on: board, rules: .tsu) != nil)
        }
    }

    @Test("the bench times the ticks in which the bot decides: one per pair, far dearer than the others for a searching level")
    func decisionTimeIsMeasured() {
        let result = BotBench.solo(level: .insane, seeds: [1], pairsMax: 8, clock: threadNanoseconds)
        #expect(result.decisionNanoseconds.count == result.pairsPlaced + 1, "\(result.decisionNanoseconds.count) decisions, \(result.pairsPlaced) pairs")
        // A decision searches hundreds of placements; a tick without one moves a pair a cell.
        #expect(result.meanDecisionMicroseconds > 20 * result.meanOtherTickMicroseconds,
                "decisions \(result.meanDecisionMicroseconds) µs, other ticks \(result.meanOtherTickMicroseconds) µs")
    }

    @Test("a bot can decide as one level and move at another's pace")
    func paceOfAnotherLevel() {
        func play(pace: BotLevel) -> (board: Board, ticks: Int, pairs: Int) {
            var match = LocalMatch(options: .init(seed: 2, speed: 0), seats: [.external])
            var player = BotPlayer(level: .insane, pace: pace, seed: 2)
            while !match.isOver && match.grids[0].pairsSpawned <= 10 {
                if let move = player.tick(grid: match.grids[0], preview: [match.nextPair(seat: 0)], context: BotContext()) {
                    match.enqueue(move, seat: 0)
                }
                match.tick()
            }
            return (match.grids[0].board, match.gameTicks, match.grids[0].pairsSpawned)
        }
        let own = play(pace: .insane), slower = play(pace: .hard)
        #expect(own.pairs == 11 && slower.pairs == 11)
        // The same decisions (the same board), each pair held longer by hard's pace.
        #expect(own.board == slower.board)
        let held = 10 * (BotLevel.hard.ticksPerPair - BotLevel.insane.ticksPerPair)
        #expect(slower.ticks >= own.ticks + held / 2, "\(slower.ticks) ticks at hard's pace, \(own.ticks) at insane's")
    }

    @Test("garbage arriving while the pair is live makes the bot think again, once per new garbage")
    func garbageMidPairReplans() {
        var grid = PlayerGrid()
        grid.apply(.spawn(EggPair(pivot: .red, child: .blue)))
        var player = BotPlayer(level: .hard, seed: 1)
        let preview = [EggPair(pivot: .green, child: .green)]
        _ = player.tick(grid: grid, preview: preview, context: BotContext())
        _ = player.tick(grid: grid, preview: preview, context: BotContext())
        #expect(player.bot.decisions == 1)
        _ = player.tick(grid: grid, preview: preview, context: BotContext(incomingGarbage: 12))
        #expect(player.bot.decisions == 2)
        _ = player.tick(grid: grid, preview: preview, context: BotContext(incomingGarbage: 12))
        #expect(player.bot.decisions == 2)
        // The pace still counts from the spawn (four ticks so far): the hard drop comes on hard's
        // ticks per pair, not that many after the new plan.
        var ticks = 4, dropped = false
        while !dropped && ticks < 200 {
            ticks += 1
            dropped = player.tick(grid: grid, preview: preview, context: BotContext(incomingGarbage: 12)) == .hardDrop
        }
        #expect(dropped && ticks == BotLevel.hard.ticksPerPair, "dropped after \(ticks) ticks")
    }
}

