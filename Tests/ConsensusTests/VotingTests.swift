import EggGame
import PeerNet
import Testing
@testable import Consensus

@Suite("Voting rounds")
struct VotingTests {
    let a = PeerID(1), b = PeerID(2), c = PeerID(3)

    @Test("a round is decided when every member voted, and the highest ID's vote wins")
    func highestWins() {
        var r = EggRounds(game: 0, members: [a, b, c])
        let first = r.receive(from: c, firstRound: 0, values: [30, 31])
        let second = r.receive(from: a, firstRound: 0, values: [10])
        #expect(first.1.isEmpty && second.1.isEmpty)
        let (_, decided) = r.receive(from: b, firstRound: 0, values: [20, 21, 22])
        #expect(decided == 0..<1)
        #expect(r.value(0) == 30)
        #expect(r.value(1) == nil)
    }

    @Test("second votes for a round are ignored; a gap is refused")
    func duplicates() {
        var r = EggRounds(game: 0, members: [a, b])
        _ = r.receive(from: a, firstRound: 0, values: [1, 2])
        let again = r.receive(from: a, firstRound: 0, values: [9, 9]).0
        let overlap = r.receive(from: a, firstRound: 1, values: [9, 3]).0
        let gap = r.receive(from: a, firstRound: 5, values: [9]).0
        #expect(again == .duplicate)
        #expect(overlap == .accepted(count: 1, duplicates: 1))
        #expect(gap == .gap)
        _ = r.receive(from: b, firstRound: 0, values: [7, 7, 7])
        #expect(r.frontier == 3)
        #expect([r.value(0), r.value(1), r.value(2)] == [7, 7, 7])
    }

    @Test("departed members are no longer required; the survivors' highest vote wins")
    func departure() {
        var r = EggRounds(game: 0, members: [a, b, c])
        _ = r.receive(from: a, firstRound: 0, values: [10, 11])
        _ = r.receive(from: b, firstRound: 0, values: [20])
        let decided = r.install(members: [a, b], resetPending: false)
        #expect(decided == 0..<1)
        #expect(r.value(0) == 20)
    }

    @Test("a view with joiners resets undecided votes, and re-votes repeat themselves")
    func joinReset() {
        var r = EggRounds(game: 0, members: [a, b])
        _ = r.receive(from: a, firstRound: 0, values: [1, 2, 3])
        _ = r.receive(from: b, firstRound: 0, values: [4])
        #expect(r.frontier == 1)
        _ = r.install(members: [a, b, c], resetPending: true)
        #expect(r.nextRound(of: a) == 1)
        #expect(r.nextRound(of: c) == 1)
        let source = VoteSource(seed: 5)
        #expect(source.eggVote(game: 1, round: 2) == VoteSource(seed: 5).eggVote(game: 1, round: 2))
        #expect(source.eggVote(game: 1, round: 2) != source.eggVote(game: 1, round: 3))
    }

    @Test("a one-shot vote decides with all members and re-evaluates when one departs")
    func oneShot() {
        var v = OneShotVote<Int>()
        let first = v.receive(from: a, value: 1, members: [a, b, c])
        let second = v.receive(from: a, value: 2, members: [a, b, c])
        let third = v.receive(from: b, value: 2, members: [a, b, c])
        #expect(first && !second && third)
        #expect(!v.isDecided)
        v.install(members: [a, b], reset: false)
        #expect(v.result?.winner == b)
    }
}
