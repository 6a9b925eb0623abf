import EggGame

/// How strong and how quick a bot plays. Levels differ in skill (search depth, virtual drops,
/// noise, when they fire) and in pace (pairs per second, at most about 3: a fast human).
public enum BotLevel: String, CaseIterable, Sendable, Hashable {
    case easy, medium, hard, insane

    /// The most pairs a second the bot places (it holds its drop until ``ticksPerPair`` ticks have
    /// passed since the pair spawned; one more tick passes before the next pair spawns).
    public var pairsPerSecond: Double {
        Double(GravityClock.ticksPerSecond) / Double(ticksPerPair + 1)
    }

    /// The levels' paces, for `--help`.
    public static var paceHelp: String {
        "Pace: " + allCases.map { level in
            let tenths = Int((level.pairsPerSecond * 100).rounded())
            return "\(level.rawValue) \(tenths / 100).\(String(tenths % 100 + 100).dropFirst()) pairs/s"
        }.joined(separator: ", ") + " at the most."
    }

    /// Ticks from a spawn to the bot's hard drop, at the least.
    public var ticksPerPair: Int {
        switch self {
        case .easy: 79      // 0.75 pairs/s
        case .medium: 47    // 1.25 pairs/s
        case .hard: 29      // 2 pairs/s
        case .insane: 19    // 3 pairs/s
        }
    }

    /// Ticks between two of the bot's moves (also its thinking delay after a spawn). Moves are
    /// quick taps, as a human's, so the pair is in place before high gravity drops it far; the
    /// pace comes from holding the drop (``ticksPerPair``).
    public var ticksPerMove: Int {
        switch self {
        case .easy: 6
        case .medium: 4
        case .hard: 3
        case .insane: 2
        }
    }

    /// Pairs searched: 1, the current pair only; 2, also the next one; 3, also the one after (only
    /// when the game shows it).
    var searchDepth: Int {
        switch self {
        case .easy, .medium: 1
        case .hard: 2
        case .insane: 3
        }
    }

    /// Placements of the current pair searched further with the next pairs, best first alone.
    var firstPlyWidth: Int {
        switch self {
        case .easy, .medium: 1
        case .hard: 8
        case .insane: 22
        }
    }

    /// Placements of the first and of the second pair searched further when two pairs are shown
    /// (`tsu`): the third ply keeps the decision within a few milliseconds.
    static let widthWithTwoShown = 8

    /// The height of an opponent's spawn columns, once the garbage of a chain has landed on its
    /// board, from which the bot fires that chain whatever its length (nil: it does not read the
    /// opponents' boards). Insane's 7: against hard at insane's pace it won 90 of 100 `sfe` games
    /// and 93 `tsu` games (83 and 70 without), at hard's pace 75 and 77 (53 and 49); 9 to 11
    /// pressed too late (60–67 % at hard's pace), 5 too soon.
    var pressHeight: Int? {
        self == .insane ? 7 : nil
    }

    /// Whether the bot looks at its opponents' boards (``BotContext/opponents``): a driver may
    /// leave them out for the levels that do not.
    public var readsOpponents: Bool { pressHeight != nil }

    /// Whether the bot judges boards for the longest chain (``BotEvaluation/Building``) while nothing
    /// presses it: no garbage queued against it and no opponent holding a chain of
    /// ``pressingChain`` or more. Insane only. Under `sfe` (two spawn columns) it values the chain by
    /// its steps, keeps a U-shaped surface and counts pair-sized triggers on a full board; under
    /// `tsu` (one) those built no longer chains (9.67–9.95 on 100 solo games against 9.72): its
    /// spawn column's limits move from 9 to 10 and, with no opponent in view, it keeps a surface
    /// low at that column (``BotEvaluation/Building/oneSpawnSurface``). Alone, `sfe` insane's mean largest chain
    /// went from 8.86 to 9.87 (100 games; 9.62 on 300), `tsu`'s from 9.72 to 10.00 (9.64 to 9.93
    /// on 300). Against hard, `sfe` insane won 84 % (88 % before) and 72 % at hard's pace (75 %);
    /// `tsu` 86 % (87 %) and 74 % (73 %). Building while no opponent held a chain of 4 won (`sfe`)
    /// 79 % and 67 % (100 games); of 2, 89.5 % and 67 % (200).
    var buildsWhenUnpressed: Bool { self == .insane }

    /// Whether the bot plays its moves out by the grid's gravity when it judges a placement
    /// reachable (``BotContext/gravity``); the other levels allow for the pair falling a cell
    /// during their moves, whatever the speed. Insane only: on 100 games with every level judging
    /// so, hard's mean largest chain alone rose too (`sfe` 8.44 to 8.52, `tsu` 8.74 to 8.84) and
    /// insane at hard's pace beat it in 67 `sfe` games (75 with hard keeping the margin).
    var judgesGravity: Bool { self == .insane }

    /// An opponent's potential chain from which a bot that builds when unpressed plays for the
    /// quick answer instead (``buildsWhenUnpressed``).
    static let pressingChain = 3

