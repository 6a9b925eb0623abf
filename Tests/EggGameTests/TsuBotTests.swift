import Testing
@testable import EggBot
@testable import EggGame

/// A 13-row (`tsu`) board from notation, top row (the hidden one) first.
private func tsuBoard(_ lines: [String]) -> Board {
    try! Board(notation: lines.joined(separator: "\n"), rowsMax: 13)
}

/// Columns 4 and 5 full up to the top visible row (row 3), reds at (4,3), (5,3) and (5,4): one
/// more red on column 5 would rest in the hidden 13th row, next to them.
private func hiddenRowBoard() -> [String] {
    ["......", "....RR", "....BR"] + (5...14).map { $0 % 2 == 0 ? "....YB" : "....BY" }
}

@Suite("bots judge a tsu board by tsu's rules")
struct TsuBotTests {
    let tsu = BotSimulator(rules: .tsu)
    let sfe = BotSimulator(rules: .sfe)

    @Test("an egg in the hidden 13th row joins no group: tsu counts no chain there (sfe none either: no pair reaches that row), one row lower both do")
    func hiddenRow() {
        let board = tsuBoard(hiddenRowBoard())
        let red = EggColor.red.rawValue + 1
        #expect(tsu.virtualChain(board, code: red, column: 5, count: 1, quiet: true).chain == 0)
        // Under sfe that row is one only garbage reaches: no trigger is ever dropped there.
        #expect(sfe.virtualChain(board, code: red, column: 5, count: 1, quiet: true).chain == 0)
        #expect(BotEvaluation(eggsMax: 1, rules: .tsu).potential(board).chain == 0)
        #expect(BotEvaluation(eggsMax: 1, rules: .sfe).potential(board).chain == 0)
        // The same reds a row lower: the red lands in the top visible row and pops under both.
        let lower = tsuBoard(["......"] + hiddenRowBoard().dropLast())
        #expect(tsu.virtualChain(lower, code: red, column: 5, count: 1, quiet: true).chain == 1)
        #expect(sfe.virtualChain(lower, code: red, column: 5, count: 1, quiet: true).chain == 1)
        #expect(BotEvaluation(eggsMax: 1, rules: .tsu).potential(lower).chain == 1)
    }

    /// The shortcut on a quiet board (only the dropped eggs' group can start a chain) against a
    /// whole resolution, on the boards 300 seeded games of random placements leave under each
    /// rule set: every column, colour and count of eggs gives the same chain.
    @Test("a virtual drop on a quiet board fires what a whole resolution fires; a board with a group standing is not quiet")
    func quietShortcut() throws {
        var compared = 0, fired = 0
        for simulator in [tsu, sfe] {
            var random = Xoshiro256StarStar(seed: 15)
            for _ in 0..<300 {
                var board = Board()
                for _ in 0..<random.nextInt(below: 40) {
                    let pair = EggPair(pivot: EggColor(rawValue: UInt8(random.nextInt(below: 4)))!,
                                       child: EggColor(rawValue: UInt8(random.nextInt(below: 4)))!)
                    let placements = Placement.distinct(for: pair)
                    let outcome = simulator.place(pair, at: placements[random.nextInt(below: placements.count)], on: board)
                    if outcome.toppedOut { break }
                    board = outcome.board
                }
                #expect(simulator.isQuiet(board), "a board a chain resolved on is quiet")
                for column in 0..<Board.columnsCount {
                    for code in UInt8(1)...4 {
                        for count in 1...3 {
                            let short = simulator.virtualChain(board, code: code, column: column, count: count, quiet: true).chain
                            let whole = simulator.virtualChain(board, code: code, column: column, count: count, quiet: false).chain
                            #expect(short == whole, "\(board), colour \(code), column \(column), \(count) eggs")
                            compared += 1
                            if whole > 0 { fired += 1 }
                        }
                    }
                }
            }
        }
        #expect(compared == 2 * 300 * 6 * 4 * 3)
        #expect(fired > 1000, "the boards give drops that fire: \(fired) of \(compared)")
        // Four reds standing: not quiet, so a drop beside them fires what a resolution fires.
        let standing = try Board(notation: Array(repeating: "......", count: 11).joined(separator: "\n") + "\nRR....\nRR....")
        #expect(!sfe.isQuiet(standing))
        #expect(sfe.virtualChain(standing, code: EggColor.blue.rawValue + 1, column: 5, count: 1, quiet: false).chain == 1)
    }

