/// A 6×15 grid of cells (`sfe`: rows 0–2 only ever receive garbage), stored as bitboards.
///
/// Three bit planes hold a 3-bit code per cell (0 empty, 1...6 the colours, 7 garbage). Each plane
/// is a `UInt128` with 16 bits per column: bit `16·column + y` is the cell in `column` at height
/// `y` (0 = bottom row). Only bits 0...14 of a column lane are ever set, so shifts by one row or
/// one column never carry an egg into a neighbouring lane once masked by a plane.
///
/// Public coordinates use `row` 0 = top row, as in board notation.
public struct Board: Sendable, Hashable {
    /// Grid width in cells.
    public static let columnsCount = 6
    /// Grid height in cells (rows 0...14, top first).
    public static let rowsCount = 15
    /// Columns where a pair spawns (pivot, child), in ``spawnRow``.
    public static let spawnColumns = (2, 3)
    /// The row a pair spawns in; a pair never occupies a row above it.
    public static let spawnRow = 3
    /// The rows a screen shows: the spawn row down (rows 0–2 above it only ever receive garbage).
    public static let visibleRows = spawnRow..<rowsCount
    /// Rows from the top that a column fills before it is full for garbage (rows 0–12).
    public static let garbageRowsMax = 13

    @usableFromInline package static let laneBits = 16
    static let laneMask: UInt128 = 0x7FFF
    /// Every playable cell.
    @usableFromInline static let fieldMask: UInt128 = {
        var mask: UInt128 = 0
        for column in 0..<columnsCount { mask |= laneMask << (column * laneBits) }
        return mask
    }()
    /// The lowest bit of every lane (for lane-parallel arithmetic).
    static let laneOnes: UInt128 = {
        var ones: UInt128 = 0
        for column in 0..<columnsCount { ones |= 1 << (column * laneBits) }
        return ones
    }()

    // `@usableFromInline` and `@inlinable` (here and on the cell and group helpers below): EggBot's
    // search calls them in its inner loops, and inlines them across the module boundary.
    @usableFromInline var plane0: UInt128 = 0
    @usableFromInline var plane1: UInt128 = 0
    @usableFromInline var plane2: UInt128 = 0

    /// An empty board.
    public init() {}

    // MARK: Cells

    @inlinable @inline(__always)
    package static func bit(column: Int, y: Int) -> UInt128 {
        UInt128(1) << (column &* laneBits &+ y)
    }

    @inlinable @inline(__always)
    package func code(column: Int, y: Int) -> UInt8 {
        let shift = column &* Board.laneBits &+ y
        let low = UInt8(truncatingIfNeeded: plane0 >> shift) & 1
        let mid = UInt8(truncatingIfNeeded: plane1 >> shift) & 1
        let high = UInt8(truncatingIfNeeded: plane2 >> shift) & 1
        return low | mid << 1 | high << 2
    }

    @inline(__always)
    mutating func setCode(column: Int, y: Int, code: UInt8) {
        let bit = Board.bit(column: column, y: y)
        plane0 = code & 1 != 0 ? plane0 | bit : plane0 & ~bit
        plane1 = code & 2 != 0 ? plane1 | bit : plane1 & ~bit
        plane2 = code & 4 != 0 ? plane2 | bit : plane2 & ~bit
    }

    /// Puts `code` into `cells`, every one of them empty.
    @inlinable @inline(__always)
    package mutating func fillEmpty(_ cells: UInt128, code: UInt8) {
        if code & 1 != 0 { plane0 |= cells }
        if code & 2 != 0 { plane1 |= cells }
        if code & 4 != 0 { plane2 |= cells }
    }

    /// The cell at `column` 0...5 (left to right) and `row` 0...14 (top to bottom).
    public subscript(column column: Int, row row: Int) -> Cell {
        get {
            precondition(Board.contains(column: column, row: row), "cell out of the grid")
            return Cell(code: code(column: column, y: Board.rowsCount - 1 - row))
        }
        set {
            precondition(Board.contains(column: column, row: row), "cell out of the grid")
            setCode(column: column, y: Board.rowsCount - 1 - row, code: newValue.code)
        }
    }

    /// Whether `(column, row)` lies in the grid.
    public static func contains(column: Int, row: Int) -> Bool {
        (0..<columnsCount).contains(column) && (0..<rowsCount).contains(row)
    }

