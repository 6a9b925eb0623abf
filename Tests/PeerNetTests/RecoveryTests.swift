import EggPrimitives
import EggSim
import EggTestSupport
@testable import PeerNet
import Testing

/// Sends `total` marked messages, one every `intervalNanoseconds`, from `start(now:)` on.
/// Payload: marker (8) | message id (8: sender << 32 | counter) | send time (8) | filler.
final class MarkedApp: SimApplication {
    static let marker: [UInt8] = Array("EGGSLOST".utf8)
    let peer: PeerID
    let members: Int
    let total: Int
    let intervalNanoseconds: UInt64
    var sent = 0
    var nextAt: NetTime?

    init(peer: PeerID, members: Int, total: Int, intervalNanoseconds: UInt64) {
        self.peer = peer
        self.members = members
        self.total = total
        self.intervalNanoseconds = intervalNanoseconds
    }

    func handle(event: PeerNetEvent, core: ReliableMulticast, now: NetTime) {}

    func start(now: NetTime) { nextAt = now }

    func pollTimeout() -> NetTime? { sent < total ? nextAt : nil }

    func handleTimeout(core: ReliableMulticast, now: NetTime) {
        guard sent < total, let at = nextAt, at <= now else { return }
        let id = peer.raw << 32 | UInt64(sent)
        let payload = Self.marker + TrafficApp.bytes(id) + TrafficApp.bytes(now.nanoseconds) + [UInt8](repeating: 7, count: 40)
        if (try? core.send(payload, now: now)) != nil {
            sent += 1
            nextAt = at.adding(nanoseconds: intervalNanoseconds)
        } else {
            nextAt = now.adding(nanoseconds: 1 * ms)
        }
    }

