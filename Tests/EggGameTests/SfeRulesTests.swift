import Testing
@testable import EggGame

/// The playable rows 3–14 of a grid as notation, the live pair and loose eggs drawn over the board
/// (an egg at half offset is drawn in its upper row).
func picture(_ grid: PlayerGrid, rows: ClosedRange<Int> = 3...14) -> [String] {
    rows.map { row in String((0..<Board.columnsCount).map { grid.displayCell(column: $0, row: row).letter }) }
}

/// A grid from notation (missing top rows empty) with `pair` spawned at (2,3)/(3,3).
func sfeGrid(_ rows: [String], pair: EggPair = EggPair(pivot: .red, child: .blue), speed: Int = 0) -> PlayerGrid {
    var grid = PlayerGrid(board: try! Board(notation: rows.joined(separator: "\n")), speed: speed)
    let outcome = grid.apply(.spawn(pair))
    precondition(outcome == .spawned(garbageSent: 0), "fixture spawn failed: \(outcome)")
    return grid
}

/// `count` rows of `row`.
func rows(_ row: String, _ count: Int) -> [String] { Array(repeating: row, count: count) }

extension PlayerGrid {
    /// Applies single ticks until nothing is busy; returns how many were applied (nil past `limit`).
    mutating func ticksUntilSettled(limit: Int = 2_000) -> Int? {
        for count in 1...limit {
            apply(.ticks(1))
            if state == .awaitingSpawn || state == .toppedOut { return count }
        }
        return nil
    }
}

