import Testing
@testable import EggGame

// SFE's runner, frame by frame (SZLocalGridRunner, SZGrid, SZEggSpriteConnector). Each frame:
// the grid's iterate (exploded eggs are removed; "busy" while any egg explodes, lands or recovers
// from a garbage hit), the runner's timer counts up, the runner acts, then every egg's animation
// advances. The runner's states:
// - drop: a fall pass when its timer is ≥ 2 (the timer resets at each pass, so every 2 frames);
//   a pass that moves nothing turns it to landing;
// - landing: on the first frame nothing is busy, look for groups: pop (→ exploding), else land
//   an incoming batch (→ dropGarbage), else wait for the next pair (it spawns on the next frame);
// - exploding: on the first frame nothing is busy, turn to drop (its timer is long past 2, so
//   the pass comes on the next frame);
// - dropGarbage: a fall pass every frame; a pass that moves nothing turns it to landing.
// Animations: an egg that starts landing on frame F is busy until frame F+14 and free on F+15;
// garbage landing on F makes every egg of its column recover from the hit until F+16 (free on
// F+17); an egg exploding from frame P shows its last frame on P+10, is exploded on P+12, is
// removed by the iterate of P+13; on P+14 nothing is busy (→ drop) and P+15 is the first pass.
// The lock is frame 0 (its drop step resets the runner's timer); frame 1 turns the runner to
// drop and frame 2 is the first fall pass. The next pair spawns on the frame after the check
// that finds nothing. (eggs checks on tick 1 when nothing falls at the lock, 2 ticks before SFE:
// the fixtures below make something fall at the lock, as a real SFE lock always does.)

@Suite("sfe: chain timing, frame for frame with Super Foul Egg's runner")
struct SfeChainTimingTests {
    @Test("a 1-chain with nothing above: the pop at 21, removed at 34, first pass 36, check 37, spawn 38")
    func oneChain() {
        // The R in row 12 falls a row: passes on 2 (half), 4 (a row) and 6 (it lands, nothing
        // moves: landing). Landing from 6 is free on 21: the check pops RRRR on 21. Removed on
        // 21+13 = 34; the runner turns to drop on 35, its pass on 36 moves nothing; the check
        // on 37 finds nothing; the pair spawns on 38. (Before this fix: 35, the removal's tick
        // ended it.)
        let report = resolve(board: board("R.....", "......", "RRR..."), incoming: 0)
        #expect(report.chain.steps == [ChainStep(popped: 4, garbageCleared: 0)])
        #expect(report.ticks == 38)
        #expect(runnerFrames(board("R.....", "......", "RRR..."), incoming: 0) == 38)
    }

    @Test("a pair landing on RR: landing 15, pop 15, removed 28, pass 30, check 31, spawn 32")
    func oneChainFromALock() {
        // The pair lands flat by a hard drop (frame 0: both eggs start landing, free on 15). The
        // pass on 2 moves nothing (landing); the check on 15 pops; removed 28, drop 29, pass 30
        // (nothing), check 31, spawn 32. (Before this fix: 29.)
        var grid = sfeGrid(rows("......", 14) + ["RR...."], pair: EggPair(pivot: .red, child: .red))
        grid.apply(.hardDrop)
        #expect(grid.ticksUntilSettled() == 32)
        #expect(grid.lastChain == ChainResult(steps: [ChainStep(popped: 4, garbageCleared: 0)]))
    }

    @Test("a 2-chain: pops on 29 and 71, the B falls on passes 44…54 and lands on 56, spawn 88")
    func twoChain() {
        // The R in column 1 falls 3 rows: passes 2…12 move it, the pass on 14 lands it (landing);
        // free on 29: the check pops the four R (step 1). Removed 42, drop 43, first pass 44: the
        // B in row 11 falls 3 rows on passes 44, 46, …, 54 and lands on the pass of 56 (landing);
        // free on 71: the check pops BBBB (step 2). Removed 84, drop 85, pass 86 moves nothing,
        // check 87, spawn 88. (Before this fix: 83, passes on even ticks from the removal, the
        // removal's tick ending it.)
        let start = board(".R....", "B.....", "R.....", "R.....", "RBBB..")
        let report = resolve(board: start, incoming: 0)
        #expect(report.chain.steps.map(\.popped) == [4, 4])
        #expect(report.ticks == 88)
        #expect(report.board == Board())
        #expect(runnerFrames(start, incoming: 0) == 88)
    }

