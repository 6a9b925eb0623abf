import EggSim
@testable import PeerNet
import Testing

/// The rule of two (`ReliableMulticast.blockedBound(base:)`): in a view of two, the lower ID
/// cut off from the higher one gives the view up as soon as it suspects it.
@Suite("PeerNet views of two")
struct TwoPeerTests {
    static func id(_ n: UInt64) -> PeerID { PeerID(n) }

    static func abandoned(_ node: SimNode) -> Bool {
        node.log.contains { $0.incarnation == node.incarnation && { if case .viewAbandoned = $0 { true } else { false } }($0.event) }
    }

    /// Two peers with traffic; `crashed` is killed (never restarted). The survivor must be a
    /// member of a view of its own within the suspect timeout + 1 s, whichever ID crashed.
    static func crashOfOne(_ crashed: UInt64) {
        let network = SimNetwork(
            options: SimOptions(seed: 83 + crashed, peerCount: 2),
            app: traffic(total: 3000, startWhenMembers: 1, intervalNanoseconds: 20 * ms))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        network.run(forNanoseconds: 1 * seconds)
        let survivor = network.node(Self.id(3 - crashed))
        let viewsBefore = survivor.views.count
        network.crash(Self.id(crashed))
        let start = network.now
        let bound = PeerNetConfig(peerID: survivor.peerID).suspectTimeoutNanoseconds + 1 * seconds
        while network.now.nanoseconds(since: start) < bound + 1 * seconds,
              survivor.core!.view.members != [survivor.peerID] || survivor.core!.status != .member {
            network.run(forNanoseconds: 1 * ms)
        }
        let took = network.now.nanoseconds(since: start)
        if peerNetReport { print("crash of \(crashed) (of 2): the survivor in a view of its own after \(took / ms) ms") }
        #expect(survivor.core!.view.members == [survivor.peerID], "crash of \(crashed)")
        #expect(took <= bound, "crash of \(crashed): \(took / ms) ms (goal ≤ \(bound / ms) ms)")
        // The higher ID is primary alone and simply goes on; the lower one gives up its view
        // (its part of the match ends for it alone) and founds a group of its own.
        #expect(abandoned(survivor) == (crashed == 2), "crash of \(crashed): abandoned \(abandoned(survivor))")
        #expect(survivor.views.count > viewsBefore)
        #expect(SimChecker.violations(network) == [])
    }

    @Test("crash: the lower of two peers survives the higher one's crash in a view of its own within the suspect timeout + 1 s")
    func higherCrashes() { Self.crashOfOne(2) }

    @Test("crash: the higher of two peers survives the lower one's crash in a view of its own within the suspect timeout + 1 s")
    func lowerCrashes() { Self.crashOfOne(1) }

    @Test("partition of two: the higher ID goes on alone, the lower gives its view up within the suspect timeout + 1 s (never both deciding in one view), and they meet again after the heal")
    func partitionOfTwo() {
        let network = SimNetwork(
            options: SimOptions(seed: 89, peerCount: 2),
            app: traffic(total: 3000, startWhenMembers: 1, intervalNanoseconds: 20 * ms))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        network.run(forNanoseconds: 1 * seconds)
        let low = network.node(Self.id(1)), high = network.node(Self.id(2))
        let shared = low.core!.view
        let highViews = high.views.count
        network.partition([[low.peerID], [high.peerID]])
        let bound = PeerNetConfig(peerID: low.peerID).suspectTimeoutNanoseconds + 1 * seconds
        network.run(forNanoseconds: bound)
        #expect(Self.abandoned(low), "the lower ID gave its view up")
        #expect(!Self.abandoned(high), "the higher ID kept going")
        #expect(low.core!.view.members == [low.peerID] && low.core!.status == .member)
        #expect(high.core!.view.members == [high.peerID] && high.core!.status == .member)
        // No view after the shared one contains both sides: they never go on together apart.
        let lowLater = low.views.filter { $0.id != shared.id || $0.key != shared.key }
        #expect(lowLater.allSatisfy { !$0.members.contains(high.peerID) })
        #expect(high.views.dropFirst(highViews).allSatisfy { !$0.members.contains(low.peerID) })
        network.heal()
        #expect(network.runUntilConverged(timeoutNanoseconds: 20 * seconds))
        #expect(low.core!.view.members == [1, 2].map(Self.id))
        // The higher ID's group admitted the lower one (it never joined the lower one's group).
        #expect(high.views.dropFirst(highViews).allSatisfy { !$0.joined.contains(high.peerID) })
        #expect(SimChecker.violations(network) == [])
    }
}
