import EggBot
import EggGame
import PeerNet
import PeerNetUDP

/// A practice match at the terminal: the player against a local bot, no network at all.
final class PracticeScreen: Screen {
    private var match: LocalMatch
    private let keys: KeyMap
    private let glyphs: Glyphs
    private let playerName: String
    private let level: BotLevel
    private var paused = false
    private var confirmingQuit = false
    /// The help overlay is open: the match stands still behind it.
    private(set) var helpShown = false
    private var lastChains = [0, 0]
    /// Per seat: what the match's results screen will show.
    private var tally: [PlayerTally]
    /// Ticks the match's games have run (for pairs per minute).
    private var matchTicks = 0
    /// After a game: its final boards and the banner, held for ``holdTicks`` ticks.
    private var finalGrids: [PlayerGrid]?
    private var banner: [String]?
    private var holdTicks = 0
    static let holdTicks = 3 * 60
    /// The match is over: its results, shown (after the last banner) until the player leaves or
    /// asks for a rematch.
    private var results: MatchResults?
    private(set) var showingResults = false
    /// Set while the terminal is too small to show the game: the game waits.
    private var tooSmall = false
    private(set) var finished = false
    /// Where each match's log goes (docs/formats.md, "The practice log"): a directory (a new
    /// file a match) or one file (`--log`; a rematch overwrites it); nil writes none.
    private let logTarget: PracticeLogTarget?
    /// The log of the match in progress, and the first failed write.
    private var log: LogFile?
    private(set) var logPaths: [String] = []
    private(set) var logFailure: String?
    /// A replay of a practice log: its moves are played instead of keys, `playbackSpeed` match
    /// ticks a frame.
    private let playback: PracticeLog.Loaded?
    private var playbackSpeed = 1.0
    private var playbackCredit = 0.0
    /// Chains of ``CastRecorder/markedChainMin`` or more made since the recorder last took them.
    private var chainsMade: [(seat: Int, length: Int)] = []

    init(name: String, level: BotLevel, options: LocalMatch.Options, keys: KeyMap, unicode: Bool, log: PracticeLogTarget? = nil,
         bell: Bool = false) {
        self.bell = BellWatch(enabled: bell)
        self.match = LocalMatch(options: options, seats: [.external, .bot(level)])
        self.keys = keys
        self.glyphs = Glyphs(unicode: unicode)
        self.playerName = name
        self.level = level
        self.tally = Self.freshTally(name: name, level: level)
        self.logTarget = log
        self.playback = nil
        openLog()
    }

    /// Plays a practice log back at `speed`, as the player saw the match.
    init(playback: PracticeLog.Loaded, speed: Double, unicode: Bool) {
        self.match = LocalMatch(options: playback.options, seats: playback.seats)
        self.keys = KeyMap()
        self.glyphs = Glyphs(unicode: unicode)
        self.playerName = playback.name
        self.level = playback.level
        self.tally = Self.freshTally(name: playback.name, level: playback.level)
        self.logTarget = nil
        self.playback = playback
        self.playbackSpeed = speed
        self.bell = BellWatch(enabled: false)
    }

    /// The optional bell (`--bell`): your chain of 3 or more, garbage landing on you, your
    /// top-out. Never in a replay.
    private var bell: BellWatch
    /// The bell rings at the next frame.
    private var bellDue = false
    /// The drop preview on the player's board (config `preview`; the preview key toggles it).
    private var showPreview = Config.current.preview == true
    /// Garbage landed on your board this game.
    private var garbageLandedOnYou = 0

    /// Starts the log of a new match (none in a replay).
    private func openLog() {
        guard let logTarget, playback == nil else { return }
        let path = logTarget.nextPath(match: logPaths.count + 1)
        do {
            let file = try LogFile(path: path, sealed: true)
            file.write(PracticeLog.header(peer: logTarget.peer, name: playerName, level: level, options: match.options,
                                          atMicroseconds: Int64(MonotonicClock.wallMicroseconds())))
            log = file
            logPaths.append(path)
            if logTarget.prunes { LogRetention.pruneOwnDirectory() }
        } catch {
            logFailure = "\(error)"
        }
    }

