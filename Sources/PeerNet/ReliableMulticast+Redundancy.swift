import EggPrimitives

/// Redundancy for game-rate traffic: own messages go out again before anyone asks for them,
/// so a lost datagram is repaired by a later one without a NACK round trip (NACKs stay the
/// fallback).
///
/// Two carriers, both ordinary data items of the origin (the wire format is unchanged, and a
/// receiver takes a copy like any retransmission: once, in order, duplicates counted):
/// - **Piggybacked copies**: a data datagram that carries new own messages at game rate also
///   carries copies of the own messages before them that are not yet stable (`level` of them
///   without echoes, one with echoes), within `redundancyBytesMax` bytes and the datagram's size.
/// - **Echoes**: after a game-rate send, `level` datagrams (one every
///   `redundancyEchoDelayNanoseconds`) repeat the own messages sent since the first send not
///   yet echoed. At 60 messages a second the next datagram comes 16 ms later; an echo 1 ms
///   later repairs the loss in about a millisecond.
///
/// **The level** (extra transmissions per message, 0...`redundancyCopiesMax`) follows the loss
/// this peer sees: an estimate of the fraction of packets missing from the members' packet
/// numbers (each number judged, received or lost, moves it by 1/32, once the sender is 8 packets
/// past it; it halves in `redundancyLossHalfLifeNanoseconds` of the caller's time); a NACK for an
/// own message counts as one lost packet too (a receiver saw a loss this peer may not see). Loss on a LAN is mostly the medium's (Wi-Fi), seen alike in both directions.
/// Level 0 below 0.2 %: no loss seen, no extra byte; otherwise the smallest level whose
/// residual loss (estimate^(level + 1)) is at most 0.5 %. `redundancyLevelMin` sets a floor.
///
/// **Bulk load** turns it off: more than `redundancyRateMaxPerSecond` own messages a second
/// (over the last 50 to 100 ms), more than an eighth of the send window unstable, a datagram
/// carrying more than `redundancyBulkItemsMax` new own messages, or more queued behind it. There NACKs repair, and copies would only take the
/// room of new messages.
extension ReliableMulticast {
    /// A datagram with more new own messages than this is bulk: no copies.
    static let redundancyBulkItemsMax = 4
    /// Below this estimate no loss is seen: level 0.
    static let redundancyLossMin = 0.002
    /// The level is raised until estimate^(level + 1) is at most this.
    static let redundancyResidualMax = 0.005

    /// Whether redundancy is on at all.
    var redundancyEnabled: Bool { config.redundancyBytesMax > 0 && config.redundancyCopiesMax > 0 }

    /// A packet of a known peer was accepted (`highestBefore`, `bitmapBefore`: its replay window
    /// before): its packet numbers are judged in the loss estimate (`Redundancy.judgePackets`).
    func noteInboundPacket(_ packet: UInt64, highestBefore: UInt64, bitmapBefore: UInt64, firstHeard: UInt64, now: NetTime) {
        guard redundancyEnabled else { return }
        redundancy.judgePackets(upTo: packet, highestBefore: highestBefore, bitmapBefore: bitmapBefore, firstHeard: firstHeard, now: now)
    }

    /// A member NACKed an own message: it saw a loss (perhaps one this peer cannot see: loss on
    /// its path alone). Counted like one lost packet.
    func noteOwnNack(now: NetTime) {
        guard redundancyEnabled else { return }
        redundancy.noteLoss(now: now)
    }

    /// The level for the estimate (0 when no loss is seen), at least `redundancyLevelMin`.
    static func redundancyLevel(loss: Double, copiesMax: Int, levelMin: Int) -> Int {
        let floor = min(max(0, levelMin), copiesMax)
        guard loss >= redundancyLossMin else { return floor }
        var level = 1
        var residual = loss * loss
        while level < copiesMax, residual > redundancyResidualMax {
            level += 1
            residual *= loss
        }
        return max(level, floor)
    }

    /// The level now: 0 when off, not a member, or under bulk load.
    func currentRedundancyLevel(now: NetTime) -> Int {
        guard redundancyEnabled, status == .member, members.count > 1, !redundancy.isBulkRate(now: now), !isWindowFilling else { return 0 }
        redundancy.decayLossEstimate(now: now)
        return Self.redundancyLevel(loss: redundancy.lossEstimate, copiesMax: config.redundancyCopiesMax, levelMin: config.redundancyLevelMin)
    }