    /// Message ids of every marked payload inside a datagram (scans the bytes).
    static func ids(in bytes: [UInt8]) -> [UInt64] {
        var ids: [UInt64] = []
        var i = 0
        while i + marker.count + 8 <= bytes.count {
            if bytes[i] == marker[0], bytes[i..<(i + marker.count)].elementsEqual(marker) {
                ids.append(bytes[(i + 8)..<(i + 16)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                i += marker.count + 8
            } else {
                i += 1
            }
        }
        return ids
    }

    static func id(of d: Delivery) -> UInt64? {
        guard d.payload.count >= 16, d.payload.prefix(8).elementsEqual(marker) else { return nil }
        return d.payload[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}

struct LossKey: Hashable {
    var receiver: PeerID
    var message: UInt64
}

@Suite("PeerNet recovery and link stats")
struct RecoveryTests {
    /// Runs `peers` peers sending marked messages under `loss` (drawn here, per datagram and
    /// receiver, so the test knows which first transmissions were lost); returns the virtual
    /// times from each lost first transmission to its delivery, and the network.
    static func recoveries(
        peers: Int, loss: Double, seed: UInt64, perPeer: Int, intervalNanoseconds: UInt64,
        config: ((PeerID, UInt64) -> PeerNetConfig)? = nil
    ) -> ([UInt64], SimNetwork, Int) {
        let network = SimNetwork(
            options: SimOptions(seed: seed, peerCount: peers), config: config,
            app: { id, _ in MarkedApp(peer: id, members: peers, total: perPeer, intervalNanoseconds: intervalNanoseconds) })
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        for node in network.nodes { (node.app as? MarkedApp)?.start(now: network.now) }
        var rng = SimRandom(seed: seed ^ 0x10_55)
        var seen: Set<LossKey> = []
        var lostAt: [LossKey: NetTime] = [:]
        network.filter = { [unowned network] packet in
            guard packet.from != packet.to else { return true }
            let drop = rng.chance(loss)
            for message in MarkedApp.ids(in: packet.bytes) {
                let key = LossKey(receiver: packet.to, message: message)
                guard seen.insert(key).inserted else { continue }
                if drop { lostAt[key] = network.now }
            }
            return !drop
        }
        network.run(forNanoseconds: UInt64(perPeer) * intervalNanoseconds + 2 * seconds)
        #expect(network.runUntilConverged(timeoutNanoseconds: 20 * seconds, extra: { net in
            net.nodes.allSatisfy { ($0.app as? MarkedApp)?.sent == perPeer }
        }), "seed \(seed)")
        var result: [UInt64] = []
        for node in network.nodes {
            for record in node.log {
                guard case let .delivered(d) = record.event, let id = MarkedApp.id(of: d),
                      let at = lostAt.removeValue(forKey: LossKey(receiver: node.peerID, message: id)) else { continue }
                result.append(record.time.nanoseconds(since: at))
            }
        }
        #expect(lostAt.isEmpty, "every lost message was delivered in the end")
        return (result.sorted(), network, lostAt.count)
    }

    static func percentile(_ sorted: [UInt64], _ q: Double) -> UInt64 {
        nearestRank(q, ofSorted: sorted) ?? 0
    }

    @Test("recovery: under 20 % loss, a lost message is delivered within 60 ms (p99, virtual time) with the default config", .tags(.slow), .slowTier)
    func recoveryLatencyUnderLoss() {
        let (times, _, _) = Self.recoveries(peers: 4, loss: 0.2, seed: 21, perPeer: 750, intervalNanoseconds: 4 * ms)
        #expect(times.count > 1000, "enough losses to measure: \(times.count)")
        let p50 = Self.percentile(times, 0.5), p99 = Self.percentile(times, 0.99)
        #expect(p99 < 60 * ms, "p50 \(p50 / 1000) µs, p99 \(p99 / 1000) µs")
    }

    @Test("recovery: 1,000 messages per second per peer under 20 % loss with the default window: the backlog stays bounded", .tags(.slow), .slowTier)
    func recoveryCapacity() {
        let (times, network, _) = Self.recoveries(peers: 4, loss: 0.2, seed: 22, perPeer: 2000, intervalNanoseconds: 1 * ms)
        #expect(times.count > 4000)
        #expect(Self.percentile(times, 0.99) < 100 * ms, "p99 \(Self.percentile(times, 0.99) / 1000) µs")
        for node in network.nodes { #expect(node.core!.stats.viewsInstalled == 1, "no view change under load") }
    }

    @Test("link stats: a one-way delay of 5 ms gives a round-trip estimate of about 10 ms")
    func linkRoundTrip() {
        var options = SimOptions(seed: 5, peerCount: 3)
        options.delayMinNanoseconds = 5 * ms
        options.delayMeanNanoseconds = 0
        let network = SimNetwork(options: options, app: traffic(total: 100, startWhenMembers: 3, intervalNanoseconds: 20 * ms))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        network.run(forNanoseconds: 3 * seconds)
        let core = network.node(PeerID(1)).core!
        for peer in [PeerID(2), PeerID(3)] {
            let link = core.linkStats(peer)
            let rtt = link?.roundTripNanoseconds ?? 0
            #expect(rtt >= 9 * ms && rtt <= 11 * ms, "rtt to \(peer): \(rtt) ns")
            #expect(link?.roundTripMinNanoseconds ?? 0 >= 9 * ms)
            #expect(link?.lossFraction == 0)
        }
        #expect(core.linkStats(PeerID(77)) == nil, "never heard: no stats")
    }

    @Test("link stats: 10 % loss on every link is estimated within 5 points")
    func linkLoss() {
        var options = SimOptions(seed: 6, peerCount: 3, lossProbability: 0.1)
        options.delayMeanNanoseconds = 500_000
        let network = SimNetwork(options: options, app: traffic(total: 600, startWhenMembers: 3, intervalNanoseconds: 10 * ms))
        network.run(forNanoseconds: 8 * seconds)
        let core = network.node(PeerID(1)).core!
        for peer in [PeerID(2), PeerID(3)] {
            let link = core.linkStats(peer)!
            #expect(link.packetsObserved >= 256)
            #expect(abs(link.lossFraction - 0.1) < 0.05, "loss from \(peer): \(link.lossFraction)")
            #expect(link.roundTripNanoseconds != nil)
        }
    }

    @Test("wire: a stability report survives an encode/decode round trip")
    func reportRoundTrip() {
        let frame = Frame.report(viewID: 3, viewKey: 0xBEEF, sentSeq: 9, entries: [
            ReportEntry(peer: PeerID(1), delivered: 4, echoPacket: 17, echoHoldMicroseconds: 250_000),
            ReportEntry(peer: PeerID(2), delivered: 9, echoPacket: 0, echoHoldMicroseconds: 0),
        ])
        let env = WireTests.envelope(.report)
        let bytes = Wire.encode(frame, envelope: env, auth: WireTests.crc)
        guard case let .frame(decodedEnvelope, decoded) = Wire.decode(bytes, room: WireTests.room, auth: WireTests.crc, datagramBytesMax: 1200) else {
            Issue.record("report did not decode")
            return
        }
        #expect(decodedEnvelope == env)
        #expect(decoded == frame)
        let full = Frame.report(viewID: 1, viewKey: 1, sentSeq: 1, entries: (1...UInt64(Wire.membersMax)).map {
            ReportEntry(peer: PeerID($0), delivered: .max, echoPacket: .max, echoHoldMicroseconds: .max)
        })
        #expect(Wire.encode(full, envelope: env, auth: Authenticator(passphrase: "x")).count <= 1200)
    }
}
