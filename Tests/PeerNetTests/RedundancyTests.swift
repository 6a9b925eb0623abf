import EggPrimitives
import EggSim
import EggTestSupport
@testable import PeerNet
import Testing

/// Redundancy for game-rate traffic (`ReliableMulticast+Redundancy.swift`): piggybacked copies
/// and echoes repair a lost datagram without a NACK; none when no loss is seen or under bulk load.
@Suite("PeerNet redundancy")
struct RedundancyTests {
    /// NACK datagrams have kind 3 at byte 5.
    static func isNack(_ packet: SimPacket) -> Bool { packet.bytes.count > 5 && packet.bytes[5] == 3 }

    static func config(seed: UInt64, _ change: @escaping (inout PeerNetConfig) -> Void) -> (PeerID, UInt64) -> PeerNetConfig {
        { id, incarnation in
            var c = PeerNetConfig(peerID: id, incarnation: incarnation, randomSeed: seed &* 31 &+ id.raw &* 0x1000_0001 &+ incarnation)
            change(&c)
            return c
        }
    }

    /// A converged group of `peers` sending marked messages every `interval` (started now), with
    /// a fixed one-way delay of 0.2 ms; `drop` decides per packet (after the first sighting
    /// bookkeeping: `firsts` are the marked messages this packet carries to `to` for the first time).
    struct Run {
        let network: SimNetwork
        var lostAt: [LossKey: NetTime] = [:]

        init(peers: Int, seed: UInt64, perPeer: Int, interval: UInt64, senders: Set<PeerID>? = nil,
             config: @escaping (inout PeerNetConfig) -> Void,
             drop: @escaping (SimPacket, _ firsts: [UInt64], inout SimRandom) -> Bool) {
            var options = SimOptions(seed: seed, peerCount: peers)
            options.delayMeanNanoseconds = 0
            let network = SimNetwork(
                options: options, config: RedundancyTests.config(seed: seed, config),
                app: { id, _ in
                    senders.map { $0.contains(id) } ?? true
                        ? MarkedApp(peer: id, members: peers, total: perPeer, intervalNanoseconds: interval) : nil
                })
            self.network = network
            #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds), "seed \(seed)")
            for node in network.nodes { (node.app as? MarkedApp)?.start(now: network.now) }
            var rng = SimRandom(seed: seed ^ 0x4E_D0)
            var seen: Set<LossKey> = []
            let box = LostBox()
            network.filter = { [unowned network] packet in
                guard packet.from != packet.to else { return true }
                var firsts: [UInt64] = []
                for message in MarkedApp.ids(in: packet.bytes) where seen.insert(LossKey(receiver: packet.to, message: message)).inserted {
                    firsts.append(message)
                }
                let dropped = drop(packet, firsts, &rng)
                if dropped { for m in firsts { box.lostAt[LossKey(receiver: packet.to, message: m)] = network.now } }
                return !dropped
            }
            network.run(forNanoseconds: UInt64(perPeer) * interval + 500 * ms)
            lostAt = box.lostAt
        }

        /// Virtual time from each lost first transmission to its delivery, and the lost ones never delivered.
        func repairTimes() -> (times: [UInt64], undelivered: Int) {
            var pending = lostAt
            var times: [UInt64] = []
            for node in network.nodes {
                for record in node.log {
                    guard case let .delivered(d) = record.event, let id = MarkedApp.id(of: d),
                          let at = pending.removeValue(forKey: LossKey(receiver: node.peerID, message: id)) else { continue }
                    times.append(record.time.nanoseconds(since: at))
                }
            }
            return (times.sorted(), pending.count)
        }

        func stats(_ id: UInt64) -> PeerNetStats { network.node(PeerID(id)).core!.stats }
    }

    final class LostBox { var lostAt: [LossKey: NetTime] = [:] }

