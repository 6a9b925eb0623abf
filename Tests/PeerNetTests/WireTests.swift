import EggPrimitives
import EggSim
@testable import PeerNet
import Testing

@Suite("PeerNet wire")
struct WireTests {
    static let room = FNV1a64.hash(Array("eggs".utf8))
    static let crc = Authenticator(passphrase: nil)

    static func envelope(_ kind: FrameKind, version: UInt16 = Wire.version) -> Envelope {
        Envelope(version: version, kind: kind.rawValue, room: room, sender: PeerID(0xABCD), incarnation: 7, packetNumber: 99)
    }

    static let samples: [Frame] = [
        .heartbeat(status: .member, viewID: 3, viewKey: 0xDEAD, sentSeq: 12, delivered: [(PeerID(1), UInt64(5)), (PeerID(0xABCD), UInt64(12))]),
        .data([
            DataItem(origin: Member(id: PeerID(1), incarnation: 2), viewID: 3, seq: 4, payload: [1, 2, 3]),
            DataItem(origin: Member(id: PeerID(9), incarnation: 1), viewID: 3, seq: 1, payload: []),
        ]),
        .nack(origin: Member(id: PeerID(1), incarnation: 2), ranges: [1...3, 7...7]),
        .propose(attempt: 2, baseID: 3, baseKey: 44, members: [Member(id: PeerID(1), incarnation: 2), Member(id: PeerID(5), incarnation: 1)]),
        .ack(Ballot(attempt: 2, coordinator: PeerID(1)), viewID: 3, viewKey: 44, ownSeq: 8, holdings: [(PeerID(1), UInt64(7))]),
        .cut(attempt: 2, baseID: 3, baseKey: 44, newViewID: 4, entries: [
            CutEntry(member: Member(id: PeerID(1), incarnation: 2), cut: 9, inBase: true, inNew: true),
            CutEntry(member: Member(id: PeerID(2), incarnation: 1), cut: 3, inBase: true, inNew: false),
        ]),
        .ready(Ballot(attempt: 2, coordinator: PeerID(1))),
        .install(Ballot(attempt: 2, coordinator: PeerID(1)), newViewID: 4),
        .leave(sentSeq: 77),
        .listen(viewID: 3, viewKey: 44, server: PeerID(5), wantsSync: true),
        .listen(viewID: 0, viewKey: 0, server: PeerID(0), wantsSync: false),
        .sync(viewID: 3, viewKey: 44, snapshotSeq: 12, entries: [
            SyncEntry(member: Member(id: PeerID(1), incarnation: 2), delivered: 9),
            SyncEntry(member: Member(id: PeerID(5), incarnation: 1), delivered: 11),
        ]),
    ]

    @Test("a peer ID is 1 to 16 hex digits, no sign; equal IDs hash alike in tables")
    func peerIDText() {
        #expect(PeerID(hex: "a00")?.raw == 0xa00)
        #expect(PeerID(hex: "FFFFFFFFFFFFFFFF")?.raw == .max)
        // `UInt64(_:radix:)` takes a sign: these were peer IDs 5, 0 and 0.
        for bad in ["+5", "-0", "+0000000000000000", "", "12345678901234567", "g", " 1", "٣"] {
            #expect(PeerID(hex: bad) == nil, "\(bad)")
        }
        // Dictionaries and sets find every ID by its own hash (the one-shot hash of the raw value).
        let ids = (0..<2_000).map { PeerID(UInt64($0) &* 0x9E37_79B9_7F4A_7C15) }
        let table = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
        #expect(ids.enumerated().allSatisfy { table[$1] == $0 })
        #expect(Set(ids + ids).count == ids.count)
        #expect(ids.allSatisfy { $0.hashValue == PeerID($0.raw).hashValue })
    }

    @Test("wire: every frame kind survives an encode/decode round trip, with CRC and with HMAC")
    func roundTrip() {
        for auth in [Self.crc, Authenticator(passphrase: "secret")] {
            for frame in Self.samples {
                let env = Self.envelope(frame.kind)
                let bytes = Wire.encode(frame, envelope: env, auth: auth)
                #expect(bytes.count <= 1200)
                guard case let .frame(decodedEnvelope, decoded) = Wire.decode(bytes, room: Self.room, auth: auth, datagramBytesMax: 1200) else {
                    Issue.record("\(frame.kind) did not decode")
                    continue
                }
                #expect(decodedEnvelope == env)
                #expect(decoded == frame)
            }
        }
    }