    /// Counts an own message going out in the send-rate buckets.
    func countOwnTransmission(now: NetTime) {
        redundancy.countOwnTransmission(now: now)
    }

    /// More than an eighth of the send window is not yet stable: bulk (at game rate a window
    /// holds the messages of a stability round, a few dozen).
    var isWindowFilling: Bool {
        let floor = streams[me.id]?.stableFloor ?? lastSentSeq
        return lastSentSeq - floor > UInt64(max(1, config.windowSizeMax / 8))
    }

    /// After own messages up to `seq` were queued by `send`: sets the level the next data
    /// datagram uses for copies and arms the echoes of this send.
    func noteGameRateSend(seq: UInt64, now: NetTime) {
        let level = currentRedundancyLevel(now: now)
        let echoes = min(level, config.redundancyEchoesMax)
        // With echoes, one piggybacked copy covers what they all missed (rare: loss^(echoes + 1));
        // without, the piggybacked copies are the redundancy.
        redundancy.levelNow = echoes > 0 ? min(level, 1) : level
        guard echoes > 0, sendWindow.outData.count <= Self.redundancyBulkItemsMax else {
            // A burst (or no loss seen): no echoes of it (the common case touches no table).
            if redundancy.hasEchoes {
                timers[.echo] = nil
                redundancy.clearEchoes()
            }
            return
        }
        redundancy.armEchoes(echoes, from: seq)
        if timers[.echo] == nil { timers[.echo] = now.adding(nanoseconds: max(1, config.redundancyEchoDelayNanoseconds)) }
    }

    /// Sends one echo: the own messages since `echoFromSeq` already on the wire and not yet
    /// stable, newest first within the budget (sent in seq order). Re-arms while echoes remain.
    func fireEcho(now: NetTime) {
        timers[.echo] = nil
        guard status == .member, redundancy.echoesLeft > 0, let stream = streams[me.id] else {
            redundancy.clearEchoes()
            return
        }
        // Echo only what went out: a message still queued goes out in the next datagram anyway.
        var items: [DataItem] = []
        var budget = min(config.redundancyBytesMax, config.datagramBytesMax - Wire.headerBytes - Wire.trailerBytesMax - Wire.dataPrefixBytes)
        var seq = wireSeq
        while seq >= max(redundancy.echoFromSeq, stream.stableFloor + 1), seq > 0, items.count < Wire.itemsPerDatagramMax {
            guard let item = stream.messages[seq], item.viewID == viewID, item.encodedBytes <= budget else { break }
            items.append(item)
            budget -= item.encodedBytes
            seq -= 1
        }
        redundancy.echoSent()
        if !items.isEmpty {
            stats.echoesSent += 1
            stats.messagesCopied += UInt64(items.count)
            emit(.data(items.reversed()))
        }
        if redundancy.echoesLeft > 0, !items.isEmpty {
            timers[.echo] = now.adding(nanoseconds: max(1, config.redundancyEchoDelayNanoseconds))
        } else {
            redundancy.clearEchoes()
        }
    }

    /// Appends to a data datagram being encoded (its new own messages start at `firstNewSeq`)
    /// copies of the `redundancy.levelNow` own messages before them that are not yet stable.
    /// At game rate a message is sent again in up to `level` echoes 1, 2, 3 ms after it and
    /// with the next datagram (16 ms later at 60 a second).
    /// Returns how many items it appended.
    func appendCopies(before firstNewSeq: UInt64, into w: inout BigEndianByteWriter, limit: Int, itemsRoom: Int) -> Int {
        guard redundancy.levelNow > 0, let stream = streams[me.id] else { return 0 }
        var budget = config.redundancyBytesMax
        var copies = 0
        var seq = firstNewSeq - 1
        while copies < min(redundancy.levelNow, itemsRoom), seq > stream.stableFloor {
            guard let item = stream.messages[seq], item.viewID == viewID,
                  item.encodedBytes <= budget, w.bytes.count + item.encodedBytes <= limit else { break }
            Wire.encodeItem(item, into: &w)
            budget -= item.encodedBytes
            copies += 1
            seq -= 1
        }
        stats.messagesCopied += UInt64(copies)
        return copies
    }
}