    @Test("copies: with NACKs impossible, a datagram lost from a game-rate sender is repaired by its next datagram, once and in order")
    func nextDatagramRepairs() {
        // Every 4th message of peer 1 never reaches peer 2 first time; no NACK gets through; no echoes.
        let run = Run(peers: 3, seed: 41, perPeer: 60, interval: 16 * ms, senders: [PeerID(1)],
                      config: { $0.redundancyLevelMin = 1; $0.redundancyEchoesMax = 0 },
                      drop: { packet, firsts, _ in
                          Self.isNack(packet) || (packet.from == PeerID(1) && packet.to == PeerID(2) && firsts.contains { $0 % 4 == 0 })
                      })
        let (times, undelivered) = run.repairTimes()
        #expect(run.lostAt.count == 15, "every 4th of 60 messages was lost: \(run.lostAt.count)")
        #expect(undelivered == 0, "every lost message was repaired without a NACK")
        #expect(times.allSatisfy { $0 <= 16 * ms + 1 * ms }, "repaired by the next datagram, 16 ms later: \(times)")
        #expect(run.stats(1).messagesRetransmitted == 0, "no NACK repair")
        // Each datagram after the first carries a copy (unless the message before was stable already).
        #expect(run.stats(1).messagesCopied >= 50, "copies: \(run.stats(1).messagesCopied)")
        #expect(run.stats(2).messagesDuplicate > 0, "copies of delivered messages are duplicates")
        #expect(run.network.node(PeerID(2)).deliveredSeqs(from: PeerID(1)) == Array(1...60), "delivered once, in order")
        #expect(SimChecker.violations(run.network) == [])
    }

    @Test("echoes: with NACKs impossible, a lost game-rate datagram is repaired by the echo about 1 ms later")
    func echoRepairs() {
        // Peer 2 misses every 4th message's first transmission from peer 1.
        let run = Run(peers: 3, seed: 42, perPeer: 60, interval: 16 * ms, senders: [PeerID(1)],
                      config: { $0.redundancyLevelMin = 1 },
                      drop: { packet, firsts, _ in
                          Self.isNack(packet) || (packet.from == PeerID(1) && packet.to == PeerID(2) && firsts.contains { $0 % 4 == 0 })
                      })
        let (times, undelivered) = run.repairTimes()
        #expect(run.lostAt.count == 15)
        #expect(undelivered == 0)
        #expect(times.allSatisfy { $0 <= 1 * ms + 300_000 }, "repaired by the echo (1 ms, plus the 0.2 ms delay): \(times)")
        // One echo per send at level 1, unless the message was stable (delivered by all) already.
        #expect(run.stats(1).echoesSent >= 40, "echoes: \(run.stats(1).echoesSent)")
        #expect(run.network.node(PeerID(2)).deliveredSeqs(from: PeerID(1)) == Array(1...60))
        #expect(SimChecker.violations(run.network) == [])
    }

    @Test("adaptive: under 20 % loss every peer turns redundancy on by itself: one-way p99 ≤ 5 ms over all messages (virtual time, 0.2 ms delay)")
    func adaptiveUnderLoss() {
        let run = Run(peers: 4, seed: 43, perPeer: 300, interval: 16 * ms, config: { _ in },
                      drop: { _, _, rng in rng.chance(0.2) })
        // One-way latency of every message from its send (stamped in the payload) to each other
        // peer's delivery; the first 250 ms (the estimate warming up) left out.
        var latencies: [UInt64] = []
        for node in run.network.nodes {
            for record in node.log {
                guard case let .delivered(d) = record.event, d.from != node.peerID, let id = MarkedApp.id(of: d), id & 0xFFFF_FFFF >= 16 else { continue }
                let sentAt = d.payload[16..<24].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                latencies.append(record.time.nanoseconds(since: NetTime(nanoseconds: sentAt)))
            }
        }
        latencies.sort()
        #expect(latencies.count == 4 * 3 * (300 - 16))
        let p50 = RecoveryTests.percentile(latencies, 0.5), p99 = RecoveryTests.percentile(latencies, 0.99)
        let slow = latencies.filter { $0 > 5 * ms }.count
        let stats = (1...4).map { run.stats(UInt64($0)) }
        #expect(p99 <= 5 * ms, "p50 \(p50 / 1000) µs, p99 \(p99 / 1000) µs, \(slow) of \(latencies.count) over 5 ms, copies \(stats.map(\.messagesCopied)), echoes \(stats.map(\.echoesSent)), nacks \(stats.map(\.nacksSent))")
        #expect(Double(slow) / Double(latencies.count) < 0.01)
        for s in stats { #expect(s.echoesSent > 300, "echoes: \(s.echoesSent)") }
        // Lost first transmissions: most repaired by an echo within 2 ms, without a NACK.
        let (times, _) = run.repairTimes()
        #expect(RecoveryTests.percentile(times, 0.9) <= 2 * ms + 300_000, "repairs: p90 \(RecoveryTests.percentile(times, 0.9) / 1000) µs")
        #expect(stats.map(\.nacksSent).reduce(0, +) < UInt64(times.count / 10), "NACKs are the fallback only")
        #expect(run.network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        for receiver in run.network.nodes {
            for sender in run.network.nodes {
                #expect(receiver.deliveredSeqs(from: sender.peerID).count == 300)
            }
        }
        #expect(SimChecker.violations(run.network) == [])
    }