    @Test("wire: the header starts with magic EG and version 4, big-endian")
    func headerLayout() {
        let bytes = Wire.encode(.leave(sentSeq: 1), envelope: Self.envelope(.leave), auth: Self.crc)
        #expect(Array(bytes.prefix(4)) == [0x45, 0x47, 0x00, 0x04])
        #expect(bytes[5] == FrameKind.leave.rawValue)
        #expect(bytes.count == Wire.headerBytes + 8 + Wire.crcBytes)
    }

    @Test("wire: every prefix of a datagram is rejected without a crash")
    func truncations() {
        let bytes = Wire.encode(Self.samples[1], envelope: Self.envelope(.data), auth: Self.crc)
        for n in 0..<bytes.count {
            guard case .drop = Wire.decode(Array(bytes.prefix(n)), room: Self.room, auth: Self.crc, datagramBytesMax: 1200) else {
                Issue.record("prefix \(n) accepted")
                continue
            }
        }
    }

    @Test("wire: a datagram of another room or beyond 1200 bytes is dropped")
    func roomAndSize() {
        let bytes = Wire.encode(.leave(sentSeq: 1), envelope: Self.envelope(.leave), auth: Self.crc)
        guard case .drop(.foreignRoom) = Wire.decode(bytes, room: Self.room ^ 1, auth: Self.crc, datagramBytesMax: 1200) else {
            Issue.record("foreign room accepted")
            return
        }
        guard case .drop(.oversized) = Wire.decode(bytes + [UInt8](repeating: 0, count: 1200), room: Self.room, auth: Self.crc, datagramBytesMax: 1200) else {
            Issue.record("oversized accepted")
            return
        }
    }

    @Test("wire: CRC-32C (the processor's instruction and the table) and CRC-32 match their standard check values")
    func crcCheckValue() {
        let check = Array("123456789".utf8)
        #expect(CRC32C.checksum(check) == 0xE306_9283)
        #expect(CRC32C.portableChecksum(check[...]) == 0xE306_9283)
        #expect(CRC32.checksum(check) == 0xCBF4_3926)
    }

    @Test("wire: CRC-32C (instruction and table) and CRC-32 by 8-byte slices equal their bitwise definitions at every length and offset")
    func crcSlicesMatchBitwise() {
        func bitwise(_ bytes: ArraySlice<UInt8>, polynomial: UInt32) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 != 0 ? polynomial ^ (crc >> 1) : crc >> 1 }
            }
            return crc ^ 0xFFFF_FFFF
        }
        var rng = SplitMix64(seed: 42)
        let bytes = (0..<300).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        for start in 0..<9 {
            for end in start...bytes.count where end < start + 40 || end % 37 == 0 || end == bytes.count {
                let slice = bytes[start..<end]
                #expect(CRC32C.checksum(slice) == bitwise(slice, polynomial: 0x82F6_3B78))
                #expect(CRC32C.portableChecksum(slice) == bitwise(slice, polynomial: 0x82F6_3B78))
                #expect(CRC32.checksum(slice) == bitwise(slice, polynomial: 0xEDB8_8320))
            }
        }
    }

    @Test("wire: a version-3 peer (CRC-32 trailer) is reported incompatible; a version-3 datagram whose CRC-32 fails counts as a bad checksum")
    func previousVersionIsReported() {
        let core = ReliableMulticast(config: PeerNetConfig(peerID: PeerID(1)), now: .zero)
        func versionThree(packet: UInt64, damaged: Bool) -> [UInt8] {
            var env = Self.envelope(.heartbeat, version: 3)
            env.packetNumber = packet
            let hb = Frame.heartbeat(status: .joining, viewID: 0, viewKey: 0, sentSeq: 0, delivered: [])
            var bytes = Array(Wire.encode(hb, envelope: env, auth: Self.crc).dropLast(Wire.crcBytes))
            let crc = CRC32.checksum(bytes) ^ (damaged ? 1 : 0)
            bytes += [UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)]
            return bytes
        }
        core.handleDatagram(versionThree(packet: 1, damaged: true), now: .zero)
        #expect(core.stats.droppedBadChecksum == 1)
        #expect(core.stats.droppedWrongVersion == 0)
        core.handleDatagram(versionThree(packet: 2, damaged: false), now: .zero)
        core.handleDatagram(versionThree(packet: 3, damaged: false), now: .zero)
        var events: [PeerNetEvent] = []
        while let e = core.pollEvent() { events.append(e) }
        #expect(events == [.incompatible(peer: PeerID(0xABCD), version: 3)])
        #expect(core.stats.droppedWrongVersion == 2)
        #expect(core.stats.datagramsAccepted == 0)
    }

    @Test("wire: a peer of another protocol version is reported incompatible once and never joined")
    func versionMismatch() {
        let core = ReliableMulticast(config: PeerNetConfig(peerID: PeerID(1)), now: .zero)
        for packet in UInt64(1)...3 {
            var env = Self.envelope(.heartbeat, version: 5)
            env.packetNumber = packet
            let hb = Frame.heartbeat(status: .joining, viewID: 0, viewKey: 0, sentSeq: 0, delivered: [])
            core.handleDatagram(Wire.encode(hb, envelope: env, auth: Self.crc), now: .zero)
        }
        var events: [PeerNetEvent] = []
        while let e = core.pollEvent() { events.append(e) }
        #expect(events == [.incompatible(peer: PeerID(0xABCD), version: 5)])
        #expect(core.stats.droppedWrongVersion == 3)
        #expect(core.stats.datagramsAccepted == 0)
        core.handleTimeout(now: .milliseconds(2000))
        #expect(core.status == .joining || core.view.members == [PeerID(1)])
        #expect(!core.view.members.contains(PeerID(0xABCD)))
    }
}

