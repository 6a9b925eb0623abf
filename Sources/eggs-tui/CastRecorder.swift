import Consensus
import SystemPackage
import EggGame
import PeerNet
#if canImport(Glibc)
import Glibc
#endif

/// Renders a message log headless into an asciicast v2 recording (docs/formats.md, recordings):
/// the match as the replay shows it, at the speed it was played (divided by `--speed`),
/// with a marker event (`"m"`) at every chain of 3 or more. No terminal is needed.
///
/// The log is replayed through the same replica logic as the game (`MatchPeer` as a
/// spectator). Frames are sampled at most ``framesPerSecond`` times a second of recording
/// time and only lines that changed are written, so a recording stays small.
struct CastRecorder {
    static let framesPerSecond = 30.0
    /// Recordings larger than this are refused, so a long log cannot fill the disk.
    static let castBytesMax = 256 << 20
    /// The chain length that gets a marker.
    static let markedChainMin = 3

    /// What a finished recording holds.
    struct Summary: Equatable {
        var frames = 0
        var markers: [String] = []
        var seconds = 0.0
        var bytes = 0
        /// The last match's results headline ("alice wins the match."), nil when no match ended.
        var headline: String?
    }

    let path: String
    let speed: Double
    var passphrase: String?

    /// Replays the log at `path` and writes the recording to `output`.
    func record(to output: String) throws -> Summary {
        let log = try LoadedLog(path: path, passphrase: passphrase)
        var header = MatchPeerConfig(id: log.header, name: "replay", role: .spectator, voteSeed: 0)
        header.eventsMax = 1 << 20
        var replica = MatchPeer(config: header)
        var screen = CastScreen(title: "eggs replay — \(Self.baseName(path))")
        var writer = try CastWriter(path: output, width: screen.width, height: screen.height,
                                    title: "eggs: \(Self.baseName(path))", bytesMax: Self.castBytesMax)
        defer { writer.close() }
        var summary = Summary()
        var watcher = ChainWatcher()
        let start = log.events.first?.at ?? 0
        let frameMicros = 1_000_000.0 / Self.framesPerSecond
        var frameDue = 0.0
        // The match as the players' screens told it: each game's banner over its final boards,
        // held as long as they held it, and the results at the end of the match.
        var story = MatchStory(local: nil)
        var held: (boards: [CastScreen.Panel], banner: [String], number: Int, until: Int64)?
        var results: (table: MatchResults, from: Int64)?
        var gameStartedAt: Int64?
        let holdMicros = Int64(NetPlayScreen.holdNanoseconds / 1_000)
        for (index, (event, at)) in log.events.enumerated() {
            replica.handle(event, now: NetTime(nanoseconds: UInt64(max(0, at)) &* 1_000))
            while replica.pollSend() != nil {}
            let lobby = replica.lobby
            let name = { (id: PeerID) in lobby[id]?.name ?? id.hex }
            while let matchEvent = replica.pollEvent() {
                switch matchEvent {
                case .matchStarted:
                    story.matchStarted()
                    results = nil
                case .gameStarted:
                    story.seen(atMicroseconds: at)
                    gameStartedAt = max(at, held?.until ?? at)
                case .gameOver(_, let winner):
                    story.seen(atMicroseconds: at)
                    let played = gameStartedAt.map { Double(max(0, at - $0)) / 1e6 } ?? 0
                    gameStartedAt = nil
                    let banner = story.gameEnded(replica.lastGame, winner: winner, seconds: played, name: name)
                    if let banner, let final = replica.lastGame, final.mirrored {
                        let boards = story.finalPanels(final, name: name).map {
                            CastScreen.Panel(name: $0.name, wins: $0.wins, grid: $0.grid, state: $0.status)
                        }
                        held = (boards, banner, story.gamesFinished, at + holdMicros)
                    }
                case .matchOver(let winner, let wins):
                    let table = story.results(winner: winner, wins: wins, name: name)
                    results = (table, max(at, held?.until ?? at))
                    summary.headline = table.headline
                case .playerOut(let player, let out, let reason):
                    story.playerOut(player, name: out.isEmpty ? name(player) : out, reason: reason)
                default: break
                }
            }
            if let until = held?.until, at >= until { held = nil }
            let seconds = Double(max(0, at - start)) / 1_000_000 / speed
            for chain in watcher.observe(replica) {
                let label = "\(replica.lobby[chain.player]?.name ?? chain.player.hex): \(chain.length)-chain"
                try writer.marker(at: seconds, label: label)
                summary.markers.append(label)
            }
            // Draw when the next event falls in a later frame, and after the last one.
            let next = index + 1 < log.events.count ? Double(max(0, log.events[index + 1].at - start)) / speed : .infinity
            if next >= frameDue || index + 1 == log.events.count {
                let status = index + 1 == log.events.count
                    ? (log.truncatedAtLine.map { "The log is cut off at line \($0); replayed up to the last whole line." } ?? "end of log")
                    : "message \(index + 1)/\(log.events.count)"
                let scene: CastScreen.Scene
                if let held {
                    scene = .held(held.boards, banner: held.banner, number: held.number)
                } else if let results, replica.match == nil, at >= results.from {
                    scene = .results(results.table)
                } else {
                    scene = .replica(replica, gameNumber: story.gamesFinished + 1)
                }
                let changes = screen.render(scene, status: status)
                if !changes.isEmpty {
                    try writer.output(at: seconds, changes)
                    summary.frames += 1
                }
                frameDue = (Double(max(0, at - start)) / speed / frameMicros).rounded(.down) * frameMicros + frameMicros
            }
            summary.seconds = seconds
        }
        // The log ended during the last banner: the banner has its time, then the results stay.
        let end = log.events.last?.at ?? start
        let status = log.truncatedAtLine.map { "The log is cut off at line \($0); replayed up to the last whole line." } ?? "end of log"
        if let held, held.until > end, results != nil {
            summary.seconds = Double(max(0, held.until - start)) / 1_000_000 / speed
        }
        if let results, replica.match == nil {
            let changes = screen.render(.results(results.table), status: status)
            if !changes.isEmpty {
                try writer.output(at: summary.seconds, changes)
                summary.frames += 1
            }
        }
        try writer.finish()
        summary.bytes = writer.bytesWritten
        return summary
    }

