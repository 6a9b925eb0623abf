import EggBot
import EggGame
import EggPrimitives
import PeerNet
import Testing
@testable import Consensus

/// A view-synchronous delivery harness for the Consensus layer alone (no PeerNet wire):
/// per-sender FIFO, random interleaving across senders, and at every view change every survivor
/// first delivers the same set of old-view messages (a crashed sender's stream is cut at one
/// random prefix for everyone). Deterministic from its seed.
final class VSHarness {
    var rng: EggGame.SplitMix64
    var peers: [PeerID: MatchPeer] = [:]
    var bots: [PeerID: BotPlayer] = [:]
    var viewID: UInt64 = 0
    var members: [PeerID] = []
    /// In-flight messages of the current view: queue[receiver][sender].
    var queues: [PeerID: [PeerID: [[UInt8]]]] = [:]
    /// Per receiver and sender, the seq of the last message delivered (a log checks that each
    /// sender's seqs follow one another).
    var deliveredSeq: [PeerID: [PeerID: UInt64]] = [:]
    /// Messages of the current view delivered so far: deliveredInView[receiver][sender].
    var deliveredInView: [PeerID: [PeerID: Int]] = [:]
    var now = NetTime.zero
    var events: [PeerID: [MatchEvent]] = [:]
    /// Messages to duplicate at the application layer (a sender repeating itself), probability.
    var duplicateProbability = 0.0

    init(seed: UInt64) { rng = EggGame.SplitMix64(seed: seed) }

    func chance(_ p: Double) -> Bool { Double(rng.next() >> 11) / Double(1 << 53) < p }
    func pick(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }

    func makePeer(_ id: PeerID, bot: BotLevel? = nil) -> MatchPeer {
        var config = MatchPeerConfig(id: id, name: "p\(id.raw)", role: .player, voteSeed: id.raw &* 7919 &+ 13)
        config.lookaheadRounds = 16
        var peer = MatchPeer(config: config)
        peer.keepsDecisions = true
        if let bot { bots[id] = BotPlayer(level: bot, seed: id.raw) }
        return peer
    }

    /// Installs a new view: survivors flush the old view, then everyone installs.
    func installView(members newMembers: [PeerID], joining: [PeerID] = [], crashed: Set<PeerID> = []) {
        // Cut crashed senders' streams at a common random prefix.
        for sender in crashed {
            let survivors = members.filter { newMembers.contains($0) }
            let done = survivors.map { deliveredInView[$0]?[sender] ?? 0 }
            let sent = survivors.map { (deliveredInView[$0]?[sender] ?? 0) + (queues[$0]?[sender]?.count ?? 0) }
            let low = done.max() ?? 0, high = sent.min() ?? 0
            let cut = low + pick(max(0, high - low) + 1)
            for receiver in survivors {
                let keep = cut - (deliveredInView[receiver]?[sender] ?? 0)
                queues[receiver]![sender] = Array((queues[receiver]![sender] ?? []).prefix(keep))
            }
        }
        let survivors = members.filter { newMembers.contains($0) }
        deliverAll(to: survivors)
        for gone in members where !newMembers.contains(gone) { peers.removeValue(forKey: gone); queues.removeValue(forKey: gone) }
        viewID += 1
        let old = Set(members)
        members = newMembers.sorted()
        for id in joining where peers[id] == nil { peers[id] = makePeer(id, bot: .insane) }
        let view = MembershipView(id: viewID, members: members, joined: members.filter { !old.contains($0) },
                                  departed: old.filter { !newMembers.contains($0) })
        queues = [:]
        deliveredInView = [:]
        for id in members { queues[id] = [:] }
        for id in members { handle(id, .viewChanged(view)) }
    }

    /// Message logs of the peers listed in `logged`.
    var logged: Set<PeerID> = []
    var logs: [PeerID: [String]] = [:]

    func handle(_ id: PeerID, _ event: PeerNetEvent) {
        if logged.contains(id) {
            if logs[id] == nil { logs[id] = [MessageLog.header(peer: id, room: "eggs")] }
            if let line = MessageLog.line(for: event, atMicroseconds: Int64(now.nanoseconds / 1_000)) { logs[id]!.append(line) }
        }
        peers[id]!.handle(event, now: now)
        drainOutputs(id)
    }

    func drainOutputs(_ id: PeerID) {
        while let payload = peers[id]!.pollSend() {
            // PeerNet never duplicates; a sender repeating its own votes is what is injected here.
            let isVote = [2, 3, 6].contains(payload.first ?? 0)
            let copies = isVote && chance(duplicateProbability) ? 2 : 1
            for _ in 0..<copies {
                for receiver in members { queues[receiver]![id, default: []].append(payload) }
            }
        }
        while let event = peers[id]!.pollEvent() { events[id, default: []].append(event) }
    }

    func nextSeq(_ receiver: PeerID, _ sender: PeerID) -> UInt64 {
        let seq = (deliveredSeq[receiver]?[sender] ?? 0) + 1
        deliveredSeq[receiver, default: [:]][sender] = seq
        return seq
    }

    /// Delivers one random pending message; false if none.
    @discardableResult
    func deliverOne() -> Bool {
        let candidates = members.flatMap { r in (queues[r] ?? [:]).filter { !$0.value.isEmpty }.keys.sorted().map { (r, $0) } }
        guard !candidates.isEmpty else { return false }
        let (receiver, sender) = candidates[pick(candidates.count)]
        let payload = queues[receiver]![sender]!.removeFirst()
        deliveredInView[receiver, default: [:]][sender, default: 0] += 1
        handle(receiver, .delivered(Delivery(from: sender, seq: nextSeq(receiver, sender), payload: payload)))
        return true
    }

    func deliverAll(to receivers: [PeerID]) {
        while true {
            let candidates = receivers.flatMap { r in (queues[r] ?? [:]).filter { !$0.value.isEmpty }.keys.sorted().map { (r, $0) } }
            guard !candidates.isEmpty else { return }
            let (receiver, sender) = candidates[pick(candidates.count)]
            let payload = queues[receiver]![sender]!.removeFirst()
            deliveredInView[receiver, default: [:]][sender, default: 0] += 1
            handle(receiver, .delivered(Delivery(from: sender, seq: nextSeq(receiver, sender), payload: payload)))
        }
    }

    /// One 60 Hz tick: bots move, owners tick, then some random deliveries.
    func tick(deliveries: Int) {
        now = now.adding(nanoseconds: 16_666_667)
        for id in members {
            guard var peer = peers[id] else { continue }
            if var bot = bots[id], let owner = peer.owner {
                if let move = bot.tick(grid: owner.grid, next: peer.ownerNextPair) { peer.applyLocal(move, now: now) }
                bots[id] = bot
            }
            peer.tick(now: now)
            peers[id] = peer
            drainOutputs(id)
        }
        for _ in 0..<deliveries where !deliverOne() { break }
    }

    /// Decided (game, round) → value of every live peer must agree.
    func checkDecisionsAgree() -> String? {
        var seen: [String: (PeerID, UInt64)] = [:]
        for (id, peer) in peers.sorted(by: { $0.key < $1.key }) {
            for d in peer.decisionsLog {
                let key = "\(d.game)/\(d.round)"
                if let (other, value) = seen[key], value != d.value {
                    return "round \(key): \(other.hex) decided \(hex16(value)), \(id.hex) decided \(hex16(d.value))"
                }
                seen[key] = (id, d.value)
            }
        }
        return nil
    }
}
