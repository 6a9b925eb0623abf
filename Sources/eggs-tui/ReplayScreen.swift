import Consensus
import EggGame
import PeerNet
#if canImport(Glibc)
import Glibc
#endif

/// Plays a message log back in the terminal through the same replica logic the game uses.
final class ReplayScreen: Screen {
    private var events: [(event: PeerNetEvent, at: Int64)] = []
    private var replica: MatchPeer
    private var position = 0
    private var speed: Double
    private var paused = false
    /// The help overlay is open: playback stands still behind it.
    private var helpShown = false
    /// Set while the terminal is too small to show the boards: playback waits.
    private var tooSmall = false
    private var clockMicros: Double = 0
    private let glyphs: Glyphs
    private let path: String
    private var truncatedAt: Int?
    private var desyncs: [Desync] = []
    private var lastChains: [PeerID: Int] = [:]
    /// The match as the players' screens told it: game numbers, banners, figures and results.
    private var story = MatchStory(local: nil)
    /// When the game in progress started, in log time (µs); a game after another counts from the
    /// end of the other's banner, as on the players' screens.
    private var gameStartedAt: Double?
    /// The last game's final boards and banner, held until `holdUntil` (log time, µs), as the
    /// players saw them held for ``NetPlayScreen/holdNanoseconds``.
    private var finalGame: FinishedGame?
    private var gameBanner: [String]?
    private var finalGameNumber = 0
    private var holdUntil: Double = 0
    /// The match's results, shown from `holdUntil` on (after the last game's banner) until the
    /// next match starts; at the end of the log they stay.
    private var results: MatchResults?
    static let holdMicros = Double(NetPlayScreen.holdNanoseconds / 1_000)
    private(set) var finished = false
    /// A corrupt line met during playback (the command exits 2 with it).
    private(set) var failure: CommandFailure?

    /// Logs larger than this are refused (they are read into memory).
    static let logBytesMax = 1 << 30

    init(path: String, speed: Double, unicode: Bool, passphrase: String? = nil) throws {
        self.path = path
        self.speed = speed
        self.glyphs = Glyphs(unicode: unicode)
        let log = try LoadedLog(path: path, passphrase: passphrase)
        events = log.events
        truncatedAt = log.truncatedAtLine
        let header = log.header
        var config = MatchPeerConfig(id: header, name: "replay", role: .spectator, voteSeed: 0)
        config.eventsMax = 1 << 20
        replica = MatchPeer(config: config)
        clockMicros = Double(events.first?.at ?? 0)
    }

    /// Playback runs until the log ends and the last banner has had its time.
    var wantsTicks: Bool { !paused && !helpShown && !tooSmall && (position < events.count || holding) }

    /// The last game's final boards and banner are up.
    private var holding: Bool { gameBanner != nil && clockMicros < holdUntil }

    func handle(key: TerminalKey) {
        if helpShown {
            // Any key closes the overlay, and does nothing else.
            helpShown = false
            return
        }
        switch key {
        case HelpOverlay.key: helpShown = true
        case .character("q"), .escape: finished = true
        case .character(" "), .character("p"): paused.toggle()
        case .character("."): if paused { applyNext() }
        case .character("+"), .character("="): speed = min(64, speed * 2)
        case .character("-"): speed = max(0.25, speed / 2)
        case .character("n"): seekNextGame()
        default: break
        }
    }

    func interrupted() { finished = true }

    func tick() -> Bool {
        guard wantsTicks else { return false }
        let wasHolding = holding
        clockMicros += 1_000_000.0 / 60.0 * speed
        var changed = wasHolding != holding
        while position < events.count && Double(events[position].at) <= clockMicros {
            applyNext()
            changed = true
        }
        return changed
    }

    private func applyNext() {
        guard position < events.count else { return }
        let (event, at) = events[position]
        position += 1
        clockMicros = max(clockMicros, Double(at))
        replica.handle(event, now: NetTime(nanoseconds: UInt64(max(0, at)) &* 1_000))
        while replica.pollSend() != nil {}
        var startedGame = false
        let name = names
        while let e = replica.pollEvent() {
            switch e {
            case .desync(let d): desyncs.append(d)
            case .matchStarted:
                story.matchStarted()
                results = nil
            case .gameStarted:
                startedGame = true
                story.seen(atMicroseconds: at)
                gameStartedAt = max(Double(at), holdUntil)
            case .gameOver(_, let winner):
                story.seen(atMicroseconds: at)
                let played = gameStartedAt.map { max(0, Double(at) - $0) / 1e6 } ?? 0
                gameStartedAt = nil
                gameBanner = story.gameEnded(replica.lastGame, winner: winner, seconds: played, name: name)
                finalGameNumber = story.gamesFinished
                finalGame = replica.lastGame?.mirrored == true ? replica.lastGame : nil
                holdUntil = Double(at) + Self.holdMicros
            case .matchOver(let winner, let wins):
                results = story.results(winner: winner, wins: wins, name: name)
            case .playerOut(let player, let out, let reason):
                story.playerOut(player, name: out.isEmpty ? name(player) : out, reason: reason)
            default: break
            }
        }
        if startedGame { lastChains = [:] }
        if case .delivered(let d) = event, let grid = replica.match?.mirrors[d.from]?.grid, let chain = grid.lastChain {
            lastChains[d.from] = chain.chain
        }
    }

