import Consensus
import EggBot
import EggHistory
import EggGame
import PeerNet
#if canImport(Glibc)
import Glibc
#endif

/// A practice match's log (docs/formats.md, "The practice log"): JSON Lines sealed with the same
/// running digest as a message log. A practice match is one process's `LocalMatch`, deterministic
/// from its options and seed (the egg sequences, the bot's moves, gravity and garbage all follow
/// from them), so the log holds the options and the player's moves, each with the match tick it
/// was made before; at each game's end it holds the winner and both grids' hashes, which a replay
/// re-running the match checks.
///
///     {"format":"eggs-practice","version":2,"peer":"<16 hex>","name":"ada","level":"medium","seed":"<16 hex>",
///      "colors":4,"speed":0,"bestOf":1,"rules":"sfe","height":0,"d":"…"}
///     {"tick":312,"move":"left","d":"…"}
///     {"tick":2210,"game":1,"winner":1,"grids":["<16 hex>","<16 hex>"],"d":"…"}
///     {"at":<µs>,"end":{"lines":N},"d":"…"}
enum PracticeLog {
    static let format = "eggs-practice"
    /// 2: recorded with `sfe`'s chain timing of Super Foul Egg's runner; a version 1 log's games
    /// no longer re-run to their recorded ends.
    static let version = 2
    static let moveNames: [Move: String] = [
        .left: "left", .right: "right", .rotateCW: "rotate-cw", .rotateCCW: "rotate-ccw", .down: "down", .hardDrop: "hard-drop",
    ]

    static func header(peer: PeerID, name: String, level: BotLevel, options: LocalMatch.Options, atMicroseconds: Int64) -> String {
        JSONValue.object([
            ("format", .string(format)), ("version", .int(Int64(version))), ("at", .int(atMicroseconds)), ("peer", .string(peer.hex)),
            ("name", .string(name)), ("level", .string(level.rawValue)), ("seed", .string(hex16(options.seed))),
            ("colors", .int(Int64(options.colors))), ("speed", .int(Int64(options.speed))), ("bestOf", .int(Int64(options.bestOf))),
            ("rules", .string(options.rules.name)), ("height", .int(Int64(options.startingHeight))),
        ]).serialized
    }

    static func move(tick: Int, _ move: Move) -> String {
        JSONValue.object([("tick", .int(Int64(tick))), ("move", .string(moveNames[move]!))]).serialized
    }

    static func gameOver(tick: Int, game: Int, winner: Int?, grids: [PlayerGrid]) -> String {
        JSONValue.object([
            ("tick", .int(Int64(tick))), ("game", .int(Int64(game))), ("winner", winner.map { .int(Int64($0)) } ?? .null),
            ("grids", .array(grids.map { .string(hex16($0.stableHash)) })),
        ]).serialized
    }

    /// The last line before the end line: the tick the match stood at when its log closed (the
    /// player left, or the match was over).
    static func stopped(tick: Int) -> String {
        JSONValue.object([("tick", .int(Int64(tick))), ("stopped", .bool(true))]).serialized
    }

    static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Whether the file at `path` starts as a practice log's header (false when it cannot be read:
    /// the message log's reader then says why).
    static func isPracticeLog(path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let prefix = Array(#"{"format":"eggs-practice""#.utf8)
        var buffer = [UInt8](repeating: 0, count: prefix.count)
        var got = 0
        while got < prefix.count {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, prefix.count - got) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            got += count
        }
        return buffer == prefix
    }

    /// A game's end as the log says it.
    struct GameEnd: Equatable {
        var tick: Int
        var game: Int
        var winner: Int?
        var grids: [String]
    }

    /// A practice log read whole and checked line by line (its digests, its values' limits).
    struct Loaded {
        var peer: PeerID
        var name: String
        var level: BotLevel
        var options: LocalMatch.Options
        /// The player's moves by the match tick they were made before (after that many ticks).
        var moves: [Int: [Move]] = [:]
        var movesCount = 0
        var games: [GameEnd] = []
        /// The tick the match stood at when its log closed.
        var stoppedAt: Int?
        /// When the match started, and when its log closed (the end line), wall-clock µs.
        var startedAt: Int64 = 0
        var endedAt: Int64?
        /// The digests of the header line (it names the match) and of the last whole line.
        var headerDigest = ""
        var lastDigest = ""
        /// The log has its end line.
        var complete = false
        var truncatedAtLine: Int?
        var lines = 0

