import EggBot
import EggGame
import EggSim
import EggTestSupport
import PeerNet
import Testing
@testable import Consensus

/// One bot peer on a simulated node: a ``MatchNode`` (the driver a real peer runs, send window
/// backpressure included) + BotPlayer, ticking at 60 Hz on the virtual clock.
final class BotApp: SimApplication {
    var node: MatchNode
    var peer: MatchPeer {
        get { node.peer }
        _modify { yield &node.peer }
    }
    var bot: BotPlayer
    var nextTick: NetTime
    let settings: MatchSettings
    var events: [MatchEvent] = []
    /// Set to leave the match for the lobby (`q` in a match) at the next tick.
    var leaveRequested = false
    /// Offset items (rule sets that offset) this peer put in its stream.
    var offsetItemsSent = 0
    /// Optional round-latency probe shared by every life of a run (see `RoundProbe`).
    var probe: RoundProbe?
    /// Per game: the frontier this life has already reported to the probe.
    var probedUpTo: [UInt32: UInt32] = [:]
    /// When this life booted.
    let bornAt: NetTime
    static let tickNanoseconds: UInt64 = 16_666_667

    init(id: PeerID, incarnation: UInt64, settings: MatchSettings, now: NetTime = .zero, config: MatchPeerConfig? = nil) {
        node = MatchNode(peer: MatchPeer(config: config ?? MatchPeerConfig(id: id, name: "bot", voteSeed: id.raw &* 31 &+ incarnation)))
        node.peer.keepsDecisions = true
        node.peer.setReady(settings: settings, wantsToPlay: true)
        self.settings = settings
        bot = BotPlayer(level: .medium, seed: id.raw)
        nextTick = now.adding(nanoseconds: BotApp.tickNanoseconds)
        bornAt = now
        order = DeliveryOrder(recorder: id, receiver: config?.role == .spectator)
    }

    /// The delivery order this life's log would hold, checked as `replay --verify` checks it.
    var order: DeliveryOrder
    /// The first breach of that order (with its event's number), if any.
    var orderBreach: String?
    var eventsSeen = 0

    func handle(event: PeerNetEvent, core: ReliableMulticast, now: NetTime) {
        eventsSeen += 1
        if orderBreach == nil {
            let breach: String? = switch event {
            case .delivered(let d): order.delivery(from: d.from, seq: d.seq)
            case .viewChanged(let v): order.view(v)
            default: nil
            }
            if let breach { orderBreach = "\(peer.config.id.hex) life born at \(bornAt.nanoseconds / 1_000_000) ms, event \(eventsSeen): \(breach)" }
        }
        var fresh: [MatchEvent] = []
        node.handle(event, core: core, now: now, sent: { self.sent($0, now: now) }) { fresh.append($0) }
        observe(fresh, now: now)
    }

    func pollTimeout() -> NetTime? { nextTick }

    func handleTimeout(core: ReliableMulticast, now: NetTime) {
        guard now >= nextTick else { return }
        nextTick = now.adding(nanoseconds: BotApp.tickNanoseconds)
        // Like the `bot` command: ready again once synced in the lobby, until a match starts (a
        // peer that joined a room already founded took its lobby from a snapshot: not ready).
        if peer.isSynced, peer.match == nil, !peer.isReady, !events.contains(where: { if case .matchStarted = $0 { true } else { false } }) {
            let settings = self.settings
            node.perform(core: core, now: now, sent: { self.sent($0, now: now) }, events: { self.observe([$0], now: now) }) { peer in
                peer.setReady(settings: settings, wantsToPlay: true)
            }
        }
        let move = peer.owner.flatMap { bot.tick(grid: $0.grid, next: peer.ownerNextPair) }
        var fresh: [MatchEvent] = []
        let leave = leaveRequested
        leaveRequested = false
        node.perform(core: core, now: now, sent: { self.sent($0, now: now) }, events: { fresh.append($0) }) { peer in
            if leave { peer.leaveMatch(now: now) }
            if let move { peer.applyLocal(move, now: now) }
            peer.tick(now: now)
        }
        observe(fresh, now: now)
    }

    /// A payload the core took.
    private func sent(_ payload: [UInt8], now: NetTime) {
        probe?.sent(payload, now: now)
        if case .inputs(_, let items)? = MatchMessage.decode(payload) {
            offsetItemsSent += items.filter { if case .offsetGarbage = $0 { true } else { false } }.count
        }
    }

    private func observe(_ fresh: [MatchEvent], now: NetTime) {
        events.append(contentsOf: fresh)
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
            #expect(apps.values.allSatisfy { $0.node.discardedAfterLeave == 0 }, "seed \(seed): payloads discarded")
        }
    }
}