    /// `replay LOG --cast FILE`: records, then prints one JSON line saying what was written.
    static func run(log: String, speed: Double, output: String, passphrase: String? = nil) throws {
        if let logPath = realpath(log, nil), let castPath = realpath(output, nil) {
            defer { free(logPath); free(castPath) }
            if strcmp(logPath, castPath) == 0 { throw CommandFailure.badInput("--cast \(output) is the log itself") }
        }
        let summary = PracticeLog.isPracticeLog(path: log)
            ? try recordPractice(try PracticeLog.Loaded(path: log, passphrase: passphrase), path: log, speed: speed, to: output)
            : try CastRecorder(path: log, speed: speed, passphrase: passphrase).record(to: output)
        let json = JSONValue.object([
            ("cast", .string(output)), ("frames", .int(Int64(summary.frames))),
            ("markers", .int(Int64(summary.markers.count))), ("seconds", .double((summary.seconds * 1000).rounded() / 1000)),
            ("bytes", .int(Int64(summary.bytes))), ("result", summary.headline.map { .string($0) } ?? .null),
        ])
        FileHandleOutput.stdout(json.serialized)
    }

    /// Records a practice log: the match re-run tick by tick as the practice screen shows it
    /// (banners held as long, the results at the end), 30 frames a second of match time.
    static func recordPractice(_ log: PracticeLog.Loaded, path: String, speed: Double, to output: String) throws -> Summary {
        let screen = PracticeScreen(playback: log, speed: 1, unicode: true)
        var cast = CastScreen(title: "eggs replay — \(baseName(path))")
        var writer = try CastWriter(path: output, width: cast.width, height: cast.height,
                                    title: "eggs: \(baseName(path))", bytesMax: castBytesMax)
        defer { writer.close() }
        var summary = Summary()
        var ticks = 0
        var drawn = -1
        func frame(status: String) throws {
            let changes = cast.render(screen.castScene(), status: status)
            if !changes.isEmpty {
                try writer.output(at: Double(ticks) / 60 / speed, changes)
                summary.frames += 1
            }
            drawn = ticks
        }
        try frame(status: "")
        while screen.wantsTicks {
            _ = screen.tick()
            ticks += 1
            for chain in screen.takeChains() {
                let label = "\(screen.seatNames[chain.seat]): \(chain.length)-chain"
                try writer.marker(at: Double(ticks) / 60 / speed, label: label)
                summary.markers.append(label)
            }
            if ticks - drawn >= 2 { try frame(status: "") }
        }
        try frame(status: log.truncatedAtLine.map { "The log is cut off at line \($0)." } ?? "end of log")
        if case .results(let results) = screen.castScene() { summary.headline = results.headline }
        summary.seconds = Double(ticks) / 60 / speed
        try writer.finish()
        summary.bytes = writer.bytesWritten
        return summary
    }

