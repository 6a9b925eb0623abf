import ArgumentParser
import Consensus
import EggBot
import EggGame
import PeerNet
import PeerNetUDP
#if canImport(Glibc)
import Glibc
#endif

/// A headless bot peer: a ``NetPeer`` whose moves come from the EggGame bot, or a
/// spectator that only watches (and checks every checkpoint of every player).
final class BotPeer {
    let peer: NetPeer
    let isSpectator: Bool
    private var player: BotPlayer
    private let settings: MatchSettings
    private let playersWanted: Int
    private let gamesMax: Int?
    private(set) var stopped = false
    /// For the per-game lines (BotGameLines.swift): games printed, and whether it plays this match.
    var gamesPrinted = 0
    var playing = false
    /// Locks of this bot's own grid that made a chain of 3 or more (all games).
    private(set) var chainsOf3 = 0
    private var lastCountedLock: (game: UInt32, pair: Int)?
    /// The external engine choosing this bot's placements (`--engine`), and its player.
    private let engine: EngineProcess?
    private var enginePlayer: EnginePlayer

    init(peer: NetPeer, level: BotLevel, seed: UInt64, settings: MatchSettings, playersWanted: Int, gamesMax: Int?, spectator: Bool = false,
         engine: EngineProcess? = nil) {
        self.peer = peer
        self.engine = engine
        self.enginePlayer = EnginePlayer(level: level)
        self.isSpectator = spectator
        self.player = BotPlayer(level: level, seed: seed)
        self.settings = settings
        self.playersWanted = playersWanted
        self.gamesMax = gamesMax
    }

    /// Whether this bot has played (a spectator: watched) the games it was asked for.
    var isDone: Bool { gamesMax.map { peer.gamesOver >= $0 } ?? false }

    /// What the stall watch looks at, read under the peer's lock.
    func progress() -> StallWatch.Sample {
        let (match, _, view) = peer.snapshot()
        // A spectator is a receiver: in no view, it follows the players' (their view, not empty).
        let othersInView = isSpectator ? !view.members.isEmpty : view.members.contains(peer.id) && view.members.count > 1
        // Progress is expected in a match, once ready with the players there, and while
        // waiting for the room's state from the others; not while PeerNet is blocked (cut off
        // from most of the view: the others are not there), which PeerNet itself bounds by
        // giving the view up (then this peer is back in the lobby, see `MatchPeer`).
        let expects = (match.match != nil || (match.isReady && match.playersInView >= playersWanted)
            || (!match.isSynced && othersInView)) && peer.status() != .blocked
        return StallWatch.Sample(inGroup: othersInView, expectsProgress: expects && !isDone,
                                 progress: UInt64(match.stats.delivered))
    }

    /// Placements the engine chose (answers it gave), and those that became hard drops.
    var engineAnswers: Int { enginePlayer.answers }
    var engineFallbacks: Int { enginePlayer.fallbacks }

