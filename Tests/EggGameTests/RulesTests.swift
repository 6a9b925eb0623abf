import Testing
@testable import EggBot
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

    @Test("a 2-step chain popping 4 then 5 with one garbage cleared sends 8 (the example of docs/formats.md)")
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

@Suite("Starting grids per rule set")
struct StartingGridTests {
    @Test("sfe: h full rows of garbage at the bottom of the 15 rows, the same for every seed; tsu has only height 0")
    func fixtures() {
        let sfe = PlayerGrid(startingHeight: 3, rules: .sfe, speed: 4, garbageSeed: 99)
        #expect(sfe.board.notationRows == """
            ......
            ......
            ......
            ......
            ......
            ......
            ......
            ......
            ......
            ......
            ......
            ......
            ######
            ######
            ######
            """.split(separator: "\n").map(String.init))
        #expect(PlayerGrid(startingHeight: 3, rules: .sfe, speed: 4, garbageSeed: 1).board == sfe.board)
        #expect(sfe.state == .awaitingSpawn && sfe.looseEggs.isEmpty)
        // The first pair spawns above the garbage and plays on it.
        var played = sfe
        #expect(played.apply(.spawn(EggPair(pivot: .red, child: .blue))) == .spawned(garbageSent: 0))
        played.apply(.move(.hardDrop))
        _ = played.ticksUntilSettled()
        #expect(played.board.notationRows.suffix(4) == ["..RB..", "######", "######", "######"])
        #expect(RuleSet.sfe.startingHeights == 0...9)
        // docs/rules.md lists tsu's settings as speed, colours and best of N: no starting height.
        #expect(RuleSet.tsu.startingHeights == 0...0)
        let tsu = PlayerGrid(startingHeight: 0, rules: .tsu, garbageSeed: 99)
        #expect(tsu.board.notationRows(rows: 13) == Array(repeating: "......", count: 13))
    }

    @Test("a local match starts every seat's grid, every game, with the starting height's rows")
    func localMatch() {
        var match = LocalMatch(options: LocalMatch.Options(seed: 4, speed: 9, bestOf: 3, rules: .sfe, startingHeight: 7),
                               seats: [.external, .external])
        for grid in match.grids { #expect(grid.board.notationRows.suffix(7).allSatisfy { $0 == "######" }) }
        #expect(match.grids.allSatisfy { $0.board.eggsCount == 42 })
        // Nobody plays: both seats top out quickly on 7 rows; the next game starts on 7 rows again.
        var ticks = 0
        while match.gamesPlayed == 0 && ticks < 20_000 { match.tick(); ticks += 1 }
        #expect(match.gamesPlayed == 1)
        #expect(match.grids.allSatisfy { $0.board.eggsCount == 42 && $0.pairsSpawned <= 1 })
    }
}

@Suite("Board: the top occupied row of a column")
struct TopOccupiedRowTests {
    @Test("empty columns give rowsCount; otherwise the highest egg or garbage, whatever lies under it")
    func topRows() {
        #expect((0..<Board.columnsCount).map { Board().topOccupiedRow(column: $0) } == Array(repeating: Board.rowsCount, count: 6))
        let rows = board("#.....", "......", "R..B..", "R.GB.Y")
        // Bottom row 14: column 0 holds rows 11, 13 and 14; a gap under its top does not matter.
        #expect((0..<Board.columnsCount).map { rows.topOccupiedRow(column: $0) } == [11, 15, 14, 13, 15, 14])
        var full = Board()
        for row in 0..<Board.rowsCount { full[column: 5, row: row] = .garbage }
        #expect(full.topOccupiedRow(column: 5) == 0 && full.topOccupiedRow(column: 4) == Board.rowsCount)
        full[column: 5, row: 0] = .empty
        #expect(full.topOccupiedRow(column: 5) == 1)
    }
}
