import EggBot
import EggGame
import PeerNet
import Testing
@testable import Consensus

/// Two players and a spectator in one view; the players play no bot: each tick, `drops(player,
/// tick)` says whether it hard-drops its live pair (otherwise gravity alone moves it).
private func playUntilGameOver(seed: UInt64, drops: (Int, Int) -> Bool) -> (ids: [PeerID], h: VSHarness) {
    let h = VSHarness(seed: seed)
    let ids = [PeerID(0x11), PeerID(0x22), PeerID(0x33)]
    for id in ids { h.peers[id] = h.makePeer(id) }
    h.installView(members: ids, joining: ids)
    let settings = MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3)
    for (index, id) in ids.enumerated() {
        h.peers[id]!.setReady(settings: settings, wantsToPlay: index < 2)
        h.drainOutputs(id)
    }
    h.deliverAll(to: ids)
    var tick = 0
    while tick < 20_000 && !ids.allSatisfy({ !gameOvers(h, $0, game: 0).isEmpty }) {
        for (index, id) in ids.prefix(2).enumerated() {
            guard let owner = h.peers[id]!.owner, owner.grid.state == .live, drops(index, tick) else { continue }
            h.peers[id]!.applyLocal(.hardDrop, now: h.now)
            h.drainOutputs(id)
        }
        // Rounds are decided well ahead, so neither player ever waits for a pair: their clocks
        // run alike, and the order of deliveries below is random (seeded).
        h.tick(deliveries: 40)
        tick += 1
    }
    h.deliverAll(to: ids)
    return (ids, h)
}

@Suite("Simultaneous top-outs")
struct TopOutTests {
    @Test("two players topping out on the same tick of their game clocks draw the game on every peer, whatever the delivery order",
          arguments: UInt64(1)...6)
    func sameTickIsADrawEverywhere(seed: UInt64) {
        // Both players hard-drop every pair at once: the same eggs, the same moves, the same ticks.
        let (ids, h) = playUntilGameOver(seed: seed) { _, _ in true }
        let owners = ids.prefix(2).map { h.peers[$0]!.match?.mirrors[$0]?.toppedOutTick }
        for id in ids {
            #expect(gameOvers(h, id, game: 0) == [nil], "seed \(seed): peer \(id.hex) saw \(gameOvers(h, id, game: 0)); top-out ticks \(owners)")
        }
        // A draw does not count: the match goes on with the next game.
        for id in ids { #expect(h.peers[id]!.match?.wins.values.reduce(0, +) ?? 0 == 0) }
    }

    @Test("the player who stays in longer by its own clock wins on every peer, whichever ID it has",
          arguments: [(UInt64(1), 0), (UInt64(2), 1), (UInt64(3), 0), (UInt64(4), 1)])
    func longerSurvivorWins(seed: UInt64, slow: Int) {
        // The slow player hard-drops only on every third tick (a pair takes an even number of
        // ticks from lock to spawn, so every second tick would never hold it up): it tops out later.
        let (ids, h) = playUntilGameOver(seed: seed) { player, tick in player != slow || tick % 3 == 0 }
        for id in ids {
            #expect(gameOvers(h, id, game: 0) == [ids[slow]], "seed \(seed): peer \(id.hex) saw \(gameOvers(h, id, game: 0))")
        }
    }

    @Test("a clock that goes back is ignored, so a top-out tick is never before an alive tick")
    func clockNeverGoesBack() {
        var peer = MatchPeer(config: MatchPeerConfig(id: PeerID(1), name: "a", voteSeed: 1))
        var mirror = PlayerMirror()
        peer.receiveClock(50, mirror: &mirror)
        peer.receiveClock(40, mirror: &mirror)
        #expect(mirror.clock == 50)
        #expect(peer.stats.ignoredMessages == 1)
        #expect(mirror.toppedOutTick == nil)
    }
}

@Suite("Simultaneous top-outs, local match")
struct LocalTopOutTests {
    @Test("in a local match two seats topping out on the same tick draw the game too")
    func localSameTickDraws() {
        var match = LocalMatch(options: LocalMatch.Options(seed: 9, bestOf: 3), seats: [.external, .external])
        var overs: [Int?] = []
        var ticks = 0
        while overs.isEmpty && ticks < 20_000 {
            for seat in 0..<2 where match.grids[seat].state == .live { match.enqueue(.hardDrop, seat: seat) }
            for event in match.tick() { if case .gameOver(let winner) = event { overs.append(winner) } }
            ticks += 1
        }
        #expect(overs == [nil])
        #expect(match.wins == [0, 0])
    }
}
