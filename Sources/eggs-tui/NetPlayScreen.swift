import Consensus
import EggBot
import EggGame
import Logging
import PeerNet
import PeerNetUDP

/// Network play: the lobby of the room, then the match, with every player's grid.
final class NetPlayScreen: Screen {
    private let peer: NetPeer
    private let keys: KeyMap
    private let glyphs: Glyphs
    private let room: String
    /// The name this player goes by in the room (`e` in the lobby changes it).
    private var name: String
    /// The new name being typed after `e` in the lobby (nil: not renaming).
    private var renaming: String?
    private let spectator: Bool
    /// Whether the room has a passphrase (a private room) or not (an open room).
    private let privateRoom: Bool
    private var settings: MatchSettings
    private var practiceLevel: BotLevel = .medium
    private var confirmingQuit = false
    /// Another live peer already uses this peer's ID: the screen ends and `play` says so.
    private(set) var ownIDInUse = false
    /// Set when this process was found stopped (how long, ns) until it is in a room again.
    private var rejoinAfterPause: UInt64?

    /// Whole seconds of `nanoseconds`, rounded.
    static func seconds(_ nanoseconds: UInt64) -> UInt64 { (nanoseconds + 500_000_000) / 1_000_000_000 }
    /// The help overlay is open; the match goes on underneath (ticks and deliveries as ever).
    private var helpShown = false
    private var banner: String?
    private var bannerTicks = 0
    private var desyncs: [Desync] = []
    private var lastChains: [PeerID: Int] = [:]
    /// The match as this screen tells it: game numbers, banners, each player's figures (totalled
    /// at each game's end) and the results.
    private var story: MatchStory
    private var gameStartedAt: UInt64?
    /// After a game: its final boards and the banner, held for a few seconds (the local player's
    /// own grid does not fall meanwhile, and moves are ignored).
    private var finalGame: FinishedGame?
    private var gameBanner: [String]?
    /// The number of the game whose final boards are held (a next match may start meanwhile).
    private var finalGameNumber = 0
    private var holdUntil: UInt64 = 0
    static let holdNanoseconds: UInt64 = 3_000_000_000
    /// The last match's results: shown once the banner is gone, until a key.
    private var results: MatchResults?
    private var resultsPending = false
    private var holding: Bool { MonotonicClock.now().nanoseconds < holdUntil }
    /// Ticks since the last frame this screen asked for; a frame at least every `refreshTicks`.
    private var ticksSinceRefresh = 0
    /// Ticks this screen has run (the clock of ``RemoteBoard/since``).
    private var screenTicks = 0
    /// Each remote player's grid as drawn: carried on in time while it resolves (see ``RemoteBoard``).
    private var remoteBoards: [PeerID: RemoteBoard] = [:]
    /// What the mirrored match shows now (every remote board's picture and every player's garbage
    /// counts; see ``advanceRemoteBoards()``), and what the last frame showed of it, with the
    /// flash phase it drew popping eggs in.
    private var matchPicture: Int?
    private var drawnMatchPicture: Int?
    private var drawnFlashOn = false
    static let refreshTicks = 30
    private let logger = Logger(label: "eggs.play")
    /// Set when the player leaves (q, Ctrl-C): the command ends.
    private(set) var quit = false
    /// Set when the player asks for a practice match from the lobby: the loop ends for it, and
    /// the command runs the practice match, then comes back here.
    private(set) var practiceRequested: BotLevel?
    /// The settings of the practice match asked for: the room's as the lobby shows them (rule
    /// set, colours, speed, games, starting height).
    private(set) var practiceSettings: MatchSettings?
    /// Set when a spectator asks to play (the ready key in the lobby): the loop ends, and the
    /// command opens the peer again as a player in the same room.
    private(set) var joinRequested = false
    /// A spectator asked to play during a match: it joins when that match is over.
    private var joinsAfterMatch = false
    /// The local player left the match for the lobby (`q`, `y`): no banner or results of that
    /// match for it, just the lobby.
    private var leftMatch = false
    /// Peers whose rematch request (a ready mark after a match) was announced already.
    private var rematchAnnounced: Set<PeerID> = []
    /// Whether the last match is over and its rematch requests are worth announcing.
    private var afterMatch = false
    var finished: Bool { quit || practiceRequested != nil || joinRequested }
    /// The optional bell (`--bell`): your chain of 3 or more, garbage landing on you, your
    /// top-out (a spectator's never rings).
    private var bell: BellWatch
    /// The bell rings at the next frame.
    private var bellDue = false
    /// The drop preview on this player's board (config `preview`; the preview key toggles it).
    private var showPreview = Config.current.preview == true

    init(peer: NetPeer, room: String, name: String, spectator: Bool, settings: MatchSettings, keys: KeyMap, unicode: Bool,
         privateRoom: Bool = false, bell: Bool = false) {
        self.bell = BellWatch(enabled: bell && !spectator)
        self.peer = peer
        self.privateRoom = privateRoom
        self.room = room
        self.name = name
        self.spectator = spectator
        self.settings = settings
        self.keys = keys
        self.glyphs = Glyphs(unicode: unicode)
        self.story = MatchStory(local: spectator ? nil : peer.id)
        // The settings given on the command line (or in the config file) are offered to the
        // room: they apply if nobody has set the room's yet (the highest-ID offer wins).
        if !spectator { peer.withMatch { match, _ in match.offerSettings(settings) } }
    }

    /// The game needs ticks while a match runs (gravity); the lobby only needs a look now and then,
    /// but ticks are cheap and keep remote moves appearing as they happen.
    var wantsTicks: Bool { true }

