@testable import EggBot
@testable import EggGame
import EggTestSupport
import Testing

/// The chain timing against the model of SFE's runner on the boards the insane bot builds: each
/// lock whose chain is 6 steps or more (up to 11 in these games), as the board is when the pair comes to rest
/// (the pair put where its drop preview says it lands). The random and searched boards of
/// ``SfeRunnerAgreementTests`` reach 9 steps; these reach the 10-chains real games fire.
@Suite("sfe: chain timing on the insane bot's long chains", .tags(.slow), .slowTier)
struct SfeBotBoardTimingTests {
    @Test("eggs' ticks equal the runner's frames on every 6+ chain of 8 insane solo games (the 2-frame start aside)")
    func botChains() {
        var boards: [(board: Board, chain: Int)] = []
        for seed in UInt64(0)..<8 {
            var match = LocalMatch(options: .init(seed: 7_100 + seed, colors: 4, speed: 0, gamesMax: 1, rules: .sfe),
                                   seats: [.bot(.insane)])
            var placed: Board?
            while !match.isOver && match.grids[0].pairsSpawned <= 150 {
                let grid = match.grids[0]
                if grid.livePair != nil {
                    var board = grid.board
                    for egg in grid.dropPreview { board[column: egg.column, row: egg.row] = .egg(egg.color) }
                    placed = board
                }
                for event in match.tick() {
                    if case .input(_, _, .ticked(_, let chain?)) = event, chain.chain >= 6, let board = placed {
                        boards.append((board, chain.chain))
                    }
                }
            }
        }
        // A pair that moved in the tick it locked rests elsewhere than the preview of the tick
        // before: such a board is not the one that chained (its chain differs) and is left out.
        let captured = boards.count
        boards = boards.filter { resolve(board: $0.board, incoming: 0).chain.chain == $0.chain }
        let (agree, disagreements, _) = runnerAgreement(boards.map { (board: $0.board, incoming: 0) })
        let chains = Dictionary(grouping: boards, by: \.chain).mapValues(\.count).sorted { $0.key < $1.key }
        print("sfe runner agreement (insane bot's chains): \(agree)/\(boards.count) (\(captured - boards.count) captures left out); chains \(chains)")
        #expect(boards.count * 10 >= captured * 9, "most captures are the chaining board: \(boards.count) of \(captured)")
        #expect(boards.contains { $0.chain >= 10 }, "no 10-chain in these games: \(chains)")
        #expect(agree == boards.count, "\(disagreements.joined(separator: "\n"))")
    }
}
