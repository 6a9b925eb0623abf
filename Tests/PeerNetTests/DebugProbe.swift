import EggSim
@testable import PeerNet
import Testing

@Test("probe", arguments: [1, 21] as [UInt64]) func probe(seed: UInt64) {
    let f = SwarmTests.runFaults(seed: seed)
    print("SEED \(seed): \(f.count) failures\n" + f.prefix(4).joined(separator: "\n"))
}
