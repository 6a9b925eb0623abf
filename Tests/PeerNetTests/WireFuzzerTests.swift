import EggPrimitives
import EggSim
@testable import PeerNet
import Testing

/// Structure-aware fuzzing: well-formed datagrams of every kind (valid CRC or HMAC trailer)
/// with boundary values in every field, from member identities and strangers, fed to the live
/// cores of a busy simulated group.
@Suite("PeerNet wire fuzzer")
struct WireFuzzerTests {
    /// Draws frames and senders for one group; `near` are live values (seqs, view ids) of it.
    struct Generator {
        var rng: SimRandom
        var ids: [PeerID]
        var incarnations: [UInt64]
        var near: [UInt64]

        mutating func pick<T>(_ values: [T]) -> T { values[Int(rng.next(upTo: UInt64(values.count - 1)))] }

        /// 0, 1, max, max−1, the wire limits and one past them, live values and their neighbours, random.
        mutating func u64() -> UInt64 {
            switch rng.next(upTo: 3) {
            case 0: return pick([0, 1, .max, .max - 1, Wire.seqMax, Wire.seqMax + 1, 1 << 63, UInt64(UInt32.max)])
            case 1:
                let v = pick(near)
                return pick([v, v &+ 1, v &- 1, v &+ 1000, v &- 1000])
            case 2: return rng.next() >> rng.next(upTo: 63)
            default: return rng.next()
            }
        }

        mutating func u32() -> UInt32 {
            pick([0, 1, .max, .max - 1, Wire.attemptMax, Wire.attemptMax + 1, UInt32(truncatingIfNeeded: rng.next()), 2, 3])
        }

        mutating func id() -> PeerID { rng.chance(0.8) ? pick(ids) : PeerID(pick([0, .max, 0x666, rng.next()])) }

        mutating func member() -> Member {
            let id = id()
            let own = ids.firstIndex(of: id).map { incarnations[$0] }
            let incarnation = own.flatMap { rng.chance(0.8) ? $0 : nil } ?? pick([0, 1, .max, rng.next()])
            return Member(id: id, incarnation: incarnation)
        }

        /// 0, 1, around the cap, or as many as fit a datagram (IDs repeat: the pool is small).
        mutating func count(cap: Int, entryBytes: Int) -> Int {
            pick([0, 1, 2, cap - 1, cap, cap + 1, min(255, 1100 / entryBytes)])
        }

        mutating func frame() -> Frame {
            switch rng.next(upTo: 11) {
            case 0:
                let pairs = (0..<count(cap: Wire.membersMax, entryBytes: 16)).map { _ in (id(), u64()) }
                return .heartbeat(status: pick([.joining, .member, .flushing, .blocked, .left]), viewID: u64(), viewKey: u64(), sentSeq: u64(), delivered: pairs)
            case 1:
                let items = (0..<max(1, count(cap: 8, entryBytes: 40))).map { _ in
                    DataItem(origin: member(), viewID: u64(), seq: u64(), payload: Array(repeating: 7, count: Int(rng.next(upTo: 4))))
                }
                return .data(Array(items.prefix(20)))
            case 2:
                let ranges = (0..<count(cap: Wire.nackRangesMax, entryBytes: 16)).map { _ -> ClosedRange<UInt64> in
                    let a = u64(), b = u64()
                    return min(a, b)...max(a, b)
                }
                return .nack(origin: member(), ranges: ranges)
            case 3:
                return .propose(attempt: u32(), baseID: u64(), baseKey: u64(), members: (0..<count(cap: Wire.membersMax, entryBytes: 16)).map { _ in member() })
            case 4:
                let pairs = (0..<count(cap: Wire.membersMax, entryBytes: 16)).map { _ in (id(), u64()) }
                return .ack(Ballot(attempt: u32(), coordinator: id()), viewID: u64(), viewKey: u64(), ownSeq: u64(), holdings: pairs)
            case 5:
                let entries = (0..<count(cap: Wire.cutEntriesMax, entryBytes: 25)).map { _ in
                    CutEntry(member: member(), cut: u64(), inBase: rng.chance(0.7), inNew: rng.chance(0.8))
                }
                return .cut(attempt: u32(), baseID: u64(), baseKey: u64(), newViewID: u64(), entries: entries)
            case 6: return .ready(Ballot(attempt: u32(), coordinator: id()))
            case 7: return .install(Ballot(attempt: u32(), coordinator: id()), newViewID: u64())
            case 8: return .leave(sentSeq: u64())
            case 9:
                let entries = (0..<count(cap: Wire.reportEntriesMax, entryBytes: 28)).map { _ in
                    ReportEntry(peer: id(), delivered: u64(), echoPacket: u64(), echoHoldMicroseconds: u32())
                }
                return .report(viewID: u64(), viewKey: u64(), sentSeq: u64(), entries: entries)
            case 10:
                return .challenge((0..<count(cap: Wire.challengeEntriesMax, entryBytes: 24)).map { _ in ChallengeEntry(target: member(), cookie: u64()) })
            default:
                return .response(challenger: member(), cookie: u64())
            }
        }

