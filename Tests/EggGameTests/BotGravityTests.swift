import Testing
@testable import EggBot
@testable import EggGame

/// Whether a placement can be reached is judged by the grid's gravity at insane (the pair's moves
/// played out as it falls), and with a margin of a cell at the other levels.
@Suite("bots judge reachability by the grid's gravity")
struct BotGravityTests {
    /// `sfe`: the right spawn column (3) holds 10 eggs, three reds wait in column 5.
    private static let tallSpawnColumn: Board = {
        var board = stackedBoard([0, 0, 0, 10, 0, 0])
        for y in 0..<3 { board.setCode(column: 5, y: y, code: Cell.egg(.red).code) }
        return board
    }()

    /// Plays `grid`'s live pair as a bot at `pace` would: the moves of `plan` one every
    /// ``BotLevel/ticksPerMove`` ticks, each before the tick's gravity, then the tick; until the
    /// pair has locked and its chain has resolved.
    private static func play(_ plan: [Move], on grid: inout PlayerGrid, pace: BotLevel) {
        var pacer = BotPacer(level: pace)
        pacer.start(plan)
        var ticks = 0
        while grid.state == .live && ticks < 2_000 {
            if let move = pacer.tick() { grid.apply(.move(move)) }
            grid.apply(.ticks(1))
            ticks += 1
        }
        while grid.state == .resolving && ticks < 4_000 {
            grid.apply(.ticks(1))
            ticks += 1
        }
    }

    @Test("at speed 0 the pair falls nothing during insane's moves: placements a cell's fall would block are reachable; at speed 9, some are not; with gravity unknown, none is")
    func reachabilityFollowsGravity() {
        let board = Self.tallSpawnColumn
        let pair = EggPair(pivot: .red, child: .red)
        let spawned = LivePair(spawning: pair, rules: .sfe)
        var slowGrid = PlayerGrid(board: board, rules: .sfe, speed: 0)
        slowGrid.apply(.spawn(pair))
        var fastGrid = PlayerGrid(board: board, rules: .sfe, speed: 9)
        fastGrid.apply(.spawn(pair))
        let slow = PairGravity(grid: slowGrid, moveTicks: BotLevel.insane.ticksPerMove)
        let fast = PairGravity(grid: fastGrid, moveTicks: BotLevel.insane.ticksPerMove)
        #expect(slow.fallTicks == 38 && fast.fallTicks == 2)
        // The pair must turn beside the tall column: every vertical placement needs a turn. At
        // speed 0 insane makes all its moves before the first half cell of fall; at speed 9 the pair
        // falls half a cell every 2 ticks, a move's time, and reaches column 5 only flat.
        let vertical = Placement.all.filter { $0.orientation == .up || $0.orientation == .down }
        for placement in vertical {
            #expect(Bot.isReachable(placement, from: spawned, on: board, rules: .sfe, gravity: slow), "\(placement)")
            #expect(!Bot.isReachable(placement, from: spawned, on: board, rules: .sfe), "\(placement)")
            if placement.column == 5 {
                #expect(!Bot.isReachable(placement, from: spawned, on: board, rules: .sfe, gravity: fast), "\(placement)")
            }
        }
        // Flat placements need no turn and stay reachable at either speed.
        for placement in Placement.all where placement.orientation == .right {
            #expect(Bot.isReachable(placement, from: spawned, on: board, rules: .sfe, gravity: fast), "\(placement)")
        }

        // A bot player at speed 0 reads the gravity from its grid: insane plays an upright placement
        // (the reds onto column 5's three, as it stands), and the pair gets there.
        let preview = [EggPair(pivot: .blue, child: .yellow)]
        var player = BotPlayer(level: .insane, seed: 1)
        var grid = slowGrid
        var played = grid.livePair
        var ticks = 0
        while grid.state == .live && ticks < 2_000 {
            if let move = player.tick(grid: grid, preview: preview, context: BotContext()) { grid.apply(.move(move)) }
            if let live = grid.livePair { played = live }
            grid.apply(.ticks(1))
            ticks += 1
        }
        #expect(grid.state != .live)
        #expect(played.map { $0.orientation == .up || $0.orientation == .down } == true,
                "insane played \(String(describing: played))")

        // Hard allows for a cell's fall whatever the speed: with the gravity or without, the same.
        var hard = Bot(level: .hard, seed: 1), hardUnknown = Bot(level: .hard, seed: 1)
        let withGravity = hard.choosePlacement(board: board, current: pair, preview: preview,
                                               context: BotContext(gravity: slow), rules: .sfe)
        let without = hardUnknown.choosePlacement(board: board, current: pair, preview: preview, context: BotContext(), rules: .sfe)
        #expect(withGravity == without)
        #expect(withGravity.map { $0.orientation == .right || $0.orientation == .left } == true)
    }

    @Test("a placement counted reachable by the grid's gravity is where the pair locks: 400 boards, both rule sets, speeds 0–9, every level's pace, drop timers part run")
    func reachableIsWhereThePairLocks() {
        var random = Xoshiro256StarStar(seed: 0x67726176)
        var checked = 0, beyondMargin = 0
        for rules in RuleSet.all {
            let simulator = BotSimulator(rules: rules)
            for _ in 0..<200 {
                let heights = (0..<Board.columnsCount).map { _ in random.nextInt(below: 12) }
                let board = stackedBoard(heights)
                guard !board.isSpawnBlocked(rules: rules) else { continue }
                let pair = EggPair(pivot: EggColor(rawValue: UInt8(random.nextInt(below: 4)))!,
                                   child: EggColor(rawValue: UInt8(random.nextInt(below: 4)))!)
                let speed = random.nextInt(below: 10)
                let pace = BotLevel.allCases[random.nextInt(below: BotLevel.allCases.count)]
                var grid = PlayerGrid(board: board, rules: rules, speed: speed)
                grid.apply(.spawn(pair))
                // Part of the drop timer runs (the pair may fall half a cell), as between spawns.
                let early = random.nextInt(below: grid.dropIntervalTicks)
                if early > 0 { grid.apply(.ticks(early)) }
                guard grid.state == .live, let live = grid.livePair else { continue }
                let gravity = PairGravity(grid: grid, moveTicks: pace.ticksPerMove)
                for placement in Placement.distinct(for: pair)
                where Bot.isReachable(placement, from: live, on: board, rules: rules, gravity: gravity) {
                    let plan = Bot.moves(to: placement, from: live, on: board, rules: rules)!
                    var played = grid
                    Self.play(plan, on: &played, pace: pace)
                    let expected = simulator.place(pair, at: placement, on: board)
                    #expect(played.board == expected.board,
                            "\(rules.name) speed \(speed) \(pace) timer \(grid.dropTimer) \(placement)\n\(board.notation)")
                    checked += 1
                    if !Bot.isReachable(placement, from: live, on: board, rules: rules) { beyondMargin += 1 }
                }
            }
        }
        #expect(checked > 2_000, "\(checked) placements played")
        // Some of them the margin of a cell had refused.
        #expect(beyondMargin > 50, "\(beyondMargin) beyond the margin")
    }
}
