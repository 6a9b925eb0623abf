import EggPrimitives

/// The join handshake of `ReliableMulticast`: a sender enters the peer table only after it
/// answered a fresh challenge.
///
/// A datagram from a sender this peer does not know (an unknown ID, or a known ID under
/// another incarnation) is not acted upon: it is counted (`droppedUnproven`) and its sender
/// is queued for a challenge. Challenges go out in batches (`challenge`: up to 32 targets, one
/// datagram at most every `challengeSpacingNanoseconds`, a target at most once every
/// `rechallengeNanoseconds`); each names the target's ID and incarnation and a cookie. The
/// target answers with a `response` echoing the cookie and naming the challenger's ID and
/// incarnation. The cookie is a keyed hash of (target, time epoch) under a secret of this
/// incarnation: the challenger keeps no state per candidate, so a storm of fake IDs costs it
/// nothing but the bounded challenge batches, and can crowd out nobody. A response is valid for
/// one to two `cookieEpochNanoseconds`, only for this incarnation of the challenger; with a
/// passphrase it is authenticated like every datagram. So a replay (of this session or an
/// earlier one, whose challenger incarnations differ), a forged ID or a peer heard once and
/// gone never gets past it, and never becomes a candidate for a view.
///
/// A proven new incarnation of a known ID replaces the old one once the old one is silent (not
/// heard for a third of the suspect timeout), whatever the two incarnation numbers: the old incarnation is
/// dead (`retired`: its datagrams are dropped as stale from then on), counts toward no
/// majority, and if it was a member `.incarnationEnded` is reported; the view change that
/// removes it follows at once. While the old one still speaks, the new one is an ID collision
/// (two live peers, or an impostor): refused and counted (`collisionsRefused`), reported once
/// (`.idCollision`). A peer that hears its own ID from another incarnation, repeatedly and
/// over a span, reports `.idCollision` naming itself.
///
/// Members of a view this peer installs are vouched for by the cut (they were proven by the
/// coordinator) and enter the peer table without a handshake of their own.
extension ReliableMulticast {
    /// Targets queued for the next challenge datagram (also the cap of one datagram).
    static var challengeQueueMax: Int { Handshake.queueMax }
    static var challengedRecentlyMax: Int { Handshake.challengedRecentlyMax }
    static var rechallengeNanoseconds: UInt64 { Handshake.rechallengeNanoseconds }
    static var retiredMax: Int { Handshake.retiredMax }

    func isValidCookie(_ value: UInt64, for target: Member, now: NetTime) -> Bool {
        handshake.isValidCookie(value, for: target, now: now)
    }

    /// Some sender was challenged within the last `rechallengeNanoseconds` (or is queued) and
    /// has not answered yet: a fresh peer waits a little before founding a group without it.
    func handshakesPending(now: NetTime) -> Bool { handshake.isPending(now: now) }

    /// Whether `m` is an incarnation that a newer proven one superseded.
    func isRetired(_ m: Member) -> Bool { handshake.isRetired(m) }

    /// Queues `candidate` for a challenge (bounded; a full queue drops it: it is heard again).
    func queueChallenge(_ candidate: Member, now: NetTime) {
        guard !isLeft, candidate.id != me.id, let at = handshake.enqueue(candidate, now: now) else { return }
        timers[.challenge] = at
    }

    /// Sends the queued challenges in one datagram (the `.challenge` timer fired).
    func sendChallenges(now: NetTime) {
        timers[.challenge] = nil
        guard !isLeft else { return }
        let entries = handshake.takeChallenges(now: now)
        guard !entries.isEmpty else { return }
        stats.challengesSent += 1
        emit(.challenge(entries))
    }

    /// Answers every entry naming this incarnation (within the response budget).
    func handleChallenge(_ entries: [ChallengeEntry], from challenger: Member) {
        for e in entries where e.target == me {
            guard handshake.takeResponse() else {
                stats.responsesSuppressed += 1
                return
            }
            stats.responsesSent += 1
            emit(.response(challenger: challenger, cookie: e.cookie))
        }
    }

    /// Admits a sender that proved itself: a new entry of the peer table, replacing (and
    /// retiring) another incarnation of the same ID. `false` when the table has no room.
    func promote(_ m: Member, packet: UInt64, now: NetTime) -> Bool {
        if let old = peers[m.id] {
            // A live incarnation is never replaced: while the old one is heard (within a third
            // of the suspect timeout: a live peer sends a heartbeat every interval, and data in
            // a match), a new one under its ID is an ID collision (or an impostor): refused,
            // counted and reported once. It takes over once the old one has fallen that silent
            // (a restart), before suspicion would end the old one's view in a view of two.
            if old.incarnation != m.incarnation, !old.left,
               now.nanoseconds(since: old.lastHeard) <= config.suspectTimeoutNanoseconds / 3 {
                stats.collisionsRefused += 1
                if handshake.reportCollision(m) { events.append(.idCollision(peer: m.id)) }
                return false
            }
            retire(Member(id: m.id, incarnation: old.incarnation))
        } else if peerTable.count >= PeerTable.peersMax {
            evictSilentPeers(now: now)
            guard peerTable.count < PeerTable.peersMax else { return false }
        }
        var info = PeerInfo(incarnation: m.incarnation, lastHeard: now, provenAt: now)
        _ = info.acceptPacket(packet)
        peerTable[m.id] = info
        handshake.proved(m)
        stats.peersProven += 1
        return true
    }

    /// `old` is dead: remembered as stale; reported when it is a member of the installed view.
    func retire(_ old: Member) {
        guard handshake.retire(old) else { return }
        if members.contains(old) { events.append(.incarnationEnded(peer: old.id)) }
    }

    /// Members of a newly installed view that this peer never heard enter the peer table:
    /// the coordinator proved them.
    func vouch(for newMembers: [Member], now: NetTime) {
        for m in newMembers where m != me && peers[m.id] == nil && !isRetired(m) {
            guard peerTable.count < PeerTable.peersMax else { evictSilentPeers(now: now); continue }
            peerTable[m.id] = PeerInfo(incarnation: m.incarnation, lastHeard: now, provenAt: now)
        }
    }

    /// A member that announced `leave`, or whose ID a newer incarnation proved since: gone for
    /// good, it counts toward no majority.
    func isGone(_ m: Member) -> Bool {
        guard m != me else { return false }
        if isRetired(m) { return true }
        guard let info = peers[m.id], info.incarnation == m.incarnation else { return false }
        return info.left
    }
}
