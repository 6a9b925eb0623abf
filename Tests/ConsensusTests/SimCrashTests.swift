import EggGame
import EggSim
import EggTestSupport
import PeerNet
import Testing
@testable import Consensus

private let ms: UInt64 = 1_000_000
private let seconds: UInt64 = 1_000_000_000

/// A player of two killed (kill -9, no restart) mid-game, on EggSim.
@Suite("A player of two killed, or leaving for the lobby, on the simulated network", .tags(.slow), .slowTier)
struct SimCrashTests {
    /// One seed: two bot peers play (best of 3, speed 9); mid-game the victim (`highest`: the
    /// higher ID, else the lower) is killed for good. The survivor's match must be over within
    /// the suspect timeout + 1 s, decided the same way whatever the IDs: the victim is out
    /// (`playerOut`, its name, connection lost), the survivor wins the game under way by
    /// forfeit and the match, with the games won before the kill in the wins. (The higher ID is
    /// primary alone and installs a view without the victim; the lower ID gives its view up, the
    /// rule of two, and says the same.) Then it is alone in a view of its own, synced, in the lobby.
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
        let winsBefore = app.peer.match?.wins[survivor] ?? 0
        let eventsBefore = app.events.count
        run.net.crash(victim)
        let killedAt = run.net.now
        let bound = PeerNetConfig(peerID: survivor).suspectTimeoutNanoseconds + 1 * seconds
        func over() -> Bool {
            app.events.dropFirst(eventsBefore).contains { if case .matchOver = $0 { true } else { false } }
        }
        run.run(while: { !over() }, until: killedAt.adding(nanoseconds: 20 * seconds), stepNanoseconds: 10 * ms)
        let took = run.net.now.nanoseconds(since: killedAt)
        let after = Array(app.events.dropFirst(eventsBefore))
        let result = after.compactMap { e -> (PeerID?, [PeerID: Int])? in
            if case .matchOver(let winner, let wins) = e { (winner, wins) } else { nil }
        }.first
        if let result {
            if took > bound { failures.append("the survivor's match was over \(took / ms) ms after the kill (goal ≤ \(bound / ms) ms)") }
            if result.0 != survivor { failures.append("the survivor's match ended with winner \(result.0?.hex ?? "none"), not the survivor") }
            if result.1[survivor] != winsBefore + 1 {
                failures.append("the survivor's wins are \(result.1[survivor] ?? 0), expected \(winsBefore) before the kill + 1 by forfeit")
            }
        } else {
            failures.append("the survivor's match is not over 20 s after the kill")
        }
        let out = after.compactMap { e -> (PeerID, String, PlayerOutReason)? in
            if case .playerOut(let player, let name, let reason) = e { (player, name, reason) } else { nil }
        }
        if out.count != 1 || out.first?.0 != victim || out.first?.1 != "bot" || out.first?.2 != .connectionLost {
            failures.append("expected one playerOut of the victim named bot, connection lost; got \(out)")
        }
        let wonGame = after.contains { if case .gameOver(_, survivor) = $0 { true } else { false } }
        if !wonGame { failures.append("the survivor did not win the game its rival left") }
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