@Suite("sfe: the grid, spawn, moves and rotation (docs/rules.md, `sfe`)")
struct SfeMoveTests {
    @Test("the rule set is the engine's: 6×15, spawn at (2,3)/(3,3), drop interval max(2, 38 − 4·speed)")
    func ruleSetValues() {
        let sfe = RuleSet.sfe
        #expect((sfe.columns, sfe.rows, sfe.garbageOnlyRows) == (Board.columnsCount, Board.rowsCount, 3))
        #expect((sfe.spawnColumn, sfe.spawnRow) == (Board.spawnColumns.0, Board.spawnRow))
        #expect((0...9).map { sfe.timing.dropInterval(speed: $0) } == [38, 34, 30, 26, 22, 18, 14, 10, 6, 2])
        #expect(RuleSet.named("sfe") == sfe)
        #expect(RuleSet.named("nope") == nil)
        for speed in [0, 9] { #expect(PlayerGrid(speed: speed).dropIntervalTicks == max(2, 38 - 4 * speed)) }
    }

    @Test("a pair spawns horizontal in row 3, pivot left")
    func spawn() {
        let grid = sfeGrid([])
        #expect(picture(grid, rows: 2...4) == ["......", "..RB..", "......"])
        #expect((grid.livePair!.column, grid.livePair!.row, grid.livePair!.childColumn, grid.livePair!.childRow) == (2, 3, 3, 3))
    }

    @Test("horizontal → vertical: the pair ends in the right egg's column; clockwise puts the left egg on top")
    func horizontalToVertical() {
        var cw = sfeGrid([])
        #expect(cw.apply(.rotateCW) == .moved)
        #expect(picture(cw, rows: 3...5) == ["...R..", "...B..", "......"])
        #expect(cw.livePair!.orientation == .down)
        var ccw = sfeGrid([])
        #expect(ccw.apply(.rotateCCW) == .moved)
        #expect(picture(ccw, rows: 3...5) == ["...B..", "...R..", "......"])
        #expect(ccw.livePair!.orientation == .up)
    }

    @Test("vertical → horizontal: the pair ends in the top egg's row one column left; the top-right cell stays")
    func verticalToHorizontal() {
        var cw = sfeGrid([])
        cw.apply(.rotateCW, .rotateCW)
        #expect(picture(cw, rows: 3...4) == ["..BR..", "......"])
        var ccw = sfeGrid([])
        cw.apply(.rotateCW)
        ccw.apply(.rotateCW, .rotateCCW)
        #expect(picture(ccw, rows: 3...4) == ["..RB..", "......"])
        // Four clockwise turns: right one column, back left, right, back left: where it started.
        var round = sfeGrid([])
        round.apply(.rotateCW, .rotateCW, .rotateCW)
        #expect(picture(round, rows: 3...4) == ["...B..", "...R.."])
        round.apply(.rotateCW)
        #expect(picture(round, rows: 3...4) == ["..RB..", "......"])
    }

    @Test("at the walls: vertical → horizontal is refused in column 0; the right wall never refuses a turn")
    func walls() {
        var left = sfeGrid([])
        left.apply(.rotateCW, .left, .left, .left)
        #expect(left.livePair!.boxColumn == 0)
        #expect(left.apply(.left) == .blocked)
        let before = left.stableHash
        #expect(left.apply(.rotateCW) == .blocked)
        #expect(left.apply(.rotateCCW) == .blocked)
        #expect(left.stableHash == before)

        var right = sfeGrid([])
        right.apply(.right, .right)
        #expect(picture(right, rows: 3...3) == ["....RB"])
        #expect(right.apply(.right) == .blocked)
        #expect(right.apply(.rotateCW) == .moved)
        #expect(picture(right, rows: 3...4) == [".....R", ".....B"])
        #expect(right.apply(.rotateCCW) == .moved)
        #expect(picture(right, rows: 3...4) == ["....RB", "......"])
    }

    @Test("next to eggs: a turn is refused when the cell below the right egg or left of the top egg is taken")
    func nextToEggs() {
        // Column 3 filled up to row 4: nothing below the right egg.
        var below = sfeGrid(rows("......", 4) + rows("...G..", 11))
        #expect(below.apply(.rotateCW) == .blocked)
        #expect(below.apply(.rotateCCW) == .blocked)
        #expect(picture(below, rows: 3...4) == ["..RB..", "...G.."])
        // Column 1 filled up to row 3: a vertical pair in column 2 cannot turn left into it.
        var beside = sfeGrid(rows("......", 3) + rows(".G....", 12))
        beside.apply(.rotateCW, .left)
        #expect(picture(beside, rows: 3...4) == [".GR...", ".GB..."])
        #expect(beside.apply(.rotateCW) == .blocked)
        #expect(beside.apply(.rotateCCW) == .blocked)
    }

    @Test("at half offset an egg occupies two cells: turns and moves check the cell one lower too")
    func halfOffset() {
        // Column 3 filled up to row 5: at row 3 the pair may turn, half a cell lower it may not.
        var grid = sfeGrid(rows("......", 5) + rows("...G..", 10))
        var turned = grid
        #expect(turned.apply(.rotateCW) == .moved)
        #expect(grid.apply(.ticks(38)) == .ticked(locked: false, chainEnded: nil))
        #expect(grid.livePair!.topHalfRow == 7)
        #expect(grid.livePair!.isAtHalfOffset)
        #expect(grid.apply(.rotateCW) == .blocked)
        // Column 1 filled up to row 4: left is allowed at row 3, refused half a cell lower.
        var moving = sfeGrid(rows("......", 4) + rows(".G....", 11))
        var moved = moving
        #expect(moved.apply(.left) == .moved)
        moving.apply(.ticks(38))
        #expect(moving.apply(.left) == .blocked)
        #expect(moving.apply(.right) == .moved)
    }

    @Test("the pair moves half a cell per drop interval, and soft drop half a cell per step")
    func halfCellDrops() {
        var grid = sfeGrid([], speed: 5)
        #expect(grid.dropIntervalTicks == 18)
        grid.apply(.ticks(17))
        #expect(grid.livePair!.topHalfRow == 6)
        grid.apply(.ticks(1))
        #expect(grid.livePair!.topHalfRow == 7)
        #expect(grid.apply(.down) == .moved)
        #expect(grid.livePair!.topHalfRow == 8)
        // The drop timer runs on: 18 ticks after the last timer step, not after the soft drop.
        grid.apply(.ticks(18))
        #expect(grid.livePair!.topHalfRow == 9)
    }

    @Test("soft drop: the owner's cadence sends a down every 2 ticks while held")
    func softDropCadence() {
        var clock = GravityClock(speed: 0)
        let downs = (0..<10).map { _ in clock.tick(softDrop: true) }
        #expect(downs == [false, true, false, true, false, true, false, true, false, true])
        #expect(clock.tick(softDrop: false) == false)
        #expect(clock.tick(softDrop: true) == false)
    }
}

@Suite("sfe: locking")
struct SfeLockTests {
    @Test("a resting pair can still be moved for one drop interval, then locks without moving")
    func graceInterval() {
        var grid = sfeGrid([], speed: 0)
        // Row 3 to row 14 is 22 half-cell steps.
        grid.apply(.ticks(22 * 38))
        #expect(grid.livePair!.topHalfRow == 28)
        #expect(grid.state == .live)
        #expect(grid.apply(.left) == .moved)
        grid.apply(.ticks(37))
        #expect(grid.state == .live)
        #expect(grid.apply(.ticks(1)) == .ticked(locked: true, chainEnded: nil))
        #expect(grid.state == .resolving)
        #expect(picture(grid).last == ".RB...")
        #expect(grid.activity(column: 1, row: 14) == .landing(ticksLeft: 15))
    }