    /// Lines kept after each pair by the beam that searches the shown pairs when two are shown
    /// (`tsu`; 0: none, the tree of ``widthWithTwoShown`` and ``thirdPlyWidth`` instead). The
    /// beam ranks all lines of the second pair by the full evaluation, potential chain included,
    /// where the tree kept each first placement's 8 best by shape and fire alone. Insane's 8 (on
    /// the 8 best first placements): on seeds 5000–5199, 200 solo `tsu` games, its mean largest
    /// chain by pair 50 went from 8.86 to 9.27, by pair 150 from 10.62 to 10.78, and its p99
    /// decision from 3.35 to 1.95 ms (8·22 + 8·22 boards judged instead of 8·8·6 leaves and the
    /// shapes of 8·22 + 8·8·22). The tree's result and the beam's, the best of each, 10.75 / 9.14
    /// at 4.44 ms (100 games); a beam of 6, 12 (on 12 first placements) or 16: 9.15–9.21 by pair
    /// 50; all 22 first placements: 8.81.
    var beamWidth: Int { self == .insane ? 8 : 0 }

    /// Placements of the third pair searched, best first by their immediate score.
    var thirdPlyWidth: Int { 6 }

    /// Eggs a virtual drop may use when judging the chain a board could fire.
    var virtualEggs: Int {
        switch self {
        case .easy: 1
        case .medium, .hard: 2
        case .insane: 3
        }
    }

    /// Random noise added to each placement's score, from the bot's own seed. Medium's 150 (400
    /// before) lets it beat easy in 86 of 100 `sfe` games (77 with 400) and still lose to hard.
    var noiseMax: Int {
        switch self {
        case .easy: 2_500
        case .medium: 150
        case .hard: 120
        case .insane: 30
        }
    }

    /// The chain the bot waits for before it fires on its own accord. Hard's 7 (8 before): on 200
    /// games (seeds 5000–5199) it beat medium in 84 % of `sfe` games and 91 % of `tsu` games (80 and
    /// 88 % with 8) while insane still beat it in 88 and 87 % (87 and 86.5 %). Hard waiting for 6,
    /// or pressing its opponent as insane does (spawn columns at 9 or 10), beat medium in 89–93 %
    /// of `sfe` games, but insane beat it in only 83–83.5 % of them.
    var fireChain: Int {
        switch self {
        case .easy: 2
        case .medium: 5
        case .hard: 7
        case .insane: 12
        }
    }

    /// Eggs on its board from which the bot fires whatever it has.
    var crowdedEggs: Int {
        switch self {
        case .easy: 36
        case .medium: 46
        case .hard: 52
        case .insane: 62
        }
    }

    /// The weights the bot judges boards by. Easy minds its spawn columns later (from 10 eggs, and
    /// fires whatever it has only from there): the others keep them lower, which is what keeps
    /// them alive through 150 pairs alone and wins against the level below.
    var evaluationWeights: BotEvaluation.Weights {
        var weights = BotEvaluation.Weights()
        if self == .easy {
            weights.dangerFrom = 10
            weights.spawnFire = 10
        }
        return weights
    }

    /// Garbage queued against the bot from which it fires a chain of half ``fireChain``.
    var threatGarbage: Int {
        switch self {
        case .easy: 100
        case .medium: 12
        case .hard, .insane: 6
        }
    }

    /// Under queued garbage, the spawn columns' height below ``BotEvaluation/Weights/spawnFire``
    /// (once that garbage has landed) from which the bot fires whatever it holds (nil: never for
    /// this; easy).
    var buriedMargin: Int? {
        switch self {
        case .easy: nil
        case .medium, .hard, .insane: 3
        }
    }

    /// Score per garbage egg sent by a chain it means to fire.
    var garbageWeight: Int {
        switch self {
        case .easy, .medium: 30
        case .hard, .insane: 20
        }
    }
}

/// What a bot knows beyond its own board and pairs.
public struct BotContext: Sendable, Hashable {
    /// Garbage queued against the bot, landing after its next lock.
    public var incomingGarbage: Int
    /// The boards of the opponents still playing, as the bot sees them (empty: none, or unknown).
    public var opponents: [Board]
    /// How far gravity takes the pair while the bot moves it (``BotPlayer`` sets it from the grid
    /// and its pace). Nil, unknown: the bot allows for a fall of a cell during its moves.
    public var gravity: PairGravity?

    public init(incomingGarbage: Int = 0, opponents: [Board] = [], gravity: PairGravity? = nil) {
        self.incomingGarbage = incomingGarbage
        self.opponents = opponents
        self.gravity = gravity
    }
}

/// The live pair's fall against the bot's moves: what decides whether a placement past a tall
/// column can be reached before gravity lowers the pair beside it.
public struct PairGravity: Sendable, Hashable {
    /// Ticks per half cell of the pair's fall (``PlayerGrid/dropIntervalTicks``), at least 1.
    public var fallTicks: Int
    /// Ticks the grid's drop timer has already counted towards the next half cell
    /// (``PlayerGrid/dropTimer``; it runs on from the last pair).
    public var timerTicks: Int
    /// Ticks between two of the bot's moves, the first one that long after it decides
    /// (``BotLevel/ticksPerMove`` of its pace).
    public var moveTicks: Int

    /// Ticks the drop timer counts while one of the bot's pairs is live, from the decision to the
    /// lock (``BotLevel/ticksPerPair`` − 1 of its pace: the timer runs on into the next pair, so
    /// the next pair's gravity is known a pair ahead); 0, unknown.
    public var pairTicks: Int

    public init(fallTicks: Int, timerTicks: Int, moveTicks: Int, pairTicks: Int = 0) {
        self.fallTicks = max(1, fallTicks)
        self.timerTicks = max(0, timerTicks)
        self.moveTicks = max(0, moveTicks)
        self.pairTicks = max(0, pairTicks)
    }

