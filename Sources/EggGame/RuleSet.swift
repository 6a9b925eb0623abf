/// One rule set: every size, timing and algorithm choice the engine is built from (docs/rules.md).
///
/// The engine reads these values; it never asks which rule set it runs. A rule set is agreed at
/// match start and named in the log header.
public struct RuleSet: Sendable, Hashable {
    /// How a pair turns.
    public enum RotationSystem: Sendable, Hashable {
        /// `sfe`: no pivot, no kick; the top-right cell of the pair's 2×2 box stays occupied and a
        /// blocked turn is refused.
        case boxNoKick
        /// `tsu`: the child turns around the pivot; a turn blocked by a wall or an egg shifts the
        /// pair one column away, a turn into the floor or an egg below lifts it one row, and in a
        /// one-column shaft a second press in a row flips the pair 180° (quick turn).
        case pivotWithKicks
    }

    /// Which cells decide a top out when a pair would spawn.
    public enum TopOut: Sendable, Hashable {
        /// `sfe`: either egg's spawn cell is taken.
        case eitherSpawnCell
        /// `tsu`: the pivot's spawn cell is taken (the child spawns in the hidden row).
        case pivotSpawnCell
    }

    /// How chain steps turn into garbage.
    public enum GarbageFormula: Sendable, Hashable {
        /// `sfe`: step 1 sends popped − 3, each later step popped + 2.
        case sfeSteps
        /// `tsu`: a score per step, and garbage from the score by target points (docs/rules.md, `tsu`).
        case score(Scoring)
    }

    /// The score and target points of `tsu` (docs/rules.md, `tsu`).
    public struct Scoring: Sendable, Hashable {
        /// Chain power for steps 1, 2, …; steps past the end use the last value.
        public var chainPower: [Int]
        /// Colour bonus for 1…6 colours popped in a step.
        public var colorBonus: [Int]
        /// Group bonus for groups of 4, 5, …; larger groups use the last value.
        public var groupBonus: [Int]
        /// Target points before margin time.
        public var targetPoints: Int
        /// Ticks of play before the target points first change (margin time).
        public var marginTicks: Int
        /// Ticks between later changes.
        public var marginStepTicks: Int
        /// Changes after the first, at most.
        public var marginStepsMax: Int
        /// Garbage an all clear adds to the player's next chain.
        public var allClearGarbage: Int

        /// The step score: 10 · popped · clamp(CP + CB + GB, 1, 999).
        public func score(stepIndex: Int, groupSizes: [Int], colors: Int) -> Int {
            let popped = groupSizes.reduce(0, +)
            let power = chainPower[min(stepIndex, chainPower.count - 1)]
            let colorPart = colors > 0 ? colorBonus[min(colors, colorBonus.count) - 1] : 0
            let groupPart = groupSizes.reduce(0) { $0 + groupBonus[min(max($1 - 4, 0), groupBonus.count - 1)] }
            return 10 * popped * min(max(power + colorPart + groupPart, 1), 999)
        }

        /// The target points after `ticks` of play: ``targetPoints`` until margin time, then
        /// ⌊target·¾⌋, then every ``marginStepTicks`` half of the value before the previous change
        /// (at most ``marginStepsMax`` times, never below 1).
        public func targetPoints(afterTicks ticks: Int) -> Int {
            guard ticks >= marginTicks else { return targetPoints }
            let steps = min((ticks - marginTicks) / marginStepTicks, marginStepsMax)
            var previous = targetPoints
            var current = targetPoints * 3 / 4
            for _ in 0..<steps { (previous, current) = (current, max(1, previous / 2)) }
            return current
        }

        /// Puyo Puyo Tsu's tables: target 70, margin time 96 s then every 16 s, all clear +30.
        public static let tsu = Scoring(
            chainPower: [0, 8, 16, 32, 64, 96, 128] + (1...12).map { 128 + 32 * $0 },
            colorBonus: [0, 3, 6, 12, 24, 48],
            groupBonus: [0, 2, 3, 4, 5, 6, 7, 10],
            targetPoints: 70, marginTicks: 96 * 60, marginStepTicks: 16 * 60, marginStepsMax: 14,
            allClearGarbage: 30)
    }

    /// How received garbage is put on the grid.
    public enum GarbagePlacement: Sendable, Hashable {
        /// `sfe`: level by level, columns ordered by height (ties: higher index first).
        case levels
        /// `tsu`: one egg in every column for each 6, the remaining 1–5 in distinct columns drawn
        /// from the grid's garbage stream; at most `dropMax` eggs fall at once.
        case rowsThenRandomColumns(dropMax: Int)
    }

    /// Tick counts at 60 ticks a second.
    public struct Timing: Sendable, Hashable {
        /// A landing egg is busy this long.
        public var landingTicks: Int
        /// A popping egg (and garbage cleared with it) explodes this long.
        public var popTicks: Int
        /// A column bounces this long after a garbage egg lands in it.
        public var garbageBounceTicks: Int
        /// Loose eggs (garbage included) move half a cell once every this many ticks.
        public var fallPassTicks: Int
        /// The garbage of an incoming batch moves half a cell once every this many ticks.
        public var garbageFallTicks: Int
        /// Ticks from the removal of popped eggs to the first fall pass (SFE's runner turns to
        /// dropping on the next tick and passes on the one after).
        public var fallStartTicks: Int
        /// Soft drop moves the pair half a cell once every this many ticks.
        public var softDropTicks: Int
        /// The live drop interval per half cell is max(`dropIntervalMin`, `dropIntervalBase` − `dropIntervalPerSpeed`·speed).
        public var dropIntervalBase: Int
        public var dropIntervalPerSpeed: Int
        public var dropIntervalMin: Int

