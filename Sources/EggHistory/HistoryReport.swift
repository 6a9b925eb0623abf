import Consensus
import Foundation
import PeerNet

/// The text and JSON of `history` and `history show` (docs/history.md).
public enum HistoryReport {
    /// "2026-11-28 09:15" (UTC) of a time in µs since the epoch.
    public static func date(_ microseconds: Int64) -> String {
        var seconds = time_t(microseconds / 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min))"
    }

    /// Midnight UTC of "YYYY-MM-DD" in µs since the epoch; nil for anything else.
    public static func day(_ text: String) -> Int64? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int32(parts[0]), let month = Int32(parts[1]), let day = Int32(parts[2]),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        var value = tm()
        value.tm_year = year - 1900
        value.tm_mon = month - 1
        value.tm_mday = day
        let seconds = timegm(&value)
        guard seconds != -1, date(Int64(seconds) * 1_000_000).hasPrefix(text) else { return nil }
        return Int64(seconds) * 1_000_000
    }

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let cut = text.count > width ? String(text.prefix(width - 1)) + "~" : text
        let fill = String(repeating: " ", count: max(0, width - cut.count))
        return right ? fill + cut : cut + fill
    }

    /// The table of matches (every line at most 78 columns) and the ratings under it.
    public static func table(_ matches: [StoredMatch], standings: [String: Standing]) -> [String] {
        var lines: [String] = []
        func row(_ cells: [String]) -> String {
            [pad(cells[0], 5, right: true), pad(cells[1], 16), pad(cells[2], 22), pad(cells[3], 14), pad(cells[4], 5, right: true),
             pad(cells[5], 5, right: true)].joined(separator: " ")
        }
        if matches.isEmpty {
            lines.append("No match recorded (yet): play one, or 'eggs-tui history import LOG...'.")
        } else {
            lines.append(row(["#", "date (UTC)", "opponents", "result", "games", "chain"]))
            for match in matches {
                let opponents = match.opponents.joined(separator: ", ")
                lines.append(row(["\(match.id)", date(match.record.startedAt), opponents.isEmpty ? "-" : opponents, match.result,
                                  "\(match.record.games.count)", match.largestChain.map { "\($0)" } ?? "-"]))
            }
        }
        let rated = standings.values.filter { $0.youLost + $0.youWon > 0 }
            .sorted { ($0.rating.rating, $0.name) > ($1.rating.rating, $1.name) }
        if !rated.isEmpty {
            lines.append("")
            lines.append("Ratings (Glicko-2, from the games recorded here: your own view):")
            for standing in rated {
                lines.append("  " + pad(standing.name, 24) + " " + ratingText(standing) + ", "
                             + "\(standing.youWon)-\(standing.youLost) with you")
            }
        }
        return lines
    }

    /// "1620 ±80".
    public static func ratingText(_ standing: Standing) -> String {
        "\(Int(standing.rating.rating.rounded())) ±\(Int(standing.rating.deviation.rounded()))"
    }

    /// The lobby's text for a peer named `name`: "bob 1620 ±80, 7-5 with you"; just the name
    /// when nothing is recorded against it.
    public static func headToHead(name: String, standings: [String: Standing]) -> String {
        guard let standing = standings[name], standing.youLost + standing.youWon > 0 else { return name }
        return "\(name) \(ratingText(standing)), \(standing.youWon)-\(standing.youLost) with you"
    }

    static func shellQuoted(_ text: String) -> String {
        let safe = text.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "/._-+:@,".unicodeScalars.contains($0) }
        return safe ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// `history show N`: one match with its games and the command that replays it.
    public static func show(_ match: StoredMatch) -> [String] {
        let record = match.record
        let s = record.settings
        var lines = ["Match \(match.id): \(date(record.startedAt)) UTC, room \(record.room), \(s.rules), speed \(s.speed), "
                     + "\(s.colors) colours, best of \(s.gamesPerMatch)" + (s.startingHeight > 0 ? ", starting height \(s.startingHeight)" : "")]
        let players = record.players.map { player in
            "\(player.name ?? player.id.hex)\(player.id == record.recorder ? " (you)" : "") \(player.wins) win\(player.wins == 1 ? "" : "s")"
        }
        lines.append("Players: " + players.joined(separator: ", "))
        var result = match.result
        if let winner = record.winner { result += " (\(record.name(of: winner)) wins the match)" }
        lines.append("Result: " + result)
        for game in record.games {
            let who = game.winner.map { "\(record.name(of: $0)) wins" } ?? "a draw"
            let time = game.durationSeconds.map { String(format: "%.1f s", $0) } ?? "duration not in the log"
            lines.append("Game \(game.number): \(who), \(time)" + (game.mirrored ? "" : " (not mirrored: no figures)"))
            if !game.stats.isEmpty {
                lines.append("  " + pad("player", 24) + " " + pad("chain", 5, right: true) + " " + pad("pairs", 6, right: true) + " "
                             + pad("garbage sent", 13, right: true) + " " + pad("received", 9, right: true))
                for stat in game.stats {
                    lines.append("  " + pad(record.name(of: stat.player), 24) + " " + pad("\(stat.largestChain)", 5, right: true) + " "
                                 + pad("\(stat.pairsPlaced)", 6, right: true) + " " + pad("\(stat.garbageSent)", 13, right: true) + " "
                                 + pad("\(stat.garbageReceived)", 9, right: true))
                }
            }
        }
        lines.append("Log: \(match.logPath) (the match starts at its line \(record.startLine))")
        lines.append("Replay: eggs-tui replay \(shellQuoted(match.logPath))")
        return lines
    }

    /// One match as JSON.
    public static func json(_ match: StoredMatch) -> JSONValue {
        let record = match.record
        func optional(_ value: Int?) -> JSONValue { value.map { .int(Int64($0)) } ?? .null }
        return .object([
            ("id", .int(match.id)),
            ("date", .string(date(record.startedAt))),
            ("startedAt", .int(record.startedAt)),
            ("endedAt", record.endedAt.map { .int($0) } ?? .null),
            ("room", .string(record.room)),
            ("rules", .string(record.settings.rules)),
            ("speed", .int(Int64(record.settings.speed))),
            ("colors", .int(Int64(record.settings.colors))),
            ("gamesPerMatch", .int(Int64(record.settings.gamesPerMatch))),
            ("startingHeight", .int(Int64(record.settings.startingHeight))),
            ("you", .string(record.recorder.hex)),
            ("players", .array(record.players.map { player in
                .object([("peer", .string(player.id.hex)), ("name", player.name.map { .string($0) } ?? .null),
                         ("wins", .int(Int64(player.wins)))])
            })),
            ("opponents", .array(match.opponents.map { .string($0) })),
            ("result", .string(match.result)),
            ("winner", record.winner.map { .string($0.hex) } ?? .null),
            ("abandoned", .bool(record.abandoned)),
            ("largestChain", optional(match.largestChain)),
            ("games", .array(record.games.map { game in
                .object([
                    ("number", .int(Int64(game.number))),
                    ("winner", game.winner.map { .string($0.hex) } ?? .null),
                    ("durationSeconds", game.durationSeconds.map { .double($0) } ?? .null),
                    ("mirrored", .bool(game.mirrored)),
                    ("players", .array(game.stats.map { stat in
                        .object([("peer", .string(stat.player.hex)), ("largestChain", .int(Int64(stat.largestChain))),
                                 ("pairsPlaced", .int(Int64(stat.pairsPlaced))), ("garbageSent", .int(Int64(stat.garbageSent))),
                                 ("garbageReceived", .int(Int64(stat.garbageReceived))), ("toppedOut", .bool(stat.toppedOut))])
                    })),
                ])
            })),
            ("log", .string(match.logPath)),
        ])
    }

    /// `history --json`: the matches and the ratings.
    public static func json(_ matches: [StoredMatch], standings: [String: Standing]) -> String {
        let ratings = standings.values.sorted { $0.name < $1.name }.map { standing -> JSONValue in
            .object([("name", .string(standing.name)), ("rating", .double((standing.rating.rating * 100).rounded() / 100)),
                     ("deviation", .double((standing.rating.deviation * 100).rounded() / 100)),
                     ("volatility", .double((standing.rating.volatility * 1e6).rounded() / 1e6)),
                     ("youLost", .int(Int64(standing.youLost))),
                     ("youWon", .int(Int64(standing.youWon)))])
        }
        return JSONValue.object([("matches", .array(matches.map(json))), ("ratings", .array(ratings))]).serialized
    }
}
