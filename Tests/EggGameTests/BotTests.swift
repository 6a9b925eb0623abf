import EggTestSupport
import Testing
@testable import EggBot
@testable import EggGame

@Suite("bot and local matches")
struct BotTests {
    @Test("there are 22 distinct placements and the bot's plan reaches the placement it chose")
    func planReachesTarget() {
        #expect(Placement.all.count == 22)
        var rng = Xoshiro256StarStar(seed: 5)
        var bot = Bot(level: .medium, seed: 5)
        for trial in 0..<100 {
            var grid = PlayerGrid()
            grid.apply(.landGarbage(rng.nextInt(below: 30)))
            while grid.state == .resolving { grid.apply(.ticks(1)) }
            let pair = EggPair(value: rng.next(), colors: 4)
            grid.apply(.spawn(pair))
            let target = bot.choosePlacement(board: grid.board, current: pair, next: nil)!
            var expected = grid.board
            expected.drop(pair, orientation: target.orientation, column: target.column)
            _ = expected.resolveChain()
            for move in Bot.moves(to: target, from: grid.livePair!, on: grid.board, rules: grid.rules)! {
                #expect(grid.apply(.move(move)).isAccepted)
            }
            while grid.state == .resolving { grid.apply(.ticks(1)) }
            #expect(grid.state == .awaitingSpawn, "trial \(trial)")
            #expect(grid.board == expected, "trial \(trial)")
        }
    }

    @Test("every bot level finishes whole games against itself", arguments: BotLevel.allCases)
    func gamesEnd(level: BotLevel) {
        for seed in UInt64(1)...2 {
            var match = LocalMatch(options: .init(seed: seed, speed: 5, gamesMax: 3), seats: [.bot(level), .bot(level)])
            let winner = match.run()
            #expect(match.isOver)
            // Noise-free bots playing one sequence mirror each other and top out on the same tick
            // (a draw, replayed); every game still ends in a top-out, never at the time limit.
            if level.noiseMax > 0 { #expect(winner != nil, "level \(level) seed \(seed): game ended without a top-out") }
            #expect(match.lastGameGrids!.contains { $0.state == .toppedOut })
        }
    }

    @Test("a local match replays exactly from its recorded inputs, and garbage flows both ways")
    func localMatchReplays() {
        var match = LocalMatch(options: .init(seed: 11, speed: 3), seats: [.bot(.easy), .bot(.easy)])
        var sent = [0, 0], landed = [0, 0]
        while !match.isOver {
            for event in match.tick() {
                switch event {
                case .garbageSent(let from, _, let count): sent[from] += count
                case .input(let seat, _, .garbageLanded(let count)): landed[seat] += count
                default: break
                }
            }
        }
        #expect(sent[0] > 0 && sent[1] > 0, "sent \(sent)")
        #expect(landed[0] <= sent[1] && landed[1] <= sent[0])
        for seat in 0..<2 {
            var mirror = PlayerGrid(speed: 3)
            for input in match.inputs[seat] { #expect(mirror.apply(input).isAccepted) }
            #expect(mirror.stableHash == match.grids[seat].stableHash)
        }
    }

    @Test("hard beats easy in at least 8 of 10 seeded games", .tags(.slow), .slowTier)
    func hardBeatsEasy() {
        var hardWins = 0, easyWins = 0, draws = 0
        for seed in UInt64(0)..<10 {
            let hardSeat = Int(seed % 2)
            var seats: [LocalMatch.Seat] = [.bot(.easy), .bot(.easy)]
            seats[hardSeat] = .bot(.hard)
            var match = LocalMatch(options: .init(seed: seed, speed: 4, gamesMax: 1), seats: seats)
            switch match.run() {
            case hardSeat: hardWins += 1
            case nil: draws += 1
            default: easyWins += 1
            }
        }
        print("hard vs easy over 10 games: hard \(hardWins), easy \(easyWins), draws \(draws)")
        #expect(hardWins >= 8)
    }

    @Test("medium beats easy in at least 80 of 100 seeded sfe games at their own paces (77 with medium's old noise)",
          .tags(.slow), .slowTier)
    func mediumBeatsEasy() {
        let result = BotBench.versus(.medium, .easy, seeds: (0..<UInt64(100)).map { $0 })
        print("medium vs easy over 100 games: medium \(result.first), easy \(result.second), draws \(result.undecided)")
        #expect(result.first >= 80)
    }
}
