import Consensus
import PeerNet
#if canImport(Glibc)
import Glibc
#endif

/// A network match as its screens tell it: games numbered from 1 within the match, the banner
/// over each game's final boards, each player's figures totalled game by game, and the results
/// table at the end. Network play (``NetPlayScreen``), the terminal replay (``ReplayScreen``)
/// and the recordings (``CastRecorder``) keep one each, fed with the same ``MatchEvent``s, so a
/// replay shows what the players saw.
struct MatchStory {
    /// The player whose screen tells the story (its figures are marked, the banners say "you");
    /// nil for a spectator and for a replay.
    let local: PeerID?
    /// Each player's figures, totalled at each game's end.
    private(set) var tally: [PeerID: PlayerTally] = [:]
    /// Games won in the games this story saw end.
    private(set) var wins: [PeerID: Int] = [:]
    /// Games of the match that ended since the story began (the game in progress is one more).
    private(set) var gamesFinished = 0
    /// Time played in the games this story saw whole.
    private(set) var seconds = 0.0
    /// Games this story saw whole (mirrored from their start).
    private(set) var gamesSeen = 0
    /// Whether the story saw the match start (else it came in during the match).
    private(set) var sawStart = false
    /// When a story that came in during the match began: the time of day ("12:03:41").
    private(set) var watchedFrom: String?
    /// Players taken out of the match (left for the lobby, quit, connection lost), in order,
    /// with the name they had.
    private(set) var outOfMatch: [(player: PeerID, name: String, reason: PlayerOutReason)] = []
    /// How many of `outOfMatch` a game's banner already told.
    private var outToldAtLastGame = 0

    init(local: PeerID?) {
        self.local = local
    }

    /// A match starts: everything counts from here.
    mutating func matchStarted() {
        self = MatchStory(local: local)
        sawStart = true
    }

    /// `player` (named `name`) is out of the match for `reason`: the next banner says the game
    /// went to the players left by forfeit, and the results say why.
    mutating func playerOut(_ player: PeerID, name: String, reason: PlayerOutReason) {
        outOfMatch.append((player, name, reason))
    }

    /// "bob's connection was lost", "alice left the match for the lobby", "carol quit".
    static func outText(name: String, reason: PlayerOutReason) -> String {
        switch reason {
        case .connectionLost: "\(name)'s connection was lost"
        case .leftForLobby: "\(name) left the match for the lobby"
        case .quit: "\(name) quit"
        }
    }

    /// Something of the match was seen now (a game started or ended, a snapshot came): a story
    /// that did not see the match start notes the time it began, once.
    mutating func seen(atMicroseconds: Int64) {
        guard !sawStart, watchedFrom == nil else { return }
        watchedFrom = Self.timeOfDay(microseconds: atMicroseconds)
    }

    /// The banner over a finished game's final boards, its game number counted from 1 in the
    /// match: "bob topped out: alice wins game 1.", "Games won: alice 1, bob 0". Totals the game's
    /// figures (from `finished`, nil or unmirrored for a game this peer did not follow) and its
    /// `seconds` of play.
    mutating func gameEnded(_ finished: FinishedGame?, winner: PeerID?, seconds played: Double,
                            name: (PeerID) -> String) -> [String]? {
        gamesFinished += 1
        if let winner { wins[winner, default: 0] += 1 }
        // Players gone during this game: the game went to those left, by forfeit.
        let gone = outOfMatch.dropFirst(outToldAtLastGame)
        outToldAtLastGame = outOfMatch.count
        guard let finished, finished.mirrored else { return nil }
        gamesSeen += 1
        seconds += played
        for (id, mirror) in finished.mirrors {
            var entry = tally[id] ?? PlayerTally(name: name(id), isLocal: id == local)
            let grid = mirror.grid
            entry.pairsPlaced += max(0, grid.pairsSpawned - (grid.state == .awaitingSpawn ? 0 : 1))
            entry.largestChain = max(entry.largestChain, mirror.largestChain)
            entry.garbageSent += mirror.garbageSent
            entry.garbageReceived += mirror.garbageReceived
            tally[id] = entry
        }
        let number = gamesFinished
        let out = finished.mirrors.filter { $0.value.isToppedOut }.keys.sorted().map(name)
        var who = out.isEmpty ? "" : (out.count == 1 ? "\(out[0]) topped out: " : "\(out.joined(separator: " and ")) topped out: ")
        var result = winner.map { $0 == local ? "you win game \(number)!" : "\(name($0)) wins game \(number)." }
            ?? "game \(number) is a draw."
        if let first = gone.first {
            who = Self.outText(name: first.name, reason: first.reason) + ": "
            result = winner.map { $0 == local ? "you win the game by forfeit" : "\(name($0)) wins the game by forfeit" }
                ?? "game \(number) is a draw."
        }
        let players = finished.mirrors.keys.sorted()
        return [who + result, "Games won: " + players.map { "\(name($0)) \(wins[$0] ?? 0)" }.joined(separator: ", ")]
    }

    /// The results of the match that ended with `winner` and the match's `wins` (every game's,
    /// also those before this story began). A story that came in during the match says from when
    /// it watched, and that its figures are of the games it saw.
    func results(winner: PeerID?, wins matchWins: [PeerID: Int], name: (PeerID) -> String) -> MatchResults {
        var tally = self.tally
        for (id, count) in matchWins { tally[id, default: PlayerTally(name: name(id), isLocal: id == local)].wins = count }
        let headline: String
        if let gone = outOfMatch.first(where: { $0.player != local }), let winner, winner == local || local == nil {
            let whom = winner == local ? "you win" : "\(name(winner)) wins"
            headline = Self.outText(name: gone.name, reason: gone.reason) + ": \(whom) the game by forfeit"
        } else if let winner {
            if winner == local {
                headline = "You win the match!"
            } else {
                headline = local == nil ? "\(name(winner)) wins the match." : "You lose: \(name(winner)) wins the match."
            }
        } else {
            headline = "No winner."
        }
        let order = tally.keys.sorted { (tally[$0]!.isLocal ? 0 : 1, $0) < (tally[$1]!.isLocal ? 0 : 1, $1) }
        var note: String?
        if !sawStart {
            let from = watchedFrom.map { "Watched from \($0)" } ?? "Watched"
            note = "\(from), mid-match: figures of the \(gamesSeen) game\(gamesSeen == 1 ? "" : "s") seen whole"
        }
        return MatchResults(headline: headline, won: local == nil ? nil : winner.map { $0 == local }, games: gamesFinished,
                            seconds: seconds, players: order.map { tally[$0]! }, note: note)
    }

    /// The panels of a finished game's final boards: the local player first, then by ID; its
    /// winner marked, topped-out players alerted.
    func finalPanels(_ finished: FinishedGame, name: (PeerID) -> String) -> [PlayerPanel] {
        var order = finished.mirrors.keys.sorted()
        if let local, let me = order.firstIndex(of: local) { order.insert(order.remove(at: me), at: 0) }
        return order.map { id in
            let mirror = finished.mirrors[id]!
            return PlayerPanel(
                name: name(id), grid: mirror.grid, next: [], wins: wins[id] ?? 0,
                incomingGarbage: 0, chain: mirror.largestChain,
                status: mirror.isToppedOut ? "out" : (id == finished.winner ? "winner" : ""),
                isLocal: id == local, alert: mirror.isToppedOut)
        }
    }

    /// "12:03:41": the local time of day of a Unix time in microseconds.
    static func timeOfDay(microseconds: Int64) -> String {
        var seconds = time_t(microseconds / 1_000_000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }
}
