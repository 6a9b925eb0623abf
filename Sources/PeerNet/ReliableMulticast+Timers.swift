/// The timers of `ReliableMulticast`: one table (`timers`), one place that computes the next
/// deadline (`nextDeadline`), one dispatch on expiry (`fire`).
///
/// A timer of the table is armed at most once and is cleared or moved when it fires. The other
/// deadlines follow from the state and are not stored: those of a running view change (the
/// coordinator's flush timeout, a silent coordinator), the end of discovery, the bound of a
/// blocked peer, and when a member becomes suspect or stale. The first two fire here; the
/// others are conditions `evaluateMembership` looks at after every input, so they are polled
/// only while still ahead (a condition once reached stays true and needs no more wake-ups).
extension ReliableMulticast {
    enum Timer: Hashable {
        /// The queued challenges of the join handshake go out (one datagram at most every
        /// `challengeSpacingNanoseconds`).
        case challenge
        /// The next heartbeat (with a report); armed from the start until `leave`.
        case heartbeat
        /// A stability report: the tail-loss probe after own sends.
        case report
        /// The pending repairs go out.
        case repair
        /// The due gaps of this member's stream are NACKed; armed while the stream has gaps.
        case nack(PeerID)
        /// The frames of the running view change go out again.
        case flushRetransmit
        /// An echo of the latest own messages goes out (redundancy while loss is seen).
        case echo
    }

    /// Arms `timer` at `at`, or keeps it where it is when that is earlier.
    func armEarliest(_ timer: Timer, at: NetTime) {
        timers[timer] = min(timers[timer] ?? at, at)
    }

    /// Disarms every NACK timer (the streams were replaced or dropped).
    func disarmNacks() {
        timers = timers.filter { if case .nack = $0.key { false } else { true } }
    }

    /// The earliest armed timer or deadline that follows from the state (not after `leave`).
    func nextDeadline() -> NetTime {
        guard var next = timers[.heartbeat] else { preconditionFailure("the heartbeat is armed until leave") }
        // Timers and flush deadlines (cleared or moved when they fire):
        func consider(_ t: NetTime?) { if let t, t < next { next = t } }
        // Conditions (stay true once reached): only while still ahead.
        func considerAhead(_ t: NetTime?) { if let t, t > lastNow { consider(t) } }
        for at in timers.values { consider(at) }
        consider(coordinating?.deadline)
        consider(coordinating?.joinersDue)
        if let p = participation, coordinating == nil {
            consider(p.lastProgress.adding(nanoseconds: 2 * config.flushTimeoutNanoseconds))
        }
        if case let .joining(discoveryAt, _, _) = phase {
            considerAhead(discoveryAt)
            considerAhead(discoveryAt.adding(nanoseconds: config.discoveryNanoseconds))
        }
        considerAhead(cutOffSince?.adding(nanoseconds: config.blockedTimeoutNanoseconds))
        for m in members where m != me {
            guard let info = peers[m.id] else { continue }
            considerAhead(info.lastHeard.adding(nanoseconds: config.suspectTimeoutNanoseconds + 1))
            considerAhead(info.staleViewSince?.adding(nanoseconds: config.flushTimeoutNanoseconds + 1))
        }
        return next
    }

    /// Fires every expired timer in a fixed order (so RNG draws and datagrams come in a fixed
    /// order), then the expired deadlines of a running view change.
    func fireExpired(now: NetTime) {
        fireIfDue(.challenge, now: now)
        fireIfDue(.heartbeat, now: now)
        fireIfDue(.report, now: now)
        fireIfDue(.echo, now: now)
        fireIfDue(.repair, now: now)
        for m in members where m != me { fireIfDue(.nack(m.id), now: now) }  // sorted by ID
        fireIfDue(.flushRetransmit, now: now)
        expireFlush(now: now)
    }

    func fireIfDue(_ timer: Timer, now: NetTime) {
        guard let at = timers[timer], now >= at else { return }
        fire(timer, now: now)
    }

    /// The one dispatch on expiry. Each action clears or re-arms its own timer.
    func fire(_ timer: Timer, now: NetTime) {
        switch timer {
        case .challenge:
            sendChallenges(now: now)
        case .heartbeat:
            handshake.newInterval()
            emitHeartbeat(now: now)
            timers[.heartbeat] = now.adding(nanoseconds: config.heartbeatIntervalNanoseconds)
        case .report:
            emitReport(now: now)
        case .repair:
            fireRepairs()
        case let .nack(id):
            fireNack(id, now: now)
        case .flushRetransmit:
            retransmitFlush(now: now)
        case .echo:
            fireEcho(now: now)
        }
    }
}
