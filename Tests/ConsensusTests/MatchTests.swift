import EggBot
import EggGame
import EggTestSupport
import PeerNet
import Testing
@testable import Consensus

/// Starts `count` bot peers in one fresh view, all ready with `settings`.
func startRoom(_ h: VSHarness, count: Int, settings: MatchSettings, level: BotLevel = .medium) -> [PeerID] {
    let ids = (1...count).map { PeerID(UInt64($0) &* 0x1000_0000_0001) }
    for id in ids { h.peers[id] = h.makePeer(id, bot: level) }
    h.members = []
    h.installView(members: ids, joining: ids)
    for id in ids {
        h.peers[id]!.setReady(settings: settings, wantsToPlay: true)
        h.drainOutputs(id)
    }
    return ids
}

func matchOvers(_ h: VSHarness) -> [PeerID: PeerID?] {
    var out: [PeerID: PeerID?] = [:]
    for (id, events) in h.events {
        for event in events { if case .matchOver(let winner, _) = event { out[id] = winner } }
    }
    return out
}

/// The winners of every `gameOver` event of `game` that `id` reported, in order.
func gameOvers(_ h: VSHarness, _ id: PeerID, game: UInt32) -> [PeerID?] {
    (h.events[id] ?? []).compactMap { if case .gameOver(let g, let winner) = $0, g == game { winner } else { nil } }
}

func desyncs(_ h: VSHarness) -> [String] {
    h.events.flatMap { id, events in events.compactMap { if case .desync(let d) = $0 { "\(id.hex): \(d)" } else { nil } } }
}

@Suite("Replicated match", .tags(.slow), .slowTier)
struct MatchTests {
    @Test("lobby: a start vote with every member ready starts the match with the highest ID's settings")
    func startVote() {
        let h = VSHarness(seed: 1)
        let ids = (1...3).map { PeerID(UInt64($0)) }
        for id in ids { h.peers[id] = h.makePeer(id) }
        h.installView(members: ids, joining: ids)
        h.peers[ids[0]]!.setReady(settings: MatchSettings(speed: 1, colors: 5, gamesPerMatch: 1), wantsToPlay: true)
        h.peers[ids[1]]!.setReady(settings: MatchSettings(speed: 2, colors: 4, gamesPerMatch: 3), wantsToPlay: false)
        for id in ids.prefix(2) { h.drainOutputs(id) }
        h.deliverAll(to: ids)
        #expect(ids.allSatisfy { h.peers[$0]!.match == nil })
        h.peers[ids[2]]!.setReady(settings: MatchSettings(speed: 7, colors: 6, gamesPerMatch: 5), wantsToPlay: true)
        h.drainOutputs(ids[2])
        h.deliverAll(to: ids)
        for id in ids {
            let m = h.peers[id]!.match
            #expect(m?.settings == MatchSettings(speed: 7, colors: 6, gamesPerMatch: 5))
            #expect(m?.players == [ids[0], ids[2]])
        }
    }