    /// Ends the log of the match in progress (its end line); call when the screen is done.
    func closeLog() {
        guard let file = log else { return }
        log = nil
        file.write(PracticeLog.stopped(tick: matchTicks))
        file.finish(atMicroseconds: Int64(MonotonicClock.wallMicroseconds()))
        if let failure = file.failure {
            if logFailure == nil { logFailure = failure }
        } else if let history = logTarget?.history, let path = logPaths.last {
            // The match goes into the history (off the game loop), finished or abandoned.
            history.record(logPath: path, passphrase: nil, flush: {})
        }
    }

    /// Paused, asking whether to leave, showing help, too small to show or over: the whole match stands still.
    var wantsTicks: Bool { !paused && !confirmingQuit && !helpShown && !tooSmall && ((!match.isOver && !playbackEnded) || holdTicks > 0) }

    /// Held moves repeat (kitty keyboard protocol) while a game is played, from pair to pair.
    func repeatKind(_ key: TerminalKey) -> KeyRepeatKind? {
        guard playback == nil, wantsTicks, holdTicks == 0, !match.isOver,
              let action = keys.action(for: key) else { return nil }
        switch action {
        case .left, .right: return .delayed
        case .softDrop: return .immediate
        default: return nil
        }
    }

    /// A replay reached the tick its player left the match at.
    private var playbackEnded: Bool { playback?.stoppedAt.map { matchTicks >= $0 } ?? false }

    func handle(key: TerminalKey) {
        if playback != nil {
            switch key {
            case .character("q"), .escape: finished = true
            case .character(" "), .character("p"): paused.toggle()
            case .character("+"), .character("="): playbackSpeed = min(64, playbackSpeed * 2)
            case .character("-"): playbackSpeed = max(0.25, playbackSpeed / 2)
            default: break
            }
            return
        }
        if confirmingQuit {
            if key == .character("y") || key == .character("Y") { finished = true }
            confirmingQuit = false
            return
        }
        if helpShown {
            // Any key closes the overlay, and does nothing else.
            helpShown = false
            return
        }
        if HelpOverlay.opens(key, keys: keys) {
            helpShown = true
            return
        }
        guard let action = keys.action(for: key) else { return }
        switch action {
        case .quit:
            if showingResults { finished = true } else { confirmingQuit = true }
        case .pause:
            paused.toggle()
        case .ready:
            if showingResults { restart() }
        case .preview:
            showPreview.toggle()
        default:
            guard !paused, !match.isOver, holdTicks == 0, let move = Self.move(for: action) else { return }
            match.enqueue(move, seat: 0)
            // Applied at the next tick: the log says after how many ticks it was made.
            log?.write(PracticeLog.move(tick: matchTicks, move))
        }
    }

    static func move(for action: KeyAction) -> Move? {
        switch action {
        case .left: .left
        case .right: .right
        case .rotateCW: .rotateCW
        case .rotateCCW: .rotateCCW
        case .softDrop: .down
        case .hardDrop: .hardDrop
        default: nil
        }
    }

    func tick() -> Bool {
        guard wantsTicks else { return false }
        guard playback != nil else { return step() }
        // A replay runs `playbackSpeed` match ticks a frame (hold ticks included).
        playbackCredit += playbackSpeed
        var changed = false
        while playbackCredit >= 1 && wantsTicks {
            playbackCredit -= 1
            changed = step() || changed
        }
        return changed
    }

    /// One tick of the match, or of the hold after a game.
    private func step() -> Bool {
        if holdTicks > 0 {
            // The finished game's boards and banner stay up; the next game waits.
            holdTicks -= 1
            if holdTicks == 0 {
                banner = nil
                showingResults = results != nil
            }
            return holdTicks == 0
        }
        if let playback, !match.isOver {
            for move in playback.moves[matchTicks] ?? [] { match.enqueue(move, seat: 0) }
        }
        if !match.isOver { matchTicks += 1 }
        let events = match.tick()
        for event in events { note(event) }
        let own = match.grids[0]
        let board = BellWatch.Board(game: UInt32(match.gamesPlayed), resolutions: own.chainsResolved, steps: own.chainSteps.count,
                                    garbageLanded: garbageLandedOnYou, toppedOut: false)
        if bell.observe(board, at: MonotonicClock.now().nanoseconds) { bellDue = true }
        // The title's clock shows whole seconds: a frame when it turns over.
        return !events.isEmpty || match.gameTicks % 60 == 0
    }

