import EggPrimitives
import PeerNet
import Testing
@testable import Consensus

/// Values that other peers, logs and replays depend on, pinned so that moving the primitives
/// behind them (SplitMix64, the LEB128 writer, hex16) cannot change a bit.
@Suite("pinned values: votes, game numbers, the message encoding")
struct PinnedValueTests {
    @Test("a peer's vote for a round is pinned")
    func eggVotes() {
        #expect(VoteSource(seed: 0).eggVote(game: 0, round: 0) == 0xA706_DD2F_4D19_7E6F)
        #expect(VoteSource(seed: 42).eggVote(game: 1, round: 7) == 0x495B_1A48_0F1D_BADA)
        #expect(VoteSource(seed: 0xDEAD_BEEF).eggVote(game: .max, round: 65_536) == 0x11EA_476E_1828_6113)
    }

    @Test("a view's first game number is pinned; a view without a key counts from 0")
    func firstGames() {
        #expect(MatchPeer.firstGame(of: MembershipView(id: 1, members: [PeerID(1)], key: 1)) == 0x8902_5CC1)
        #expect(MatchPeer.firstGame(of: MembershipView(id: 42, members: [PeerID(1)], key: 0xAB_CDEF)) == 0x1B58_A455)
        #expect(MatchPeer.firstGame(of: MembershipView(id: .max, members: [PeerID(1)], key: .max)) == 0xBCD0_60C4)
        #expect(MatchPeer.firstGame(of: MembershipView(id: 9, members: [PeerID(1)], key: 0)) == 0)
    }

    /// Pinned again when the `grids` message and tick items were added (protocol 3); a deliberate change of the message encoding (or of
    /// `sampleMessages`) changes it (re-pin then).
    @Test("the binary encoding of every sample message is pinned (FNV-1a 64 of all of them)")
    func encodingPinned() {
        var all: [UInt8] = []
        for message in sampleMessages { all += message.encoded() }
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in all { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        #expect(all.count == 983)
        #expect(hex16(hash) == "ee24e26bc524cea1")
    }
}
