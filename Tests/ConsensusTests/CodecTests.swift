import EggGame
import PeerNet
import Testing
@testable import Consensus

let sampleMessages: [MatchMessage] = [
    .hello(Hello(name: "Ada ✨", role: .player)),
    .hello(Hello(name: "", role: .spectator, protocolVersion: 65_535, rules: "sfe")),
    .votes(game: 0, firstRound: 0, values: [0, 1, .max]),
    .votes(game: 4_000_000_000, firstRound: 65_000, values: Array(repeating: 0x0123_4567_89ab_cdef, count: 100)),
    .startProposal(match: 3, settings: MatchSettings(speed: 9, colors: 6, gamesPerMatch: 7), wantsToPlay: true),
    .startProposal(match: 0, settings: .default, wantsToPlay: false),
    .inputs(game: 2, items: [.spawn, .move(.left), .move(.right), .move(.rotateCW), .move(.rotateCCW), .move(.down),
                             .move(.hardDrop), .landGarbage(0), .landGarbage(90), .ticks(1), .ticks(3_600)]),
    .checkpoint(game: 1, pairs: 17, hash: 0xdead_beef_0000_0001),
    .gameOverVote(game: 5, winner: PeerID(0xffff_ffff_ffff_ffff)),
    .gameOverVote(game: 5, winner: nil),
    .clock(game: 7, tick: 0),
    .clock(game: 4_000_000_000, tick: .max),
    .snapshot(Snapshot(view: 9, matchRound: 2, nextGame: 7, lobby: [LobbyEntry(peer: PeerID(1), name: "a", role: .player)],
                       match: MatchSnapshot(settings: .default, players: [PeerID(1), PeerID(2)], wins: [1, 0], game: 6,
                                            frontier: 40, pairsSpawned: [30, 28]))),
    .snapshot(Snapshot(view: 1, matchRound: 0, nextGame: 0, lobby: [], match: nil)),
    .leave,
]

@Suite("Codec")
struct CodecTests {
    @Test("every message survives the binary encoding and stays under 1000 bytes")
    func binaryRoundTrip() {
        for message in sampleMessages {
            let bytes = message.encoded()
            #expect(bytes.count <= MatchMessage.bytesMax)
            #expect(MatchMessage.decode(bytes) == message)
        }
    }

    @Test("every message survives its JSON rendering, and the rendering has a type")
    func jsonRoundTrip() {
        for message in sampleMessages {
            let line = message.json.serialized
            #expect(line.contains("\"type\":"))
            let parsed = JSONValue.parse(line)
            #expect(parsed != nil)
            #expect(parsed.flatMap(MatchMessage.init(json:)) == message, "\(line)")
        }
    }

    @Test("truncated, extended and random payloads decode to nil without trapping")
    func malformed() {
        for message in sampleMessages {
            let bytes = message.encoded()
            for cut in 0..<bytes.count { #expect(MatchMessage.decode(Array(bytes.prefix(cut))) == nil) }
            #expect(MatchMessage.decode(bytes + [0]) == nil)
        }
        var rng = EggGame.SplitMix64(seed: 42)
        for _ in 0..<20_000 {
            let count = Int(rng.next() % 40)
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            _ = MatchMessage.decode(bytes)
        }
        #expect(MatchMessage.decode([UInt8](repeating: 0x02, count: 1001)) == nil)
    }

    @Test("out-of-range settings are rejected on the wire and in JSON")
    func settingsRange() {
        let bad = MatchMessage.startProposal(match: 0, settings: MatchSettings(speed: 10, colors: 4, gamesPerMatch: 3), wantsToPlay: true)
        #expect(MatchMessage.decode(bad.encoded()) == nil)
        #expect(MatchMessage(json: bad.json) == nil)
    }

    @Test("tick counts outside 1...3600 and garbage over a whole grid are rejected on the wire and in JSON")
    func streamItemRange() {
        for item in [StreamInput.ticks(0), .ticks(3_601), .landGarbage(91)] {
            let bad = MatchMessage.inputs(game: 1, items: [.spawn, item])
            #expect(MatchMessage.decode(bad.encoded()) == nil, "\(item)")
            #expect(MatchMessage(json: bad.json) == nil, "\(item)")
        }
    }

    @Test("a malformed payload is counted and ignored by a peer")
    func peerCountsInvalid() {
        var peer = MatchPeer(config: MatchPeerConfig(id: PeerID(1), name: "a", voteSeed: 1))
        peer.handle(.viewChanged(MembershipView(id: 1, members: [PeerID(1)], joined: [PeerID(1)])))
        peer.handle(.delivered(Delivery(from: PeerID(1), seq: 1, payload: [0xff, 0x00])))
        peer.handle(.delivered(Delivery(from: PeerID(1), seq: 2, payload: [])))
        #expect(peer.stats.invalidDropped == 2)
    }

    @Test("JSON strings with escapes and unicode round-trip")
    func jsonStrings() {
        let value = JSONValue.object([("s", .string("a\"b\\c\n\u{01}é✨")), ("n", .int(-5)), ("a", .array([.null, .bool(true)]))])
        #expect(JSONValue.parse(value.serialized) == value)
        #expect(JSONValue.parse("{\"a\":1,}") == nil)
        #expect(JSONValue.parse("[1 2]") == nil)
        #expect(JSONValue.parse("\"\\u00e9\"") == .string("é"))
        #expect(JSONValue.parse("\"plain é✨\"") == .string("plain é✨"))
        #expect(JSONValue.parse("\"tab\there\"") == nil, "a raw control character inside a string")
        #expect(JSONValue.parse(bytes: [UInt8(ascii: "\""), 0xFF, UInt8(ascii: "\"")]) == nil, "invalid UTF-8")
        #expect(JSONValue.parse("\"unterminated") == nil)
        #expect(JSONValue.parse("[0, -7, 123456789012345678, 9223372036854775807, -9223372036854775808, 1.5]")
                == .array([.int(0), .int(-7), .int(123_456_789_012_345_678), .int(.max), .int(.min), .double(1.5)]))
        #expect(JSONValue.parse("-") == nil)
        #expect(JSONValue.parse("\"\\u+041\"") == nil, "a signed \\u escape")
        #expect(JSONValue.parse("-0.0") != JSONValue.parse("0.0"), "equal values must hash alike, and -0.0 serialises apart")
        #expect(JSONValue.parse("92233720368547758070") == nil, "out of Int64 range")
    }
}
