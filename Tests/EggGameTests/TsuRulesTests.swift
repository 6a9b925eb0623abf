import Testing
@testable import EggBot
@testable import EggGame

// `tsu` stores its 13 rows in Board rows 2–14: row 2 is the hidden 13th row, rows 3–14 the 12
// visible ones. Notation here is 13 rows (or fewer: missing top rows are empty).

/// A `tsu` grid from notation of at most 13 rows, waiting for its first spawn.
func tsuBoardGrid(_ rows: [String], speed: Int = 0, garbageSeed: UInt64 = 0) -> PlayerGrid {
    PlayerGrid(board: try! Board(notation: rows.joined(separator: "\n"), rowsMax: 13), rules: .tsu, speed: speed,
               garbageSeed: garbageSeed)
}

/// A `tsu` grid from notation with `pair` spawned: pivot at (2,3), child above it at (2,2).
func tsuGrid(_ rows: [String], pair: EggPair = EggPair(pivot: .red, child: .blue), speed: Int = 0) -> PlayerGrid {
    var grid = tsuBoardGrid(rows, speed: speed)
    let outcome = grid.apply(.spawn(pair))
    precondition(outcome == .spawned(garbageSent: 0), "fixture spawn failed: \(outcome)")
    return grid
}

/// The 13 rows of a `tsu` grid (hidden row first), live pair and loose eggs drawn.
func tsuPicture(_ grid: PlayerGrid, rows: ClosedRange<Int> = 2...14) -> [String] {
    picture(grid, rows: rows)
}

/// Columns 0–3 of rows 4–14 in a checker of B and Y (no group anywhere), for stacks to build on.
let checkerRows = (4...14).map { row in String((0..<6).map { $0 < 4 ? (($0 + row) % 2 == 0 ? Character("B") : Character("Y")) : Character(".") }) }

@Suite("tsu: the grid, spawn, rotation and kicks (docs/rules.md, `tsu`)")
struct TsuMoveTests {
    @Test("the rule set: 13 rows (Board rows 2–14, row 2 hidden), spawn at (2,3) child above, two next pairs")
    func ruleSetValues() {
        let tsu = RuleSet.tsu
        #expect((tsu.columns, tsu.rows, tsu.topRow, tsu.pairTopRow, tsu.poppingTopRow) == (6, 13, 2, 2, 3))
        #expect((tsu.spawnColumn, tsu.spawnRow, tsu.spawnOrientation) == (2, 3, .up))
        #expect(tsu.nextPairsShown == 2 && tsu.offsetting && tsu.garbageDropMax == 30)
        #expect(tsu.timing == RuleSet.sfe.timing)
        #expect(RuleSet.named("tsu") == tsu)
        #expect(RuleSet.sfe.garbageDropMax == Int.max)
    }

    @Test("a pair spawns vertical: pivot in the top visible row, child in the hidden row")
    func spawn() {
        let grid = tsuGrid([])
        #expect(tsuPicture(grid, rows: 2...4) == ["..B...", "..R...", "......"])
        let live = grid.livePair!
        #expect((live.column, live.row, live.childColumn, live.childRow, live.orientation) == (2, 3, 2, 2, .up))
    }

    @Test("every orientation, clockwise and anticlockwise: the child turns around the pivot")
    func everyOrientation() {
        var cw = tsuGrid([])
        let clockwise: [(Orientation, [String])] = [
            (.right, ["......", "..RB..", "......"]),
            (.down, ["......", "..R...", "..B..."]),
            (.left, ["......", ".BR...", "......"]),
            (.up, ["..B...", "..R...", "......"]),
        ]
        for (orientation, expected) in clockwise {
            #expect(cw.apply(.rotateCW) == .moved)
            #expect(cw.livePair!.orientation == orientation)
            #expect(tsuPicture(cw, rows: 2...4) == expected, "clockwise to \(orientation)")
            #expect((cw.livePair!.column, cw.livePair!.row) == (2, 3), "the pivot stays")
        }
        var ccw = tsuGrid([])
        let anticlockwise: [(Orientation, [String])] = [
            (.left, ["......", ".BR...", "......"]),
            (.down, ["......", "..R...", "..B..."]),
            (.right, ["......", "..RB..", "......"]),
            (.up, ["..B...", "..R...", "......"]),
        ]
        for (orientation, expected) in anticlockwise {
            #expect(ccw.apply(.rotateCCW) == .moved)
            #expect(ccw.livePair!.orientation == orientation)
            #expect(tsuPicture(ccw, rows: 2...4) == expected, "anticlockwise to \(orientation)")
        }
    }