    /// One 60 Hz tick: get ready when enough players are in the room, play the live pair.
    /// - Throws: ``CommandFailure`` (status 2) when the engine fails.
    func tick() throws {
        var player = self.player, enginePlayer = self.enginePlayer
        var chainsOf3 = self.chainsOf3, lastCountedLock = self.lastCountedLock
        let playersWanted = self.playersWanted, settings = self.settings, engine = self.engine, id = peer.id
        let playing = !isSpectator, wantsMore = !isDone
        let failure: Error? = peer.withMatch { match, now in
            // A spectator watches every match; a player plays until it has its games.
            if !playing || wantsMore {
                match.getReady(whenPlayers: playersWanted, settings: settings, wantsToPlay: playing)
            }
            // Count each chain once, whether a move or gravity locked its pair (bots hold their drop
            // for their pace, so gravity often does): a chain ends in time after its lock, and the
            // grid counts the resolutions that ended.
            func countLock(_ match: MatchPeer) {
                guard playing, let owner = match.owner, let chain = owner.grid.lastChain else { return }
                let lock = (game: owner.game, pair: owner.grid.chainsResolved)
                guard lastCountedLock.map({ $0 != lock }) ?? true else { return }
                lastCountedLock = lock
                if chain.chain >= 3 { chainsOf3 += 1 }
            }
            match.tick(now: now)
            countLock(match)
            guard playing, let grid = match.owner?.grid, grid.state == .live, match.owner?.isOut == false else { return nil }
            let preview = match.ownerNextPairs
            let mirrors = match.match?.mirrors ?? [:]
            let queued = mirrors[id].map { max(0, $0.garbageReceived - $0.garbageLanded) } ?? 0
            let move: Move?
            // The boards of the opponents still playing, for an engine or a level that reads them.
            let opponents = engine != nil || player.level.readsOpponents
                ? (match.match?.players ?? []).filter { $0 != id }.compactMap { mirrors[$0] }.filter { !$0.isToppedOut }.map(\.grid.board)
                : []
            if let engine {
                do {
                    move = try enginePlayer.tick(engine: engine, grid: grid, preview: preview, garbage: queued, opponents: opponents)
                } catch {
                    return error
                }
            } else {
                move = player.tick(grid: grid, preview: preview, context: BotContext(incomingGarbage: queued, opponents: opponents))
            }
            if let move { match.applyLocal(move, now: now) }
            countLock(match)
            return nil
        }
        self.lastCountedLock = lastCountedLock
        self.player = player
        self.enginePlayer = enginePlayer
        self.chainsOf3 = chainsOf3
        if let failure { throw failure }
    }

}

/// When a bot has failed by stalling (docs/playing.md and docs/network.md): it never formed a group with another peer within
/// `groupTimeout` of its start, or progress was expected (a match, a start with the players
/// there, a snapshot awaited) and no message was delivered for `stallTimeout`. Pure: the
/// caller feeds it samples and the time.
struct StallWatch {
    struct Sample {
        /// In a view with at least one other peer.
        var inGroup: Bool
        var expectsProgress: Bool
        /// Grows with every delivered message (the peer's own included).
        var progress: UInt64
    }

    let groupTimeoutNanoseconds: UInt64
    let stallTimeoutNanoseconds: UInt64
    let start: NetTime
    private(set) var formedGroup = false
    private var lastProgress: UInt64?
    private var lastChange: NetTime
    /// When the last sample was taken: samples come every 100 ms, so a longer gap means the
    /// process was stopped (suspended) meanwhile; the stall clock starts again after it.
    private var lastSample: NetTime?
    /// Samples further apart than this mean the process was stopped.
    static let pauseNanoseconds: UInt64 = 2_000_000_000
    /// Pauses seen.
    private(set) var pauses = 0

    init(start: NetTime, groupTimeoutNanoseconds: UInt64 = 15_000_000_000, stallTimeoutNanoseconds: UInt64 = 10_000_000_000) {
        self.start = start
        self.lastChange = start
        self.groupTimeoutNanoseconds = groupTimeoutNanoseconds
        self.stallTimeoutNanoseconds = stallTimeoutNanoseconds
    }

    /// Takes one sample at `now`; returns the failure's reason once the bot has stalled.
    mutating func observe(_ sample: Sample, now: NetTime) -> String? {
        if let lastSample, now.nanoseconds(since: lastSample) >= Self.pauseNanoseconds {
            // Stopped, not stalled: the peer rejoins now (its core heard of the pause too).
            pauses += 1
            lastChange = now
        }
        lastSample = now
        if sample.inGroup { formedGroup = true }
        if !formedGroup && now.nanoseconds(since: start) >= groupTimeoutNanoseconds {
            return "never formed a group with another peer within \(Self.seconds(groupTimeoutNanoseconds)) s"
        }
        if sample.progress != lastProgress || !sample.expectsProgress {
            lastProgress = sample.progress
            lastChange = now
            return nil
        }
        if now.nanoseconds(since: lastChange) >= stallTimeoutNanoseconds {
            return "players were present and nothing progressed for \(Self.seconds(stallTimeoutNanoseconds)) s"
        }
        return nil
    }

