import ArgumentParser
import Consensus
import EggBot
import EggGame
import Logging
import PeerNet
import PeerNetUDP
#if canImport(Glibc)
import Glibc
#endif

extension BotLevel: ExpressibleByArgument {}

/// Match settings a player can choose (the highest-ID proposal wins in a network match).
struct MatchSettingsOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Fall speed, 0 to 9.")
    var speed: Int = 0

    @Option(name: .customLong("colors"), parsing: .unconditional, help: "Colours in play: 4, 5 or 6 (default: 4, or colors in the config file).")
    var colorsFlag: Int?

    var colors: Int { colorsFlag ?? Config.current.colors ?? 4 }

    @Option(name: .customLong("best-of"), parsing: .unconditional, help: "Games per match: 1, 3, 5 or 7.")
    var bestOf: Int = 1

    @Option(help: "The rule set (\(RuleSet.names)); written in the log header.")
    var rules: String = "sfe"

    @Option(name: .customLong("starting-height"), parsing: .unconditional,
            help: "Full rows of garbage on every grid before the first pair (sfe: 0 to 9; tsu has none).")
    var startingHeight: Int = 0

    /// The rule set `--rules` names (validated).
    var ruleSet: RuleSet { RuleSet.named(rules) ?? .sfe }

    /// The settings these flags offer to a match.
    var matchSettings: MatchSettings {
        MatchSettings(speed: speed, colors: colors, gamesPerMatch: bestOf, ruleSet: ruleSet, startingHeight: startingHeight)
    }

    func validate() throws {
        guard RuleSet.named(rules) != nil else { throw ValidationError("unknown rule set '\(rules)' (known: \(RuleSet.names))") }
        try Self.validateStartingHeight(startingHeight, rules: ruleSet)
        guard GravityClock.speedsSupported.contains(speed) else { throw ValidationError("--speed must be from 0 to 9") }
        guard EggPair.colorsSupported.contains(colors) else { throw ValidationError("--colors must be 4, 5 or 6") }
        guard [1, 3, 5, 7].contains(bestOf) else { throw ValidationError("--best-of must be 1, 3, 5 or 7") }
    }

    /// `--starting-height` within the rule set's range (docs/rules.md: `sfe` 0–9, `tsu` none).
    static func validateStartingHeight(_ height: Int, rules: RuleSet) throws {
        guard rules.startingHeights.contains(height) else {
            let range = rules.startingHeights
            throw ValidationError(range.count == 1
                ? "--starting-height must be \(range.lowerBound) under \(rules.name) (it has no starting height)"
                : "--starting-height must be from \(range.lowerBound) to \(range.upperBound) under \(rules.name)")
        }
    }
}