    @Test("wall kicks: a turn into either wall shifts the pair one column away")
    func wallKicks() {
        var left = tsuGrid([])
        left.apply(.left, .left)
        #expect(left.apply(.left) == .blocked)
        #expect(left.apply(.rotateCCW) == .moved)
        #expect(tsuPicture(left, rows: 2...3) == ["......", "BR...."])
        #expect((left.livePair!.column, left.livePair!.orientation) == (1, .left))

        var right = tsuGrid([])
        right.apply(.right, .right, .right)
        #expect(right.apply(.right) == .blocked)
        #expect(right.apply(.rotateCW) == .moved)
        #expect(tsuPicture(right, rows: 2...3) == ["......", "....RB"])
        #expect((right.livePair!.column, right.livePair!.orientation) == (4, .right))
    }

    @Test("kicks off eggs: a child blocked by an egg beside the pivot shifts the pair the other way")
    func eggKicks() {
        // Column 3 full up to the top visible row: turning right kicks the pair left.
        var right = tsuGrid(["......"] + rows("...G..", 12))
        #expect(right.apply(.rotateCW) == .moved)
        #expect(tsuPicture(right, rows: 2...3) == ["......", ".RBG.."])
        // Column 1 full: turning left kicks the pair right.
        var left = tsuGrid(["......"] + rows(".G....", 12))
        #expect(left.apply(.rotateCCW) == .moved)
        #expect(tsuPicture(left, rows: 2...3) == ["......", ".GBR.."])
    }

    @Test("floor kick: a child turning into the floor or an egg below lifts the pair one row")
    func floorKick() {
        // On the floor: horizontal in row 14 (22 half-cell steps at 38 ticks), then turn down.
        var floor = tsuGrid([])
        floor.apply(.rotateCW)
        floor.apply(.ticks(22 * 38))
        #expect(floor.livePair!.topHalfRow == 28)
        #expect(floor.state == .live)
        #expect(floor.apply(.rotateCW) == .moved)
        #expect(tsuPicture(floor, rows: 12...14) == ["......", "..R...", "..B..."])
        // On an egg: column 2 filled from row 5; the pair rests in row 4.
        var onEgg = tsuGrid(rows("......", 3) + rows("..G...", 10))
        onEgg.apply(.rotateCW)
        onEgg.apply(.ticks(2 * 38))
        #expect(onEgg.livePair!.row == 4)
        #expect(onEgg.apply(.rotateCW) == .moved)
        #expect(tsuPicture(onEgg, rows: 2...5) == ["......", "..R...", "..B...", "..G..."])
    }

    @Test("the floor kick reaches the hidden row; a turn up into the ceiling is refused")
    func ceiling() {
        var grid = tsuGrid(rows("......", 2) + rows("..G...", 11))
        #expect(grid.apply(.rotateCW) == .moved)
        #expect(grid.apply(.rotateCW) == .moved)
        #expect(tsuPicture(grid, rows: 2...4) == ["..R...", "..B...", "..G..."])
        #expect(grid.livePair!.row == 2)
        #expect(grid.apply(.rotateCW) == .moved)
        #expect(tsuPicture(grid, rows: 2...3) == [".BR...", "......"])
        let before = grid.stableHash
        #expect(grid.apply(.rotateCW) == .blocked)
        #expect(grid.stableHash == before)
    }