    /// Occupied cells.
    @inline(__always)
    @usableFromInline var occupied: UInt128 { plane0 | plane1 | plane2 }

    /// Cells holding `code` (1...7).
    @inlinable @inline(__always)
    package func plane(code: UInt8) -> UInt128 {
        let p0 = code & 1 != 0 ? plane0 : ~plane0
        let p1 = code & 2 != 0 ? plane1 : ~plane1
        let p2 = code & 4 != 0 ? plane2 : ~plane2
        return p0 & p1 & p2 & Board.fieldMask
    }

    /// How many eggs `column` holds (the board must be settled).
    @inlinable @inline(__always)
    public func height(column: Int) -> Int {
        let lane = UInt16(truncatingIfNeeded: occupied >> (column &* Board.laneBits))
        return lane.nonzeroBitCount
    }

    /// The top row holding an egg or garbage in `column` (`rowsCount` when the column is empty).
    @inline(__always)
    func topOccupiedRow(column: Int) -> Int {
        let lane = UInt16(truncatingIfNeeded: occupied >> (column &* Board.laneBits)) & UInt16(Board.laneMask)
        // The highest bit set is y = 15 - leading zeros, and row = rowsCount - 1 - y.
        return lane == 0 ? Board.rowsCount : Board.rowsCount - 16 + lane.leadingZeroBitCount
    }

    /// The number of eggs and garbage on the board.
    public var eggsCount: Int { occupied.nonzeroBitCount }

    /// Whether a spawning pair would find its cells occupied (game over).
    public var isSpawnBlocked: Bool {
        let top = Board.rowsCount - 1 - Board.spawnRow
        let cells = Board.bit(column: Board.spawnColumns.0, y: top) | Board.bit(column: Board.spawnColumns.1, y: top)
        return occupied & cells != 0
    }

    /// Whether a pair spawning by `rules` would top out (docs/rules.md game over).
    public func isSpawnBlocked(rules: RuleSet) -> Bool {
        let y = Board.rowsCount - 1 - rules.spawnRow
        var cells = Board.bit(column: rules.spawnColumn, y: y)
        switch rules.topOut {
        case .eitherSpawnCell:
            let child = rules.spawnOrientation
            cells |= Board.bit(column: rules.spawnColumn + child.columnOffset, y: y - child.rowOffset)
        case .pivotSpawnCell:
            break
        }
        return occupied & cells != 0
    }

    /// The cells of rows `topRow`... (bit planes' layout).
    package static func rowsMask(from topRow: Int) -> UInt128 {
        guard topRow > 0 else { return fieldMask }
        let lane: UInt128 = (1 << (rowsCount - topRow)) - 1
        var mask: UInt128 = 0
        for column in 0..<columnsCount { mask |= lane << (column * laneBits) }
        return mask
    }

    // MARK: Gravity

    /// Whether `column`'s eggs lie contiguous from the floor (nothing in it can fall).
    @inline(__always)
    static func isLaneSettled(_ board: Board, column: Int) -> Bool {
        let lane = UInt16(truncatingIfNeeded: board.occupied >> (column &* Board.laneBits)) & UInt16(Board.laneMask)
        return lane & (lane &+ 1) == 0
    }

    /// Whether no egg hangs above an empty cell.
    public var isSettled: Bool {
        let occupied = self.occupied
        // A lane is settled when its bits are contiguous from the bottom; lanes never overflow.
        return occupied & (occupied &+ Board.laneOnes) == 0
    }

    /// Lets every unsupported egg fall until the board is settled.
    public mutating func settle() {
        for _ in 0..<Board.rowsCount {
            let occupied = self.occupied
            let lowestHole = ~occupied & (occupied &+ Board.laneOnes)
            let floating = occupied & ~((lowestHole << 1) &- Board.laneOnes)
            if floating == 0 { break }
            plane0 = (plane0 & ~floating) | ((plane0 & floating) >> 1)
            plane1 = (plane1 & ~floating) | ((plane1 & floating) >> 1)
            plane2 = (plane2 & ~floating) | ((plane2 & floating) >> 1)
        }
        precondition(isSettled, "gravity must settle within rowsCount passes")
    }