    static func seconds(_ nanoseconds: UInt64) -> String {
        nanoseconds % 1_000_000_000 == 0 ? "\(nanoseconds / 1_000_000_000)" : format3(Double(nanoseconds) / 1e9)
    }
}

extension MatchPeer {
    /// Players (not spectators) in the current view.
    var playersInView: Int {
        guard let view else { return 0 }
        return view.members.filter { lobby[$0]?.role == .player }.count
    }

    /// In the lobby, once synced and not yet ready: votes ready when at least `players` players
    /// are in the view. Spectators use it too, so they never hold a start up, yet never vote
    /// before the players are there (a start voted by watchers alone fails, and they would
    /// vote again every tick).
    mutating func getReady(whenPlayers players: Int, settings: MatchSettings, wantsToPlay: Bool) {
        guard isSynced, match == nil, !isReady, playersInView >= players else { return }
        setReady(settings: settings, wantsToPlay: wantsToPlay)
    }
}

extension EggsCommand {
    /// Headless bot peers (docs/playing.md and docs/network.md).
    struct Bot: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run headless bot peers that play matches on the network.",
            discussion: """
                Bots get ready when --players players are in the room and play match after match until --seconds or \
                --games is reached, or Ctrl-C. Each bot writes its own log: with one peer, --log PATH is that log; with \
                more (--count plus --spectators above 1), each peer's log is PATH with '-<peer ID>' before '.jsonl' \
                (bots.jsonl gives bots-<id>.jsonl; without .jsonl, PATH-<id>). A log that cannot be written (a full \
                disk) stops the run: one line naming the file and the error, exit 1.
                """
        )

        @OptionGroup var network: NetworkOptions
        @OptionGroup var settings: MatchSettingsOptions

        @Option(parsing: .unconditional, help: "How many bot players this process runs (with --id, their IDs count up from it).")
        var count: Int = 1

        @Option(help: ArgumentHelp("The bots' level: easy, medium, hard or insane.", discussion: BotLevel.paceHelp))
        var level: BotLevel = .medium

        @Option(help: ArgumentHelp(
            "An external engine choosing each bot's placements (a shell command; one process per bot).",
            discussion: "It speaks the line protocol of docs/formats.md (the engine protocol) on its stdin and stdout and plays at the pace of --level. A bad line, a silent engine or one that exits: one line naming it, exit 2."))
        var engine: String?

        @Option(name: .customLong("engine-timeout"), parsing: .unconditional, help: "Milliseconds an engine may take to answer (1 to 60000).")
        var engineTimeout: Int = 1_000

        @Option(parsing: .unconditional, help: "Stop after this many seconds.")
        var seconds: Double?

        @Option(parsing: .unconditional, help: "Stop after each bot has played this many games.")
        var games: Int?

        @Option(parsing: .unconditional, help: "How many players a match waits for.")
        var players: Int = 2

        @Option(parsing: .unconditional, help: "How many spectator peers this process runs besides the bots (they watch and check every checkpoint).")
        var spectators: Int = 0

        @Option(help: "Write a JSON report here at exit.")
        var summary: String?

        @Flag(help: "Record each bot's matches in the history database ($XDG_DATA_HOME/eggs/history.sqlite) as they end.")
        var history = false

        @Flag(help: "Print nothing per finished game (by default each bot prints one line a game), and no progress line on a terminal.")
        var quiet = false

        @Option(parsing: .unconditional, help: "Seed of the bots' moves (default: random).")
        var seed: UInt64?

        @Option(name: .customLong("group-timeout"), parsing: .unconditional, help: .hidden)
        var groupTimeout: Double = 15

        @Option(name: .customLong("stall-timeout"), parsing: .unconditional, help: .hidden)
        var stallTimeout: Double = 10

        func validate() throws {
            guard (0...16).contains(count) else { throw ValidationError("--count must be from 0 to 16") }
            guard (0...128).contains(spectators) else { throw ValidationError("--spectators must be from 0 to 128") }
            guard count + spectators > 0 else { throw ValidationError("--count and --spectators are both 0: nothing to run") }
            guard (2...8).contains(players) else { throw ValidationError("--players must be from 2 to 8") }
            if let seconds, !(seconds > 0 && seconds <= 86_400) { throw ValidationError("--seconds must be from 0 to 86400") }
            if let games, !(1...10_000).contains(games) { throw ValidationError("--games must be from 1 to 10000") }
            guard groupTimeout > 0 && groupTimeout <= 3_600 else { throw ValidationError("--group-timeout must be from 0 to 3600") }
            guard stallTimeout > 0 && stallTimeout <= 3_600 else { throw ValidationError("--stall-timeout must be from 0 to 3600") }
            guard (1...60_000).contains(engineTimeout) else { throw ValidationError("--engine-timeout must be from 1 to 60000") }
            if engine != nil && count == 0 { throw ValidationError("--engine needs --count of 1 or more") }
        }

        func run() throws {
            StopSignals.install()
            var generator = SystemRandomNumberGenerator()
            let baseSeed = seed ?? generator.next()
            let firstID = network.peerID()
            let matchSettings = settings.matchSettings
            var engines: [EngineProcess] = []
            if let engine {
                do {
                    for _ in 0..<count { engines.append(try EngineProcess(command: engine, timeoutMilliseconds: engineTimeout)) }
                } catch {
                    EngineProcess.close(engines)
                    throw error
                }
            }
            // However the run ends (its end, an error, SIGINT or SIGTERM), each engine's process group ends with it.
            defer { EngineProcess.close(engines) }
            // One recorder for every bot of the process; a bad database is one line on stderr.
            let recorder = history ? HistoryRecorder { FileHandleOutput.stderr("eggs-tui: \($0)") } : nil
            defer { recorder?.finish() }
            var bots: [BotPeer] = []
            for index in 0..<(count + spectators) {
                let spectator = index >= count
                let id = PeerID(firstID.raw &+ UInt64(index))
                var net = PeerNetConfig(room: network.room, peerID: id, incarnation: PeerNetConfig.freshIncarnation())
                net.passphrase = network.effectivePassphrase
                let logPath = count + spectators == 1 ? network.logPath(peer: id) : Self.numbered(network.logPath(peer: id), id: id, explicit: network.log != nil)
                let options = NetPeer.Options(name: (spectator ? "watcher-" : "bot-") + id.hex.suffix(4), role: spectator ? .spectator : .player,
                                              net: net, multicast: network.multicast, logPath: logPath, rules: settings.ruleSet.name,
                                              startingHeight: settings.startingHeight)
                let peer: NetPeer
                do {
                    peer = try NetPeer(options: options)
                } catch let error as MulticastSocketError {
                    throw CommandFailure.badInput(error.description)
                }
                peer.history = recorder
                bots.append(BotPeer(peer: peer, level: level, seed: baseSeed &+ UInt64(index), settings: matchSettings,
                                    playersWanted: players, gamesMax: games, spectator: spectator,
                                    engine: spectator || engines.isEmpty ? nil : engines[index]))
            }
            // Logs in eggs-tui's own directory are kept within the config's bound (the bots' own
            // logs are open, so locked: never deleted).
            if network.log == nil { LogRetention.pruneOwnDirectory() }
            let start = MonotonicClock.now()
            let deadline = seconds.map { start.adding(nanoseconds: UInt64($0 * 1e9)) }
            var nextTick = start.nanoseconds
            var nextSummary = start.adding(milliseconds: 1_000)
            var watches = bots.map { _ in
                StallWatch(start: start, groupTimeoutNanoseconds: UInt64(groupTimeout * 1e9), stallTimeoutNanoseconds: UInt64(stallTimeout * 1e9))
            }
            var nextWatch = start.adding(milliseconds: 100)
            var stalled: String?
            // On a terminal: one progress line on stderr, redrawn in place at most 4 times a second.
            var progress = !quiet && isatty(STDERR_FILENO) == 1 ? BotProgressLine() : nil
            defer { progress?.clear() }
            while !StopSignals.stopRequested {
                let now = MonotonicClock.now()
                if now >= nextWatch {
                    for (index, bot) in bots.enumerated() where stalled == nil {
                        if let reason = watches[index].observe(bot.progress(), now: now) { stalled = "bot \(bot.peer.id.hex): \(reason)" }
                    }
                    nextWatch = now.adding(milliseconds: 100)
                    if stalled != nil { break }
                }
                // The summary is kept current while running, so a soak can show progress
                // and a killed bot still leaves its last report.
                if let summary, now >= nextSummary {
                    try BotReport.write(bots.map { BotReport(bot: $0) }, to: summary)
                    nextSummary = now.adding(milliseconds: 1_000)
                }
                if let deadline, now >= deadline { break }
                if games != nil && bots.allSatisfy(\.isDone) { break }
                if let taken = bots.first(where: { $0.peer.ownIDInUse }) {
                    for bot in bots { bot.peer.close() }
                    throw CommandFailure.badInput("ID \(taken.peer.id.hex) is in use by another live peer in this room: give another --id")
                }
                if let failure = bots.lazy.compactMap({ $0.peer.logFailure }).first {
                    let reports = bots.map { BotReport(bot: $0) }
                    for bot in bots { bot.peer.close() }
                    // The summary still tells what was played (its own failure is not the news here).
                    if let summary { try? BotReport.write(reports, to: summary) }
                    throw CommandFailure.detected(failure)
                }
                if now.nanoseconds >= nextTick {
                    do {
                        for bot in bots { try bot.tick() }
                    } catch {
                        let reports = bots.map { BotReport(bot: $0) }
                        for bot in bots { bot.peer.close() }
                        if let summary { try? BotReport.write(reports, to: summary) }
                        throw error
                    }
                    if !quiet { for bot in bots { bot.printFinishedGames { progress?.clear() } } }
                    progress?.update(bots, elapsedNanoseconds: now.nanoseconds - start.nanoseconds)
                    nextTick += GameLoop.tickNanoseconds
                    if nextTick < now.nanoseconds { nextTick = now.nanoseconds + GameLoop.tickNanoseconds }
                }
                let sleepNanos = nextTick > MonotonicClock.now().nanoseconds ? nextTick - MonotonicClock.now().nanoseconds : 0
                if sleepNanos > 0 { usleep(UInt32(min(sleepNanos / 1_000, 100_000))) }
            }
            progress?.clear()
            if !quiet { for bot in bots { bot.printFinishedGames() } }
            let reports = bots.map { BotReport(bot: $0) }
            for bot in bots { bot.peer.close() }
            if let summary { try BotReport.write(reports, to: summary) }
            if let failure = bots.lazy.compactMap({ $0.peer.logFailure }).first { throw CommandFailure.detected(failure) }
            let desyncs = reports.reduce(0) { $0 + $1.desyncs }
            if desyncs > 0 { throw CommandFailure.detected("\(desyncs) checkpoint mismatch(es); see the logs") }
            if let stalled { throw CommandFailure.detected(stalled) }
        }

        static func numbered(_ path: String, id: PeerID, explicit: Bool) -> String {
            guard explicit else { return path }
            if path.hasSuffix(".jsonl") { return String(path.dropLast(6)) + "-\(id.hex).jsonl" }
            return path + "-\(id.hex)"
        }
    }
}

