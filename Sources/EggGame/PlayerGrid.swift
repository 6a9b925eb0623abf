/// One input to a ``PlayerGrid``. An owner's ordered stream of these is all a mirror needs.
///
/// Inputs between two ``ticks(_:)`` belong to the tick that follows them: a tick's moves come
/// first, then the tick itself (drop timer, or one step of the resolution in time).
public enum PlayerInput: Sendable, Hashable {
    /// The next pair of the shared sequence (the one at index ``PlayerGrid/pairsSpawned``).
    case spawn(EggPair)
    /// A move of the live pair (``Move/down`` is one soft-drop step).
    case move(Move)
    /// Garbage accepted during the last pair, landed once its chain has ended.
    case landGarbage(Int)
    /// This many logic ticks (1...``PlayerGrid/ticksPerInputMax``) pass.
    case ticks(Int)
}

/// Where a ``PlayerGrid`` stands.
public enum PlayerState: UInt8, Sendable, Hashable {
    /// Nothing moves or is busy: garbage may land, then the next pair spawns.
    case awaitingSpawn = 0
    /// A pair is falling.
    case live = 1
    /// A pair could not spawn: the player is out. Every input is rejected.
    case toppedOut = 2
    /// Eggs are landing, popping or falling (a chain, or garbage, in time).
    case resolving = 3
}

/// Why an input was refused. A refused input changes nothing.
public enum InputRejection: Sendable, Hashable {
    case toppedOut
    case pairAlreadyLive
    case noLivePair
    case negativeGarbage
    /// Eggs are still landing, popping or falling.
    case stillResolving
    /// A tick count outside 1...``PlayerGrid/ticksPerInputMax``.
    case badTickCount
}

/// What applying one input did.
public enum InputOutcome: Sendable, Hashable {
    /// The pair spawned; `garbageSent` is the chain garbage of the previous pair.
    case spawned(garbageSent: Int)
    /// The spawn cells were occupied: the player is out. A spawn that tops out sends nothing.
    case toppedOut(garbageSent: Int)
    /// The live pair moved or turned.
    case moved
    /// The move was legal but refused: the pair did not move (a first turn in a one-column shaft
    /// under `tsu` only arms the quick turn).
    case blocked
    /// The pair locked (a soft-drop step on a resting pair, or a hard drop); its eggs now land.
    case locked
    /// Ticks passed; `locked` when the drop timer locked the pair, `chainEnded` when a pair's
    /// resolution ended during them (its chain, possibly empty).
    case ticked(locked: Bool, chainEnded: ChainResult?)
    /// This many garbage eggs were put on the grid to fall (the rest were discarded).
    case garbageLanded(Int)
    /// The input is not valid in the current state; nothing changed.
    case rejected(InputRejection)

    /// Whether the input was accepted (anything but ``rejected(_:)``).
    public var isAccepted: Bool {
        if case .rejected = self { return false }
        return true
    }
}

/// An egg that is not at rest: it falls half a cell at a time.
public struct LooseEgg: Sendable, Hashable {
    public var column: Int
    /// Position in half cells: the egg's top is in row `halfRow / 2`; odd means half offset.
    public var halfRow: Int
    public var cell: Cell
}

/// What one egg at rest is doing this tick (for drawing chains in time).
public enum EggActivity: Sendable, Hashable {
    case resting
    /// Landing, with the ticks it stays busy.
    case landing(ticksLeft: Int)
    /// Popping (or cleared garbage), with the ticks until it disappears.
    case popping(ticksLeft: Int)
}

/// One player's grid as a replicated, deterministic state machine (docs/rules.md, `sfe`): driven by explicit
/// inputs only, ticks included, never by a clock of its own.
///
/// The owner and every mirror apply the same ordered inputs and reach the same state at the same
/// tick, which ``stableHash`` summarises. A pair drops by the grid's own drop timer (one of the
/// inputs is the tick); a lock starts a resolution in time: landing, popping, falling eggs.
public struct PlayerGrid: Sendable, Hashable {
    /// Most ticks one ``PlayerInput/ticks(_:)`` may carry.
    public static let ticksPerInputMax = 3_600

