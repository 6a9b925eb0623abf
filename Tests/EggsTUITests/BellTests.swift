import EggTestSupport
import Foundation
import Testing
@testable import eggs_tui

/// The optional bell (`--bell`, config `bell = true`): your chain of 3 or more, garbage landing
/// on you, your top-out; off by default.
@Suite("the bell")
struct BellTests {
    static func board(game: UInt32 = 1, resolutions: Int = 0, steps: Int = 0, garbage: Int = 0, out: Bool = false) -> BellWatch.Board {
        BellWatch.Board(game: game, resolutions: resolutions, steps: steps, garbageLanded: garbage, toppedOut: out)
    }

    @Test("it rings once when a chain reaches 3 steps, when garbage lands, at a top-out; never when off, never twice within its spacing")
    func policy() {
        var watch = BellWatch(enabled: true)
        var now: UInt64 = 0
        func step(_ board: BellWatch.Board) -> Bool {
            now += 1_000_000_000
            return watch.observe(board, at: now)
        }
        #expect(!step(Self.board()), "the first look only notes the board")
        #expect(!step(Self.board(steps: 1)) && !step(Self.board(steps: 2)))
        #expect(step(Self.board(steps: 3)), "the chain reached 3")
        #expect(!step(Self.board(steps: 4)), "the same chain goes on: once")
        #expect(!step(Self.board(resolutions: 1, steps: 0)))
        #expect(step(Self.board(resolutions: 1, garbage: 2)), "garbage landed")
        #expect(step(Self.board(resolutions: 1, garbage: 2, out: true)), "topped out")
        #expect(!step(Self.board(game: 2)), "a new game starts afresh")
        #expect(watch.rings == 3)
        // Within the spacing: one ring.
        #expect(watch.observe(Self.board(game: 2, garbage: 1), at: now + 1) == true)
        #expect(watch.observe(Self.board(game: 2, garbage: 2), at: now + 2) == false)
        var off = BellWatch(enabled: false)
        _ = off.observe(Self.board(), at: 0)
        #expect(!off.observe(Self.board(garbage: 5, out: true), at: 1_000_000_000) && off.rings == 0)
    }

    @Test("config bell = true is read; a wrong value names the file and the line")
    func config() throws {
        let config = try Config.parse("bell = true\n", source: "c.toml")
        #expect(config.bell == true)
        #expect(throws: CommandFailure.self) { try Config.parse("name = \"a\"\nbell = \"yes\"\n", source: "c.toml") }
        do {
            _ = try Config.parse("name = \"a\"\nbell = \"yes\"\n", source: "c.toml")
        } catch {
            #expect("\(error)".contains("c.toml: line 2: bell must be true or false"), "\(error)")
        }
    }

    /// Bells rung in a practice match topped out at once by hard drops, counted by a tmux hook.
    static func bellsAtTopOut(arguments: String) throws -> Int {
        let directory = try Harness.temporaryDirectory("bell")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let count = directory + "/bells"
        let session = try TmuxSession(
            command: "\(Harness.binary) play --practice --seed 5 --speed 9 \(arguments); echo EXIT=$?; sleep 60", width: 100, height: 30)
        defer { session.close() }
        _ = try Harness.tmux(session.socket, ["set-option", "-g", "bell-action", "any"])
        _ = try Harness.tmux(session.socket, ["set-option", "-g", "monitor-bell", "on"])
        _ = try Harness.tmux(session.socket, ["set-hook", "-g", "alert-bell", "run-shell 'echo bell >> \(count)'"])
        #expect(session.waitFor("? help") != nil, "the game did not start: \(session.screen())")
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !session.screen().contains("topped out") {
            session.send("Space")
            usleep(100_000)
        }
        #expect(session.screen().contains("topped out"), "never topped out: \(session.screen())")
        usleep(500_000)
        session.send("q")
        session.send("y")
        let text = (try? String(contentsOfFile: count, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").count
    }

    @Test("practice with --bell rings at the top-out; without it, never", .enabled(if: Harness.hasTmux, "tmux is not installed"), .tags(.slow), .slowTier)
    func ringsInPractice() throws {
        #expect(try Self.bellsAtTopOut(arguments: "--bell") >= 1)
        #expect(try Self.bellsAtTopOut(arguments: "") == 0)
    }
}