    @Test("quick turn: in a one-column shaft the first press arms, the second flips the pair 180°")
    func quickTurn() {
        // Columns 1 and 3 full; the shaft in column 2 is open below.
        let shaft = ["......"] + rows(".G.G..", 12)
        var open = tsuGrid(shaft)
        #expect(open.apply(.rotateCW) == .blocked)
        #expect(open.livePair!.quickTurnArmed)
        #expect(tsuPicture(open, rows: 2...4) == ["..B...", ".GRG..", ".G.G.."])
        #expect(open.apply(.rotateCCW) == .moved)
        #expect(open.livePair!.orientation == .down)
        #expect(!open.livePair!.quickTurnArmed)
        #expect(tsuPicture(open, rows: 2...4) == ["......", ".GRG..", ".GBG.."])

        // At the bottom of a shaft the flip lifts the pair: the two eggs swap places.
        var bottom = tsuGrid(["......"] + rows(".G.G..", 10) + rows(".GYG..", 2))
        bottom.apply(.ticks(18 * 38))
        #expect(bottom.livePair!.row == 12)
        #expect(bottom.state == .live)
        #expect(tsuPicture(bottom, rows: 10...13) == [".G.G..", ".GBG..", ".GRG..", ".GYG.."])
        #expect(bottom.apply(.rotateCW) == .blocked)
        #expect(bottom.apply(.rotateCW) == .moved)
        #expect(tsuPicture(bottom, rows: 10...13) == [".G.G..", ".GRG..", ".GBG..", ".GYG.."])
        #expect((bottom.livePair!.row, bottom.livePair!.orientation) == (11, .down))

        // A move between the presses disarms: two presses in a row are needed.
        var broken = tsuGrid(shaft)
        #expect(broken.apply(.rotateCW) == .blocked)
        #expect(broken.apply(.down) == .moved)
        #expect(!broken.livePair!.quickTurnArmed)
        #expect(broken.apply(.rotateCW) == .blocked)
        #expect(broken.livePair!.orientation == .up)
        // Gravity does not disarm.
        var waiting = tsuGrid(shaft)
        waiting.apply(.rotateCW)
        waiting.apply(.ticks(38))
        #expect(waiting.livePair!.isAtHalfOffset)
        #expect(waiting.apply(.rotateCW) == .moved)
        #expect(waiting.livePair!.orientation == .down)
    }

    @Test("game over: only column 2 of the top visible row counts")
    func gameOver() {
        var column3 = tsuBoardGrid(["......"] + rows("...G..", 12))
        #expect(column3.apply(.spawn(EggPair(pivot: .red, child: .red))) == .spawned(garbageSent: 0))
        var column2 = tsuBoardGrid(["......"] + rows("..G...", 12))
        #expect(column2.apply(.spawn(EggPair(pivot: .red, child: .red))) == .toppedOut(garbageSent: 0))
        #expect(column2.state == .toppedOut)
    }
}

@Suite("tsu: the hidden row, scoring and garbage (docs/rules.md, `tsu`)")
struct TsuScoringTests {
    @Test("eggs in the hidden row neither join groups nor are cleared as garbage")
    func hiddenRow() throws {
        // Four reds in column 0, the top one hidden: no pop.
        let four = ["R.....", "R.....", "R.....", "R....."] + checkerRows.dropFirst(2)
        #expect(four.count == 13)
        let hidden = try resolveBoard(four.joined(separator: "\n"), incoming: 0, rules: .tsu)
        #expect(hidden.chain.chain == 0)
        #expect(try resolveBoard(four.joined(separator: "\n"), incoming: 0, rules: .sfe).chain.chain == 1)
        // The same four one row lower pop.
        let lower = ["......", "R.....", "R.....", "R.....", "R....."] + checkerRows.dropFirst(3)
        #expect(try resolveBoard(lower.joined(separator: "\n"), incoming: 0, rules: .tsu).chain.chain == 1)
        // Garbage in the hidden row over a popping group stays, and falls into view.
        let board = ["#.....", "RRRR.."] + checkerRows
        let report = try resolveBoard(board.joined(separator: "\n"), incoming: 0, rules: .tsu)
        #expect(report.chain.steps == [ChainStep(popped: 4, garbageCleared: 0, score: 40)])
        #expect(Array(report.board.notationRows(rows: 13).prefix(3)) == ["......", "#.....", checkerRows[0]])
        let sfe = try resolveBoard(board.joined(separator: "\n"), incoming: 0, rules: .sfe)
        #expect(sfe.chain.steps == [ChainStep(popped: 4, garbageCleared: 1)])
    }

