import EggTestSupport
import Foundation
import PeerNet
import Testing
@testable import eggs_tui

/// Stalls are failures (docs/playing.md and docs/network.md): the bot's stall watch, and a lone bot over a real socket on
/// 127.0.0.1.
@Suite("stalls", .tags(.slow), .slowTier)
struct StallTests {
    static let second: UInt64 = 1_000_000_000

    static func at(_ seconds: Double) -> NetTime { NetTime(nanoseconds: UInt64(seconds * 1e9)) }

    @Test("the watch fails a bot that never formed a group within 15 s, and only then")
    func neverFormedAGroup() {
        var watch = StallWatch(start: .zero)
        let alone = StallWatch.Sample(inGroup: false, expectsProgress: false, progress: 3)
        for t in stride(from: 0.0, through: 14.9, by: 0.1) { #expect(watch.observe(alone, now: Self.at(t)) == nil) }
        #expect(watch.observe(alone, now: Self.at(15)) == "never formed a group with another peer within 15 s")
        // A group formed once (even if it later shrank) is not this failure.
        var joined = StallWatch(start: .zero)
        #expect(joined.observe(StallWatch.Sample(inGroup: true, expectsProgress: false, progress: 0), now: Self.at(1)) == nil)
        #expect(joined.observe(alone, now: Self.at(30)) == nil)
    }

    @Test("the watch fails a bot whose match delivered nothing for 10 s, not one that waits in the lobby or keeps progressing")
    func nothingProgressed() {
        var watch = StallWatch(start: .zero)
        var progress: UInt64 = 0
        // Progressing for a minute: fine.
        for t in stride(from: 0.0, through: 60, by: 0.1) {
            progress += 1
            #expect(watch.observe(StallWatch.Sample(inGroup: true, expectsProgress: true, progress: progress), now: Self.at(t)) == nil)
        }
        // Idle in the lobby (no progress expected) for a minute: fine.
        for t in stride(from: 60.1, through: 120, by: 0.1) {
            #expect(watch.observe(StallWatch.Sample(inGroup: true, expectsProgress: false, progress: progress), now: Self.at(t)) == nil)
        }
        // In a match and nothing delivered: fails at 10 s, not before.
        let stuck = StallWatch.Sample(inGroup: true, expectsProgress: true, progress: progress)
        for t in stride(from: 120.1, through: 129.5, by: 0.1) { #expect(watch.observe(stuck, now: Self.at(t)) == nil) }
        #expect(watch.observe(stuck, now: Self.at(130.5)) == "players were present and nothing progressed for 10 s")
    }

    @Test("a pause of the process (samples 20 s apart) starts the stall clock again; nothing after it still fails at 10 s")
    func pauseIsNoStall() {
        var watch = StallWatch(start: .zero)
        let stuck = StallWatch.Sample(inGroup: true, expectsProgress: true, progress: 5)
        for t in stride(from: 0.0, through: 5, by: 0.1) { #expect(watch.observe(stuck, now: Self.at(t)) == nil) }
        // SIGSTOP at 5 s, SIGCONT at 25 s: the first sample after it is no stall.
        #expect(watch.observe(stuck, now: Self.at(25)) == nil)
        #expect(watch.pauses == 1)
        for t in stride(from: 25.1, through: 34.8, by: 0.1) { #expect(watch.observe(stuck, now: Self.at(t)) == nil) }
        #expect(watch.observe(stuck, now: Self.at(35.1)) == "players were present and nothing progressed for 10 s")
    }

    @Test("a lone bot waiting for 2 players exits 1 after about 15 s, naming that it never formed a group")
    func loneBotExitsOne() throws {
        let directory = try Harness.temporaryDirectory("lone")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = TestPorts.next()
        let started = Date()
        let result = try Harness.run(
            ["bot", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "lone-\(port)", "--players", "2",
             "--seconds", "60", "--log", "\(directory)/lone.jsonl", "--summary", "\(directory)/lone.json"],
            timeoutSeconds: 45)
        let took = Date().timeIntervalSince(started)
        #expect(result.status == 1, "exit \(result.status): \(result.stderr)")
        #expect(result.stderr.contains("never formed a group with another peer within 15 s"), "\(result.stderr)")
        #expect(took >= 14.5 && took < 25, "exited after \(took) s")
        #expect(FileManager.default.fileExists(atPath: "\(directory)/lone.json"), "the summary is still written")
    }
}

/// `soak --churn` churns any fleet of 2 or more, the highest ID included.
@Suite("soak churn", .tags(.slow), .slowTier)
struct SoakChurnTests {
    @Test("soak --peers 2 --churn kills and restarts a peer (the highest ID first) and still passes its verdict")
    func twoPeersChurn() throws {
        let directory = NSTemporaryDirectory() + "eggs-churn2-\(getpid())-\(Int.random(in: 0...1_000_000))"
        let port = TestPorts.next()
        let result = try Harness.run(
            ["soak", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "churn2-\(port)", "--peers", "2",
             "--seconds", "20", "--churn", "--dir", directory, "--seed", "\(port)", "--id", "5000"],
            timeoutSeconds: 90)
        #expect(result.status == 0, "soak failed (logs kept in \(directory)): \(result.stderr.suffix(2_000))")
        if result.status == 0 { try? FileManager.default.removeItem(atPath: directory) }
        let verdict = try #require(SoakTests.verdict(result.stdout), "no verdict: \(result.stdout)")
        #expect((verdict["killed"] as? Int ?? 0) >= 1, "\(verdict)")
        // The fleet's IDs are 5001 and 5002: the highest one goes first.
        #expect((verdict["killedPeers"] as? [String])?.first == "0000000000005002", "\(verdict)")
        #expect(verdict["lives"] as? Int ?? 0 >= 3, "the killed peer was restarted: \(verdict)")
        #expect(verdict["mismatches"] as? Int == 0 && verdict["disagreements"] as? Int == 0)
    }
}