    /// The bots' resolution, which searches each step after the first only from the cells the
    /// step before changed, against a search of every colour plane at every step (as the game
    /// resolves): the same chain and garbage on 1,000 unresolved random stacks a rule set, where
    /// several groups pop at once and chains run long.
    @Test("the bots' step search from the changed cells finds every group a whole search finds")
    func changedCellsSearch() {
        var chains = 0, longest = 0
        for simulator in [tsu, sfe] {
            var random = Xoshiro256StarStar(seed: 16)
            for _ in 0..<1_000 {
                var board = Board()
                for _ in 0..<(20 + random.nextInt(below: 40)) {
                    let code = random.nextInt(below: 8) == 0 ? UInt8(7) : UInt8(1 + random.nextInt(below: 4))
                    board.dropCode(code, column: random.nextInt(below: Board.columnsCount))
                }
                // The reference: every plane searched at every step.
                var whole = board
                var chain = 0, garbage = 0, points = 0, popped = 0
                while chain < ChainResult.stepsMax, let step = whole.poppingCellsNow(mask: simulator.poppingMask) {
                    popped += step.popped.nonzeroBitCount
                    switch simulator.rules.garbageFormula {
                    case .sfeSteps:
                        garbage += simulator.rules.garbage(stepIndex: chain, popped: step.popped.nonzeroBitCount)
                    case .score(let scoring):
                        let groups = whole.groups(in: step.popped)
                        points += scoring.score(stepIndex: chain, groupSizes: groups.sizes, colors: groups.colors)
                    }
                    whole.remove(step.popped | step.cleared)
                    whole.settle()
                    chain += 1
                }
                if case .score(let scoring) = simulator.rules.garbageFormula { garbage = points / scoring.targetPoints }
                var counted = board
                let result = counted.resolveChainCounts(rules: simulator.rules, mask: simulator.poppingMask)
                #expect(result.chain == chain && result.garbage == garbage, "\(board)")
                #expect(counted == whole, "the same board is left: \(board)")
                var lengthOnly = board
                let first = lengthOnly.poppingCellsNow(mask: simulator.poppingMask)?.popped ?? 0
                let steps = lengthOnly.resolveChainSteps(mask: simulator.poppingMask, firstPopping: first)
                #expect(steps.chain == chain && steps.popped == popped)
                if chain > 0 { chains += 1 }
                longest = max(longest, chain)
            }
        }
        #expect(chains > 1_000 && longest >= 3, "the stacks pop: \(chains) chains, the longest \(longest)")
    }

    @Test("garbage by tsu's score (the 2-chain of 4+4 scores 40 and 320: 5 nuisance), by sfe's steps under sfe (1 + 6 = 7)")
    func garbageByScore() {
        let board = tsuBoard(Array(repeating: "......", count: 11) + ["RRR...", "RBBB.."])
        let pair = EggPair(pivot: .blue, child: .red)
        // Blue (the pivot) lands on column 0's reds with red above it: 4 reds pop, then 4 blues.
        let placement = Placement(column: 0, orientation: .up)
        let tsuOutcome = tsu.place(pair, at: placement, on: board)
        let sfeOutcome = sfe.place(pair, at: placement, on: board)
        #expect(tsuOutcome.chain == 2 && sfeOutcome.chain == 2)
        #expect(tsuOutcome.garbage == 5)
        #expect(sfeOutcome.garbage == 7)
        #expect(tsuOutcome.board == sfeOutcome.board)
    }

    @Test("top-out by tsu's rule: only the pivot's spawn cell (column 2) counts, not column 3")
    func topOut() {
        let full = (3...14).map { $0 % 2 == 0 ? "...Y.." : "...B.." }
        let board = tsuBoard(["......", "......"] + full.dropFirst())
        let pair = EggPair(pivot: .green, child: .green)
        // Column 3 reaches the top visible row once the pair lands on it.
        let placement = Placement(column: 3, orientation: .up)
        #expect(sfe.place(pair, at: placement, on: board).toppedOut)
        #expect(!tsu.place(pair, at: placement, on: board).toppedOut)
    }

