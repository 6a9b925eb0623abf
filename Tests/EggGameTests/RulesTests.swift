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

    @Test("garbage that fits nowhere is discarded")
    func discards() {
        var rows = (0..<12).map { row in
            String((0..<6).map { column in (row + column) % 2 == 0 ? Character("R") : Character("B") })
        }
        rows[0] = "R.R.R."
        rows[1] = "BRB.BR"
        var grid = try! Board(notation: rows.joined(separator: "\n"))
        #expect(grid.landGarbage(10) == 4)
        #expect(grid.eggsCount == 72)
        #expect(grid.landGarbage(1) == 0)
    }

    @Test("garbage lands only between a lock and the next spawn")
    func landingState() {
        var grid = PlayerGrid()
        #expect(grid.apply(.landGarbage(3)) == .garbageLanded(3))
        #expect(grid.apply(.spawn(EggPair(pivot: .red, child: .red))) == .spawned(garbageSent: 0))
        #expect(grid.apply(.landGarbage(1)) == .rejected(.pairAlreadyLive))
        #expect(grid.apply(.move(.hardDrop)) == .locked(ChainResult()))
        #expect(grid.apply(.landGarbage(-1)) == .rejected(.negativeGarbage))
        #expect(grid.apply(.landGarbage(6)) == .garbageLanded(6))
        #expect(grid.board.notationRows.suffix(3) == ["......", ".##R##", "##R###"])
    }
}

@Suite("rules: moves, rotation and kicks")
struct MoveTests {
    @Test("a pair spawns horizontally in the top row, pivot in column 2 and child in column 3")
    func spawnPosition() {
        let grid = spawnedGrid(emptyRow)
        let live = grid.livePair!
        #expect((live.column, live.row, live.childColumn, live.childRow) == (2, 0, 3, 0))
        #expect(grid.displayCell(column: 2, row: 0) == .egg(.red))
        #expect(grid.displayCell(column: 3, row: 0) == .egg(.blue))
        #expect(grid.state == .live)
    }

    @Test("rotating clockwise from spawn puts the child below, anticlockwise into the hidden row")
    func rotationAtSpawn() {
        var grid = spawnedGrid(emptyRow)
        #expect(grid.apply(.rotateCW) == .moved)
        #expect(grid.livePair!.orientation == .down)
        #expect((grid.livePair!.childColumn, grid.livePair!.childRow) == (2, 1))
        grid.apply(.rotateCCW, .rotateCCW)
        #expect(grid.livePair!.orientation == .up)
        #expect(grid.livePair!.childRow == -1)
        #expect(grid.displayCell(column: 2, row: 0) == .egg(.red))
    }

    @Test("turning into the right wall kicks the pair one column left")
    func kickAtRightWall() {
        var grid = spawnedGrid(emptyRow)
        grid.apply(.rotateCW, .right, .right, .right)
        #expect(grid.livePair!.column == 5)
        #expect(grid.apply(.rotateCCW) == .moved)
        let live = grid.livePair!
        #expect((live.orientation, live.column, live.childColumn) == (.right, 4, 5))
    }

    @Test("turning into the left wall kicks the pair one column right")
    func kickAtLeftWall() {
        var grid = spawnedGrid(emptyRow)
        grid.apply(.rotateCCW, .left, .left, .left)
        #expect(grid.livePair!.column == 0)
        #expect(grid.apply(.rotateCCW) == .moved)
        let live = grid.livePair!
        #expect((live.orientation, live.column, live.childColumn) == (.left, 1, 0))
    }

    @Test("turning into an egg kicks away from it, or does nothing when both sides are blocked")
    func kickNextToEggs() {
        var grid = spawnedGrid("......", "...R..", "...B..", "...R..")
        grid.apply(.rotateCW)
        while grid.livePair!.row < 10 { grid.apply(.down) }
        #expect(grid.apply(.rotateCCW) == .moved)
        #expect((grid.livePair!.orientation, grid.livePair!.column, grid.livePair!.childColumn) == (.right, 1, 2))

        var boxed = spawnedGrid("......", ".B.R..", ".R.B..", ".B.R..")
        boxed.apply(.rotateCW)
        while boxed.livePair!.row < 10 { boxed.apply(.down) }
        let before = boxed.livePair
        #expect(boxed.apply(.rotateCCW) == .blocked)
        #expect(boxed.apply(.rotateCW) == .blocked)
        #expect(boxed.livePair == before)
    }

    @Test("a downward turn onto the floor does not kick")
    func noFloorKick() {
        var grid = spawnedGrid(emptyRow)
        while grid.livePair!.row < 11 { grid.apply(.down) }
        #expect(grid.apply(.rotateCW) == .blocked)
        #expect(grid.livePair!.orientation == .right)
        #expect(grid.apply(.rotateCCW) == .moved)
    }