    /// Drops one egg (`code`) onto `column`; eggs coming to rest above the top row vanish.
    @inline(__always)
    mutating func dropCode(_ code: UInt8, column: Int) {
        let y = height(column: column)
        if y < Board.rowsCount { setCode(column: column, y: y, code: code) }
    }

    /// Drops a pair in a given orientation with the pivot in `column`, as a lock does.
    package mutating func drop(_ pair: EggPair, orientation: Orientation, column: Int) {
        let pivot = pair.pivot.rawValue + 1
        let child = pair.child.rawValue + 1
        switch orientation {
        case .up:
            dropCode(pivot, column: column)
            dropCode(child, column: column)
        case .down:
            dropCode(child, column: column)
            dropCode(pivot, column: column)
        case .right, .left:
            dropCode(pivot, column: column)
            dropCode(child, column: column &+ orientation.columnOffset)
        }
    }

    // MARK: Chains

    @inline(__always)
    @usableFromInline static func neighbours(_ cells: UInt128) -> UInt128 {
        (cells << 1) | (cells >> 1) | (cells << laneBits) | (cells >> laneBits)
    }

    /// The cells of `cells` connected to `seed` (a subset of `cells`) through side neighbours.
    @inlinable @inline(__always)
    package static func group(of seed: UInt128, in cells: UInt128) -> UInt128 {
        var group = seed
        while true {
            let grown = (group | neighbours(group)) & cells
            if grown == group { return group }
            group = grown
        }
    }

    /// The cells of every same-colour group of 4 or more in `plane`.
    @inline(__always)
    static func poppingCells(in plane: UInt128) -> UInt128 {
        if plane.nonzeroBitCount < 4 { return 0 }
        // Only a cell with two or more same-colour neighbours can seed a group of 3 or more.
        let up = plane & (plane << 1), down = plane & (plane >> 1)
        let right = plane & (plane << laneBits), left = plane & (plane >> laneBits)
        let twoOrMore = (up & (down | right | left)) | (down & (right | left)) | (right & left)
        var seeds = twoOrMore
        var popping: UInt128 = 0
        while seeds != 0 {
            let group = Board.group(of: seeds & (0 &- seeds), in: plane)
            seeds &= ~group
            if group.nonzeroBitCount >= 4 { popping |= group }
        }
        return popping
    }

    /// Pops every group of one chain step, clears adjacent garbage and lets eggs fall.
    /// Returns nil when nothing pops.
    mutating func popStep() -> ChainStep? {
        var popping: UInt128 = 0
        for code in UInt8(1)...6 {
            popping |= Board.poppingCells(in: plane(code: code))
        }
        if popping == 0 { return nil }
        let cleared = Board.neighbours(popping) & plane(code: 7)
        let removed = popping | cleared
        plane0 &= ~removed
        plane1 &= ~removed
        plane2 &= ~removed
        settle()
        return ChainStep(popped: popping.nonzeroBitCount, garbageCleared: cleared.nonzeroBitCount)
    }

    /// The cells that pop now (every group of 4+) and the garbage cleared with them, or nil;
    /// only cells in `mask` join groups or are cleared (`tsu`'s hidden row is outside it).
    package func poppingCellsNow(mask: UInt128 = Board.fieldMask) -> (popped: UInt128, cleared: UInt128)? {
        var popping: UInt128 = 0
        for code in UInt8(1)...6 {
            popping |= Board.poppingCells(in: plane(code: code) & mask)
        }
        if popping == 0 { return nil }
        return (popping, Board.neighbours(popping) & plane(code: 7) & mask)
    }

    /// The groups of `popped` (cells that pop in one step): each group's size, and how many
    /// colours they have.
    func groups(in popped: UInt128) -> (sizes: [Int], colors: Int) {
        var sizes: [Int] = []
        var colors = 0
        for code in UInt8(1)...6 {
            var cells = plane(code: code) & popped
            if cells != 0 { colors += 1 }
            while cells != 0 {
                let group = Board.group(of: cells & (0 &- cells), in: cells)
                cells &= ~group
                sizes.append(group.nonzeroBitCount)
            }
        }
        return (sizes, colors)
    }

    /// Empties `cells`.
    mutating func remove(_ cells: UInt128) {
        plane0 &= ~cells
        plane1 &= ~cells
        plane2 &= ~cells
    }

