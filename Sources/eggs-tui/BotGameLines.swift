import Consensus
import PeerNet

extension BotPeer {
    /// Prints one line on stdout for each game that ended since the last call:
    /// `0000000000000100 game 3: won`, `… game 4: lost (winner 0000000000000101)`, `… game 5: draw`;
    /// a spectator, or a bot not playing that game: `… game 6: watched (winner …)`.
    /// `beforeLine` runs before each line (the progress line is taken off the terminal).
    func printFinishedGames(beforeLine: () -> Void = {}) {
        for event in peer.takeEvents() {
            switch event {
            case .matchStarted(_, let players):
                playing = players.contains(peer.id) && !isSpectator
            case .gameOver(_, let winner):
                gamesPrinted += 1
                let result: String
                if !playing {
                    result = "watched (" + (winner.map { "winner \($0.hex)" } ?? "no winner") + ")"
                } else if let winner {
                    result = winner == peer.id ? "won" : "lost (winner \(winner.hex))"
                } else {
                    result = "draw"
                }
                beforeLine()
                FileHandleOutput.stdout("\(peer.id.hex) game \(gamesPrinted): \(result)")
            default:
                break
            }
        }
    }
}