    /// The gravity of `grid`'s live pair for a bot moving every `moveTicks` ticks and locking
    /// `pairTicks` ticks after it decides (0: unknown).
    public init(grid: PlayerGrid, moveTicks: Int, pairTicks: Int = 0) {
        self.init(fallTicks: grid.dropIntervalTicks, timerTicks: grid.dropTimer, moveTicks: moveTicks, pairTicks: pairTicks)
    }

    /// The gravity of the next pair: the drop timer run on by ``pairTicks`` (nil when those are
    /// unknown). Off when the pair locks sooner (it came to rest and gravity locked it).
    var next: PairGravity? {
        guard pairTicks > 0 else { return nil }
        var next = self
        next.timerTicks = (timerTicks &+ pairTicks) % fallTicks
        return next
    }

    /// Half cells the pair has fallen by the bot's `move`-th move (from 1). The bot decides in a
    /// tick before that tick's gravity (as ``LocalMatch`` and `eggs-tui bot` run it) and makes its
    /// `move`-th move `move` × ``moveTicks`` ticks later, again before the gravity: the drop timer
    /// has counted one tick fewer.
    func halfRowsFallen(byMove move: Int) -> Int {
        max(0, timerTicks &+ move &* moveTicks &- 1) / fallTicks
    }
}

/// Where a pair ends: its pivot's column and the child's side. Locking depends on nothing else.
public struct Placement: Sendable, Hashable {
    public var column: Int
    public var orientation: Orientation

    public init(column: Int, orientation: Orientation) {
        self.column = column
        self.orientation = orientation
    }

    /// The 22 distinct placements: 6 columns × up/down, 5 × right, 5 × left.
    public static let all: [Placement] = Orientation.allCases.flatMap { orientation in
        (0..<Board.columnsCount).compactMap { column in
            let child = column + orientation.columnOffset
            return (0..<Board.columnsCount).contains(child) ? Placement(column: column, orientation: orientation) : nil
        }
    }

    /// A bit index for the placement, 0–23 (column and orientation).
    var cell: Int { column &* 4 &+ Int(orientation.rawValue) }

    /// Placements that differ for `pair` (a same-colour pair has only 11).
    static func distinct(for pair: EggPair) -> [Placement] {
        pair.pivot != pair.child ? all : all.filter { $0.orientation == .up || $0.orientation == .right }
    }
}

/// The search and scoring of a bot: picks a placement for the current pair and plans its moves.
///
/// It searches the current pair and the pairs a human sees next (never deeper into the shared
/// sequence), judges each settled board by the chain it could still fire (``BotEvaluation``) and
/// fires a chain when it is long enough, when garbage threatens, when its board is crowded or
/// (insane) when the chain's garbage would bury an opponent's spawn columns. It keeps to the
/// placements it can reach as gravity lowers the pair, unless all of those top out.
/// All simulation goes through ``BotSimulator``. Deterministic for a given seed; the work per
/// decision is bounded (one pair shown: at most 22 + 22·22 placements played out and judged; two
/// shown: 22 + 8·22 + 8·8·22 played out, 8·8·6 of them judged at the leaves; the first 22 twice
/// when every placement reachable with a margin tops out).
public struct Bot: Sendable {
    public let level: BotLevel
    /// Placements simulated so far (dropped, chain resolved, scored).
    public private(set) var placementsEvaluated = 0
    /// Decisions taken so far.
    public private(set) var decisions = 0
    /// Lines the beam keeps when two pairs are shown (``BotLevel/beamWidth``; tests set 0 to
    /// search by the tree instead).
    var beamWidth: Int
    private var random: Xoshiro256StarStar
    private var evaluation: BotEvaluation
    /// The placements (bits by ``Placement/cell``) a pair reaches under a gravity, by the board's
    /// column heights and that gravity (``reachMask(on:gravity:)``): the search's later pairs meet
    /// the same tops again and again. Emptied when it grows past ``reachCacheMax``.
    private var reachCache: [UInt64: UInt32] = [:]
    static let reachCacheMax = 50_000
    /// The rules placements are played out by: the grid's rule set, set at every decision.
    private var simulator: BotSimulator { evaluation.simulator }
    static let deadScore = Int.min / 4

    /// The score of a line of play that tops out at the `depth`-th pair searched (0: the current
    /// one) after firing a chain of `chain`: below every living line, and the later and the more
    /// it fires, the higher. When every option dies within the search, the bot plays the one
    /// that dies latest and fires the most (a chain is not left unfired at death).
    static func dyingScore(depth: Int, chain: Int) -> Int {
        deadScore &+ depth &* 1_000_000 &+ min(chain, 99) &* 1_000
    }

    /// Whether `score` is a line that tops out within the search.
    static func isDying(_ score: Int) -> Bool { score < deadScore / 2 }
    /// Whether the last decision judged boards for the longest chain (``BotLevel/buildsWhenUnpressed``).
    var isBuilding: Bool { evaluation.building }
    /// Whether the last decision had no opponent in view (``BotEvaluation/alone``).
    var isAlone: Bool { evaluation.alone }

    public init(level: BotLevel, seed: UInt64 = 0) {
        self.level = level
        random = Xoshiro256StarStar(seed: seed)
        beamWidth = level.beamWidth
        evaluation = BotEvaluation(eggsMax: level.virtualEggs, weights: level.evaluationWeights)
    }

