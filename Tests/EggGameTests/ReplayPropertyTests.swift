import EggTestSupport
import Testing
@testable import EggGame

/// One recorded game: every input in order and the grid's hash after every pair settled.
struct RecordedGame {
    var inputs: [PlayerInput] = []
    var hashesAfterPairs: [UInt64] = []
    var finalHash: UInt64 = 0
}

/// Plays one seeded game on the owner side (gravity clock, random moves or a bot, random garbage).
func recordGame(seed: UInt64, pairsMax: Int) -> RecordedGame {
    var rng = Xoshiro256StarStar(seed: seed)
    let sequence = EggSequence(seed: seed, colors: 4 + rng.nextInt(below: 3))
    var clock = GravityClock(speed: rng.nextInt(below: 10))
    var bot: BotPlayer? = seed % 4 == 0 ? BotPlayer(level: .medium, seed: seed) : nil
    var grid = PlayerGrid()
    var record = RecordedGame()
    func apply(_ input: PlayerInput) {
        let outcome = grid.apply(input)
        precondition(outcome.isAccepted, "seed \(seed): owner fed an invalid input \(input)")
        record.inputs.append(input)
        if case .locked = outcome { record.hashesAfterPairs.append(grid.stableHash) }
    }
    for _ in 0..<(pairsMax * 2_000) where grid.state != .toppedOut && grid.pairsSpawned <= pairsMax {
        if grid.state == .awaitingSpawn {
            if rng.nextInt(below: 3) == 0 { apply(.landGarbage(rng.nextInt(below: 9))) }
            apply(.spawn(sequence.pair(at: grid.pairsSpawned)))
            clock.reset()
            continue
        }
        if let move = bot != nil ? bot!.tick(grid: grid, next: sequence.pair(at: grid.pairsSpawned)) : randomMove(&rng) {
            apply(.move(move))
        }
        if grid.state == .live && clock.tick(softDrop: rng.nextInt(below: 4) == 0) { apply(.move(.down)) }
    }
    record.finalHash = grid.stableHash
    return record
}

func randomMove(_ rng: inout Xoshiro256StarStar) -> Move? {
    switch rng.nextInt(below: 40) {
    case 0...2: .left
    case 3...5: .right
    case 6...7: .rotateCW
    case 8...9: .rotateCCW
    case 10...11: .down
    case 12: .hardDrop
    default: nil
    }
}

@Suite("replication: a mirror rebuilt from inputs only")
struct ReplayPropertyTests {
    @Test("a grid rebuilt from the recorded inputs matches the owner's hash after every pair (200 seeds)", .tags(.slow), .slowTier)
    func mirrorMatchesOwner() {
        var pairsTotal = 0, chainsTotal = 0
        for seed in UInt64(1)...200 {
            let record = recordGame(seed: seed, pairsMax: 60)
            var mirror = PlayerGrid()
            var hashes: [UInt64] = []
            for input in record.inputs {
                let outcome = mirror.apply(input)
                #expect(outcome.isAccepted, "seed \(seed): mirror rejected \(input)")
                if case .locked(let chain) = outcome {
                    hashes.append(mirror.stableHash)
                    if chain.chain > 0 { chainsTotal += 1 }
                }
            }
            #expect(hashes == record.hashesAfterPairs, "seed \(seed): hashes diverged")
            #expect(mirror.stableHash == record.finalHash, "seed \(seed): final hash differs")
            pairsTotal += hashes.count
        }
        print("replayed \(pairsTotal) pairs, \(chainsTotal) with pops")
        #expect(pairsTotal > 2_000)
        #expect(chainsTotal > 50)
    }

    @Test("the stable hash is pinned and changes with any input")
    func stableHashIsStable() {
        var grid = PlayerGrid()
        #expect(grid.stableHash == PlayerGrid().stableHash)
        let empty = grid.stableHash
        grid.apply(.spawn(EggPair(pivot: .red, child: .blue)))
        let spawned = grid.stableHash
        grid.apply(.move(.left))
        #expect(Set([empty, spawned, grid.stableHash]).count == 3)
        var hasher = StableHasher()
        for byte in Array("a".utf8) { hasher.combine(byte) }
        #expect(hasher.value == 0xAF63_DC4C_8601_EC8C, "FNV-1a 64 of \"a\"")
    }
}