    @Test("a split pair: the unsupported egg falls on as an ordinary egg")
    func splitPair() {
        var grid = sfeGrid(rows("......", 14) + ["..Y..."])
        #expect(grid.apply(.hardDrop) == .locked)
        #expect(picture(grid, rows: 13...14) == ["..RB..", "..Y..."])
        #expect(grid.looseEggs == [LooseEgg(column: 3, halfRow: 26, cell: .egg(.blue))])
        _ = grid.ticksUntilSettled()
        #expect(picture(grid, rows: 13...14) == ["..R...", "..YB.."])
    }

    @Test("hard drop and down lock where they rest; the lock starts the landing")
    func hardDrop() {
        var grid = sfeGrid(rows("......", 14) + [".G...."])
        grid.apply(.left)
        #expect(grid.apply(.hardDrop) == .locked)
        #expect(picture(grid, rows: 13...14) == [".RB...", ".G...."])
        #expect(grid.activity(column: 1, row: 13) == .landing(ticksLeft: 15))
        #expect(grid.apply(.move(.left)) == .rejected(.noLivePair))
        #expect(grid.apply(.spawn(EggPair(pivot: .red, child: .red))) == .rejected(.stillResolving))
    }
}

@Suite("sfe: timing from lock to next spawn")
struct SfeTimingTests {
    @Test("a pair landing flat with nothing to pop: 16 ticks")
    func flat() {
        var grid = sfeGrid([])
        grid.apply(.hardDrop)
        #expect(grid.ticksUntilSettled() == 16)
        #expect(grid.lastChain == ChainResult())
        // Locked by the drop timer instead: the lock's tick and 15 more.
        var timed = sfeGrid([], speed: 9)
        while timed.state == .live { timed.apply(.ticks(1)) }
        #expect(timed.ticksUntilSettled() == 15)
    }

    @Test("a vertical pair: 18 ticks (the top egg lands one fall pass after the bottom one)")
    func vertical() {
        var grid = sfeGrid([])
        grid.apply(.rotateCW)
        grid.apply(.hardDrop)
        #expect(grid.activity(column: 3, row: 14) == .landing(ticksLeft: 15))
        #expect(grid.looseEggs.count == 1)
        #expect(grid.ticksUntilSettled() == 18)
        #expect(picture(grid, rows: 13...14) == ["...R..", "...B.."])
    }

    @Test("a split pair: the free egg falls a cell in 4 ticks and lands on the next pass: 22 ticks")
    func split() {
        var grid = sfeGrid(rows("......", 14) + ["..Y..."])
        grid.apply(.hardDrop)
        #expect(grid.ticksUntilSettled() == 22)
    }

    @Test("a one-step chain: landing 15, pop 13, a fall pass 2 later, a check: 32 ticks, one garbage sent at the next spawn")
    func oneStep() {
        var grid = sfeGrid(rows("......", 14) + ["RR...."], pair: EggPair(pivot: .red, child: .red))
        grid.apply(.hardDrop)
        var popped: Int?
        for tick in 1...100 where grid.state == .resolving {
            grid.apply(.ticks(1))
            if popped == nil, case .popping(13) = grid.activity(column: 0, row: 14) { popped = tick }
        }
        // Ticks are counted from the lock's own tick (1): the landing ends 15 ticks after it.
        #expect(popped == 16)
        #expect(grid.state == .awaitingSpawn)
        var timed = sfeGrid(rows("......", 14) + ["RR...."], pair: EggPair(pivot: .red, child: .red))
        timed.apply(.hardDrop)
        // Removed on tick 28, the fall's first pass on 30 moves nothing, the check on 31 ends it.
        #expect(timed.ticksUntilSettled() == 32)
        #expect(timed.lastChain == ChainResult(steps: [ChainStep(popped: 4, garbageCleared: 0)]))
        #expect(timed.garbagePending == 1)
        #expect(timed.apply(.spawn(EggPair(pivot: .red, child: .blue))) == .spawned(garbageSent: 1))
    }

