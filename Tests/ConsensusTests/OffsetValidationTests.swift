import EggGame
import EggPrimitives
import PeerNet
import Testing
@testable import Consensus

/// A tsu mirror whose grid just resolved a 2-chain (40 then 320 points): 5 chain garbage pending,
/// no pair live; `credited` garbage was credited to its player by the others' spawns.
private func chainedMirror(credited: Int) throws -> PlayerMirror {
    let start = Array(repeating: "......", count: 10) + ["B.....", "RRR...", "RBBB.."]
    var grid = PlayerGrid(lockedOnto: try Board(notation: start.joined(separator: "\n"), rowsMax: 13), rules: .tsu)
    for _ in 0..<2_000 where grid.state != .awaitingSpawn { grid.apply(.ticks(1)) }
    var mirror = PlayerMirror()
    mirror.grid = grid
    mirror.garbage.credit(credited)
    return mirror
}

private func singlePeer() -> MatchPeer {
    MatchPeer(config: MatchPeerConfig(id: PeerID(1), name: "a", voteSeed: 1))
}

@Suite("offset:N items checked by a mirror (one peer)")
struct OffsetValidationTests {
    @Test("a valid offset cancels pending chain garbage against credited garbage: landed, not sent at the spawn")
    func validOffsetApplies() throws {
        var peer = singlePeer()
        var mirror = try chainedMirror(credited: 3)
        #expect(mirror.grid.state == .awaitingSpawn && mirror.grid.garbagePending == 5)
        let hash = mirror.grid.stableHash
        #expect(peer.receiveOffset(2, mirror: &mirror, ruleSet: .tsu) == .applied)
        #expect(peer.receiveOffset(1, mirror: &mirror, ruleSet: .tsu) == .applied)
        #expect((mirror.garbageLanded, mirror.garbage.offset) == (3, 3))
        #expect(mirror.grid.stableHash == hash, "an offset leaves the grid alone")
        #expect(peer.stats.ignoredMessages == 0 && peer.stats.garbageOverdrawStalls == 0)
    }

    @Test("an offset beyond the pending chain garbage, or out of range (0, negative, UInt32 and Int bounds), is ignored and counted; the grid is untouched",
          arguments: [6, 0, -1, Int(UInt32.max) - 1, Int(UInt32.max), Int(Int32.max), Int.max - 1, Int.max, Int.min,
                      MatchMessage.garbageOffsetMax, MatchMessage.garbageOffsetMax + 1])
    func outOfBoundsIgnored(count: Int) throws {
        var peer = singlePeer()
        // Credit far beyond any count, so only the pending chain garbage and the range bound it.
        var mirror = try chainedMirror(credited: Int(UInt32.max) * 4)
        let before = (mirror.grid.stableHash, mirror.garbageLanded, mirror.garbage.offset)
        #expect(peer.receiveOffset(count, mirror: &mirror, ruleSet: .tsu) == .ignored, "offset:\(count)")
        #expect(peer.stats.ignoredMessages == 1)
        #expect((mirror.grid.stableHash, mirror.garbageLanded, mirror.garbage.offset) == before)
        // What is still pending can be cancelled afterwards.
        #expect(peer.receiveOffset(5, mirror: &mirror, ruleSet: .tsu) == .applied)
    }

    @Test("offsets together never exceed the pending chain garbage")
    func offsetsAddUp() throws {
        var peer = singlePeer()
        var mirror = try chainedMirror(credited: 100)
        #expect(peer.receiveOffset(4, mirror: &mirror, ruleSet: .tsu) == .applied)
        #expect(peer.receiveOffset(2, mirror: &mirror, ruleSet: .tsu) == .ignored)
        #expect(peer.receiveOffset(1, mirror: &mirror, ruleSet: .tsu) == .applied)
        #expect(peer.receiveOffset(1, mirror: &mirror, ruleSet: .tsu) == .ignored)
        #expect(peer.stats.ignoredMessages == 2 && mirror.garbage.offset == 5 && mirror.garbageLanded == 5)
    }