    /// Keeps the match's tally and reacts to the end of a game or of the match.
    private func note(_ event: LocalMatch.Event) {
        switch event {
        case .input(let seat, _, .ticked(_, let chain?)):
            lastChains[seat] = chain.chain
            if chain.chain >= CastRecorder.markedChainMin { chainsMade.append((seat, chain.chain)) }
            tally[seat].pairsPlaced += 1
            tally[seat].largestChain = max(tally[seat].largestChain, chain.chain)
        case .input(0, .landGarbage(let count), _):
            garbageLandedOnYou += count
        case .garbageSent(let from, let to, let count):
            tally[from].garbageSent += count
            tally[to].garbageReceived += count
        case .gameOver(let winner):
            let game = match.gamesPlayed
            if (match.lastGameGrids ?? match.grids)[0].state == .toppedOut, bell.ring(at: MonotonicClock.now().nanoseconds) { bellDue = true }
            garbageLandedOnYou = 0
            log?.write(PracticeLog.gameOver(tick: matchTicks, game: game, winner: winner, grids: match.lastGameGrids ?? match.grids))
            let out = (match.lastGameGrids ?? match.grids).map { $0.state == .toppedOut }
            let who = out[0] && out[1] ? "You both topped out" : (out[0] ? "You topped out" : "The bot topped out")
            let result = winner.map { $0 == 0 ? "you win game \(game)!" : "the bot wins game \(game)." } ?? "game \(game) is a draw."
            banner = ["\(who): \(result)", "Games: you \(match.wins[0]), the bot \(match.wins[1])"]
            finalGrids = match.lastGameGrids
            holdTicks = Self.holdTicks
            lastChains = [0, 0]
        case .matchOver(let winner):
            for seat in 0..<2 { tally[seat].wins = match.wins[seat] }
            let headline = winner.map { $0 == 0 ? "You win the match!" : "You lose: the bot wins the match." } ?? "No winner."
            results = MatchResults(headline: headline, won: winner.map { $0 == 0 }, games: match.gamesPlayed,
                                   seconds: Double(matchTicks) / 60, players: tally)
        default:
            break
        }
    }

    func interrupted() { finished = true }

    /// "1:05": a game clock of `ticks` (60 a second) as minutes and seconds.
    static func clock(ticks: Int) -> String {
        let seconds = max(0, ticks) / 60
        return "\(seconds / 60):" + (seconds % 60 < 10 ? "0" : "") + "\(seconds % 60)"
    }

    private func restart() {
        closeLog()
        var options = match.options
        options.seed = options.seed &+ 0x9E37_79B9_7F4A_7C15
        match = LocalMatch(options: options, seats: match.seats)
        lastChains = [0, 0]
        tally = Self.freshTally(name: playerName, level: level)
        matchTicks = 0
        results = nil
        showingResults = false
        banner = nil
        finalGrids = nil
        holdTicks = 0
        openLog()
    }

    static func freshTally(name: String, level: BotLevel) -> [PlayerTally] {
        [PlayerTally(name: name, isLocal: true), PlayerTally(name: "bot (\(level.rawValue))", isLocal: false)]
    }

    func draw(on term: Terminal) {
        if bellDue {
            bellDue = false
            term.bell()
        }
        drawScreen(on: term)
        if helpShown { HelpOverlay.draw(place: .practice, keys: keys, rules: match.options.rules, on: term) }
    }