        /// Ticks per half cell of a live pair at `speed`.
        public func dropInterval(speed: Int) -> Int {
            max(dropIntervalMin, dropIntervalBase - dropIntervalPerSpeed * speed)
        }
    }

    /// The name in the log header and on the command line.
    public var name: String
    public var columns: Int
    /// Rows of the grid, hidden or garbage-only rows included (board notation's row count). The
    /// engine stores every grid in ``Board``'s 15 rows: a grid of fewer rows uses the bottom ones,
    /// so row numbers below are ``Board`` rows (0 = the top of the 15).
    public var rows: Int
    /// Rows at the top that a pair never enters (`sfe`: rows 0–2 receive garbage only).
    public var garbageOnlyRows: Int
    /// Rows at the top whose eggs neither join groups nor are cleared (`tsu`: the hidden 13th row).
    public var hiddenRows: Int
    /// Where a pair spawns: its pivot's column and row, and where the child sits.
    public var spawnColumn: Int
    public var spawnRow: Int
    public var spawnOrientation: Orientation
    public var topOut: TopOut
    public var rotation: RotationSystem
    public var timing: Timing
    public var garbageFormula: GarbageFormula
    public var placement: GarbagePlacement
    /// Whether garbage a player generates first cancels garbage queued against it.
    public var offsetting: Bool
    /// Next pairs shown.
    public var nextPairsShown: Int
    /// Settings ranges and defaults.
    public var speeds: ClosedRange<Int>
    public var startingHeights: ClosedRange<Int>
    public var bestOfDefault: Int

    /// Super Foul Egg, exactly (docs/rules.md, `sfe`).
    public static let sfe = RuleSet(
        name: "sfe", columns: 6, rows: 15, garbageOnlyRows: 3, hiddenRows: 0, spawnColumn: 2, spawnRow: 3,
        spawnOrientation: .right, topOut: .eitherSpawnCell, rotation: .boxNoKick,
        timing: Timing(landingTicks: 15, popTicks: 13, garbageBounceTicks: 17, fallPassTicks: 2,
                       garbageFallTicks: 1, fallStartTicks: 2, softDropTicks: 2, dropIntervalBase: 38, dropIntervalPerSpeed: 4,
                       dropIntervalMin: 2),
        garbageFormula: .sfeSteps, placement: .levels, offsetting: false, nextPairsShown: 1,
        speeds: 0...9, startingHeights: 0...9, bestOfDefault: 3)

    /// Puyo Puyo Tsu for competitive players (docs/rules.md, `tsu`): 6 × 12 visible rows and a hidden 13th
    /// (``Board`` rows 2–14; row 2 hidden), the pivot spawning at column 2 of the top visible row
    /// with the child above it. Chains take sfe's time: landing 15 ticks, popping 13 (the first
    /// fall pass 2 ticks after the removal), a fall pass every 2 ticks, an incoming batch's garbage
    /// half a cell a tick and a 17-tick bounce (none for garbage placed where it already rests);
    /// the pair moves in half cells as in sfe.
    public static let tsu = RuleSet(
        name: "tsu", columns: 6, rows: 13, garbageOnlyRows: 0, hiddenRows: 1, spawnColumn: 2, spawnRow: 3,
        spawnOrientation: .up, topOut: .pivotSpawnCell, rotation: .pivotWithKicks,
        timing: sfe.timing,
        garbageFormula: .score(.tsu), placement: .rowsThenRandomColumns(dropMax: 30), offsetting: true,
        nextPairsShown: 2, speeds: 0...9, startingHeights: 0...0, bestOfDefault: 3)

    /// Every rule set the engine implements.
    public static let all: [RuleSet] = [.sfe, .tsu]

    /// The top row of the grid in ``Board`` rows.
    public var topRow: Int { Board.rowsCount - rows }
    /// The highest row a pair may occupy.
    public var pairTopRow: Int { topRow + garbageOnlyRows }
    /// The top row whose eggs join groups and are cleared.
    public var poppingTopRow: Int { topRow + hiddenRows }
    /// The most garbage eggs that fall at once (the rest wait for the next pair).
    public var garbageDropMax: Int {
        switch placement {
        case .levels: Int.max
        case .rowsThenRandomColumns(let dropMax): dropMax
        }
    }

    /// The rule set called `name`, or nil.
    public static func named(_ name: String) -> RuleSet? {
        all.first { $0.name == name }
    }

    /// The names of ``all``, for messages.
    public static var names: String { all.map(\.name).joined(separator: ", ") }

    /// Garbage a chain step sends by a per-step formula; `stepIndex` 0 is the first step. (A
    /// score-based rule set sends garbage from the grid's score and carried remainder instead.)
    public func garbage(stepIndex: Int, popped: Int) -> Int {
        switch garbageFormula {
        case .sfeSteps: stepIndex == 0 ? popped &- 3 : popped &+ 2
        case .score: 0
        }
    }
}