    public let rules: RuleSet
    /// The drop speed 0...9 of this game.
    public let speed: Int
    /// The eggs at rest (resting, landing or popping); the live pair and loose eggs are not part of it.
    public private(set) var board: Board
    /// The falling pair, if any.
    public private(set) var livePair: LivePair?
    /// Eggs falling during a resolution, bottom first within a column.
    public private(set) var looseEggs: [LooseEgg] = []
    /// How many pairs have spawned (or failed to spawn): the index of the next pair to spawn.
    public private(set) var pairsSpawned: Int = 0
    /// Garbage of the last pair's chain, sent when the next pair spawns.
    public private(set) var garbagePending: Int = 0
    /// The chain of the last pair whose resolution ended.
    public private(set) var lastChain: ChainResult?
    /// Pairs whose resolution has ended (each one's chain, possibly empty, became ``lastChain``).
    public private(set) var chainsResolved = 0
    /// The steps of the chain resolving now (empty before the first pop).
    public private(set) var chainSteps: [ChainStep] = []
    /// Ticks of the live drop timer towards the next half-cell step (not reset at spawn).
    public private(set) var dropTimer = 0
    /// Ticks since the resolution began (a lock, or garbage put on the grid).
    public private(set) var resolutionTicks = 0
    /// Ticks applied in total.
    public private(set) var ticksPlayed = 0
    private var landingTicks = [UInt8](repeating: 0, count: Board.columnsCount * Board.rowsCount)
    /// Cells popping now (bit planes' layout) and the ticks until they disappear.
    private var popping: UInt128 = 0
    public private(set) var popTicksLeft = 0
    private var bounceTicks = [UInt8](repeating: 0, count: Board.columnsCount)
    /// Cells landing and columns bouncing now (the nonzero entries above).
    private var landingCount = 0
    private var bounceCount = 0
    private var isResolving = false
    /// Whether the resolution in progress follows a lock (its end is a pair's chain) rather than garbage.
    private var resolutionStartedByLock = false
    /// The resolution tick of the next fall pass, or 0 when no pass is due. As in SFE's runner,
    /// eggs fall in passes until a pass moves nothing; groups are looked for from the next tick
    /// on, once nothing is busy (landing, popping or bouncing).
    private var nextPassTick = 0
    /// Ticks between the fall passes of this resolution (an incoming batch falls every tick).
    private var passIntervalTicks = 2
    /// Fall passes of this resolution that moved eggs, and passes that moved nothing (the last
    /// pass of each fall): what a timeline of the resolution shows.
    public private(set) var fallPasses = 0
    public private(set) var stillPasses = 0
    /// A lock by an input: the tick it belongs to does not step the resolution.
    private var lockedBeforeTick = false
    private var isToppedOut = false
    /// Cells whose eggs join groups and are cleared (`tsu`: not the hidden row).
    private let poppingMask: UInt128

    // Score-based garbage (`tsu`); zero and unused under a per-step formula.
    /// The player's score this game: chain steps and soft drop.
    public private(set) var score = 0
    /// Points of the last chains not yet turned into garbage (carried to the next step).
    public private(set) var scoreRemainder = 0
    /// Whether an all clear adds the rule set's bonus to the next chain.
    public private(set) var allClearBonus = false
    /// Half cells the live pair fell by soft or hard drop (1 point a row at the lock).
    private var dropHalfRows = 0
    /// The seed of this game's garbage stream (the random columns of `tsu`'s nuisance).
    public let garbageSeed: UInt64
    /// Garbage landings so far: the index into the garbage stream.
    public private(set) var garbageDrops = 0