    static func baseName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}

/// A message log read whole: the recording peer and its delivered events with their times.
/// A whole message log read into memory and checked line by line (the terminal replay and the
/// cast recorder both start from one).
struct LoadedLog {
    var header: PeerID
    var events: [(event: PeerNetEvent, at: Int64)] = []
    var truncatedAtLine: Int?

    init(path: String, passphrase: String? = nil) throws {
        let bytes: [UInt8]
        switch WholeFile.read(path, limit: ReplayScreen.logBytesMax) {
        case .success(let all): bytes = all
        case .failure(.cannotOpen(let code)):
            throw CommandFailure.badInput("cannot open '\(path)': \(WholeFile.Failure.cannotOpen(code).reason)")
        case .failure(.unreadableOrTooLarge):
            throw CommandFailure.badInput("cannot read '\(path)', or it is over \(ReplayScreen.logBytesMax) bytes")
        }
        var reader = LogReader(passphrase: passphrase)
        reader.receive(bytes)
        reader.finish()
        var header: PeerID?
        reading: while true {
            let next: LogReaderEvent
            do {
                next = try reader.nextEvent()
            } catch {
                throw CommandFailure.badInput("\(path): \(error)")
            }
            switch next {
            case .header(let peer, _, _): header = peer
            case .event(let event, let at, _): events.append((event, at))
            case .truncated(let line):
                truncatedAtLine = line
                break reading
            case .closed: break  // the end line: whatever follows it is damage the reader names
            case .needData, .end: break reading
            }
        }
        guard let header else { throw CommandFailure.badInput("\(path): line 1: not an eggs log header") }
        self.header = header
    }
}

/// Finds every lock of every player's mirror grid between two looks, and the chain it made.
struct ChainWatcher {
    struct Chain: Equatable {
        var player: PeerID
        var length: Int
    }

    private struct Look: Equatable {
        var game: UInt32
        /// Resolutions the grid has ended (each one's chain, possibly empty, became `lastChain`).
        var chainsResolved: Int
    }

    private var looks: [PeerID: Look] = [:]

    /// The chains of `markedChainMin` or more that ended since the last look.
    mutating func observe(_ replica: MatchPeer) -> [Chain] {
        guard let match = replica.match else { return [] }
        var chains: [Chain] = []
        for player in match.players {
            guard let grid = match.mirrors[player]?.grid else { continue }
            let now = Look(game: match.game, chainsResolved: grid.chainsResolved)
            defer { looks[player] = now }
            // A chain ends in time after its pair locked: each resolution that ended is marked
            // once (between two looks at most one ends, since a chain takes many ticks).
            let ended = looks[player].map { $0.game == now.game && now.chainsResolved > $0.chainsResolved }
                ?? (now.chainsResolved > 0)
            if ended, let chain = grid.lastChain, chain.chain >= CastRecorder.markedChainMin {
                chains.append(Chain(player: player, length: chain.chain))
            }
        }
        return chains
    }
}

/// The recording's screen: lines of text with ANSI colours, compared with the last frame
/// so that only changed lines are sent.
struct CastScreen {
    static let panelWidth = 24
    static let panelsMax = 8
    let width: Int
    let height: Int
    let title: String
    private var shown: [String] = []

    init(title: String) {
        self.title = title
        width = max(80, Self.panelWidth * 4)
        height = 2 + 2 + Board.visibleRows.count + 3
    }

    /// What a frame shows.
    enum Scene {
        /// The replica as it stands: the lobby, or the game in progress (counted from 1 in the match).
        case replica(MatchPeer, gameNumber: Int)
        /// A game's final boards under its banner.
        case held([Panel], banner: [String], number: Int)
        /// The match's results table.
        case results(MatchResults)
        /// Boards under a header line (a practice match).
        case boards(header: String, [Panel])
    }