    @Test("a 2-chain of 4 + 4 eggs of one colour each scores 40 then 320; garbage 5, remainder 10; sfe's timing")
    func twoChainScore() throws {
        let start = rows("......", 10) + ["B.....", "RRR...", "RBBB.."]
        let report = try resolveBoard(start.joined(separator: "\n"), incoming: 0, rules: .tsu)
        #expect(report.chain.steps.map(\.score) == [40, 320])
        #expect(report.garbage == 5)
        #expect(report.board.notationRows(rows: 13).count == 13)
        let sfe = try resolveBoard(start.joined(separator: "\n"), incoming: 0, rules: .sfe)
        #expect(report.ticks == sfe.ticks)

        var grid = PlayerGrid(lockedOnto: try Board(notation: start.joined(separator: "\n"), rowsMax: 13), rules: .tsu)
        _ = grid.ticksUntilSettled()
        #expect((grid.score, grid.garbagePending, grid.scoreRemainder) == (360, 5, 10))
    }

    @Test("score = 10 · PC · clamp(CP + CB + GB, 1, 999) with the tables of docs/rules.md")
    func scoreTables() {
        let s = RuleSet.Scoring.tsu
        #expect(s.chainPower.prefix(8) == [0, 8, 16, 32, 64, 96, 128, 160])
        #expect(s.chainPower[18] == 512 && s.chainPower.count == 19)
        #expect(s.score(stepIndex: 0, groupSizes: [4], colors: 1) == 40)
        #expect(s.score(stepIndex: 1, groupSizes: [4], colors: 1) == 320)
        // Step 3 (16), two colours (3), groups of 4 and 6 (0 + 3): 10 · 10 · 22.
        #expect(s.score(stepIndex: 2, groupSizes: [4, 6], colors: 2) == 2_200)
        // Step 1, one group of 5 (2) and one of 11+ (10) in two colours (3): 10 · 17 · 15.
        #expect(s.score(stepIndex: 0, groupSizes: [5, 12], colors: 2) == 2_550)
        // Step 30 uses step 19's 512; six colours 48.
        #expect(s.score(stepIndex: 29, groupSizes: [4, 4, 4, 4, 4, 4], colors: 6) == 10 * 24 * 560)
        // Group and colour bonus of a real step on the board: R group of 5, B group of 4.
        let board = rows("......", 8) + ["R.....", "RB....", "RB....", "RB....", "RB...."]
        let two = try! resolveBoard(board.joined(separator: "\n"), incoming: 0, rules: .tsu)
        #expect(two.chain.steps == [ChainStep(popped: 9, garbageCleared: 0, score: 10 * 9 * (3 + 2))])
        #expect(two.garbage == 450 / 70)
    }

    @Test("soft and hard drop score 1 point per row fallen")
    func dropPoints() {
        var grid = tsuGrid([])
        for _ in 0..<4 { grid.apply(.down) }
        grid.apply(.hardDrop)
        // 4 half cells by soft drop, then 18 more to row 14 (pivot 3 → 14 is 22 half cells): 11 rows.
        _ = grid.ticksUntilSettled()
        #expect(grid.score == 11)
        #expect(grid.garbagePending == 0)
        var plain = tsuGrid([])
        plain.apply(.ticks(30 * 38))
        _ = plain.ticksUntilSettled()
        #expect(plain.score == 0)
    }

    @Test("margin time: 70 for 96 s, then ⌊70·¾⌋, then every 16 s half the value before the previous change")
    func marginTime() {
        let s = RuleSet.Scoring.tsu
        #expect(s.targetPoints(afterTicks: 0) == 70)
        #expect(s.targetPoints(afterTicks: 96 * 60 - 1) == 70)
        let schedule = (0..<16).map { s.targetPoints(afterTicks: 96 * 60 + $0 * 16 * 60) }
        #expect(schedule == [52, 35, 26, 17, 13, 8, 6, 4, 3, 2, 1, 1, 1, 1, 1, 1])
        #expect(s.targetPoints(afterTicks: 96 * 60 + 16 * 60 - 1) == 52)
        #expect(s.targetPoints(afterTicks: 1_000_000) == 1)
        // At most 14 changes after the first.
        var big = s
        big.targetPoints = 1 << 30
        let late = (14...20).map { big.targetPoints(afterTicks: 96 * 60 + $0 * 16 * 60) }
        #expect(Set(late).count == 1)
        #expect(big.targetPoints(afterTicks: 96 * 60 + 13 * 16 * 60) != late[0])
        #expect(late[0] > 1)

        // The grid uses its own ticks played: after 120 s a 4-egg pop (40 points) sends 1 at target 35.
        // Idle 100 s; the pop comes about 13.5 s later: target 35 (from 112 s to 128 s).
        var grid = tsuBoardGrid(rows("......", 12) + ["RR...."])
        grid.apply(.ticks(3_000))
        grid.apply(.ticks(3_000))
        grid.apply(.spawn(EggPair(pivot: .red, child: .red)))
        grid.apply(.rotateCW)
        grid.apply(.left, .left)
        grid.apply(.ticks(22 * 38))
        _ = grid.ticksUntilSettled()
        #expect(grid.lastChain?.chain == 1)
        #expect((grid.garbagePending, grid.scoreRemainder) == (1, 5))
    }

