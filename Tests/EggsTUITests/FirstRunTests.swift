import EggTestSupport
import Foundation
import Testing

/// The first run (no config file yet): one screen of "how to play" before the game, once.
@Suite("first run in tmux", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"), .tags(.slow), .slowTier)
struct FirstRunTests {
    @Test("the first run shows how to play (rules and keys) before the game, writes a config file of comments, and never again; at 80x24 nothing is cut")
    func firstRunOnce() throws {
        let home = try Harness.temporaryDirectory("first-run")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let config = home + "/config/eggs/config.toml"
        let env = ["XDG_CONFIG_HOME": home + "/config", "XDG_STATE_HOME": home + "/state", "XDG_DATA_HOME": home + "/data"]
        let command = "\(Harness.binary) play --practice --seed 5 --keys 'hard-drop=w' --name newcomer; echo EXIT=$?; sleep 60"
        let first = try TmuxSession(command: command, width: 80, height: 24, environment: env)
        defer { first.close() }
        let shown = try #require(first.waitFor("Press any key to go on."), "no how-to-play screen: \(first.screen())")
        let text = HelpOverlayTests.joined(shown)
        for phrase in ["how to play", "Four or more eggs of one colour", "chain", "garbage", "You lose", "w hard drop", "? shows the keys"] {
            #expect(text.contains(phrase), "the first-run screen lacks '\(phrase)': \(shown)")
        }
        for line in shown.split(separator: "\n", omittingEmptySubsequences: false) {
            #expect(line.count < 80, "a line reaches the last column (cut?): \(line)")
        }
        #expect(!FileManager.default.fileExists(atPath: config), "the config is written only once the screen was read")
        first.send("x")
        #expect(first.waitFor("? help") != nil, "the practice match did not follow: \(first.screen())")
        #expect(FileManager.default.fileExists(atPath: config), "no config file after the first run")
        first.send("q")
        first.send("y")
        #expect(first.waitFor("EXIT=0") != nil, "screen: \(first.screen())")
        first.close()

        let second = try TmuxSession(command: command, width: 80, height: 24, environment: env)
        defer { second.close() }
        #expect(second.waitFor("? help") != nil, "the second run did not go straight to the game: \(second.screen())")
        #expect(!second.screen().contains("how to play"))
        second.send("q")
        second.send("y")
        #expect(second.waitFor("EXIT=0") != nil, "screen: \(second.screen())")
    }
}
