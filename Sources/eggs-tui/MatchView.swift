import EggGame
import PeerNetUDP

/// What the screen shows of one player: built by practice, network play and replay alike.
struct PlayerPanel {
    var name: String
    var grid: PlayerGrid
    var next: [EggPair]
    var wins: Int
    var incomingGarbage: Int
    /// The chain the player's last lock made (shown while it is fresh).
    var chain: Int
    /// A short status under the grid: "you", "out", "gone", "desync!", "12 ms 0% loss".
    var status: String
    var isLocal: Bool
    var alert: Bool = false
    /// The chain in time and the garbage tray (`nil`: read from `grid`, `incomingGarbage`, `chain`).
    var activity: (any BoardActivity)? = nil
    /// The drop preview: where the live pair's eggs would rest (drawn hollow in empty cells).
    var preview: [(column: Int, row: Int, color: EggColor)] = []
}

/// Glyphs for cells: one per colour, so the game reads without colour too.
struct Glyphs {
    let unicode: Bool

    func egg(_ color: EggColor) -> String {
        guard unicode else { return String(color.letter) }
        switch color {
        case .red: return "●"
        case .blue: return "■"
        case .yellow: return "▲"
        case .purple: return "◆"
        case .green: return "♣"
        case .orange: return "✚"
        }
    }

    /// The drop preview's glyph for `color`: the egg's glyph hollow (lower case without Unicode).
    func ghost(_ color: EggColor) -> String {
        guard unicode else { return String(color.letter).lowercased() }
        switch color {
        case .red: return "○"
        case .blue: return "□"
        case .yellow: return "△"
        case .purple: return "◇"
        case .green: return "♧"
        case .orange: return "✛"
        }
    }

    func cell(_ cell: Cell) -> String {
        switch cell {
        case .empty: return unicode ? "·" : "."
        case .garbage: return unicode ? "▒" : "#"
        case .egg(let color): return egg(color)
        }
    }

    static func pair(for cell: Cell) -> Int32 {
        switch cell {
        case .empty: return 0
        case .garbage: return Terminal.pairGarbage
        case .egg(let color):
            switch color {
            case .red: return Terminal.pairRed
            case .blue: return Terminal.pairBlue
            case .yellow: return Terminal.pairYellow
            case .purple: return Terminal.pairPurple
            case .green: return Terminal.pairGreen
            case .orange: return Terminal.pairOrange
            }
        }
    }
}

/// Lays out and draws player panels: full size (two columns a cell, or 4×2 characters a cell
/// when the terminal is large enough) side by side and centred when they fit, otherwise the
/// local grid full size and the others compact, wrapped into rows.
struct MatchView {
    static let fullWidth = 24, compactWidth = 13
    static let panelHeight = 18
    /// With large cells (4×2 characters an egg).
    static let largeWidth = 36, largePanelHeight = 30
    /// The smallest terminal any layout needs: one full panel plus one compact one.
    static let minimumColumns = fullWidth + compactWidth, minimumRows = panelHeight + 3

    /// Whether `count` panels fit on a terminal of the given size.
    static func fits(count: Int, columns: Int, rows: Int) -> Bool {
        guard columns >= minimumColumns, rows >= minimumRows else { return false }
        if count * fullWidth <= columns { return true }
        let perRow = max(1, (columns - fullWidth) / compactWidth)
        let rowsNeeded = (count - 1 + perRow - 1) / perRow
        return rowsNeeded * panelHeight + 3 <= rows
    }

    /// Whether `count` panels get large cells on a terminal of the given size (below `top`, with
    /// two rows kept for the status and key lines).
    static func large(count: Int, columns: Int, rows: Int, top: Int) -> Bool {
        count * largeWidth <= columns && top + largePanelHeight + 2 <= rows
    }

    /// Where the panels went: the middle row of the area they cover (for a banner over them).
    struct Area {
        var centreRow: Int
    }

    /// Cell size in characters.
    struct CellSize {
        var width: Int
        var height: Int
        static let compact = CellSize(width: 1, height: 1)
        static let normal = CellSize(width: 2, height: 1)
        static let large = CellSize(width: 4, height: 2)
    }