    /// Players' names as their hellos give them (the ID where none came).
    private var names: (PeerID) -> String {
        let lobby = replica.lobby
        return { lobby[$0]?.name ?? $0.hex }
    }

    /// Applies messages until the next game starts (or the log ends).
    private func seekNextGame() {
        let game = replica.match?.game
        while position < events.count {
            applyNext()
            if let current = replica.match?.game, current != game, replica.match?.mirrors.isEmpty == false { break }
        }
    }

    func draw(on term: Terminal) {
        drawScreen(on: term)
        if helpShown {
            let rules = replica.match?.settings.ruleSet ?? replica.roomSettings.ruleSet
            HelpOverlay.draw(place: .replay, keys: KeyMap(), rules: rules, on: term)
        }
    }

    private func drawScreen(on term: Terminal) {
        tooSmall = GameLoop.drawTooSmall(on: term, columns: MatchView.minimumColumns, rows: MatchView.minimumRows)
        if tooSmall { return }
        let at = position < events.count ? "message \(position)/\(events.count)" : "end of log (\(events.count) messages)"
        let base = CastRecorder.baseName(path)
        term.put(0, 0, GameLoop.fitting(["eggs replay — \(path)", "eggs replay — \(base)", base], width: term.columns), bold: true)
        let playback = "\(at)   speed ×\(speed)\(paused ? "  PAUSED" : "")"
        if let final = finalGame, let gameBanner, holding {
            // A game just ended: its final boards and banner, as the players saw them.
            term.put(1, 0, "game \(finalGameNumber) over   \(playback)")
            let area = MatchView.draw(story.finalPanels(final, name: names), on: term, glyphs: glyphs, top: 2)
            Banner.draw(gameBanner, on: term, centreRow: area.centreRow)
        } else if let results, replica.match == nil {
            // The match is over: its results, as the players saw them, until the next match.
            term.put(1, 0, "match over   \(playback)")
            results.draw(on: term, hint: position < events.count ? "the log goes on: space pause, q quit" : "end of log: q quit")
        } else if let match = replica.match {
            term.put(1, 0, "game \(story.gamesFinished + 1), best of \(match.settings.gamesPerMatch)   \(playback)")
            let panels = match.players.map { id -> PlayerPanel in
                let grid = match.mirrors[id]?.grid ?? PlayerGrid()
                let next = replica.eggValue(game: match.game, round: grid.pairsSpawned)
                    .map { [EggPair(value: $0, colors: match.settings.colors)] } ?? []
                let mirror = match.mirrors[id]
                return PlayerPanel(
                    name: replica.lobby[id]?.name ?? id.hex, grid: grid, next: next, wins: match.wins[id] ?? 0,
                    incomingGarbage: max(0, (mirror?.garbageReceived ?? 0) - (mirror?.garbageLanded ?? 0)),
                    chain: lastChains[id] ?? 0, status: grid.state == .toppedOut ? "out" : id.hex.suffix(8).description,
                    isLocal: false, alert: grid.state == .toppedOut)
            }
            MatchView.draw(panels, on: term, glyphs: glyphs, top: 2)
        } else {
            term.put(1, 0, "lobby   \(playback)")
            var row = 3
            for (id, hello) in replica.lobby.sorted(by: { $0.key < $1.key }) {
                term.put(row, 2, "\(id.hex)  \(hello.name)  \(hello.role == .player ? "player" : "spectator")")
                row += 1
            }
        }
        var status = GameLoop.fitting(["space pause  . step  +/- speed  n next game  \(HelpOverlay.hint)  q quit",
                                       "space . +/- n  \(HelpOverlay.hint)  q quit"], width: term.columns)
        if let desync = desyncs.last { status = "DESYNC: \(desync)" }
        else if let line = truncatedAt, position >= events.count { status = "The log is cut off at line \(line); replayed up to the last whole line.  q quit" }
        term.put(term.rows - 1, 0, status, pair: desyncs.isEmpty ? 0 : Terminal.pairAlert, bold: !desyncs.isEmpty)
    }
}
