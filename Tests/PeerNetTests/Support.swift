import EggSim
import PeerNet

/// Sends `total` messages, one every `intervalNanoseconds`, once its node's view has at least
/// `startWhenMembers` members. Payload: sender ID, incarnation, counter, filler.
final class TrafficApp: SimApplication {
    let peer: PeerID
    let incarnation: UInt64
    let total: Int
    let startWhenMembers: Int
    let intervalNanoseconds: UInt64
    var sent = 0
    var nextAt: NetTime?

    init(peer: PeerID, incarnation: UInt64, total: Int, startWhenMembers: Int, intervalNanoseconds: UInt64 = 20_000_000) {
        self.peer = peer
        self.incarnation = incarnation
        self.total = total
        self.startWhenMembers = startWhenMembers
        self.intervalNanoseconds = intervalNanoseconds
    }

    func handle(event: PeerNetEvent, core: ReliableMulticast, now: NetTime) {
        if case let .viewChanged(view) = event, view.members.count >= startWhenMembers, nextAt == nil {
            nextAt = now
        }
        if case let .delivered(d) = event {
            precondition(Self.check(d), "payload does not match its delivery")
        }
        if case .receiversWaiting = event {
            // Receivers asked for a start: a snapshot that names its sender, like every message.
            core.answerReceivers(snapshot: Self.bytes(peer.raw) + Self.bytes(incarnation) + Self.bytes(0), now: now)
        }
    }

    func pollTimeout() -> NetTime? { sent < total ? nextAt : nil }

    func handleTimeout(core: ReliableMulticast, now: NetTime) {
        guard sent < total, let at = nextAt, at <= now else { return }
        nextAt = now.adding(nanoseconds: intervalNanoseconds)
        let counter = UInt64(sent + 1)
        var payload = Self.bytes(peer.raw) + Self.bytes(incarnation) + Self.bytes(counter)
        payload += [UInt8](repeating: UInt8(truncatingIfNeeded: counter), count: Int(counter % 200))
        do {
            try core.send(payload, now: now)
            sent += 1
        } catch {
            // Window full or not joined: try again at the next interval.
        }
    }

    static func bytes(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * $0)) } }

    /// The payload names its sender.
    static func check(_ d: Delivery) -> Bool {
        guard d.payload.count >= 24 else { return false }
        let from = d.payload[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return from == d.from.raw
    }
}

extension SimNode {
    /// Seqs delivered from `sender` during this node's current life.
    func deliveredSeqs(from sender: PeerID) -> [UInt64] {
        log.filter { $0.incarnation == incarnation }.compactMap {
            if case let .delivered(d) = $0.event, d.from == sender { return d.seq }
            return nil
        }
    }

    /// Views installed during this node's current life.
    var views: [MembershipView] {
        log.filter { $0.incarnation == incarnation }.compactMap {
            if case let .viewChanged(v) = $0.event { return v }
            return nil
        }
    }

    var deliveryCount: Int {
        log.count { if case .delivered = $0.event { return true } else { return false } }
    }
}

func traffic(total: Int, startWhenMembers: Int, intervalNanoseconds: UInt64 = 20_000_000) -> (PeerID, UInt64) -> SimApplication? {
    { id, incarnation in
        TrafficApp(peer: id, incarnation: incarnation, total: total, startWhenMembers: startWhenMembers, intervalNanoseconds: intervalNanoseconds)
    }
}

let ms: UInt64 = 1_000_000
let seconds: UInt64 = 1_000_000_000

/// Data datagrams have kind 2 at byte 5.
func isData(_ packet: SimPacket) -> Bool { packet.bytes.count > 5 && packet.bytes[5] == 2 }