    /// A grid starting from `board` (settled first), waiting for its first spawn. `garbageSeed`
    /// seeds the shared garbage stream (every peer must use the same one for a game).
    public init(board: Board = Board(), rules: RuleSet = .sfe, speed: Int = 0, garbageSeed: UInt64 = 0) {
        precondition(rules.speeds.contains(speed), "speed out of the rule set's range")
        var settled = board
        settled.settle()
        self.board = settled
        self.rules = rules
        self.speed = speed
        self.garbageSeed = garbageSeed
        poppingMask = Board.rowsMask(from: rules.poppingTopRow)
        checkInvariants()
    }

    /// The rule set's scoring, when garbage comes from a score.
    private var scoring: RuleSet.Scoring? {
        if case .score(let scoring) = rules.garbageFormula { return scoring }
        return nil
    }

    /// A grid with `height` full rows of garbage (6·height eggs placed by the garbage placement)
    /// before the first spawn.
    public init(startingHeight height: Int, rules: RuleSet = .sfe, speed: Int = 0, garbageSeed: UInt64 = 0) {
        precondition(rules.startingHeights.contains(height), "starting height out of the rule set's range")
        var board = Board()
        board.landGarbage(rules.columns * height)
        self.init(board: board, rules: rules, speed: speed, garbageSeed: garbageSeed)
    }

    /// A grid at the moment a pair locked onto `board` as written: eggs resting on the floor or
    /// on resting eggs are at rest, every other egg falls in time; the lock's tick has begun.
    public init(lockedOnto board: Board, rules: RuleSet = .sfe, speed: Int = 0) {
        self.init(rules: rules, speed: speed)
        for column in 0..<Board.columnsCount {
            var supported = true
            for row in (0..<Board.rowsCount).reversed() {
                let cell = board[column: column, row: row]
                if cell == .empty {
                    supported = false
                } else if supported {
                    self.board[column: column, row: row] = cell
                } else {
                    insertLoose(LooseEgg(column: column, halfRow: 2 * row, cell: cell))
                }
            }
        }
        beginResolution(byLock: true)
        lockedBeforeTick = true
        checkInvariants()
    }

    /// Where the grid stands.
    public var state: PlayerState {
        if isToppedOut { return .toppedOut }
        if livePair != nil { return .live }
        return isResolving ? .resolving : .awaitingSpawn
    }

    /// The live drop interval, in ticks per half cell.
    public var dropIntervalTicks: Int { rules.timing.dropInterval(speed: speed) }

    /// Applies one input; invalid inputs are rejected, never trapped on.
    @discardableResult
    public mutating func apply(_ input: PlayerInput) -> InputOutcome {
        if isToppedOut { return .rejected(.toppedOut) }
        switch input {
        case .spawn(let pair): return spawn(pair)
        case .move(let move): return apply(move)
        case .landGarbage(let count): return landGarbage(count)
        case .ticks(let count):
            guard (1...PlayerGrid.ticksPerInputMax).contains(count) else { return .rejected(.badTickCount) }
            var locked = false
            var ended: ChainResult?
            var remaining = count
            while remaining > 0 {
                // Ticks that only count the drop timer, or find nothing to do, are skipped at once.
                if livePair != nil && !lockedBeforeTick {
                    let idle = min(remaining, dropIntervalTicks - dropTimer - 1)
                    if idle > 0 {
                        dropTimer += idle
                        ticksPlayed &+= idle
                        remaining -= idle
                        continue
                    }
                } else if !isResolving && !lockedBeforeTick {
                    ticksPlayed &+= remaining
                    break
                }
                let step = tick()
                remaining -= 1
                locked = locked || step.locked
                if let chain = step.chainEnded { ended = chain }
            }
            return .ticked(locked: locked, chainEnded: ended)
        }
    }

