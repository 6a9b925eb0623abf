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
    private var lastChains = [0, 0]
    private(set) var finished = false

    init(name: String, level: BotLevel, options: LocalMatch.Options, keys: KeyMap, unicode: Bool) {
        self.match = LocalMatch(options: options, seats: [.external, .bot(level)])
        self.keys = keys
        self.glyphs = Glyphs(unicode: unicode)
        self.playerName = name
        self.level = level
    }

    var wantsTicks: Bool { !paused && !confirmingQuit && !match.isOver }

    func handle(key: TerminalKey) {
        if confirmingQuit {
            if key == .character("y") || key == .character("Y") { finished = true }
            confirmingQuit = false
            return
        }
        guard let action = keys.action(for: key) else { return }
        switch action {
        case .quit:
            if match.isOver { finished = true } else { confirmingQuit = true }
        case .pause:
            paused.toggle()
        case .ready:
            if match.isOver { restart() }
        default:
            guard !paused, !match.isOver, let move = Self.move(for: action) else { return }
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
        let events = match.tick()
        for event in events {
            if case .input(let seat, _, .locked(let chain)) = event { lastChains[seat] = chain.chain }
        }
        return !events.isEmpty
    }

    func interrupted() { finished = true }

    private func restart() {
        var options = match.options
        options.seed = options.seed &+ 0x9E37_79B9_7F4A_7C15
        match = LocalMatch(options: options, seats: match.seats)
        lastChains = [0, 0]
    }

    func draw(on term: Terminal) {
        if GameLoop.drawTooSmall(on: term, columns: 2 * MatchView.fullWidth, rows: MatchView.minimumRows) { return }
        term.put(0, 0, "eggs — practice against the \(level.rawValue) bot", bold: true)
        let panels = (0..<2).map { seat in
            PlayerPanel(
                name: seat == 0 ? playerName : "bot (\(level.rawValue))",
                grid: match.grids[seat],
                next: [match.nextPair(seat: seat)],
                wins: match.wins[seat],
                incomingGarbage: match.incomingGarbage[seat],
                chain: lastChains[seat],
                status: match.grids[seat].state == .toppedOut ? "out" : (seat == 0 ? "you" : ""),
                isLocal: seat == 0,
                alert: match.grids[seat].state == .toppedOut
            )
        }
        MatchView.draw(panels, on: term, glyphs: glyphs, top: 1)
        let bottom = term.rows - 1
        if confirmingQuit {
            term.put(bottom, 0, "Leave the match? y to leave, any other key to stay", pair: Terminal.pairAlert, bold: true)
        } else if match.isOver {
            let winner = match.matchWinner.map { $0 == 0 ? "You win the match!" : "The bot wins the match." } ?? "No winner."
            term.put(bottom, 0, "\(winner)  \(keys.label(.ready)): play again  \(keys.label(.quit)): quit", bold: true)
        } else if paused {
            term.put(bottom, 0, "Paused.  \(keys.label(.pause)): resume  \(keys.label(.quit)): quit", bold: true)
        } else {
            term.put(bottom, 0, "\(keys.label(.left))\(keys.label(.right)) move  \(keys.label(.rotateCCW))/\(keys.label(.rotateCW)) rotate  \(keys.label(.softDrop)) drop  \(keys.label(.hardDrop)) hard drop  \(keys.label(.pause)) pause  \(keys.label(.quit)) quit")
        }
    }
}
