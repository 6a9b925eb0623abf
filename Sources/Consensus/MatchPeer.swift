/// # Consensus: voting rounds and the replicated match
///
/// `MatchPeer` is a sans-I/O state machine (no sockets, no clock). The driver feeds it the
/// `PeerNetEvent`s of its `ReliableMulticast` core in delivery order (``handle(_:now:)``), local
/// commands (``setReady(settings:wantsToPlay:)``, ``applyLocal(_:now:)``, ``tick(now:softDrop:)``)
/// and pulls payloads to multicast (``pollSend()``) and application events (``pollEvent()``).
///
/// ## What is agreed, and how
/// View synchrony (PeerNet) guarantees that every member that installs view V+1 delivered the
/// same set of messages in view V, each sender's in order; the interleaving across senders may
/// differ. So every decision here depends only on the view sequence and each sender's ordered
/// stream:
/// - **Egg rounds** (namespace = game number, see `EggRounds`): each member votes every round once,
///   in order, in batches; a round is decided when every member of the current view has voted;
///   the highest-ID member's vote wins. Decided rounds form a prefix, re-evaluated at every view
///   change (departed members are no longer waited for). Each member votes ahead up to the highest
///   pair index any player has spawned (as seen in the streams) + ``MatchPeerConfig/lookaheadRounds``.
/// - **Opening rounds of the next game**: every synced member also votes rounds
///   `0..<lookaheadRounds` of `nextGame` (the next game of the match, or the first game of the next
///   match while in the lobby) as soon as it can: in the lobby before its start proposal, during a
///   match when the current game begins. Its sender's FIFO order puts these votes before its start
///   proposal / game-over vote, so a game begins with its opening rounds already decided and no
///   first pair waits for a round trip. Votes are accepted for the current game and the two after
///   it (the lobby: `nextGame` and the one after), so at most three namespaces are held. Decisions
///   of a game that has not begun are reported (``MatchEvent/roundsDecided(game:rounds:)``, the
///   decisions log) when it begins. At a view with late joiners every old member drops the future
///   namespaces outright, decided rounds included (nobody used them; the snapshot does not carry
///   them), at the same point of its stream, and everyone votes them again from round 0.
/// - **Start** (one-shot round per match counter): a member votes its proposal when ready;
///   decided when every member voted; the highest-ID member's settings win; players are the voters
///   that want to play, by ID (2–8; more spectate).
/// - **Game over** (one-shot round per game): a peer that sees at most one live player (topped-out
///   and departed players are out) votes the winner it observed; the highest-ID vote wins.
/// - **Grids**: each player's ordered input stream (spawn / move / landGarbage) is applied to a
///   `PlayerGrid` mirror on every peer; a spawn waits until the round of its pair index is decided.
///   Garbage a spawn sends is credited to every other player; a `landGarbage(n)` waits until at
///   least that much was credited (it cannot outrun the sends the owner saw). Owners publish a
///   checkpoint after each pair settles; mirrors compare at the same stream position and raise
///   ``MatchEvent/desync(_:)`` on mismatch. A `landGarbage` that still overdraws once a view
///   change has delivered every message of the old view is raised as a desync too (see
///   `flagGarbageOverdraws`).
///
/// ## Late joiners
/// A peer listed in `view.joined` (or whose first view lists only joiners) has no history. At such
/// a view, every old member drops its undecided votes and votes again from the frontier (votes are
/// a pure function of the voter's seed and the round, so re-votes repeat themselves), and the
/// highest-ID old member sends a ``Snapshot`` of the state as of the view's installation. The
/// joiner buffers every delivery of the view until the snapshot arrives, adopts it, then replays the
/// buffer. If every member of a view is new, all of them start from the empty lobby.
/// A joiner mid-game does not mirror the game in progress (it votes "no winner observed" in its
/// game-over round); it mirrors every following game. It draws the game in progress from the
/// players' settled grids the snapshot sender sends it after the snapshot and again at every
/// spawn while it watches (`MatchPeer+Pictures.swift`).
/// If the snapshot sender fails before delivering it and no member with state is left, the
/// earlier joiners start from the empty lobby; a peer new in that view takes them for synced
/// members and waits for a snapshot, so they send one (of the empty lobby) too.

import DequeModule
import EggGame
import EggPrimitives
import PeerNet

