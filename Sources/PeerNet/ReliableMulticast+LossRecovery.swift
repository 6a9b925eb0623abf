/// Loss recovery of `ReliableMulticast`: gap detection, NACKs and repairs.
extension ReliableMulticast {
    // MARK: - NACK and repair

    /// Finds new gaps (only seqs not examined before: amortized O(1) per seq) and arms each
    /// stream's NACK timer a random delay after the first new gap; clears it once all gaps fill.
    func scheduleNacks(now: NetTime) {
        for m in members where m != me {  // sorted by ID: RNG draws in a fixed order
            guard let stream = streams[m.id] else { continue }
            let highestKnown = stream.highestKnown
            if stream.contiguous >= highestKnown {
                if !stream.gaps.isEmpty || timers[.nack(m.id)] != nil {
                    stream.gaps.removeAll()
                    timers[.nack(m.id)] = nil
                }
                continue
            }
            let delivered = stream.delivered
            let scannedUpTo = stream.scannedUpTo
            let scanEnd = min(highestKnown, delivered + 2 * UInt64(config.windowSizeMax))
            guard scanEnd > scannedUpTo else { continue }
            var due: NetTime?
            var seq = max(scannedUpTo, delivered) + 1
            while seq <= scanEnd {
                if stream.messages[seq] == nil {
                    if due == nil { due = now.adding(nanoseconds: rng.next(upTo: config.nackDelayMaxNanoseconds)) }
                    stream.gaps[seq] = due!
                }
                seq += 1
            }
            stream.scannedUpTo = scanEnd
            if let due { armEarliest(.nack(m.id), at: due) }
        }
    }

    /// How long to wait before NACKing a gap again: the configured timeout plus the origin's
    /// RFC 6298 retransmission timeout (smoothed RTT + 4 × its deviation, capped), so slow or
    /// jittery links are not flooded while a LAN recovers in about the configured timeout.
    func renackDelay(_ origin: PeerID) -> UInt64 {
        guard let info = peers[origin], let srtt = info.rttSmoothed else { return config.retransmitTimeoutNanoseconds }
        return config.retransmitTimeoutNanoseconds + min(srtt + 4 * info.rttVariation, Self.rttForTimeoutsMaxNanoseconds)
    }

    /// NACKs every gap that is due (in up to `nackDatagramsPerFireMax` datagrams), then re-arms.
    func fireNack(_ id: PeerID, now: NetTime) {
        guard let stream = streams[id] else {
            timers[.nack(id)] = nil
            return
        }
        let delivered = stream.delivered
        var dueSeqs: [UInt64] = []
        var stale: [UInt64] = []
        for (seq, at) in stream.gaps {
            if seq <= delivered || stream.messages[seq] != nil { stale.append(seq) } else if at <= now { dueSeqs.append(seq) }
        }
        for seq in stale { streams[id]!.gaps[seq] = nil }
        dueSeqs.sort()
        let again = now.adding(nanoseconds: renackDelay(id))
        var ranges: [ClosedRange<UInt64>] = []
        var datagrams = 0
        var index = 0
        while index < dueSeqs.count, datagrams < Self.nackDatagramsPerFireMax {
            var last = index
            while last + 1 < dueSeqs.count, dueSeqs[last + 1] == dueSeqs[last] + 1 { last += 1 }
            ranges.append(dueSeqs[index]...dueSeqs[last])
            for i in index...last { streams[id]!.gaps[dueSeqs[i]] = again }
            index = last + 1
            if ranges.count == Wire.nackRangesMax || index == dueSeqs.count {
                stats.nacksSent += 1
                emit(.nack(origin: stream.member, ranges: ranges))
                ranges.removeAll(keepingCapacity: true)
                datagrams += 1
            }
        }
        // Whatever did not fit goes out a little later (bounded work per firing).
        let later = now.adding(nanoseconds: max(1, config.nackDelayMaxNanoseconds))
        let next = streams[id]!.gaps.values.min().map { max($0, later) }
        timers[.nack(id)] = next
    }

    func handleNack(origin: Member, ranges: [ClosedRange<UInt64>], from sender: Member, now: NetTime) {
        guard let stream = streams[origin.id], stream.member == origin else { return }
        if origin == me, members.contains(sender) { noteOwnNack(now: now) }
        // Someone else asks for our gaps too: their NACK serves us; postpone ours.
        let postponed = now.adding(nanoseconds: renackDelay(origin.id))
        var budget = Wire.nackSpanMax
        for range in ranges {
            // Only seqs this peer could hold are looked at: a range's bounds are wire values.
            let first = max(range.lowerBound, stream.stableFloor + 1)
            let last = min(range.upperBound, stream.highestKnown)
            guard first <= last else { continue }
            for seq in first...last {
                guard budget > 0 else { break }
                if stream.messages[seq] != nil {
                    sendWindow.requestRepair(SeqKey(origin: origin.id, seq: seq))
                } else if origin != me, let due = stream.gaps[seq], due < postponed {
                    streams[origin.id]!.gaps[seq] = postponed
                }
                budget -= 1
            }
        }
        guard !sendWindow.repairPending.isEmpty else { return }
        let quarter = config.repairDelayMaxNanoseconds / 4
        // Others give the origin's repair time to arrive: plus the smoothed RTT to the origin.
        let originRTT = min(peers[origin.id]?.rttSmoothed ?? 0, Self.rttForTimeoutsMaxNanoseconds)
        let delay = origin == me ? rng.next(upTo: quarter) : quarter + originRTT + rng.next(upTo: config.repairDelayMaxNanoseconds)
        let at = now.adding(nanoseconds: delay)
        armEarliest(.repair, at: at)
    }

    func fireRepairs() {
        timers[.repair] = nil
        for key in sendWindow.takeRepairs() {
            guard sendWindow.outRepairs.count < SendWindow.repairPendingMax else { break }
            guard let item = streams[key.origin]?.messages[key.seq] ?? receiverService.retained[key] else { continue }
            sendWindow.outRepairs.append(item)
            stats.messagesRetransmitted += 1
            if receiverService.lastHeard != nil {
                receiverService.noteRepaired(key, now: lastNow, holdNanoseconds: config.retransmitTimeoutNanoseconds)
            }
        }
    }
}
