import EggBot
import EggGame
import EggSim
import EggTestSupport
import PeerNet
import Testing
@testable import Consensus

/// One bot peer on a simulated node: MatchPeer + BotPlayer, ticking at 60 Hz on the virtual clock.
final class BotApp: SimApplication {
    var peer: MatchPeer
    var bot: BotPlayer
    var nextTick: NetTime
    var events: [MatchEvent] = []
    var sendFailures = 0
    /// Offset items (rule sets that offset) this peer put in its stream.
    var offsetItemsSent = 0
    /// Optional round-latency probe shared by every life of a run (see `RoundProbe`).
    var probe: RoundProbe?
    /// Per game: the frontier this life has already reported to the probe.
    var probedUpTo: [UInt32: UInt32] = [:]
    /// When this life booted.
    let bornAt: NetTime
    static let tickNanoseconds: UInt64 = 16_666_667

    init(id: PeerID, incarnation: UInt64, settings: MatchSettings, now: NetTime = .zero) {
        peer = MatchPeer(config: MatchPeerConfig(id: id, name: "bot", voteSeed: id.raw &* 31 &+ incarnation))
        peer.keepsDecisions = true
        peer.setReady(settings: settings, wantsToPlay: true)
        bot = BotPlayer(level: .medium, seed: id.raw)
        nextTick = now.adding(nanoseconds: BotApp.tickNanoseconds)
        bornAt = now
    }

    func handle(event: PeerNetEvent, core: ReliableMulticast, now: NetTime) {
        peer.handle(event, now: now)
        flush(core, now)
    }

    func pollTimeout() -> NetTime? { nextTick }

    func handleTimeout(core: ReliableMulticast, now: NetTime) {
        guard now >= nextTick else { return }
        nextTick = now.adding(nanoseconds: BotApp.tickNanoseconds)
        if let owner = peer.owner, let move = bot.tick(grid: owner.grid, next: peer.ownerNextPair) {
            peer.applyLocal(move, now: now)
        }
        peer.tick(now: now)
        flush(core, now)
    }

    private func flush(_ core: ReliableMulticast, _ now: NetTime) {
        while let payload = peer.pollSend() {
            probe?.sent(payload, now: now)
            if case .inputs(_, let items)? = MatchMessage.decode(payload) {
                offsetItemsSent += items.filter { if case .offsetGarbage = $0 { true } else { false } }.count
            }
            do { _ = try core.send(payload, now: now) } catch { sendFailures += 1 }
        }
        while let event = peer.pollEvent() { events.append(event) }
        probe?.observe(self, now: now)
    }

    var matchWinner: PeerID?? {
        for event in events.reversed() { if case .matchOver(let winner, _) = event { return .some(winner) } }
        return nil
    }
}

@Suite("Replicated match on the simulated network", .tags(.slow), .slowTier)
struct SimMatchTests {
    @Test("bot matches over EggSim with loss, replay and delay: checkpoints match and the winner is agreed",
          arguments: [2, 3])
    func simMatch(players: Int) {
        for seed in UInt64(1)...2 {
            var options = SimOptions(seed: seed, peerCount: players, lossProbability: 0.1, replayProbability: 0.05,
                                     delayMeanNanoseconds: 3_000_000)
            options.peerCount = players
            var apps: [PeerID: BotApp] = [:]
            let settings = MatchSettings(speed: 9, colors: 4, gamesPerMatch: 1)
            let net = SimNetwork(options: options, app: { id, incarnation in
                let app = BotApp(id: id, incarnation: incarnation, settings: settings)
                apps[id] = app
                return app
            })
            var elapsed: UInt64 = 0
            while apps.values.contains(where: { $0.matchWinner == nil }) && elapsed < 600_000_000_000 {
                net.run(forNanoseconds: 1_000_000_000)
                elapsed += 1_000_000_000
            }
            let winners = Set(apps.values.map { $0.matchWinner.map { $0?.hex ?? "none" } ?? "unfinished" })
            #expect(winners.count == 1 && !winners.contains("unfinished"), "seed \(seed) \(options): \(winners)")
            let desyncs = apps.values.map(\.peer.stats.desyncs).reduce(0, +)
            #expect(desyncs == 0, "seed \(seed)")
            #expect(apps.values.allSatisfy { $0.peer.stats.checkpointsVerified > 10 }, "seed \(seed)")
            #expect(apps.values.allSatisfy { $0.sendFailures == 0 }, "seed \(seed): sends refused")
        }
    }
}