    /// Resolves every chain step (the board must be settled) and reports them.
    public mutating func resolveChain() -> ChainResult {
        var steps: [ChainStep] = []
        for _ in 0..<ChainResult.stepsMax {
            guard let step = popStep() else { break }
            steps.append(step)
        }
        return ChainResult(steps: steps)
    }

    /// Resolves every chain step; returns only the chain length and the garbage sent (bot path).
    @inline(__always)
    mutating func resolveChainCounts() -> (chain: Int, garbage: Int) {
        var chain = 0, garbage = 0
        while chain < ChainResult.stepsMax, let step = popStep() {
            garbage &+= ChainResult.garbage(stepIndex: chain, popped: step.popped)
            chain &+= 1
        }
        return (chain, garbage)
    }

    /// One step of the bot's resolutions: empties `popping` (every group of 4 or more now) and
    /// the garbage beside it within `mask`, lets the eggs fall, and returns every group that pops
    /// next. Only a group holding a cell this step changed can pop next (any other stood whole
    /// before it and, at 4 or more, would have popped in it), so the search floods out from those
    /// cells instead of searching all six colour planes.
    private mutating func popAndFindNext(_ popping: UInt128, mask: UInt128) -> UInt128 {
        let before = (plane0, plane1, plane2)
        remove(popping | (Board.neighbours(popping) & plane(code: 7) & mask))
        settle()
        let changed = (plane0 ^ before.0) | (plane1 ^ before.1) | (plane2 ^ before.2)
        var next: UInt128 = 0
        for code in UInt8(1)...6 {
            let cells = plane(code: code) & mask
            var seeds = cells & changed
            while seeds != 0 {
                let group = Board.group(of: seeds & (0 &- seeds), in: cells)
                seeds &= ~group
                if group.nonzeroBitCount >= 4 { next |= group }
            }
        }
        return next
    }

    /// The chain's length and the eggs it pops, resolved as ``resolveChainCounts(rules:mask:)``
    /// resolves it without scoring its steps, on a settled board where `popping` is every group
    /// that pops first (the bot's virtual drops: on a board where nothing popped, the dropped
    /// eggs' group).
    package mutating func resolveChainSteps(mask: UInt128, firstPopping popping: UInt128) -> (chain: Int, popped: Int) {
        var popping = popping
        var chain = 0, popped = 0
        while popping != 0 && chain < ChainResult.stepsMax {
            popped &+= popping.nonzeroBitCount
            popping = popAndFindNext(popping, mask: mask)
            chain &+= 1
        }
        return (chain, popped)
    }

    /// Resolves every chain step by `rules` (the board must be settled): only cells in `mask`
    /// join groups or are cleared (`tsu`'s hidden row is outside it), and the garbage is the rule
    /// set's (`tsu`: the chain's score over the target points, no remainder carried in). Returns
    /// the chain length and the garbage (bot path).
    package mutating func resolveChainCounts(rules: RuleSet, mask: UInt128) -> (chain: Int, garbage: Int) {
        var chain = 0, garbage = 0, points = 0
        var popping = poppingCellsNow(mask: mask)?.popped ?? 0
        while popping != 0 && chain < ChainResult.stepsMax {
            switch rules.garbageFormula {
            case .sfeSteps:
                garbage &+= rules.garbage(stepIndex: chain, popped: popping.nonzeroBitCount)
            case .score(let scoring):
                let groups = groups(in: popping)
                points &+= scoring.score(stepIndex: chain, groupSizes: groups.sizes, colors: groups.colors)
            }
            popping = popAndFindNext(popping, mask: mask)
            chain &+= 1
        }
        if case .score(let scoring) = rules.garbageFormula { garbage = points / scoring.targetPoints }
        return (chain, garbage)
    }

    // MARK: Garbage

