import EggGame

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

/// Lays out and draws player panels: full size (two columns a cell) when they fit side by
/// side, otherwise the local grid full size and the others compact, wrapped into rows.
struct MatchView {
    static let fullWidth = 24, compactWidth = 13
    static let panelHeight = 18
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

    /// Where the panels went: the middle row of the area they cover (for a banner over them).
    struct Area {
        var centreRow: Int
    }

    @discardableResult
    static func draw(_ panels: [PlayerPanel], on term: Terminal, glyphs: Glyphs, top: Int) -> Area {
        if panels.count * fullWidth <= term.columns {
            for (index, panel) in panels.enumerated() {
                drawPanel(panel, on: term, glyphs: glyphs, y: top, x: index * fullWidth, compact: false)
            }
            return Area(centreRow: top + panelHeight / 2)
        }
        var rest = panels
        if let local = rest.firstIndex(where: \.isLocal) {
            drawPanel(rest.remove(at: local), on: term, glyphs: glyphs, y: top, x: 0, compact: false)
        } else if !rest.isEmpty {
            drawPanel(rest.removeFirst(), on: term, glyphs: glyphs, y: top, x: 0, compact: false)
        }
        let perRow = max(1, (term.columns - fullWidth) / compactWidth)
        for (index, panel) in rest.enumerated() {
            let y = top + (index / perRow) * panelHeight
            let x = fullWidth + (index % perRow) * compactWidth
            drawPanel(panel, on: term, glyphs: glyphs, y: y, x: x, compact: true)
        }
        return Area(centreRow: top + panelHeight / 2)
    }

    private static func drawPanel(_ panel: PlayerPanel, on term: Terminal, glyphs: Glyphs, y: Int, x: Int, compact: Bool) {
        let cellWidth = compact ? 1 : 2
        let inner = Board.columnsCount * cellWidth
        let title = String(panel.name.prefix(compact ? 11 : 14))
        term.put(y, x, title, pair: panel.isLocal ? Terminal.pairAccent : 0, bold: true)
        if !compact { term.put(y, x + 15, "wins \(panel.wins)") }
        let horizontal = String(repeating: term.unicode ? "─" : "-", count: inner)
        let corner = term.unicode ? ("┌", "┐", "└", "┘", "│") : ("+", "+", "+", "+", "|")
        term.put(y + 1, x, corner.0 + horizontal + corner.1)
        for row in 0..<Board.rowsCount {
            let line = y + 2 + row
            term.put(line, x, corner.4)
            for column in 0..<Board.columnsCount {
                let cell = panel.grid.displayCell(column: column, row: row)
                let text = glyphs.cell(cell) + (compact ? "" : " ")
                term.put(line, x + 1 + column * cellWidth, text, pair: Glyphs.pair(for: cell), bold: cell != .empty)
            }
            term.put(line, x + 1 + inner, corner.4)
        }
        term.put(y + 2 + Board.rowsCount, x, corner.2 + horizontal + corner.3)
        let info = y + 3 + Board.rowsCount
        if compact {
            term.put(info, x, "w\(panel.wins) g\(panel.incomingGarbage)")
        } else {
            term.put(info, x, "garbage \(panel.incomingGarbage)" + (panel.chain > 1 ? "  \(panel.chain)-chain!" : ""),
                     pair: panel.incomingGarbage > 0 ? Terminal.pairAlert : 0)
            drawNext(panel.next, on: term, glyphs: glyphs, y: y + 2, x: x + inner + 3)
        }
        term.put(info + 1, x, String(panel.status.prefix(compact ? 12 : 22)),
                 pair: panel.alert ? Terminal.pairAlert : 0, bold: panel.alert)
    }

    private static func drawNext(_ next: [EggPair], on term: Terminal, glyphs: Glyphs, y: Int, x: Int) {
        term.put(y, x, "next")
        for (index, pair) in next.prefix(2).enumerated() {
            let row = y + 1 + index * 3
            let child = Cell.egg(pair.child), pivot = Cell.egg(pair.pivot)
            term.put(row, x + 1, glyphs.cell(child), pair: Glyphs.pair(for: child), bold: true)
            term.put(row + 1, x + 1, glyphs.cell(pivot), pair: Glyphs.pair(for: pivot), bold: true)
        }
    }
}
