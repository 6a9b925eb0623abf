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
        let net: SimNetwork
        var joinedAt: [PeerID: NetTime] = [:]
        var startedAt: [PeerID: NetTime] = [:]

        init(seed: UInt64, players: Int, receivers: Int, spectatorLoss: Double,
             joinAt: UInt64 = 4_000_000_000, joinEvery: UInt64 = 50_000_000) {
            var options = SimOptions(seed: seed, peerCount: players, lossProbability: 0, replayProbability: 0,
                                     delayMeanNanoseconds: 1_000_000)
            options.peerCount = players
            var apps: [PeerID: BotApp] = [:]
            let settings = SimReceiverTests.settings
            net = SimNetwork(options: options, config: { id, incarnation in
                var config = PeerNetConfig(peerID: id, incarnation: incarnation, randomSeed: seed &* 31 &+ id.raw &* 0x1000_0001 &+ incarnation)
                config.receiveOnly = SimReceiverTests.isReceiver(id)
                return config
            }, app: { id, incarnation in
                let config = SimReceiverTests.isReceiver(id)
                    ? MatchPeerConfig(id: id, name: "watcher", role: .spectator, voteSeed: id.raw)
                    : nil
                let app = BotApp(id: id, incarnation: incarnation, settings: settings, config: config)
                apps[id] = app
                return app
            })
            var lossRNG = SplitMix64(seed: seed ^ 0x5EC7)
            if spectatorLoss > 0 {
                net.filter = { packet in
                    guard SimReceiverTests.isReceiver(packet.from) || SimReceiverTests.isReceiver(packet.to) else { return true }
                    return Double(lossRNG.next() >> 11) / Double(1 << 53) >= spectatorLoss
                }
            }
            self.apps = apps
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
            }
        }

        func noteStarts() {
            for (id, app) in apps where SimReceiverTests.isReceiver(id) && startedAt[id] == nil && app.peer.isSynced {
                startedAt[id] = net.now
            }
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
        func decided(_ app: BotApp) -> [String: UInt64] {
            Dictionary(app.peer.decisionsLog.map { ("\($0.game)/\($0.round)", $0.value) }, uniquingKeysWith: { a, _ in a })
        }
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
        let ids = (0..<spectators).map { PeerID(100 + UInt64($0)) }
        let crashing = Array(ids.prefix(spectators / 3)), leaving = Array(ids.suffix(spectators / 10))
        run.net.run(until: max(run.net.now, NetTime(nanoseconds: 12_000_000_000)))
        for id in crashing + leaving { run.net.crash(id) }
        run.net.run(until: NetTime(nanoseconds: 16_000_000_000))
        for id in crashing { run.net.restart(id) }
        run.net.run(until: NetTime(nanoseconds: 30_000_000_000))
        run.collectApps()
        print("swarm seed \(seed): \(players) players + \(spectators) spectators, 30 s simulated (EGGS_SWARM_SEED=\(seed) reruns it)")
        func decided(_ app: BotApp) -> [String: UInt64] {
            Dictionary(app.peer.decisionsLog.map { ("\($0.game)/\($0.round)", $0.value) }, uniquingKeysWith: { a, _ in a })
        }
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
        let up = ids.filter { !leaving.contains($0) }
        for id in up {
            let app = try #require(run.apps[id])
            #expect(app.peer.isSynced && run.net.node(id).core?.status == .member, "seed \(seed): spectator \(id) does not follow")
            #expect(app.peer.stats.desyncs == 0 && app.orderBreach == nil, "seed \(seed): \(id) \(app.orderBreach ?? "")")
            for (key, value) in decided(app) { #expect(reference[key] == nil || reference[key] == value, "seed \(seed): \(id) round \(key)") }
        }
    }
}
