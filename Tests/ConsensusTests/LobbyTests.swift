import EggGame
import PeerNet
import Testing
@testable import Consensus

/// A fresh room of `players` players and `spectators` spectators, hellos delivered.
private func lobbyRoom(_ h: VSHarness, players: Int, spectators: Int = 0) -> (players: [PeerID], spectators: [PeerID]) {
    let playerIDs = (1...players).map { PeerID(UInt64($0) &* 0x1000_0000_0001) }
    let spectatorIDs = (0..<spectators).map { PeerID(UInt64(100 + $0) &* 0x1000_0000_0001) }
    for id in playerIDs { h.peers[id] = h.makePeer(id) }
    for id in spectatorIDs {
        var config = MatchPeerConfig(id: id, name: "s\(id.raw)", role: .spectator, voteSeed: id.raw)
        config.lookaheadRounds = 16
        h.peers[id] = MatchPeer(config: config)
    }
    let all = playerIDs + spectatorIDs
    h.members = []
    h.installView(members: all, joining: all)
    h.deliverAll(to: all)
    return (playerIDs, spectatorIDs)
}

private func ready(_ h: VSHarness, _ id: PeerID, _ on: Bool = true) {
    if on { h.peers[id]!.markReady(now: h.now) } else { h.peers[id]!.unready(now: h.now) }
    h.drainOutputs(id)
}

private func change(_ h: VSHarness, _ id: PeerID, _ settings: MatchSettings) {
    h.peers[id]!.changeSettings(settings)
    h.drainOutputs(id)
}

/// Runs the room for `seconds` of harness time (60 ticks a second, deliveries in between).
private func run(_ h: VSHarness, seconds: Double) {
    for _ in 0..<Int(seconds * 60) { h.tick(deliveries: 40) }
}

private func started(_ h: VSHarness) -> [PeerID: (MatchSettings, [PeerID])] {
    var out: [PeerID: (MatchSettings, [PeerID])] = [:]
    for (id, events) in h.events {
        for event in events { if case .matchStarted(let settings, let players) = event { out[id] = (settings, players) } }
    }
    return out
}

@Suite("Room lobby")
struct LobbyTests {
    static let fast = MatchSettings(speed: 8, colors: 5, gamesPerMatch: 1)