    @Test("all clear: an empty board after a chain adds 30 to the next chain's garbage")
    func allClear() {
        var grid = tsuBoardGrid(rows("......", 12) + ["RR...."])
        func place(_ moves: Move..., pair: EggPair = EggPair(pivot: .red, child: .red)) {
            #expect(grid.apply(.spawn(pair)).isAccepted)
            for move in moves { grid.apply(.move(move)) }
            grid.apply(.move(.hardDrop))
            _ = grid.ticksUntilSettled()
        }
        place(.rotateCW, .left, .left)
        #expect(grid.board == Board())
        #expect(grid.allClearBonus)
        #expect(grid.garbagePending == 0)
        // Pairs that pop nothing keep the bonus.
        place(.right, .right, .right, pair: EggPair(pivot: .blue, child: .blue))
        place(.rotateCW, .left, .left)
        #expect(grid.allClearBonus)
        #expect(grid.garbagePending == 0)
        // The next chain uses it (and leaves the blues: no new all clear).
        place(.rotateCW, .left, .left)
        #expect(grid.lastChain?.chain == 1)
        #expect(!grid.allClearBonus)
        // 40 carried + 40 = 80: one egg, 10 carried; and the 30 of the all clear.
        #expect((grid.garbagePending, grid.scoreRemainder) == (31, 10))
    }

    @Test("nuisance: whole rows per 6, the rest in distinct random columns, at most 30, the same on two engines")
    func nuisance() {
        for seed: UInt64 in [1, 2, 3, 77] {
            var one = tsuBoardGrid([], garbageSeed: seed)
            var two = tsuBoardGrid([], garbageSeed: seed)
            for count in [9, 4, 17] {
                #expect(one.apply(.landGarbage(count)) == two.apply(.landGarbage(count)))
                _ = one.ticksUntilSettled()
                _ = two.ticksUntilSettled()
                #expect(one.board == two.board)
                #expect(one.stableHash == two.stableHash)
            }
            #expect(one.board.eggsCount == 30)
        }
        var grid = tsuBoardGrid([], garbageSeed: 5)
        #expect(grid.apply(.landGarbage(9)) == .garbageLanded(9))
        _ = grid.ticksUntilSettled()
        let rows13 = grid.board.notationRows(rows: 13)
        #expect(rows13.last == "######")
        #expect(rows13[11].filter { $0 == "#" }.count == 3)
        // The remainder's columns are distinct and come from the stream: different seeds differ.
        for count in 1...5 {
            #expect(Set(PlayerGrid(rules: .tsu, garbageSeed: 9).garbageColumns(count)).count == count)
        }
        let patterns = Set((UInt64(0)..<8).map { PlayerGrid(rules: .tsu, garbageSeed: $0).garbageColumns(3) })
        #expect(patterns.count > 1)
        // At most 30 at once.
        var many = tsuBoardGrid([])
        #expect(many.apply(.landGarbage(40)) == .garbageLanded(30))
        _ = many.ticksUntilSettled()
        #expect(many.board.notationRows(rows: 13).suffix(5) == Array(repeating: "######", count: 5))
        #expect(many.board.eggsCount == 30)
    }