    /// The best reachable placement of `current` on `board` (nil when none is reachable).
    public mutating func choosePlacement(board: Board, current: EggPair, next: EggPair?) -> Placement? {
        choosePlacement(board: board, current: current, preview: next.map { [$0] } ?? [], context: BotContext())
    }

    /// The best reachable placement of `current` on `board` (nil when none is reachable), looking
    /// at up to ``BotLevel/searchDepth`` − 1 pairs of `preview` (the pairs a player is shown).
    public mutating func choosePlacement(board: Board, current: EggPair, preview: [EggPair], context: BotContext,
                                         rules: RuleSet = .sfe) -> Placement? {
        decisions &+= 1
        if evaluation.simulator.rules != rules { evaluation.simulator = BotSimulator(rules: rules) }
        // The opponents' chains are judged as quick play judges them (not by building's pair-sized
        // trigger), so building is off while they are read.
        evaluation.building = false
        evaluation.building = level.buildsWhenUnpressed && context.incomingGarbage == 0
            && context.opponents.allSatisfy { evaluation.potential($0).chain < BotLevel.pressingChain }
        evaluation.alone = context.opponents.isEmpty
        let spawned = LivePair(spawning: current, rules: rules)
        let pairs = [current] + preview.prefix(max(0, level.searchDepth - 1))
        var candidates = firstPly(board: board, current: current, spawned: spawned, context: context, safeOnly: true)
        // When every placement reachable with a margin tops out (or none is), the bot tries those it
        // can reach from the spawn position as it is: its moves may well beat gravity. Before, it
        // topped out beside columns a lowered pair could not pass.
        if candidates.allSatisfy(\.outcome.toppedOut) {
            candidates = firstPly(board: board, current: current, spawned: spawned, context: context, safeOnly: false)
        }
        if pairs.count > 1 {
            candidates.sort { $0.score > $1.score }
            // With two pairs shown (tsu) the search is a ply deeper: fewer first placements go on.
            let width = pairs.count > 2 ? min(level.firstPlyWidth, BotLevel.widthWithTwoShown) : level.firstPlyWidth
            candidates.removeLast(max(0, candidates.count - width))
            // Two pairs shown: insane searches them by a beam (``beam(roots:board:pairs:context:)``);
            // when no line of the beam lives to the last pair, by the tree below, which ranks the
            // lines that top out by how late they do.
            let beamed = pairs.count > 2 && beamWidth > 0
                ? beam(roots: candidates.map(\.outcome), board: board, pairs: pairs, context: context) : nil
            for index in candidates.indices {
                let deep = beamed?[index]
                    ?? value(of: candidates[index].outcome, before: board, pairs: pairs, depth: 0, context: context)
                candidates[index].score = deep &+ random.nextInt(below: level.noiseMax)
            }
        }
        return candidates.max { $0.score < $1.score }?.placement
    }

    /// Every distinct placement of `current` that the pair can reach, played out and judged alone
    /// (with the bot's noise). `safeOnly`: reachable as gravity lowers the pair
    /// (``isReachable(_:from:on:rules:gravity:)``);
    /// otherwise reachable from the spawn position as it is.
    private mutating func firstPly(board: Board, current: EggPair, spawned: LivePair, context: BotContext, safeOnly: Bool)
        -> [(placement: Placement, outcome: BotSimulator.Outcome, score: Int)] {
        let rules = simulator.rules
        var candidates: [(placement: Placement, outcome: BotSimulator.Outcome, score: Int)] = []
        for placement in Placement.distinct(for: current) {
            let reachable = safeOnly
                ? Bot.isReachable(placement, from: spawned, on: board, rules: rules,
                                  gravity: level.judgesGravity ? context.gravity : nil)
                : Bot.moves(to: placement, from: spawned, on: board, rules: rules) != nil
            guard reachable else { continue }
            let outcome = simulator.place(current, at: placement, on: board)
            // Every placement is judged alone first; the look-ahead then searches the best few.
            let alone = value(of: outcome, before: board, pairs: [current], depth: 0, context: context)
            candidates.append((placement, outcome, alone &+ random.nextInt(below: level.noiseMax)))
        }
        return candidates
    }

    /// The moves that bring the live pair of `grid` to the bot's chosen placement, ending in a hard
    /// drop; just a hard drop when no placement is reachable or no pair is live.
    public mutating func plan(grid: PlayerGrid, next: EggPair?) -> [Move] {
        plan(grid: grid, preview: next.map { [$0] } ?? [], context: BotContext())
    }

    /// As ``plan(grid:next:)``, seeing `preview` and `context` (without its gravity, the grid's
    /// at this level's pace).
    public mutating func plan(grid: PlayerGrid, preview: [EggPair], context: BotContext) -> [Move] {
        var context = context
        if context.gravity == nil {
            context.gravity = PairGravity(grid: grid, moveTicks: level.ticksPerMove, pairTicks: level.ticksPerPair - 1)
        }
        guard let live = grid.livePair,
              let target = choosePlacement(board: grid.board, current: live.pair, preview: preview, context: context, rules: grid.rules),
              let moves = Bot.moves(to: target, from: live, on: grid.board, rules: grid.rules)
        else { return [.hardDrop] }
        return moves
    }

