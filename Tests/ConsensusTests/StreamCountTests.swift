import EggGame
import PeerNet
import Testing
@testable import Consensus

/// The stream counts the terminal uses to time a remote move (`EGGS_TRACE_INPUT`): a mirror
/// that has applied everything its owner sent shows the owner's count, item for item.
@Suite("Stream counts")
struct StreamCountTests {
    @Test("once every message is delivered, each mirror has applied as many items as its owner made")
    func mirrorsCatchUpWithOwners() {
        let h = VSHarness(seed: 7)
        let ids = startRoom(h, count: 3, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 1))
        var checked = 0
        for _ in 0..<8 {
            for _ in 0..<150 { h.tick(deliveries: 20) }
            for id in ids { h.drainOutputs(id) }
            h.deliverAll(to: ids)
            for owner in ids {
                guard let made = h.peers[owner]!.owner, !made.isOut else { continue }
                for viewer in ids where viewer != owner {
                    guard let state = h.peers[viewer]!.match, state.game == made.game,
                          let mirror = state.mirrors[owner] else { continue }
                    #expect(mirror.inputsApplied == made.inputsMade,
                            "\(viewer.hex)'s mirror of \(owner.hex): \(mirror.inputsApplied) applied, \(made.inputsMade) made")
                    checked += 1
                }
            }
        }
        #expect(checked > 10)
        let made = ids.compactMap { h.peers[$0]!.owner?.inputsMade }
        #expect(made.allSatisfy { $0 > 20 }, "owners made \(made)")
    }
}