    @Test("adaptive: no loss seen, no copies: the datagrams are byte for byte those of a peer without redundancy")
    func noLossNoCopies() {
        func trace(_ redundancy: Bool) -> ([[UInt8]], [PeerNetStats]) {
            // A fixed delay: no reordering (a NACK for a datagram overtaken counts as a loss seen).
            var options = SimOptions(seed: 44, peerCount: 4)
            options.delayMeanNanoseconds = 0
            let network = SimNetwork(
                options: options, config: Self.config(seed: 44) { if !redundancy { $0.redundancyBytesMax = 0 } },
                app: traffic(total: 200, startWhenMembers: 4, intervalNanoseconds: 16 * ms))
            var packets: [[UInt8]] = []
            network.filter = { packet in
                packets.append(packet.bytes)
                return true
            }
            network.run(forNanoseconds: 6 * seconds)
            return (packets, network.nodes.map { $0.core!.stats })
        }
        let (with, stats) = trace(true)
        let (without, _) = trace(false)
        #expect(with.count > 2000)
        #expect(with.count == without.count, "as many datagrams: \(with.count) and \(without.count)")
        let firstDifference = zip(with, without).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(firstDifference == nil, "identical datagrams; the first difference is datagram \(firstDifference ?? -1)")
        for s in stats {
            #expect(s.messagesCopied == 0 && s.echoesSent == 0)
            #expect(s.messagesDelivered == 800)
        }
    }

    @Test("adaptive: once the loss stops, copies stop within a few seconds")
    func decays() {
        var options = SimOptions(seed: 45, peerCount: 3)
        options.delayMeanNanoseconds = 0
        var dropping = true
        let network = SimNetwork(options: options, config: Self.config(seed: 45) { _ in },
                                 app: traffic(total: 600, startWhenMembers: 3, intervalNanoseconds: 16 * ms))
        var rng = SimRandom(seed: 45)
        network.filter = { packet in packet.from == packet.to || !(dropping && rng.chance(0.2)) }
        network.run(forNanoseconds: 4 * seconds)
        let lossyCopies = network.nodes.map { $0.core!.stats.messagesCopied }
        #expect(lossyCopies.allSatisfy { $0 > 50 }, "copies under loss: \(lossyCopies)")
        dropping = false
        network.run(forNanoseconds: 3 * seconds)
        let settled = network.nodes.map { $0.core!.stats.messagesCopied }
        network.run(forNanoseconds: 2 * seconds)
        #expect(network.nodes.map { $0.core!.stats.messagesCopied } == settled, "no copies once no loss is seen")
        #expect(network.nodes.map { $0.core!.stats.echoesSent }.allSatisfy { $0 > 0 })
    }