/// Configuration of one peer.
public struct MatchPeerConfig: Sendable, Hashable {
    public var id: PeerID
    public var name: String
    public var role: PeerRole
    /// Seeds this peer's votes (a pure function of seed, game and round).
    public var voteSeed: UInt64
    /// The rule set this peer was started with (`--rules`), announced in its hello; the match
    /// plays the rule set of the agreed settings.
    public var rules: String = RuleSet.sfe.name
    /// How many rounds ahead of the highest spawned pair index this peer votes.
    public var lookaheadRounds: Int = 64
    /// Events waiting for ``MatchPeer/pollEvent()`` at most. The driver polls every event after
    /// every call, and one call emits at most a few events per message it delivers (a snapshot
    /// replays at most 65,536 buffered messages), so more is a driver that stopped polling: a
    /// local bug, and the peer traps rather than lose an event (a desync, a game over) silently.
    public var eventsMax: Int = 1 << 20
    /// Own payloads waiting to be sent (``MatchPeer/pollSend()`` not called, or the driver's
    /// send window full) at which the local player's grid holds still: no tick, move or spawn
    /// adds to the queue until it drains below this (``MatchPeer/isSendBackpressured``). Nothing
    /// queued is ever thrown away; votes and answers to other peers still go in.
    public var sendBackpressureAt: Int = 1_024
    /// How long every player of the room must stay ready before this peer starts the match.
    public var startCountdownNanoseconds: UInt64 = 3_000_000_000
    /// How long after the first ready mark a ready player may start the match with the ready
    /// players (at least two wanting to play), whoever else is not ready (``MatchPeer/startNow(now:)``).
    public var startAfterFirstReadyNanoseconds: UInt64 = 30_000_000_000

    public init(id: PeerID, name: String, role: PeerRole = .player, voteSeed: UInt64) {
        self.id = id
        self.name = name
        self.role = role
        self.voteSeed = voteSeed
    }
}

/// A checkpoint that did not match its mirror.
public struct Desync: Hashable, Sendable, CustomStringConvertible {
    public var player: PeerID
    public var game: UInt32
    public var pairs: UInt32
    public var ownerHash: UInt64
    public var mirrorHash: UInt64
    /// Not a checkpoint mismatch but a `landGarbage` beyond the garbage credited to the player:
    /// how many eggs too many (0 for a checkpoint mismatch; `ownerHash` is then 0).
    public var garbageOverdraw = 0

    public var description: String {
        if garbageOverdraw > 0 {
            return "desync: player \(player.hex) game \(game) pair \(pairs): lands \(garbageOverdraw) garbage eggs never sent to it"
        }
        return "desync: player \(player.hex) game \(game) pair \(pairs): owner \(hex16(ownerHash)) mirror \(hex16(mirrorHash))"
    }
}

/// What a ``MatchPeer`` reports to the application, in order.
public enum MatchEvent: Hashable, Sendable {
    case viewChanged(MembershipView)
    /// This peer has the room state (fresh start or snapshot adopted).
    case synced(fromSnapshot: Bool)
    case lobbyChanged
    case matchStarted(settings: MatchSettings, players: [PeerID])
    /// A start round was decided with fewer than 2 players; everyone votes again.
    case startFailed(playersCount: Int)
    case gameStarted(game: UInt32, mirrored: Bool)
    case roundsDecided(game: UInt32, rounds: Range<Int>)
    case checkpointVerified(player: PeerID, game: UInt32, pairs: UInt32)
    case desync(Desync)
    case gameOver(game: UInt32, winner: PeerID?)
    case matchOver(winner: PeerID?, wins: [PeerID: Int])
    /// A player of the match under way is out of it for good before its end: it left for the
    /// lobby (`q`, a ``MatchMessage/forfeit(game:)``), quit the room, or its connection was lost.
    /// Raised at the same point of the delivery order on every peer (a lost connection: at the
    /// view that drops it). `name` is the name it had in the room. The game under way goes to
    /// the players still in it (``gameOver(game:winner:)`` follows once decided).
    case playerOut(player: PeerID, name: String, reason: PlayerOutReason)
}

/// Why a player is out of a match before its end (``MatchEvent/playerOut(player:name:reason:)``).
public enum PlayerOutReason: Hashable, Sendable {
    /// It left the match for the lobby of the same room (it is still a member).
    case leftForLobby
    /// It quit the room (it said `leave` before it went).
    case quit
    /// It went without a word: crashed, killed, or cut off.
    case connectionLost
}