    /// The escape sequences that bring the terminal from the last frame to this one.
    mutating func render(_ scene: Scene, status: String) -> String {
        let lines = Self.lines(scene, title: title, status: status, width: width, height: height)
        var out = shown.isEmpty ? "\u{1B}[2J" : ""
        for (row, line) in lines.enumerated() where row >= shown.count || shown[row] != line {
            out += "\u{1B}[\(row + 1);1H" + line + "\u{1B}[0m\u{1B}[K"
        }
        shown = lines
        return out
    }

    static func lines(_ scene: Scene, title: String, status: String, width: Int, height: Int) -> [String] {
        var lines = [String](repeating: "", count: height)
        lines[0] = "\u{1B}[1m" + String(title.prefix(width)) + "\u{1B}[0m"
        switch scene {
        case .replica(let replica, let number):
            guard let match = replica.match else {
                lines[1] = String("lobby   \(status)".prefix(width))
                for (index, (id, hello)) in replica.lobby.sorted(by: { $0.key < $1.key }).prefix(height - 3).enumerated() {
                    lines[3 + index] = "  \(id.hex)  \(hello.name.prefix(24))  \(hello.role == .player ? "player" : "spectator")"
                }
                return lines
            }
            lines[1] = String("game \(number), best of \(match.settings.gamesPerMatch)   \(status)".prefix(width))
            let boards = match.players.map { id -> Panel in
                let grid = match.mirrors[id]?.grid ?? PlayerGrid()
                let chain = grid.lastChain?.chain ?? 0
                return Panel(name: replica.lobby[id]?.name ?? id.hex, wins: match.wins[id] ?? 0, grid: grid,
                             state: grid.state == .toppedOut ? "out" : (chain > 1 ? "\(chain)-chain!" : ""))
            }
            draw(boards, into: &lines, width: width)
        case .boards(let header, let boards):
            lines[1] = String("\(header)   \(status)".prefix(width))
            draw(boards, into: &lines, width: width)
        case .held(let boards, let banner, let number):
            lines[1] = String("game \(number) over   \(status)".prefix(width))
            draw(boards, into: &lines, width: width)
            // The banner over the boards' middle rows, in reverse video, as on the players' screens.
            let inner = min(width, (banner.map(\.count).max() ?? 0) + 4)
            let indent = String(repeating: " ", count: max(0, (width - inner) / 2))
            let top = 2 + (height - 2 - banner.count - 2) / 2
            for (offset, text) in ([""] + banner + [""]).enumerated() where top + offset < height {
                let padded = String(("  " + text + String(repeating: " ", count: inner)).prefix(inner))
                lines[top + offset] = indent + "\u{1B}[1;7m" + padded + "\u{1B}[0m"
            }
        case .results(let results):
            lines[1] = String("match over   \(status)".prefix(width))
            let head = [results.headline, "Match over: \(results.games) game\(results.games == 1 ? "" : "s")"]
                + (results.note.map { [$0] } ?? []) + [""]
            for (offset, text) in (head + results.tableLines()).enumerated() where 3 + offset < height {
                let cut = String(text.prefix(width - 2))
                lines[3 + offset] = offset == 0 ? "  \u{1B}[1m" + cut + "\u{1B}[0m" : "  " + cut
            }
        }
        return lines
    }

    /// One player's board as a recording draws it.
    struct Panel {
        var name: String
        var wins: Int
        var grid: PlayerGrid
        /// Under the board: "out", "winner", "3-chain!".
        var state: String
    }

