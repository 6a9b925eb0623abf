import EggGame
import Testing
@testable import eggs_tui

/// Landing bounces: a landing egg is drawn squashed (underlined) for the first half of its
/// landing, and a column's garbage for the first half of its bounce, by the grid's own timers.
@Suite("landing bounces")
struct BounceTests {
    @Test("the locked pair's eggs are squashed for the first 8 of their 15 landing ticks, then rest")
    func pairLanding() {
        var grid = PlayerGrid()
        _ = grid.apply(.spawn(EggPair(pivot: .red, child: .blue)))
        _ = grid.apply(.move(.hardDrop))
        let bottom = Board.rowsCount - 1
        var squashed: [Bool] = []
        for _ in 0..<16 {
            let activity = GridActivity(grid: grid, queuedGarbage: 0, lastChain: 0)
            squashed.append(activity.isBouncing(column: 2, row: bottom) && activity.isBouncing(column: 3, row: bottom))
            #expect(!activity.isBouncing(column: 0, row: bottom), "an empty cell bounced")
            _ = grid.apply(.ticks(1))
        }
        #expect(squashed == Array(repeating: true, count: 8) + Array(repeating: false, count: 8), "\(squashed)")
    }

    @Test("garbage that lands makes its column's garbage bounce, then rest")
    func garbageBounce() {
        var grid = PlayerGrid()
        _ = grid.apply(.landGarbage(6))
        var seen = false
        for _ in 0..<200 {
            _ = grid.apply(.ticks(1))
            let activity = GridActivity(grid: grid, queuedGarbage: 0, lastChain: 0)
            if (0..<Board.columnsCount).contains(where: { activity.isBouncing(column: $0, row: Board.rowsCount - 1) }) { seen = true }
        }
        #expect(seen, "no garbage bounce drawn")
        let activity = GridActivity(grid: grid, queuedGarbage: 0, lastChain: 0)
        #expect(!(0..<Board.columnsCount).contains(where: { activity.isBouncing(column: $0, row: Board.rowsCount - 1) }), "garbage still bounces at rest")
        #expect(grid.board[column: 0, row: Board.rowsCount - 1] == .garbage)
    }
}

/// Long names (up to 24 bytes) in the results table: whole where the terminal is wide enough.
@Suite("long names in the results")
struct LongNameResultsTests {
    @Test("the player column grows to the longest name beyond 80 columns; at 80 a long name ends in …, and every line fits")
    func widths() {
        let long = "abcdefghijklmnopqrstuvw1"
        let results = MatchResults(headline: "You win the match!", won: true, games: 1, seconds: 60,
                                   players: [PlayerTally(name: long, isLocal: true), PlayerTally(name: "bob", isLocal: false)])
        let narrow = results.tableLines(columns: 80)
        #expect(narrow.allSatisfy { $0.count <= 80 }, "\(narrow)")
        #expect(narrow[1].hasPrefix(String(long.prefix(15)) + "… "), "\(narrow[1])")
        let wide = results.tableLines(columns: 100)
        #expect(wide[1].hasPrefix(long + " "), "\(wide[1])")
        #expect(wide.allSatisfy { $0.count <= 88 }, "\(wide)")
        #expect(wide[2].hasPrefix("bob" + String(repeating: " ", count: 21) + " "), "the names line up: \(wide)")
    }
}