/// `bot` on a terminal: one line on stderr (the game, the time, the wins), redrawn in place at
/// most 4 times a second and cleared before a game's line is printed and at the end.
struct BotProgressLine {
    private var shown = false
    private var last: UInt64 = 0
    private var text = ""

    mutating func update(_ bots: [BotPeer], elapsedNanoseconds: UInt64) {
        guard !shown || elapsedNanoseconds >= last + 250_000_000 else { return }
        let games = bots.map(\.peer.gamesOver).max() ?? 0
        let wins = bots.filter { !$0.isSpectator }.map { "\($0.peer.id.hex.suffix(4)) \($0.peer.wins)" }.joined(separator: ", ")
        let line = "game \(games + 1) · \(PracticeScreen.clock(ticks: Int(elapsedNanoseconds / 1_000_000_000) * 60)) · wins: \(wins.isEmpty ? "-" : wins)"
        last = elapsedNanoseconds
        guard line != text || !shown else { return }
        text = line
        shown = true
        FileHandleOutput.writeAll(STDERR_FILENO, "\r\u{1B}[K" + (isatty(STDERR_FILENO) == 1 ? line : ""))
    }

    /// Takes the line off the terminal (before other output, and at the end).
    mutating func clear() {
        guard shown else { return }
        FileHandleOutput.writeAll(STDERR_FILENO, "\r\u{1B}[K")
        shown = false
        text = ""
    }
}