    /// Draws boards side by side from row 2, as many as fit `width`.
    private static func draw(_ boards: [Panel], into lines: inout [String], width: Int) {
        for (index, board) in boards.prefix(width / panelWidth).enumerated() {
            let grid = board.grid
            let name = String(board.name.prefix(14))
            let column = index * panelWidth
            func put(_ row: Int, _ text: String) {
                lines[row] += String(repeating: " ", count: max(0, column - visibleWidth(lines[row]))) + text
            }
            put(2, "\u{1B}[1m\(name)\u{1B}[0m" + String(repeating: " ", count: max(0, 15 - name.count)) + "wins \(board.wins)")
            // The top edge shows garbage in the rows above the board (sfe's rows 0–2), as on screen.
            let glyphs = Glyphs(unicode: true)
            let edge = MatchView.topEdge(grid: grid, queuedGarbage: 0).map { $0.text(width: 2, glyphs: glyphs) ?? "──" }
            put(3, "┌" + edge.joined() + "┐")
            for (shown, row) in Board.visibleRows.enumerated() {
                var text = "│"
                for col in 0..<Board.columnsCount { text += cell(grid.displayCell(column: col, row: row)) }
                put(4 + shown, text + "│")
            }
            put(4 + Board.visibleRows.count, "└" + String(repeating: "─", count: Board.columnsCount * 2) + "┘")
            put(5 + Board.visibleRows.count, board.state)
        }
    }

    /// A cell two columns wide: a coloured glyph and a space.
    static func cell(_ cell: Cell) -> String {
        let glyph = Glyphs(unicode: true).cell(cell)
        switch cell {
        case .empty: return "\u{1B}[2m" + glyph + "\u{1B}[0m "
        case .garbage: return "\u{1B}[37m" + glyph + "\u{1B}[0m "
        case .egg(let color):
            let code: Int
            switch color {
            case .red: code = 31
            case .blue: code = 34
            case .yellow: code = 33
            case .purple: code = 35
            case .green: code = 32
            case .orange: code = 91
            }
            return "\u{1B}[1;\(code)m" + glyph + "\u{1B}[0m "
        }
    }

    /// Columns a line takes on screen: characters outside escape sequences.
    static func visibleWidth(_ line: String) -> Int {
        var count = 0
        var inEscape = false
        for scalar in line.unicodeScalars {
            if inEscape {
                if scalar.properties.isAlphabetic { inEscape = false }
            } else if scalar == "\u{1B}" {
                inEscape = true
            } else {
                count += 1
            }
        }
        return count
    }
}

/// Writes an asciicast v2 file: a JSON header line, then one `[time, code, data]` line per
/// event, buffered and bounded in size.
struct CastWriter {
    private let file: FileDescriptor
    private let path: String
    private let bytesMax: Int
    private var buffer: [UInt8] = []
    private(set) var bytesWritten = 0
    private var lastTime = 0.0

    init(path: String, width: Int, height: Int, title: String, bytesMax: Int) throws {
        do {
            file = try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate, .closeOnExec],
                                           permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch {
            throw CommandFailure.badInput("cannot write '\(path)': \(LogFile.describe(Errno(thrown: error)))")
        }
        self.path = path
        self.bytesMax = bytesMax
        let header = JSONValue.object([
            ("version", .int(2)), ("width", .int(Int64(width))), ("height", .int(Int64(height))),
            ("timestamp", .int(Int64(time(nil)))), ("title", .string(title)),
            ("env", .object([("TERM", .string("xterm-256color"))])),
        ])
        try append(header.serialized)
    }

    mutating func output(at seconds: Double, _ text: String) throws {
        try event(at: seconds, code: "o", data: text)
    }

    mutating func marker(at seconds: Double, label: String) throws {
        try event(at: seconds, code: "m", data: label)
    }

    private mutating func event(at seconds: Double, code: String, data: String) throws {
        // Times never go back, even when the log's wall clock did.
        lastTime = max(lastTime, seconds)
        let time = (lastTime * 1_000_000).rounded() / 1_000_000
        try append(JSONValue.array([.double(time), .string(code), .string(data)]).serialized)
    }

    private mutating func append(_ line: String) throws {
        buffer += line.utf8
        buffer.append(UInt8(ascii: "\n"))
        guard bytesWritten + buffer.count <= bytesMax else {
            throw CommandFailure.detected("\(path): the recording would be over \(bytesMax) bytes; stopped")
        }
        if buffer.count >= 1 << 16 { try flush() }
    }

    mutating func finish() throws { try flush() }

    private mutating func flush() throws {
        if let code = FileHandleOutput.writeAll(file, buffer[...]) {
            throw CommandFailure.detected("cannot write '\(path)': \(LogFile.describe(code))")
        }
        bytesWritten += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }

    func close() { try? file.close() }
}