        /// - Throws: ``CommandFailure/badInput(_:)`` naming the path and the first bad line.
        init(path: String, bytes: [UInt8], passphrase: String?) throws {
            var digest = LogDigest(passphrase: passphrase)
            var header: JSONValue?
            var start = 0
            var number = 0
            var lastTick = 0
            func bad(_ reason: String) -> CommandFailure { .badInput("\(path): line \(number): \(reason)") }
            while start < bytes.count {
                number += 1
                guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                    truncatedAtLine = number
                    break
                }
                let line = bytes[start..<newline]
                start = newline + 1
                if complete { throw bad("a line after the end line") }
                guard digest.check(line) else { throw bad("the line's digest does not match (an edited, missing, reordered or spliced line)") }
                guard let json = JSONValue.parse(bytes: Array(line)) else { throw bad("not a JSON object") }
                lines = number
                lastDigest = digest.hex
                if header == nil {
                    headerDigest = digest.hex
                    if json["format"]?.stringValue == format, json["version"]?.intValue == 1 {
                        throw bad("practice log version 1 was recorded with the chain timing before version 2; this build replays version 2 only")
                    }
                    guard json["format"]?.stringValue == format, json["version"]?.intValue == Int64(version) else {
                        throw bad("not an eggs practice log header")
                    }
                    header = json
                    continue
                }
                if json["end"] != nil {
                    complete = true
                    endedAt = json["at"]?.intValue
                    continue
                }
                guard let tick = json["tick"]?.intValue, tick >= Int64(lastTick), tick <= Int64(Int32.max) else {
                    throw bad("no tick, or a tick before the last line's")
                }
                lastTick = Int(tick)
                if stoppedAt != nil { throw bad("a line after the stop line") }
                if json["stopped"]?.boolValue == true {
                    stoppedAt = Int(tick)
                } else if let name = json["move"]?.stringValue {
                    guard let move = moveNames.first(where: { $0.value == name })?.key else { throw bad("unknown move '\(name)'") }
                    guard movesCount < 10_000_000 else { throw bad("too many moves") }
                    moves[Int(tick), default: []].append(move)
                    movesCount += 1
                } else if let game = json["game"]?.intValue, let grids = json["grids"]?.arrayValue?.compactMap(\.stringValue), grids.count == 2 {
                    let winner = json["winner"]?.intValue
                    guard winner == nil || winner == 0 || winner == 1, (1...1000).contains(game) else { throw bad("a game's end out of its limits") }
                    games.append(GameEnd(tick: Int(tick), game: Int(game), winner: winner.map(Int.init), grids: grids))
                } else {
                    throw bad("neither a move nor a game's end")
                }
            }
            guard let header else { throw CommandFailure.badInput("\(path): line 1: not an eggs practice log header") }
            number = 1
            guard let peerText = header["peer"]?.stringValue, let peer = PeerID(hex: peerText),
                  let name = header["name"]?.stringValue, !name.isEmpty, name.utf8.count <= 24,
                  let level = header["level"]?.stringValue.flatMap(BotLevel.init(rawValue:)),
                  let seedText = header["seed"]?.stringValue, let seed = UInt64(seedText, radix: 16),
                  let colors = header["colors"]?.intValue, EggPair.colorsSupported.contains(Int(colors)),
                  let speed = header["speed"]?.intValue, GravityClock.speedsSupported.contains(Int(speed)),
                  let bestOf = header["bestOf"]?.intValue, [1, 3, 5, 7].contains(bestOf),
                  let rules = header["rules"]?.stringValue.flatMap(RuleSet.named),
                  let height = header["height"]?.intValue, rules.startingHeights.contains(Int(height)),
                  let at = header["at"]?.intValue, at >= 0
            else { throw bad("a header value is missing or out of its limits") }
            self.peer = peer
            self.startedAt = at
            self.name = name
            self.level = level
            options = LocalMatch.Options(seed: seed, colors: Int(colors), speed: Int(speed), bestOf: Int(bestOf),
                                         rules: rules, startingHeight: Int(height))
        }

        init(path: String, passphrase: String?) throws {
            switch WholeFile.read(path, limit: ReplayScreen.logBytesMax) {
            case .success(let all): try self.init(path: path, bytes: all, passphrase: passphrase)
            case .failure(.cannotOpen(let code)):
                throw CommandFailure.badInput("cannot open '\(path)': \(WholeFile.Failure.cannotOpen(code).reason)")
            case .failure(.unreadableOrTooLarge):
                throw CommandFailure.badInput("cannot read '\(path)', or it is over \(ReplayScreen.logBytesMax) bytes")
            }
        }

