/// Stability of `ReliableMulticast`: reports of what each member delivered (with RTT echoes),
/// freeing messages every member delivered, and the lagging signal.
extension ReliableMulticast {
    // MARK: - Stability reports

    /// Sends a report at once when a stream advanced by a quarter of the window since the last
    /// one (so senders' windows free continuously under load). After own sends, schedules one
    /// `stabilityReportDelay` later: its sent seq lets receivers notice a lost *last* message
    /// without waiting for a heartbeat (a tail-loss probe). Otherwise heartbeats report.
    func considerReport(now: NetTime) {
        guard status == .member, members.count > 1 else { return }
        let step = UInt64(max(1, config.windowSizeMax / 4))
        for m in members {
            guard let stream = streams[m.id] else { continue }
            if stream.delivered >= stream.reportedDelivered + step { return emitReport(now: now) }
        }
        // Re-armed by every send: a steady sender's next message reveals gaps; the probe
        // fires only once the sender went quiet.
        if let stream = streams[me.id],
           stream.delivered > max(stream.reportedDelivered, sendWindow.probeArmedSeq) {
            sendWindow.probeArmedSeq = stream.delivered
            timers[.report] = now.adding(nanoseconds: config.stabilityReportDelayNanoseconds)
        }
    }

    /// Multicasts this peer's delivered vector, its sent seq and an echo per member.
    func emitReport(now: NetTime) {
        timers[.report] = nil
        guard hasView, status == .member || status == .flushing else { return }
        var entries: [ReportEntry] = []
        entries.reserveCapacity(members.count)
        for m in members {
            let delivered = streams[m.id]?.delivered ?? 0
            streams[m.id]?.reportedDelivered = delivered
            let info = m == me ? nil : peers[m.id]
            let hold = info.map { now.nanoseconds(since: $0.echoHeardAt) / 1000 } ?? 0
            entries.append(ReportEntry(
                peer: m.id, delivered: delivered, echoPacket: info?.echoPacket ?? 0,
                echoHoldMicroseconds: UInt32(min(hold, UInt64(UInt32.max)))))
        }
        stats.reportsSent += 1
        stats.heartbeatsSent += 1
        emit(.report(viewID: viewID, viewKey: viewKey, sentSeq: wireSeq, entries: entries))
        framing.rememberSent(now: now)
    }

    func handleReport(
        from sender: Member, viewID: UInt64, viewKey: UInt64, sentSeq: UInt64, entries: [ReportEntry], now: NetTime
    ) {
        if let mine = entries.first(where: { $0.peer == me.id }), mine.echoPacket != 0,
           mine.echoPacket > peers[sender.id]?.echoSampled ?? .max {
            if let sentAt = framing.sentAt(packet: mine.echoPacket) {
                let held = UInt64(mine.echoHoldMicroseconds) * 1000
                peerTable[sender.id]?.echoSampled = mine.echoPacket
                let elapsed = now.nanoseconds(since: sentAt)
                peerTable[sender.id]?.addRoundTrip(elapsed > held ? elapsed - held : 0)
            }
        }
        guard hasView, members.contains(sender), viewID == self.viewID, viewKey == self.viewKey else { return }
        stability.merge(from: sender.id, entries: entries)
        if let s = streams[sender.id] { s.highestKnown = max(s.highestKnown, sentSeq) }
    }

    // MARK: - Freeing stable messages

    func updateStability() {
        guard hasView else { return }
        for (id, stream) in streams {
            stream.free(upTo: stability.stable(of: id, delivered: stream.delivered, members: members, except: me))
        }
        let floor = streams[me.id]?.stableFloor ?? 0
        if lastSentSeq - floor < UInt64(config.windowSizeMax / 2) { stability.clearLagging() }
    }

    func reportLagging() {
        guard let floor = streams[me.id]?.stableFloor else { return }
        for m in members where m != me && stability.delivered(by: m.id, of: me.id) <= floor {
            guard stability.markLagging(m.id) else { continue }
            events.append(.lagging(peer: m.id))
        }
    }
}
