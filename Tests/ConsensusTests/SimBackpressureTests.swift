import EggGame
import EggSim
import EggTestSupport
import PeerNet
import Testing
@testable import Consensus

private let ms: UInt64 = 1_000_000
private let seconds: UInt64 = 1_000_000_000

/// The send path a real peer runs (``MatchNode``), under a send window that fills: what the
/// window refuses waits in the match, in order, and goes out later. Nothing is dropped, so
/// every mirror sees every owner's whole stream.
@Suite("Backpressure on the simulated network")
struct SimBackpressureTests {
    @Test("a send window that fills over and over: nothing dropped, no desync, the winner agreed",
          arguments: [UInt64(11), 12, 13])
    func fullWindow(seed: UInt64) {
        let options = SimOptions(seed: seed, peerCount: 2, lossProbability: 0.02,
                                 delayMinNanoseconds: 20 * ms, delayMeanNanoseconds: 60 * ms)
        // A window of 4 unstable messages: votes and inputs outrun the stability reports.
        let run = SimBotRun(options: options, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 1)) { id, incarnation in
            var config = PeerNetConfig(peerID: id, incarnation: incarnation, randomSeed: seed &* 31 &+ id.raw &+ incarnation)
            config.windowSizeMax = 4
            return config
        }
        run.run(while: { run.lives.contains { $0.matchWinner == nil } }, until: NetTime(nanoseconds: 300 * seconds))
        let what = "seed \(seed) \(options)"
        let refusals = run.lives.map(\.node.sendWindowFull).reduce(0, +)
        #expect(refusals > 100, "\(what): the window never filled (\(refusals) refusals): the test exercises nothing")
        let winners = Set(run.lives.map { $0.matchWinner.map { $0?.hex ?? "none" } ?? "unfinished" })
        #expect(winners.count == 1 && !winners.contains("unfinished"), "\(what): \(winners)")
        #expect(run.desyncs.isEmpty, "\(what): \(run.desyncs)")
        #expect(run.decisionsDisagree() == nil, "\(what)")
        #expect(run.logOrderBreach() == nil, "\(what)")
        #expect(run.lives.allSatisfy { $0.peer.stats.checkpointsVerified > 10 }, "\(what): checkpoints \(run.lives.map(\.peer.stats.checkpointsVerified))")
        #expect(run.lives.allSatisfy { $0.node.discardedAfterLeave == 0 }, "\(what)")
        // Every payload made was taken by the core: none waits or was lost.
        #expect(run.lives.allSatisfy { $0.peer.stats.sent == $0.node.payloadsSent + $0.peer.pendingSendCount }, "\(what)")
    }
}
