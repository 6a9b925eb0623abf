import EggBot
import EggGame
import PeerNet
import Testing
@testable import Consensus

/// A hand-driven room for scenarios the view-synchronous harness cannot express (a member cut
/// off in an old view while the rest of the room starts afresh): each peer's payloads go to the
/// receivers named at send time, delivered in per-sender FIFO order, senders taken round robin.
private final class HandRoom {
    var peers: [PeerID: MatchPeer] = [:]
    var bots: [PeerID: BotPlayer] = [:]
    /// Who receives what each peer sends (its current view's members).
    var audience: [PeerID: [PeerID]] = [:]
    /// Payloads in flight: queues[receiver][sender].
    var queues: [PeerID: [PeerID: [[UInt8]]]] = [:]
    var events: [PeerID: [MatchEvent]] = [:]
    var now = NetTime.zero

    func add(_ id: PeerID, sendBackpressureAt: Int = 1_024, eventsMax: Int = 1 << 20) {
        var config = MatchPeerConfig(id: id, name: "p\(id.raw)", voteSeed: id.raw &* 7919 &+ 13)
        config.lookaheadRounds = 16
        config.sendBackpressureAt = sendBackpressureAt
        config.eventsMax = eventsMax
        peers[id] = MatchPeer(config: config)
        bots[id] = BotPlayer(level: .insane, seed: id.raw)
    }

    func install(_ view: MembershipView, at ids: [PeerID]) {
        for id in ids {
            audience[id] = view.members
            peers[id]!.handle(.viewChanged(view), now: now)
            drain(id)
        }
    }

    /// Payloads of peers with no audience (cut off): what PeerNet would hold for the next view.
    var held: [PeerID: [[UInt8]]] = [:]

    /// Moves `id`'s payloads to its audience (or into `held`) and keeps its events.
    func drain(_ id: PeerID) {
        while let payload = peers[id]!.pollSend() {
            guard let receivers = audience[id] else {
                held[id, default: []].append(payload)
                continue
            }
            for receiver in receivers { queues[receiver, default: [:]][id, default: []].append(payload) }
        }
        while let event = peers[id]!.pollEvent() { events[id, default: []].append(event) }
    }

    /// Delivers everything in flight to the peers in `ids`, and what that makes them send.
    func deliverAll(to ids: [PeerID]) {
        var progressed = true
        while progressed {
            progressed = false
            for receiver in ids {
                for sender in (queues[receiver] ?? [:]).keys.sorted() where !(queues[receiver]![sender]!.isEmpty) {
                    let payload = queues[receiver]![sender]!.removeFirst()
                    peers[receiver]!.handle(.delivered(Delivery(from: sender, seq: 0, payload: payload)), now: now)
                    drain(receiver)
                    progressed = true
                }
            }
        }
    }

    /// Installs `view` at its members, readies them all for a match of `settings` and ticks
    /// (delivering among them) until `first` spawned `pairs` pairs, at most 10,000 ticks.
    func startMatch(in view: MembershipView, settings: MatchSettings, until first: PeerID, spawned pairs: Int) {
        install(view, at: view.members)
        for id in view.members { peers[id]!.setReady(settings: settings, wantsToPlay: true); drain(id) }
        var ticks = 0
        while (peers[first]!.owner?.grid.pairsSpawned ?? 0) < pairs && ticks < 10_000 {
            tick(view.members, deliverTo: view.members)
            ticks += 1
        }
    }

    /// One 60 Hz tick of the peers in `ids` (bots move), then deliveries among `deliverTo`.
    func tick(_ ids: [PeerID], deliverTo: [PeerID]) {
        now = now.adding(nanoseconds: 16_666_667)
        for id in ids {
            if let owner = peers[id]!.owner, let move = bots[id]!.tick(grid: owner.grid, next: peers[id]!.ownerNextPair) {
                peers[id]!.applyLocal(move, now: now)
            }
            peers[id]!.tick(now: now)
            drain(id)
        }
        deliverAll(to: deliverTo)
    }

    var desyncs: [String] {
        events.flatMap { id, list in list.compactMap { if case .desync(let d) = $0 { "\(id.hex): \(d)" } else { nil } } }
    }
}

@Suite("MatchPeer queues, restarts and invariants")
struct MatchPeerQueueTests {
    static let settings = MatchSettings(speed: 9, colors: 4, gamesPerMatch: 3)