    @Test("a two-step chain: pop, a two-cell fall in passes of 2 ticks, land, pop: 70 ticks")
    func twoSteps() {
        // RR locks on the B row: R group of 4 pops; the B above falls two cells and joins BBB.
        let start = rows("......", 12) + ["B.....", "R.....", "RBBB.."]
        var grid = sfeGrid(start, pair: EggPair(pivot: .red, child: .red))
        grid.apply(.left)
        grid.apply(.hardDrop)
        #expect(picture(grid, rows: 12...14) == ["B.....", "RRR...", "RBBB.."])
        var steps: [Int] = []
        var count = 0
        while grid.state == .resolving && count < 200 {
            grid.apply(.ticks(1))
            count += 1
            if grid.chainStep > steps.count { steps.append(count) }
        }
        // Landing 15 → pop on tick 15; removed on 28, the B falls from tick 30 (4 half cells, a
        // pass every 2 ticks: 30…36), lands on the pass of 38, 15 later (53) pops; removed on 66,
        // the pass on 68 moves nothing, the check on 69 finds the board empty.
        // (Counted from the lock's own tick as 1.)
        #expect(steps == [16, 54])
        #expect(count == 70)
        #expect(grid.lastChain?.steps.map(\.popped) == [4, 4])
        #expect(grid.garbagePending == 7)
        #expect(grid.board == Board())
    }

    @Test("garbage falls half a cell a tick and bounces its column 17 ticks after landing")
    func garbageLanding() {
        var grid = PlayerGrid()
        #expect(grid.apply(.landGarbage(6)) == .garbageLanded(6))
        #expect(grid.state == .resolving)
        #expect(picture(grid, rows: 0...0) == ["######"])
        grid.apply(.ticks(27))
        #expect(grid.looseEggs.allSatisfy { $0.halfRow == 27 })
        grid.apply(.ticks(1))
        #expect(grid.looseEggs.allSatisfy { $0.halfRow == 28 })
        grid.apply(.ticks(1))
        #expect(grid.looseEggs.isEmpty)
        #expect((0..<6).map { grid.bounceTicksLeft(column: $0) } == Array(repeating: 17, count: 6))
        #expect(grid.ticksUntilSettled() == 17)
        #expect(grid.board.notationRows.last == "######")
    }

    @Test("timed resolution ends on the same board as the zero-time resolve, on random boards")
    func timedMatchesZeroTime() {
        var rng = Xoshiro256StarStar(seed: 99)
        for _ in 0..<200 {
            var board = Board()
            for column in 0..<6 {
                for row in (4 + rng.nextInt(below: 11))..<15 {
                    board[column: column, row: row] = rng.nextInt(below: 8) == 0 ? .garbage : .egg(EggColor(rawValue: UInt8(rng.nextInt(below: 4)))!)
                }
            }
            board.settle()
            var zero = board
            _ = zero.resolveChain()
            let incoming = rng.nextInt(below: 20)
            var expected = zero
            expected.landGarbage(incoming)
            let report = resolve(board: board, incoming: incoming)
            #expect(report.board == expected)
        }
    }
}

@Suite("sfe: garbage, game over, starting height")
struct SfeGarbageTests {
    @Test("placement: level by level, columns ordered by height, ties to the higher index")
    func levels() {
        let start = try! Board(notation: (rows("......", 3) + rows("....R.", 9) + ["Y...B.", "P..PR.", "YG.YB."]).joined(separator: "\n"))
        var board = start
        #expect(board.landGarbage(2) == 2)
        #expect(board.notationRows.suffix(1) == ["YG#YB#"])
        board = start
        #expect(board.landGarbage(9) == 9)
        #expect((0..<6).map { board.height(column: $0) } == [3, 3, 3, 3, 12, 3])
        // Where the eggs go before they fall: the topmost empty cells, one per column and pass.
        #expect(start.garbagePlacement(6).map { [$0.column, $0.row] } == [[5, 0], [2, 0], [5, 1], [2, 1], [1, 0], [5, 2]])
    }

