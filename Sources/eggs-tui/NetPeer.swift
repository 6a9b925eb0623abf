import Consensus
import DequeModule
import EggGame
import PeerNet
import PeerNetUDP
#if canImport(Glibc)
import Glibc
#endif

/// One peer of this process on the network: a PeerNet core on a real multicast socket
/// (``PeerHost``), the replicated match driven by a ``MatchNode`` (the same driver the
/// simulator runs) and the message log.
///
/// Everything mutable lives under the host's lock: the host's reading thread hands it datagrams
/// and timers, the game loop (terminal or bot ticker) hands it ticks and moves through
/// ``withMatch(_:)``, one lock and one pump a call. Payloads the send window cannot take yet
/// stay queued in the match, which holds the local player's grid while too many wait
/// (backpressure: nothing is thrown away).
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
    private var node: MatchNode
    private let log: LogFile
    /// Keys the log's digest (for the history's import of it).
    private let logPassphrase: String?
    /// Records each match into the history database when it ends (and an abandoned one at
    /// close), off the game loop; nil records nothing. Set before the peer plays.
    var history: HistoryRecorder?
    /// A match started and did not end yet (recorded as abandoned at close).
    private var matchOpen = false
    private var isClosed = false
    private var recentEvents = Deque<MatchEvent>()
    /// Pauses of this process the core found (how long it was away), for the screen.
    private var pauses: [UInt64] = []
    /// IDs two live peers use (a newcomer refused while the old one speaks), for the screen.
    private var collisions: [PeerID] = []
    /// This peer's own ID is in use by another live peer, heard before this peer joined a group
    /// with others: it is the newcomer, and must not play under that ID.
    private var ownIDTaken = false
    /// Times the send window refused a payload (it stayed queued in the match).
    var sendWindowFull: Int { host.withCore { _ in node.sendWindowFull } }
    /// Times the game loop took the host's lock so far (``withMatch(_:)`` and every read):
    /// each takes it once and pumps once.
    var hostLockCount: Int { host.coreCallCount }
    private(set) var gamesOver = 0
    private(set) var wins = 0
    /// Peers heard speaking another protocol version (not admitted), with their version.
    private(set) var incompatible: [PeerID: UInt16] = [:]
    /// Signalled after each delivery, so a terminal redraws remote moves at once.
    let wake: WakePipe?
    /// `EGGS_TRACE_INPUT`: when remote moves reach the match.
    let trace: InputTrace?
    private var traced = InputProgress()

    init(options: Options, wake: WakePipe? = nil, trace: InputTrace? = nil) throws {
        id = options.net.peerID
        role = options.role
        self.wake = wake
        self.trace = trace
        logPath = options.logPath
        var generator = SystemRandomNumberGenerator()
        var config = MatchPeerConfig(id: id, name: options.name, role: options.role, voteSeed: generator.next())
        config.rules = options.rules
        node = MatchNode(peer: MatchPeer(config: config))
        logPassphrase = options.logPassphrase ?? options.net.passphrase
        log = try LogFile(path: options.logPath, sealed: true, passphrase: logPassphrase)
        log.write(MessageLog.header(peer: id, room: options.net.room, rules: options.rules, startingHeight: options.startingHeight,
                                    receiver: options.role == .spectator))
        // A spectator is a receiver: it follows the players' streams and is in no view.
        var netConfig = options.net
        netConfig.receiveOnly = options.role == .spectator
        host = try PeerHost(config: netConfig, options: options.multicast) { [unowned self] event, core, now in
            self.received(event, core: core, now: now)
        }
    }

    /// Runs `body` with the match under the lock, then sends what it queued.
    @discardableResult
    func withMatch<T>(_ body: (inout MatchPeer, NetTime) -> T) -> T {
        host.withCore { core in
            let now = MonotonicClock.now()
            var fresh: [MatchEvent] = []
            let result = node.perform(core: core, now: now, events: { fresh.append($0) }) { body(&$0, now) }
            keep(fresh)
            return result
        }
    }

    /// A consistent snapshot of the match and the network counters.
    func snapshot() -> (match: MatchPeer, net: PeerNetStats, view: MembershipView) {
        host.withCore { core in (node.peer, core.stats, core.view) }
    }

    /// What the terminal draws, read under the lock in one go.
    func screenState() -> ScreenState {
        host.withCore { core in
            var links: [PeerID: LinkStats] = [:]
            for member in core.view.members where member != id {
                links[member] = core.linkStats(member)
            }
            return ScreenState(match: node.peer, net: core.stats, status: core.status, incompatible: incompatible, links: links,
                               watching: core.receiversHeard(now: MonotonicClock.now()), isReceiver: core.isReceiveOnly)
        }
    }

    /// Spectators (receivers) heard within the last 3 s.
    func watching() -> Int {
        host.withCore { $0.receiversHeard(now: MonotonicClock.now()) }
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
        /// Spectators (receivers, in no view) heard within the last 3 s.
        var watching: Int = 0
        /// This peer is a spectator: it follows the players' group without being in it.
        var isReceiver = false
    }

    /// Match events since the last call (bounded).
    /// Whether another live peer already uses this peer's ID (found before it joined others).
    var ownIDInUse: Bool { host.withCore { _ in ownIDTaken } }

    /// IDs found in use by two live peers since the last call.
    func takeCollisions() -> [PeerID] {
        host.withCore { _ in
            defer { collisions.removeAll() }
            return collisions
        }
    }

    /// How long this process was stopped, for each pause found since the last call.
    func takePauses() -> [UInt64] {
        host.withCore { _ in
            defer { pauses.removeAll() }
            return pauses
        }
    }

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
        // The match left unfinished is recorded as abandoned (the log is whole now).
        if matchOpen { history?.record(logPath: logPath, passphrase: logPassphrase, flush: {}) }
    }

    /// Set once the message log could not be written ("cannot write the log '<path>': <error>"):
    /// the log stopped there; the peer plays on, and the command exits 1 naming it.
    var logFailure: String? { host.withCore { _ in log.failure } }

    /// When this peer started, and how long after it first had the room's state (a spectator:
    /// started following the players).
    let startedAt = MonotonicClock.now()
    private(set) var syncedAfterNanoseconds: UInt64?
    /// The pauses in the messages delivered from other peers within a game here.
    private(set) var deliveryGaps = DeliveryGaps()

    private func received(_ event: PeerNetEvent, core: ReliableMulticast, now: NetTime) {
        if case .delivered(let d) = event, d.from != id {
            deliveryGaps.delivered(at: now, game: node.peer.currentGame, wallMicroseconds: MonotonicClock.wallMicroseconds())
        }
        // The writer thread turns the event into its line: no second decode on this path.
        log.write(event: event, atMicroseconds: Int64(MonotonicClock.wallMicroseconds()))
        if case .resumedAfterPause(let away) = event, pauses.count < 16 { pauses.append(away) }
        if case .idCollision(let peer) = event {
            if peer == id && core.view.members.count < 2 {
                ownIDTaken = true
            } else if collisions.count < 16 {
                collisions.append(peer)
            }
        }
        if case .incompatible(let peer, let version) = event, incompatible.count < 64 {
            incompatible[peer] = version
        }
        var fresh: [MatchEvent] = []
        node.handle(event, core: core, now: now) { fresh.append($0) }
        keep(fresh)
        if case .delivered = event {
            wake?.signal()
            if let trace, let state = node.peer.match {
                let counts = state.mirrors.filter { $0.key != id }.mapValues(\.inputsApplied)
                trace.recordAdvances("applied", game: state.game, counts: counts, progress: &traced)
            }
        }
    }

    /// Keeps the match's events for the game loop (bounded), counting the games played to the
    /// end. Called after the node's call returns (the node is not read while it changes).
    private func keep(_ events: [MatchEvent]) {
        for event in events {
            // Games played (a spectator: watched) to the end.
            if case .gameOver(_, let winner) = event, role == .spectator || node.peer.match?.players.contains(id) ?? true {
                gamesOver += 1
                if winner == id { wins += 1 }
            }
            if case .synced = event, syncedAfterNanoseconds == nil {
                syncedAfterNanoseconds = MonotonicClock.now().nanoseconds(since: startedAt)
            }
            switch event {
            case .matchStarted: matchOpen = true
            case .matchOver:
                matchOpen = false
                // Only queued here (under the host's lock): the recorder's thread waits for the
                // log's writer, then imports what the log holds.
                history?.record(logPath: logPath, passphrase: logPassphrase) { [log] in log.flush() }
            default: break
            }
            if recentEvents.count >= 1_024 { recentEvents.removeFirst() }
            recentEvents.append(event)
        }
    }
}