/// Counters for the summary and the tests.
public struct MatchStats: Hashable, Sendable {
    public var delivered = 0
    public var sent = 0
    public var invalidDropped = 0
    public var duplicateVotes = 0
    public var ignoredMessages = 0
    public var checkpointsVerified = 0
    public var desyncs = 0
    /// Messages from a member that (re)joined, delivered before its first `hello` after the join:
    /// sent by an earlier life of its stream (queued while it was cut off, about a game the room
    /// does not continue), so dropped.
    public var staleDropped = 0
    /// Own payloads never handed to the driver when this peer turned joiner and dropped its
    /// state (they were about that state).
    public var staleUnsent = 0
    /// Ticks, moves and spawns of the local player held back while the send queue was full.
    public var backpressureHolds = 0
    public var maxEggWaitNanoseconds: UInt64 = 0
    public var garbageOverdrawStalls = 0
    /// Garbage overdraws raised as desyncs (counted in `desyncs` too).
    public var garbageOverdraws = 0
    /// Calls of `processDecisions` that stopped after `decisionPassesMax` passes with decisions
    /// still ready (applied after the next input).
    public var decisionPassesCut = 0
}

/// A start vote's value.
struct StartVote: Hashable, Sendable {
    var settings: MatchSettings
    var wantsToPlay: Bool
}

/// One item of a player's stream as a mirror queues it.
enum StreamItem: Hashable, Sendable {
    case input(StreamInput)
    case checkpoint(pairs: UInt32, hash: UInt64)
    /// The owner's game clock at this point of its stream (see ``MatchMessage/clock(game:tick:)``).
    case clock(tick: UInt32)
}

/// One player's mirrored grid.
public struct PlayerMirror: Sendable {
    public internal(set) var grid = PlayerGrid()
    /// Items of the owner's stream received and not applied yet, oldest first.
    var queue: Deque<StreamItem> = []
    /// The player's garbage account as its stream shows it (credited by other players' spawns,
    /// landed and offset by its own items; ``GarbageExchange``).
    public internal(set) var garbage = GarbageExchange()
    /// Garbage credited to this player by other players' spawns.
    public var garbageReceived: Int { garbage.received }
    /// Garbage landed on the player, or cancelled by its offsetting.
    public var garbageLanded: Int { garbage.landed }
    /// Items of the owner's stream (spawns, moves, garbage landings) applied so far this game:
    /// the mirror has caught up with the owner's `inputsMade` of the same count.
    public internal(set) var inputsApplied = 0
    /// A garbage overdraw of this mirror was reported (once).
    var overdrawReported = false
    /// The latest game clock the owner published (it was alive at, or topped out on, that tick).
    public internal(set) var clock: UInt32?
    /// The tick of the owner's game clock on which it topped out, once its stream said so.
    public internal(set) var toppedOutTick: UInt32?
    /// The longest chain of the game so far, and the garbage its spawns sent (for results).
    public internal(set) var largestChain = 0
    public internal(set) var garbageSent = 0
    public var isToppedOut: Bool { grid.state == .toppedOut }

    static let queueMax = 1 << 16
}

/// Whether this peer has voted on who won the current game, and for whom.
enum GameOverVote: Hashable, Sendable {
    case notCast
    /// `winner` is `nil` for a draw.
    case cast(winner: PeerID?)
}

/// The match in progress.
public struct MatchState: Sendable {
    public internal(set) var settings: MatchSettings
    public internal(set) var players: [PeerID]
    public internal(set) var wins: [PeerID: Int]
    public internal(set) var game: UInt32
    /// Players that left the view during the current game: out of it even if they come back
    /// (a restarted peer rejoins under the same ID but plays only from the next game).
    public internal(set) var leftDuringGame: Set<PeerID> = []
    /// Players that left the match for the lobby (``MatchMessage/forfeit(game:)``): out of every
    /// game of it from the one they left on, though still members of the room.
    public internal(set) var forfeited: Set<PeerID> = []
    /// The players' names as the room knew them when the match started (or when this peer got
    /// the room's state): a player that leaves keeps its name in the match's banners and results.
    public internal(set) var names: [PeerID: String] = [:]
    /// False when this peer joined during `game` and does not mirror it.
    public internal(set) var mirrored: Bool
    public internal(set) var mirrors: [PeerID: PlayerMirror] = [:]
    var gameOver = OneShotVote<PeerID?>()
    /// This peer's vote on who won the current game (a draw is `.cast(winner: nil)`).
    var myGameOverVote: GameOverVote = .notCast
    /// Games of this match finished so far (the game in progress is `gamesPlayed + 1`).
    public internal(set) var gamesPlayed = 0
    /// Pairs spawned per player (from the snapshot for an unmirrored game).
    var spawnedBase: [PeerID: Int] = [:]
    /// An unmirrored game: the players' latest grids as the room sent them, falling pair and
    /// falling eggs in place (drawn instead of the grids this peer cannot mirror).
    public internal(set) var pictures: [PeerID: GridPicture] = [:]
    /// A mirrored game: members that joined during it (they do not mirror it), and what was last
    /// sent to them of each player: its picture and the mirror's game tick then.
    var watchers: Set<PeerID> = []
    /// A mirrored game: a snapshot for receivers (spectators outside the view) went out during
    /// it, so its pictures are sent until it ends.
    var receiversWatching = false
    var picturesSent: [PeerID: (picture: GridPicture, tick: Int)] = [:]