    private mutating func spawn(_ pair: EggPair) -> InputOutcome {
        guard livePair == nil else { return .rejected(.pairAlreadyLive) }
        guard !isResolving else { return .rejected(.stillResolving) }
        pairsSpawned += 1
        if board.isSpawnBlocked(rules: rules) {
            isToppedOut = true
            garbagePending = 0
            return .toppedOut(garbageSent: 0)
        }
        let sent = garbagePending
        garbagePending = 0
        livePair = LivePair(spawning: pair, rules: rules)
        dropHalfRows = 0
        return .spawned(garbageSent: sent)
    }

    private mutating func apply(_ move: Move) -> InputOutcome {
        guard let live = livePair else { return .rejected(.noLivePair) }
        switch move {
        case .left, .right, .rotateCW, .rotateCCW:
            guard let next = live.applying(move, on: board, rules: rules) else { return .blocked }
            livePair = next.pair
            return next.moved ? .moved : .blocked
        case .down:
            if dropStep(dropping: true) { lockedBeforeTick = true; return .locked }
            livePair?.quickTurnArmed = false
            return .moved
        case .hardDrop:
            for _ in 0..<(2 * Board.rowsCount) where !dropStep(dropping: true) {}
            lockedBeforeTick = true
            return .locked
        }
    }

    /// One half-cell step of the live pair: an egg resting on a non-falling egg (or the floor)
    /// locks the pair and nothing moves; otherwise the pair moves down half a cell.
    /// `dropping`: a soft or hard drop by the player (it scores under `tsu`).
    /// - Returns: whether the pair locked.
    private mutating func dropStep(dropping: Bool = false) -> Bool {
        guard let live = livePair else { return false }
        let resting = live.restingEggs(on: board)
        guard resting.isEmpty else {
            lock(live, resting: resting)
            return true
        }
        livePair = live.shifted(columns: 0, halfRows: 1)
        if dropping && scoring != nil { dropHalfRows += 1 }
        return false
    }

    private mutating func lock(_ live: LivePair, resting: [Int]) {
        for (index, egg) in live.eggs.enumerated() {
            if resting.contains(index) {
                let row = egg.halfRow / 2
                board[column: egg.column, row: row] = .egg(egg.color)
                startLanding(column: egg.column, row: row)
            } else {
                insertLoose(LooseEgg(column: egg.column, halfRow: egg.halfRow, cell: .egg(egg.color)))
            }
        }
        livePair = nil
        if scoring != nil {
            score &+= dropHalfRows / 2
            dropHalfRows = 0
        }
        beginResolution(byLock: true)
        chainSteps = []
    }

    /// Starts a resolution after the eggs to fall are in place. A lock's eggs fall in passes of
    /// ``RuleSet/Timing/fallPassTicks`` from the second tick on; when nothing falls at the lock,
    /// groups are looked for from its first tick (SFE's runner passes once first, 2 ticks later).
    /// An incoming batch falls in passes of ``RuleSet/Timing/garbageFallTicks`` from the first tick.
    private mutating func beginResolution(byLock: Bool) {
        isResolving = true
        resolutionTicks = 0
        resolutionStartedByLock = byLock
        fallPasses = 0
        stillPasses = 0
        if byLock {
            passIntervalTicks = rules.timing.fallPassTicks
            nextPassTick = looseEggs.isEmpty && board.isSettled ? 0 : passIntervalTicks
        } else {
            passIntervalTicks = rules.timing.garbageFallTicks
            nextPassTick = passIntervalTicks
        }
    }

    private mutating func insertLoose(_ egg: LooseEgg) {
        let index = looseEggs.firstIndex { ($0.column, -$0.halfRow) > (egg.column, -egg.halfRow) } ?? looseEggs.count
        looseEggs.insert(egg, at: index)
    }

