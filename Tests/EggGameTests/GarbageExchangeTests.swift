@testable import EggBot
import Testing
@testable import EggGame

@Suite("garbage exchange: one player's account")
struct GarbageExchangeTests {
    @Test("credit, accept, land: what arrives during the live pair lands after it, what arrives later waits")
    func acceptThenLand() {
        var g = GarbageExchange()
        g.credit(5)
        g.acceptQueued()
        g.credit(3)
        #expect((g.queued, g.accepted, g.waiting) == (8, 5, 3))
        #expect(g.landAccepted(dropMax: .max) == 5)
        #expect((g.queued, g.accepted, g.landed) == (3, 0, 5))
        #expect(g.landAccepted(dropMax: .max) == 0)
    }

    @Test("at most dropMax lands at once; the rest is accepted again during the next pair")
    func dropLimit() {
        var g = GarbageExchange()
        g.credit(40)
        g.acceptQueued()
        #expect(g.landAccepted(dropMax: 30) == 30)
        #expect((g.queued, g.accepted) == (10, 0))
        #expect(g.landAccepted(dropMax: 30) == 0, "the rest waits for the next pair")
        g.acceptQueued()
        #expect(g.landAccepted(dropMax: 30) == 10)
    }

    @Test("offsetting cancels the accepted garbage first, counts it landed, and is not sent")
    func offsetting() {
        var g = GarbageExchange()
        g.credit(4)
        g.acceptQueued()
        g.credit(4)
        #expect(g.offset(pending: 5) == 5)
        #expect((g.queued, g.accepted, g.landed, g.offset) == (3, 0, 5, 5))
        #expect(g.offset(pending: 5) == 0, "the chain's garbage is spent")
        #expect(g.spawnSends(5) == 0)
        #expect(g.offset == 0)
        var h = GarbageExchange()
        h.credit(2)
        #expect(h.offset(pending: 7) == 2)
        #expect(h.spawnSends(7) == 5)
    }

    @Test("a mirror's checks: a landing or an offset never passes what was credited")
    func mirrorChecks() {
        var g = GarbageExchange()
        #expect(!g.canLand(1))
        g.credit(3)
        #expect(g.canLand(3) && !g.canLand(4) && !g.canLand(-1))
        g.recordOffset(2)
        g.recordLanding(1)
        #expect((g.queued, g.offset) == (0, 2))
        #expect(g.spawnSends(1) == 0)
    }

    @Test("tsu in a local match: 40 accepted, 30 fall, the next pair spawns, the other 10 fall after it")
    func localMatchDropsTheRestAfterTheNextPair() {
        var m = LocalMatch(options: LocalMatch.Options(seed: 7, rules: .tsu), seats: [.external, .external])
        m.tick()
        m.grids[0] = PlayerGrid(rules: .tsu, garbageSeed: m.sequence.seed)
        m.acceptGarbage(40, seat: 0)
        var landed: [Int] = []
        var ticks = 0
        while m.grids[0].state != .live && ticks < 400 {
            for event in m.tick() { if case .input(0, .landGarbage(let count), _) = event { landed.append(count) } }
            ticks += 1
        }
        #expect(m.grids[0].state == .live)
        #expect(landed == [30], "before the next pair: \(landed)")
        #expect(m.queuedGarbage(seat: 0) == 10)
    }
}