    @Test("a survivor cut off mid-game, admitted afresh by a restarted peer: the inputs it queued for the old game are dropped, never applied to the new match's game")
    func staleInputsOfARestartAreDropped() {
        let a = PeerID(0x1000), b = PeerID(0x2000)
        let room = HandRoom()
        room.add(a)
        room.add(b)
        // Views without keys: both room states number their games from 0 (the worst case; see
        // `firstGame(of:)`), so only the stream itself can tell the old game 0 from the new one.
        room.startMatch(in: MembershipView(id: 1, members: [a, b], joined: [a, b]), settings: Self.settings, until: a, spawned: 6)
        #expect(room.peers[a]!.match?.game == 0, "the first game is in progress")
        // b is killed. a, blocked in the old view, keeps playing game 0; its sends wait.
        room.queues = [:]
        room.audience[a] = nil
        for _ in 0..<300 { room.tick([a], deliverTo: []) }
        let stale = room.held[a] ?? []
        // Its queue holds inputs and votes for game 0 (as PeerNet holds them while blocked).
        #expect(stale.contains { if case .inputs(0, _)? = MatchMessage.decode($0) { true } else { false } })
        // b restarts under the same ID: it founds a group alone, then admits a as a joiner.
        room.add(b)
        room.install(MembershipView(id: 1, members: [b], joined: [b]), at: [b])
        let merged = MembershipView(id: 2, members: [a, b], joined: [a])
        room.audience[a] = merged.members
        // a's queued sends go out first in the new view, then whatever it sends once synced.
        for payload in stale { for receiver in [a, b] { room.queues[receiver, default: [:]][a, default: []].append(payload) } }
        room.install(merged, at: [b, a])
        room.deliverAll(to: [a, b])
        #expect(room.peers[a]!.isSynced && room.peers[b]!.isSynced)
        for id in [a, b] { room.peers[id]!.setReady(settings: Self.settings, wantsToPlay: true); room.drain(id) }
        var ticks = 0
        // 15 pairs: a game of chain-building bots may end before 40.
        while (room.peers[b]!.owner?.grid.pairsSpawned ?? 0) < 15 && ticks < 20_000 {
            room.tick([a, b], deliverTo: [a, b])
            ticks += 1
        }
        #expect(room.peers[b]!.match?.players == [a, b], "a new match of both started")
        #expect(room.desyncs.isEmpty, "\(room.desyncs.count) desyncs, first \(room.desyncs.prefix(2))")
        #expect(room.peers[b]!.stats.staleDropped > 0 && room.peers[a]!.stats.staleDropped > 0,
                "the restarted peer and the survivor itself dropped the survivor's stale sends")
        #expect(room.peers[a]!.stats.checkpointsVerified > 10 && room.peers[b]!.stats.checkpointsVerified > 10)
    }

    @Test("a room state founded afresh (new keys after a restart) numbers its games anew; one founded in a view without a key counts from 0")
    func gameNumbersDoNotRepeat() {
        let a = PeerID(1), b = PeerID(2)
        var firsts: Set<UInt32> = []
        for key in UInt64(1)...200 {
            var peer = MatchPeer(config: MatchPeerConfig(id: a, name: "a", voteSeed: 1))
            peer.handle(.viewChanged(MembershipView(id: 1, members: [a, b], joined: [a, b], key: key &* 0x9E37_79B9)))
            var other = MatchPeer(config: MatchPeerConfig(id: b, name: "b", voteSeed: 2))
            other.handle(.viewChanged(MembershipView(id: 1, members: [a, b], joined: [a, b], key: key &* 0x9E37_79B9)))
            #expect(peer.nextGame == other.nextGame, "every member of the founding view agrees")
            firsts.insert(peer.nextGame)
        }
        #expect(firsts.count == 200, "200 foundings, \(firsts.count) distinct first games")
        var keyless = MatchPeer(config: MatchPeerConfig(id: a, name: "a", voteSeed: 1))
        keyless.handle(.viewChanged(MembershipView(id: 1, members: [a], joined: [a])))
        #expect(keyless.nextGame == 0)
    }

    @Test("a wait for an egg that never ends shows in longestEggWaitNanoseconds, not only once it ends")
    func eggWaitInProgress() {
        let a = PeerID(1), b = PeerID(2)
        let room = HandRoom()
        room.add(a)
        room.add(b)
        room.startMatch(in: MembershipView(id: 1, members: [a, b], joined: [a, b]), settings: Self.settings, until: a, spawned: 3)
        // b goes silent (its votes never arrive): a runs out of decided rounds and waits.
        room.audience[b] = nil
        for _ in 0..<1_200 { room.tick([a], deliverTo: [a]) }
        let peer = room.peers[a]!
        let waited = peer.longestEggWaitNanoseconds(now: room.now)
        #expect(peer.owner?.waitingSince != nil, "a waits for an egg")
        #expect(peer.stats.maxEggWaitNanoseconds == 0, "no wait has ended")
        #expect(waited > 5_000_000_000, "the wait in progress shows: \(waited / 1_000_000) ms")
    }

    @Test("a full send queue holds the local player's grid: nothing queued is dropped, and play resumes once it drains")
    func sendBackpressure() {
        let a = PeerID(1), b = PeerID(2)
        let room = HandRoom()
        room.add(a, sendBackpressureAt: 32)
        room.add(b)
        room.startMatch(in: MembershipView(id: 1, members: [a, b], joined: [a, b], key: 1), settings: Self.settings, until: a, spawned: 4)
        // a's driver stops taking payloads (its send window is full): a ticks without pollSend.
        var peer = room.peers[a]!
        let spawnedBefore = peer.owner!.grid.pairsSpawned
        var queued: [Int] = []
        for tick in 1...600 {
            let t = room.now.adding(nanoseconds: UInt64(tick) * 16_666_667)
            if let owner = peer.owner, let move = room.bots[a]!.tick(grid: owner.grid, next: peer.ownerNextPair) {
                peer.applyLocal(move, now: t)
            }
            peer.tick(now: t)
            while peer.pollEvent() != nil {}
            queued.append(peer.pendingSendCount)
        }
        room.now = room.now.adding(nanoseconds: 600 * 16_666_667)
        #expect(queued.max()! <= 32 + 8, "the queue stops growing at the backpressure mark (+ one tick's sends): \(queued.max()!)")
        // (Idle ticks go out every few ticks, so the mark is reached later than once a message a tick.)
        #expect(peer.isSendBackpressured && peer.stats.backpressureHolds > 300, "holds: \(peer.stats.backpressureHolds)")
        #expect(peer.owner!.grid.pairsSpawned - spawnedBefore < 10, "the grid held still")
        // Everything queued is still there, in order: the peek is what the poll returns.
        var drained = 0
        while let next = peer.peekSend() {
            #expect(peer.pollSend() == next)
            for receiver in [a, b] { room.queues[receiver, default: [:]][a, default: []].append(next) }
            drained += 1
        }
        #expect(drained == queued.last!)
        room.peers[a] = peer
        func verifiedAtB() -> Int {
            (room.events[b] ?? []).filter { if case .checkpointVerified(a, _, _) = $0 { true } else { false } }.count
        }
        let verifiedBefore = verifiedAtB()
        for _ in 0..<600 { room.tick([a, b], deliverTo: [a, b]) }
        let verifiedAfter = verifiedAtB()
        #expect(verifiedAfter > verifiedBefore + 10, "play resumed: b verified \(verifiedBefore) → \(verifiedAfter) checkpoints of a")
        #expect(room.desyncs.isEmpty, "\(room.desyncs.prefix(2))")
    }

    @Test("a driver that stops polling events makes the peer trap rather than lose an event")
    func eventQueueFailsLoudly() async {
        await #expect(processExitsWith: .failure) {
            var config = MatchPeerConfig(id: PeerID(1), name: "p", voteSeed: 1)
            config.eventsMax = 8
            var peer = MatchPeer(config: config)
            for id in UInt64(1)...20 {
                peer.handle(.viewChanged(MembershipView(id: id, members: [PeerID(1)], joined: id == 1 ? [PeerID(1)] : [])))
            }
        }
    }

    @Test("events up to the limit all arrive, in order")
    func eventQueueKeepsEverything() {
        var config = MatchPeerConfig(id: PeerID(1), name: "p", voteSeed: 1)
        config.eventsMax = 64
        var peer = MatchPeer(config: config)
        for id in UInt64(1)...20 {
            peer.handle(.viewChanged(MembershipView(id: id, members: [PeerID(1)], joined: id == 1 ? [PeerID(1)] : [])))
        }
        var views: [UInt64] = []
        while let event = peer.pollEvent() { if case .viewChanged(let v) = event { views.append(v.id) } }
        #expect(views == Array(1...20))
    }
}