    @Test("the danger of a tall spawn column follows the top-out rule: column 3 counts under sfe, not under tsu")
    func spawnDanger() {
        let tall = (3...14).map { $0 % 2 == 0 ? "...Y.." : "...B.." }
        let board = tsuBoard(["......", "......", "......"] + tall.dropFirst(2))
        // Column 3 holds 10 eggs (rows 5–14); column 2 is empty.
        #expect(board.height(column: 3) == 10 && board.height(column: 2) == 0)
        #expect(tsu.spawnColumns == (2, 2) && sfe.spawnColumns == (2, 3))
        #expect(sfe.spawnHeight(board) == 10 && tsu.spawnHeight(board) == 0)
        let sfeShape = BotEvaluation(eggsMax: 1, rules: .sfe).shape(board)
        let tsuShape = BotEvaluation(eggsMax: 1, rules: .tsu).shape(board)
        let weights = BotEvaluation.Weights()
        let over = 10 - weights.dangerFrom + 1
        #expect(over > 0)
        #expect(tsuShape - sfeShape == over * over * weights.dangerWeight)
    }

    @Test("queued nuisance lands within tsu's 13 rows, whole rows first, at most 30")
    func nuisance() {
        var board = Board()
        tsu.landGarbage(40, on: &board)
        #expect(board.eggsCount == 30)
        #expect(board.notationRows(rows: 13).suffix(5).allSatisfy { $0 == "######" })
        var over = tsuBoard(Array(repeating: "......", count: 13))
        tsu.landGarbage(90, on: &over)
        tsu.landGarbage(90, on: &over)
        tsu.landGarbage(90, on: &over)
        // Never above the grid's 13 rows (Board rows 0–1 are not part of a tsu grid).
        #expect((0..<6).allSatisfy { over.height(column: $0) == 13 })
        #expect(over.notationRows.prefix(2) == ["......", "......"])
    }

    @Test("a bot thinking again mid-pair (garbage queued) plans by the grid's rule set: tsu's moves to tsu's best placement")
    func replanByGridRules() throws {
        // A board with some shape, so placements differ in value.
        var grid = PlayerGrid(board: tsuBoard(Array(repeating: "......", count: 9) + ["Y....G", "YB..GG", "RBB.YP", "RRPYYP"]),
                              rules: .tsu, garbageSeed: 1)
        #expect(grid.apply(.spawn(EggPair(pivot: .red, child: .blue))) == .spawned(garbageSent: 0))
        let live = try #require(grid.livePair)
        let preview = [EggPair(pivot: .green, child: .yellow), EggPair(pivot: .purple, child: .purple)]
        var player = BotPlayer(level: .insane, seed: 5)
        var twin = Bot(level: .insane, seed: 5)
        // The first decision (no garbage): the twin draws the same noise.
        _ = player.tick(grid: grid, preview: preview, context: BotContext())
        _ = twin.plan(grid: grid, preview: preview, context: BotContext())
        // Garbage queued: the player thinks again from where the pair is (it has not moved here).
        let context = BotContext(incomingGarbage: 12)
        let chosen = twin.choosePlacement(board: grid.board, current: live.pair, preview: preview, context: context, rules: .tsu)
        let target = try #require(chosen)
        let expected = try #require(Bot.moves(to: target, from: live, on: grid.board, rules: .tsu))
        var moves: [Move] = []
        for _ in 0..<600 {
            guard let move = player.tick(grid: grid, preview: preview, context: context) else { continue }
            moves.append(move)
            if move == .hardDrop { break }
        }
        #expect(moves == expected)
        // Played on the grid, the moves are accepted and bring the pair to the target.
        for move in moves.dropLast() { #expect(grid.apply(.move(move)) == .moved, "\(move)") }
        #expect(grid.livePair?.column == target.column && grid.livePair?.orientation == target.orientation)
    }
}

@Suite("bot moves that beat gravity")
struct BotMoveOrderTests {
    /// The spawn column stands at 10 of tsu's 12: rotated down there, the pair rests on it and
    /// locks at the next gravity step. Column 0 is low.
    static let tallSpawnColumn = [
        "......", "......", "..P...", "..B...", ".PRB..", ".YYYPY", ".PRBBY",
        ".RRYYR", "PYPBPY", "PPBRPP", "BYPBYY", "RYPBPR", "RYRBYP",
    ]