    @Test("bulk load: a sender above the rate limit carries no copies and sends no echoes, even with redundancy forced on")
    func bulkLoadStepsAside() {
        // 2,000 messages a second from peer 1 (4× the rate limit), level forced to 2.
        var options = SimOptions(seed: 46, peerCount: 3)
        options.delayMeanNanoseconds = 0
        let network = SimNetwork(options: options, config: Self.config(seed: 46) { $0.redundancyLevelMin = 2 },
                                 app: { id, _ in id == PeerID(1) ? MarkedApp(peer: id, members: 3, total: 4000, intervalNanoseconds: 500_000) : nil })
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        (network.node(PeerID(1)).app as? MarkedApp)?.start(now: network.now)
        // (The app starts with the node's next input: within a heartbeat interval.)
        network.run(forNanoseconds: 500 * ms)
        let early = network.node(PeerID(1)).core!.stats
        #expect(early.messagesSent >= 200)
        network.run(forNanoseconds: 1800 * ms)
        let late = network.node(PeerID(1)).core!.stats
        #expect(late.messagesSent == 4000)
        #expect(late.messagesCopied == early.messagesCopied, "no copies once the rate is bulk: \(early.messagesCopied) → \(late.messagesCopied)")
        #expect(late.echoesSent == early.echoesSent)
        // Level 2: two copies for each of the first 50 messages (one rate bucket's worth) at most.
        #expect(early.messagesCopied <= 100, "copies only until the rate is measured: \(early.messagesCopied)")
    }