@Suite("MatchPeer when PeerNet gives up its view")
struct ViewAbandonedTests {
    @Test("the log keeps the view given up (what decides a rival lost at the lower ID), and reads it back for a replay")
    func abandonedViewIsLogged() {
        let a = PeerID(0x1000), b = PeerID(0x2000)
        let view = MembershipView(id: 5, members: [a, b], joined: [], key: 7)
        let lines = [MessageLog.header(peer: a, room: "eggs"),
                     MessageLog.line(for: .viewChanged(view), atMicroseconds: 1)!,
                     MessageLog.line(for: .viewAbandoned(view), atMicroseconds: 2)]
        #expect(lines[2] == #"{"at":2,"abandoned":{"view":5}}"#)
        let (events, error, _) = LogFastPathTests.read(MessageLog.sealed(lines.compactMap { $0 }), inPlace: true)
        #expect(error == nil)
        #expect(events.contains { if case .event(.viewAbandoned(let v), 2, 3) = $0 { v.id == 5 } else { false } }, "\(events)")
    }

    @Test("a peer whose view of two PeerNet gave up (its rival went silent) wins the game by forfeit, is back in the lobby, and takes a snapshot in the group it rejoins")
    func abandonedViewEndsTheMatchHere() {
        let a = PeerID(0x1000), b = PeerID(0x2000)
        let room = HandRoom()
        room.add(a)
        room.add(b)
        let first = MembershipView(id: 1, members: [a, b], joined: [a, b], key: 7)
        room.startMatch(in: first, settings: MatchPeerQueueTests.settings, until: a, spawned: 4)
        #expect(room.peers[a]!.match != nil)
        // b is gone; a, the lower ID of two, is blocked, and PeerNet gives the view up.
        room.audience[a] = nil
        for _ in 0..<60 { room.tick([a], deliverTo: []) }
        room.peers[a]!.handle(.viewAbandoned(first), now: room.now)
        room.drain(a)
        let peer = room.peers[a]!
        #expect(peer.match == nil && peer.owner == nil && !peer.isSynced && peer.view == nil)
        #expect(peer.pendingSendCount == 0, "nothing about the dropped state is left to send")
        // Of two, the rival went silent: it is out (connection lost) and a wins the game under way
        // by forfeit, and the match, as the higher ID would have in a's place.
        #expect(room.events[a]!.contains { if case .playerOut(b, _, .connectionLost) = $0 { true } else { false } })
        #expect(room.events[a]!.contains { if case .gameOver(_, a) = $0 { true } else { false } })
        #expect(room.events[a]!.contains { if case .matchOver(a, let wins) = $0 { wins[a] == 1 } else { false } })
        // b restarted and founded a group; a joins it and takes b's snapshot.
        room.add(b)
        room.install(MembershipView(id: 1, members: [b], joined: [b], key: 9), at: [b])
        room.audience[a] = [a, b]
        room.install(MembershipView(id: 2, members: [a, b], joined: [a], key: 10), at: [b, a])
        room.deliverAll(to: [a, b])
        #expect(room.peers[a]!.isSynced && room.peers[a]!.nextGame == room.peers[b]!.nextGame)
        #expect(room.events[a]!.contains(.synced(fromSnapshot: true)))
        for id in [a, b] { room.peers[id]!.setReady(settings: MatchPeerQueueTests.settings, wantsToPlay: true); room.drain(id) }
        for _ in 0..<600 { room.tick([a, b], deliverTo: [a, b]) }
        let started = room.events[a]!.filter { if case .matchStarted = $0 { true } else { false } }.count
        #expect(started == 2, "a new match of both: \(room.events[a]!.suffix(8)) \(room.events[b]!.suffix(8))")
        #expect(room.desyncs.isEmpty, "\(room.desyncs.prefix(2))")
    }
}