    /// Puts `count` garbage eggs on the grid by the rule set's placement; they fall in time.
    private mutating func landGarbage(_ count: Int) -> InputOutcome {
        guard livePair == nil else { return .rejected(.pairAlreadyLive) }
        guard !isResolving else { return .rejected(.stillResolving) }
        guard count >= 0 else { return .rejected(.negativeGarbage) }
        let placed: [(column: Int, row: Int)]
        switch rules.placement {
        case .levels:
            placed = board.garbagePlacement(count)
        case .rowsThenRandomColumns(let dropMax):
            guard count > 0 else { return .garbageLanded(0) }
            let extra = garbageColumns(min(count, dropMax) % Board.columnsCount)
            garbageDrops += 1
            placed = board.garbagePlacement(count, extraColumns: extra, topRow: rules.topRow, dropMax: dropMax)
        }
        guard !placed.isEmpty else { return .garbageLanded(0) }
        // An egg placed on a column that is full beneath it rests where it is placed: it neither
        // falls nor lands, so it does not bounce its column. The others fall.
        var work = board
        for cell in placed { work[column: cell.column, row: cell.row] = .garbage }
        for cell in placed {
            if (cell.row + 1..<Board.rowsCount).allSatisfy({ work[column: cell.column, row: $0] != .empty }) {
                board[column: cell.column, row: cell.row] = .garbage
            } else {
                insertLoose(LooseEgg(column: cell.column, halfRow: 2 * cell.row, cell: .garbage))
            }
        }
        beginResolution(byLock: false)
        return .garbageLanded(placed.count)
    }

    /// `count` distinct columns (0...5) drawn from the garbage stream for the next landing: a
    /// partial Fisher–Yates shuffle driven by SplitMix64 output ``garbageDrops`` of the stream.
    func garbageColumns(_ count: Int) -> [Int] {
        var rng = SplitMix64(seed: SplitMix64.output(seed: garbageSeed ^ PlayerGrid.garbageStreamKey, index: UInt64(garbageDrops)))
        var columns = Array(0..<Board.columnsCount)
        for index in 0..<count {
            let pick = index + rng.nextInt(below: Board.columnsCount - index)
            columns.swapAt(index, pick)
        }
        return Array(columns.prefix(count))
    }

    /// Keeps the garbage stream apart from other streams drawn from the same seed.
    static let garbageStreamKey: UInt64 = 0x6761_7262_6167_6531 // "garbage1"

    // MARK: Ticks

    private mutating func tick() -> (locked: Bool, chainEnded: ChainResult?) {
        ticksPlayed &+= 1
        if lockedBeforeTick {
            lockedBeforeTick = false
            return (false, nil)
        }
        if livePair != nil {
            dropTimer += 1
            guard dropTimer >= dropIntervalTicks else { return (false, nil) }
            dropTimer = 0
            return (dropStep(), nil)
        }
        guard isResolving else { return (false, nil) }
        return (false, resolutionTick())
    }