        /// The match's seats: the player, then the bot.
        var seats: [LocalMatch.Seat] { [.external, .bot(level)] }
    }

    /// What re-running a practice log found.
    struct Report {
        var games = 0
        var checked = 0
        /// The first game's end the re-run match does not reach alike.
        var mismatch: String?
    }

    /// Re-runs the match of `log` headless, tick by tick up to where the log stops, and hands
    /// each event to `body` with the match as it stands and the ticks run; returns the match.
    @discardableResult
    static func rerun(_ log: Loaded, _ body: (LocalMatch.Event, LocalMatch, Int) -> Void) -> LocalMatch {
        var match = LocalMatch(options: log.options, seats: log.seats)
        var ticks = 0
        let lastTick = log.stoppedAt ?? max(log.games.last?.tick ?? 0, (log.moves.keys.max() ?? -1) + 1)
        while !match.isOver && ticks < lastTick {
            for move in log.moves[ticks] ?? [] { match.enqueue(move, seat: 0) }
            let events = match.tick()
            ticks += 1
            for event in events { body(event, match, ticks) }
        }
        return match
    }

    /// Re-runs the match of `log` headless and checks every game's end it records.
    static func verify(_ log: Loaded) -> Report { verify(log) { _, _, _ in }.report }

    /// ``verify(_:)`` that also hands every event of the re-run to `observe` (one pass gathers
    /// a record's figures and checks the log), and returns the match as the re-run left it.
    static func verify(_ log: Loaded, observe: (LocalMatch.Event, LocalMatch, Int) -> Void) -> (report: Report, match: LocalMatch) {
        var report = Report()
        var expected = log.games[...]
        let match = rerun(log) { event, match, ticks in
            observe(event, match, ticks)
            guard case .gameOver(let winner) = event else { return }
            report.games += 1
            let grids = (match.lastGameGrids ?? match.grids).map { hex16($0.stableHash) }
            let actual = GameEnd(tick: ticks, game: report.games, winner: winner, grids: grids)
            guard let want = expected.popFirst() else {
                if log.complete, report.mismatch == nil { report.mismatch = "game \(report.games) ends at tick \(ticks), which the log does not record" }
                return
            }
            if want != actual, report.mismatch == nil {
                report.mismatch = "game \(want.game): the log says tick \(want.tick), winner \(want.winner.map(String.init) ?? "none"), grids \(want.grids.joined(separator: "/")); the match re-run gives tick \(actual.tick), winner \(actual.winner.map(String.init) ?? "none"), grids \(actual.grids.joined(separator: "/"))"
            } else {
                report.checked += 1
            }
        }
        if let missing = expected.first, report.mismatch == nil {
            report.mismatch = "game \(missing.game): the log says it ended at tick \(missing.tick); the match re-run does not end it"
        }
        return (report, match)
    }
}

extension PracticeLog {
    /// The bot's ID in a practice match's history record (its name, "bot (medium)", is what the
    /// history rates).
    static func botID(_ level: BotLevel) -> PeerID {
        PeerID(0xb0_7000 + UInt64(BotLevel.allCases.firstIndex(of: level) ?? 0))
    }

    /// The match of a practice log as the history records it (docs/history.md): re-run, game by
    /// game, with each seat's largest chain, pairs placed and garbage; abandoned when the log
    /// stops before the match is over. The header line's digest is its key.
    /// - Throws: ``LogRefused`` when the re-run does not end a game as the log says.
    static func historyContents(_ log: Loaded, path: String) throws(LogRefused) -> LogContents {
        let ids = [log.peer, botID(log.level)]
        var games: [MatchRecord.Game] = []
        var stats = [(chain: 0, pairs: 0, sent: 0, received: 0), (chain: 0, pairs: 0, sent: 0, received: 0)]
        var gameStart = 0
        // One re-run checks the log and gathers the figures.
        let (report, match) = verify(log) { event, match, ticks in
            switch event {
            case .input(let seat, _, .ticked(_, let chain?)):
                stats[seat].pairs += 1
                stats[seat].chain = max(stats[seat].chain, chain.chain)
            case .garbageSent(let from, let to, let count):
                stats[from].sent += count
                stats[to].received += count
            case .gameOver(let winner):
                let grids = match.lastGameGrids ?? match.grids
                games.append(MatchRecord.Game(
                    number: games.count + 1, game: UInt32(games.count), winner: winner.map { ids[$0] },
                    durationSeconds: Double(ticks - gameStart) / 60, mirrored: true,
                    stats: (0..<2).map { seat in
                        MatchRecord.PlayerStats(player: ids[seat], largestChain: stats[seat].chain, pairsPlaced: stats[seat].pairs,
                                                garbageSent: stats[seat].sent, garbageReceived: stats[seat].received,
                                                toppedOut: grids[seat].state == .toppedOut)
                    }))
                stats = [(0, 0, 0, 0), (0, 0, 0, 0)]
                gameStart = ticks
            default: break
            }
        }
        if let mismatch = report.mismatch { throw LogRefused(path: path, reason: mismatch) }
        let names = [log.name, "bot (\(log.level.rawValue))"]
        let record = MatchRecord(
            key: log.headerDigest, startLine: 1, startedAt: log.startedAt, endedAt: match.isOver ? log.endedAt : nil, room: "practice",
            settings: .init(rules: log.options.rules.name, speed: log.options.speed, colors: log.options.colors,
                            gamesPerMatch: log.options.bestOf, startingHeight: log.options.startingHeight),
            recorder: log.peer, players: (0..<2).map { MatchRecord.Player(id: ids[$0], name: names[$0], wins: match.wins[$0]) },
            games: games, winner: match.matchWinner.map { ids[$0] }, abandoned: !match.isOver)
        return LogContents(path: path, peer: log.peer, room: "practice", lastDigest: log.lastDigest, lines: log.lines,
                           complete: log.complete, matches: [record])
    }

    /// Reads, re-runs and records the practice log at `path` in `database`.
    static func record(path: String, in database: HistoryDatabase) throws -> ImportResult {
        let log: Loaded
        do {
            log = try Loaded(path: path, passphrase: nil)
        } catch {
            throw LogRefused(path: path, reason: "\(error)")
        }
        return try database.record(try historyContents(log, path: path))
    }
}
