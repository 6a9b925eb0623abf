/// A board-notation error, with the 1-based line and column where it was found.
public struct BoardParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// A line that is not exactly 6 characters; `width` is its length.
        case wrongWidth(width: Int)
        /// A 13th non-blank line.
        case tooManyRows
        /// A character that is none of `. R B Y P G O #`.
        case unknownCharacter(Character)
        /// No row at all (empty or blank input).
        case noBoard
    }

    public let kind: Kind
    /// 1-based line in the input, blank lines included.
    public let line: Int
    /// 1-based character position in that line.
    public let column: Int
    /// The rule set's row count the board was read for (`sfe` 15, `tsu` 13).
    public var rowsMax: Int = Board.rowsCount

    public var description: String {
        switch kind {
        case .wrongWidth(let width):
            "line \(line), column \(column): a board row must be exactly \(Board.columnsCount) characters, found \(width)"
        case .tooManyRows:
            "line \(line), column \(column): a board has at most \(rowsMax) rows"
        case .unknownCharacter(let character):
            "line \(line), column \(column): unknown character \(quoted(character)); use . R B Y P G O #"
        case .noBoard:
            "line \(line), column \(column): no board (the input has no rows)"
        }
    }

    /// A visible ASCII character in quotes; anything else (controls, spaces, non-ASCII) as its
    /// code points, so a message never carries a raw control character.
    private func quoted(_ character: Character) -> String {
        let scalars = character.unicodeScalars
        if scalars.count == 1, let scalar = scalars.first, (0x21...0x7E).contains(scalar.value) { return "'\(character)'" }
        return scalars.map { "U+\(hex($0.value))" }.joined(separator: " ")
    }

    private func hex(_ scalar: UInt32) -> String {
        let digits = String(scalar, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

extension Board {
    /// Parses board notation: up to `rowsMax` lines (`sfe` 15: a 12-line board is rows 3–14;
    /// `tsu` 13) of exactly 6 characters, top row first; missing top rows are empty (the bottom
    /// rows of the 15 are filled); blank lines are ignored (blank input is the empty board). Lines
    /// end in LF, CRLF or CR.
    /// Eggs may float: the board is returned as written (see ``settle()``).
    public init(notation text: String, rowsMax: Int = Board.rowsCount) throws(BoardParseError) {
        var rows: [[Cell]] = []
        var lineNumber = 0
        // "\r\n" is one Character in Swift, so each ending is its own separator.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        for line in lines {
            lineNumber += 1
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            rows.append(try Board.parseRow(line, lineNumber: lineNumber))
            guard rows.count <= min(rowsMax, Board.rowsCount) else {
                throw BoardParseError(kind: .tooManyRows, line: lineNumber, column: 1, rowsMax: rowsMax)
            }
        }
        self.init()
        let missing = Board.rowsCount - rows.count
        for (index, cells) in rows.enumerated() {
            for (column, cell) in cells.enumerated() {
                self[column: column, row: missing + index] = cell
            }
        }
    }

    private static func parseRow(_ line: Substring, lineNumber: Int) throws(BoardParseError) -> [Cell] {
        var cells: [Cell] = []
        for (index, character) in line.enumerated() {
            guard index < columnsCount else { break }
            guard let cell = Cell(letter: character) else {
                throw BoardParseError(kind: .unknownCharacter(character), line: lineNumber, column: index + 1)
            }
            cells.append(cell)
        }
        let width = line.count
        guard width == columnsCount else {
            let column = min(width, columnsCount) + 1
            throw BoardParseError(kind: .wrongWidth(width: width), line: lineNumber, column: column)
        }
        return cells
    }

    /// Every row in notation (15 for `sfe`), top first.
    public var notationRows: [String] { notationRows(rows: Board.rowsCount) }

    /// The bottom `rows` rows in notation (a rule set's ``RuleSet/rows``), top first.
    public func notationRows(rows: Int) -> [String] {
        ((Board.rowsCount - rows)..<Board.rowsCount).map { row in
            String((0..<Board.columnsCount).map { self[column: $0, row: row].letter })
        }
    }

    /// The board in notation: every row, top first, each ending in a newline.
    public var notation: String {
        notationRows.map { $0 + "\n" }.joined()
    }
}

/// The outcome of ``resolveBoard(_:incoming:rules:)``: the chain, the garbage it sends, the ticks
/// from the lock to the next spawn and the final board. (`eggs-tui resolve` prints it as docs/formats.md's
/// JSON with the one JSON encoder of the project.)
public struct ResolveReport: Sendable, Hashable {
    public var rules: RuleSet
    public var chain: ChainResult
    /// Garbage eggs of the incoming count that landed.
    public var garbageLanded: Int
    /// Ticks from the lock to the tick the next pair spawns, by the rule set's timing.
    public var ticks: Int
    public var board: Board

    /// Garbage the resolution sends (before any offsetting).
    public var garbage: Int
    /// The tick of each phase change, the lock being tick 0, in order (`resolve --timeline`).
    public var timeline: [TimelineEntry] = []
}

/// One phase change of a resolution in time: what happened on which tick (the lock is tick 0).
public struct TimelineEntry: Sendable, Hashable {
    public enum Event: String, Sendable, Hashable {
        /// The last landing egg stopped landing.
        case landingEnds = "landing ends"
        /// A chain step popped (its eggs are removed 13 ticks later).
        case pop
        /// The popped eggs (and garbage cleared with them) were removed.
        case removed
        /// A fall pass that moved eggs half a cell.
        case fall
        /// A fall pass that moved nothing: the fall is over and groups are looked for from the
        /// next tick on, once nothing is busy.
        case fallEnds = "fall ends"
        /// The last bouncing column stopped bouncing.
        case bounceEnds = "bounce ends"
        /// The incoming garbage was put on the grid (on the tick the chain ended).
        case garbage
        /// The next pair spawns.
        case spawn
    }

    public var tick: Int
    public var event: Event

    public init(tick: Int, event: Event) {
        self.tick = tick
        self.event = event
    }
}

/// Resolves `board` in time as it is the moment a pair locks (see ``PlayerGrid/init(lockedOnto:rules:speed:)``):
/// everything falls, every chain step resolves, then `incoming` garbage eggs land by the placement
/// rule (a negative count lands none) and the grid waits for the next spawn.
public func resolve(board: Board, incoming: Int, rules: RuleSet = .sfe) -> ResolveReport {
    var grid = PlayerGrid(lockedOnto: board, rules: rules)
    // Every tick either moves an egg, counts a timer down or pops a group, all bounded.
    let ticksMax = 100_000
    var ticks = 0
    var chain = ChainResult()
    var timeline: [TimelineEntry] = []
    func settle() {
        while grid.state == .resolving && ticks < ticksMax {
            let before = (grid.fallPasses, grid.stillPasses, grid.chainStep, grid.popTicksLeft, grid.eggsLanding, grid.columnsBouncing)
            if case .ticked(_, let ended?) = grid.apply(.ticks(1)) { chain = ended }
            // The first tick applied is the lock's own (tick 0).
            let tick = ticks
            ticks += 1
            if before.4 > 0 && grid.eggsLanding == 0 { timeline.append(TimelineEntry(tick: tick, event: .landingEnds)) }
            if before.5 > 0 && grid.columnsBouncing == 0 { timeline.append(TimelineEntry(tick: tick, event: .bounceEnds)) }
            if before.3 > 0 && grid.popTicksLeft == 0 { timeline.append(TimelineEntry(tick: tick, event: .removed)) }
            if grid.fallPasses > before.0 { timeline.append(TimelineEntry(tick: tick, event: .fall)) }
            if grid.stillPasses > before.1 { timeline.append(TimelineEntry(tick: tick, event: .fallEnds)) }
            if grid.chainStep > before.2 { timeline.append(TimelineEntry(tick: tick, event: .pop)) }
        }
    }
    settle()
    let garbage = grid.garbagePending
    var landed = 0
    if incoming > 0, case .garbageLanded(let count) = grid.apply(.landGarbage(incoming)) {
        landed = count
        timeline.append(TimelineEntry(tick: ticks - 1, event: .garbage))
        settle()
    }
    precondition(grid.state == .awaitingSpawn, "a resolution must end")
    timeline.append(TimelineEntry(tick: ticks, event: .spawn))
    return ResolveReport(rules: rules, chain: chain, garbageLanded: landed, ticks: ticks, board: grid.board,
                         garbage: garbage, timeline: timeline)
}

/// Parses board notation and resolves it; see ``resolve(board:incoming:rules:)``.
/// - Throws: ``BoardParseError`` naming the line and column of bad input.
/// Input without a single row (empty or blank) is ``BoardParseError/Kind/noBoard``.
public func resolveBoard(_ text: String, incoming: Int, rules: RuleSet = .sfe) throws(BoardParseError) -> ResolveReport {
    guard text.unicodeScalars.contains(where: { !" \t\n\r".unicodeScalars.contains($0) }) else {
        throw BoardParseError(kind: .noBoard, line: 1, column: 1)
    }
    return resolve(board: try Board(notation: text, rowsMax: rules.rows), incoming: incoming, rules: rules)
}