    /// Where `count` garbage eggs are put before they fall (docs/rules.md, `sfe`), in placement order.
    ///
    /// A column's height is its count of contiguous eggs from the bottom; columns are ordered by
    /// height, ties with the higher column index first. Level starts at the lowest height; each
    /// pass, every column with height ≤ level, in order, gets one egg at its topmost empty cell,
    /// until the count runs out. A column whose rows 0–12 are all taken is full; a pass that places
    /// nothing discards the rest; otherwise the level rises by one.
    public func garbagePlacement(_ count: Int) -> [(column: Int, row: Int)] {
        var work = self
        var heights = [Int](repeating: 0, count: Board.columnsCount)
        for column in 0..<Board.columnsCount {
            let lane = UInt16(truncatingIfNeeded: occupied >> (column &* Board.laneBits))
            heights[column] = (~lane).trailingZeroBitCount
        }
        let order = (0..<Board.columnsCount).sorted { heights[$0] != heights[$1] ? heights[$0] < heights[$1] : $0 > $1 }
        var level = heights.min() ?? 0
        var remaining = min(max(count, 0), Board.columnsCount * Board.rowsCount)
        var placed: [(column: Int, row: Int)] = []
        while remaining > 0 {
            let before = placed.count
            for column in order where heights[column] <= level && remaining > 0 {
                guard let row = (0..<Board.garbageRowsMax).first(where: { work[column: column, row: $0] == .empty }) else { continue }
                work[column: column, row: row] = .garbage
                placed.append((column, row))
                remaining -= 1
            }
            if placed.count == before { break }
            level += 1
        }
        return placed
    }

    /// Where `count` garbage eggs are put before they fall by `tsu`'s pattern (docs/rules.md, `tsu`): one
    /// egg in every column for each 6, one more in each of `extraColumns` (the remaining 1–5),
    /// from the grid's top row (`topRow`) down into the column's empty cells; at most `dropMax`
    /// eggs, and eggs finding no empty cell are discarded. The board must be settled.
    public func garbagePlacement(_ count: Int, extraColumns: [Int], topRow: Int, dropMax: Int) -> [(column: Int, row: Int)] {
        let count = min(max(count, 0), dropMax)
        var placed: [(column: Int, row: Int)] = []
        for column in 0..<Board.columnsCount {
            let eggs = count / Board.columnsCount + (extraColumns.contains(column) ? 1 : 0)
            let free = max(0, Board.rowsCount - topRow - height(column: column))
            for row in topRow..<(topRow + min(eggs, free)) { placed.append((column, row)) }
        }
        return placed
    }

    /// Lands `count` garbage eggs at once by ``garbagePlacement(_:)`` and lets them fall (zero
    /// time); eggs that fit nowhere are discarded. The board must be settled.
    /// - Returns: how many landed.
    @discardableResult
    public mutating func landGarbage(_ count: Int) -> Int {
        let placed = garbagePlacement(count)
        for cell in placed { self[column: cell.column, row: cell.row] = .garbage }
        settle()
        return placed.count
    }

    /// Panics unless the planes only use playable cells.
    func checkInvariants() {
        precondition(plane0 & ~Board.fieldMask == 0, "plane 0 outside the grid")
        precondition(plane1 & ~Board.fieldMask == 0, "plane 1 outside the grid")
        precondition(plane2 & ~Board.fieldMask == 0, "plane 2 outside the grid")
    }
}

/// One chain step: the coloured eggs popped over all groups, and the garbage cleared with them.
public struct ChainStep: Sendable, Hashable {
    public var popped: Int
    public var garbageCleared: Int
    /// The step's score, for a rule set that scores (`tsu`); nil otherwise.
    public var score: Int?

    public init(popped: Int, garbageCleared: Int, score: Int? = nil) {
        self.popped = popped
        self.garbageCleared = garbageCleared
        self.score = score
    }
}

/// The chain steps of one resolution and the garbage they send.
public struct ChainResult: Sendable, Hashable {
    /// More steps than a 90-cell grid can hold eggs for groups of 4 (90 / 4 < 23).
    static let stepsMax = 23

    public var steps: [ChainStep]

    public init(steps: [ChainStep] = []) {
        self.steps = steps
    }

    /// The chain length: the number of steps that popped.
    public var chain: Int { steps.count }

    /// Garbage sent: popped − 3 for the first step, 6 + popped − 4 for each later one.
    public var garbage: Int {
        steps.indices.reduce(0) { $0 + ChainResult.garbage(stepIndex: $1, popped: steps[$1].popped) }
    }

    @inline(__always)
    static func garbage(stepIndex: Int, popped: Int) -> Int {
        stepIndex == 0 ? popped &- 3 : 6 &+ popped &- 4
    }
}