    /// Queues items of `from`'s stream of this game on its mirror, in place.
    /// - Returns: false when they are not taken: `from` left during the game, is no player, or
    ///   its queue would pass ``PlayerMirror/queueMax``.
    mutating func receive(_ items: [StreamItem], from: PeerID) -> Bool {
        // A player that left the view during this game is out of it for good. Its stream was
        // cut at the departure; what it sends after coming back (a healed partition delivers
        // the sends it queued while blocked) does not continue the cut stream.
        guard !leftDuringGame.contains(from) else { return false }
        // By index: read and changed in place (`mirrors[from]` would copy the mirror).
        guard mirrored, let index = mirrors.index(forKey: from) else {
            guard players.contains(from) else { return false }
            // Not mirrored (joined mid-game): count spawns only, to vote far enough ahead.
            spawnedBase[from, default: 0] += items.filter { $0 == .input(.spawn) }.count
            return true
        }
        guard mirrors.values[index].queue.count + items.count <= PlayerMirror.queueMax else { return false }
        mirrors.values[index].queue.append(contentsOf: items)
        return true
    }

    func pairsSpawned(_ player: PeerID) -> Int {
        mirrors[player].map { $0.grid.pairsSpawned } ?? spawnedBase[player] ?? 0
    }

    /// Reads `player`'s mirror in place (`nil` without one), changing nothing. Through the
    /// table's modify accessor because `Dictionary` has no borrowing read: its getters
    /// (`mirrors[player]`, `values[index]`) copy the whole mirror, retaining and releasing its
    /// grid's and queue's storage, and the per-message paths read mirrors many times a message.
    mutating func readMirror<R>(_ player: PeerID, _ read: (inout PlayerMirror) -> R) -> R? {
        guard let index = mirrors.index(forKey: player) else { return nil }
        return read(&mirrors.values[index])
    }
}

/// The local player's own grid, driven by the driver's ticks and moves.
public struct OwnerState: Sendable {
    public internal(set) var game: UInt32
    public internal(set) var grid = PlayerGrid()
    var clock: GravityClock
    /// Own stream items applied to `grid` but not sent yet (sent, in order, by `flushOwner`).
    var unsentInputs: [StreamInput] = []
    /// The local player's garbage account (``GarbageExchange``): credited as its own mirror is,
    /// accepted during the live pair, landed once its chain has ended.
    var garbage = GarbageExchange()
    /// Ticks waiting in `unsentInputs` (its last item, when that is a tick count).
    var pendingTicks: Int {
        if case .ticks(let count)? = unsentInputs.last { return count }
        return 0
    }
    /// Whether the gathered inputs go out now: anything but ticks, more than one item, or
    /// ``MatchPeer/ticksFlushedAtMost`` ticks waiting.
    var isFlushDue: Bool {
        unsentInputs.contains { if case .ticks = $0 { false } else { true } }
            || unsentInputs.count > 1 || pendingTicks >= MatchPeer.ticksFlushedAtMost
    }

    /// Adds an input applied to `grid` to those not sent yet (tick counts add up in one item,
    /// up to ``MatchMessage/ticksPerItemMax``).
    mutating func queueUnsent(_ input: StreamInput) {
        if case .ticks(let count) = input, case .ticks(let before)? = unsentInputs.last,
           before + count <= MatchMessage.ticksPerItemMax {
            unsentInputs[unsentInputs.count - 1] = .ticks(before + count)
        } else {
            unsentInputs.append(input)
        }
    }

    /// Garbage landed on the local player this game (or cancelled by its offsetting).
    public var garbageLanded: Int { garbage.landed }
    /// Items sent in this game's stream so far (spawns, moves, garbage landings, tick counts).
    public internal(set) var inputsMade = 0
    var waitingSince: NetTime?
    var checkpointDue = false
    public internal(set) var isOut = false
    /// The game clock: ticks since the game began here.
    public internal(set) var ticks: UInt32 = 0
    /// The last game clock put in the stream, and whether the top-out tick is still to be sent.
    var clockSent: UInt32?
    var topOutClockDue = false
}