    func interrupted() { quit = true }

    var wake: WakePipe? { peer.wake }

    /// Held moves repeat (kitty keyboard protocol) while this player plays a game, from pair to pair.
    func repeatKind(_ key: TerminalKey) -> KeyRepeatKind? {
        guard !spectator, !holding, renaming == nil, !confirmingQuit, !helpShown, results == nil,
              let action = keys.action(for: key) else { return nil }
        let kind: KeyRepeatKind
        switch action {
        case .left, .right: kind = .delayed
        case .softDrop: kind = .immediate
        default: return nil
        }
        return peer.withMatch { match, _ in match.isPlaying && !match.hasLeftMatch } ? kind : nil
    }

    /// With a trace: remote players' stream counts in the frame being drawn, and as last traced.
    private var drawnInputs: (game: UInt32, counts: [PeerID: Int])?
    private var shown = InputProgress()

    func drawn() {
        guard let trace = peer.trace, let drawnInputs else { return }
        trace.recordAdvances("shown", game: drawnInputs.game, counts: drawnInputs.counts, progress: &shown)
    }

    func resumeAfterPractice() { practiceRequested = nil }

    /// What a key did once it crossed the peer.
    private enum KeyOutcome {
        /// A move the local grid took: the game and the inputs made so far (for the trace).
        case moved(game: UInt32, inputs: Int)
        /// Quit asked during a match (a player confirms first).
        case quitInMatch
        case quitInLobby
        case notice(String)
        /// A lobby key of this screen alone (the practice bot's level, practice).
        case lobbyOnly
        /// `e` in the lobby: type a new name.
        case rename
        /// A spectator's ready key: join the players now (in the lobby), or when the match ends.
        case joinPlayers
        case joinAfterMatch
        case none
    }

    /// One key: it crosses the peer once (one lock, one pump), whatever it does.
    func handle(key: TerminalKey) {
        if let entry = renaming {
            typeName(key, entry: entry)
            return
        }
        if confirmingQuit {
            confirmingQuit = false
            if key == .character("y") || key == .character("Y") {
                // Back to the lobby of the same room: the match is forfeited, the room kept.
                let left = peer.withMatch { match, now in match.leaveMatch(now: now) }
                if left {
                    leftMatch = true
                    show("You left the match; back in the lobby of room \(room)")
                }
            }
            return
        }
        if helpShown {
            // Any key closes the overlay, and does nothing else.
            helpShown = false
            return
        }
        let action = keys.action(for: key)
        if results != nil, !resultsPending {
            // The results stay until a key: quit leaves, ready asks for a rematch, any other
            // key goes back to the lobby.
            self.results = nil
            if action == .quit { quit = true }
            if action == .ready, !spectator {
                peer.withMatch { match, now in match.markReady(now: now) }
            }
            if action == .ready, spectator { joinRequested = true }
            return
        }
        if HelpOverlay.opens(key, keys: keys) {
            helpShown = true
            return
        }
        if action == .preview {
            showPreview.toggle()
            return
        }
        let spectator = self.spectator, holding = self.holding
        let move = action.flatMap { PracticeScreen.move(for: $0) }
        let pressed = MonotonicClock.wallMicroseconds()
        let outcome = peer.withMatch { match, now -> KeyOutcome in
            if action == .quit || key == .character("Q") {
                return match.isPlaying && !match.hasLeftMatch ? .quitInMatch : .quitInLobby
            }
            if spectator, action == .ready { return match.isPlaying ? .joinAfterMatch : .joinPlayers }
            guard match.isPlaying else { return Self.lobbyKey(key, action: action, spectator: spectator, match: &match, now: now) }
            guard !spectator, !holding, let move, match.applyLocal(move, now: now)?.isAccepted == true,
                  let owner = match.owner else { return .none }
            return .moved(game: owner.game, inputs: owner.inputsMade)
        }
        switch outcome {
        case .moved(let game, let inputs):
            peer.trace?.record("key", player: peer.id.hex, game: game, inputs: inputs, atMicroseconds: pressed)
        case .quitInMatch:
            if spectator { quit = true } else { confirmingQuit = true }
        case .quitInLobby:
            quit = true
        case .notice(let text):
            show(text)
        case .lobbyOnly:
            if key == .character("l") {
                let all = BotLevel.allCases
                practiceLevel = all[((all.firstIndex(of: practiceLevel) ?? 0) + 1) % all.count]
            } else {
                practiceSettings = peer.withMatch { match, _ in match.roomSettings }
                practiceRequested = practiceLevel
            }
        case .rename:
            renaming = ""
        case .joinPlayers:
            joinRequested = true
        case .joinAfterMatch:
            joinsAfterMatch = true
            show("You join the players when this match ends.")
        case .none:
            break
        }
    }

    /// A key while a new name is typed: characters add (up to the 24 bytes a name holds),
    /// backspace takes the last one back, enter applies it in the room, escape keeps the old one.
    private func typeName(_ key: TerminalKey, entry: String) {
        switch key {
        case .enter:
            renaming = nil
            let renamed = peer.withMatch { match, _ in match.rename(to: entry) ? match.name : nil }
            if let renamed {
                name = renamed
                // Kept for next time in the config file (a --name on the command line still wins).
                if let problem = Config.saveName(renamed) {
                    show("You are \(renamed) in the room now (not saved for next time: \(problem))")
                } else {
                    show("You are \(renamed) in the room now, and next time")
                }
            } else {
                show("Name not changed: give 1 to 24 bytes, in the lobby")
            }
        case .escape:
            renaming = nil
        case .backspace:
            renaming = String(entry.dropLast())
        case .character(let c) where !c.isNewline && (entry + String(c)).utf8.count <= Hello.nameBytesMax:
            renaming = entry + String(c)
        default:
            break
        }
    }

