import Benchmark
import EggBot
import EggGame

/// Mid-game positions (board, pair) reached by a medium bot with random garbage, for the
/// placement benchmark: empty boards would resolve no chains and flatter the numbers.
let positions: [(Board, EggPair)] = {
    var positions: [(Board, EggPair)] = []
    var rng = Xoshiro256StarStar(seed: 2024)
    for seed in UInt64(0)..<64 {
        let sequence = EggSequence(seed: seed)
        var grid = PlayerGrid()
        var bot = Bot(level: .medium, seed: seed)
        while grid.state != .toppedOut && grid.pairsSpawned < 40 {
            if rng.nextInt(below: 4) == 0 {
                grid.apply(.landGarbage(rng.nextInt(below: 6)))
                // Garbage falls in time too.
                while grid.state == .resolving { grid.apply(.ticks(PlayerGrid.ticksPerInputMax)) }
            }
            grid.apply(.spawn(sequence.pair(at: grid.pairsSpawned)))
            guard grid.state == .live else { break }
            if grid.pairsSpawned % 4 == 0 { positions.append((grid.board, grid.livePair!.pair)) }
            for move in bot.plan(grid: grid, next: sequence.pair(at: grid.pairsSpawned)) {
                grid.apply(.move(move))
            }
            // The pair's eggs land and its chain pops in time: tick until the grid awaits a spawn
            // (without this every spawn after the first was refused and no position was taken).
            while grid.state == .resolving || grid.state == .live { grid.apply(.ticks(PlayerGrid.ticksPerInputMax)) }
        }
    }
    precondition(positions.count >= 64, "the placement benchmark needs its positions (got \(positions.count))")
    return positions
}()

let benchmarks: @Sendable () -> Void = {
    Benchmark(
        "bot placements",
        configuration: .init(metrics: [.throughput, .wallClock], scalingFactor: .kilo, maxDuration: .seconds(5))
    ) { benchmark in
        // One scaled iteration = one placement: drop the pair, resolve its full chain, score it.
        var bot = Bot(level: .hard)
        var index = 0, checksum = 0
        for _ in benchmark.scaledIterations {
            let (board, pair) = positions[index % positions.count]
            let placement = Placement.all[index % Placement.all.count]
            checksum &+= bot.scorePlacement(board: board, pair: pair, placement: placement)
            index &+= 7
        }
        blackHole(checksum)
    }

    Benchmark(
        "bot-vs-bot games, hard",
        configuration: .init(metrics: [.throughput, .wallClock], maxDuration: .seconds(10), maxIterations: 100)
    ) { benchmark in
        var seed: UInt64 = 0
        for _ in benchmark.scaledIterations {
            var match = LocalMatch(options: .init(seed: seed), seats: [.bot(.hard), .bot(.hard)])
            blackHole(match.run())
            seed &+= 1
        }
    }

    peerNetBenchmarks()
}