    @Test("an offset beyond the garbage credited and not yet landed waits for the credit (counted), then applies")
    func overCreditStalls() throws {
        var peer = singlePeer()
        var mirror = try chainedMirror(credited: 2)
        #expect(peer.receiveOffset(3, mirror: &mirror, ruleSet: .tsu) == .stalled)
        #expect(peer.stats.garbageOverdrawStalls == 1 && mirror.garbageLanded == 0 && mirror.garbage.offset == 0)
        mirror.garbage.credit(1) // 3 credited now
        #expect(peer.receiveOffset(3, mirror: &mirror, ruleSet: .tsu) == .applied)
        #expect(peer.stats.ignoredMessages == 0)
    }

    @Test("an offset in an sfe match, or with a pair live, is ignored and counted")
    func wrongRulesOrState() throws {
        var peer = singlePeer()
        // The match's settings name the rule set: the same pending garbage under sfe.
        var sfe = try chainedMirror(credited: 100)
        #expect(peer.receiveOffset(1, mirror: &sfe, ruleSet: .sfe) == .ignored)
        #expect(sfe.garbageLanded == 0 && sfe.garbage.offset == 0)
        var live = try chainedMirror(credited: 100)
        #expect(live.grid.apply(.spawn(EggPair(pivot: .green, child: .yellow))).isAccepted)
        #expect(live.grid.state == .live)
        #expect(peer.receiveOffset(1, mirror: &live, ruleSet: .tsu) == .ignored)
        #expect(peer.stats.ignoredMessages == 2 && live.garbageLanded == 0)
    }

    @Test("an offset for a game that is not being played is dropped and counted, without a match")
    func otherGameDropped() {
        var peer = singlePeer()
        let a = PeerID(1), b = PeerID(2)
        peer.handle(.viewChanged(MembershipView(id: 1, members: [a, b], joined: [a, b])))
        #expect(peer.isSynced && peer.match == nil)
        peer.unheard.remove(b)  // as if b's hello had been delivered
        let before = peer.stats.ignoredMessages
        // Far from the next game: never queued for later.
        let message = MatchMessage.inputs(game: 1_000, items: [.offsetGarbage(1)])
        peer.handle(.delivered(Delivery(from: b, seq: 0, payload: message.encoded())))
        #expect(peer.stats.ignoredMessages == before + 1)
        #expect(peer.futureItems.isEmpty)
    }
}

@Suite("offset:N items from hostile bytes and JSON")
struct OffsetCodecHostileTests {
    /// The bytes of an inputs message of game 1 holding only `tail` as its one item.
    private func inputs(_ tail: [UInt8]) -> [UInt8] {
        let good = MatchMessage.inputs(game: 1, items: [.offsetGarbage(1)]).encoded()
        #expect(good.suffix(2) == [9, 1], "the item is tag 9 and a one-byte varint")
        return Array(good.dropLast(2)) + tail
    }

    @Test("tag 9 decodes only with a varint in 1...garbageOffsetMax: truncated, over-long or too large is rejected")
    func hostileBytes() {
        #expect(MatchMessage.decode(inputs([9, 1])) == .inputs(game: 1, items: [.offsetGarbage(1)]))
        var w = LEB128ByteWriter()
        w.varint(UInt64(MatchMessage.garbageOffsetMax))
        #expect(MatchMessage.decode(inputs([9] + w.bytes)) == .inputs(game: 1, items: [.offsetGarbage(MatchMessage.garbageOffsetMax)]))
        var cases: [(String, [UInt8])] = [
            ("no value", [9]),
            ("a varint cut short", [9, 0x81]),
            ("a varint cut short after two bytes", [9, 0xFF, 0xFF]),
            ("zero", [9, 0]),
            ("eleven continuation bytes", [9] + Array(repeating: 0xFF, count: 10) + [0x01]),
            ("a tenth byte over 1", [9] + Array(repeating: 0x80, count: 9) + [0x02]),
        ]
        for value in [UInt64(MatchMessage.garbageOffsetMax) + 1, UInt64(UInt32.max) - 1, UInt64(UInt32.max),
                      UInt64(Int.max) - 1, UInt64(Int.max), UInt64.max - 1, UInt64.max] {
            var w = LEB128ByteWriter()
            w.varint(value)
            cases.append(("\(value)", [9] + w.bytes))
        }
        for (name, tail) in cases {
            #expect(MatchMessage.decode(inputs(tail)) == nil, "\(name)")
        }
        // A peer handed such bytes drops them and counts them.
        var peer = singlePeer()
        let a = PeerID(1), b = PeerID(2)
        peer.handle(.viewChanged(MembershipView(id: 1, members: [a, b], joined: [a, b])))
        for (_, tail) in cases { peer.handle(.delivered(Delivery(from: b, seq: 0, payload: inputs(tail)))) }
        #expect(peer.stats.invalidDropped == cases.count)
    }

