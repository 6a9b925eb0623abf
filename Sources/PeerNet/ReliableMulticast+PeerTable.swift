/// The peer table of `ReliableMulticast`: what is known of every proven peer, the admission
/// of each datagram (identity, incarnation, handshake, replay window) and liveness.
extension ReliableMulticast {
    struct PeerInfo {
        var incarnation: UInt64
        var lastHeard: NetTime
        /// When this incarnation was proven: joiners are proposed oldest first.
        var provenAt = NetTime.zero
        /// Times this incarnation was dropped from a view change as a joiner that did not
        /// answer (`joinerAnswerTimeoutNanoseconds`): it is proposed after every joiner with
        /// fewer, and left out longer each time.
        var joinStrikes = 0
        /// It answered a view change that was dropped because other joiners did not: proposed
        /// again at once, while the others are held back.
        var answeredJoin = false
        var viewID: UInt64 = 0
        var viewKey: UInt64 = 0
        /// The status its last heartbeat announced.
        var status = WireStatus.joining
        var left = false
        var packetHighest: UInt64 = 0
        var packetBitmap: UInt64 = 0
        /// The first packet number heard from this peer (the loss estimate judges none before it).
        var packetFirst: UInt64 = 0
        /// Since when this member of our view reports an older view than ours.
        var staleViewSince: NetTime?
        /// The last heartbeat or report heard from this peer (echoed in our reports).
        var echoPacket: UInt64 = 0
        var echoHeardAt = NetTime.zero
        /// The highest of our packets this peer echoed that gave an RTT sample.
        var echoSampled: UInt64 = 0
        var rttSmoothed: UInt64?
        /// Mean deviation of the RTT samples (gain 1/4).
        var rttVariation: UInt64 = 0
        var rttMin: UInt64?
        var rttLatest: UInt64?
        /// Packet numbers of this peer we expected (the highest advanced over them) and received,
        /// both halved when `packetsExpected` reaches `lossWindowPackets`: a sliding loss estimate.
        var packetsExpected: UInt64 = 0
        var packetsReceived: UInt64 = 0

        static let lossWindowPackets: UInt64 = 512

        /// Sliding-window replay check (64 packets behind the highest); counts for the loss estimate.
        mutating func acceptPacket(_ pn: UInt64) -> Bool {
            if pn > packetHighest {
                if packetHighest == 0 { packetFirst = pn }
                let shift = pn - packetHighest
                packetBitmap = shift >= 64 ? 0 : packetBitmap << shift
                if shift <= 64, packetHighest > 0 { packetBitmap |= 1 << (shift - 1) }
                // The first packet heard says nothing about the ones before it.
                packetsExpected += packetHighest == 0 ? 1 : min(shift, Self.lossWindowPackets)
                packetHighest = pn
                countReceived()
                return true
            }
            let diff = packetHighest - pn
            guard diff > 0, diff <= 64 else { return false }
            let bit: UInt64 = 1 << (diff - 1)
            guard packetBitmap & bit == 0 else { return false }
            packetBitmap |= bit
            countReceived()
            return true
        }

        mutating func countReceived() {
            packetsReceived = min(packetsReceived + 1, packetsExpected)
            if packetsExpected >= Self.lossWindowPackets {
                packetsExpected /= 2
                packetsReceived /= 2
            }
        }

        /// One round-trip sample: smoothed like RFC 6298 (gains 1/8 and 1/4), plus the minimum and latest.
        mutating func addRoundTrip(_ sample: UInt64) {
            let sample = min(sample, ReliableMulticast.rttSampleMaxNanoseconds)
            rttLatest = sample
            rttMin = min(rttMin ?? sample, sample)
            if let srtt = rttSmoothed {
                let deviation = srtt > sample ? srtt - sample : sample - srtt
                rttVariation = (rttVariation * 3 + deviation) / 4
                rttSmoothed = (srtt * 7 + sample) / 8
            } else {
                rttVariation = sample / 2
                rttSmoothed = sample
            }
        }
    }

    // MARK: - Admission of a datagram