    @Test("a pair bound down beside a tall spawn column shifts first, so a gravity step between moves does not lock it on the way")
    func shiftsBeforeTurningOverATallColumn() throws {
        var grid = tsuBoardGrid(Self.tallSpawnColumn)
        #expect(grid.apply(.spawn(EggPair(pivot: .red, child: .purple))) == .spawned(garbageSent: 0))
        let live = try #require(grid.livePair)
        let target = Placement(column: 0, orientation: .down)
        let moves = try #require(Bot.moves(to: target, from: live, on: grid.board, rules: .tsu))
        #expect(moves.last == .hardDrop)
        // A slow hand: a whole drop interval passes after every move. Rotating first (the order
        // before) left the pair resting on the spawn column, where it locked.
        for move in moves.dropLast() {
            #expect(grid.apply(.move(move)) == .moved, "\(move)")
            #expect(grid.apply(.ticks(grid.dropIntervalTicks)) == .ticked(locked: false, chainEnded: nil), "after \(move)")
        }
        let pair = try #require(grid.livePair)
        #expect(pair.column == target.column && pair.orientation == target.orientation)
    }

    @Test("at insane's pace, whenever the next gravity step comes, the pair reaches each target clear of the spawn column")
    func everyGravityPhase() throws {
        var missed: [String] = []
        var reached = 0
        let interval = tsuBoardGrid(Self.tallSpawnColumn).dropIntervalTicks
        // Placements with an egg on the spawn column rest on it at the end anyway.
        for target in Placement.all where target.column != 2 && target.column + target.orientation.columnOffset != 2 {
            for phase in 0..<interval {
                var grid = tsuBoardGrid(Self.tallSpawnColumn)
                #expect(grid.apply(.spawn(EggPair(pivot: .red, child: .purple))) == .spawned(garbageSent: 0))
                // `phase` ticks pass before the bot moves (the drop timer runs on from the last pair).
                if phase > 0 { _ = grid.apply(.ticks(phase)) }
                guard let live = grid.livePair,
                      let moves = Bot.moves(to: target, from: live, on: grid.board, rules: .tsu) else { continue }
                for move in moves.dropLast() where grid.livePair != nil {
                    _ = grid.apply(.move(move))
                    _ = grid.apply(.ticks(BotLevel.insane.ticksPerMove))
                }
                // Live at the target, or locked there (its eggs where a drop at the target puts them).
                var dropped = tsuBoardGrid(Self.tallSpawnColumn).board
                dropped.drop(live.pair, orientation: target.orientation, column: target.column)
                let atTarget: Bool
                if let pair = grid.livePair {
                    atTarget = pair.column == target.column && pair.orientation == target.orientation
                } else {
                    _ = grid.apply(.ticks(60))
                    atTarget = grid.board == dropped
                }
                if atTarget {
                    reached += 1
                } else {
                    missed.append("\(target.column)\(target.orientation)@\(phase)")
                }
            }
        }
        #expect(missed.isEmpty, "\(missed)")
        #expect(reached > 0)
    }

    @Test("isResting agrees with restingEggs for every position a pair fits in")
    func isRestingAgrees() {
        let board = tsuBoardGrid(Self.tallSpawnColumn).board
        var resting = 0, checked = 0
        for orientation in Orientation.allCases {
            for column in 0..<Board.columnsCount {
                for halfRow in 0..<(2 * Board.rowsCount) {
                    let pair = LivePair(pair: EggPair(pivot: .red, child: .blue), orientation: orientation,
                                        pivotColumn: column, pivotHalfRow: halfRow)
                    guard pair.fits(on: board, topRow: RuleSet.tsu.pairTopRow) else { continue }
                    let expected = !pair.restingEggs(on: board).isEmpty
                    #expect(pair.isResting(on: board) == expected, "\(orientation) \(column) \(halfRow)")
                    if expected { resting += 1 }
                    checked += 1
                }
            }
        }
        #expect(resting > 10 && checked > resting)
    }
}
