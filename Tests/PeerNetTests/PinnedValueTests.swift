import EggSim
import Testing
@testable import PeerNet

/// Bytes other peers depend on, pinned so that moving the primitives behind them (FNV-1a, the
/// big-endian writer) cannot change a bit.
@Suite("PeerNet pinned values")
struct PeerNetPinnedValueTests {
    @Test("the room hash is FNV-1a 64 of the room name")
    func roomHash() {
        #expect(ReliableMulticast(config: PeerNetConfig(room: "eggs", peerID: PeerID(1)), now: .zero).roomHash == 0x5391_9560_3A6B_ED0F)
        #expect(ReliableMulticast(config: PeerNetConfig(room: "", peerID: PeerID(1)), now: .zero).roomHash == 0xCBF2_9CE4_8422_2325)
    }

    /// Pinned on main 9ffdde1, re-pinned for version 4 (the CRC-32C trailer); a deliberate change
    /// of the wire format changes it (re-pin then).
    @Test("a heartbeat, a data and a leave datagram are pinned byte for byte (header big-endian, CRC-32C trailer)")
    func datagramsPinned() {
        let envelope = Envelope(version: 4, kind: 0, room: 0x5391_9560_3A6B_ED0F, sender: PeerID(0xABCD), incarnation: 7, packetNumber: 0x0102_0304)
        let crc = Authenticator(passphrase: nil)
        let member = Member(id: PeerID(0xABCD), incarnation: 7)
        let frames: [Frame] = [
            .heartbeat(status: .member, viewID: 3, viewKey: 0xFEED, sentSeq: 9, delivered: [(PeerID(0xABCD), UInt64(9)), (PeerID(2), UInt64(1))]),
            .data([DataItem(origin: member, viewID: 3, seq: 10, payload: [1, 2, 3])]),
            .leave(sentSeq: 10),
        ]
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
        let encoded = frames.map { frame -> String in
            var env = envelope
            env.kind = frame.kind.rawValue
            return hex(Wire.encode(frame, envelope: env, auth: crc))
        }
        #expect(encoded == [
            "454700040001539195603a6bed0f000000000000abcd00000000000000070000000001020304010000000000000003000000000000feed"
                + "000000000000000902000000000000abcd00000000000000090000000000000002000000000000000146219e69",
            "454700040002539195603a6bed0f000000000000abcd0000000000000007000000000102030401000000000000abcd0000000000000007"
                + "0000000000000003000000000000000a00030102032eaceac3",
            "454700040009539195603a6bed0f000000000000abcd00000000000000070000000001020304000000000000000a4d8e35fa",
        ])
    }
}

@Suite("PeerNet time")
struct NetTimeTests {
    @Test("a time prints as milliseconds with three decimals: 1.005 ms is not 1.5 ms")
    func description() {
        #expect(NetTime(nanoseconds: 1_005_000).description == "1.005ms")
        #expect(NetTime(nanoseconds: 1_050_000).description == "1.050ms")
        #expect(NetTime(nanoseconds: 1_500_000).description == "1.500ms")
        #expect(NetTime(nanoseconds: 999).description == "0.000ms")
        #expect(NetTime(nanoseconds: 12_345_678_901).description == "12345.678ms")
    }
}

@Suite("EggSim pinned values")
struct SimPinnedValueTests {
    /// FNV-1a 64 over the numbers of every record (time, peer, incarnation, event) of every node.
    static func digest(_ network: SimNetwork) -> (records: Int, hash: UInt64) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        func feed(_ word: UInt64) { for i in 0..<8 { hash = (hash ^ (word >> (8 * UInt64(i)) & 0xFF)) &* 0x0000_0100_0000_01B3 } }
        var records = 0
        for node in network.nodes {
            for record in node.log {
                records += 1
                feed(record.time.nanoseconds); feed(record.peer.raw); feed(record.incarnation)
                switch record.event {
                case .delivered(let d): feed(1); feed(d.from.raw); feed(d.seq); for b in d.payload { feed(UInt64(b)) }
                case .viewChanged(let v): feed(2); feed(v.id); for m in v.members { feed(m.raw) }
                case .incompatible(let peer, let version): feed(3); feed(peer.raw); feed(UInt64(version))
                case .lagging(let peer): feed(4); feed(peer.raw)
                case .incarnationEnded(let peer): feed(5); feed(peer.raw)
                case .viewAbandoned(let v): feed(6); feed(v.id)
                case .resumedAfterPause(let away): feed(7); feed(away)
                case .idCollision(let peer): feed(8); feed(peer.raw)
                case .receiversWaiting: feed(9)
                }
            }
        }
        feed(network.packetsDelivered)
        return (records, hash)
    }

    /// Pinned on main 9ffdde1 and unchanged by the move to EggPrimitives and swift-collections'
    /// `Heap`. A deliberate change of PeerNet's behaviour (timers, view changes) changes it too:
    /// then re-pin the printed values, after the swarms show the change is sound. Re-pinned for
    /// issue 14's redundancy (the swarm's loss turns echoes and copies on: the same 202 records,
    /// other delivery times and packet counts); the swarms passed with it.
    @Test("a seed of the fault swarm is pinned: the same events at the same virtual times, the same packets delivered")
    func faultSwarmPinned() {
        let options = SimOptions.swarm(seed: 4242, peerCountMax: 5, withFaults: true)
        let network = SimNetwork(options: options, app: traffic(total: 50, startWhenMembers: 1, intervalNanoseconds: 30 * ms))
        network.faultsEnabled = true
        network.run(until: NetTime(nanoseconds: 6 * seconds))
        let (records, hash) = Self.digest(network)
        #expect(records == 202)
        #expect(hash == 9_833_995_729_045_578_916)
    }
}