    @discardableResult
    static func draw(_ panels: [PlayerPanel], on term: Terminal, glyphs: Glyphs, top: Int) -> Area {
        if panels.count * fullWidth <= term.columns {
            let large = large(count: panels.count, columns: term.columns, rows: term.rows, top: top)
            let width = large ? largeWidth : fullWidth, height = large ? largePanelHeight : panelHeight
            // Centred: the last panel's right gap does not count.
            let used = panels.count * width - (width - (large ? 34 : 22))
            let left = max(0, (term.columns - used) / 2)
            let spare = term.rows - 2 - top - (height - 1)
            let y = top + max(0, spare / 2)
            for (index, panel) in panels.enumerated() {
                drawPanel(panel, on: term, glyphs: glyphs, y: y, x: left + index * width, cell: large ? .large : .normal)
            }
            return Area(centreRow: y + height / 2)
        }
        var rest = panels
        if let local = rest.firstIndex(where: \.isLocal) {
            drawPanel(rest.remove(at: local), on: term, glyphs: glyphs, y: top, x: 0, cell: .normal)
        } else if !rest.isEmpty {
            drawPanel(rest.removeFirst(), on: term, glyphs: glyphs, y: top, x: 0, cell: .normal)
        }
        let perRow = max(1, (term.columns - fullWidth) / compactWidth)
        for (index, panel) in rest.enumerated() {
            let y = top + (index / perRow) * panelHeight
            let x = fullWidth + (index % perRow) * compactWidth
            drawPanel(panel, on: term, glyphs: glyphs, y: y, x: x, cell: .compact)
        }
        return Area(centreRow: top + panelHeight / 2)
    }

    /// What the board's top edge shows over one column.
    enum EdgeMark: Hashable {
        /// This many eggs in the column's rows above the board, where only garbage goes (`sfe`'s
        /// rows 0–2): resting there or falling through.
        case above(Int)
        /// An icon of the garbage tray (garbage queued against the player).
        case tray(TrayIcon)
        case none

        var isAbove: Bool { if case .above = self { true } else { false } }

        /// The text over a cell `width` characters wide (nil: the plain edge). Garbage above the
        /// board is its glyph and, where there is room, how many: `▒2` (2 wide), `▒▒──` (4 wide).
        func text(width: Int, glyphs: Glyphs) -> String? {
            let edge = glyphs.unicode ? "─" : "-"
            switch self {
            case .none: return nil
            case .tray(let icon):
                let glyph = icon.glyph(unicode: glyphs.unicode)
                return width == 1 ? glyph : glyph + String(repeating: edge, count: width - 1)
            case .above(let count):
                let glyph = glyphs.cell(.garbage)
                switch width {
                case 1: return glyph
                case 2: return glyph + String(min(count, 9))
                default:
                    let shown = min(count, width)
                    return String(repeating: glyph, count: shown) + String(repeating: edge, count: width - shown)
                }
            }
        }
    }

    /// The top edge of a board, column by column: garbage in the rows above the board where a
    /// column holds any (the rule set's garbage-only rows; `tsu` has none, its hidden row stays
    /// hidden), and the tray's icons for `queuedGarbage`, largest first, in the other columns
    /// from the left.
    static func topEdge(grid: PlayerGrid, queuedGarbage: Int) -> [EdgeMark] {
        let rows = grid.rules.topRow..<grid.rules.pairTopRow
        var marks: [EdgeMark] = (0..<Board.columnsCount).map { column in
            let count = rows.filter { grid.displayCell(column: column, row: $0) != .empty }.count
            return count > 0 ? .above(count) : .none
        }
        let free = marks.indices.filter { marks[$0] == .none }
        for (column, icon) in zip(free, TrayIcon.icons(for: queuedGarbage, limit: free.count)) { marks[column] = .tray(icon) }
        return marks
    }

    /// Popping eggs flash: reversed on every other eighth of a second.
    static func flashOn(at nanoseconds: UInt64 = MonotonicClock.now().nanoseconds) -> Bool {
        (nanoseconds / 125_000_000) % 2 == 0
    }

    /// The text of one cell, `cell.width` characters, for row `line` of its `cell.height` rows.
    static func cellText(_ cell: Cell, glyphs: Glyphs, size: CellSize, line: Int) -> String {
        switch size.width {
        case 1: return glyphs.cell(cell)
        case 2: return glyphs.cell(cell) + " "
        default:
            let glyph = glyphs.cell(cell)
            if cell == .empty { return line == size.height - 1 ? " " + glyph + "  " : "    " }
            return String(repeating: glyph, count: size.width - 1) + " "
        }
    }

    /// The text of a drop-preview cell: the hollow glyph where an egg's glyph would be.
    static func ghostText(_ color: EggColor, glyphs: Glyphs, size: CellSize, line: Int) -> String {
        let glyph = glyphs.ghost(color)
        switch size.width {
        case 1: return glyph
        case 2: return glyph + " "
        default: return line == size.height - 1 ? " " + glyph + "  " : "    "
        }
    }