    /// Lobby keys, on the match under the peer's lock: ready toggles this player's ready mark;
    /// `s`, `c`, `g`, `h`, `t` (rule set) change the room's settings (for everyone, clearing every ready mark);
    /// `n` starts now with the ready players. Spectators change nothing.
    private static func lobbyKey(_ key: TerminalKey, action: KeyAction?, spectator: Bool,
                                 match: inout MatchPeer, now: NetTime) -> KeyOutcome {
        if action == .ready {
            guard !spectator else { return .none }
            if match.isMarkedReady { match.unready(now: now) } else { match.markReady(now: now) }
            return .none
        }
        switch key {
        case .character("s"), .character("c"), .character("g"), .character("h"), .character("t"):
            guard !spectator else { return .none }
            var settings = match.roomSettings
            switch key {
            case .character("s"): settings.speed = (settings.speed + 1) % 10
            case .character("c"): settings.colors = settings.colors == 6 ? 4 : settings.colors + 1
            case .character("t"):
                // The next rule set; the starting height kept within its range (tsu has none).
                let all = RuleSet.all
                settings.ruleSet = all[((all.firstIndex(of: settings.ruleSet) ?? 0) + 1) % all.count]
                let heights = settings.ruleSet.startingHeights
                settings.startingHeight = min(max(settings.startingHeight, heights.lowerBound), heights.upperBound)
            case .character("h"):
                // The starting height, within the room's rule set's range (tsu has none).
                let heights = settings.ruleSet.startingHeights
                guard heights.count > 1 else { return .none }
                settings.startingHeight = settings.startingHeight >= heights.upperBound ? heights.lowerBound : settings.startingHeight + 1
            default:
                let all = MatchSettings.gamesPerMatchAllowed
                settings.gamesPerMatch = all[((all.firstIndex(of: settings.gamesPerMatch) ?? 0) + 1) % all.count]
            }
            match.changeSettings(settings)
            return .none
        case .character("n"):
            // Start now with the ready players (allowed 30 s after the first ready, two ready).
            guard !spectator else { return .none }
            if !match.startNow(now: now) {
                return .notice("Not yet: n works 30 s after the first ready, with two players ready.")
            }
            return .none
        case .character("l"), .character("b"):
            return .lobbyOnly
        case .character("e"):
            return match.isInLobby ? .rename : .none
        default:
            return .none
        }
    }

    func tick() -> Bool {
        let spectator = self.spectator, settings = self.settings, heldUp = holding
        // The own grid changed when the tick made an input (gravity, a spawn, garbage landing).
        let ownMoved = peer.withMatch { match, now -> Bool in
            // A spectator votes ready by itself once two players are in the room (a room of bots
            // waits for every member's start vote; in a room of people the spectator's vote
            // neither starts nor delays anything, see `RoomLobby`).
            if spectator { match.getReady(whenPlayers: 2, settings: settings, wantsToPlay: false) }
            if match.match == nil { match.lobbyTick(now: now) }
            let before = match.owner.map { ($0.game, $0.inputsMade, $0.grid.ticksPlayed) }
            if !heldUp { match.tick(now: now) }
            let after = match.owner.map { ($0.game, $0.inputsMade, $0.grid.ticksPlayed) }
            return before?.0 != after?.0 || before?.1 != after?.1 || before?.2 != after?.2
        }
        if joinsAfterMatch, !peer.withMatch({ match, _ in match.isPlaying }) { joinRequested = true }
        if bell.enabled, let board = peer.withMatch({ match, _ in
            match.owner.map {
                BellWatch.Board(game: $0.game, resolutions: $0.grid.chainsResolved, steps: $0.grid.chainSteps.count,
                                garbageLanded: $0.garbageLanded, toppedOut: $0.grid.state == .toppedOut)
            }
        }), bell.observe(board, at: MonotonicClock.now().nanoseconds) {
            bellDue = true
        }
        // Remote moves wake the loop and redraw at once (WakePipe); otherwise only the own grid's
        // changes, a remote chain going on in time, events and a refresh twice a second (link
        // figures) need a frame.
        ticksSinceRefresh += 1
        screenTicks += 1
        var changed = ownMoved || ticksSinceRefresh >= Self.refreshTicks || advanceRemoteBoards()
        if peer.ownIDInUse {
            ownIDInUse = true
            quit = true
        }
        for other in peer.takeCollisions() {
            changed = true
            show(other == peer.id ? "Another peer is using your ID \(other.hex): the room refuses it"
                                  : "Two peers use the ID \(other.hex): the newcomer is refused")
        }
        // The history's one warning line (a locked, full, read-only or corrupt database).
        for warning in peer.history?.takeWarnings() ?? [] {
            changed = true
            show(warning)
        }
        for away in peer.takePauses() {
            changed = true
            rejoinAfterPause = away
            show("You were away for \(Self.seconds(away)) s; rejoining the room")
        }
        for event in peer.takeEvents() {
            changed = true
            switch event {
            case .desync(let desync):
                desyncs.append(desync)
                logger.error("\(desync)")
            case .gameOver(let game, let winner):
                if !leftMatch { gameEnded(winner: winner) }
                logger.info("game over", metadata: ["game": "\(game)", "winner": "\(winner?.hex ?? "none")"])
            case .matchOver(let winner, let wins):
                if leftMatch {
                    // The leaver goes straight to the lobby: no hold, no results.
                    leftMatch = false
                    finalGame = nil
                    gameBanner = nil
                    holdUntil = 0
                    results = nil
                    resultsPending = false
                } else {
                    matchEnded(winner: winner, wins: wins)
                }
                afterMatch = true
                rematchAnnounced = []
            case .playerOut(let player, let name, let reason):
                if !name.isEmpty, player != peer.id { lobbyNames[player] = name }
                story.playerOut(player, name: name.isEmpty ? displayName(player) : name, reason: reason)
                if player != peer.id { show(MatchStory.outText(name: displayName(player), reason: reason)) }
            case .lobbyChanged:
                announceRematches()
            case .gameStarted:
                gameStartedAt = MonotonicClock.now().nanoseconds
                story.seen(atMicroseconds: Int64(MonotonicClock.wallMicroseconds()))
            case .synced(fromSnapshot: true):
                // Came into a room whose match is under way: the results say from when.
                if peer.withMatch({ match, _ in match.match != nil }) { story.seen(atMicroseconds: Int64(MonotonicClock.wallMicroseconds())) }
            case .matchStarted(let settings, let players):
                show("Match starts: \(players.count) players, \(settings.ruleSet.name), speed \(settings.speed), best of \(settings.gamesPerMatch)"
                     + (settings.startingHeight > 0 ? ", starting height \(settings.startingHeight)" : ""))
                lastChains = [:]
                story.matchStarted()
                results = nil
                afterMatch = false
                leftMatch = false
            case .startFailed(let count):
                show("Not enough players (\(count)); get ready again when others are here.")
            case .viewChanged(let view):
                // Players of the match are announced by `playerOut` (with why they went).
                for gone in view.departed where !story.outOfMatch.contains(where: { $0.player == gone }) { show("\(displayName(gone)) left") }
                if let away = rejoinAfterPause, view.members.count > 1 {
                    rejoinAfterPause = nil
                    show("You were away for \(Self.seconds(away)) s; rejoined the room")
                }
            default: break
            }
        }
        if resultsPending && !holding {
            resultsPending = false
            changed = true
        }
        if gameBanner != nil && !holding {
            gameBanner = nil
            finalGame = nil
            changed = true
            // The next game's time counts from the end of the hold.
            if gameStartedAt != nil { gameStartedAt = MonotonicClock.now().nanoseconds }
        }
        if bannerTicks > 0 {
            bannerTicks -= 1
            if bannerTicks == 0 { banner = nil; changed = true }
        }
        if changed { ticksSinceRefresh = 0 }
        return changed
    }