    /// Whether the moves to `target` work from `live` once gravity has lowered the pair as they go
    /// (they take several ticks; a pair squeezing past a tall column at the spawn row would
    /// otherwise stop beside it and drop there).
    ///
    /// With `gravity` known the moves are played as the grid will play them, each after the half
    /// cells the pair has fallen by then. Unknown, they must work from `live` and from half a cell
    /// and a cell lower. That margin held at every speed, but at speed 0 (38 ticks a half cell)
    /// the pair falls at most half a cell during insane's moves, and the margin refused placements
    /// past tall columns that it reaches: played out, insane's mean largest chain alone went from
    /// 9.87 to 10.06 on 100 `sfe` games (9.62 to 9.94 on 300) and from 10.00 to 10.78 under `tsu`
    /// (9.93 to 10.66 on 300).
    static func isReachable(_ target: Placement, from live: LivePair, on board: Board, rules: RuleSet,
                            gravity: PairGravity? = nil) -> Bool {
        guard let plan = moves(to: target, from: live, on: board, rules: rules) else { return false }
        if let gravity { return reaches(target, from: live, by: plan, on: board, rules: rules, gravity: gravity) }
        for halfRows in 1...2 {
            let lower = live.shifted(columns: 0, halfRows: halfRows)
            guard lower.fits(on: board, topRow: rules.pairTopRow) else { break }
            if moves(to: target, from: lower, on: board, rules: rules) == nil { return false }
        }
        return true
    }

    /// Whether `moves` still take `live` to `target` with the pair falling by `gravity` as they are
    /// made: a fall it cannot make (it rests) locks it where it is.
    private static func reaches(_ target: Placement, from live: LivePair, by moves: [Move], on board: Board,
                                rules: RuleSet, gravity: PairGravity) -> Bool {
        var pair = live
        var fallen = 0
        func isAtTarget() -> Bool { pair.column == target.column && pair.orientation == target.orientation }
        for (index, move) in moves.enumerated() where move != .hardDrop {
            while fallen < gravity.halfRowsFallen(byMove: index + 1) {
                let lower = pair.shifted(columns: 0, halfRows: 1)
                guard lower.fits(on: board, topRow: rules.pairTopRow) else { return isAtTarget() }
                pair = lower
                fallen += 1
            }
            guard let next = pair.applying(move, on: board, rules: rules) else { return false }
            pair = next.pair
        }
        return isAtTarget()
    }

    /// Rotations and shifts, then a hard drop, taking `live` to `target`, or nil if blocked.
    ///
    /// Rotations come first, unless the pair would come to rest on its way that way and shifting
    /// first (or another turn) avoids it: a resting pair locks at the next gravity step, which
    /// may come before its last move (a pair rotated down over a tall spawn column locked there).
    /// `rules` has no default: the engine's placements under `tsu` were once planned by `sfe`'s.
    public static func moves(to target: Placement, from live: LivePair, on board: Board, rules: RuleSet) -> [Move]? {
        let turnPlans: [[Move]] = [[], [.rotateCW], [.rotateCCW], [.rotateCW, .rotateCW], [.rotateCCW, .rotateCCW]]
        var fewestRests: (moves: [Move], rests: Int)?
        for turns in turnPlans {
            for shiftFirst in turns.isEmpty ? [false] : [false, true] {
                guard let plan = path(to: target, from: live, turns: turns, shiftFirst: shiftFirst, on: board, rules: rules)
                else { continue }
                if plan.rests == 0 { return plan.moves + [.hardDrop] }
                if fewestRests == nil || plan.rests < fewestRests!.rests { fewestRests = plan }
            }
        }
        return fewestRests.map { $0.moves + [.hardDrop] }
    }

    /// The turns and the shifts to `target`'s column (in that order, or shifts first), and how many
    /// of the positions the pair passes before the last move it rests in; nil if blocked or if it
    /// does not end in `target`'s orientation.
    private static func path(to target: Placement, from live: LivePair, turns: [Move], shiftFirst: Bool,
                             on board: Board, rules: RuleSet) -> (moves: [Move], rests: Int)? {
        var pair = live
        var moves: [Move] = []
        var rests = 0
        func step(_ move: Move) -> Bool {
            if !moves.isEmpty && pair.isResting(on: board) { rests += 1 }
            guard let next = pair.applying(move, on: board, rules: rules) else { return false }
            pair = next.pair
            moves.append(move)
            return true
        }
        func turn() -> Bool { turns.allSatisfy { step($0) } }
        func shift() -> Bool {
            while pair.column != target.column {
                guard step(target.column > pair.column ? .right : .left) else { return false }
            }
            return true
        }
        guard shiftFirst ? shift() && turn() && pair.column == target.column : turn() && shift() else { return nil }
        guard pair.orientation == target.orientation else { return nil }
        return (moves, rests)
    }

    /// Simulates every distinct placement of `pair` on `board` through its full chain and scores
    /// it (no reachability check, no look-ahead). Returns how many were evaluated; for benchmarks.
    public mutating func evaluateAllPlacements(board: Board, pair: EggPair) -> Int {
        var count = 0, checksum = 0
        for placement in Placement.distinct(for: pair) {
            checksum &+= scorePlacement(board: board, pair: pair, placement: placement)
            count += 1
        }
        precondition(checksum != Int.min, "scores are summed so the work is not optimised away")
        return count
    }

    /// Drops `pair` at `placement` on `board`, resolves the full chain and scores the result at
    /// this bot's level, without look-ahead or reachability checks. The unit the benchmark counts.
    public mutating func scorePlacement(board: Board, pair: EggPair, placement: Placement) -> Int {
        let outcome = simulator.place(pair, at: placement, on: board)
        return value(of: outcome, before: board, pairs: [pair], depth: 0, context: BotContext())
    }