    @Test("garbage floating at the lock falls every 2 ticks: lands on 10, bounce free on 27, spawn 28")
    func floatingGarbage() {
        // The garbage falls 2 rows with the other eggs (drop state): passes 2, 4, 6, 8; the pass
        // on 10 lands it (its column recovers from the hit until 26); the check on 27 finds
        // nothing; spawn 28. (Before this fix: 23, the garbage falling every tick.)
        let start = board("#.....", "......", "......", "R.....")
        let report = resolve(board: start, incoming: 0)
        #expect(report.ticks == 28)
        #expect(runnerFrames(start, incoming: 0) == 28)
    }

    @Test("garbage uncovered by a pop falls every 2 ticks: pop 25, passes 40…54, lands 56, spawn 74")
    func uncoveredGarbage() {
        // The R in column 1 falls 2 rows (passes 2…8) and lands on the pass of 10; free on 25: the
        // four R pop with the garbage in row 10 next to them. Removed 38, drop 39; the garbage in
        // row 9 falls 4 rows on passes 40, 42, …, 54 and lands on 56 (bounce until 72); check 73,
        // spawn 74. (Before this fix: 64, the garbage falling every tick from the removal.)
        let start = board("#.....", "#.....", "RR....", "R.....", "R.....", "BY....")
        let report = resolve(board: start, incoming: 0)
        #expect(report.chain.steps == [ChainStep(popped: 4, garbageCleared: 1)])
        #expect(report.ticks == 74)
        #expect(report.board.notationRows.suffix(2) == ["#.....", "BY...."])
        #expect(runnerFrames(start, incoming: 0) == 74)
    }

    @Test("an incoming batch that rests where it is placed does not land or bounce: spawn 18")
    func batchAtRest() {
        // Rows 3–14 full (columns 2–3 up to row 4, the pair lands on row 3). The lock starts the
        // landing of both eggs (free on 15); the pass on 2 moves nothing; the check on 15 finds
        // nothing and places the 18 incoming eggs in rows 0–2, at rest where placed (SFE adds
        // them without making them fall). The garbage pass on 16 moves nothing (landing), the check
        // on 17 finds nothing, spawn 18. (Before this fix: 34, every egg landing and bouncing 17.)
        let full = (0..<12).map { $0 % 2 == 0 ? "RBRBRB" : "YPYPYP" }
        var start = full
        start[0] = "RB..RB"
        var grid = sfeGrid(start, pair: EggPair(pivot: .red, child: .blue))
        grid.apply(.hardDrop)
        #expect(grid.ticksUntilSettled() == 16)
        #expect(grid.lastChain == ChainResult())
        #expect(grid.apply(.landGarbage(18)) == .garbageLanded(18))
        #expect(grid.ticksUntilSettled() == 2)
        #expect((0..<6).allSatisfy { grid.bounceTicksLeft(column: $0) == 0 })
        // `resolve` of the board as it is at the lock: nothing falls, so eggs checks on tick 1
        // where SFE checks on 3 (the 2-frame start): 4 here, 6 in SFE's runner.
        let locked = try! Board(notation: full.joined(separator: "\n"))
        #expect(resolve(board: locked, incoming: 18).ticks == 4)
        #expect(runnerFrames(locked, incoming: 18) == 6)
    }

    @Test("a batch that falls lands every tick and bounces 17: 6 eggs onto rows 3–14, spawn 2 + 22")
    func batchFalling() {
        // Six eggs placed in row 0 fall 2 rows in the garbage drop (a pass every frame): passes
        // 1–4 move them, the pass on 5 lands them (bounce until 21), check 22, spawn 23 after
        // the chain's end (tick 1 in eggs): 1 + 23 = 24; SFE 2 later (nothing falls at its lock).
        let locked = try! Board(notation: (0..<12).map { $0 % 2 == 0 ? "RBRBRB" : "YPYPYP" }.joined(separator: "\n"))
        #expect(resolve(board: locked, incoming: 6).ticks == 24)
        #expect(runnerFrames(locked, incoming: 6) == 26)
    }
}

/// The frame on which SFE's runner (``SfeRunnerModel``) spawns the next pair after a lock onto `board`.
func runnerFrames(_ board: Board, incoming: Int) -> Int? {
    var model = SfeRunnerModel(board: board, incoming: incoming)
    return model.runUntilSpawn()
}

