@testable import EggGame

/// A frame-by-frame re-statement of Super Foul Egg's grid runner (its `SZLocalGridRunner`,
/// `SZGrid` and `SZEggSpriteConnector`), written from reading that code, for checking the
/// engine's `sfe` timing against it. It shares nothing with the engine but ``Board`` as input
/// and output.
///
/// One frame: the grid's iterate (remove exploded eggs; is any egg exploding, landing or
/// recovering?), the runner's timer counts up, the runner acts by its state, then every egg's
/// animation advances one frame (landing ends after 15 updates, an explosion after 13, a garbage
/// hit's recovery after 17).
struct SfeRunnerModel {
    enum EggState { case normal, falling, landing, exploding, exploded, recovering }
    struct Egg {
        var cell: Cell
        var state: EggState = .normal
        var half = false
        /// The animation's frame counter (reset when landing, exploding or hit by garbage starts).
        var timer = 0
    }
    enum RunnerState { case drop, dropGarbage, landing, exploding, waitingForNewEgg }

    static let width = 6
    /// Rows 0–14 and SFE's row of bottom eggs (15), which is the floor.
    static let height = 16

    private var grid: [Egg?] = Array(repeating: nil, count: width * height)
    private var state = RunnerState.drop
    private var timer = 0
    private var incoming: Int
    /// Frames since the lock (the lock is frame 0).
    private(set) var frame = 0
    private(set) var chainSteps: [Int] = []
    /// Whether anything fell on the first fall pass after the lock.
    private(set) var firstPassDropped: Bool?

    /// SFE at the frame after a pair locked onto `board` (frame 1: the runner turns from live to
    /// dropping; its timer was reset by the lock's drop step on frame 0). The board's eggs are at
    /// rest (none landing); unsupported ones fall on the first pass.
    init(board: Board, incoming: Int) {
        for x in 0..<Self.width {
            for y in 0..<Board.rowsCount where board[column: x, row: y] != .empty {
                grid[x + y * Self.width] = Egg(cell: board[column: x, row: y])
            }
            grid[x + (Self.height - 1) * Self.width] = Egg(cell: .empty)
        }
        self.incoming = incoming
        // Frame 1 counts the timer to 1 and turns the runner to drop (nothing else happens on it).
        frame = 1
        timer = 0
        state = .drop
    }

    private func at(_ x: Int, _ y: Int) -> Egg? {
        guard (0..<Self.width).contains(x), (0..<Self.height).contains(y) else { return nil }
        return grid[x + y * Self.width]
    }

    /// Runs frames until the next pair would spawn; returns that frame (counted from the lock).
    mutating func runUntilSpawn(limit: Int = 20_000) -> Int? {
        while frame < limit {
            if step() { return frame }
            frame += 1
        }
        return nil
    }

    /// One frame; true when the runner spawns the next pair on it.
    private mutating func step() -> Bool {
        let iterated = iterateGrid()
        timer += 1
        switch state {
        case .waitingForNewEgg:
            return true
        case .dropGarbage:
            timer = 0
            if !dropEggs() { state = .landing }
        case .drop:
            if timer >= 2 {
                timer = 0
                let dropped = dropEggs()
                if firstPassDropped == nil { firstPassDropped = dropped }
                if !dropped { state = .landing }
            }
        case .landing:
            if !iterated { land() }
        case .exploding:
            if !iterated { state = .drop }
        }
        updateAnimations()
        return false
    }

    private mutating func iterateGrid() -> Bool {
        var result = false
        for index in 0..<(Self.width * (Self.height - 1)) {
            guard let egg = grid[index] else { continue }
            switch egg.state {
            case .exploded:
                grid[index] = nil
                result = true
            case .exploding, .landing, .recovering:
                result = true
            default:
                break
            }
        }
        return result
    }

    private mutating func updateAnimations() {
        for index in grid.indices {
            guard var egg = grid[index] else { continue }
            switch egg.state {
            case .exploding:
                // Frames 16…21, one every 2 updates; on the update after the last one it is exploded.
                if egg.timer == 12 { egg.state = .exploded }
                egg.timer += 1
            case .landing:
                if egg.timer == 14 { egg.state = .normal }
                egg.timer += 1
            case .recovering:
                if egg.timer % 2 == 0 && egg.timer >= 16 { egg.state = .normal }
                egg.timer += 1
            default:
                break
            }
            grid[index] = egg
        }
    }