    @Test("bulk load: a burst of sends at once goes out in full datagrams without copies or echoes")
    func burstStepsAside() throws {
        var options = SimOptions(seed: 47, peerCount: 3)
        options.delayMeanNanoseconds = 0
        let network = SimNetwork(options: options, config: Self.config(seed: 47) { $0.redundancyLevelMin = 2 })
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        let core = network.node(PeerID(1)).core!
        for i in 0..<200 { try core.send([UInt8(truncatingIfNeeded: i), 1, 2, 3, 4, 5, 6, 7], now: network.now) }
        network.run(forNanoseconds: 100 * ms)
        #expect(core.stats.echoesSent == 0)
        #expect(core.stats.messagesCopied == 0, "no copies: \(core.stats.messagesCopied)")
        for node in network.nodes { #expect(node.deliveredSeqs(from: PeerID(1)).count == 200) }
    }

    @Test("hostile copies: bad seqs, another sender's stream in a wrong incarnation or far beyond the window, oversize: counted and dropped")
    func hostileCopies() {
        var options = SimOptions(seed: 48, peerCount: 3)
        options.delayMeanNanoseconds = 0
        let network = SimNetwork(options: options, config: Self.config(seed: 48) { $0.redundancyLevelMin = 1 },
                                 app: traffic(total: 50, startWhenMembers: 3, intervalNanoseconds: 16 * ms))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        network.run(forNanoseconds: 1 * seconds)
        let forger = network.node(PeerID(1)), target = network.node(PeerID(2)), other = network.node(PeerID(3))
        let auth = Authenticator(passphrase: nil)
        let viewID = target.core!.view.id
        let room = FNV1a64.hash(Array("eggs".utf8))
        /// A data datagram from peer 1's identity, with the next packet number it would use.
        func datagram(_ items: [DataItem], rawCount: UInt8? = nil) -> [UInt8] {
            let core = forger.core!
            var envelope = core.framing.nextEnvelope(kind: .data)
            envelope.room = room
            var w = BigEndianByteWriter()
            Wire.encodeHeader(kind: .data, envelope: envelope, auth: auth, into: &w)
            w.u8(rawCount ?? UInt8(items.count))
            for item in items { Wire.encodeItem(item, into: &w) }
            var bytes = w.bytes
            auth.appendTrailer(to: &bytes)
            return bytes
        }
        let me1 = forger.core!.me
        let me3 = other.core!.me
        let delivered3 = target.core!.deliveredUpTo(PeerID(3))!
        let before = target.core!.stats
        let deliveredBefore = target.deliveryCount
        // Seq 0 and seq beyond the wire's limit: the datagram is malformed.
        network.inject(datagram([DataItem(origin: me1, viewID: viewID, seq: 0, payload: [1])]), to: target.peerID)
        network.inject(datagram([DataItem(origin: me1, viewID: viewID, seq: Wire.seqMax + 1, payload: [1])]), to: target.peerID)
        // More items than the count says, and a count above the cap.
        network.inject(datagram([DataItem(origin: me1, viewID: viewID, seq: 1, payload: [1]), DataItem(origin: me1, viewID: viewID, seq: 2, payload: [1])], rawCount: 1), to: target.peerID)
        network.inject(datagram([DataItem(origin: me1, viewID: viewID, seq: 1, payload: [1])], rawCount: UInt8(Wire.itemsPerDatagramMax + 1)), to: target.peerID)
        let after1 = target.core!.stats
        #expect(after1.droppedMalformed == before.droppedMalformed + 4)
        // Copies claiming peer 3's stream: an incarnation it does not have, and seqs far beyond its window.
        network.inject(datagram([DataItem(origin: Member(id: me3.id, incarnation: me3.incarnation &+ 1), viewID: viewID, seq: delivered3 + 1, payload: TrafficApp.bytes(3) + TrafficApp.bytes(0) + TrafficApp.bytes(0))]), to: target.peerID)
        network.inject(datagram([DataItem(origin: me3, viewID: viewID, seq: delivered3 + 100_000, payload: [9])]), to: target.peerID)
        // A stale copy of a message delivered already (other payload): a duplicate, never delivered again.
        network.inject(datagram([DataItem(origin: me3, viewID: viewID, seq: 1, payload: [6, 6, 6])]), to: target.peerID)
        let after2 = target.core!.stats
        #expect(after2.messagesDiscarded == after1.messagesDiscarded + 2)
        #expect(after2.messagesDuplicate == after1.messagesDuplicate + 1)
        // Oversize: more copies than a datagram may hold.
        let big = (1...20).map { DataItem(origin: me1, viewID: viewID, seq: UInt64($0), payload: [UInt8](repeating: 5, count: 60)) }
        network.inject(datagram(big), to: target.peerID)
        #expect(target.core!.stats.droppedOversized == before.droppedOversized + 1)
        #expect(target.deliveryCount == deliveredBefore, "nothing hostile was delivered")
        #expect(network.runUntilConverged(timeoutNanoseconds: 20 * seconds, extra: { net in
            net.nodes.allSatisfy { ($0.app as? TrafficApp)?.sent == 50 }
        }))
        for receiver in network.nodes {
            for sender in network.nodes { #expect(receiver.deliveredSeqs(from: sender.peerID) == Array(1...50)) }
        }
        #expect(SimChecker.violations(network) == [])
    }

    @Test("level: none below 0.2 % loss, then the smallest level leaving at most 0.5 %, capped; a floor from the config")
    func levels() {
        #expect(ReliableMulticast.redundancyLevel(loss: 0, copiesMax: 3, levelMin: 0) == 0)
        #expect(ReliableMulticast.redundancyLevel(loss: 0.001, copiesMax: 3, levelMin: 0) == 0)
        #expect(ReliableMulticast.redundancyLevel(loss: 0.05, copiesMax: 3, levelMin: 0) == 1)
        #expect(ReliableMulticast.redundancyLevel(loss: 0.1, copiesMax: 3, levelMin: 0) == 2)
        #expect(ReliableMulticast.redundancyLevel(loss: 0.2, copiesMax: 3, levelMin: 0) == 3)
        #expect(ReliableMulticast.redundancyLevel(loss: 0.9, copiesMax: 3, levelMin: 0) == 3)
        #expect(ReliableMulticast.redundancyLevel(loss: 0, copiesMax: 3, levelMin: 2) == 2)
        #expect(ReliableMulticast.redundancyLevel(loss: 0, copiesMax: 3, levelMin: 9) == 3)
    }
}