        /// A frame as a datagram from a drawn sender (a member identity with the packet number the
        /// target expects next, or a stranger), sometimes with its body cut short or extended;
        /// the trailer is always valid for `auth`.
        mutating func datagram(to target: SimNode, auth: Authenticator) -> [UInt8] {
            let sender = member()
            let packet = target.core?.peers[sender.id].map { $0.incarnation == sender.incarnation ? $0.packetHighest &+ 1 : 1 } ?? 1
            let frame = frame()
            let envelope = Envelope(
                version: Wire.version, kind: frame.kind.rawValue, room: FNV1a64.hash(Array("eggs".utf8)),
                sender: sender.id, incarnation: sender.incarnation, packetNumber: pick([packet, packet, 0, .max, u64()]))
            var w = BigEndianByteWriter()
            Wire.encodeHeader(kind: frame.kind, envelope: envelope, auth: auth, into: &w)
            Wire.encodeBody(frame, into: &w)
            var bytes = w.bytes
            switch rng.next(upTo: 9) {
            case 0: bytes.removeLast(Int(rng.next(upTo: UInt64(bytes.count - Wire.headerBytes))))
            case 1: bytes += (0..<rng.next(upTo: 24)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            case 2: if bytes.count > Wire.headerBytes { bytes[Wire.headerBytes + Int(rng.next(upTo: UInt64(bytes.count - Wire.headerBytes - 1)))] = UInt8(truncatingIfNeeded: rng.next()) }
            default: break
            }
            auth.appendTrailer(to: &bytes)
            return bytes
        }
    }

    /// A busy, lossless 3-peer group (optionally with a passphrase).
    static func busyGroup(seed: UInt64, passphrase: String?) -> SimNetwork {
        var options = SimOptions(seed: seed, peerCount: 3)
        options.passphrase = passphrase
        let network = SimNetwork(options: options, app: traffic(total: 300, startWhenMembers: 3, intervalNanoseconds: 10 * ms))
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds), "seed \(seed)")
        return network
    }

    static func generator(_ network: SimNetwork, seed: UInt64) -> Generator {
        let cores = network.nodes.compactMap(\.core)
        var near: [UInt64] = [0]
        for core in cores {
            near.append(core.view.id)
            near.append(core.view.key)
            near.append(core.lastSentSeq)
            for node in network.nodes { near.append(core.deliveredUpTo(node.peerID) ?? 0) }
        }
        return Generator(rng: SimRandom(seed: seed), ids: network.nodes.map(\.peerID), incarnations: network.nodes.map(\.incarnation), near: near)
    }

    @Test("fuzz: every datagram kind with boundary values in every field, valid CRC, into live cores: no trap; the group converges afterwards", arguments: [UInt64(0xF1), 0xF2, 0xF3])
    func structuredWithoutPassphrase(seed: UInt64) {
        let network = Self.busyGroup(seed: seed, passphrase: nil)
        var gen = Self.generator(network, seed: seed)
        let auth = Authenticator(passphrase: nil)
        var rejected: UInt64 = 0
        for round in 0..<4000 {
            let target = network.nodes[round % 3]
            network.inject(gen.datagram(to: target, auth: auth), to: target.peerID)
            if round % 10 == 0 { network.run(forNanoseconds: 2 * ms) }
        }
        for node in network.nodes { rejected += node.core!.stats.droppedMalformed + node.core!.stats.framesRejected }
        #expect(rejected > 100, "seed \(seed): the generator reaches the validation")
        #expect(network.runUntilConverged(timeoutNanoseconds: 60 * seconds), "seed \(seed): converges once the forgery stops")
    }

    @Test("fuzz: with a passphrase, forged (no or wrong key) and replayed datagrams of every kind change no delivery and no view", arguments: [UInt64(0xA1), 0xA2])
    func structuredWithPassphrase(seed: UInt64) {
        let network = Self.busyGroup(seed: seed, passphrase: "fuzz")
        var captured: [[UInt8]] = []
        network.filter = { packet in
            if packet.from != packet.to { captured.append(packet.bytes) }
            return true
        }
        network.run(forNanoseconds: 500 * ms)
        network.filter = nil  // every captured datagram has arrived: injecting it is a replay
        network.run(forNanoseconds: 100 * ms)
        let views = network.nodes.map(\.views)
        var gen = Self.generator(network, seed: seed)
        let keys = [Authenticator(passphrase: nil), Authenticator(passphrase: "wrong"), Authenticator(passphrase: "fuzz ")]
        for round in 0..<1500 {
            let index = round % 3
            let target = network.nodes[index]
            let before = target.core!.stats.datagramsAccepted
            if round % 2 == 0 {
                network.inject(gen.datagram(to: target, auth: gen.pick(keys)), to: target.peerID)
            } else {
                network.inject(gen.pick(captured), to: target.peerID)
            }
            #expect(target.core!.stats.datagramsAccepted == before, "seed \(seed) round \(round): nothing forged or replayed is accepted")
            if round % 10 == 0 { network.run(forNanoseconds: 2 * ms) }
        }
        #expect(network.runUntilConverged(timeoutNanoseconds: 20 * seconds, extra: { net in
            net.nodes.allSatisfy { ($0.app as? TrafficApp)?.sent == 300 }
        }), "seed \(seed)")
        #expect(network.nodes.map(\.views) == views, "seed \(seed): no view change")
        for receiver in network.nodes {
            for sender in network.nodes {
                #expect(receiver.deliveredSeqs(from: sender.peerID) == Array(1...300), "seed \(seed)")
            }
        }
        #expect(SimChecker.violations(network) == [], "seed \(seed)")
    }
}