    /// The value of a played-out placement of `pairs[depth]`: what its chain is worth now, plus
    /// the best the following pairs can do (or, for the last pair, the settled board's score).
    private mutating func value(of outcome: BotSimulator.Outcome, before: Board, pairs: [EggPair], depth: Int, context: BotContext) -> Int {
        placementsEvaluated &+= 1
        if outcome.toppedOut { return Bot.dyingScore(depth: depth, chain: outcome.chain) }
        // A spawn column a row below the spawn row: the next pair may lock at spawn before a move.
        if simulator.isPerilous(outcome.board) { return Bot.dyingScore(depth: depth + 1, chain: outcome.chain) }
        var immediate = outcome.chain > 0 ? fireScore(outcome, before: before, context: context) : 0
        if depth > 0 { immediate = immediate / 10 &* evaluation.weights.discount }
        var board = outcome.board
        // Garbage queued now lands after this lock (its own chain sent first; where the rules
        // offset, the chain's garbage cancels as much of it).
        if depth == 0 && context.incomingGarbage > 0 {
            let landing = simulator.rules.offsetting ? max(0, context.incomingGarbage &- outcome.garbage) : context.incomingGarbage
            simulator.landGarbage(landing, on: &board)
            if board.isSpawnBlocked(rules: simulator.rules) || simulator.isPerilous(board) {
                return Bot.dyingScore(depth: depth + 1, chain: outcome.chain)
            }
        }
        guard depth + 1 < pairs.count else { return immediate &+ evaluation.score(board) }
        let pair = pairs[depth + 1]
        let simulator = self.simulator
        // Insane judges the next pairs' reach as it judges the current one's: by the gravity they
        // will meet (the drop timer runs on from pair to pair), or with gravity unknown, only
        // within ``BotSimulator/reachableColumns(_:)``. Judged by the spawn row alone, it laid a
        // pair that left its 10-chain's trigger past a column a row below the spawn row, counting
        // on the pair after to pass that column; gravity had lowered that pair beside it first,
        // and it topped out holding the chain (`tsu`, seed 1141; `BotTriggerWallTests`).
        let gravity = level.judgesGravity ? context.gravity?.next : nil
        let reachable: [Placement]
        if let gravity {
            let mask = reachMask(on: board, gravity: gravity)
            reachable = simulator.placements(for: pair, on: board).filter { mask & (1 << $0.cell) != 0 }
        } else {
            reachable = simulator.placements(for: pair, on: board, withinReach: level.judgesGravity)
        }
        var children = reachable.map { simulator.place(pair, at: $0, on: board) }
        // No placement of the next pair is reachable: this one dies a pair later than those that
        // top out now.
        guard !children.isEmpty else { return Bot.dyingScore(depth: depth + 1, chain: outcome.chain) }
        // Garbage queued now has landed; the opponents' boards stay as the bot saw them.
        let inner = BotContext(opponents: context.opponents, gravity: gravity)
        // The third pair, and the second when a third follows: only the most promising placements,
        // by their shape and what firing their chain is worth (a chain that only wastes eggs
        // ranks low).
        let width = depth + 1 >= 2 ? level.thirdPlyWidth : depth + 2 < pairs.count ? BotLevel.widthWithTwoShown : children.count
        if children.count > width {
            // Each child's key computed once (the comparator computed two shapes a comparison).
            var keyed = children.map { (key: pruneKey($0, before: board, context: inner), child: $0) }
            keyed.sort { $0.key > $1.key }
            children = keyed.prefix(width).map(\.child)
        }
        var best = Int.min / 2
        for child in children {
            best = max(best, value(of: child, before: board, pairs: pairs, depth: depth + 1, context: inner))
        }
        return immediate &+ best
    }

    /// A line of play the beam keeps: the first placement it comes from, the board it left, what
    /// its chains were worth on the way and the gravity the next pair meets.
    private struct BeamNode {
        var root: Int
        var board: Board
        var worth: Int
        var gravity: PairGravity?
    }