    @Test("whole bot matches of 2, 3 and 8 players: checkpoints match and every peer agrees on the winner",
          arguments: [2, 3, 8])
    func botMatch(players: Int) {
        for seed in UInt64(1)...2 {
            let h = VSHarness(seed: seed &* 1000 &+ UInt64(players))
            let ids = startRoom(h, count: players, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3))
            var ticks = 0
            while matchOvers(h).count < ids.count && ticks < 60_000 {
                h.tick(deliveries: players * players * 3)
                ticks += 1
            }
            let overs = matchOvers(h)
            #expect(overs.count == ids.count, "seed \(seed): match not over after \(ticks) ticks")
            #expect(Set(overs.values.map { $0?.hex ?? "none" }).count == 1, "seed \(seed): winners differ \(overs)")
            #expect(desyncs(h).count == 0, "seed \(seed): \(desyncs(h).count) desyncs, first \(desyncs(h).prefix(2))")
            #expect(h.checkDecisionsAgree() == nil, "seed \(seed)")
            let verified = ids.map { h.peers[$0]!.stats.checkpointsVerified }
            #expect(verified.allSatisfy { $0 > players * 5 }, "seed \(seed): verified \(verified)")
        }
    }

    @Test("a player that crashes and restarts under the same ID mid-game is out of that game, which still ends")
    func restartedPlayerIsOutOfTheGame() {
        let h = VSHarness(seed: 42)
        let ids = startRoom(h, count: 3, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3))
        for _ in 0..<300 { h.tick(deliveries: 30) }
        let victim = ids[1]
        #expect(h.peers[victim]?.match != nil, "the match started")
        h.installView(members: ids.filter { $0 != victim }, crashed: [victim])
        h.installView(members: ids, joining: [victim])
        for id in ids where id != victim { #expect(h.peers[id]!.match?.leftDuringGame == [victim]) }
        var ticks = 0
        func gamesOver(_ id: PeerID) -> [PeerID?] { gameOvers(h, id, game: 0) }
        while ids.contains(where: { gamesOver($0).isEmpty }) && ticks < 40_000 {
            h.tick(deliveries: 30)
            ticks += 1
        }
        let winners = ids.map(gamesOver)
        #expect(winners.allSatisfy { $0.count == 1 }, "game 0 did not end everywhere after \(ticks) ticks")
        #expect(Set(winners.compactMap { $0.first.map { $0?.hex ?? "none" } }).count == 1, "winners differ: \(winners)")
        #expect(winners.first?.first != .some(.some(victim)), "the restarted player cannot win the game it left")
        #expect(desyncs(h).isEmpty)
        #expect(h.checkDecisionsAgree() == nil)
    }

    @Test("a player outside the view when a game begins is out of it; coming back mid-game it does not hold the game up")
    func absentAtGameStartIsOut() {
        let h = VSHarness(seed: 9)
        let ids = startRoom(h, count: 4, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3))
        for _ in 0..<120 { h.tick(deliveries: 40) }
        let away = [ids[0], ids[1]], stay = [ids[2], ids[3]]
        h.installView(members: stay, crashed: Set(away))
        func endings(_ id: PeerID, _ game: UInt32) -> Int { gameOvers(h, id, game: game).count }
        var ticks = 0
        while stay.contains(where: { endings($0, 0) == 0 }) && ticks < 40_000 { h.tick(deliveries: 40); ticks += 1 }
        for id in stay { #expect(h.peers[id]!.match?.game == 1 && h.peers[id]!.match?.leftDuringGame == Set(away)) }
        h.installView(members: ids, joining: away)
        ticks = 0
        while ids.contains(where: { endings($0, 1) == 0 }) && ticks < 40_000 { h.tick(deliveries: 40); ticks += 1 }
        #expect(ids.allSatisfy { endings($0, 1) == 1 }, "game 1 did not end everywhere after \(ticks) ticks")
        #expect(desyncs(h).isEmpty)
        #expect(h.checkDecisionsAgree() == nil)
    }

    @Test("what a player that left mid-game sends for that game after coming back is ignored, not mirrored")
    func outPlayersStreamIgnored() {
        let h = VSHarness(seed: 11)
        let ids = startRoom(h, count: 3, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3))
        for _ in 0..<300 { h.tick(deliveries: 30) }
        let victim = ids[0]
        h.installView(members: Array(ids.dropFirst()), crashed: [victim])
        h.installView(members: ids, joining: [victim])
        let game = h.peers[ids[1]]!.match!.game
        // The sends it queued while cut off (a healed partition) continue a stream that was cut.
        let stale = [MatchMessage.inputs(game: game, items: [.move(.left), .move(.down)]),
                     .checkpoint(game: game, pairs: 999, hash: 0xDEAD)]
        for id in ids.dropFirst() {
            let before = h.peers[id]!.match!.mirrors[victim]!.grid
            for message in stale { h.handle(id, .delivered(Delivery(from: victim, seq: h.nextSeq(id, victim), payload: message.encoded()))) }
            #expect(h.peers[id]!.match!.mirrors[victim]!.grid.stableHash == before.stableHash)
        }
        #expect(desyncs(h).isEmpty)
    }

    @Test("a joiner whose snapshot sender died, and a second joiner in the next view, both sync and can start a match")
    func snapshotSenderDiesBeforeSecondJoin() {
        let h = VSHarness(seed: 5)
        let (s, j1, j2) = (PeerID(3), PeerID(1), PeerID(2))
        h.peers[s] = h.makePeer(s)
        h.installView(members: [s], joining: [s])
        h.installView(members: [s, j1], joining: [j1])
        // The only old member dies before its snapshot reaches j1; the next view adds j2.
        h.queues[j1]![s] = []
        h.installView(members: [j1, j2], joining: [j2], crashed: [s])
        h.deliverAll(to: [j1, j2])
        #expect(h.peers[j1]!.isSynced && h.peers[j2]!.isSynced)
        for id in [j1, j2] {
            h.peers[id]!.setReady(settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 1), wantsToPlay: true)
            h.drainOutputs(id)
        }
        h.deliverAll(to: [j1, j2])
        #expect(h.peers[j1]!.match?.players == [j1, j2] && h.peers[j2]!.match?.players == [j1, j2])
    }

    @Test("a garbage landing beyond what was sent stalls the mirrors, and the next view change raises it as a desync")
    func garbageOverdrawFlagged() {
        let h = VSHarness(seed: 13)
        let ids = startRoom(h, count: 3, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3))
        for _ in 0..<60 { h.tick(deliveries: 30) }
        let cheat = ids[0]
        let game = h.peers[cheat]!.match!.game
        let received = h.peers[ids[1]]!.match!.mirrors[cheat]!.garbageReceived
        // The owner's stream claims more garbage than anybody sent it.
        h.peers[cheat]!.send(.inputs(game: game, items: [.landGarbage(received + 5)]))
        h.drainOutputs(cheat)
        h.deliverAll(to: ids)
        for _ in 0..<30 { h.tick(deliveries: 30) }
        #expect(desyncs(h).isEmpty, "a stall alone may be a message in flight")
        #expect(ids.allSatisfy { h.peers[$0]!.stats.garbageOverdrawStalls > 0 })
        h.installView(members: Array(ids.dropLast()), crashed: [ids[2]])
        let flagged = desyncs(h)
        #expect(flagged.count == 2 && flagged.allSatisfy { $0.contains("lands 5 garbage eggs never sent") }, "\(flagged)")
        #expect(h.peers[ids[1]]!.stats.garbageOverdraws == 1 && h.peers[ids[1]]!.stats.desyncs == 1)
        for _ in 0..<30 { h.tick(deliveries: 30) }
        #expect(desyncs(h).count == 2, "raised once per mirror")
    }

    @Test("voting under random interleavings, duplicates, crashes (incl. the highest ID) and joins: every peer decides the same values")
    func votingFaults() {
        var snapshotsAdopted = 0, crashes = 0, gamesOver = 0
        for seed in UInt64(1)...100 {
            let h = VSHarness(seed: seed)
            h.duplicateProbability = 0.05
            let count = 2 + Int(seed % 5)
            var ids = startRoom(h, count: count, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3), level: .easy)
            var nextID: UInt64 = 100
            for step in 0..<1_200 {
                h.tick(deliveries: Int(h.pick(count * count * 2 + 1)))
                guard step % 120 == 119 else { continue }
                switch h.pick(3) {
                case 0 where ids.count > 2:
                    // Crash: the highest ID half of the time.
                    let victim = h.pick(2) == 0 ? ids.max()! : ids[h.pick(ids.count)]
                    ids.removeAll { $0 == victim }
                    crashes += 1
                    h.installView(members: ids, crashed: [victim])
                case 1 where ids.count < 8:
                    nextID += 1
                    let joiner = PeerID(h.pick(2) == 0 ? nextID : UInt64.max - nextID)
                    ids.append(joiner)
                    h.installView(members: ids, joining: [joiner])
                default:
                    break
                }
                if let problem = h.checkDecisionsAgree() {
                    Issue.record("seed \(seed): \(problem)")
                    return
                }
            }
            h.deliverAll(to: ids)
            for events in h.events.values {
                snapshotsAdopted += events.filter { $0 == .synced(fromSnapshot: true) }.count
                gamesOver += events.filter { if case .gameOver = $0 { true } else { false } }.count
            }
            #expect(h.checkDecisionsAgree() == nil, "seed \(seed)")
            #expect(desyncs(h).count == 0, "seed \(seed): \(desyncs(h).count) desyncs, first \(desyncs(h).prefix(2))")
            // Liveness: with nothing in flight, every round anyone voted for is decided.
            for id in ids {
                guard let m = h.peers[id]!.match, h.peers[id]!.isSynced else { continue }
                let frontier = h.peers[id]!.frontier(game: m.game) ?? 0
                let spawned = m.players.map { m.pairsSpawned($0) }.max() ?? 0
                #expect(Int(frontier) > spawned, "seed \(seed): \(id.hex) frontier \(frontier) spawned \(spawned)")
            }
        }
        // The swarm must actually exercise joins, crashes and finished games.
        #expect(snapshotsAdopted > 20 && crashes > 20 && gamesOver > 50, "\(snapshotsAdopted) \(crashes) \(gamesOver)")
    }
}