    /// One tick of a resolution; returns the chain when the resolution ends on this tick.
    private mutating func resolutionTick() -> ChainResult? {
        resolutionTicks += 1
        if landingCount > 0 {
            for index in landingTicks.indices where landingTicks[index] > 0 {
                landingTicks[index] -= 1
                if landingTicks[index] == 0 { landingCount -= 1 }
            }
        }
        if bounceCount > 0 {
            for index in bounceTicks.indices where bounceTicks[index] > 0 {
                bounceTicks[index] -= 1
                if bounceTicks[index] == 0 { bounceCount -= 1 }
            }
        }
        if popTicksLeft > 0 {
            popTicksLeft -= 1
            if popTicksLeft == 0 {
                board.remove(popping)
                popping = 0
                // The fall starts on the next tick; its first pass comes on the one after.
                passIntervalTicks = rules.timing.fallPassTicks
                nextPassTick = resolutionTicks + rules.timing.fallStartTicks
            }
            return nil
        }
        if nextPassTick > 0 {
            guard resolutionTicks >= nextPassTick else { return nil }
            if movePass() {
                fallPasses += 1
                nextPassTick += passIntervalTicks
            } else {
                // Nothing moved: the fall is over; groups are looked for from the next tick.
                stillPasses += 1
                nextPassTick = 0
            }
            return nil
        }
        guard !isBusy else { return nil }
        if let popped = board.poppingCellsNow(mask: poppingMask) {
            var step = ChainStep(popped: popped.popped.nonzeroBitCount, garbageCleared: popped.cleared.nonzeroBitCount)
            if let scoring {
                let groups = board.groups(in: popped.popped)
                let points = scoring.score(stepIndex: chainSteps.count, groupSizes: groups.sizes, colors: groups.colors)
                step.score = points
                score &+= points
                let total = points + scoreRemainder
                let target = scoring.targetPoints(afterTicks: ticksPlayed)
                garbagePending += total / target
                scoreRemainder = total % target
                if allClearBonus {
                    garbagePending += scoring.allClearGarbage
                    allClearBonus = false
                }
            } else {
                garbagePending += rules.garbage(stepIndex: chainSteps.count, popped: step.popped)
            }
            chainSteps.append(step)
            popping = popped.popped | popped.cleared
            popTicksLeft = rules.timing.popTicks
            return nil
        }
        isResolving = false
        let wasPair = resolutionStartedByLock
        resolutionStartedByLock = false
        guard wasPair else { return nil }
        let chain = ChainResult(steps: chainSteps)
        if scoring != nil && chain.chain > 0 && board.eggsCount == 0 { allClearBonus = true }
        lastChain = chain
        chainsResolved += 1
        return chain
    }

    /// Whether anything lands, pops, bounces or falls.
    private var isBusy: Bool {
        popTicksLeft > 0 || !looseEggs.isEmpty || landingCount > 0 || bounceCount > 0 || !board.isSettled
    }

    /// One fall pass: moves loose eggs, and resting eggs that lost their support, one half cell,
    /// bottom first in each column; a loose egg that reaches a non-falling egg or the floor lands.
    /// Garbage falls with the other eggs (only an incoming batch's passes come every tick).
    /// - Returns: whether any egg moved (landing is not moving).
    private mutating func movePass() -> Bool {
        var moved = false
        var loose: [LooseEgg] = []
        for column in 0..<Board.columnsCount {
            var columnLoose = looseEggs.filter { $0.column == column }
            // A column without loose eggs whose eggs lie contiguous from the floor has nothing to
            // move: every egg rests on the one below (most columns on most resolution ticks).
            if columnLoose.isEmpty && Board.isLaneSettled(board, column: column) { continue }
            var looseIndex = 0
            // The top row covered by what lies below (rowsCount = the floor), and whether it is at rest.
            var belowTop = Board.rowsCount
            var belowAtRest = true
            var row = Board.rowsCount - 1
            var result: [LooseEgg] = []
            // Above this row the column held nothing when the pass began, and the pass writes only
            // where a loose egg lands, a row it has already passed.
            let columnTop = board.topOccupiedRow(column: column)
            while row >= 0 || looseIndex < columnLoose.count {
                // The next egg up: a loose one whose bottom is at or below `row`, or the board egg in `row`.
                if looseIndex < columnLoose.count, (columnLoose[looseIndex].halfRow + 1) / 2 >= row {
                    var egg = columnLoose[looseIndex]
                    looseIndex += 1
                    if egg.halfRow & 1 == 1 {
                        egg.halfRow += 1
                        moved = true
                    } else if egg.halfRow / 2 + 1 == belowTop && belowAtRest {
                        land(egg)
                        belowTop = egg.halfRow / 2
                        belowAtRest = true
                        row = min(row, belowTop - 1)
                        continue
                    } else if egg.halfRow / 2 + 1 < belowTop {
                        egg.halfRow += 1
                        moved = true
                    }
                    result.append(egg)
                    belowTop = egg.halfRow / 2
                    belowAtRest = false
                    row = min(row, belowTop - 1)
                    continue
                }
                guard row >= columnTop || looseIndex < columnLoose.count, row >= 0 else { break }
                let cell = board[column: column, row: row]
                if cell != .empty {
                    let busy = landingTicks[column * Board.rowsCount + row] > 0 || popping & Board.bit(column: column, y: Board.rowsCount - 1 - row) != 0
                    if busy || row + 1 == belowTop {
                        // At rest when busy, or when what carries it is at rest.
                        belowAtRest = busy || belowAtRest
                        belowTop = row
                    } else {
                        // Lost its support: it becomes loose and falls with this pass.
                        board[column: column, row: row] = .empty
                        columnLoose.insert(LooseEgg(column: column, halfRow: 2 * row, cell: cell), at: looseIndex)
                        continue
                    }
                }
                row -= 1
            }
            loose.append(contentsOf: result)
        }
        looseEggs = loose
        return moved
    }

