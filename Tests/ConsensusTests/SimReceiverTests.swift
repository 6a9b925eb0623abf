import Foundation
import EggGame
import EggPrimitives
import EggSim
import EggTestSupport
import PeerNet
import Testing
@testable import Consensus

/// Spectators are receivers: they follow the players' streams from a snapshot and are in no
/// view, so nothing the players agree on waits for them (`Receiver.swift`).
@Suite("Receivers (spectators) on the simulated network")
struct SimReceiverTests {
    static let settings = MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3)
    static func isReceiver(_ id: PeerID) -> Bool { id.raw >= 100 }

    /// A run of `players` bot players and `receivers` spectators joining from `joinAt` on, one
    /// every `joinEvery`; loss `spectatorLoss` on every path to or from a spectator.
    final class Run {
        var apps: [PeerID: BotApp] = [:]
        /// With `bareReceivers`: the spectators, each only checking its delivery order.
        var probes: [PeerID: ReceiverProbe] = [:]
        let net: SimNetwork
        var joinedAt: [PeerID: NetTime] = [:]
        var startedAt: [PeerID: NetTime] = [:]

        init(seed: UInt64, players: Int, receivers: Int, spectatorLoss: Double,
             joinAt: UInt64 = 4_000_000_000, joinEvery: UInt64 = 50_000_000, bareReceivers: Bool = false) {
            var options = SimOptions(seed: seed, peerCount: players, lossProbability: 0, replayProbability: 0,
                                     delayMeanNanoseconds: 1_000_000)
            options.peerCount = players
            var apps: [PeerID: BotApp] = [:]
            var probes: [PeerID: ReceiverProbe] = [:]
            let settings = SimReceiverTests.settings
            net = SimNetwork(options: options, config: { id, incarnation in
                var config = PeerNetConfig(peerID: id, incarnation: incarnation, randomSeed: seed &* 31 &+ id.raw &* 0x1000_0001 &+ incarnation)
                config.receiveOnly = SimReceiverTests.isReceiver(id)
                return config
            }, app: { id, incarnation -> SimApplication in
                if bareReceivers, SimReceiverTests.isReceiver(id) {
                    let probe = ReceiverProbe(id: id)
                    probes[id] = probe
                    return probe
                }
                let config = SimReceiverTests.isReceiver(id)
                    ? MatchPeerConfig(id: id, name: "watcher", role: .spectator, voteSeed: id.raw)
                    : nil
                let app = BotApp(id: id, incarnation: incarnation, settings: settings, config: config)
                apps[id] = app
                return app
            })
            var lossRNG = SplitMix64(seed: seed ^ 0x5EC7)
            if spectatorLoss > 0 {
                // (A receiver's datagrams never reach another receiver: the network leaves them
                // out as a receiver's socket filter would.)
                net.filter = { packet in
                    guard SimReceiverTests.isReceiver(packet.from) || SimReceiverTests.isReceiver(packet.to) else { return true }
                    return Double(lossRNG.next() >> 11) / Double(1 << 53) >= spectatorLoss
                }
            }
            if bareReceivers { net.recordsEvents = false }
            self.apps = apps
            self.probes = probes
            if receivers > 0 {
                net.run(forNanoseconds: joinAt)
                for index in 0..<receivers {
                    let id = PeerID(100 + UInt64(index))
                    net.addNode(id)
                    joinedAt[id] = net.now
                    net.run(forNanoseconds: joinEvery)
                    self.collectApps()
                    noteStarts()
                }
            }
            collectApps()
        }

        func collectApps() {
            for node in net.nodes {
                if let app = node.app as? BotApp { apps[node.peerID] = app }
                if let probe = node.app as? ReceiverProbe { probes[node.peerID] = probe }
            }
        }

        func noteStarts() {
            for (id, app) in apps where SimReceiverTests.isReceiver(id) && startedAt[id] == nil && app.peer.isSynced {
                startedAt[id] = net.now
            }
            for (id, probe) in probes where startedAt[id] == nil && probe.deliveries > 0 {
                startedAt[id] = net.now
            }
        }

        /// Spectator churn: from the joins up to `crashAt`, then a third of the spectators crash
        /// and a tenth leave for good; the third come back at `restartAt`; the run goes on to `end`.
        /// Returns the spectators up at the end.
        func churn(spectators: Int, crashAt: UInt64, restartAt: UInt64, end: UInt64) -> [PeerID] {
            let ids = (0..<spectators).map { PeerID(100 + UInt64($0)) }
            let crashing = Array(ids.prefix(spectators / 3)), leaving = Array(ids.suffix(spectators / 10))
            // Up to the crash, watched every 50 ms for spectators starting to follow.
            while net.now.nanoseconds < crashAt {
                net.run(until: NetTime(nanoseconds: min(crashAt, net.now.nanoseconds + 50_000_000)))
                noteStarts()
            }
            for id in crashing + leaving { net.crash(id) }
            net.run(until: NetTime(nanoseconds: restartAt))
            for id in crashing { net.restart(id) }
            net.run(until: NetTime(nanoseconds: end))
            collectApps()
            return ids.filter { !leaving.contains($0) }
        }

        var players: [BotApp] { apps.filter { !SimReceiverTests.isReceiver($0.key) }.sorted { $0.key < $1.key }.map(\.value) }
        var spectators: [BotApp] { apps.filter { SimReceiverTests.isReceiver($0.key) }.sorted { $0.key < $1.key }.map(\.value) }

        /// Runs until every peer saw the match end (or `limit`).
        func runToEnd(limit: UInt64 = 900_000_000_000) {
            var elapsed: UInt64 = 0
            while apps.values.contains(where: { $0.matchWinner == nil }) && elapsed < limit {
                net.run(forNanoseconds: 100_000_000)
                elapsed += 100_000_000
                noteStarts()
            }
        }
    }

    /// What `app` decided, by "game/round".
    static func decided(_ app: BotApp) -> [String: UInt64] {
        Dictionary(app.peer.decisionsLog.map { ("\($0.game)/\($0.round)", $0.value) }, uniquingKeysWith: { a, _ in a })
    }

    @Test("spectators joining during a match: no player's view changes, all agree on the winner, each spectator verifies what it mirrors",
          arguments: [UInt64(1), 2])
    func receiversFollow(seed: UInt64) throws {
        let run = Run(seed: seed, players: 2, receivers: 12, spectatorLoss: 0.2)
        run.runToEnd()
        let players = run.players
        // The players never saw a spectator: one view (the founding one) each.
        for player in players {
            let core = try #require(run.net.node(player.peer.config.id).core)
            #expect(core.view.members.count == 2, "seed \(seed): \(core.view.members)")
            #expect(core.stats.viewsInstalled == 1, "seed \(seed): \(player.peer.config.id) installed \(core.stats.viewsInstalled) views")
        }
        let winners = Set(run.apps.values.map { $0.matchWinner.map { $0?.hex ?? "none" } ?? "unfinished" })
        #expect(winners.count == 1 && !winners.contains("unfinished"), "seed \(seed): \(winners)")
        #expect(run.apps.values.map(\.peer.stats.desyncs).reduce(0, +) == 0, "seed \(seed)")
        for spectator in run.spectators {
            let id = spectator.peer.config.id
            let joined = try #require(run.joinedAt[id])
            let started = try #require(run.startedAt[id], "seed \(seed): \(id) never started")
            // Sampled every 50–100 ms: within 2 s of its boot, with 20 % loss on its paths.
            #expect(started.nanoseconds(since: joined) <= 2_000_000_000, "seed \(seed): \(id) started after \(started.nanoseconds(since: joined) / 1_000_000) ms")
            // It joined during game 1 and mirrors the games after it: every checkpoint of it verified.
            #expect(spectator.peer.stats.checkpointsVerified > 5, "seed \(seed): \(id) verified \(spectator.peer.stats.checkpointsVerified)")
            #expect(spectator.node.payloadsSent == 0, "a spectator sends no message")
            // Its deliveries are a receiver's delivery order: from its snapshot on, each sender in
            // order, none twice, none missing (what `replay --verify` checks on its log).
            #expect(spectator.orderBreach == nil, "seed \(seed): \(spectator.orderBreach ?? "")")
            #expect(spectator.order.checkedDeliveries > 100, "seed \(seed): \(id) delivered \(spectator.order.checkedDeliveries)")
        }
    }

    @Test("the players' decisions with spectators are the decisions without them", arguments: [UInt64(3)])
    func sameDecisions(seed: UInt64) {
        let alone = Run(seed: seed, players: 2, receivers: 0, spectatorLoss: 0)
        alone.runToEnd()
        let watched = Run(seed: seed, players: 2, receivers: 8, spectatorLoss: 0.2)
        watched.runToEnd()
        let decided = Self.decided
        for (a, b) in zip(alone.players, watched.players) {
            #expect(decided(a) == decided(b), "seed \(seed): \(a.peer.config.id) decided otherwise with spectators")
            #expect(a.matchWinner == b.matchWinner)
        }
        let players = decided(watched.players[0])
        for spectator in watched.spectators {
            // What it decided is what the players decided, round for round.
            let own = decided(spectator)
            #expect(!own.isEmpty, "seed \(seed): \(spectator.peer.config.id) decided nothing")
            for (key, value) in own {
                #expect(players[key] == value, "seed \(seed): \(spectator.peer.config.id) round \(key)")
            }
        }
    }

    /// The swarm: 4 players and 50 spectators (`EGGS_SWARM_PLAYERS`, `EGGS_SWARM_SPECTATORS`,
    /// `EGGS_SWARM_SEED` for others: 8 and 100 passed too, in 22 min on a loaded machine);
    /// spectators join one every 100 ms from 2 s on with 20 % loss on every path of theirs, a third
    /// of them crash at 12 s and come back at 16 s, and a tenth leave for good. The players'
    /// decisions are those of the same players alone, their views those they install alone, and
    /// every spectator up at the end follows them.
    @Test("a swarm of players and spectators with churn and 20 % loss on spectator paths: the players never notice",
          .tags(.slow), .slowTier)
    func swarm() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["EGGS_SWARM_SEED"].flatMap { UInt64($0) } ?? 11
        let players = environment["EGGS_SWARM_PLAYERS"].flatMap { Int($0) } ?? 4
        let spectators = environment["EGGS_SWARM_SPECTATORS"].flatMap { Int($0) } ?? 50
        let alone = Run(seed: seed, players: players, receivers: 0, spectatorLoss: 0)
        alone.net.run(forNanoseconds: 30_000_000_000)
        let run = Run(seed: seed, players: players, receivers: spectators, spectatorLoss: 0.2,
                      joinAt: 2_000_000_000, joinEvery: 100_000_000)
        let up = run.churn(spectators: spectators, crashAt: 12_000_000_000, restartAt: 16_000_000_000, end: 30_000_000_000)
        print("swarm seed \(seed): \(players) players + \(spectators) spectators, 30 s simulated (EGGS_SWARM_SEED=\(seed) reruns it)")
        let decided = Self.decided
        let reference = decided(alone.players[0])
        for (player, twin) in zip(run.players, alone.players) {
            let core = try #require(run.net.node(player.peer.config.id).core)
            let twinCore = try #require(alone.net.node(twin.peer.config.id).core)
            // The same views as without spectators: none of them ever made a view change.
            #expect(core.view.members.count == players && core.stats.viewsInstalled == twinCore.stats.viewsInstalled,
                    "seed \(seed): \(player.peer.config.id) view \(core.view.members.count) members, \(core.stats.viewsInstalled) installed (alone \(twinCore.stats.viewsInstalled))")
            let mine = decided(player)
            #expect(mine.count > 20, "seed \(seed): \(player.peer.config.id) decided \(mine.count) rounds")
            for (key, value) in mine where reference[key] != nil {
                #expect(reference[key] == value, "seed \(seed): round \(key) differs from the run without spectators")
            }
            #expect(player.peer.stats.desyncs == 0)
        }
        for id in up {
            let app = try #require(run.apps[id])
            #expect(app.peer.isSynced && run.net.node(id).core?.status == .member, "seed \(seed): spectator \(id) does not follow")
            #expect(app.peer.stats.desyncs == 0 && app.orderBreach == nil, "seed \(seed): \(id) \(app.orderBreach ?? "")")
            for (key, value) in decided(app) { #expect(reference[key] == nil || reference[key] == value, "seed \(seed): \(id) round \(key)") }
        }
    }

    /// The tournament room at scale: 8 players and spectators (bare receivers: PeerNet's
    /// receiver core and the delivery order a spectator's log would hold, without a replica of
    /// the match each), joining one every 10 ms from 2 s on with 20 % loss on every path of
    /// theirs; a third crash at 14 s and come back at 17 s, a tenth leave for good. The players'
    /// decisions and views are those of the same players alone, and every spectator up at the
    /// end follows them in order, every one having started within 2 s of its boot. 1,000
    /// spectators (about 4 minutes on 2 busy cores: receivers never read one another, so the
    /// cost grows with their number, not its square); `EGGS_BIG_SWARM_SPECTATORS` for another
    /// count, `EGGS_BIG_SWARM_SEED` for another seed.
    @Test("8 players and 1,000 spectators with churn and 20 % loss on spectator paths: the players' games are the games without them",
          .tags(.slow), .slowTier)
    func bigSwarm() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["EGGS_BIG_SWARM_SEED"].flatMap { UInt64($0) } ?? 21
        let spectators = environment["EGGS_BIG_SWARM_SPECTATORS"].flatMap { Int($0) } ?? 1_000
        let players = 8
        let end = NetTime(nanoseconds: 24_000_000_000)
        print("big swarm seed \(seed): \(players) players + \(spectators) spectators (EGGS_BIG_SWARM_SEED=\(seed) reruns it)")
        let alone = Run(seed: seed, players: players, receivers: 0, spectatorLoss: 0)
        alone.net.run(until: end)
        let run = Run(seed: seed, players: players, receivers: spectators, spectatorLoss: 0.2,
                      joinAt: 2_000_000_000, joinEvery: 10_000_000, bareReceivers: true)
        let up = run.churn(spectators: spectators, crashAt: 14_000_000_000, restartAt: 17_000_000_000, end: end.nanoseconds)
        let decided = Self.decided
        for (player, twin) in zip(run.players, alone.players) {
            let core = try #require(run.net.node(player.peer.config.id).core)
            let twinCore = try #require(alone.net.node(twin.peer.config.id).core)
            #expect(core.view.members.count == players && core.stats.viewsInstalled == twinCore.stats.viewsInstalled,
                    "seed \(seed): \(player.peer.config.id) view \(core.view.members.count) members, \(core.stats.viewsInstalled) installed (alone \(twinCore.stats.viewsInstalled))")
            // The same eggs, round for round (the virtual network's delays differ with more
            // traffic on it, so a run may decide a round more or less by the end).
            let mine = decided(player), reference = decided(twin)
            #expect(mine.count > 20 && mine.count + 3 >= reference.count, "seed \(seed): \(player.peer.config.id) decided \(mine.count) rounds, \(reference.count) alone")
            for (key, value) in mine where reference[key] != nil {
                #expect(reference[key] == value, "seed \(seed): round \(key) differs from the run without spectators")
            }
            #expect(player.peer.stats.desyncs == 0)
            #expect(core.stats.receiverSnapshotsSent <= 24, "seed \(seed): \(core.stats.receiverSnapshotsSent) snapshots in 24 s")
        }
        var lateOrNever: [String] = []
        for id in up {
            let probe = try #require(run.probes[id])
            #expect(probe.breach == nil, "seed \(seed): \(id) \(probe.breach ?? "")")
            if !(run.net.node(id).core?.status == .member && probe.deliveries > 0) { lateOrNever.append(id.hex) }
        }
        #expect(lateOrNever.isEmpty, "seed \(seed): \(lateOrNever.count) spectators not following: \(lateOrNever.prefix(5))")
        // Each spectator's first life: from its boot to its first delivery (sampled every 10–50 ms).
        let waits = (0..<spectators).map { PeerID(100 + UInt64($0)) }.compactMap { id in
            run.startedAt[id].flatMap { started in run.joinedAt[id].map { started.nanoseconds(since: $0) / 1_000_000 } }
        }.sorted()
        print("big swarm seed \(seed): \(waits.count) of \(spectators) spectators started before the crash; from boot to first delivery p50 \(waits.isEmpty ? 0 : waits[waits.count / 2]) ms, p99 \(waits.isEmpty ? 0 : waits[waits.count * 99 / 100]) ms, max \(waits.last ?? 0) ms")
        #expect(waits.count == spectators, "seed \(seed): \(spectators - waits.count) spectators never started before the crash at 14 s")
        #expect((waits.last ?? 0) <= 2_000, "seed \(seed): a spectator took \(waits.last ?? 0) ms to start")
    }
}

/// A spectator reduced to what the big swarm checks: PeerNet's receiver core (run by the
/// simulator) and the delivery order its log would hold.
final class ReceiverProbe: SimApplication {
    var order: DeliveryOrder
    var breach: String?
    var deliveries = 0

    init(id: PeerID) { order = DeliveryOrder(recorder: id, receiver: true) }

    func handle(event: PeerNetEvent, core: ReliableMulticast, now: NetTime) {
        guard breach == nil else { return }
        switch event {
        case .delivered(let d):
            deliveries += 1
            breach = order.delivery(from: d.from, seq: d.seq)
        case .viewChanged(let v):
            breach = order.view(v)
        default:
            break
        }
    }
}
