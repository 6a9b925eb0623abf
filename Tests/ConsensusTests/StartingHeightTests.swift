import EggGame
import PeerNet
import Testing
@testable import Consensus

@Suite("Starting height: an agreed setting on the wire, in JSON, in the log and on every grid")
struct StartingHeightTests {
    static let high = MatchSettings(speed: 9, colors: 5, gamesPerMatch: 3, startingHeight: 9)
    static let none = MatchSettings(speed: 9, colors: 5, gamesPerMatch: 3)

    static func messages(_ settings: MatchSettings) -> [MatchMessage] {
        [
            .startProposal(match: 1, settings: settings, wantsToPlay: true),
            .roomSettings(version: 2, settings: settings),
            .ready(match: 1, key: SettingsKey(version: 2, author: PeerID(7)), settings: settings, wantsToPlay: false),
            .snapshot(Snapshot(view: 3, matchRound: 1, nextGame: 4, lobby: [],
                               match: MatchSnapshot(settings: settings, players: [PeerID(1), PeerID(2)], wins: [0, 1], game: 3,
                                                    frontier: 9, pairsSpawned: [4, 5]),
                               room: RoomSnapshot(settings: settings, key: SettingsKey(version: 2, author: PeerID(1)),
                                                  marks: [:], goLeader: nil))),
        ]
    }

    @Test("the height travels with the settings on the wire and in JSON; height 0's encoding is unchanged")
    func roundTrip() {
        for message in Self.messages(Self.high) {
            #expect(MatchMessage.decode(message.encoded()) == message)
            let line = message.json.serialized
            #expect(line.contains(#""height":9"#), "\(line)")
            #expect(JSONValue.parse(line).flatMap(MatchMessage.init(json:)) == message, "\(line)")
        }
        for message in Self.messages(Self.none) {
            #expect(!message.json.serialized.contains("height"))
        }
        let highBytes = MatchMessage.startProposal(match: 1, settings: Self.high, wantsToPlay: true).encoded()
        let noneBytes = MatchMessage.startProposal(match: 1, settings: Self.none, wantsToPlay: true).encoded()
        // Only the colours byte differs: the height in its high nibble.
        #expect(zip(highBytes, noneBytes).filter { $0 != $1 }.map { $0.0 ^ $0.1 } == [0x90])
    }

