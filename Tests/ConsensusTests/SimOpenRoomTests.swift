import EggSim
import Foundation
import EggTestSupport
import PeerNet
import Testing
@testable import Consensus

/// A match in an open room while 50 impostors (proven fake IDs that heartbeat as joiners and
/// answer every challenge, nothing else) keep asking to be let in: the players never wait on
/// them. Before the joiner answer bound, the first view change that proposed them froze the
/// group for the rest of the run.
@Suite("Replicated match in an open room", .tags(.slow), .slowTier)
struct SimOpenRoomTests {
    @Test("50 answering fake IDs during a match: no player stalls, worst egg wait under 100 ms, the match ends agreed",
          arguments: [UInt64(1), 2, 3])
    func answeringJoinersDuringMatch(seed: UInt64) {
        var apps: [PeerID: BotApp] = [:]
        let settings = MatchSettings(speed: 9, colors: 4, gamesPerMatch: 1)
        let net = SimNetwork(options: SimOptions(seed: seed, peerCount: 2, delayMeanNanoseconds: 1_000_000), app: { id, incarnation in
            let app = BotApp(id: id, incarnation: incarnation, settings: settings)
            apps[id] = app
            return app
        })
        net.run(forNanoseconds: 3_000_000_000)
        #expect(apps.values.allSatisfy { $0.peer.owner != nil }, "seed \(seed): the game is under way before the impostors come")
        var fakes = (0..<50).map { Impostor(id: PeerID(1_000 + UInt64($0)), incarnation: 7) }
        var elapsed: UInt64 = 0
        while apps.values.contains(where: { $0.matchWinner == nil }) && elapsed < 300_000_000_000 {
            net.run(forNanoseconds: 1_000_000_000, impostors: &fakes)
            elapsed += 1_000_000_000
        }
        let winners = Set(apps.values.map { $0.matchWinner.map { $0?.hex ?? "none" } ?? "unfinished" })
        #expect(winners.count == 1 && !winners.contains("unfinished"), "seed \(seed): \(winners)")
        #expect(apps.values.map(\.peer.stats.desyncs).reduce(0, +) == 0, "seed \(seed)")
        let worstWait = apps.values.map { $0.peer.longestEggWaitNanoseconds(now: net.now) }.max() ?? 0
        let dropped = net.nodes.compactMap { $0.core?.stats.joinersDropped }.reduce(0, +)
        if ProcessInfo.processInfo.environment["EGGS_PEERNET_REPORT"] == "1" {
            print("open room match (seed \(seed)): \(elapsed / 1_000_000_000) s with 50 impostors, worst egg wait \(worstWait / 1_000) µs, joiners dropped \(dropped)")
        }
        #expect(worstWait < 100_000_000, "seed \(seed): a player waited \(worstWait / 1_000_000) ms for an egg")
        #expect(dropped >= 50, "seed \(seed): the impostors were proposed and dropped (\(dropped))")
        #expect(apps.values.allSatisfy { $0.orderBreach == nil })
    }
}