    @Test("a column whose rows 0–12 are taken is full; rows 0–2 above the spawn row take garbage; the rest is discarded")
    func nearlyFull() {
        let full = (0..<12).map { row in String((0..<6).map { ($0 + row) % 2 == 0 ? Character("R") : Character("B") }) }
        var board = try! Board(notation: (["......", "......", "......"] + full).joined(separator: "\n"))
        #expect(board.landGarbage(20) == 18)
        #expect(board.notationRows.prefix(3) == ["######", "######", "######"])
        #expect(board.landGarbage(1) == 0)
        // One shorter column is filled first.
        var short = full
        short[0] = "R.RBRB"
        short[1] = "BR.RBR"
        board = try! Board(notation: short.joined(separator: "\n"))
        #expect(board.garbagePlacement(3).map { [$0.column, $0.row] } == [[2, 0], [2, 1], [1, 0]])
    }

    @Test("landing through the grid ends where the zero-time placement does")
    func timedPlacement() {
        var grid = PlayerGrid(board: board("....R.", "Y...B.", "P..PR.", "YG.YB."))
        var zero = grid.board
        zero.landGarbage(10)
        #expect(grid.apply(.landGarbage(10)) == .garbageLanded(10))
        _ = grid.ticksUntilSettled()
        #expect(grid.board == zero)
    }

    @Test("game over only at spawn: (2,3) or (3,3) taken; a spawn that tops out sends nothing")
    func gameOver() {
        var grid = PlayerGrid(board: try! Board(notation: (rows("......", 3) + rows("...G..", 12)).joined(separator: "\n")))
        #expect(grid.apply(.spawn(EggPair(pivot: .red, child: .red))) == .toppedOut(garbageSent: 0))
        #expect(grid.state == .toppedOut)
        #expect(grid.apply(.ticks(1)) == .rejected(.toppedOut))

        // A chain's garbage is pending, then the next spawn tops out: nothing is sent.
        let column = (4...14).map { $0 % 2 == 0 ? "..G..." : "..Y..." }
        var chain = PlayerGrid(board: try! Board(notation: (rows("......", 4) + column.dropLast() + ["RRG..."]).joined(separator: "\n")))
        chain.apply(.spawn(EggPair(pivot: .red, child: .red)))
        chain.apply(.left, .left, .hardDrop)
        _ = chain.ticksUntilSettled()
        #expect(chain.garbagePending == 1)
        chain.apply(.landGarbage(90))
        _ = chain.ticksUntilSettled()
        #expect(chain.board[column: 2, row: 3] != .empty)
        #expect(chain.apply(.spawn(EggPair(pivot: .red, child: .red))) == .toppedOut(garbageSent: 0))
    }

    @Test("starting height h: 6·h garbage eggs, h full rows, before the first spawn")
    func startingHeight() {
        for height in 0...9 {
            let grid = PlayerGrid(startingHeight: height)
            #expect(grid.board.eggsCount == 6 * height)
            #expect(grid.board.notationRows.suffix(height).allSatisfy { $0 == "######" })
            #expect(grid.state == .awaitingSpawn)
        }
    }

    @Test("malformed inputs are refused and change nothing")
    func refused() {
        var grid = PlayerGrid()
        let hash = grid.stableHash
        #expect(grid.apply(.ticks(0)) == .rejected(.badTickCount))
        #expect(grid.apply(.ticks(PlayerGrid.ticksPerInputMax + 1)) == .rejected(.badTickCount))
        #expect(grid.apply(.landGarbage(-1)) == .rejected(.negativeGarbage))
        #expect(grid.apply(.move(.left)) == .rejected(.noLivePair))
        #expect(grid.stableHash == hash)
        grid.apply(.landGarbage(3))
        #expect(grid.apply(.landGarbage(3)) == .rejected(.stillResolving))
    }
}
