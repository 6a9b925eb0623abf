import EggGame

/// The help overlay (`?`, in the lobby, a network match, practice and replay): the keys as bound
/// now (the user's key config included) and the rules of the rule set in play, in a few lines.
/// Any key closes it. In a network match the game goes on underneath; practice and replay stand
/// still while it is open.
enum HelpOverlay {
    /// Where the overlay is opened: which keys it lists.
    enum Place {
        case lobby
        case networkMatch(spectator: Bool)
        case practice
        case replay
    }

    /// The key that opens the overlay.
    static let key = TerminalKey.character("?")

    /// Whether `key` opens the overlay: `?`, unless the key config binds it to an action.
    static func opens(_ key: TerminalKey, keys: KeyMap?) -> Bool {
        key == Self.key && keys?.action(for: key) == nil
    }

    /// "? help": the hint the key lines show.
    static let hint = "? help"

    /// The overlay's lines: a title, the keys, the rules (a bold flag for each heading).
    static func lines(place: Place, keys: KeyMap, rules: RuleSet) -> [(text: String, bold: Bool)] {
        var lines: [(text: String, bold: Bool)] = []
        switch place {
        case .networkMatch:
            lines.append(("Help (the match goes on underneath): any key closes it", true))
        default:
            lines.append(("Help: any key closes it", true))
        }
        lines.append(("Keys", true))
        let game = [
            "\(keys.labels(.left)) left", "\(keys.labels(.right)) right", "\(keys.labels(.softDrop)) soft drop",
            "\(keys.labels(.hardDrop)) hard drop", "\(keys.labels(.rotateCW)) turn clockwise",
            "\(keys.labels(.rotateCCW)) turn anticlockwise", "\(keys.labels(.preview)) drop preview",
        ]
        switch place {
        case .lobby:
            lines.append(("In the lobby: " + [
                "\(keys.labels(.ready)) ready / not ready (watching: play)", "s speed", "c colours", "g games", "h starting height", "t rule set", "e your name",
                "n start now", "b practice against a bot", "l its level", "\(keys.labels(.quit)) quit",
            ].joined(separator: "  "), false))
            lines.append(("In a game: " + game.joined(separator: "  ") + "  \(keys.labels(.quit)) leave", false))
        case .networkMatch(let spectator):
            if spectator {
                lines.append(("You are watching: \(keys.labels(.quit)) leaves, \(keys.labels(.ready)) plays (in the lobby at once, else when this match ends)", false))
            } else {
                lines.append((game.joined(separator: "  ") + "  \(keys.labels(.quit)) leave (asks first)", false))
            }
        case .practice:
            lines.append((game.joined(separator: "  ") + "  \(keys.labels(.pause)) pause  \(keys.labels(.quit)) leave (asks first)", false))
        case .replay:
            lines.append(("space/p pause  . step while paused  +/- speed  n next game  q quit", false))
        }
        lines.append(("Rules (\(rules.name))", true))
        for rule in Self.rules(rules) { lines.append(("· " + rule, false)) }
        return lines
    }

    /// The rules of `rules` in a few lines: popping, chains, garbage, how a player loses (and for
    /// a scored rule set the score and the hidden row).
    static func rules(_ rules: RuleSet) -> [String] {
        var lines = [
            "Pairs of eggs fall into a grid \(rules.columns) columns wide. Four or more eggs of one colour touching up, down, left or right pop.",
            "Eggs falling into new groups pop again: a chain. Chains send garbage to your opponents.",
        ]
        switch rules.garbageFormula {
        case .sfeSteps:
            lines.append("Garbage lands on you after your pair and its chain; a popping egg clears the garbage next to it.")
        case .score(let scoring):
            lines.append("Score: each chain step scores 10 × eggs popped × (chain power + colour bonus + group bonus); every \(scoring.targetPoints) points (fewer as the game goes on) send one garbage egg, and garbage you send first cancels garbage queued against you.")
        }
        if rules.hiddenRows > 0 {
            lines.append("The hidden row above the grid holds eggs, but they never pop.")
        }
        switch rules.topOut {
        case .eitherSpawnCell:
            lines.append("You lose the game when a new pair has no room: either of its cells in the top row (3rd and 4th columns) is taken. The last player in wins.")
        case .pivotSpawnCell:
            lines.append("You lose the game when the top cell of the 3rd column is taken as a new pair appears. The last player in wins.")
        }
        return lines
    }

    /// Draws the overlay centred over whatever the screen shows, its lines wrapped to the
    /// terminal (up to 78 columns wide).
    static func draw(place: Place, keys: KeyMap, rules: RuleSet, on term: Terminal) {
        let width = min(term.columns, 78)
        guard width >= 12, term.rows >= 3 else { return }
        var shown: [(text: String, bold: Bool)] = []
        for (text, bold) in lines(place: place, keys: keys, rules: rules) {
            for (index, line) in GameLoop.wrap(text, width: width - 6).enumerated() {
                // Wrapped rules are indented under their bullet.
                shown.append((index > 0 && text.hasPrefix("· ") ? "  " + line : line, bold))
            }
        }
        if shown.count > term.rows - 2 {
            shown = Array(shown.prefix(term.rows - 2))
            shown[shown.count - 1] = ("…", false)
        }
        let height = shown.count + 2
        let top = max(0, (term.rows - height) / 2)
        let left = max(0, (term.columns - width) / 2)
        let corner = term.unicode ? ("┌", "┐", "└", "┘", "│", "─") : ("+", "+", "+", "+", "|", "-")
        let horizontal = String(repeating: corner.5, count: width - 2)
        term.put(top, left, corner.0 + horizontal + corner.1, pair: Terminal.pairAccent)
        for (index, line) in shown.enumerated() {
            let fill = String(repeating: " ", count: max(0, width - 3 - line.text.count))
            term.put(top + 1 + index, left, corner.4, pair: Terminal.pairAccent)
            term.put(top + 1 + index, left + 1, " " + line.text + fill, bold: line.bold)
            term.put(top + 1 + index, left + width - 1, corner.4, pair: Terminal.pairAccent)
        }
        term.put(top + height - 1, left, corner.2 + horizontal + corner.3, pair: Terminal.pairAccent)
    }
}