    private func drawScreen(on term: Terminal) {
        tooSmall = GameLoop.drawTooSmall(on: term, columns: 2 * MatchView.fullWidth, rows: MatchView.minimumRows)
        if tooSmall { return }
        if showingResults, let results {
            results.draw(on: term, hint: playback != nil ? "end of log: q quit" : "\(keys.label(.ready)): rematch   \(keys.label(.quit)): quit")
            return
        }
        let game = match.gamesPlayed + (match.isOver || holdTicks > 0 ? 0 : 1)
        let ticks = holdTicks > 0 || match.isOver ? 0 : match.gameTicks
        let clock = Self.clock(ticks: ticks)
        if playback != nil {
            term.put(0, 0, GameLoop.fitting([
                "eggs replay — practice of \(playerName) against the \(level.rawValue) bot — game \(game) — \(clock)",
                "replay — practice vs \(level.rawValue) bot — game \(game) — \(clock)",
                "replay — game \(game) — \(clock)",
            ], width: term.columns), bold: true)
        } else {
        term.put(0, 0, GameLoop.fitting([
            "eggs — practice against the \(level.rawValue) bot — game \(game) — \(clock)",
            "eggs — practice vs \(level.rawValue) bot — game \(game) — \(clock)",
            "practice — game \(game) — \(clock)",
        ], width: term.columns), bold: true)
        }
        let grids = finalGrids ?? match.grids
        let panels = (0..<2).map { seat in
            PlayerPanel(
                name: seat == 0 ? playerName : "bot (\(level.rawValue))",
                grid: grids[seat],
                next: finalGrids == nil ? match.nextPairs(seat: seat) : [],
                wins: match.wins[seat],
                incomingGarbage: finalGrids == nil ? match.queuedGarbage(seat: seat) : 0,
                chain: lastChains[seat],
                status: grids[seat].state == .toppedOut ? "out" : (seat == 0 ? "you" : ""),
                isLocal: seat == 0,
                alert: grids[seat].state == .toppedOut,
                preview: seat == 0 && showPreview && playback == nil && finalGrids == nil ? grids[seat].dropPreview : []
            )
        }
        if finalGrids == nil, let frames = ChainFrames.shared {
            for seat in 0..<2 { frames.drew(.owner, board: "\(seat)/\(match.gamesPlayed)", grid: grids[seat]) }
        }
        let area = MatchView.draw(panels, on: term, glyphs: glyphs, top: 1)
        if let banner { Banner.draw(banner, on: term, centreRow: area.centreRow) }
        let bottom = term.rows - 1
        if playback != nil {
            term.put(bottom, 0, "space pause  +/- speed ×\(playbackSpeed)  q quit\(paused ? "  PAUSED" : "")", bold: paused)
        } else if confirmingQuit {
            term.put(bottom, 0, "Leave the match? y to leave, any other key to stay", pair: Terminal.pairAlert, bold: true)
        } else if paused {
            term.put(bottom, 0, "Paused.  \(keys.label(.pause)): resume  \(HelpOverlay.hint)  \(keys.label(.quit)): quit", bold: true)
        } else {
            term.put(bottom, 0, keys.playHints(pause: true, width: term.columns))
        }
    }
}

/// Where a practice screen writes its matches' logs.
struct PracticeLogTarget {
    /// The ID the logs are named after (a fresh one a run).
    var peer: PeerID
    /// One file for every match (`--log`: each rematch overwrites it), else nil: a new file a
    /// match in eggs-tui's own directory, which is then kept within the config's bound.
    var file: String?
    /// Records each match in the history when its log closes; nil records nothing.
    var history: HistoryRecorder? = nil

    var prunes: Bool { file == nil }

    /// The path of this run's `match`-th log (from 1).
    func nextPath(match: Int) -> String {
        file ?? "\(NetworkOptions.stateDirectory())/\(peer.hex)-\(MonotonicClock.wallMicroseconds() / 1_000_000)-practice\(match).jsonl"
    }
}

extension PracticeScreen {
    /// The players' names by seat.
    var seatNames: [String] { [playerName, "bot (\(level.rawValue))"] }

    /// Takes the chains of 3 or more made since the last call (for a recording's markers).
    func takeChains() -> [(seat: Int, length: Int)] {
        defer { chainsMade = [] }
        return chainsMade
    }

    /// What a recording shows now: what the screen would.
    func castScene() -> CastScreen.Scene {
        if showingResults, let results { return .results(results) }
        let grids = finalGrids ?? match.grids
        let panels = (0..<2).map { seat in
            CastScreen.Panel(name: seatNames[seat], wins: match.wins[seat], grid: grids[seat],
                             state: grids[seat].state == .toppedOut ? "out" : (lastChains[seat] > 1 && finalGrids == nil ? "\(lastChains[seat])-chain!" : ""))
        }
        if let banner { return .held(panels, banner: banner, number: match.gamesPlayed) }
        let game = match.gamesPlayed + (match.isOver ? 0 : 1)
        return .boards(header: "practice against the \(level.rawValue) bot — game \(game), best of \(match.options.bestOf)", panels)
    }
}