/// One bot's part of the `--summary` JSON (docs/formats.md).
struct BotReport {
    var peer: PeerID
    var role: String
    var games: Int
    var wins: Int
    var checkpointsVerified: Int
    var desyncs: Int
    var maxEggWaitMs: Double
    /// How long the player has been waiting for its next egg right now, beyond `maxEggWaitMs` (0 if not).
    var eggWaitNowMs: Double
    var sent: UInt64
    var retransmitted: UInt64
    var droppedInvalid: UInt64
    var delivered: UInt64
    var views: UInt64
    /// Ticks, moves and spawns held while the send queue was full (the peer was lagging).
    var sendHolds: Int
    /// Own payloads waiting to be sent right now.
    var sendQueued: Int
    /// Messages dropped as sent by an earlier life of a rejoined member's stream.
    var staleDropped: Int
    var chainsOf3: Int
    /// Placements an external engine chose, and those it chose out of reach (played as hard drops).
    var engineAnswers: Int
    var engineFallbacks: Int
    var log: String
    /// Times this process was found stopped (suspended) longer than a suspect timeout, and
    /// views given up (blocked too long, or after such a pause): each rejoined the room.
    var pauses: UInt64
    var viewsAbandoned: UInt64
    /// ID collisions: newcomers refused under a live member's ID, and this peer's own ID heard
    /// from another live incarnation.
    var collisions: UInt64
    /// Data items tagged with a future view, never stored (counted, see docs/network.md).
    var futureViewDropped: UInt64
    /// Joiners dropped from a view change for not answering in time (proven peers that do not
    /// run the protocol, or a real one far too slow).
    var joinersDropped: UInt64
    /// Datagrams and bytes this peer sent (all kinds, repairs and snapshots included).
    var datagramsSent: UInt64
    var bytesSent: UInt64
    /// How long after its start the peer first had the room's state (a spectator: followed the
    /// players); `nil` if never.
    var syncedAfterMs: Double?
    /// The longest pause between two messages delivered from other peers within a game.
    var longestDeliveryGapMs: Double
    /// The pauses of 20 ms or more within a game (the longest 64): when each ended (wall clock,
    /// ms since the epoch) and how long it was (ms).
    var deliveryGaps: [(endedAtMs: Double, ms: Double)]
    /// Spectators (receivers) this peer heard within the last 3 s.
    var watching: Int