/// eggs' `resolve` against the runner's model on each board: the boards that agree on ticks
/// (the 2-frame start aside: when nothing falls at the lock, the runner passes once, on frame
/// 2, before its first check on frame 3, where eggs checks on tick 1), the final board and each
/// step's popped count; the first few that do not, described; and how many of each chain length.
func runnerAgreement(_ boards: [(board: Board, incoming: Int)]) -> (agree: Int, disagreements: [String], chains: [Int: Int]) {
    var agree = 0
    var chains: [Int: Int] = [:]
    var disagreements: [String] = []
    for (index, (board, incoming)) in boards.enumerated() {
        let report = resolve(board: board, incoming: incoming)
        var model = SfeRunnerModel(board: board, incoming: incoming)
        let frames = model.runUntilSpawn()
        let start = model.firstPassDropped == false ? 2 : 0
        chains[report.chain.chain, default: 0] += 1
        if frames == report.ticks + start && model.board == report.board && model.chainSteps == report.chain.steps.map(\.popped) {
            agree += 1
        } else if disagreements.count < 5 {
            disagreements.append("board \(index) incoming \(incoming), chain \(report.chain.chain): eggs \(report.ticks) (+\(start)), runner \(frames.map(String.init) ?? "none")\n\(board.notation)")
        }
    }
    return (agree, disagreements, chains)
}

@Suite("sfe: chain timing against a model of SFE's runner on random boards")
struct SfeRunnerAgreementTests {
    /// A random board as it is at a lock: columns of random height with holes (so eggs float),
    /// 2–4 colours (fewer colours make longer chains) and some garbage.
    static func randomBoard(_ rng: inout Xoshiro256StarStar) -> Board {
        var board = Board()
        let colours = 2 + rng.nextInt(below: 3)
        for column in 0..<6 {
            for row in (3 + rng.nextInt(below: 12))..<15 where rng.nextInt(below: 6) != 0 {
                board[column: column, row: row] = rng.nextInt(below: 8) == 0
                    ? .garbage : .egg(EggColor(rawValue: UInt8(rng.nextInt(below: colours)))!)
            }
        }
        return board
    }

    @Test("eggs' ticks equal the runner's frames on 400 random boards (the 2-frame start aside)")
    func randomBoards() {
        var rng = Xoshiro256StarStar(seed: 0x5fe_7131)
        let total = 400
        let boards = (0..<total).map { index -> (board: Board, incoming: Int) in
            let board = Self.randomBoard(&rng)
            return (board, index % 2 == 0 ? 0 : 1 + rng.nextInt(below: 30))
        }
        let (agree, disagreements, chains) = runnerAgreement(boards)
        print("sfe runner agreement: \(agree)/\(total); chains \(chains.sorted { $0.key < $1.key })")
        #expect(agree == total, "\(disagreements.joined(separator: "\n"))")
    }

    /// Tall random boards of 3 colours: the first 30 whose zero-time chain is 5 or 6 steps, and
    /// every one of 7 steps or more, in 60 000 tries.
    @Test("long chains: eggs' ticks equal the runner's frames on boards of 5+ steps found by a seeded search")
    func longChains() {
        var rng = Xoshiro256StarStar(seed: 0x5fe_0010)
        var found: [(Board, Int)] = []
        var tried = 0
        var short = 0
        while tried < 60_000 {
            tried += 1
            var board = Board()
            for column in 0..<6 {
                for row in (3 + rng.nextInt(below: 5))..<15 where rng.nextInt(below: 10) != 0 {
                    board[column: column, row: row] = .egg(EggColor(rawValue: UInt8(rng.nextInt(below: 3)))!)
                }
            }
            var zero = board
            zero.settle()
            let chain = zero.resolveChain().chain
            guard chain >= 7 || (chain >= 5 && short < 30) else { continue }
            if chain < 7 { short += 1 }
            found.append((board, tried % 3 == 0 ? 1 + rng.nextInt(below: 30) : 0))
        }
        let (agree, disagreements, chains) = runnerAgreement(found.map { (board: $0.0, incoming: $0.1) })
        print("sfe runner agreement (long chains): \(agree)/\(found.count) of \(tried) boards tried; chains \(chains.sorted { $0.key < $1.key })")
        #expect(found.count >= 10)
        #expect(agree == found.count, "\(disagreements.joined(separator: "\n"))")
    }
}