    @Test("a settings change reaches every peer, names its author and clears every ready mark")
    func settingsClearReady() {
        let h = VSHarness(seed: 11)
        let (players, spectators) = lobbyRoom(h, players: 3, spectators: 1)
        let all = players + spectators
        ready(h, players[0])
        ready(h, players[1])
        h.deliverAll(to: all)
        for id in all { #expect(Set(h.peers[id]!.readyMarks.keys) == Set(players.prefix(2))) }
        change(h, players[2], Self.fast)
        h.deliverAll(to: all)
        for id in all {
            #expect(h.peers[id]!.roomSettings == Self.fast)
            #expect(h.peers[id]!.roomSettingsAuthor == players[2])
            #expect(h.peers[id]!.readyMarks.isEmpty)
        }
        #expect(!h.peers[players[0]]!.isMarkedReady)
        // A spectator cannot change the settings: nothing is sent, and one sent anyway is ignored.
        h.peers[spectators[0]]!.changeSettings(MatchSettings(speed: 0, colors: 4, gamesPerMatch: 7))
        #expect(h.peers[spectators[0]]!.pendingSendCount == 0)
        let forged = MatchMessage.roomSettings(version: 99, settings: MatchSettings(speed: 0, colors: 4, gamesPerMatch: 7)).encoded()
        for id in all { h.queues[id]![spectators[0], default: []].append(forged) }
        h.deliverAll(to: all)
        for id in all { #expect(h.peers[id]!.roomSettings == Self.fast) }
    }

    @Test("two players changing the settings at once end on the same settings on every peer", arguments: UInt64(1)...6)
    func concurrentChanges(seed: UInt64) {
        let h = VSHarness(seed: seed)
        let (players, _) = lobbyRoom(h, players: 3)
        let a = MatchSettings(speed: 1, colors: 6, gamesPerMatch: 5), b = MatchSettings(speed: 9, colors: 4, gamesPerMatch: 1)
        change(h, players[0], a)
        change(h, players[1], b)
        h.deliverAll(to: players)
        // Both wrote version 1: the higher author ID wins everywhere.
        for id in players {
            #expect(h.peers[id]!.roomSettings == b)
            #expect(h.peers[id]!.roomSettingsAuthor == players[1])
        }
    }

    @Test("every player ready: the match starts after the 3-s countdown with the room's settings, the spectator watching")
    func countdownStarts() {
        let h = VSHarness(seed: 12)
        let (players, spectators) = lobbyRoom(h, players: 2, spectators: 1)
        let all = players + spectators
        // The spectator votes by itself at once (as the terminal's does): that starts nothing,
        // and its settings do not apply.
        h.peers[spectators[0]]!.setReady(settings: MatchSettings(speed: 0, colors: 6, gamesPerMatch: 7), wantsToPlay: false)
        h.drainOutputs(spectators[0])
        change(h, players[0], Self.fast)
        h.deliverAll(to: all)
        run(h, seconds: 1)
        #expect(started(h).isEmpty)
        for id in all { #expect(h.peers[id]!.lobbyCountdown(now: h.now) == nil) }
        ready(h, players[0])
        ready(h, players[1])
        run(h, seconds: 1)
        #expect(started(h).isEmpty)
        for id in all {
            guard case .allReady(let left)? = h.peers[id]!.lobbyCountdown(now: h.now) else {
                Issue.record("\(id.hex) shows no countdown")
                continue
            }
            #expect(left > 1_000_000_000 && left <= 2_100_000_000)
        }
        run(h, seconds: 3)
        let starts = started(h)
        #expect(starts.count == all.count)
        for id in all {
            #expect(starts[id]?.0 == Self.fast)
            #expect(starts[id]?.1 == players)
        }
    }

    @Test("un-ready cancels the countdown; ready again restarts it")
    func unreadyCancels() {
        let h = VSHarness(seed: 13)
        let (players, _) = lobbyRoom(h, players: 2)
        ready(h, players[0])
        ready(h, players[1])
        run(h, seconds: 2)
        ready(h, players[1], false)
        run(h, seconds: 5)
        #expect(started(h).isEmpty)
        for id in players {
            #expect(h.peers[id]!.readyMarks.keys.sorted() == [players[0]])
            #expect(h.peers[id]!.match == nil)
        }
        ready(h, players[1])
        run(h, seconds: 4)
        #expect(started(h).count == 2)
        for id in players { #expect(started(h)[id]?.1 == players) }
    }

    @Test("a settings change during the countdown cancels it")
    func changeCancels() {
        let h = VSHarness(seed: 14)
        let (players, _) = lobbyRoom(h, players: 2)
        ready(h, players[0])
        ready(h, players[1])
        run(h, seconds: 2)
        change(h, players[0], Self.fast)
        run(h, seconds: 5)
        #expect(started(h).isEmpty)
        for id in players { #expect(h.peers[id]!.readyMarks.isEmpty) }
    }

    @Test("30 s after the first ready, with two ready, a ready player may start now without the player who is not ready; nothing starts by itself")
    func startNowRule() {
        let h = VSHarness(seed: 15)
        let (players, spectators) = lobbyRoom(h, players: 3, spectators: 1)
        ready(h, players[0])
        run(h, seconds: 10)
        ready(h, players[2])
        run(h, seconds: 18)
        // 28 s after the first ready: not yet, for anyone.
        for id in players { #expect(!h.peers[id]!.canStartNow(now: h.now)) }
        let early = h.peers[players[2]]!.startNow(now: h.now)
        #expect(!early)
        h.drainOutputs(players[2])
        run(h, seconds: 12)
        // 40 s: nothing started by itself; the ready players may start, the others may not.
        #expect(started(h).isEmpty)
        #expect(h.peers[players[0]]!.canStartNow(now: h.now) && h.peers[players[2]]!.canStartNow(now: h.now))
        #expect(!h.peers[players[1]]!.canStartNow(now: h.now), "a player who is not ready cannot start")
        #expect(!h.peers[spectators[0]]!.canStartNow(now: h.now), "a spectator cannot start")
        let notReady = h.peers[players[1]]!.startNow(now: h.now), watcher = h.peers[spectators[0]]!.startNow(now: h.now)
        #expect(!notReady && !watcher)
        h.drainOutputs(players[1])
        h.drainOutputs(spectators[0])
        run(h, seconds: 2)
        #expect(started(h).isEmpty)
        // A ready player presses it: every peer starts the same match with the ready players.
        let pressed = h.peers[players[2]]!.startNow(now: h.now)
        #expect(pressed)
        h.drainOutputs(players[2])
        run(h, seconds: 2)
        let starts = started(h)
        #expect(starts.count == 4)
        for id in players + spectators { #expect(starts[id]?.1 == [players[0], players[2]]) }
        // The player who was not ready watches: no own grid.
        #expect(h.peers[players[1]]!.owner == nil)
        #expect(h.peers[players[0]]!.owner != nil && h.peers[players[2]]!.owner != nil)
    }

    @Test("start now needs two players ready: one ready player alone and a un-ready player cannot")
    func startNowNeedsTwo() {
        let h = VSHarness(seed: 17)
        let (players, _) = lobbyRoom(h, players: 2)
        ready(h, players[0])
        ready(h, players[1])
        run(h, seconds: 1)
        ready(h, players[1], false)
        run(h, seconds: 35)
        #expect(!h.peers[players[0]]!.canStartNow(now: h.now))
        let alone = h.peers[players[0]]!.startNow(now: h.now)
        #expect(!alone)
        h.drainOutputs(players[0])
        run(h, seconds: 2)
        #expect(started(h).isEmpty)
        // Ready again: the everyone-ready countdown starts it after 3 s, as before.
        ready(h, players[1])
        run(h, seconds: 4)
        #expect(started(h).count == 2)
    }

    @Test("one ready player alone never starts a match")
    func aloneNeverStarts() {
        let h = VSHarness(seed: 16)
        let (players, _) = lobbyRoom(h, players: 2)
        ready(h, players[0])
        run(h, seconds: 40)
        #expect(started(h).isEmpty)
        for id in players { #expect(h.peers[id]!.match == nil && !h.peers[id]!.isStarting) }
    }

    @Test("players offer their settings: the highest-ID offer applies, equal offers keep ready marks, a joiner takes the room's")
    func offers() {
        let h = VSHarness(seed: 18)
        let ids = [PeerID(0x1000_0000_0001), PeerID(0x2000_0000_0002), PeerID(0x3000_0000_0003)]
        for id in ids { h.peers[id] = h.makePeer(id) }
        let slow = MatchSettings(speed: 1, colors: 4, gamesPerMatch: 3)
        // Offered before anyone has the room's state: sent with the hello.
        h.peers[ids[0]]!.offerSettings(Self.fast)
        h.peers[ids[1]]!.offerSettings(Self.fast)
        h.members = []
        h.installView(members: Array(ids.prefix(2)), joining: Array(ids.prefix(2)))
        // Alice gets ready on her own offer before bob's equal one reaches her: her mark stays.
        while let payload = h.queues[ids[0]]![ids[0]]?.first {
            h.queues[ids[0]]![ids[0]]!.removeFirst()
            h.deliveredInView[ids[0], default: [:]][ids[0], default: 0] += 1
            h.handle(ids[0], .delivered(Delivery(from: ids[0], seq: h.nextSeq(ids[0], ids[0]), payload: payload)))
        }
        #expect(h.peers[ids[0]]!.roomSettingsAuthor == ids[0])
        ready(h, ids[0])
        h.deliverAll(to: Array(ids.prefix(2)))
        for id in ids.prefix(2) {
            #expect(h.peers[id]!.roomSettings == Self.fast)
            #expect(h.peers[id]!.roomSettingsAuthor == ids[1])
            #expect(h.peers[id]!.readyMarks.keys.sorted() == [ids[0]])
        }
        // A joiner with other settings takes the room's.
        h.peers[ids[2]] = h.makePeer(ids[2])
        h.peers[ids[2]]!.offerSettings(slow)
        h.installView(members: ids, joining: [ids[2]])
        h.deliverAll(to: ids)
        for id in ids { #expect(h.peers[id]!.roomSettings == Self.fast) }
        // Two different fresh offers: the higher ID's applies everywhere.
        let g = VSHarness(seed: 19)
        for id in ids.prefix(2) { g.peers[id] = g.makePeer(id) }
        g.peers[ids[0]]!.offerSettings(Self.fast)
        g.peers[ids[1]]!.offerSettings(slow)
        g.members = []
        g.installView(members: Array(ids.prefix(2)), joining: Array(ids.prefix(2)))
        g.deliverAll(to: Array(ids.prefix(2)))
        for id in ids.prefix(2) { #expect(g.peers[id]!.roomSettings == slow) }
    }

    @Test("a peer joining the lobby gets the room's settings and ready marks from the snapshot")
    func joinerSeesLobby() {
        let h = VSHarness(seed: 17)
        let (players, _) = lobbyRoom(h, players: 2)
        change(h, players[1], Self.fast)
        h.deliverAll(to: players)
        ready(h, players[0])
        h.deliverAll(to: players)
        let joiner = PeerID(0x7777_0000_0001)
        h.installView(members: players + [joiner], joining: [joiner])
        h.deliverAll(to: players + [joiner])
        let peer = h.peers[joiner]!
        #expect(peer.isSynced)
        #expect(peer.roomSettings == Self.fast)
        #expect(peer.roomSettingsAuthor == players[1])
        #expect(peer.readyMarks.keys.sorted() == [players[0]])
        // Everyone ready, the joiner included: they start together.
        ready(h, players[1])
        ready(h, joiner)
        run(h, seconds: 4)
        let starts = started(h)
        for id in players + [joiner] { #expect(starts[id]?.1 == (players + [joiner]).sorted()) }
    }

    @Test("lobby messages and a snapshot's room part survive both codecs; a hostile room part is dropped")
    func codecs() {
        let key = SettingsKey(version: 7, author: PeerID(0xABCD))
        let room = RoomSnapshot(settings: Self.fast, key: key, marks: [PeerID(1): true, PeerID(2): false], goLeader: PeerID(2))
        let messages: [MatchMessage] = [
            .roomSettings(version: 3, settings: Self.fast), .ready(match: 4, key: key, settings: Self.fast, wantsToPlay: true),
            .unready(match: 4), .go(match: 9),
            .snapshot(Snapshot(view: 5, matchRound: 1, nextGame: 2, lobby: [], match: nil, room: room)),
        ]
        for message in messages {
            #expect(MatchMessage.decode(message.encoded()) == message)
            #expect(MatchMessage(json: message.json) == message)
        }
        // Settings out of range, and 17 ready marks, are refused by both decoders.
        var bad = MatchMessage.roomSettings(version: 1, settings: Self.fast).encoded()
        bad[bad.count - 2] = 9
        #expect(MatchMessage.decode(bad) == nil)
        let many = Dictionary(uniqueKeysWithValues: (1...17).map { (PeerID(UInt64($0)), true) })
        let hostile = MatchMessage.snapshot(Snapshot(view: 5, matchRound: 1, nextGame: 2, lobby: [], match: nil,
                                                     room: RoomSnapshot(settings: Self.fast, key: key, marks: many, goLeader: nil)))
        #expect(MatchMessage.decode(hostile.encoded()) == nil)
        #expect(MatchMessage(json: hostile.json) == nil)
    }
}