@Suite("PeerNet hostile input")
struct FuzzTests {
    /// A formed, lossless 3-peer group with traffic; returns it and the datagrams peer 1 received.
    static func capture(passphrase: String? = nil) -> (SimNetwork, [[UInt8]]) {
        var options = SimOptions(seed: 11, peerCount: 3)
        options.passphrase = passphrase
        let network = SimNetwork(options: options, app: traffic(total: 30, startWhenMembers: 3, intervalNanoseconds: 10 * ms))
        var captured: [[UInt8]] = []
        network.filter = { packet in
            if packet.to == PeerID(1), packet.from != PeerID(1) { captured.append(packet.bytes) }
            return true
        }
        // `runUntilConverged` clears the filter: capture the traffic before it (whether the
        // traffic outlasted convergence depended on seed timing). Formation is not captured.
        let filter = network.filter
        network.filter = nil
        while network.nodes.contains(where: { $0.core?.status != .member }), network.now < NetTime(nanoseconds: 5 * seconds) {
            network.run(forNanoseconds: 1 * ms)
        }
        network.filter = filter
        network.run(forNanoseconds: 1 * seconds)
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
        network.filter = { packet in
            if packet.to == PeerID(1), packet.from != PeerID(1) { captured.append(packet.bytes) }
            return true
        }
        network.run(forNanoseconds: 2 * seconds)
        return (network, captured)
    }

