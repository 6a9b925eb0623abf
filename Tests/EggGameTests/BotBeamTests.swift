import Testing
@testable import EggBot
@testable import EggGame

/// A 13-row (`tsu`) board from notation, top row (the hidden one) first.
private func tsuBoard(_ lines: [String]) -> Board {
    try! Board(notation: lines.joined(separator: "\n"), rowsMax: 13)
}

@Suite("insane searches tsu's two shown pairs by a beam")
struct BotBeamTests {
    let simulator = BotSimulator(rules: .tsu)
    let evaluation = BotEvaluation(eggsMax: 3, rules: .tsu)

    /// The longest potential chain (3-egg virtual drops) that laying `pairs` on `board` can leave,
    /// over every placement of each, firing nothing on the way.
    func longestReachable(_ board: Board, _ pairs: [EggPair]) -> Int {
        guard let pair = pairs.first else { return evaluation.potential(board).chain }
        var longest = 0
        for placement in simulator.placements(for: pair, on: board) {
            let outcome = simulator.place(pair, at: placement, on: board)
            if outcome.toppedOut || outcome.chain > 0 { continue }
            longest = max(longest, longestReachable(outcome.board, Array(pairs.dropFirst())))
        }
        return longest
    }

    /// A board from a solo `tsu` game of insane's (pair 21). The second shown pair's best placements
    /// by shape and fire alone (the tree's pruning) leave out the line to an 11-chain: after the
    /// tree's choice (column 2, child left) the best the two shown pairs can leave is a 9-chain;
    /// the beam judges every second placement by its potential chain and plays column 5 downwards,
    /// after which an 11-chain is within the shown pairs.
    @Test("the beam finds a line to a longer chain that the tree's pruning misses")
    func beamFindsLongerChain() throws {
        let board = tsuBoard(["......", "......", "......", ".P....", ".RP...", ".BR...", "RBB...", "PRRB..",
                              "PYRY.R", "YBYY.B", "RBPRPB", "PPRPPR", "PBBRRY"])
        let current = EggPair(pivot: .blue, child: .red)
        let preview = [EggPair(pivot: .yellow, child: .red), EggPair(pivot: .blue, child: .purple)]
        for seed in UInt64(0)..<4 {
            var beam = Bot(level: .insane, seed: seed)
            var tree = beam
            tree.beamWidth = 0
            #expect(beam.beamWidth == 8)
            let beamPick = beam.choosePlacement(board: board, current: current, preview: preview, context: BotContext(), rules: .tsu)
            let treePick = tree.choosePlacement(board: board, current: current, preview: preview, context: BotContext(), rules: .tsu)
            let beamChoice = try #require(beamPick)
            let treeChoice = try #require(treePick)
            let afterBeam = simulator.place(current, at: beamChoice, on: board)
            let afterTree = simulator.place(current, at: treeChoice, on: board)
            let beamChain = longestReachable(afterBeam.board, preview)
            let treeChain = longestReachable(afterTree.board, preview)
            #expect(beamChain > treeChain, "seed \(seed): beam \(beamChoice) → \(beamChain), tree \(treeChoice) → \(treeChain)")
            #expect(beamChain >= 11, "seed \(seed): beam \(beamChoice) → \(beamChain)")
        }
    }

    /// Sfe shows one pair: insane searches every placement of both, and the beam does not run.
    @Test("under sfe (one shown pair) the beam changes nothing")
    func sfeUnchanged() throws {
        let board = stackedBoard([3, 4, 2, 2, 4, 3])
        let current = EggPair(pivot: .red, child: .blue)
        let next = EggPair(pivot: .yellow, child: .red)
        var beam = Bot(level: .insane, seed: 5)
        var tree = beam
        tree.beamWidth = 0
        let a = beam.choosePlacement(board: board, current: current, preview: [next], context: BotContext(), rules: .sfe)
        let b = tree.choosePlacement(board: board, current: current, preview: [next], context: BotContext(), rules: .sfe)
        #expect(a == b)
        #expect(beam.placementsEvaluated == tree.placementsEvaluated)
    }
}