/// The pauses in the messages a peer delivered from the other peers within one game (a player's
/// stream stalled by anything: a view change, spectators killed). A pause that spans the end of a
/// game is not one: the next game's first moves wait for its first eggs.
struct DeliveryGaps {
    /// Pauses at least this long are listed.
    static let notedNanoseconds: UInt64 = 20_000_000
    /// At most this many are listed: the longest.
    static let notedMax = 64

    /// The longest pause within a game.
    private(set) var longestNanoseconds: UInt64 = 0
    /// The pauses of at least ``notedNanoseconds``, the longest ``notedMax``: when each ended
    /// (wall clock, µs since the epoch) and how long it was, so that a test can tell the pause
    /// around an event from the others.
    private(set) var noted: [(endedAtWallMicroseconds: UInt64, nanoseconds: UInt64)] = []
    /// The last delivery within a game, and that game's number.
    private var last: (at: NetTime, game: UInt32)?

    /// A message from another peer delivered at `now`, while game `game` ran here (nil: no match).
    mutating func delivered(at now: NetTime, game: UInt32?, wallMicroseconds: @autoclosure () -> UInt64) {
        if let last, let game, last.game == game {
            let gap = now.nanoseconds(since: last.at)
            longestNanoseconds = max(longestNanoseconds, gap)
            if gap >= Self.notedNanoseconds {
                noted.append((wallMicroseconds(), gap))
                if noted.count > Self.notedMax {
                    noted.remove(at: noted.indices.min { noted[$0].nanoseconds < noted[$1].nanoseconds }!)
                }
            }
        }
        last = game.map { (now, $0) }
    }
}
