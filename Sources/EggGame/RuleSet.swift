/// One rule set: every size, timing and algorithm choice the engine is built from (SPEC §2).
///
/// The engine reads these values; it never asks which rule set it runs. A rule set is agreed at
/// match start and named in the log header.
public struct RuleSet: Sendable, Hashable {
    /// How a pair turns.
    public enum RotationSystem: Sendable, Hashable {
        /// `sfe`: no pivot, no kick; the top-right cell of the pair's 2×2 box stays occupied and a
        /// blocked turn is refused.
        case boxNoKick
    }

    /// How chain steps turn into garbage.
    public enum GarbageFormula: Sendable, Hashable {
        /// `sfe`: step 1 sends popped − 3, each later step popped + 2.
        case sfeSteps
    }

    /// How received garbage is put on the grid.
    public enum GarbagePlacement: Sendable, Hashable {
        /// `sfe`: level by level, columns ordered by height (ties: higher index first).
        case levels
    }

    /// Tick counts at 60 ticks a second.
    public struct Timing: Sendable, Hashable {
        /// A landing egg is busy this long.
        public var landingTicks: Int
        /// A popping egg (and garbage cleared with it) explodes this long.
        public var popTicks: Int
        /// A column bounces this long after a garbage egg lands in it.
        public var garbageBounceTicks: Int
        /// Loose coloured eggs move half a cell once every this many ticks.
        public var fallPassTicks: Int
        /// Loose garbage moves half a cell once every this many ticks.
        public var garbageFallTicks: Int
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
    /// Rows of the grid, hidden or garbage-only rows included.
    public var rows: Int
    /// Rows at the top that a pair never enters (`sfe`: rows 0–2 receive garbage only).
    public var garbageOnlyRows: Int
    /// Where a pair spawns: its left egg's column and the row (the right egg is one column right).
    public var spawnColumn: Int
    public var spawnRow: Int
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

    /// Super Foul Egg, exactly (SPEC §2.1).
    public static let sfe = RuleSet(
        name: "sfe", columns: 6, rows: 15, garbageOnlyRows: 3, spawnColumn: 2, spawnRow: 3,
        rotation: .boxNoKick,
        timing: Timing(landingTicks: 15, popTicks: 13, garbageBounceTicks: 17, fallPassTicks: 2,
                       garbageFallTicks: 1, softDropTicks: 2, dropIntervalBase: 38, dropIntervalPerSpeed: 4,
                       dropIntervalMin: 2),
        garbageFormula: .sfeSteps, placement: .levels, offsetting: false, nextPairsShown: 1,
        speeds: 0...9, startingHeights: 0...9, bestOfDefault: 3)

    /// Every rule set the engine implements.
    public static let all: [RuleSet] = [.sfe]

    /// The rule set called `name`, or nil.
    public static func named(_ name: String) -> RuleSet? {
        all.first { $0.name == name }
    }

    /// The names of ``all``, for messages.
    public static var names: String { all.map(\.name).joined(separator: ", ") }

    /// Garbage a chain step sends; `stepIndex` 0 is the first step.
    public func garbage(stepIndex: Int, popped: Int) -> Int {
        switch garbageFormula {
        case .sfeSteps: stepIndex == 0 ? popped &- 3 : popped &+ 2
        }
    }
}