    /// Carries every remote board on by the ticks this screen ran since its stream last moved
    /// (see ``RemoteBoard``); returns whether a frame would now show something else than the
    /// last one: a remote board's picture or a player's garbage changed, or popping eggs are due
    /// to flash the other way. (The own grid's changes are the tick's; events are drawn anyway.)
    private func advanceRemoteBoards() -> Bool {
        let me = peer.id
        // Under the host's lock only the counts are read, and a grid only where the mirror moved
        // on since the screen took it (most ticks none did): the lock is held briefly.
        let held = remoteBoards.mapValues { ($0.game, $0.inputs) }
        let remote = peer.withMatch { match, _ -> (UInt32, [(PeerID, Int, PlayerGrid?, Int, Int)])? in
            guard let state = match.match, state.mirrored else { return nil }
            return (state.game, state.mirrors.sorted { $0.key < $1.key }.map { id, mirror in
                let known = held[id].map { taken in taken == (state.game, mirror.inputsApplied) } ?? false
                return (id, mirror.inputsApplied, known || id == me ? nil : mirror.grid,
                        mirror.garbageReceived, mirror.garbageLanded)
            })
        }
        guard let (game, mirrors) = remote else {
            remoteBoards = [:]
            matchPicture = nil
            return false
        }
        var hasher = Hasher()
        hasher.combine(game)
        var popping = false
        for (id, inputs, grid, received, landed) in mirrors {
            hasher.combine(id)
            hasher.combine(received)
            hasher.combine(landed)
            guard id != me else { continue }
            var board = remoteBoards[id]
            if let grid { board = RemoteBoard(game: game, inputs: inputs, since: screenTicks, grid: grid) }
            board!.advance(to: screenTicks)
            remoteBoards[id] = board
            let picture = RemoteBoard.picture(board!.grid)
            hasher.combine(picture.hash)
            popping = popping || picture.popping
        }
        if remoteBoards.count >= mirrors.count {
            let live = Set(mirrors.map(\.0))
            remoteBoards = remoteBoards.filter { live.contains($0.key) && $0.key != me }
        }
        matchPicture = hasher.finalize()
        return matchPicture != drawnMatchPicture || (popping && MatchView.flashOn() != drawnFlashOn)
    }

    /// A delivery woke the loop. In a mirrored match most deliveries change nothing shown (votes
    /// on egg rounds ahead, checkpoints, idle ticks of a falling pair between its half-cell
    /// steps): a frame is drawn only when a board or a garbage count changed. Elsewhere (the
    /// lobby, pictures, the banners and results) every delivery is drawn.
    func woke() -> Bool {
        guard finalGame == nil, results == nil, gameBanner == nil else { return true }
        let moved = advanceRemoteBoards()
        return matchPicture == nil || moved
    }

    /// Remote player `id`'s board carried on in time, when it is at the mirror's stream position.
    private func carriedBoard(_ id: PeerID, game: UInt32, mirror: PlayerMirror) -> RemoteBoard? {
        guard let board = remoteBoards[id], board.game == game, board.inputs == mirror.inputsApplied else { return nil }
        return board
    }

