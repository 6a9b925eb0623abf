import EggTestSupport
import Testing
@testable import EggBot
@testable import EggGame

/// One recorded game: every input in order (idle ticks merged), the grid's hash before every
/// spawn (the pair settled) and after every tick.
struct RecordedGame {
    var inputs: [PlayerInput] = []
    var hashesAfterPairs: [UInt64] = []
    var hashesAfterTicks: [UInt64] = []
    var finalHash: UInt64 = 0
    var speed = 0
    var startingHeight = 0
    var rules = RuleSet.sfe
    var garbageSeed: UInt64 = 0

    /// A fresh grid as the owner's began.
    func grid() -> PlayerGrid {
        PlayerGrid(startingHeight: startingHeight, rules: rules, speed: speed, garbageSeed: garbageSeed)
    }
}

/// Plays one seeded game on the owner side, tick by tick as LocalMatch and MatchPeer do: spawn
/// when settled (after landing random garbage), random moves or a bot, soft drop, then the tick.
func recordGame(seed: UInt64, pairsMax: Int, rules: RuleSet = .sfe) -> RecordedGame {
    var rng = Xoshiro256StarStar(seed: seed)
    let sequence = EggSequence(seed: seed, colors: 4 + rng.nextInt(below: 3))
    var record = RecordedGame()
    record.rules = rules
    record.garbageSeed = seed
    record.speed = 5 + rng.nextInt(below: 5)
    var clock = GravityClock(speed: record.speed, rules: rules)
    var bot: BotPlayer? = seed % 4 == 0 ? BotPlayer(level: .medium, seed: seed) : nil
    record.startingHeight = min(rng.nextInt(below: 4), rules.startingHeights.upperBound)
    var grid = record.grid()
    func apply(_ input: PlayerInput) {
        let outcome = grid.apply(input)
        precondition(outcome.isAccepted, "seed \(seed): owner fed an invalid input \(input)")
        if case .ticks = input {
            record.hashesAfterTicks.append(grid.stableHash)
            if case .ticks(let before)? = record.inputs.last {
                record.inputs[record.inputs.count - 1] = .ticks(before + 1)
                return
            }
        }
        record.inputs.append(input)
    }
    var landedThisPair = false
    for _ in 0..<(pairsMax * 3_000) where grid.state != .toppedOut && grid.pairsSpawned <= pairsMax {
        if grid.state == .awaitingSpawn {
            if !landedThisPair && rng.nextInt(below: 3) == 0 {
                landedThisPair = true
                apply(.landGarbage(rng.nextInt(below: rules.garbageDropMax == Int.max ? 9 : 20)))
            }
            if grid.state == .awaitingSpawn {
                record.hashesAfterPairs.append(grid.stableHash)
                apply(.spawn(sequence.pair(at: grid.pairsSpawned)))
                landedThisPair = false
                clock.reset()
            }
        }
        if grid.state == .live, let move = bot != nil ? bot!.tick(grid: grid, next: sequence.pair(at: grid.pairsSpawned)) : randomMove(&rng) {
            apply(.move(move))
        }
        if grid.state == .live && clock.tick(softDrop: rng.nextInt(below: 2) == 0) { apply(.move(.down)) }
        if grid.state == .live || grid.state == .resolving { apply(.ticks(1)) }
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
    @Test("a grid rebuilt from the recorded inputs matches the owner's hash after every pair and every tick (60 seeds)",
          .tags(.slow), .slowTier, arguments: RuleSet.all)
    func mirrorMatchesOwner(rules: RuleSet) {
        var pairsTotal = 0, chainsTotal = 0
        for seed in UInt64(1)...60 {
            let record = recordGame(seed: seed, pairsMax: 40, rules: rules)
            var mirror = record.grid()
            var pairHashes: [UInt64] = [], tickHashes: [UInt64] = []
            for input in record.inputs {
                if case .spawn = input { pairHashes.append(mirror.stableHash) }
                // Merged ticks are applied one at a time here, to compare after every tick.
                let singles: [PlayerInput] = if case .ticks(let count) = input { Array(repeating: .ticks(1), count: count) } else { [input] }
                for single in singles {
                    let outcome = mirror.apply(single)
                    #expect(outcome.isAccepted, "seed \(seed): mirror rejected \(single)")
                    if case .ticks = single { tickHashes.append(mirror.stableHash) }
                    if case .ticked(_, let chain?) = outcome, chain.chain > 0 { chainsTotal += 1 }
                }
            }
            #expect(pairHashes == record.hashesAfterPairs, "seed \(seed): hashes diverged")
            #expect(tickHashes == record.hashesAfterTicks, "seed \(seed): tick hashes diverged")
            #expect(mirror.stableHash == record.finalHash, "seed \(seed): final hash differs")
            // The merged tick counts, applied as they are, reach the same state.
            var merged = record.grid()
            for input in record.inputs { merged.apply(input) }
            #expect(merged.stableHash == record.finalHash, "seed \(seed): merged ticks differ")
            pairsTotal += pairHashes.count
        }
        print("\(rules.name): replayed \(pairsTotal) pairs, \(chainsTotal) with pops")
        #expect(pairsTotal > 600)
        #expect(chainsTotal > 20)
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