    /// A beam over the shown pairs: after each pair the ``beamWidth`` best lines of all, judged by
    /// the full evaluation (their potential chain, not only their shape), expanded with every
    /// reachable placement of the next pair. The best line's value for each of `roots` (the first
    /// pair's outcomes), ``deadScore`` / 8 for a living root no kept line came from; nil when no
    /// line lives to the last pair.
    private mutating func beam(roots: [BotSimulator.Outcome], board: Board, pairs: [EggPair], context: BotContext) -> [Int]? {
        let simulator = self.simulator
        var nodes: [BeamNode] = []
        for (index, outcome) in roots.enumerated() {
            if outcome.toppedOut || simulator.isPerilous(outcome.board) { continue }
            var after = outcome.board
            if context.incomingGarbage > 0 {
                let landing = simulator.rules.offsetting ? max(0, context.incomingGarbage &- outcome.garbage) : context.incomingGarbage
                simulator.landGarbage(landing, on: &after)
                if after.isSpawnBlocked(rules: simulator.rules) || simulator.isPerilous(after) { continue }
            }
            let worth = outcome.chain > 0 ? fireScore(outcome, before: board, context: context) : 0
            nodes.append(BeamNode(root: index, board: after, worth: worth,
                                  gravity: level.judgesGravity ? context.gravity?.next : nil))
        }
        var best = [Int](repeating: Int.min, count: roots.count)
        for depth in 1..<pairs.count {
            let pair = pairs[depth]
            let last = depth + 1 == pairs.count
            var next: [(key: Int, node: BeamNode)] = []
            for node in nodes {
                let reachable: [Placement]
                if let gravity = node.gravity {
                    let mask = reachMask(on: node.board, gravity: gravity)
                    reachable = simulator.placements(for: pair, on: node.board).filter { mask & (1 << $0.cell) != 0 }
                } else {
                    reachable = simulator.placements(for: pair, on: node.board, withinReach: level.judgesGravity)
                }
                let inner = BotContext(opponents: context.opponents, gravity: node.gravity)
                for child in reachable.map({ simulator.place(pair, at: $0, on: node.board) }) {
                    placementsEvaluated &+= 1
                    if child.toppedOut || simulator.isPerilous(child.board) { continue }
                    let fire = child.chain > 0 ? fireScore(child, before: node.board, context: inner) : 0
                    let worth = node.worth &+ fire / 10 &* evaluation.weights.discount
                    let key = worth &+ evaluation.score(child.board)
                    if last {
                        best[node.root] = max(best[node.root], key)
                    } else {
                        next.append((key, BeamNode(root: node.root, board: child.board, worth: worth,
                                                   gravity: level.judgesGravity ? node.gravity?.next : nil)))
                    }
                }
            }
            if last { break }
            next.sort { $0.key > $1.key }
            nodes = next.prefix(beamWidth).map(\.node)
            if nodes.isEmpty { return nil }
        }
        guard best.contains(where: { $0 != Int.min }) else { return nil }
        return best.map { $0 == Int.min ? Bot.deadScore / 8 : $0 }
    }

    /// The placements a pair spawned on `board` reaches under `gravity`, as bits by
    /// ``Placement/cell`` (a pair's colours do not matter, only the board's column heights).
    private mutating func reachMask(on board: Board, gravity: PairGravity) -> UInt32 {
        var key = UInt64(gravity.timerTicks & 0xFF) | UInt64(gravity.fallTicks & 0xFF) << 8 | UInt64(gravity.moveTicks & 0xFF) << 16
            | UInt64(simulator.rules == .tsu ? 1 : 0) << 24
        // A column whose top lies below every cell the pair passes during its moves (at most 12 of
        // them: it falls by the gravity of that many) counts as that low: more boards share a key.
        let floor = max(0, simulator.spawnRowHeight &- 3 &- (gravity.halfRowsFallen(byMove: 12) &+ 1) / 2)
        for column in 0..<Board.columnsCount {
            key |= UInt64(max(floor, board.height(column: column)) & 0x1F) << (25 + 5 * column)
        }
        if let mask = reachCache[key] { return mask }
        let simulator = self.simulator
        // Any pair: the colours do not matter.
        let spawned = LivePair(spawning: EggPair(pivot: .red, child: .blue), rules: simulator.rules)
        var mask: UInt32 = 0
        for placement in Placement.all where simulator.isRoughlyReachable(placement, on: board) {
            // Where gravity lowers a pair by a cell or more during its moves, every placement is
            // played out; at slow gravity only those past a column near the spawn row.
            if (gravity.fallTicks > 16 && !simulator.isNearSpawnRow(placement, on: board))
                || Bot.isReachable(placement, from: spawned, on: board, rules: simulator.rules, gravity: gravity) {
                mask |= 1 << placement.cell
            }
        }
        if reachCache.count >= Bot.reachCacheMax { reachCache.removeAll(keepingCapacity: true) }
        reachCache[key] = mask
        return mask
    }

    /// Whether `garbage` sent now would press an opponent hard (insane only: it reads the
    /// opponents' boards): landed on their board as it is, their spawn is blocked or their spawn
    /// columns reach ``BotLevel/pressHeight``. Alone, the bot never fires for this.
    private func presses(_ garbage: Int, context: BotContext) -> Bool {
        guard let height = level.pressHeight, garbage > 0 else { return false }
        for opponent in context.opponents {
            var board = opponent
            simulator.landGarbage(garbage, on: &board)
            if simulator.spawnHeight(board) >= height || board.isSpawnBlocked(rules: simulator.rules) { return true }
        }
        return false
    }

    /// Whether firing `outcome`'s chain answers the garbage queued against the bot (every level but
    /// easy): where the rules offset, its garbage cancels all that is queued; or the queued garbage,
    /// landed on the board as it was, would bring the spawn columns to ``BotLevel/buriedHeight``
    /// below the height from which any chain is fired, so the bot digs out and strikes back rather
    /// than build into a burial.
    private func answers(_ outcome: BotSimulator.Outcome, before: Board, context: BotContext) -> Bool {
        guard let margin = level.buriedMargin, context.incomingGarbage > 0 else { return false }
        if simulator.rules.offsetting && outcome.garbage >= context.incomingGarbage { return true }
        var landed = before
        simulator.landGarbage(context.incomingGarbage, on: &landed)
        return simulator.spawnHeight(landed) >= evaluation.spawnFire &- margin
    }

    /// How promising a placement looks before its potential is judged (the search's pruning): its
    /// shape, plus what firing its chain is worth. Ranking by the chain first (before) put
    /// placements that waste eggs on a short chain ahead of every quiet one.
    private func pruneKey(_ outcome: BotSimulator.Outcome, before: Board, context: BotContext) -> Int {
        if outcome.toppedOut || simulator.isPerilous(outcome.board) { return Bot.deadScore }
        let fire = outcome.chain > 0 ? fireScore(outcome, before: before, context: context) : 0
        return fire &+ evaluation.shape(outcome.board)
    }