    /// The grid to draw for remote player `id`: its carried board's, else the mirror's grid as it stands.
    private func remoteGrid(_ id: PeerID, game: UInt32, mirror: PlayerMirror) -> PlayerGrid {
        carriedBoard(id, game: game, mirror: mirror)?.grid ?? mirror.grid
    }

    /// Totals the finished game into the match's figures and raises the game-over banner over
    /// its final boards.
    private func gameEnded(winner: PeerID?) {
        let finished = peer.withMatch { match, _ in match.lastGame }
        let now = MonotonicClock.now().nanoseconds
        let played = gameStartedAt.map { Double(now &- $0) / 1e9 } ?? 0
        gameStartedAt = nil
        story.seen(atMicroseconds: Int64(MonotonicClock.wallMicroseconds()))
        gameBanner = story.gameEnded(finished, winner: winner, seconds: played, name: displayName)
        finalGameNumber = story.gamesFinished
        finalGame = finished?.mirrored == true ? finished : nil
        holdUntil = now + Self.holdNanoseconds
    }

    private func matchEnded(winner: PeerID?, wins: [PeerID: Int]) {
        results = story.results(winner: winner, wins: wins, name: displayName)
        resultsPending = true
    }

    /// Every name heard in the room (a peer that left keeps its name: entries are never dropped).
    private var lobbyNames: [PeerID: String] = [:]

    /// After a match: says who wants a rematch (a ready mark in the new start round), once each.
    private func announceRematches() {
        guard afterMatch else { return }
        let ready = peer.withMatch { match, _ in match.isPlaying ? [] : Array(match.readyMarks.keys) }
        for id in ready.sorted() where id != peer.id && !rematchAnnounced.contains(id) {
            rematchAnnounced.insert(id)
            show("\(displayName(id)) wants a rematch (\(keys.label(.ready)): you too)")
        }
    }

    /// The others who asked for a rematch (for the results screen).
    private func rematchLines(_ match: MatchPeer) -> [String] {
        guard afterMatch, !match.isPlaying else { return [] }
        return match.readyMarks.keys.filter { $0 != peer.id }.sorted().map { "\(displayName($0)) wants a rematch" }
    }
    private var links: [PeerID: LinkStats] = [:]

    /// "0.3 ms 0%": the smoothed round-trip time and the loss of the link to `id`.
    private func linkText(_ id: PeerID) -> String? {
        guard let link = links[id] else { return nil }
        let rtt: String
        if let nanos = link.roundTripNanoseconds {
            let ms = Double(nanos) / 1e6
            rtt = ms < 10 ? "\((ms * 10).rounded() / 10) ms" : "\(Int(ms.rounded())) ms"
        } else {
            rtt = "? ms"
        }
        return "\(rtt) \(Int((link.lossFraction * 100).rounded()))%"
    }

    /// The status line above the footer: every other peer's round-trip time and loss.
    private func drawLinks(order: [PeerID], on term: Terminal) {
        var seen = Set<PeerID>()
        var parts: [String] = []
        for id in order where id != peer.id && seen.insert(id).inserted {
            if let text = linkText(id) { parts.append("\(displayName(id)) \(text)") }
        }
        guard !parts.isEmpty else { return }
        term.put(term.rows - 2, 0, "rtt/loss: " + parts.joined(separator: " · "))
    }

    private func displayName(_ id: PeerID) -> String {
        id == peer.id ? "you" : (lobbyNames[id] ?? id.hex)
    }

    private func show(_ text: String) {
        banner = text
        bannerTicks = 5 * 60
    }

    func draw(on term: Terminal) {
        if bellDue {
            bellDue = false
            term.bell()
        }
        let screen = peer.screenState()
        drawScreen(screen, on: term)
        guard helpShown else { return }
        let match = screen.match
        let place: HelpOverlay.Place = match.match == nil ? .lobby : .networkMatch(spectator: spectator)
        HelpOverlay.draw(place: place, keys: keys, rules: match.match?.settings.ruleSet ?? match.roomSettings.ruleSet, on: term)
    }

    private func drawScreen(_ screen: NetPeer.ScreenState, on term: Terminal) {
        let match = screen.match
        links = screen.links
        // Names accumulate: a player that left keeps its name in header, banner and results.
        for (id, hello) in match.lobby where !hello.name.isEmpty { lobbyNames[id] = hello.name }
        for (id, name) in match.match?.names ?? [:] where lobbyNames[id] == nil { lobbyNames[id] = name }
        if let results, !resultsPending {
            if GameLoop.drawTooSmall(on: term, columns: 60, rows: 12) { return }
            let rematch = spectator ? "" : "\(keys.label(.ready)): rematch   "
            results.draw(on: term, hint: rematch + "\(keys.label(.quit)): quit   any other key: lobby", notes: rematchLines(match))
            return
        }
        if let final = finalGame, let gameBanner {
            let count = max(2, final.mirrors.count)
            if !MatchView.fits(count: count, columns: term.columns, rows: term.rows),
               GameLoop.drawTooSmall(on: term, columns: min(count, 2) * MatchView.fullWidth, rows: MatchView.minimumRows) { return }
            term.put(0, 0, GameLoop.fitting(["eggs — room \(room) — game \(finalGameNumber) over", "eggs — game \(finalGameNumber) over"],
                                            width: term.columns), bold: true)
            let names = lobbyNames
            let panels = story.finalPanels(final) { names[$0] ?? $0.hex }
            let area = MatchView.draw(panels, on: term, glyphs: glyphs, top: 1)
            Banner.draw(gameBanner, on: term, centreRow: area.centreRow)
            drawFooter(match, on: term)
            return
        }
        // A player who left the match is in the lobby, even while the others play on (3 or more).
        if let state = match.match, !match.hasLeftMatch {
            let count = max(2, state.players.count)
            let fits = MatchView.fits(count: count, columns: term.columns, rows: term.rows)
            if !fits, GameLoop.drawTooSmall(on: term, columns: min(count, 2) * MatchView.fullWidth, rows: MatchView.minimumRows + (count > 2 ? MatchView.panelHeight : 0)) { return }
            drawMatch(match, state: state, on: term)
            drawLinks(order: state.players + (match.view?.members ?? []), on: term)
        } else {
            if GameLoop.drawTooSmall(on: term, columns: 60, rows: 16) { return }
            drawLobby(match, net: screen.net, status: screen.status, incompatible: screen.incompatible, watching: screen.watching,
                      isReceiver: screen.isReceiver, on: term)
        }
        drawFooter(match, on: term)
        if let failure = peer.logFailure { term.put(term.rows - 2, 0, "warning: \(failure); the match is no longer logged", bold: true) }
    }