    /// One seed: two bot peers play (best of 3, speed 9); in game `game` (1 or 2) the leaver
    /// (`highest`: the higher ID) leaves the match for the lobby (`q`, a forfeit). Within 1 s
    /// both peers' matches are over with the same words: the leaver out (its name, left for the
    /// lobby), the other winning the game by forfeit and the match, the games won before kept.
    /// Both are then in the lobby of the same room, the leaver still a member, not ready.
    static func runForfeit(seed: UInt64, highest: Bool) -> [String] {
        var rng = SimRandom(seed: seed ^ 0x464F_5246_4549_5400)
        let options = SimOptions(seed: seed, peerCount: 2, lossProbability: Double(rng.next(upTo: 5)) / 100)
        let run = SimBotRun(options: options, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3))
        let low = PeerID(1), high = PeerID(2)
        let (leaver, stayer) = highest ? (high, low) : (low, high)
        let pairsBeforeLeave = 3 + Int(rng.next(upTo: 20))
        run.run(while: { run.liveApps.contains { ($0.peer.owner?.grid.pairsSpawned ?? 0) < pairsBeforeLeave } },
                until: NetTime(nanoseconds: 60 * seconds), stepNanoseconds: 10 * ms)
        let what = "\(options) leaver=\(leaver.hex) pairs_before_leave=\(pairsBeforeLeave) left_at_ms=\(run.net.now.nanoseconds / ms)"
        var failures: [String] = []
        if run.liveApps.contains(where: { $0.peer.owner == nil }) { failures.append("no game in progress at the leave") }
        let apps = [run.current[low]!, run.current[high]!]
        let winsBefore = run.current[stayer]!.peer.match?.wins[stayer] ?? 0
        let eventsBefore = apps.map(\.events.count)
        run.current[leaver]!.leaveRequested = true
        let leftAt = run.net.now
        func over(_ index: Int) -> Bool {
            apps[index].events.dropFirst(eventsBefore[index]).contains { if case .matchOver = $0 { true } else { false } }
        }
        run.run(while: { !over(0) || !over(1) }, until: leftAt.adding(nanoseconds: 10 * seconds), stepNanoseconds: 10 * ms)
        let took = run.net.now.nanoseconds(since: leftAt)
        if took > 1 * seconds { failures.append("the matches were over \(took / ms) ms after the leave (goal ≤ 1000 ms)") }
        for (index, app) in apps.enumerated() {
            let me = app.peer.config.id.hex
            let after = Array(app.events.dropFirst(eventsBefore[index]))
            let result = after.compactMap { e -> (PeerID?, [PeerID: Int])? in
                if case .matchOver(let winner, let wins) = e { (winner, wins) } else { nil }
            }.first
            if let result {
                if result.0 != stayer { failures.append("\(me): the match ended with winner \(result.0?.hex ?? "none"), not the one who stayed") }
                if result.1[stayer] != winsBefore + 1 { failures.append("\(me): the stayer's wins are \(result.1[stayer] ?? 0), expected \(winsBefore + 1)") }
            } else {
                failures.append("\(me): the match is not over 10 s after the leave")
            }
            let out = after.compactMap { e -> (PeerID, String, PlayerOutReason)? in
                if case .playerOut(let player, let name, let reason) = e { (player, name, reason) } else { nil }
            }
            if out.count != 1 || out.first?.0 != leaver || out.first?.1 != "bot" || out.first?.2 != .leftForLobby {
                failures.append("\(me): expected one playerOut of the leaver named bot, left for the lobby; got \(out)")
            }
            if !after.contains(where: { if case .gameOver(_, stayer) = $0 { true } else { false } }) {
                failures.append("\(me): the stayer did not win the game the leaver left")
            }
        }
        run.net.run(forNanoseconds: 2 * seconds)
        for app in apps {
            if app.peer.view?.members.sorted() != [low, high] || !app.peer.isInLobby || app.peer.isMarkedReady {
                failures.append("\(app.peer.config.id.hex) is not in the lobby with both members, not ready: view \(app.peer.view?.members ?? [])")
            }
        }
        if !run.desyncs.isEmpty { failures.append("\(run.desyncs.count) desyncs, first \(run.desyncs[0])") }
        if let problem = run.decisionsDisagree() { failures.append(problem) }
        if let problem = run.logOrderBreach() { failures.append(problem) }
        failures += SimChecker.violations(run.net).prefix(3)
        return failures.map { "\(what)\n  \($0)" }
    }

    /// One seed: three bot peers play (best of 3, speed 9); in the first game the middle ID
    /// leaves for the lobby. Every peer names it out (left for the lobby) once; the other two
    /// play the match out without it (it owns no grid again), and every peer ends the match
    /// with the same winner, not the leaver.
    static func runForfeitOfThree(seed: UInt64) -> [String] {
        var rng = SimRandom(seed: seed ^ 0x4654_4852_4545_0000)
        let options = SimOptions(seed: seed, peerCount: 3, lossProbability: Double(rng.next(upTo: 5)) / 100)
        let run = SimBotRun(options: options, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3))
        let leaver = PeerID(2)
        let pairsBeforeLeave = 3 + Int(rng.next(upTo: 10))
        run.run(while: { run.liveApps.contains { ($0.peer.owner?.grid.pairsSpawned ?? 0) < pairsBeforeLeave } },
                until: NetTime(nanoseconds: 60 * seconds), stepNanoseconds: 10 * ms)
        let what = "\(options) pairs_before_leave=\(pairsBeforeLeave) left_at_ms=\(run.net.now.nanoseconds / ms)"
        var failures: [String] = []
        let apps = [PeerID(1), PeerID(2), PeerID(3)].map { run.current[$0]! }
        let eventsBefore = apps.map(\.events.count)
        run.current[leaver]!.leaveRequested = true
        var ownedAgain = false
        run.run(while: {
            if run.current[leaver]!.peer.owner != nil && run.current[leaver]!.peer.hasLeftMatch { ownedAgain = true }
            return apps.contains { $0.matchWinner == nil }
        }, until: run.net.now.adding(nanoseconds: 900 * seconds), stepNanoseconds: 100 * ms)
        if ownedAgain { failures.append("the leaver owned a grid again after it left") }
        var winners: Set<String> = []
        for (index, app) in apps.enumerated() {
            let after = app.events.dropFirst(eventsBefore[index])
            let out = after.compactMap { e -> PeerID? in if case .playerOut(let p, _, .leftForLobby) = e { p } else { nil } }
            if out != [leaver] { failures.append("\(app.peer.config.id.hex): playerOut \(out), expected the leaver once") }
            winners.insert(app.matchWinner.map { $0?.hex ?? "none" } ?? "unfinished")
        }
        if winners.count != 1 || winners.contains("unfinished") || winners.contains(leaver.hex) || winners.contains("none") {
            failures.append("match winners \(winners)")
        }
        if !run.desyncs.isEmpty { failures.append("\(run.desyncs.count) desyncs, first \(run.desyncs[0])") }
        if let problem = run.decisionsDisagree() { failures.append(problem) }
        if let problem = run.logOrderBreach() { failures.append(problem) }
        failures += SimChecker.violations(run.net).prefix(3)
        return failures.map { "\(what)\n  \($0)" }
    }

    @Test("q in a match of three: the leaver is out everywhere by name, the other two play the match out and agree on its winner")
    func forfeitOfThree() {
        expectSeedsPass(chunk: 0, defaultCount: 2, filter: "SimCrashTests/forfeitOfThree", reproduce: { "SimCrashTests.runForfeitOfThree(seed: \($0))" }) {
            Self.runForfeitOfThree(seed: $0)
        }
    }

    @Test("q in a match of two (either ID leaves): within 1 s both matches are over the same way, the leaver out by name, the other winning by forfeit; both back in the lobby",
          arguments: [true, false])
    func forfeitOfOne(highest: Bool) {
        expectSeedsPass(chunk: 0, defaultCount: 3, filter: "SimCrashTests/forfeitOfOne", reproduce: { "SimCrashTests.runForfeit(seed: \($0), highest: \(highest))" }) {
            Self.runForfeit(seed: $0, highest: highest)
        }
    }

    @Test("kill -9 of either of two players mid-game: the survivor's match is over within the suspect timeout + 1 s, decided the same whatever the IDs: the victim out by name, the survivor winning by forfeit",
          arguments: [true, false])
    func crashOfOne(highest: Bool) {
        expectSeedsPass(chunk: 0, defaultCount: 3, filter: "SimCrashTests/crashOfOne", reproduce: { "SimCrashTests.runCrash(seed: \($0), highest: \(highest))" }) {
            Self.runCrash(seed: $0, highest: highest)
        }
    }
}
