extension PlayerGrid {
    /// Where the live pair's eggs come to rest if it is dropped straight down now (the drop
    /// preview): each egg on top of its column's stack, the lower egg of a vertical pair first.
    /// Empty when no pair is live. The board under a live pair is settled, so the stack tops are
    /// where the eggs end; an egg that would rest above the top row is left out.
    public var dropPreview: [(column: Int, row: Int, color: EggColor)] {
        guard let live = livePair else { return [] }
        // Lower egg first, so the upper egg of a vertical pair rests on it.
        let eggs = live.eggs.sorted { $0.halfRow > $1.halfRow }
        var tops = (0..<Board.columnsCount).map { board.topOccupiedRow(column: $0) }
        var cells: [(column: Int, row: Int, color: EggColor)] = []
        for egg in eggs {
            let row = tops[egg.column] - 1
            guard row >= 0 else { continue }
            cells.append((egg.column, row, egg.color))
            tops[egg.column] = row
        }
        return cells
    }
}