    @Test("moves into walls and eggs are blocked and change nothing")
    func blockedShifts() {
        var grid = spawnedGrid("R.....", pair: EggPair(pivot: .blue, child: .blue))
        grid.apply(.left, .left)
        #expect(grid.livePair!.column == 0)
        #expect(grid.apply(.left) == .blocked)
        grid.apply(.rotateCW)
        while grid.livePair!.row < 9 { grid.apply(.down) }
        #expect(grid.apply(.down) == .locked(ChainResult()))
        #expect(grid.board.notationRows.suffix(3) == ["B.....", "B.....", "R....."])
    }

    @Test("down locks a pair that cannot fall, and a horizontal pair splits as it lands")
    func lockAndSplit() {
        var grid = spawnedGrid("..Y...")
        #expect(grid.apply(.hardDrop) == .locked(ChainResult()))
        #expect(grid.state == .awaitingSpawn)
        #expect(grid.board.notationRows.suffix(2) == ["..R...", "..YB.."])
    }

    @Test("a child resting above the top row vanishes when the pair locks")
    func hiddenRowVanishes() {
        let column = (0..<11).map { $0 % 2 == 0 ? "..Y..." : "..P..." }
        var grid = PlayerGrid(board: try! Board(notation: ([emptyRow] + column).joined(separator: "\n")))
        #expect(grid.apply(.spawn(EggPair(pivot: .red, child: .blue))) == .spawned(garbageSent: 0))
        grid.apply(.rotateCCW)
        #expect(grid.apply(.hardDrop) == .locked(ChainResult()))
        #expect(grid.board.height(column: 2) == 12)
        #expect(grid.board[column: 2, row: 0] == .egg(.red))
        #expect(grid.apply(.spawn(EggPair(pivot: .red, child: .blue))) == .toppedOut(garbageSent: 0))
    }

    @Test("the player is out when a spawn cell is occupied, and every later input is rejected")
    func gameOverAtSpawn() {
        var grid = PlayerGrid(board: board("...G..", "...Y..", "...G..", "...Y..", "...G..", "...Y..",
                                           "...G..", "...Y..", "...G..", "...Y..", "...G..", "...Y.."))
        #expect(grid.apply(.spawn(EggPair(pivot: .red, child: .red))) == .toppedOut(garbageSent: 0))
        #expect(grid.state == .toppedOut)
        #expect(grid.pairsSpawned == 1)
        #expect(grid.apply(.move(.left)) == .rejected(.toppedOut))
        #expect(grid.apply(.landGarbage(1)) == .rejected(.toppedOut))
    }

    @Test("inputs that do not fit the state are rejected and change nothing")
    func invalidInputs() {
        var grid = PlayerGrid()
        let hash = grid.stableHash
        #expect(grid.apply(.move(.left)) == .rejected(.noLivePair))
        #expect(grid.stableHash == hash)
        grid.apply(.spawn(EggPair(pivot: .red, child: .blue)))
        let live = grid.stableHash
        #expect(grid.apply(.spawn(EggPair(pivot: .red, child: .blue))) == .rejected(.pairAlreadyLive))
        #expect(grid.stableHash == live)
    }

    @Test("chain garbage is sent when the next pair spawns")
    func garbageSentAtNextSpawn() {
        var grid = spawnedGrid("RRR...", pair: EggPair(pivot: .red, child: .blue))
        grid.apply(.left, .left)
        let outcome = grid.apply(.hardDrop)
        #expect(outcome == .locked(ChainResult(steps: [ChainStep(popped: 4, garbageCleared: 0)])))
        #expect(grid.garbagePending == 1)
        #expect(grid.lastChain?.chain == 1)
        #expect(grid.apply(.spawn(EggPair(pivot: .red, child: .red))) == .spawned(garbageSent: 1))
        #expect(grid.garbagePending == 0)
        #expect(grid.board.notationRows.last == ".B....")
    }
}

@Suite("gravity clock")
struct GravityClockTests {
    func ticksUntilDown(_ clock: inout GravityClock, softDrop: Bool) -> Int {
        for tick in 1...1_000 where clock.tick(softDrop: softDrop) { return tick }
        return -1
    }

    @Test("the pair falls every max(4, 76 - 8 * speed) ticks")
    func fallInterval() {
        for speed in 0...9 {
            var clock = GravityClock(speed: speed)
            #expect(ticksUntilDown(&clock, softDrop: false) == max(4, 76 - 8 * speed))
            #expect(ticksUntilDown(&clock, softDrop: false) == max(4, 76 - 8 * speed))
        }
    }

    @Test("soft drop moves the pair every 4 ticks and reset restarts the count")
    func softDrop() {
        var clock = GravityClock(speed: 0)
        #expect(ticksUntilDown(&clock, softDrop: true) == 4)
        for _ in 0..<3 { _ = clock.tick(softDrop: false) }
        clock.reset()
        #expect(ticksUntilDown(&clock, softDrop: false) == 76)
    }
}
