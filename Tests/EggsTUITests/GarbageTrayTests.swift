import EggTestSupport
import Foundation
import Testing

/// The garbage tray above each board, in tmux.
@Suite("garbage tray in tmux", .serialized, .tags(.slow), .slowTier, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"))
struct GarbageTrayTests {
    @Test("garbage queued against the idle player shows in the tray above its board")
    func garbageTray() throws {
        let session = try TmuxSession(
            command: "\(Harness.binary) play --practice --seed 3 --level insane --speed 3 --name idle; echo EXIT=$?; sleep 60")
        defer { session.close() }
        // The insane bot chains against a player who does nothing: tray icons (•, ●, ★) appear on
        // the top edge of the left board while the garbage is queued.
        var tray: String?
        let deadline = Date().addingTimeInterval(40)
        while Date() < deadline && tray == nil {
            let screen = session.screen()
            let top = screen.split(separator: "\n").first { $0.contains("┌") }.map(String.init) ?? ""
            let left = top.split(separator: "┐").first.map(String.init) ?? ""
            if left.contains(where: { "•●★".contains($0) }) { tray = screen }
            usleep(100_000)
        }
        let shown = try #require(tray, "no tray icons appeared: \(session.screen())")
        // The tray and the counter agree: "garbage N" under the board is what the icons add up to.
        let top = shown.split(separator: "\n").first { $0.contains("┌") }.map(String.init) ?? ""
        let left = top.split(separator: "┐").first.map(String.init) ?? ""
        let icons = left.reduce(0) { $0 + ($1 == "★" ? 30 : $1 == "●" ? 6 : $1 == "•" ? 1 : 0) }
        let counter = shown.split(separator: "\n").first { $0.contains("garbage ") }.map(String.init) ?? ""
        let queued = Int(counter.split(separator: " ").dropFirst().first { Int($0) != nil } ?? "") ?? -1
        #expect(queued > 0 && (icons == queued || (queued >= 6 && icons <= queued)), "tray \(icons) vs garbage \(queued): \(shown)")
        session.send("q")
        session.send("y")
    }
}
