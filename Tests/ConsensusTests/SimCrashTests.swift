import EggGame
import EggSim
import EggTestSupport
import PeerNet
import Testing
@testable import Consensus

private let ms: UInt64 = 1_000_000
private let seconds: UInt64 = 1_000_000_000

/// A player of two killed (kill -9, no restart) mid-game, on EggSim.
@Suite("A player of two killed on the simulated network", .tags(.slow), .slowTier)
struct SimCrashTests {
    /// One seed: two bot peers play (best of 3, speed 9); mid-game the victim (`highest`: the
    /// higher ID, else the lower) is killed for good. The survivor's match must be over within
    /// the suspect timeout + 1 s: the higher ID (primary alone) wins the game, the lower ID's
    /// match ends with no winner decided on its side (it gave its view up: the rule of two).
    /// Then it is alone in a view of its own, synced, in the lobby.
    static func runCrash(seed: UInt64, highest: Bool) -> [String] {
        var rng = SimRandom(seed: seed ^ 0x4352_4153_4800_0000)
        let options = SimOptions(seed: seed, peerCount: 2, lossProbability: Double(rng.next(upTo: 5)) / 100)
        let run = SimBotRun(options: options, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3))
        let low = PeerID(1), high = PeerID(2)
        let (victim, survivor) = highest ? (high, low) : (low, high)
        let pairsBeforeKill = 3 + Int(rng.next(upTo: 20))
        run.run(while: { run.liveApps.contains { ($0.peer.owner?.grid.pairsSpawned ?? 0) < pairsBeforeKill } },
                until: NetTime(nanoseconds: 60 * seconds), stepNanoseconds: 10 * ms)
        let what = "\(options) victim=\(victim.hex) pairs_before_kill=\(pairsBeforeKill) killed_at_ms=\(run.net.now.nanoseconds / ms)"
        var failures: [String] = []
        if run.liveApps.contains(where: { $0.peer.owner == nil }) { failures.append("no game in progress at the kill") }
        let app = run.current[survivor]!
        let eventsBefore = app.events.count
        run.net.crash(victim)
        let killedAt = run.net.now
        let bound = PeerNetConfig(peerID: survivor).suspectTimeoutNanoseconds + 1 * seconds
        func over() -> Bool {
            app.events.dropFirst(eventsBefore).contains { if case .matchOver = $0 { true } else { false } }
        }
        run.run(while: { !over() }, until: killedAt.adding(nanoseconds: 20 * seconds), stepNanoseconds: 10 * ms)
        let took = run.net.now.nanoseconds(since: killedAt)
        let result = app.events.dropFirst(eventsBefore).compactMap { e -> PeerID?? in
            if case .matchOver(let winner, _) = e { .some(winner) } else { nil }
        }.first
        if result == nil {
            failures.append("the survivor's match is not over 20 s after the kill")
        } else if took > bound {
            failures.append("the survivor's match was over \(took / ms) ms after the kill (goal ≤ \(bound / ms) ms)")
        }
        if highest, let result, result != nil {
            failures.append("the lower ID's match ended with winner \(result!.hex), decided on its side alone")
        }
        let wonGame = app.events.dropFirst(eventsBefore).contains { if case .gameOver(_, survivor) = $0 { true } else { false } }
        if !highest, !wonGame { failures.append("the higher ID did not win the game its rival left") }
        run.net.run(forNanoseconds: 2 * seconds)
        if app.peer.view?.members != [survivor] || !app.peer.isSynced || app.peer.match != nil {
            failures.append("the survivor is not alone in the lobby: view \(app.peer.view?.members ?? []), synced \(app.peer.isSynced)")
        }
        if !run.desyncs.isEmpty { failures.append("\(run.desyncs.count) desyncs, first \(run.desyncs[0])") }
        if let problem = run.decisionsDisagree() { failures.append(problem) }
        if let problem = run.logOrderBreach() { failures.append(problem) }
        failures += SimChecker.violations(run.net).prefix(3)
        return failures.map { "\(what)\n  \($0)" }
    }

    @Test("kill -9 of either of two players mid-game: the survivor's match is over within the suspect timeout + 1 s, the higher ID wins the game, the lower ID's match ends without a winner",
          arguments: [true, false])
    func crashOfOne(highest: Bool) {
        expectSeedsPass(chunk: 0, defaultCount: 3, filter: "SimCrashTests/crashOfOne", reproduce: { "SimCrashTests.runCrash(seed: \($0), highest: \(highest))" }) {
            Self.runCrash(seed: $0, highest: highest)
        }
    }
}
