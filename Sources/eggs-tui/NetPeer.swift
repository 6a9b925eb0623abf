import Consensus
import DequeModule
import EggGame
import NIOCore
import PeerNet
import PeerNetUDP
#if canImport(Glibc)
import Glibc
#endif

/// One peer of this process on the network: a PeerNet core on a real multicast socket
/// (``PeerHost``), the replicated match (``MatchPeer``) and the message log.
///
/// Everything mutable lives under the host's lock: the NIO event loop hands it datagrams
/// and timers, the game loop (terminal or bot ticker) hands it ticks and moves through
/// ``withMatch(_:)``. Payloads the send window cannot take yet stay queued in the match, which
/// holds the local player's grid while too many wait (backpressure: nothing is thrown away).
final class NetPeer: @unchecked Sendable {
    struct Options {
        var name: String
        var role: PeerRole = .player
        var net: PeerNetConfig
        var multicast: MulticastOptions
        var logPath: String
        /// Keys the log's running digest (the room's passphrase).
        var logPassphrase: String? = nil
        /// The rule set named in the log header.
        var rules = RuleSet.sfe.name
        /// The starting height named in the log header (the one this peer offers).
        var startingHeight = 0
    }

    let id: PeerID
    let role: PeerRole
    let logPath: String
    private var host: PeerHost!
    private var match: MatchPeer
    private let log: LogFile
    private var isClosed = false
    private var recentEvents = Deque<MatchEvent>()
    /// Times the send window refused a payload (it stayed queued in the match).
    private(set) var sendWindowFull = 0
    private(set) var gamesOver = 0
    private(set) var wins = 0
    /// Peers heard speaking another protocol version (not admitted), with their version.
    private(set) var incompatible: [PeerID: UInt16] = [:]
    /// Signalled after each delivery, so a terminal redraws remote moves at once.
    let wake: WakePipe?
    /// `EGGS_TRACE_INPUT`: when remote moves reach the match.
    let trace: InputTrace?
    private var traced = InputProgress()

    init(options: Options, group: EventLoopGroup, wake: WakePipe? = nil, trace: InputTrace? = nil) throws {
        id = options.net.peerID
        role = options.role
        self.wake = wake
        self.trace = trace
        logPath = options.logPath
        var generator = SystemRandomNumberGenerator()
        var config = MatchPeerConfig(id: id, name: options.name, role: options.role, voteSeed: generator.next())
        config.rules = options.rules
        match = MatchPeer(config: config)
        log = try LogFile(path: options.logPath, sealed: true, passphrase: options.logPassphrase ?? options.net.passphrase)
        log.write(MessageLog.header(peer: id, room: options.net.room, rules: options.rules, startingHeight: options.startingHeight))
        host = try PeerHost(config: options.net, options: options.multicast, group: group) { [unowned self] event, core, now in
            self.received(event, core: core, now: now)
        }
    }

    /// Runs `body` with the match under the lock, then sends what it queued.
    @discardableResult
    func withMatch<T>(_ body: (inout MatchPeer, NetTime) -> T) -> T {
        host.withCore { core in
            let now = MonotonicClock.now()
            let result = body(&match, now)
            flush(core: core, now: now)
            return result
        }
    }

    /// A consistent snapshot of the match and the network counters.
    func snapshot() -> (match: MatchPeer, net: PeerNetStats, view: MembershipView) {
        host.withCore { core in (match, core.stats, core.view) }
    }

    /// What the terminal draws, read under the lock in one go.
    func screenState() -> ScreenState {
        host.withCore { core in
            var links: [PeerID: LinkStats] = [:]
            for member in core.view.members where member != id {
                links[member] = core.linkStats(member)
            }
            return ScreenState(match: match, net: core.stats, status: core.status, incompatible: incompatible, links: links)
        }
    }

    /// Where the PeerNet core stands (member, flushing, blocked, …).
    func status() -> PeerNetStatus {
        host.withCore { $0.status }
    }

    struct ScreenState {
        var match: MatchPeer
        var net: PeerNetStats
        var status: PeerNetStatus
        var incompatible: [PeerID: UInt16]
        /// Round-trip time and loss of the link to each other member.
        var links: [PeerID: LinkStats]
    }

    /// Match events since the last call (bounded).
    func takeEvents() -> [MatchEvent] {
        host.withCore { _ in
            defer { recentEvents.removeAll() }
            return Array(recentEvents)
        }
    }

    /// Says goodbye (a `leave` message and PeerNet's graceful leave), closes the socket and
    /// ends the log with its end line.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        withMatch { match, _ in match.leave() }
        host.close()
        host.withCore { _ in log.finish(atMicroseconds: Int64(MonotonicClock.wallMicroseconds())) }
    }

    /// Set once the message log could not be written ("cannot write the log '<path>': <error>"):
    /// the log stopped there; the peer plays on, and the command exits 1 naming it.
    var logFailure: String? { host.withCore { _ in log.failure } }

    private func received(_ event: PeerNetEvent, core: ReliableMulticast, now: NetTime) {
        // The writer thread turns the event into its line: no second decode on this path.
        log.write(event: event, atMicroseconds: Int64(MonotonicClock.wallMicroseconds()))
        if case .incompatible(let peer, let version) = event, incompatible.count < 64 {
            incompatible[peer] = version
        }
        match.handle(event, now: now)
        flush(core: core, now: now)
        if case .delivered = event {
            wake?.signal()
            if let trace, let state = match.match {
                let counts = state.mirrors.filter { $0.key != id }.mapValues(\.inputsApplied)
                trace.recordAdvances("applied", game: state.game, counts: counts, progress: &traced)
            }
        }
    }

    /// Moves the match's payloads into the send window while it takes them (the rest wait in
    /// the match, in order), and keeps the match's events for the game loop.
    private func flush(core: ReliableMulticast, now: NetTime) {
        while let payload = match.peekSend() {
            do {
                try core.send(payload, now: now)
            } catch {
                if error == .left {
                    // Closing: nothing more goes out.
                    while match.pollSend() != nil {}
                } else {
                    // The window is full (or no view yet): the payload waits for the next flush.
                    sendWindowFull += 1
                }
                break
            }
            _ = match.pollSend()
        }
        while let event = match.pollEvent() {
            // Games played (a spectator: watched) to the end.
            if case .gameOver(_, let winner) = event, role == .spectator || match.match?.players.contains(id) ?? true {
                gamesOver += 1
                if winner == id { wins += 1 }
            }
            if recentEvents.count >= 1_024 { recentEvents.removeFirst() }
            recentEvents.append(event)
        }
    }
}