    @Test("nuisance fills the hidden row and no higher; a full column takes none")
    func nuisanceNearlyFull() {
        // Column 0 holds 12 (rows 3–14): only the hidden row is free. Column 1 holds 13: full.
        let alternating = (2...14).map { row in (row == 2 ? "." : row % 2 == 0 ? "R" : "B") + (row % 2 == 0 ? "B" : "R") + "...." }
        var grid = tsuBoardGrid(alternating)
        #expect(grid.apply(.landGarbage(12)) == .garbageLanded(9))
        _ = grid.ticksUntilSettled()
        let rows13 = grid.board.notationRows(rows: 13)
        #expect(rows13[0] == "#B....")
        #expect((2..<6).allSatisfy { grid.board.height(column: $0) == 2 })
    }
}

@Suite("tsu in a LocalMatch: offsetting and the nuisance limit")
struct TsuLocalMatchTests {
    /// A two-seat match whose seat 0 has a resolved 2-chain (garbage pending: `tsu` 5, `sfe` 7)
    /// and waits to spawn; seat 1's pair is live.
    func match(_ rules: RuleSet) -> LocalMatch {
        var match = LocalMatch(options: LocalMatch.Options(seed: 7, rules: rules), seats: [.external, .external])
        match.tick()
        match.grids[0] = chainGrid(rules)
        return match
    }

    func chainGrid(_ rules: RuleSet) -> PlayerGrid {
        let start = rows("......", 10) + ["B.....", "RRR...", "RBBB.."]
        var grid = PlayerGrid(lockedOnto: try! Board(notation: start.joined(separator: "\n"), rowsMax: rules.rows), rules: rules)
        _ = grid.ticksUntilSettled()
        return grid
    }

    func sent(_ events: [LocalMatch.Event]) -> [[Int]] {
        events.compactMap { if case .garbageSent(let from, let to, let count) = $0 { [from, to, count] } else { nil } }
    }

    func landed(_ events: [LocalMatch.Event], seat: Int) -> [Int] {
        events.compactMap { if case .input(seat, .landGarbage(let count), _) = $0 { count } else { nil } }
    }

    @Test("a chain first cancels garbage queued against its player; only the rest is sent (both ways)")
    func offsetting() {
        var m = match(.tsu)
        #expect(m.grids[0].garbagePending == 5)
        m.garbage[0].credit(3)
        var events = m.tick()
        #expect(sent(events) == [[0, 1, 2]])
        #expect(landed(events, seat: 0) == [])
        #expect((m.garbage[0].waiting, m.garbage[0].accepted) == (0, 0))
        #expect(m.garbage[1].accepted == 2)
        // The other way: seat 1's chain cancels the 2 queued against it and sends 3.
        m.grids[1] = chainGrid(.tsu)
        events = m.tick()
        #expect(sent(events) == [[1, 0, 3]])
        #expect(landed(events, seat: 1) == [])
        #expect(m.garbage[1].accepted == 0)
        #expect(m.garbage[0].accepted == 3)
    }

    @Test("a chain smaller than the queue sends nothing and leaves the rest queued, accepted garbage first")
    func offsettingAll() {
        var m = match(.tsu)
        m.acceptGarbage(4, seat: 0)
        m.garbage[0].credit(4)
        let events = m.tick()
        #expect(sent(events) == [])
        #expect(landed(events, seat: 0) == [])
        // 4 accepted and 1 incoming cancelled; the 3 left are accepted during the new pair.
        #expect((m.garbage[0].waiting, m.garbage[0].accepted) == (0, 3))
        #expect(m.grids[0].state == .live)
    }

    /// Seat 0 of a tsu match mid-way through a 2-chain: step 1 (7 reds, 280 points) has made 4
    /// garbage and step 2 (4 blues, 320 points) will make 4 more; seat 1's pair is live.
    func afterFirstStep() -> LocalMatch {
        var m = match(.tsu)
        let board = rows("......", 10) + ["B.....", "RBBB..", "RRRRRR"]
        m.grids[0] = PlayerGrid(lockedOnto: try! Board(notation: board.joined(separator: "\n"), rowsMax: 13), rules: .tsu)
        var ticks = 0
        while m.grids[0].chainStep < 1 && ticks < 200 { m.tick(); ticks += 1 }
        #expect(m.grids[0].chainStep == 1 && m.grids[0].garbagePending == 4 && m.grids[0].state == .resolving)
        return m
    }