    private mutating func land(_ egg: LooseEgg) {
        let row = egg.halfRow / 2
        board[column: egg.column, row: row] = egg.cell
        if egg.cell == .garbage {
            if bounceTicks[egg.column] == 0 { bounceCount += 1 }
            bounceTicks[egg.column] = UInt8(rules.timing.garbageBounceTicks)
        } else {
            startLanding(column: egg.column, row: row)
        }
    }

    private mutating func startLanding(column: Int, row: Int) {
        let index = column * Board.rowsCount + row
        if landingTicks[index] == 0 { landingCount += 1 }
        landingTicks[index] = UInt8(rules.timing.landingTicks)
    }

    // MARK: What a screen draws

    /// The cell to draw at `(column, row)`: the live pair and loose eggs (at their upper row when
    /// at half offset) over the board.
    public func displayCell(column: Int, row: Int) -> Cell {
        if let live = livePair {
            for egg in live.eggs where egg.column == column && egg.halfRow / 2 == row { return .egg(egg.color) }
        }
        for egg in looseEggs where egg.column == column && egg.halfRow / 2 == row { return egg.cell }
        return board[column: column, row: row]
    }

    /// What the egg at rest in `(column, row)` is doing (``EggActivity/resting`` for an empty cell).
    public func activity(column: Int, row: Int) -> EggActivity {
        if popping & Board.bit(column: column, y: Board.rowsCount - 1 - row) != 0 { return .popping(ticksLeft: popTicksLeft) }
        let landing = Int(landingTicks[column * Board.rowsCount + row])
        return landing > 0 ? .landing(ticksLeft: landing) : .resting
    }

    /// Eggs landing now, and columns bouncing now (for a resolution's timeline).
    var eggsLanding: Int { landingCount }
    var columnsBouncing: Int { bounceCount }

    /// Ticks left of the bounce of `column` (a garbage egg landed in it).
    public func bounceTicksLeft(column: Int) -> Int { Int(bounceTicks[column]) }

    /// The chain step resolving now: the steps popped so far in this resolution.
    public var chainStep: Int { chainSteps.count }