@Suite("MatchPeer renamed in the lobby")
struct RenameTests {
    @Test("rename sends a hello with the new name, which the room applies when delivered; empty or control names are refused")
    func rename() {
        let a = PeerID(0x1000)
        var peer = MatchPeer(config: MatchPeerConfig(id: a, name: "alice", voteSeed: 1))
        let early = peer.rename(to: "zelda")
        #expect(!early, "renamed with no room state")
        peer.handle(.viewChanged(MembershipView(id: 1, members: [a], joined: [a], key: 0)))
        var sent: [[UInt8]] = []
        while let payload = peer.pollSend() { sent.append(payload) }
        let empty = peer.rename(to: ""), control = peer.rename(to: "ze\u{7}lda")
        #expect(!empty && !control)
        let renamed = peer.rename(to: "zelda")
        #expect(renamed && peer.name == "zelda")
        var hello: [UInt8]?
        while let payload = peer.pollSend() { if case .hello(let h)? = MatchMessage.decode(payload), h.name == "zelda" { hello = payload } }
        let payload = try! #require(hello, "no hello with the new name")
        for (seq, bytes) in (sent + [payload]).enumerated() {
            peer.handle(.delivered(Delivery(from: a, seq: UInt64(seq + 1), payload: bytes)))
        }
        #expect(peer.lobby[a]?.name == "zelda")
    }
}