    private static func drawPanel(_ panel: PlayerPanel, on term: Terminal, glyphs: Glyphs, y: Int, x: Int, cell size: CellSize) {
        let compact = size.width == 1
        let inner = Board.columnsCount * size.width
        // The name over the whole panel (its wins are under the board), "…" when it is cut.
        let room = compact ? compactWidth - 2 : inner + 10
        let title = panel.name.count <= room ? panel.name : String(panel.name.prefix(room - 1)) + "…"
        term.put(y, x, title, pair: panel.isLocal ? Terminal.pairAccent : 0, bold: true)
        let horizontal = String(repeating: term.unicode ? "─" : "-", count: inner)
        let corner = term.unicode ? ("┌", "┐", "└", "┘", "│") : ("+", "+", "+", "+", "|")
        term.put(y + 1, x, corner.0 + horizontal + corner.1)
        let activity = panel.activity ?? GridActivity(grid: panel.grid, queuedGarbage: panel.incomingGarbage, lastChain: panel.chain)
        // The board's top edge: garbage in the rows above the board (sfe's rows 0–2) where it is,
        // the garbage tray's icons in the other columns.
        for (column, mark) in topEdge(grid: panel.grid, queuedGarbage: activity.queuedGarbage).enumerated() {
            guard let text = mark.text(width: size.width, glyphs: glyphs) else { continue }
            term.put(y + 1, x + 1 + column * size.width, text, pair: mark.isAbove ? Terminal.pairGarbage : Terminal.pairAlert, bold: true)
        }
        let flashOn = Self.flashOn()
        for (shown, row) in Board.visibleRows.enumerated() {
            for part in 0..<size.height {
                let line = y + 2 + shown * size.height + part
                term.put(line, x, corner.4)
                for column in 0..<Board.columnsCount {
                    let cell = panel.grid.displayCell(column: column, row: row)
                    if cell == .empty, let ghost = panel.preview.first(where: { $0.column == column && $0.row == row }) {
                        term.put(line, x + 1 + column * size.width, ghostText(ghost.color, glyphs: glyphs, size: size, line: part),
                                 pair: Glyphs.pair(for: .egg(ghost.color)))
                        continue
                    }
                    let popping = cell != .empty && activity.isPopping(column: column, row: row)
                    let bouncing = cell != .empty && !popping && activity.isBouncing(column: column, row: row)
                    term.put(line, x + 1 + column * size.width, cellText(cell, glyphs: glyphs, size: size, line: part),
                             pair: Glyphs.pair(for: cell), bold: cell != .empty, reverse: popping && flashOn, underline: bouncing)
                }
                term.put(line, x + 1 + inner, corner.4)
            }
        }
        let bottom = y + 2 + Board.visibleRows.count * size.height
        term.put(bottom, x, corner.2 + horizontal + corner.3)
        let info = bottom + 1
        if compact {
            term.put(info, x, "w\(panel.wins) g\(panel.incomingGarbage)")
        } else {
            term.put(info, x, "garbage \(activity.queuedGarbage)", pair: activity.queuedGarbage > 0 ? Terminal.pairAlert : 0)
            term.put(info, x + inner + 3, "wins \(panel.wins)")
            drawNext(panel.next, on: term, glyphs: glyphs, y: y + 2, x: x + inner + 3, size: size)
            // The chain counter by the board, and the garbage the chain sends so far.
            if activity.chainStep > 1 {
                let row = y + 2 + (size.height == 2 ? 14 : 8)
                term.put(row, x + inner + 3, "\(activity.chainStep)-chain!", pair: Terminal.pairAccent, bold: true)
                if activity.chainGarbage > 0 { term.put(row + 1, x + inner + 3, "+\(activity.chainGarbage)", pair: Terminal.pairAlert, bold: true) }
            }
        }
        term.put(info + 1, x, String(panel.status.prefix(compact ? 12 : 22)),
                 pair: panel.alert ? Terminal.pairAlert : 0, bold: panel.alert)
    }

    private static func drawNext(_ next: [EggPair], on term: Terminal, glyphs: Glyphs, y: Int, x: Int, size: CellSize) {
        term.put(y, x, "next")
        let eggSize = size.width == 4 ? size : CellSize.compact
        for (index, pair) in next.prefix(2).enumerated() {
            let row = y + 1 + index * 3 * eggSize.height
            for (offset, egg) in [Cell.egg(pair.child), Cell.egg(pair.pivot)].enumerated() {
                for part in 0..<eggSize.height {
                    term.put(row + offset * eggSize.height + part, x + 1, cellText(egg, glyphs: glyphs, size: eggSize, line: part),
                             pair: Glyphs.pair(for: egg), bold: true)
                }
            }
        }
    }
}