    init(bot: BotPeer) {
        let (match, net, _) = bot.peer.snapshot()
        peer = bot.peer.id
        role = bot.isSpectator ? "spectator" : "player"
        games = bot.peer.gamesOver
        wins = bot.peer.wins
        checkpointsVerified = match.stats.checkpointsVerified
        desyncs = match.stats.desyncs
        maxEggWaitMs = Double(match.stats.maxEggWaitNanoseconds) / 1e6
        // A match stalled for good never ends its wait, so `maxEggWaitMs` alone would not show it.
        eggWaitNowMs = Double(match.longestEggWaitNanoseconds(now: MonotonicClock.now()) - match.stats.maxEggWaitNanoseconds) / 1e6
        sent = net.messagesSent
        retransmitted = net.messagesRetransmitted
        droppedInvalid = net.droppedInvalid + UInt64(match.stats.invalidDropped)
        delivered = net.messagesDelivered
        views = net.viewsInstalled
        sendHolds = match.stats.backpressureHolds
        sendQueued = match.pendingSendCount
        staleDropped = match.stats.staleDropped
        chainsOf3 = bot.chainsOf3
        engineAnswers = bot.engineAnswers
        engineFallbacks = bot.engineFallbacks
        log = bot.peer.logPath
        pauses = net.pausesResumed
        viewsAbandoned = net.viewsAbandoned
        collisions = net.collisionsRefused + net.collisionsHeard
        futureViewDropped = net.messagesFutureView
        joinersDropped = net.joinersDropped
        datagramsSent = net.datagramsSent
        bytesSent = net.bytesSent
        syncedAfterMs = bot.peer.syncedAfterNanoseconds.map { Double($0) / 1e6 }
        longestDeliveryGapMs = Double(bot.peer.deliveryGaps.longestNanoseconds) / 1e6
        deliveryGaps = bot.peer.deliveryGaps.noted.map { (Double($0.endedAtWallMicroseconds) / 1000, Double($0.nanoseconds) / 1e6) }
        watching = bot.peer.watching()
    }

