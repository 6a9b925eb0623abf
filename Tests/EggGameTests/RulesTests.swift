import Testing
@testable import EggGame

@Suite("rules: chains and garbage")
struct ChainTests {
    @Test("a single group of four pops and sends one garbage")
    func singlePop() {
        let report = resolve(board: board("RRRR.."), incoming: 0)
        #expect(report.chain.steps == [ChainStep(popped: 4, garbageCleared: 0)])
        #expect(report.chain.garbage == 1)
        #expect(report.board == Board())
    }

    @Test("a group of three does not pop and floating eggs fall first")
    func groupOfThreeStays() {
        let report = resolve(board: board("R.....", "......", "RRR..."), incoming: 0)
        #expect(report.chain.chain == 1)
        let still = resolve(board: board("R.....", "......", "RB...."), incoming: 0)
        #expect(still.chain.chain == 0)
        #expect(still.board.notationRows.suffix(2) == ["R.....", "RB...."])
    }

    @Test("two groups popping in the same step count as one step")
    func simultaneousGroups() {
        let report = resolve(board: board("B.....", "B.....", "B.....", "BRRRR."), incoming: 0)
        #expect(report.chain.steps == [ChainStep(popped: 8, garbageCleared: 0)])
        #expect(report.chain.garbage == 5)
        #expect(report.board == Board())
    }

    @Test("garbage orthogonally next to a popping egg clears with it, diagonal garbage stays")
    func garbageClearing() {
        let report = resolve(board: board(".#....", "#RRRR#", "######"), incoming: 0)
        #expect(report.chain.steps == [ChainStep(popped: 4, garbageCleared: 7)])
        #expect(report.chain.garbage == 1)
        #expect(report.board.notationRows.last == "#....#")
        #expect(report.board.eggsCount == 2)
    }

    @Test("garbage never joins a group")
    func garbageDoesNotJoin() {
        let report = resolve(board: board("RR#R.."), incoming: 0)
        #expect(report.chain.chain == 0)
        #expect(report.board.eggsCount == 4)
    }

    @Test("a 2-step chain sends 1 + 6 garbage")
    func twoStepChain() {
        let report = resolve(board: board(".B....", "RBB...", "RRRB.."), incoming: 0)
        #expect(report.chain.steps.map(\.popped) == [4, 4])
        #expect(report.chain.garbage == 7)
        #expect(report.board == Board())
    }

    @Test("a 2-step chain popping 4 then 5 with one garbage cleared sends 8 (the SPEC example)")
    func specExampleChain() {
        let report = resolve(board: board(".B....", "RBB.#.", "RRRBB."), incoming: 0)
        #expect(report.chain.steps == [ChainStep(popped: 4, garbageCleared: 0), ChainStep(popped: 5, garbageCleared: 1)])
        #expect(report.chain.garbage == 8)
    }

    @Test("a 3-step chain sends 1 + 6 + 6 garbage")
    func threeStepChain() {
        let report = resolve(board: board(".Y....", ".BYY..", "RBBY..", "RRRB.."), incoming: 0)
        #expect(report.chain.steps.map(\.popped) == [4, 4, 4])
        #expect(report.chain.garbage == 13)
        #expect(report.board == Board())
    }

    @Test("a 4-step chain sends 19 garbage")
    func fourStepChain() {
        let report = resolve(board: board(".P.P..", ".YPP..", ".BYY..", "RBBY..", "RRRB.."), incoming: 0)
        #expect(report.chain.steps.map(\.popped) == [4, 4, 4, 4])
        #expect(report.chain.garbage == 19)
        #expect(report.board == Board())
    }

    @Test("a 5-step chain sends 25 garbage and leaves the other eggs")
    func fiveStepChain() {
        let report = resolve(
            board: board("...G..", ".G.G..", ".PGP..", ".YPP..", ".BYY..", "RBBY.O", "RRRB.B"),
            incoming: 0
        )
        #expect(report.chain.steps.map(\.popped) == [4, 4, 4, 4, 4])
        #expect(report.chain.garbage == 25)
        #expect(report.board.notationRows.suffix(2) == [".....O", ".....B"])
    }
}

@Suite("rules: garbage placement")
struct GarbagePlacementTests {
    @Test("garbage fills the lowest column, ties going to the rightmost")
    func flatBoard() {
        var grid = Board()
        #expect(grid.landGarbage(8) == 8)
        #expect(grid.notationRows.suffix(2) == ["....##", "######"])
    }

    @Test("garbage on an uneven grid skips a full column")
    func unevenBoard() {
        let rows = [
            "....R.", "....B.", "....R.", "....B.", "....R.", "....B.",
            "....R.", "....B.", "....R.", "Y...B.", "P..PR.", "YG.YB.",
        ]
        var grid = try! Board(notation: rows.joined(separator: "\n"))
        #expect(grid.landGarbage(5) == 5)
        #expect((0..<6).map { grid.height(column: $0) } == [3, 2, 2, 2, 12, 2])
        #expect(grid.notationRows.suffix(3) == ["Y...B.", "P##PR#", "YG#YB#"])
    }
}