    private func drawMatch(_ match: MatchPeer, state: MatchState, on term: Terminal) {
        let game = "game \(state.gamesPlayed + 1), best of \(state.settings.gamesPerMatch), speed \(state.settings.speed)"
        term.put(0, 0, GameLoop.fitting(["eggs — room \(room) — \(game)", "eggs — \(game)", game], width: term.columns), bold: true)
        let present = Set(match.view?.members ?? [])
        var order = state.players
        if let me = order.firstIndex(of: peer.id) { order.insert(order.remove(at: me), at: 0) }
        if peer.trace != nil {
            drawnInputs = (state.game, state.mirrors.filter { $0.key != peer.id }.mapValues(\.inputsApplied))
        }
        let panels = order.map { id -> PlayerPanel in
            let isMe = id == peer.id && match.owner != nil
            let mirror = state.mirrors[id]
            let grid = isMe ? match.owner!.grid : (mirror.map { remoteGrid(id, game: state.game, mirror: $0) } ?? PlayerGrid())
            if state.mirrored, let frames = ChainFrames.shared {
                let carriedOn = !isMe && (mirror.flatMap { carriedBoard(id, game: state.game, mirror: $0) }?.ahead ?? 0) > 0
                frames.drew(isMe ? .owner : .mirror, board: "\(id.hex)/\(state.game)", grid: grid, carriedOn: carriedOn)
            }
            var next: [EggPair] = []
            if isMe { next = match.ownerNextPairs }
            else {
                // As many next pairs as the rule set shows (sfe 1, tsu 2), up to the first undecided.
                for round in grid.pairsSpawned..<grid.pairsSpawned + state.settings.ruleSet.nextPairsShown {
                    guard let value = match.eggValue(game: state.game, round: round) else { break }
                    next.append(EggPair(value: value, colors: state.settings.colors))
                }
            }
            if let chain = grid.lastChain?.chain { lastChains[id] = chain }
            let desynced = desyncs.contains { $0.player == id && $0.game == state.game }
            var statusText = isMe ? "you" : (linkText(id) ?? id.hex.suffix(8).description)
            if grid.state == .toppedOut { statusText = "out" }
            if !present.contains(id) || state.leftDuringGame.contains(id) { statusText = "gone" }
            if desynced { statusText = "DESYNC" }
            return PlayerPanel(
                name: lobbyNames[id] ?? id.hex, grid: grid, next: next, wins: state.wins[id] ?? 0,
                incomingGarbage: max(0, (mirror?.garbageReceived ?? 0) - (mirror?.garbageLanded ?? 0)),
                chain: lastChains[id] ?? 0, status: statusText, isLocal: isMe,
                alert: desynced || !present.contains(id) || grid.state == .toppedOut,
                preview: isMe && showPreview ? grid.dropPreview : [])
        }
        if !state.mirrored {
            // Joined during this game: the room sends the players' grids with their queued
            // garbage (again at every spawn and as they change); this peer mirrors the next game.
            guard !state.pictures.isEmpty else {
                term.put(2, 0, "A game is in progress; its grids are on their way.")
                return
            }
            let rules = state.settings.ruleSet
            let pictured = order.map { id -> PlayerPanel in
                let picture = state.pictures[id]
                let grid = picture?.grid(rules: rules) ?? PlayerGrid(rules: rules)
                let gone = !present.contains(id) || state.leftDuringGame.contains(id)
                return PlayerPanel(
                    name: lobbyNames[id] ?? id.hex, grid: grid, next: [], wins: state.wins[id] ?? 0,
                    incomingGarbage: picture?.garbage ?? 0, chain: 0, status: gone ? "gone" : "joined mid-game", isLocal: false, alert: gone)
            }
            MatchView.draw(pictured, on: term, glyphs: glyphs, top: 1)
            return
        }
        drawnFlashOn = MatchView.flashOn()
        drawnMatchPicture = matchPicture
        MatchView.draw(panels, on: term, glyphs: glyphs, top: 1)
    }