    var json: JSONValue {
        .object([
            ("peer", .string(peer.hex)), ("role", .string(role)), ("games", .int(Int64(games))), ("wins", .int(Int64(wins))),
            ("checkpointsVerified", .int(Int64(checkpointsVerified))), ("desyncs", .int(Int64(desyncs))),
            ("maxEggWaitMs", .double((maxEggWaitMs * 1000).rounded() / 1000)), ("sent", .int(Int64(clamping: sent))),
            ("retransmitted", .int(Int64(clamping: retransmitted))), ("droppedInvalid", .int(Int64(clamping: droppedInvalid))),
            ("delivered", .int(Int64(clamping: delivered))), ("views", .int(Int64(clamping: views))),
            ("eggWaitNowMs", .double((eggWaitNowMs * 1000).rounded() / 1000)),
            ("sendHolds", .int(Int64(clamping: sendHolds))), ("sendQueued", .int(Int64(clamping: sendQueued))),
            ("staleDropped", .int(Int64(clamping: staleDropped))), ("chainsOf3", .int(Int64(clamping: chainsOf3))),
            ("engineAnswers", .int(Int64(clamping: engineAnswers))), ("engineFallbacks", .int(Int64(clamping: engineFallbacks))),
            ("pauses", .int(Int64(clamping: pauses))), ("viewsAbandoned", .int(Int64(clamping: viewsAbandoned))),
            ("collisions", .int(Int64(clamping: collisions))), ("futureViewDropped", .int(Int64(clamping: futureViewDropped))),
            ("joinersDropped", .int(Int64(clamping: joinersDropped))),
            ("datagramsSent", .int(Int64(clamping: datagramsSent))), ("bytesSent", .int(Int64(clamping: bytesSent))),
            ("syncedAfterMs", syncedAfterMs.map { .double(($0 * 1000).rounded() / 1000) } ?? .null),
            ("longestDeliveryGapMs", .double((longestDeliveryGapMs * 1000).rounded() / 1000)),
            ("deliveryGaps", .array(deliveryGaps.map { gap in
                .object([("endedAtMs", .int(Int64(gap.endedAtMs.rounded()))), ("ms", .double((gap.ms * 1000).rounded() / 1000))])
            })),
            ("watching", .int(Int64(watching))),
            ("log", .string(log)),
        ])
    }

    /// Writes the report whole (to a temporary file, then renamed), so a reader never sees half.
    /// - Throws: ``CommandFailure`` (status 1) naming the file and the error (a full disk).
    static func write(_ reports: [BotReport], to path: String) throws {
        let text = JSONValue.object([("bots", .array(reports.map(\.json)))]).spacedSerialized
        try FileHandleOutput.writeFileAtomically(path, text + "\n", what: "summary")
    }
}

func format3(_ value: Double) -> String {
    let scaled = (value * 1000).rounded()
    let whole = Int(scaled) / 1000, frac = Int(scaled) % 1000
    return "\(whole).\(String(frac + 1000).dropFirst())"
}