    /// What firing `outcome`'s chain is worth: much when the bot means to fire (the chain is long
    /// enough, garbage threatens, the board is crowded), a loss when it only wastes eggs.
    private func fireScore(_ outcome: BotSimulator.Outcome, before: Board, context: BotContext) -> Int {
        let chain = outcome.chain
        let spawnHeight = simulator.spawnHeight(before)
        let crowded = before.eggsCount >= level.crowdedEggs || spawnHeight >= evaluation.spawnFire
        let threatened = context.incomingGarbage >= level.threatGarbage && chain &* 2 >= level.fireChain
        if chain >= level.fireChain || crowded || threatened || presses(outcome.garbage, context: context)
            || answers(outcome, before: before, context: context) {
            return BotEvaluation.chainValue(chain) / 2 &* evaluation.weights.fireScale &+ outcome.garbage &* level.garbageWeight &+ evaluation.weights.fireBonus
        }
        return -(chain &* evaluation.weights.waste) &- 200
    }
}

/// Plays a planned list of moves at a level's pace: one move every ``BotLevel/ticksPerMove``
/// ticks, the hard drop no sooner than ``BotLevel/ticksPerPair`` ticks after the plan began.
public struct BotPacer: Sendable {
    public let level: BotLevel
    private var plan: [Move] = []
    private var planIndex = 0
    private var cooldownTicks = 0
    private var ticksLive = 0

    public init(level: BotLevel) {
        self.level = level
    }

    /// Starts a new pair's plan (its moves should end in a hard drop; one is added otherwise).
    public mutating func start(_ moves: [Move]) {
        plan = moves
        planIndex = 0
        cooldownTicks = level.ticksPerMove
        ticksLive = 0
    }

    /// Replaces the current pair's remaining moves, keeping the pace (the time since the spawn).
    public mutating func replan(_ moves: [Move]) {
        plan = moves
        planIndex = 0
    }

    /// Advances one tick; returns the move to make now, if any.
    public mutating func tick() -> Move? {
        ticksLive += 1
        cooldownTicks -= 1
        guard cooldownTicks <= 0 else { return nil }
        let move = planIndex < plan.count ? plan[planIndex] : .hardDrop
        if move == .hardDrop && ticksLive < level.ticksPerPair { return nil }
        cooldownTicks = level.ticksPerMove
        planIndex += 1
        return move
    }
}

/// A bot that plays a ``PlayerGrid`` like a human: it thinks, makes one move every
/// ``BotLevel/ticksPerMove`` ticks, and drops no sooner than ``BotLevel/ticksPerPair`` ticks after
/// the pair spawned (its pace, ``BotLevel/pairsPerSecond``).
public struct BotPlayer: Sendable {
    public private(set) var bot: Bot
    private var pacer: BotPacer
    private var plannedPairIndex = -1
    /// Garbage queued against the bot when it last planned.
    private var plannedGarbage = 0

    public init(level: BotLevel, seed: UInt64 = 0) {
        self.init(level: level, pace: level, seed: seed)
    }

    /// A bot deciding as `level` but moving at the pace of `pace` (to tell skill from speed).
    public init(level: BotLevel, pace: BotLevel, seed: UInt64 = 0) {
        bot = Bot(level: level, seed: seed)
        pacer = BotPacer(level: pace)
    }

    public var level: BotLevel { bot.level }

    /// Advances one tick; returns the move to apply to the grid now, if any.
    /// - Parameters:
    ///   - grid: the bot's own grid (plans when a new pair is live).
    ///   - next: the pair after the live one, when known.
    public mutating func tick(grid: PlayerGrid, next: EggPair?) -> Move? {
        tick(grid: grid, preview: next.map { [$0] } ?? [], context: BotContext())
    }

    /// Advances one tick; returns the move to apply to the grid now, if any.
    /// - Parameters:
    ///   - grid: the bot's own grid (plans when a new pair is live).
    ///   - preview: the pairs after the live one that the player is shown (one or two).
    ///   - context: garbage queued against the bot.
    public mutating func tick(grid: PlayerGrid, preview: [EggPair], context: BotContext) -> Move? {
        guard grid.state == .live else { return nil }
        // The pair falls by the grid's gravity while it is moved at this player's pace.
        var context = context
        context.gravity = PairGravity(grid: grid, moveTicks: pacer.level.ticksPerMove, pairTicks: pacer.level.ticksPerPair - 1)
        if plannedPairIndex != grid.pairsSpawned {
            pacer.start(bot.plan(grid: grid, preview: preview, context: context))
            plannedPairIndex = grid.pairsSpawned
            plannedGarbage = context.incomingGarbage
        } else if context.incomingGarbage > plannedGarbage {
            // Garbage arrived while the pair is live: think again from where the pair is now, as a
            // player would, keeping the old plan when the new target cannot be reached from here.
            plannedGarbage = context.incomingGarbage
            if let live = grid.livePair,
               let target = bot.choosePlacement(board: grid.board, current: live.pair, preview: preview, context: context,
                                                rules: grid.rules),
               let moves = Bot.moves(to: target, from: live, on: grid.board, rules: grid.rules) {
                pacer.replan(moves)
            }
        }
        return pacer.tick()
    }
}


