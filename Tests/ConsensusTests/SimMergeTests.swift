import EggGame
import EggSim
import PeerNet
import Testing
@testable import Consensus

private let ms: UInt64 = 1_000_000
private let seconds: UInt64 = 1_000_000_000

/// Peers that each founded a group of their own before they heard of each other (a lossy
/// network, a late announcement, unicast peers that learn addresses one by one), then merge.
@Suite("Groups founded apart that merge")
struct SimMergeTests {
    /// `groups` are kept apart for 2 s, each founding its own room state, then the network heals.
    /// Every peer must end in one view with every player in its lobby, on the same room state
    /// (next game number), and the ready players must start a match together.
    static func runMerge(seed: UInt64, groups: [[PeerID]]) -> [String] {
        let ids = groups.flatMap { $0 }.sorted()
        let options = SimOptions(seed: seed, peerCount: ids.count, lossProbability: 0.05)
        let run = SimBotRun(options: options, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 1))
        run.net.partition(groups)
        run.net.run(forNanoseconds: 2 * seconds)
        var failures: [String] = []
        if run.liveApps.contains(where: { !$0.peer.isSynced }) { failures.append("a peer had no room state of its own while apart") }
        run.net.heal()
        func together() -> Bool {
            run.liveApps.allSatisfy { $0.peer.isSynced && $0.peer.view?.members == ids && Set($0.peer.lobby.keys) == Set(ids) }
        }
        run.run(while: { !together() }, until: run.net.now.adding(nanoseconds: 10 * seconds), stepNanoseconds: 10 * ms)
        guard together() else {
            let lobbies = run.liveApps.map { "\($0.peer.config.id.hex): view \($0.peer.view.map { $0.members.map(\.hex) } ?? []) lobby \($0.peer.lobby.keys.map(\.hex).sorted())" }
            return failures + ["the groups did not merge into one view and lobby within 10 s: \(lobbies)"]
        }
        if Set(run.liveApps.map(\.peer.nextGame)).count != 1 {
            failures.append("the peers hold different room states: next games \(run.liveApps.map(\.peer.nextGame))")
        }
        func started(_ app: BotApp) -> Bool { app.events.contains { if case .gameStarted = $0 { true } else { false } } }
        // Ready marks are room state: the side that took the others' snapshot gets ready again,
        // as a bot or a player does in the lobby.
        SimRestartTests.play(run, players: ids.count, forNanoseconds: 10 * seconds) { run.liveApps.allSatisfy(started) }
        for app in run.liveApps where !started(app) { failures.append("\(app.peer.config.id.hex) started no game 10 s after the merge") }
        if !run.desyncs.isEmpty { failures.append("\(run.desyncs.count) desyncs, first \(run.desyncs[0])") }
        if let problem = run.decisionsDisagree() { failures.append(problem) }
        if let problem = run.logOrderBreach() { failures.append(problem) }
        return failures.map { "seed \(seed) groups \(groups.map { $0.map(\.hex) }): \($0)" }
    }

    @Test("two or three peers that each founded a room apart merge into one lobby with everyone and start a match")
    func mergeApart() {
        let one = PeerID(1), two = PeerID(2), three = PeerID(3)
        var failures: [String] = []
        for seed in UInt64(1)...4 {
            failures += Self.runMerge(seed: seed, groups: [[one], [two]])
            failures += Self.runMerge(seed: seed, groups: [[one, two], [three]])
            failures += Self.runMerge(seed: seed, groups: [[one], [two, three]])
        }
        #expect(failures.isEmpty, "\(failures.prefix(6).joined(separator: "\n"))")
    }
}