extension EggsCommand {
    /// The terminal game (the default subcommand).
    struct Play: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Play in the terminal: a lobby of the peers in the room, or practice against a local bot.",
            discussion: """
                Keys: arrows or h/j/k/l move (down drops faster), z/x or up rotate, space hard drops, \
                p pauses a practice match, q leaves a match (asks first; a network match for the lobby of the room, forfeiting it), ? shows the keys and the rules \
                in every screen (any key closes it). \
                In the lobby: r or enter marks you ready (again: not ready), s changes the speed, c the colours, g the games \
                per match, h the starting height (sfe), t the rule set of the room's settings (for everyone; it clears every ready mark), b starts a practice match \
                on the room's settings against a local bot and l picks its level, n starts the match now with the ready players (allowed 30 s \
                after the first ready once two players are ready; shown when allowed), e changes your name in the room, q or Q quits. The match starts 3 s \
                after every player is ready. \
                Remap with --keys 'left=a,right=d,soft-drop=s,rotate-cw=w' or the file \
                $XDG_CONFIG_HOME/eggs/keys (lines 'action = key'); actions: \
                \(KeyAction.allCases.map(\.rawValue).joined(separator: " ")).
                """
        )

        @OptionGroup var network: NetworkOptions
        @OptionGroup var settings: MatchSettingsOptions

        @Option(help: "The name shown to other players (default: your login name).")
        var name: String?

        @Flag(help: "Practice against a local bot, with no network at all.")
        var practice = false

        @Flag(help: "Watch the matches in the room without playing.")
        var spectate = false

        @Option(help: "The practice bot's level: easy, medium, hard or insane.")
        var level: BotLevel = .medium

        @Option(parsing: .unconditional, help: "Seed of a practice match's egg sequence (default: random).")
        var seed: UInt64?

        @Flag(name: .customLong("no-color"), help: "Draw without colours (NO_COLOR is respected too).")
        var noColor = false

        @Flag(help: "Ring the terminal bell on your chain of 3 or more, garbage landing on you and your top-out (config: bell = true).")
        var bell = false

        /// The bell: `--bell`, or `bell = true` in the config.
        var bellOn: Bool { bell || Config.current.bell == true }

        @Option(help: "Key bindings, e.g. 'left=a,right=d,hard-drop=w'.")
        var keys: String?

        func validate() throws {
            if let name, name.isEmpty || name.utf8.count > 24 {
                throw ValidationError("--name must be 1 to 24 bytes")
            }
        }

        var playerName: String {
            if let name = name ?? Config.current.name { return name }
            if let login = getenv("USER").map({ String(cString: $0) }), !login.isEmpty { return String(login.prefix(24)) }
            return "player"
        }

        func run() throws {
            let keyMap = try KeyMap.load(keysOption: keys)
            defer { ChainFrames.shared?.finish() }
            if practice {
                var generator = SystemRandomNumberGenerator()
                let options = LocalMatch.Options(
                    seed: seed ?? generator.next(), colors: settings.colors, speed: settings.speed, bestOf: settings.bestOf,
                    rules: settings.ruleSet, startingHeight: settings.startingHeight)
                let term = try Terminal(noColor: noColor)
                defer { term.restore() }
                guard FirstRun.show(keys: keyMap, rules: settings.ruleSet, on: term) else { return }
                // The match is recorded in the history when its log closes, off the game loop.
                let historyLogger = Logger(label: "eggs.history")
                let history = HistoryRecorder { historyLogger.warning("\($0)") }
                defer { history.finish() }
                let screen = PracticeScreen(name: playerName, level: level, options: options, keys: keyMap, unicode: term.unicode,
                                            log: PracticeLogTarget(peer: network.peerID(), file: network.log, history: history),
                                            bell: bellOn)
                GameLoop.run(screen, on: term)
                screen.closeLog()
                term.restore()
                if let failure = screen.logFailure { throw CommandFailure.detected(failure) }
                return
            }
            try runNetwork(keyMap: keyMap)
        }

        private func runNetwork(keyMap: KeyMap) throws {
            let id = network.peerID()
            FileLogHandler.bootstrap(path: NetworkOptions.stateDirectory() + "/eggs-tui.log")
            var net = PeerNetConfig(room: network.room, peerID: id, incarnation: PeerNetConfig.freshIncarnation())
            net.passphrase = network.effectivePassphrase
            /// The peer, as a spectator (a receiver) or a player; a spectator that asks to play is
            /// opened again as a player: a new incarnation, a log of its own.
            func open(spectator: Bool) throws -> NetPeer {
                net.incarnation = PeerNetConfig.freshIncarnation()
                let options = NetPeer.Options(
                    name: playerName, role: spectator ? .spectator : .player, net: net,
                    multicast: network.multicast, logPath: network.logPath(peer: id, suffix: spectate && !spectator ? "-player" : ""),
                    rules: settings.ruleSet.name, startingHeight: settings.startingHeight)
                do {
                    return try NetPeer(options: options, wake: WakePipe(), trace: InputTrace.fromEnvironment())
                } catch let error as MulticastSocketError {
                    throw CommandFailure.badInput(error.description)
                }
            }
            var peer = try open(spectator: spectate)
            // Every match is recorded in the history when it ends, off the game loop; a bad
            // database is one line in the status line and in the diagnostics log.
            let historyLogger = Logger(label: "eggs.history")
            let history = HistoryRecorder { historyLogger.warning("\($0)") }
            peer.history = history
            // Logs in eggs-tui's own directory are kept within the config's bound (this peer's
            // new log is open, so locked: never deleted).
            if network.log == nil { LogRetention.pruneOwnDirectory() }
            defer {
                peer.close()
                history.finish()
            }
            let term = try Terminal(noColor: noColor)
            defer { term.restore() }
            guard FirstRun.show(keys: keyMap, rules: settings.ruleSet, on: term) else { return }
            let matchSettings = settings.matchSettings
            func makeScreen(spectator: Bool) -> NetPlayScreen {
                NetPlayScreen(peer: peer, room: network.room, name: playerName, spectator: spectator,
                              settings: matchSettings, keys: keyMap, unicode: term.unicode,
                              privateRoom: network.effectivePassphrase != nil, bell: bellOn)
            }
            var screen = makeScreen(spectator: spectate)
            while true {
                GameLoop.run(screen, on: term)
                if screen.joinRequested, !screen.quit, Terminal.interrupted == 0 {
                    // The spectator leaves the receivers and joins the players' group (their
                    // lobby, between matches): the same ID, a new incarnation and log.
                    if let failure = peer.logFailure { throw CommandFailure.detected(failure) }
                    peer.close()
                    peer = try open(spectator: false)
                    peer.history = history
                    screen = makeScreen(spectator: false)
                    continue
                }
                guard let level = screen.practiceRequested, !screen.quit, Terminal.interrupted == 0 else { break }
                var generator = SystemRandomNumberGenerator()
                // The room's settings, as the lobby shows them (the command line's only offer them).
                let room = screen.practiceSettings ?? matchSettings
                let practice = PracticeScreen(
                    name: playerName, level: level,
                    options: LocalMatch.Options(seed: generator.next(), colors: room.colors, speed: room.speed, bestOf: room.gamesPerMatch,
                                                rules: room.ruleSet, startingHeight: room.startingHeight),
                    keys: keyMap, unicode: term.unicode,
                    log: PracticeLogTarget(peer: network.peerID(), file: nil, history: history),
                    bell: bellOn)
                GameLoop.run(practice, on: term)
                practice.closeLog()
                screen.resumeAfterPractice()
                if Terminal.interrupted != 0 { break }
            }
            peer.close()
            term.restore()
            history.finish()
            if screen.ownIDInUse {
                throw CommandFailure.badInput("ID \(peer.id.hex) is in use by another live peer in this room"
                                              + (network.id == nil ? "; run again (a new ID is drawn)" : ": give another --id"))
            }
            if let failure = peer.logFailure { throw CommandFailure.detected(failure) }
        }
    }
}