    /// A stable 64-bit FNV-1a hash of the whole state, timing included: cells, busy timers, loose
    /// eggs, live pair (half-cell position), drop timer, pairs spawned, pending garbage and state;
    /// under a scoring rule set also the score, remainder, all-clear bonus and ticks played, and
    /// under random garbage columns the garbage stream's seed and position.
    /// The same on every machine and process (unlike `Hasher`).
    public var stableHash: UInt64 {
        var hash = StableHasher()
        for row in 0..<Board.rowsCount {
            for column in 0..<Board.columnsCount {
                hash.combine(board.code(column: column, y: Board.rowsCount - 1 - row))
                hash.combine(landingTicks[column * Board.rowsCount + row])
            }
        }
        for ticks in bounceTicks { hash.combine(ticks) }
        hash.combine(UInt64(truncatingIfNeeded: popping))
        hash.combine(UInt64(truncatingIfNeeded: popping >> 64))
        hash.combine(UInt64(popTicksLeft))
        hash.combine(UInt64(looseEggs.count))
        for egg in looseEggs {
            hash.combine(UInt8(egg.column))
            hash.combine(UInt8(egg.halfRow))
            hash.combine(egg.cell.code)
        }
        if let live = livePair {
            hash.combine(UInt8(1))
            hash.combine(live.pair.pivot.rawValue)
            hash.combine(live.pair.child.rawValue)
            hash.combine(UInt8(live.boxColumn))
            hash.combine(UInt8(live.topHalfRow))
            hash.combine(live.orientation.rawValue | (live.quickTurnArmed ? 0x10 : 0))
        } else {
            hash.combine(UInt8(0))
        }
        hash.combine(UInt64(dropTimer))
        hash.combine(UInt64(resolutionTicks))
        hash.combine(UInt64(chainSteps.count))
        hash.combine(UInt8(lockedBeforeTick ? 1 : 0))
        hash.combine(UInt8(resolutionStartedByLock ? 1 : 0))
        if isResolving { hash.combine(UInt64(nextPassTick)) }
        hash.combine(UInt64(pairsSpawned))
        hash.combine(UInt64(garbagePending))
        hash.combine(state.rawValue)
        if scoring != nil {
            hash.combine(UInt64(truncatingIfNeeded: score))
            hash.combine(UInt64(scoreRemainder))
            hash.combine(UInt8(allClearBonus ? 1 : 0))
            hash.combine(UInt64(dropHalfRows))
            hash.combine(UInt64(truncatingIfNeeded: ticksPlayed))
        }
        if case .rowsThenRandomColumns = rules.placement {
            hash.combine(garbageSeed)
            hash.combine(UInt64(garbageDrops))
        }
        return hash.value
    }

    /// Panics when the grid breaks a rule that no sequence of inputs may break.
    public func checkInvariants() {
        board.checkInvariants()
        precondition(pairsSpawned >= 0, "negative pairs spawned")
        precondition(garbagePending >= 0, "negative pending garbage")
        precondition(looseEggs.count <= Board.columnsCount * Board.rowsCount, "too many loose eggs")
        if !isResolving {
            precondition(looseEggs.isEmpty && popping == 0, "eggs move outside a resolution")
        }
        if let live = livePair {
            precondition(!isToppedOut && !isResolving, "a live pair while out or resolving")
            precondition(live.fits(on: board, topRow: rules.pairTopRow), "live pair overlaps the board")
        }
    }
}

/// The owner-side soft-drop cadence: turns held soft drop into ``Move/down`` inputs, one every
/// `softDropTicks` ticks. (Gravity itself is the grid's own drop timer, driven by its ticks.)
///
/// Mirrors never run one; they only see the moves it produced.
public struct GravityClock: Sendable, Hashable {
    /// Logic ticks per second.
    public static let ticksPerSecond = 60
    /// Speeds a match may use.
    public static let speedsSupported = 0...9

    public let speed: Int
    public let rules: RuleSet
    private var ticksHeld = 0

    public init(speed: Int, rules: RuleSet = .sfe) {
        precondition(GravityClock.speedsSupported.contains(speed), "speed must be 0...9")
        self.speed = speed
        self.rules = rules
    }

    /// Ticks per half cell of the live drop timer at this speed.
    public var fallIntervalTicks: Int { rules.timing.dropInterval(speed: speed) }

    /// Restarts the soft-drop count; call when a pair spawns.
    public mutating func reset() {
        ticksHeld = 0
    }

    /// Advances one tick; returns true when the owner should apply and send a soft-drop ``Move/down``.
    public mutating func tick(softDrop: Bool) -> Bool {
        guard softDrop else {
            ticksHeld = 0
            return false
        }
        ticksHeld += 1
        guard ticksHeld >= rules.timing.softDropTicks else { return false }
        ticksHeld = 0
        return true
    }
}
