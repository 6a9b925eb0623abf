import EggGame
import EggSim
import EggTestSupport
import PeerNet
import Testing
@testable import Consensus

private let ms: UInt64 = 1_000_000
private let seconds: UInt64 = 1_000_000_000

/// A player killed (kill -9) mid-game and restarted at once under the same ID, on EggSim.
@Suite("Restarts under the same ID on the simulated network", .tags(.slow), .slowTier)
struct SimRestartTests {
    /// Seconds from a restart to the restarted peer being back in the lobby with every other
    /// peer of the room (synced, in one view with all of them).
    static let backInLobbyNanoseconds: UInt64 = 5 * seconds

    /// One seed: `players` bot peers play (best of 3, speed 9); mid-game the victim (`highest`:
    /// the highest ID, else the lowest) is killed and booted again in the same instant. The room
    /// then plays on for 30 s: no desync anywhere, no round with two values, the restarted peer
    /// back in the lobby within 5 s, and the survivors go on to decide more rounds after it.
    /// Runs `run` for `nanoseconds` in 10 ms steps; every synced peer in the lobby with all
    /// `players` in its view gets ready again (as a bot does), so matches follow each other.
    static func play(_ run: SimBotRun, players: Int, forNanoseconds nanoseconds: UInt64, until done: () -> Bool = { false }) {
        let end = run.net.now.adding(nanoseconds: nanoseconds)
        while run.net.now < end && !done() {
            for app in run.liveApps where app.peer.isSynced && app.peer.match == nil && !app.peer.isReady
                && app.peer.view?.members.count == players {
                app.peer.setReady(settings: run.settings, wantsToPlay: true)
            }
            run.net.run(forNanoseconds: 10 * ms)
        }
    }

    static func runRestart(seed: UInt64, players: Int, highest: Bool) -> [String] {
        var rng = SimRandom(seed: seed ^ 0x5245_5354_4152_5400)
        let options = SimOptions(seed: seed, peerCount: players, lossProbability: Double(rng.next(upTo: 5)) / 100)
        let run = SimBotRun(options: options, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3))
        let ids = (1...players).map { PeerID(UInt64($0)) }
        let victim = highest ? ids.last! : ids.first!
        // Kill at a random moment once every player has spawned a few pairs of the first game.
        let pairsBeforeKill = 3 + Int(rng.next(upTo: 20))
        // (A player already out of the game counts as ready: chain-building bots can top one out early.)
        run.run(while: { run.liveApps.contains { app in app.peer.owner.map { !$0.isOut && $0.grid.pairsSpawned < pairsBeforeKill } ?? true } },
                until: NetTime(nanoseconds: 60 * seconds), stepNanoseconds: 10 * ms)
        let what = "\(options) victim=\(victim.hex) pairs_before_kill=\(pairsBeforeKill) killed_at_ms=\(run.net.now.nanoseconds / ms)"
        var failures: [String] = []
        if run.liveApps.contains(where: { $0.peer.owner == nil }) { failures.append("no game in progress at the kill") }
        run.net.restart(victim)
        let restartedAt = run.net.now
        let reborn = run.current[victim]!
        func backInLobby() -> Bool {
            reborn.peer.isSynced && reborn.peer.view?.members == ids
                && run.liveApps.allSatisfy { $0.peer.isSynced && $0.peer.view?.members == ids }
        }
        play(run, players: players, forNanoseconds: 30 * seconds, until: backInLobby)
        let took = run.net.now.nanoseconds(since: restartedAt)
        if !backInLobby() {
            failures.append("the restarted peer is not back with the others 30 s after the restart")
        } else if took > backInLobbyNanoseconds {
            failures.append("the restarted peer took \(took / ms) ms to be back in the lobby (goal ≤ \(backInLobbyNanoseconds / ms) ms)")
        }
        let framesBefore = run.liveApps.map { $0.peer.stats.delivered }
        play(run, players: players, forNanoseconds: 30 * seconds)
        if !reborn.events.contains(where: { if case .gameStarted = $0 { true } else { false } }) {
            failures.append("the restarted peer played no game with the others")
        }
        if !run.desyncs.isEmpty { failures.append("\(run.desyncs.count) desyncs, first \(run.desyncs[0])") }
        if let problem = run.decisionsDisagree() { failures.append(problem) }
        if let problem = run.logOrderBreach() { failures.append(problem) }
        if zip(framesBefore, run.liveApps.map { $0.peer.stats.delivered }).contains(where: { $0 >= $1 }) {
            failures.append("a peer delivered nothing after the restart")
        }
        let stalled = run.liveApps.filter { app in
            app.peer.owner?.waitingSince.map { run.net.now.nanoseconds(since: $0) > SimRoundTests.boundNanoseconds } ?? false
        }
        for app in stalled { failures.append("\(app.peer.config.id.hex) waits for a pair since \(app.peer.owner!.waitingSince!.nanoseconds / ms) ms") }
        failures += SimChecker.violations(run.net).prefix(3)
        return failures.map { "\(what)\n  \($0)" }
    }

    @Test("kill -9 and an immediate restart under the same ID mid-game, highest or lowest ID, 2 or 3 players: no desync, back in the lobby within 5 s",
          arguments: [(2, true), (2, false), (3, true), (3, false)])
    func restartMidGame(players: Int, highest: Bool) {
        expectSeedsPass(chunk: 0, defaultCount: 3, filter: "SimRestartTests/restartMidGame",
                        reproduce: { "SimRestartTests.runRestart(seed: \($0), players: \(players), highest: \(highest))" }) {
            Self.runRestart(seed: $0, players: players, highest: highest)
        }
    }
}