    /// Ticks until seat 0's next pair is live; the events of those ticks.
    func untilSpawn(_ m: inout LocalMatch) -> [LocalMatch.Event] {
        var events: [LocalMatch.Event] = []
        var ticks = 0
        while m.grids[0].state != .live && ticks < 400 { events += m.tick(); ticks += 1 }
        #expect(m.grids[0].state == .live)
        return events
    }

    @Test("offsetting is per chain: garbage queued while the chain plays is cancelled by the whole chain's garbage at its end")
    func offsettingPerChain() {
        // 6 queued after step 1: the chain's 8 cancel all 6 and send 2 (per step, step 1's 4
        // would have gone out before the 6 came and only step 2's 4 would cancel: 4 sent, 2 landing).
        var m = afterFirstStep()
        #expect(sent(m.tick()) == [])
        m.garbage[0].credit(6)
        var events = untilSpawn(&m)
        #expect(sent(events) == [[0, 1, 2]])
        #expect(landed(events, seat: 0) == [])
        #expect((m.garbage[0].waiting, m.garbage[0].accepted) == (0, 0))
        // The other way: 11 queued mid-chain; the 8 cancel 8, nothing is sent, 3 stay queued.
        m = afterFirstStep()
        m.garbage[0].credit(11)
        events = untilSpawn(&m)
        #expect(sent(events) == [])
        #expect((m.garbage[0].waiting, m.garbage[0].accepted) == (0, 3))
    }

    @Test("sfe has no offsetting: the whole chain is sent and the queue lands")
    func sfeNoOffsetting() {
        var m = match(.sfe)
        #expect(m.grids[0].garbagePending == 7)
        m.garbage[0].credit(3)
        let events = m.tick()
        #expect(sent(events) == [[0, 1, 7]])
        #expect(m.garbage[0].accepted == 3)
        var landing = match(.sfe)
        landing.acceptGarbage(40, seat: 0)
        #expect(landed(landing.tick(), seat: 0) == [40])
    }

    @Test("at most 30 nuisance eggs fall at once; the rest fall after the next pair")
    func dropLimit() {
        var m = match(.tsu)
        m.grids[0] = PlayerGrid(rules: .tsu, garbageSeed: m.sequence.seed)
        m.acceptGarbage(40, seat: 0)
        let events = m.tick()
        #expect(landed(events, seat: 0) == [30])
        // The other 10 wait for the next pair (`GarbageExchangeTests` follows them down).
        #expect((m.garbage[0].accepted, m.garbage[0].waiting) == (0, 10))
        #expect(m.grids[0].state == .resolving)
    }

    @Test("tsu bot matches run to the end: nuisance lands, chains score")
    func botMatch() {
        var m = LocalMatch(options: LocalMatch.Options(seed: 3, bestOf: 1, rules: .tsu), seats: [.bot(.hard), .bot(.medium)])
        var sentTotal = 0, landedTotal = 0
        while !m.isOver {
            for event in m.tick() {
                if case .garbageSent(_, _, let count) = event { sentTotal += count }
                if case .input(_, .landGarbage, .garbageLanded(let count)) = event { landedTotal += count }
            }
        }
        #expect(m.matchWinner != nil)
        #expect(sentTotal > 0 && landedTotal > 0)
        #expect(m.lastGameGrids!.contains { $0.score > 0 })
    }
}

@Suite("next pairs shown in a local match")
struct LocalNextPairsTests {
    @Test("a local match shows the rule set's next pairs (sfe one, tsu two), the sequence's pairs after the live one")
    func nextPairsFollowRuleSet() {
        for (rules, shown) in [(RuleSet.sfe, 1), (RuleSet.tsu, 2)] {
            var match = LocalMatch(options: LocalMatch.Options(seed: 11, rules: rules), seats: [.external, .external])
            for _ in 0..<120 { match.tick() }
            let spawned = match.grids[0].pairsSpawned
            #expect(spawned >= 1, "\(rules.name): no pair spawned")
            let next = match.nextPairs(seat: 0)
            #expect(next.count == shown, "\(rules.name)")
            #expect(next.first == match.nextPair(seat: 0))
            let again = LocalMatch(options: LocalMatch.Options(seed: 11, rules: rules), seats: [.external, .external])
            #expect(next == (0..<shown).map { again.sequence.pair(at: spawned + $0) }, "\(rules.name)")
        }
    }
}