    @Test("offset:N in JSON parses only for N in 1...garbageOffsetMax")
    func hostileJSON() {
        let control = #"{"type":"inputs","game":1,"inputs":["spawn","offset:3"]}"#
        #expect(JSONValue.parse(control).flatMap(MatchMessage.init(json:)) == .inputs(game: 1, items: [.spawn, .offsetGarbage(3)]))
        #expect(MatchMessage.parseInput("offset:1") == .offsetGarbage(1))
        #expect(MatchMessage.parseInput("offset:\(MatchMessage.garbageOffsetMax)") == .offsetGarbage(MatchMessage.garbageOffsetMax))
        for text in ["offset:0", "offset:-1", "offset:", "offset:1x", "offset: 1", "offset:+1", "offset:1.0",
                     "offset:\(MatchMessage.garbageOffsetMax + 1)", "offset:\(UInt32.max)", "offset:\(UInt32.max - 1)",
                     "offset:\(Int.max)", "offset:\(Int.max - 1)", "offset:\(Int.min)", "offset:99999999999999999999999"] {
            #expect(MatchMessage.parseInput(text) == nil, "\(text)")
            let line = #"{"type":"inputs","game":1,"inputs":["spawn","\#(text)"]}"#
            #expect(JSONValue.parse(line).flatMap(MatchMessage.init(json:)) == nil, "\(line)")
        }
        // Only the form the encoder writes: no sign or leading zero on any counted item.
        for text in ["offset:01", "ticks:+1", "ticks:01", "garbage:+1", "garbage:00", "garbage:-0", "garbage:"] {
            #expect(MatchMessage.parseInput(text) == nil, "\(text)")
        }
        for item in [StreamInput.ticks(1), .landGarbage(0), .landGarbage(MatchMessage.garbageLandMax), .offsetGarbage(10)] {
            #expect(MatchMessage.parseInput(MatchMessage.jsonName(item)) == item)
        }
    }
}