    @Test("a height out of range is rejected on the wire and in JSON, as is any height under tsu")
    func outOfRange() throws {
        let noneBytes = MatchMessage.startProposal(match: 1, settings: Self.none, wantsToPlay: true).encoded()
        let highBytes = MatchMessage.startProposal(match: 1, settings: Self.high, wantsToPlay: true).encoded()
        let index = try #require(noneBytes.indices.first { noneBytes[$0] != highBytes[$0] })
        for height in UInt8(10)...15 {
            var bad = noneBytes
            bad[index] |= height << 4
            #expect(MatchMessage.decode(bad) == nil, "height \(height)")
        }
        // tsu has no starting height (docs/rules.md lists speed, colours and best of N): only 0.
        let tsu = MatchSettings(speed: 9, colors: 5, gamesPerMatch: 3, ruleSet: .tsu)
        #expect(tsu.isValid)
        #expect(!MatchSettings(speed: 9, colors: 5, gamesPerMatch: 3, ruleSet: .tsu, startingHeight: 1).isValid)
        var tsuBytes = MatchMessage.startProposal(match: 1, settings: tsu, wantsToPlay: true).encoded()
        tsuBytes[index] |= 0x10
        #expect(MatchMessage.decode(tsuBytes) == nil)
        let line = MatchMessage.startProposal(match: 1, settings: Self.high, wantsToPlay: true).json.serialized
        for bad in [#""height":10"#, #""height":-1"#, #""height":"3""#, #""height":null"#, #""height":3,"rules":"tsu""#] {
            let edited = line.replacingOccurrences(of: #""height":9"#, with: bad)
            #expect(JSONValue.parse(edited).flatMap(MatchMessage.init(json:)) == nil, "\(edited)")
        }
        // Every message carrying settings is dropped (a height of 10 in each settings' colours byte), never trapped on.
        for (message, high) in zip(Self.messages(Self.none), Self.messages(Self.high)) {
            let bytes = message.encoded(), highBytes = high.encoded()
            let at = bytes.indices.filter { bytes[$0] != highBytes[$0] }
            #expect(!at.isEmpty)
            for index in at {
                var bad = bytes
                bad[index] = bad[index] & 0x0F | 0xA0
                #expect(MatchMessage.decode(bad) == nil, "\(message)")
            }
        }
    }

    @Test("a peer handed room settings with a hostile height counts and drops them; its room settings stay")
    func peerDropsHostileHeight() throws {
        var peer = MatchPeer(config: MatchPeerConfig(id: PeerID(1), name: "a", voteSeed: 1))
        peer.handle(.viewChanged(MembershipView(id: 1, members: [PeerID(1), PeerID(2)], joined: [PeerID(1), PeerID(2)])))
        peer.handle(.delivered(Delivery(from: PeerID(2), seq: 1, payload: MatchMessage.hello(Hello(name: "b", role: .player)).encoded())))
        let before = peer.roomSettings
        let good = MatchMessage.roomSettings(version: 9, settings: Self.none).encoded()
        let high = MatchMessage.roomSettings(version: 9, settings: Self.high).encoded()
        let index = try #require(good.indices.first { good[$0] != high[$0] })
        for height in UInt8(10)...15 {
            var bad = good
            bad[index] |= height << 4
            peer.handle(.delivered(Delivery(from: PeerID(2), seq: UInt64(height) + 1, payload: bad)))
        }
        #expect(peer.stats.invalidDropped == 6)
        #expect(peer.roomSettings == before)
        // The same message with a height in range is taken.
        peer.handle(.delivered(Delivery(from: PeerID(2), seq: 20, payload: high)))
        #expect(peer.roomSettings == Self.high)
    }

    @Test("the log header names the offered height (omitted when 0); a header height out of range is damage")
    func logHeader() throws {
        let peer = PeerID(1)
        #expect(!MessageLog.header(peer: peer, room: "eggs").contains("height"))
        let header = MessageLog.header(peer: peer, room: "eggs", startingHeight: 4)
        #expect(header.contains(#""height":4"#))
        _ = try Replay.verify(MessageLog.sealed([header]))
        for bad in [MessageLog.header(peer: peer, room: "eggs", startingHeight: 10),
                    MessageLog.header(peer: peer, room: "eggs", rules: "tsu", startingHeight: 1),
                    header.replacingOccurrences(of: #""height":4"#, with: #""height":"4""#)] {
            let error = #expect(throws: ReplayError.self) { _ = try Replay.verify(MessageLog.sealed([bad])) }
            #expect(error?.line == 1, "\(bad)")
        }
    }

    @Test("a match with a starting height: every grid starts with h full rows, owners and mirrors agree, the log replays")
    func match() throws {
        let h = VSHarness(seed: 21)
        let first = PeerID(0x1000_0000_0001)
        h.logged = [first]
        let settings = MatchSettings(speed: 9, colors: 4, gamesPerMatch: 1, startingHeight: 5)
        let ids = startRoom(h, count: 2, settings: settings)
        var ticks = 0
        while h.peers[first]?.owner == nil && ticks < 2_000 {
            h.tick(deliveries: 12)
            ticks += 1
        }
        let owner = try #require(h.peers[first]?.owner)
        #expect(h.peers[first]?.match?.settings == settings)
        // The starting grid before anything lands on it: rows 0–9 empty, 10–14 garbage (board notation, 15 rows).
        let start = settings.startingGrid(garbageSeed: 0)
        #expect(start.board.notationRows == Array(repeating: "......", count: 10) + Array(repeating: "######", count: 5))
        #expect(start.state == .awaitingSpawn)
        // Nothing the bots can do in a few ticks removes a garbage row that no pop touches.
        #expect(owner.grid.board.notationRows.suffix(4).allSatisfy { $0 == "######" }, "\(owner.grid.board.notationRows)")
        while matchOvers(h).count < ids.count && ticks < 40_000 {
            h.tick(deliveries: 12)
            ticks += 1
        }
        h.deliverAll(to: ids)
        #expect(matchOvers(h).count == ids.count)
        #expect(desyncs(h).isEmpty, "\(desyncs(h).prefix(2))")
        #expect(ids.allSatisfy { h.peers[$0]!.stats.checkpointsVerified > 0 })
        let lines = try #require(h.logs[first])
        #expect(lines.contains { $0.contains(#""type":"start""#) && $0.contains(#""height":5"#) })
        let report = try Replay.verify(MessageLog.sealed(lines))
        #expect(report.ok)
        #expect(report.checkpoints == h.peers[first]!.stats.checkpointsVerified)
        // The same log with the height edited out of its start lines no longer verifies.
        let edited = lines.map { $0.replacingOccurrences(of: #","height":5"#, with: "") }
        #expect(try !Replay.verify(MessageLog.sealed(edited)).ok)
    }
}
