import PeerNet

extension MatchPeer {
    /// The settings each member whose start vote for the coming match was delivered proposed
    /// (the highest ID's apply when the start is decided).
    public var proposedSettings: [PeerID: MatchSettings] {
        (startVotes[matchRound]?.votes ?? [:]).mapValues(\.settings)
    }
}