    private func drawLobby(_ match: MatchPeer, net: PeerNetStats, status: PeerNetStatus, incompatible: [PeerID: UInt16],
                           watching: Int = 0, isReceiver: Bool = false, on term: Terminal) {
        // The room's kind: open (no passphrase) or private; the title shortens rather than cut.
        let kind = privateRoom ? "private room" : "open room"
        let titles = (term.columns >= 100 ? ["eggs — lobby of room '\(room)' (\(kind)) — you are \(name) (\(peer.id.hex))"] : []) + [
            "eggs — lobby of room '\(room)' (\(kind)) — you are \(name)",
            "eggs — room '\(room)' (\(kind)) — you are \(name)",
            "room '\(room)' (\(kind)) — \(name)",
            "'\(room)' (\(kind))",
        ]
        term.put(0, 0, GameLoop.fitting(titles, width: term.columns), bold: true)
        let state: String
        switch status {
        case .joining: state = "looking for peers…"
        case .member: state = "connected"
        case .flushing: state = "membership changing…"
        case .blocked: state = "cut off from most of the room; waiting to rejoin"
        case .left: state = "left"
        }
        // A spectator is in no view: it follows the players' (the lobby lists them); players
        // see how many watch.
        let watchers = isReceiver ? " — watching as a spectator" : (watching > 0 ? " — \(watching) watching" : "")
        term.put(1, 0, "network: \(state)\(watchers)")
        // The name column is as wide as the longest name with " (you)" (names are at most 24
        // bytes); below 100 columns the peer column shows the ID's last 8 hex digits and the
        // version column is narrower, so 80 columns hold every line whole.
        let wide = term.columns >= 100
        let idWidth = wide ? 16 : 8, versionWidth = wide ? 7 : 4
        let labels = (match.view?.members ?? []).map { (match.lobby[$0]?.name ?? "…") + ($0 == peer.id ? " (you)" : "") }
        let nameWidth = min(30, max(4, labels.map(\.count).max() ?? 4))
        term.put(3, 2, "\(pad("peer", idWidth))  \(pad("name", nameWidth))  \(pad("role", 9))  ready  \(pad(wide ? "version" : "ver", versionWidth))  rtt/loss", bold: true)
        var row = 4
        let ready = match.readyMarks
        for id in match.view?.members ?? [] {
            let hello = match.lobby[id]
            let role = hello.map { $0.role == .player ? "player" : "spectator" } ?? "?"
            let mark = hello?.role == .spectator ? "-" : (ready[id] == true ? "ready" : "-")
            let version = hello.map { "v\($0.protocolVersion)" } ?? "?"
            let label = (hello?.name ?? "…") + (id == peer.id ? " (you)" : "")
            let link = id == peer.id ? "" : (linkText(id) ?? "")
            term.put(row, 2, "\(id.hex.suffix(idWidth))  \(pad(label, nameWidth))  \(pad(role, 9))  \(pad(mark, 5))  \(pad(version, versionWidth))  \(link)",
                     pair: id == peer.id ? Terminal.pairAccent : 0)
            row += 1
        }
        // Each peer you have played, as your history rates it ("bob 1620 ±80, 7-5 with you").
        let others = (match.view?.members ?? []).filter { $0 != peer.id }.compactMap { match.lobby[$0]?.name }
        for line in peer.history?.headToHeadLines(names: others) ?? [] {
            term.put(row, 2, line)
            row += 1
        }
        for (id, version) in incompatible.sorted(by: { $0.key < $1.key }) {
            term.put(row, 2, "\(id.hex)  incompatible: protocol version \(version)", pair: Terminal.pairAlert)
            row += 1
        }
        if net.droppedUnauthenticated > 0 {
            term.put(row, 2, "\(net.droppedUnauthenticated) datagrams from peers with another passphrase were dropped", pair: Terminal.pairAlert)
            row += 1
        }
        row += 1
        // The room's settings: the same on every peer, whoever changed them last.
        let applied = match.roomSettings
        let whose = match.roomSettingsAuthor.map { "set by \(displayName($0))" } ?? "defaults"
        row = putWrapped(row, "match settings (the room's): speed \(applied.speed)  colours \(applied.colors)  best of \(applied.gamesPerMatch)  (\(whose))", on: term)
        let height = applied.ruleSet.startingHeights.count > 1 ? "  starting height \(applied.startingHeight)" : ""
        row = putWrapped(row, "  rules \(applied.ruleSet.name)\(height)", on: term)
        let now = MonotonicClock.now()
        let readyCount = match.readyMarks.values.filter { $0 }.count
        if let next = nextStep(match) { row = putWrapped(row, next, on: term, bold: true) }
        switch match.lobbyCountdown(now: now) {
        case .starting?:
            row = putWrapped(row, "Starting the match…", on: term, bold: true)
        case .allReady(let left)?:
            row = putWrapped(row, "Everyone is ready: the match starts in \(Self.seconds(left))", on: term, bold: true)
        case .firstReady(let left)? where readyCount >= 2 && left > 0:
            row = putWrapped(row, "\(readyCount) players ready: in \(Self.seconds(left)) a ready player may start with the ready players, or the match starts when everyone is ready", on: term)
        case .firstReady? where readyCount >= 2:
            row = putWrapped(row, "\(readyCount) players ready: a ready player may start the match now with the ready players", on: term, bold: true)
        default:
            row = putWrapped(row, "The match starts 3 s after every player is ready; 30 s after the first ready, with two ready, a ready player may start it.", on: term)
        }
        if spectator {
            _ = putWrapped(row, "You are watching: the next match is shown when it starts.   \(keys.label(.ready)): join the players   \(keys.label(.quit)): quit", on: term)
        } else {
            let readyHint = match.isMarkedReady ? "not ready" : "ready"
            let startNow = match.canStartNow(now: now) ? "   n: start now" : ""
            _ = putWrapped(row, "\(keys.label(.ready)): \(readyHint)\(startNow)   s: speed   c: colours   g: games\(match.roomSettings.ruleSet.startingHeights.count > 1 ? "   h: height" : "")   t: rules   e: name   b: practice vs a local \(practiceLevel.rawValue) bot (l: level)", on: term,
                           bold: match.isMarkedReady)
        }
    }

