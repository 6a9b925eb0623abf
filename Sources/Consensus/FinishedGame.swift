import PeerNet

/// A game as it ended: its winner (nil: a draw or no winner) and every player's mirror at the end
/// (final grid, largest chain, garbage sent and received). Kept by ``MatchPeer`` until the next
/// game ends, so a renderer can hold the final boards up and total a match's figures.
public struct FinishedGame: Sendable {
    public var game: UInt32
    public var winner: PeerID?
    /// False when this peer joined during the game and did not mirror it (`mirrors` is empty).
    public var mirrored: Bool
    public var mirrors: [PeerID: PlayerMirror]
}
