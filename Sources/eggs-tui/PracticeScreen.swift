import EggBot
import EggGame

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

    init(name: String, level: BotLevel, options: LocalMatch.Options, keys: KeyMap, unicode: Bool) {
        self.match = LocalMatch(options: options, seats: [.external, .bot(level)])
        self.keys = keys
        self.glyphs = Glyphs(unicode: unicode)
        self.playerName = name
        self.level = level
        self.tally = Self.freshTally(name: name, level: level)
    }

    /// Paused, asking whether to leave, showing help, too small to show or over: the whole match stands still.
    var wantsTicks: Bool { !paused && !confirmingQuit && !helpShown && !tooSmall && (!match.isOver || holdTicks > 0) }

    func handle(key: TerminalKey) {
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
        default:
            guard !paused, !match.isOver, holdTicks == 0, let move = Self.move(for: action) else { return }
            match.enqueue(move, seat: 0)
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
        if holdTicks > 0 {
            // The finished game's boards and banner stay up; the next game waits.
            holdTicks -= 1
            if holdTicks == 0 {
                banner = nil
                showingResults = results != nil
            }
            return holdTicks == 0
        }
        if !match.isOver { matchTicks += 1 }
        let events = match.tick()
        for event in events { note(event) }
        // The title's clock shows whole seconds: a frame when it turns over.
        return !events.isEmpty || match.gameTicks % 60 == 0
    }

    /// Keeps the match's tally and reacts to the end of a game or of the match.
    private func note(_ event: LocalMatch.Event) {
        switch event {
        case .input(let seat, _, .ticked(_, let chain?)):
            lastChains[seat] = chain.chain
            tally[seat].pairsPlaced += 1
            tally[seat].largestChain = max(tally[seat].largestChain, chain.chain)
        case .garbageSent(let from, let to, let count):
            tally[from].garbageSent += count
            tally[to].garbageReceived += count
        case .gameOver(let winner):
            let game = match.gamesPlayed
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
    }

    static func freshTally(name: String, level: BotLevel) -> [PlayerTally] {
        [PlayerTally(name: name, isLocal: true), PlayerTally(name: "bot (\(level.rawValue))", isLocal: false)]
    }

    func draw(on term: Terminal) {
        drawScreen(on: term)
        if helpShown { HelpOverlay.draw(place: .practice, keys: keys, rules: match.options.rules, on: term) }
    }

    private func drawScreen(on term: Terminal) {
        tooSmall = GameLoop.drawTooSmall(on: term, columns: 2 * MatchView.fullWidth, rows: MatchView.minimumRows)
        if tooSmall { return }
        if showingResults, let results {
            results.draw(on: term, hint: "\(keys.label(.ready)): rematch   \(keys.label(.quit)): quit")
            return
        }
        let game = match.gamesPlayed + (match.isOver || holdTicks > 0 ? 0 : 1)
        let ticks = holdTicks > 0 || match.isOver ? 0 : match.gameTicks
        let clock = Self.clock(ticks: ticks)
        term.put(0, 0, GameLoop.fitting([
            "eggs — practice against the \(level.rawValue) bot — game \(game) — \(clock)",
            "eggs — practice vs \(level.rawValue) bot — game \(game) — \(clock)",
            "practice — game \(game) — \(clock)",
        ], width: term.columns), bold: true)
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
                alert: grids[seat].state == .toppedOut
            )
        }
        if finalGrids == nil, let frames = ChainFrames.shared {
            for seat in 0..<2 { frames.drew(.owner, board: "\(seat)/\(match.gamesPlayed)", grid: grids[seat]) }
        }
        let area = MatchView.draw(panels, on: term, glyphs: glyphs, top: 1)
        if let banner { Banner.draw(banner, on: term, centreRow: area.centreRow) }
        let bottom = term.rows - 1
        if confirmingQuit {
            term.put(bottom, 0, "Leave the match? y to leave, any other key to stay", pair: Terminal.pairAlert, bold: true)
        } else if paused {
            term.put(bottom, 0, "Paused.  \(keys.label(.pause)): resume  \(HelpOverlay.hint)  \(keys.label(.quit)): quit", bold: true)
        } else {
            term.put(bottom, 0, keys.playHints(pause: true, width: term.columns))
        }
    }
}
