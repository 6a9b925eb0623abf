import EggGame
import EggSim
import EggTestSupport
import PeerNet
import Testing
@testable import Consensus

@Suite("tsu in the replicated match: the agreed rule set and offset items")
struct TsuCodecTests {
    @Test("the rule set travels with the settings on the wire and in JSON; sfe's encoding is unchanged")
    func settingsCarryRules() throws {
        let tsu = MatchSettings(speed: 9, colors: 5, gamesPerMatch: 3, ruleSet: .tsu)
        let sfe = MatchSettings(speed: 9, colors: 5, gamesPerMatch: 3)
        let messages: [MatchMessage] = [
            .startProposal(match: 1, settings: tsu, wantsToPlay: true),
            .roomSettings(version: 2, settings: tsu),
            .ready(match: 1, key: SettingsKey(version: 2, author: PeerID(7)), settings: tsu, wantsToPlay: false),
            .snapshot(Snapshot(view: 3, matchRound: 1, nextGame: 4, lobby: [],
                               match: MatchSnapshot(settings: tsu, players: [PeerID(1), PeerID(2)], wins: [0, 1], game: 3,
                                                    frontier: 9, pairsSpawned: [4, 5]))),
        ]
        for message in messages {
            #expect(MatchMessage.decode(message.encoded()) == message)
            let line = message.json.serialized
            #expect(line.contains(#""rules":"tsu""#), "\(line)")
            #expect(JSONValue.parse(line).flatMap(MatchMessage.init(json:)) == message, "\(line)")
        }
        let tsuBytes = MatchMessage.startProposal(match: 1, settings: tsu, wantsToPlay: true).encoded()
        let sfeBytes = MatchMessage.startProposal(match: 1, settings: sfe, wantsToPlay: true).encoded()
        // Only the speed byte differs: the rule set's index in its high nibble.
        #expect(zip(tsuBytes, sfeBytes).filter { $0 != $1 }.map { $0.0 ^ $0.1 } == [0x10])
        #expect(!MatchMessage.startProposal(match: 1, settings: sfe, wantsToPlay: true).json.serialized.contains("rules"))
        // An index no rule set has, or a name no rule set has, is rejected.
        var bad = sfeBytes
        let index = sfeBytes.indices.first { tsuBytes[$0] != sfeBytes[$0] }!
        bad[index] |= 0xF0
        #expect(MatchMessage.decode(bad) == nil)
        let unknown = MatchMessage.startProposal(match: 1, settings: tsu, wantsToPlay: true).json.serialized
            .replacingOccurrences(of: #""rules":"tsu""#, with: #""rules":"nope""#)
        #expect(JSONValue.parse(unknown).flatMap(MatchMessage.init(json:)) == nil)
    }

    @Test("offset items round-trip; zero or over the most are rejected on the wire and in JSON")
    func offsetItems() {
        let good = MatchMessage.inputs(game: 1, items: [.spawn, .offsetGarbage(1), .offsetGarbage(MatchMessage.garbageOffsetMax)])
        #expect(MatchMessage.decode(good.encoded()) == good)
        #expect(JSONValue.parse(good.json.serialized).flatMap(MatchMessage.init(json:)) == good)
        #expect(good.json.serialized.contains("offset:1"))
        for item in [StreamInput.offsetGarbage(0), .offsetGarbage(MatchMessage.garbageOffsetMax + 1)] {
            let bad = MatchMessage.inputs(game: 1, items: [.spawn, item])
            #expect(MatchMessage.decode(bad.encoded()) == nil, "\(item)")
            #expect(MatchMessage(json: bad.json) == nil, "\(item)")
        }
    }
}

@Suite("tsu matches on the simulated network", .tags(.slow), .slowTier)
struct TsuSimMatchTests {
    @Test("bot matches under tsu with loss: checkpoints match, offsets are replicated, the winner is agreed")
    func tsuSimMatch() {
        var offsets = 0
        for seed in UInt64(1)...2 {
            let options = SimOptions(seed: seed, peerCount: 2, lossProbability: 0.05, replayProbability: 0.02,
                                     delayMeanNanoseconds: 2_000_000)
            var apps: [PeerID: BotApp] = [:]
            let settings = MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3, ruleSet: .tsu)
            let net = SimNetwork(options: options, app: { id, incarnation in
                let app = BotApp(id: id, incarnation: incarnation, settings: settings)
                apps[id] = app
                return app
            })
            var elapsed: UInt64 = 0
            while apps.values.contains(where: { $0.matchWinner == nil }) && elapsed < 900_000_000_000 {
                net.run(forNanoseconds: 1_000_000_000)
                elapsed += 1_000_000_000
            }
            let winners = Set(apps.values.map { $0.matchWinner.map { $0?.hex ?? "none" } ?? "unfinished" })
            #expect(winners.count == 1 && !winners.contains("unfinished"), "seed \(seed): \(winners)")
            #expect(apps.values.map(\.peer.stats.desyncs).reduce(0, +) == 0, "seed \(seed)")
            #expect(apps.values.allSatisfy { $0.peer.stats.checkpointsVerified > 10 }, "seed \(seed)")
            offsets += apps.values.map(\.offsetItemsSent).reduce(0, +)
        }
        print("tsu sim matches: \(offsets) offset items")
        #expect(offsets > 0)
    }
}

@Suite("next pairs shown in the replicated match")
struct TsuNextPairsTests {
    @Test("the owner sees as many decided next pairs as its rule set shows: tsu 2, sfe 1", arguments: [RuleSet.tsu, .sfe])
    func ownerNextPairs(rules: RuleSet) throws {
        let h = VSHarness(seed: 5)
        let ids = startRoom(h, count: 2, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3, ruleSet: rules))
        var ticks = 0
        while (h.peers[ids[0]]!.owner?.grid.pairsSpawned ?? 0) < 3 && ticks < 10_000 {
            h.tick(deliveries: 40)
            ticks += 1
        }
        let peer = h.peers[ids[0]]!
        let owner = try #require(peer.owner)
        let game = try #require(peer.match?.game)
        let expected = (0..<rules.nextPairsShown).map {
            EggPair(value: peer.eggValue(game: game, round: owner.grid.pairsSpawned + $0)!, colors: 4)
        }
        #expect(peer.ownerNextPairs == expected)
        #expect(peer.ownerNextPairs.count == rules.nextPairsShown)
        #expect(peer.ownerNextPairs.first == peer.ownerNextPair)
    }
}