    func countDrop(_ reason: DropReason) {
        switch reason {
        case .truncated: stats.droppedTruncated += 1
        case .oversized: stats.droppedOversized += 1
        case .malformed: stats.droppedMalformed += 1
        case .badChecksum: stats.droppedBadChecksum += 1
        case .unauthenticated: stats.droppedUnauthenticated += 1
        case .foreignRoom: stats.droppedForeignRoom += 1
        case let .wrongVersion(sender, version):
            stats.droppedWrongVersion += 1
            if sender != me.id, peerTable.reportIncompatible(sender) {
                events.append(.incompatible(peer: sender, version: version))
            }
        }
    }

    enum Admission: Equatable {
        /// Counted in a `dropped…` counter (or as loopback).
        case dropped
        /// A proven peer (or one that just proved itself with this datagram): act on it.
        case known
        /// Not proven: only a challenge it carries is answered.
        case stranger
    }

    /// Identity, incarnation, handshake and replay checks; updates the peer table.
    func admit(_ envelope: Envelope, frame: Frame?, now: NetTime) -> Admission {
        if envelope.sender == me.id {
            if envelope.incarnation == me.incarnation {
                stats.datagramsLoopback += 1
            } else {
                stats.droppedStaleIncarnation += 1
                if handshake.heardOwnID(incarnation: envelope.incarnation, packet: envelope.packetNumber, now: now),
                   handshake.reportCollision(Member(id: me.id, incarnation: envelope.incarnation)) {
                    stats.collisionsHeard += 1
                    events.append(.idCollision(peer: me.id))
                }
            }
            return .dropped
        }
        let sender = Member(id: envelope.sender, incarnation: envelope.incarnation)
        guard var info = peers[envelope.sender], info.incarnation == envelope.incarnation else {
            return admitStranger(sender, envelope: envelope, frame: frame, now: now)
        }
        let highestBefore = info.packetHighest, bitmapBefore = info.packetBitmap
        guard info.acceptPacket(envelope.packetNumber) else {
            stats.droppedReplayed += 1
            if now.nanoseconds(since: info.lastHeard) > config.suspectTimeoutNanoseconds {
                // Everything it sent for a suspect timeout looked old (e.g. a forged packet number
                // far ahead): forget it; it proves itself afresh, its window starting anew.
                peerTable[envelope.sender] = nil
                queueChallenge(sender, now: now)
            } else {
                peerTable[envelope.sender] = info
            }
            return .dropped
        }
        info.lastHeard = max(info.lastHeard, now)
        peerTable[envelope.sender] = info
        noteInboundPacket(envelope.packetNumber, highestBefore: highestBefore, bitmapBefore: bitmapBefore, firstHeard: info.packetFirst, now: now)
        return .known
    }

    /// A sender not in the peer table (or in another incarnation): admitted only by a valid
    /// response to our challenge; a challenge is answered; anything else gets it challenged.
    func admitStranger(_ sender: Member, envelope: Envelope, frame: Frame?, now: NetTime) -> Admission {
        if isRetired(sender) {
            stats.droppedStaleIncarnation += 1
            return .dropped
        }
        if case let .response(challenger, cookie) = frame, challenger == me, isValidCookie(cookie, for: sender, now: now) {
            guard promote(sender, packet: envelope.packetNumber, now: now) else {
                stats.droppedOverload += 1
                return .dropped
            }
            return .known
        }
        queueChallenge(sender, now: now)
        if case .challenge = frame { return .stranger }
        stats.droppedUnproven += 1
        return .dropped
    }

    func evictSilentPeers(now: NetTime) {
        peerTable.evictSilent(now: now, horizon: 4 * config.suspectTimeoutNanoseconds, keeping: members)
    }

    // MARK: - Heartbeats and membership

    func handleHeartbeat(
        from sender: Member, viewID: UInt64, viewKey: UInt64, sentSeq: UInt64, delivered: [(PeerID, UInt64)], now: NetTime
    ) {
        peerTable[sender.id]?.viewID = viewID
        peerTable[sender.id]?.viewKey = viewKey
        installIfProven(viewID: viewID, viewKey: viewKey, by: sender)
        guard hasView, members.contains(sender) else { return }
        if viewID == self.viewID, viewKey == self.viewKey {
            peerTable[sender.id]?.staleViewSince = nil
            stability.replace(from: sender.id, delivered: delivered)
            if let s = streams[sender.id] { streams[sender.id]!.highestKnown = max(s.highestKnown, sentSeq) }
        } else if !Self.dominates((viewID, viewKey), (self.viewID, self.viewKey)), peers[sender.id]?.staleViewSince == nil {
            peerTable[sender.id]?.staleViewSince = now
        }
    }