    @Test("fuzz: thousands of random, bit-flipped, truncated, extended, spliced and replayed datagrams: no crash, no delivery, every one counted")
    func hostileDatagrams() {
        let (network, captured) = Self.capture()
        #expect(captured.count > 50)
        let node = network.node(PeerID(1))
        let core = node.core!
        let before = core.stats
        let logBefore = node.log.count
        var rng = SimRandom(seed: 0xF022)
        let count = 6000
        for i in 0..<count {
            var d = captured[Int(rng.next(upTo: UInt64(captured.count - 1)))]
            switch i % 6 {
            case 0:
                for _ in 0...rng.next(upTo: 2) {
                    let bit = Int(rng.next(upTo: UInt64(d.count * 8 - 1)))
                    d[bit / 8] ^= 1 << UInt8(bit % 8)
                }
            case 1: d = Array(d.prefix(Int(rng.next(upTo: UInt64(d.count - 1)))))
            case 2: d += (0...rng.next(upTo: 40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            case 3: break // exact replay of a datagram already received
            case 4: d = (0..<rng.next(upTo: 1300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            default:
                let other = captured[Int(rng.next(upTo: UInt64(captured.count - 1)))]
                let cut = Int(rng.next(upTo: UInt64(min(d.count, other.count) - 1)))
                d = Array(d.prefix(cut)) + Array(other.dropFirst(cut))
                if d == other { d[d.count - 1] ^= 0x5A }
            }
            network.inject(d, to: PeerID(1))
        }
        let after = core.stats
        #expect(after.datagramsReceived - before.datagramsReceived == UInt64(count))
        #expect(after.datagramsAccepted == before.datagramsAccepted)
        #expect(after.droppedInvalid - before.droppedInvalid == UInt64(count))
        #expect(after.droppedReplayed - before.droppedReplayed >= UInt64(count / 6))
        #expect(after.messagesDelivered == before.messagesDelivered)
        #expect(node.log.count == logBefore, "no event at all from hostile input")
        // The group still works afterwards.
        #expect(network.runUntilConverged(timeoutNanoseconds: 10 * seconds))
    }

    @Test("incarnation: a sender is heard only once it answered a challenge; a proven new incarnation (any number) retires the old one once it is silent")
    func staleIncarnation() {
        let core = ReliableMulticast(config: PeerNetConfig(peerID: PeerID(1)), now: .zero)
        func peer(_ incarnation: UInt64) -> ReliableMulticast {
            let peer = ReliableMulticast(config: PeerNetConfig(peerID: PeerID(2), incarnation: incarnation), now: .zero)
            peer.handleTimeout(now: .zero)
            return peer
        }
        /// Hands everything each side sends to the other until both are quiet.
        var now = NetTime.zero
        func exchange(_ a: ReliableMulticast, _ b: ReliableMulticast) {
            for _ in 0..<10 {
                now = now.adding(milliseconds: 10)
                a.handleTimeout(now: now)
                b.handleTimeout(now: now)
                while let d = a.pollTransmit() { b.handleDatagram(d, now: now) }
                while let d = b.pollTransmit() { a.handleDatagram(d, now: now) }
            }
        }
        let old = peer(5)
        let oldHeartbeat = old.pollTransmit()!
        core.handleDatagram(oldHeartbeat, now: now)
        #expect(core.stats.droppedUnproven == 1, "not proven yet")
        #expect(core.peers[PeerID(2)] == nil)
        exchange(core, old)
        #expect(core.peers[PeerID(2)]?.incarnation == 5)
        // Restarted with a smaller number (the clock stepped back): refused while the old one
        // was heard within the suspect timeout (an ID collision), proven all the same after it.
        let new = peer(3)
        exchange(core, new)
        #expect(core.peers[PeerID(2)]?.incarnation == 5, "a live incarnation is not replaced")
        #expect(core.stats.collisionsRefused >= 1)
        now = now.adding(nanoseconds: PeerNetConfig(peerID: PeerID(1)).suspectTimeoutNanoseconds / 3)
        exchange(core, new)
        #expect(core.peers[PeerID(2)]?.incarnation == 3)
        let before = core.stats.droppedStaleIncarnation
        core.handleDatagram(oldHeartbeat, now: now)
        #expect(core.stats.droppedStaleIncarnation == before + 1, "the old incarnation is stale for good")
        let newHeartbeat = Wire.encode(
            .heartbeat(status: .joining, viewID: 0, viewKey: 0, sentSeq: 0, delivered: []),
            envelope: Envelope(version: Wire.version, kind: FrameKind.heartbeat.rawValue, room: Self.roomHash,
                               sender: PeerID(2), incarnation: 3, packetNumber: 1000),
            auth: Authenticator(passphrase: nil))
        core.handleDatagram(newHeartbeat, now: now)
        let replayed = core.stats.droppedReplayed
        core.handleDatagram(newHeartbeat, now: now)
        #expect(core.stats.droppedReplayed == replayed + 1, "the same packet number of the same incarnation is a replay")
    }

    static let roomHash = FNV1a64.hash(Array("eggs".utf8))

    @Test("passphrase: datagrams without an HMAC, or with a wrong one, are dropped and counted; the group works with it")
    func passphrase() {
        let (network, captured) = Self.capture(passphrase: "open sesame")
        #expect(network.converged)
        let node = network.node(PeerID(1))
        #expect(node.deliveredSeqs(from: PeerID(2)) == Array(1...30))
        let core = node.core!
        let before = core.stats.droppedUnauthenticated
        var forged: [[UInt8]] = []
        for pass in [nil, "wrong"] as [String?] {
            let intruder = ReliableMulticast(config: PeerNetConfig(peerID: PeerID(2), incarnation: 99, passphrase: pass), now: network.now)
            intruder.handleTimeout(now: network.now)
            while let d = intruder.pollTransmit() { forged.append(d) }
        }
        var tampered = captured.last!
        tampered[Wire.headerBytes] ^= 1
        forged.append(tampered)
        for d in forged { network.inject(d, to: PeerID(1)) }
        #expect(core.stats.droppedUnauthenticated - before == UInt64(forged.count))
        #expect(core.view.members == [1, 2, 3].map(PeerID.init))
    }
}