    private mutating func hitColumn(_ x: Int) {
        for y in 0..<Self.height {
            guard var egg = at(x, y) else { continue }
            guard egg.state == .normal || egg.state == .landing || egg.state == .recovering else { continue }
            egg.timer = 0
            egg.state = .recovering
            grid[x + y * Self.width] = egg
        }
    }

    /// One fall pass, bottom row first; true when any egg moved.
    private mutating func dropEggs() -> Bool {
        var dropped = false
        for y in stride(from: Self.height - 2, through: 0, by: -1) {
            for x in 0..<Self.width {
                guard var egg = at(x, y) else { continue }
                if at(x, y + 1) == nil {
                    // The second half of a cell moves the egg down a row; either half starts it falling.
                    egg.state = .falling
                    if egg.half {
                        egg.half = false
                        grid[x + y * Self.width] = nil
                        grid[x + (y + 1) * Self.width] = egg
                    } else {
                        egg.half = true
                        grid[x + y * Self.width] = egg
                    }
                    dropped = true
                } else if egg.state == .falling, at(x, y + 1)!.state != .falling {
                    egg.state = .landing
                    egg.timer = 0
                    grid[x + y * Self.width] = egg
                    if egg.cell == .garbage { hitColumn(x) }
                }
            }
        }
        return dropped
    }

    private mutating func land() {
        var popped = 0
        var exploding = Set<Int>()
        var seen = Set<Int>()
        for y in 0..<(Self.height - 1) {
            for x in 0..<Self.width {
                guard !seen.contains(x + y * Self.width), let egg = at(x, y), case .egg(let colour) = egg.cell else { continue }
                var group = [(x, y)]
                seen.insert(x + y * Self.width)
                var index = 0
                while index < group.count {
                    let (gx, gy) = group[index]
                    index += 1
                    for (dx, dy) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
                        let nx = gx + dx, ny = gy + dy
                        guard ny < Self.height - 1, let other = at(nx, ny), other.cell == .egg(colour),
                              !seen.contains(nx + ny * Self.width) else { continue }
                        seen.insert(nx + ny * Self.width)
                        group.append((nx, ny))
                    }
                }
                guard group.count >= 4 else { continue }
                popped += group.count
                for (gx, gy) in group {
                    exploding.insert(gx + gy * Self.width)
                    for (dx, dy) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
                        let nx = gx + dx, ny = gy + dy
                        if ny < Self.height - 1, let other = at(nx, ny), other.cell == .garbage, other.state == .normal {
                            exploding.insert(nx + ny * Self.width)
                        }
                    }
                }
            }
        }
        if popped > 0 {
            for index in exploding {
                grid[index]!.state = .exploding
                grid[index]!.timer = 0
            }
            chainSteps.append(popped)
            state = .exploding
        } else if incoming > 0 {
            addGarbage(incoming)
            incoming = 0
            state = .dropGarbage
        } else {
            state = .waitingForNewEgg
        }
    }

    /// SFE's two-player placement: columns by height (ties: the higher index first), level by level,
    /// each egg in the topmost empty cell of rows 0–12, placed at rest (not falling).
    private mutating func addGarbage(_ total: Int) {
        var count = total
        var heights: [Int] = []
        var columns: [Int] = []
        for x in 0..<Self.width {
            var h = 0
            for y in stride(from: Self.height - 2, through: 0, by: -1) {
                if let egg = at(x, y), egg.state == .normal { h += 1 } else { break }
            }
            let insert = heights.firstIndex { h <= $0 } ?? heights.count
            heights.insert(h, at: insert)
            columns.insert(x, at: insert)
        }
        var active = 1
        var level = heights[0]
        while count > 0 {
            let before = count
            while active < Self.width && heights[active] <= level { active += 1 }
            for i in 0..<active {
                var y = 0
                while at(columns[i], y) != nil && y < 13 { y += 1 }
                if y == 13 { continue }
                grid[columns[i] + y * Self.width] = Egg(cell: .garbage)
                count -= 1
                if count == 0 { break }
            }
            if before == count { return }
            level += 1
        }
    }

    /// The eggs in rows 0–14 (for checking the final board).
    var board: Board {
        var board = Board()
        for x in 0..<Self.width {
            for y in 0..<Board.rowsCount {
                if let egg = at(x, y) { board[column: x, row: y] = egg.cell }
            }
        }
        return board
    }
}
