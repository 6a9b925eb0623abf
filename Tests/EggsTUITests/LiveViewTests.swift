import EggTestSupport
import Foundation
import Testing

/// A spectator joining a match in progress, in tmux (multicast on 127.0.0.1).
@Suite("live view in tmux", .serialized, .tags(.slow), .slowTier, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"))
struct LiveViewTests {
    /// The grid rows of every board on `screen` (the lines between the top and bottom borders).
    static func boardCells(_ screen: String) -> String {
        screen.split(separator: "\n").filter { $0.contains("│") }.joined(separator: "\n")
    }

    @Test("a spectator joining mid-game draws both players' grids at once, and they move on, falling pairs and all")
    func spectatorSeesGridsMidGame() throws {
        let port = TestPorts.next()
        let state = try Harness.temporaryDirectory("late-join")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let network = "--interface 127.0.0.1 --port \(port) --room late-\(port)"
        let bots = try TmuxSession(
            command: "\(Harness.binary) bot \(network) --count 2 --players 2 --games 3 --speed 9 --level medium --seconds 60; echo EXIT=$?; sleep 60",
            environment: ["XDG_STATE_HOME": state])
        defer { bots.close() }
        // The bots start at once (both ready when both are there); let their first game fill up.
        usleep(6_000_000)
        let watcher = try TmuxSession(
            command: "\(Harness.binary) play \(network) --spectate --name late; echo EXIT=$?; sleep 60",
            environment: ["XDG_STATE_HOME": state])
        defer { watcher.close() }
        // The game in progress is drawn, both grids, marked as watched from the middle of it.
        let first = try #require(watcher.waitFor("joined mid-game", seconds: 20), "no grids of the game in progress: \(watcher.screen())")
        #expect(!first.contains("in progress"), "\(first)")
        #expect(first.components(separatedBy: "┌" + String(repeating: "─", count: 12) + "┐").count == 3
                    || first.components(separatedBy: "┌").count >= 3, "two boards expected: \(first)")
        let cells = Self.boardCells(first)
        #expect(cells.contains(where: { "●■▲◆♣✚▒".contains($0) }), "the grids are empty: \(first)")
        // Pairs spawn on: the pictures follow.
        var moved = false
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && !moved {
            usleep(250_000)
            let now = watcher.screen()
            moved = now.contains("joined mid-game") && Self.boardCells(now) != cells
        }
        #expect(moved, "the grids never changed: \(watcher.screen())")
        // Between spawns too: the falling pairs are drawn where they are. Two medium bots spawn
        // at most 1.25 pairs a second each: pictures sent only at spawns gave 6 and 7 different
        // boards in 3 s (10 in 4 s at the very most); following the pairs gave 16 in 3 s.
        var boards: Set<String> = []
        let watchEnd = Date().addingTimeInterval(4)
        while Date() < watchEnd {
            let now = watcher.screen()
            if now.contains("joined mid-game") { boards.insert(Self.boardCells(now)) }
            usleep(40_000)
        }
        #expect(boards.count >= 12, "\(boards.count) different boards in 4 s: \(watcher.screen())")
        watcher.send("q")
        #expect(watcher.waitFor("EXIT=0") != nil, "the spectator did not exit cleanly: \(watcher.screen())")
    }
}