    /// What this player does next in the lobby, in one sentence; nil when the countdown's line says it.
    private func nextStep(_ match: MatchPeer) -> String? {
        let members = match.view?.members ?? []
        let ready = match.readyMarks
        let others = members.filter { $0 != peer.id && match.lobby[$0]?.role == .player }
        let share = "share room '\(room)'" + (privateRoom ? " and its passphrase" : "")
        if match.isPlaying {
            // This player left the match; the others play on until it is over.
            return "You left the match; the others play on. Get ready for the next one when it is over."
        }
        let readyKey = keys.label(.ready)
        if spectator {
            return others.count < 2 ? "Waiting for players: a match needs two; \(share); or press \(readyKey) to join the players." : nil
        }
        if others.isEmpty {
            return "Waiting for players: \(share), or b to practise against a bot meanwhile."
        }
        if !match.isMarkedReady {
            let readyOthers = others.filter { ready[$0] == true }.count
            return "Press \(readyKey) when you are ready to play; other players ready: \(readyOthers) of \(others.count)."
        }
        let waiting = others.filter { ready[$0] != true }
        guard !waiting.isEmpty else { return nil }
        let names = waiting.prefix(3).map(displayName).joined(separator: ", ") + (waiting.count > 3 ? " and \(waiting.count - 3) more" : "")
        return "You are ready; waiting for \(names) to get ready (\(readyKey) again: not ready)."
    }

    /// "3 s": whole seconds left, rounded up.
    static func seconds(_ nanoseconds: UInt64) -> String { "\((nanoseconds + 999_999_999) / 1_000_000_000) s" }

    /// Writes `text` from `row`, indented by 2, word-wrapped short of the last column (a line that
    /// reaches the edge reads as cut); returns the next row.
    private func putWrapped(_ row: Int, _ text: String, on term: Terminal, bold: Bool = false) -> Int {
        var next = row
        for line in GameLoop.wrap(text, width: max(10, term.columns - 3)) {
            term.put(next, 2, line, bold: bold)
            next += 1
        }
        return next
    }

    private func drawFooter(_ match: MatchPeer, on term: Terminal) {
        let bottom = term.rows - 1
        if let entry = renaming {
            term.put(bottom, 0, "Your new name: \(entry)_   enter: keep it   esc: cancel", pair: Terminal.pairAccent, bold: true)
        } else if confirmingQuit {
            term.put(bottom, 0, "Leave the match for the lobby (you forfeit it)? y: leave, any other key: stay", pair: Terminal.pairAlert, bold: true)
        } else if let desync = desyncs.last {
            term.put(bottom, 0, "DESYNC: \(desync) (logged)", pair: Terminal.pairAlert, bold: true)
        } else if let banner {
            term.put(bottom, 0, banner, bold: true)
        } else if match.match != nil {
            // A spectator has no moves: only its own key is shown.
            term.put(bottom, 0, spectator ? "watching  \(keys.label(.quit)) leave  \(keys.label(.ready)) play next match  \(HelpOverlay.hint)" : keys.playHints(pause: false, width: term.columns))
        } else {
            term.put(bottom, 0, "?: help   \(keys.label(.quit)): quit")
        }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
    }
}

/// A remote player's grid as this screen draws it. A mirror's grid moves only when the owner's
/// stream does, and an owner sends the idle ticks of a resolution at most
/// ``MatchPeer/ticksFlushedAtMost`` at a time, so a chain would move in jumps of that many ticks.
/// While the mirror's grid resolves, nothing but ticks can come next in its stream (moves and
/// garbage wait for the next spawn), so the screen carries a copy of it on by the ticks it ran
/// since the stream last moved, at most that many and never past the resolution's end: the
/// chain is drawn in time, step by step, as on the owner's screen. The next stream items bring
/// the mirror to the same state (the rules are deterministic), and drawing starts from them again.
struct RemoteBoard {
    var game: UInt32
    /// The mirror's stream position (items applied) this board starts from.
    var inputs: Int
    /// The screen tick at which this position was first seen.
    var since: Int
    var grid: PlayerGrid
    /// Ticks applied to `grid` beyond the mirror's.
    var ahead = 0

    init(game: UInt32, inputs: Int, since: Int, grid: PlayerGrid) {
        self.game = game
        self.inputs = inputs
        self.since = since
        self.grid = grid
    }

    /// Applies the ticks due at screen tick `now`.
    mutating func advance(to now: Int) {
        let due = min(MatchPeer.ticksFlushedAtMost, max(0, now - since))
        while ahead < due, grid.state == .resolving {
            guard grid.apply(.ticks(1)).isAccepted else { break }
            ahead += 1
        }
    }

    /// What a frame shows of `grid`: a hash of its visible cells, popping marks and chain
    /// counter, and whether any egg pops (it flashes).
    static func picture(_ grid: PlayerGrid) -> (hash: Int, popping: Bool) {
        var hasher = Hasher()
        var popping = false
        for row in Board.visibleRows {
            for column in 0..<Board.columnsCount {
                hasher.combine(grid.displayCell(column: column, row: row))
                if case .popping = grid.activity(column: column, row: row) {
                    popping = true
                    hasher.combine(column &* 31 &+ row)
                }
            }
        }
        hasher.combine(grid.chainStep)
        hasher.combine(grid.lastChain?.chain)
        hasher.combine(grid.state)
        return (hasher.finalize(), popping)
    }
}