@Suite("offset:N items in a message log")
struct OffsetLogTests {
    @Test("replaying a log whose inputs line holds an offset out of its limits is an error naming that line; a well-formed offset in an sfe match is ignored and the replay still verifies")
    func badOffsetInALog() throws {
        let (_, _, lines) = recordedMatch(seed: 12)
        let index = try #require(lines.indices.dropFirst(20).first { lines[$0].contains(#""type":"inputs""#) && lines[$0].contains(#""spawn""#) })
        for bad in ["offset:0", "offset:-1", "offset:+1", "offset:\(MatchMessage.garbageOffsetMax + 1)", "offset:\(UInt32.max)",
                    "offset:\(Int.max)", "offset:99999999999999999999999"] {
            var edited = lines
            edited[index] = lines[index].replacingOccurrences(of: #""spawn""#, with: "\"\(bad)\"")
            let error = #expect(throws: ReplayError.self, "\(bad)") { _ = try Replay.verify(MessageLog.sealed(edited)) }
            #expect(error?.line == index + 1, "\(bad): \(String(describing: error))")
        }
        var extra = lines
        extra[index] = lines[index].replacingOccurrences(of: #""spawn""#, with: #""spawn","offset:1""#)
        let report = try Replay.verify(MessageLog.sealed(extra))
        #expect(report.ok, "\(report.json)")
        #expect(report.checkpoints > 10)
    }
}

@Suite("the rule set nibble of the settings' speed byte")
struct RuleSetNibbleTests {
    @Test("every rule set index no rule set has is rejected by the codec, and a peer drops and counts it")
    func unknownIndexDropped() {
        let settings = MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3)
        let good = MatchMessage.startProposal(match: 0, settings: settings, wantsToPlay: true).encoded()
        let other = MatchMessage.startProposal(match: 0, settings: MatchSettings(speed: 8, colors: 4, gamesPerMatch: 3),
                                               wantsToPlay: true).encoded()
        let speedAt = good.indices.first { good[$0] != other[$0] }!
        #expect(good[speedAt] == 9)
        #expect(MatchMessage.decode(good) != nil)
        var peer = singlePeer()
        let a = PeerID(1), b = PeerID(2)
        peer.handle(.viewChanged(MembershipView(id: 1, members: [a, b], joined: [a, b])))
        let unknown = UInt8(RuleSet.all.count)...15
        for index in unknown {
            var bad = good
            bad[speedAt] = 9 | index << 4
            #expect(MatchMessage.decode(bad) == nil, "index \(index)")
            peer.handle(.delivered(Delivery(from: b, seq: 0, payload: bad)))
        }
        #expect(peer.stats.invalidDropped == unknown.count)
        // The known indices decode to their rule set.
        for (index, rules) in RuleSet.all.enumerated() where rules.speeds.contains(9) {
            var known = good
            known[speedAt] = 9 | UInt8(index) << 4
            guard case .startProposal(_, let s, _)? = MatchMessage.decode(known) else {
                Issue.record("index \(index) did not decode")
                continue
            }
            #expect(s.ruleSet == rules)
        }
    }
}

@Suite("offset:N items injected into a tsu match")
struct OffsetInjectionTests {
    @Test("hostile offsets in a player's stream (beyond any pending garbage, or for another game) are ignored and counted everywhere; no desync, the game ends with one winner on every peer",
          arguments: UInt64(1)...2)
    func injectedOffsetsNeverDesync(seed: UInt64) {
        let h = VSHarness(seed: seed)
        let ids = [PeerID(0x11), PeerID(0x22), PeerID(0x33)]
        for id in ids { h.peers[id] = h.makePeer(id, bot: .insane) }
        h.installView(members: ids, joining: ids)
        let settings = MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3, ruleSet: .tsu)
        for (index, id) in ids.enumerated() {
            h.peers[id]!.setReady(settings: settings, wantsToPlay: index < 2)
            h.drainOutputs(id)
        }
        h.deliverAll(to: ids)
        let hostile = ids[0]
        var injected = 0
        var tick = 0
        while tick < 30_000 && !ids.allSatisfy({ !gameOvers(h, $0, game: 0).isEmpty }) {
            h.tick(deliveries: 40)
            tick += 1
            guard tick % 25 == 0, let game = h.peers[hostile]!.match?.game, game == 0 else { continue }
            // As if the hostile player had sent these in its stream (FIFO with its real items).
            let bad: [MatchMessage] = [.inputs(game: game, items: [.offsetGarbage(MatchMessage.garbageOffsetMax)]),
                                       .inputs(game: game &+ 7, items: [.offsetGarbage(1)])]
            for message in bad { for receiver in ids { h.queues[receiver]![hostile, default: []].append(message.encoded()) } }
            injected += 1
        }
        h.deliverAll(to: ids)
        #expect(injected > 20)
        for id in ids {
            let peer = h.peers[id]!
            #expect(gameOvers(h, id, game: 0).count == 1, "peer \(id.hex) saw \(gameOvers(h, id, game: 0))")
            #expect(peer.stats.desyncs == 0, "peer \(id.hex)")
            #expect(peer.stats.checkpointsVerified > 10, "peer \(id.hex)")
            // Each injected pair counts twice: the offset beyond pending and the one for another game.
            #expect(peer.stats.ignoredMessages >= 2 * injected, "peer \(id.hex): \(peer.stats.ignoredMessages) for \(injected)")
        }
        #expect(Set(ids.map { gameOvers(h, $0, game: 0) }).count == 1)
    }
}
