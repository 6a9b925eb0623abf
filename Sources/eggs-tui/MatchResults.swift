/// What one player did over a match, for the results screen.
struct PlayerTally: Equatable {
    var name: String
    var isLocal: Bool
    var wins = 0
    var largestChain = 0
    var pairsPlaced = 0
    var garbageSent = 0
    var garbageReceived = 0

    /// Pairs placed per minute of `seconds` played (0 before any time passed).
    func pairsPerMinute(seconds: Double) -> Double {
        seconds > 0 ? Double(pairsPlaced) * 60 / seconds : 0
    }
}

/// The match result screen: who won, the games, and per player the largest chain, pairs placed,
/// pairs per minute, garbage sent and received. It stays until the player presses a key.
struct MatchResults: Equatable {
    /// "You win the match!", "You lose the match.", "alice wins the match.", "No winner."
    var headline: String
    var won: Bool?
    var games: Int
    /// Time played in the match's games.
    var seconds: Double
    var players: [PlayerTally]
    /// A line under the totals, for results that are not of the whole match (a spectator that
    /// came in during it says from when it watched).
    var note: String? = nil

    static let columns = ["player", "wins", "largest chain", "pairs", "pairs/min", "garbage sent", "received"]

    /// The rows of the table: a header, then one row a player. The widths fit 80 columns; wider
    /// than 80 (`columns`), the player column grows to the longest name (24 at most), and a
    /// name still too long ends in "…".
    func tableLines(columns: Int = 80) -> [String] {
        let longest = players.map(\.name.count).max() ?? 0
        let nameWidth = min(max(16, longest), 16 + max(0, columns - 80))
        let widths = [nameWidth, 5, 14, 6, 10, 13, 9]
        func row(_ cells: [String]) -> String {
            zip(cells, widths).enumerated().map { index, pair in
                let (text, width) = pair
                let cut = text.count <= width ? text : String(text.prefix(width - 1)) + "…"
                let fill = String(repeating: " ", count: max(0, width - cut.count))
                return index == 0 ? cut + fill : fill + cut
            }.joined(separator: " ")
        }
        var lines = [row(Self.columns)]
        for player in players {
            let perMinute = player.pairsPerMinute(seconds: seconds)
            lines.append(row([
                player.name, "\(player.wins)", "\(player.largestChain)", "\(player.pairsPlaced)",
                "\((perMinute * 10).rounded() / 10)", "\(player.garbageSent)", "\(player.garbageReceived)",
            ]))
        }
        return lines
    }

    /// Draws the screen centred; `hint` is the line of keys under it.
    func draw(on term: Terminal, hint: String, notes: [String] = []) {
        let minutes = Int(seconds) / 60, secs = Int(seconds) % 60
        let lines = tableLines(columns: term.columns)
        let width = max(lines.map(\.count).max() ?? 0, hint.count, headline.count, note?.count ?? 0)
        let height = lines.count + 6
        let top = max(0, (term.rows - height) / 2)
        let left = max(0, (term.columns - width) / 2)
        let pair: Int32 = won == false ? Terminal.pairAlert : Terminal.pairAccent
        term.put(top, left, headline, pair: pair, bold: true)
        term.put(top + 1, left, "Match over: \(games) game\(games == 1 ? "" : "s"), \(minutes):\(secs < 10 ? "0" : "")\(secs) played")
        if let note { term.put(top + 2, left, note, bold: true) }
        for (index, line) in lines.enumerated() {
            term.put(top + 3 + index, left, line, pair: index > 0 && players[index - 1].isLocal ? Terminal.pairAccent : 0, bold: index == 0)
        }
        term.put(top + 4 + lines.count, left, hint, bold: true)
        // Requests from the others (a rematch), under the keys.
        for (index, note) in notes.prefix(max(0, term.rows - (top + 5 + lines.count))).enumerated() {
            term.put(top + 5 + lines.count + index, left, note, pair: Terminal.pairAccent, bold: true)
        }
    }
}

/// A banner drawn over the boards (the game-over notice), centred, in reverse video.
enum Banner {
    static func draw(_ lines: [String], on term: Terminal, centreRow: Int) {
        let width = min(term.columns, (lines.map(\.count).max() ?? 0) + 4)
        let left = max(0, (term.columns - width) / 2)
        let top = max(0, centreRow - (lines.count + 2) / 2)
        let blank = String(repeating: " ", count: width)
        term.put(top, left, blank, pair: Terminal.pairAccent, reverse: true)
        for (index, line) in lines.enumerated() {
            let text = "  " + line + String(repeating: " ", count: max(0, width - 2 - line.count))
            term.put(top + 1 + index, left, String(text.prefix(width)), pair: Terminal.pairAccent, bold: true, reverse: true)
        }
        term.put(top + 1 + lines.count, left, blank, pair: Terminal.pairAccent, reverse: true)
    }
}