    /// Excludes `m` from view changes for two flush timeouts (then it gets another chance).
    func exclude(_ m: Member, now: NetTime) {
        guard m != me else { return }
        peerTable.exclude(m, until: now.adding(nanoseconds: 2 * config.flushTimeoutNanoseconds), now: now)
    }

    /// Strikes after which a silent joiner's exclusion stops growing (ten answer timeouts,
    /// doubled per strike: 1 s, 2 s, ... 64 s with the default timeout).
    static let joinStrikesMax = 7

    /// Joiner `m` did not answer a step of a view change in time: it is left out of view
    /// changes for ten answer timeouts, doubled at each repeat, and proposed after every
    /// joiner with fewer strikes.
    func dropJoiner(_ m: Member, now: NetTime) {
        guard m != me else { return }
        stats.joinersDropped += 1
        var strikes = 1
        if var info = peers[m.id], info.incarnation == m.incarnation {
            info.joinStrikes = min(info.joinStrikes + 1, Self.joinStrikesMax)
            info.answeredJoin = false
            strikes = info.joinStrikes
            peerTable[m.id] = info
        }
        let exclusion = 10 * config.joinerAnswerTimeoutNanoseconds << UInt64(strikes - 1)
        peerTable.exclude(m, until: now.adding(nanoseconds: exclusion), now: now)
    }

    /// Proven fresh peers as joiners are proposed: fewest strikes first, then the longest
    /// proven; while joiners are held back (a view change was just dropped because some did
    /// not answer), only those that answered it.
    func joinerOrder(_ candidates: [(key: PeerID, value: PeerInfo)], now: NetTime) -> [(key: PeerID, value: PeerInfo)] {
        let held = peerTable.joinersHeld(now: now)
        return candidates.filter { !held || $0.value.answeredJoin }.sorted {
            ($0.value.joinStrikes, $0.value.provenAt, $0.key) < ($1.value.joinStrikes, $1.value.provenAt, $1.key)
        }
    }

    func isExcluded(_ m: Member, now: NetTime) -> Bool { peerTable.isExcluded(m, now: now) }

    /// Whether `m` (a member of the installed view) still counts as alive.
    func isAlive(_ m: Member, now: NetTime) -> Bool {
        if m == me { return true }
        guard !isExcluded(m, now: now), let info = peers[m.id], info.incarnation == m.incarnation, !info.left else {
            return false
        }
        if let since = info.staleViewSince, now.nanoseconds(since: since) > config.flushTimeoutNanoseconds { return false }
        // It moved on to a view we are not in: it is no longer part of our group.
        if Self.dominates((info.viewID, info.viewKey), (viewID, viewKey)) { return false }
        return now.nanoseconds(since: info.lastHeard) <= config.suspectTimeoutNanoseconds
    }

    /// A member of the installed view that is heard and not in a view dominating ours.
    func isReachable(_ m: Member, now: NetTime) -> Bool {
        if m == me { return true }
        guard !isExcluded(m, now: now), let info = peers[m.id], info.incarnation == m.incarnation, isFresh(info, now: now) else {
            return false
        }
        return !Self.dominates((info.viewID, info.viewKey), (viewID, viewKey))
    }

    /// Heard recently and reporting a working (member or flushing) group.
    func isFreshPrimary(_ info: PeerInfo, now: NetTime) -> Bool {
        isFresh(info, now: now) && info.viewID != 0 && (info.status == .member || info.status == .flushing)
    }

    /// Heard recently, in this room, not leaving.
    func isFresh(_ info: PeerInfo, now: NetTime) -> Bool {
        !info.left && now.nanoseconds(since: info.lastHeard) <= config.suspectTimeoutNanoseconds
    }
}
