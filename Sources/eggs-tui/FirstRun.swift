import EggGame
#if canImport(Glibc)
import Glibc
#endif

/// The first run of `play` on a machine (no config file yet): one screen of "how to play" before
/// the lobby or the practice match, then a config file of comments is written, so it is shown
/// once. Where that file cannot be written it is shown again next time; nothing else changes.
enum FirstRun {
    /// Whether there is no config file at `path` yet (any other trouble reading it is the
    /// config's to report, not a first run).
    static func isFirst(path: String = Config.path()) -> Bool {
        var info = stat()
        return stat(path, &info) != 0 && errno == ENOENT
    }

    /// The config file written after the first run: every setting commented out at its default.
    static let template = """
        # eggs configuration (docs/playing.md). Every line here is a comment: remove the # to set one.
        # name = "alice"          # your name in the lobby (1 to 24 bytes)
        # room = "eggs"           # the room to join
        # colors = 4              # colours of a practice match or an offered match (4 to 6)
        # logs-keep = 200         # message logs kept, oldest removed first (0 keeps all)
        # preview = false         # the drop preview from the start (v toggles it)
        # das = 133               # ms before a held move repeats (kitty keyboard protocol)
        # arr = 33                # ms between its repeats
        # [keys]                  # e.g. left = ["a", "left"]
        """ + "\n"

    /// Writes the commented config file (and its directory) if there is still none. A failure
    /// (a read-only home) is ignored.
    static func markSeen(path: String = Config.path()) {
        guard isFirst(path: path) else { return }
        var directory = ""
        for part in path.split(separator: "/").dropLast() {
            directory += "/" + part
            mkdir(directory, 0o755)
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(template.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// On the first run, shows the screen until a key and writes the config file; returns
    /// false when the player interrupted it (Ctrl-C: the command ends).
    static func show(keys: KeyMap, rules: RuleSet, on term: Terminal) -> Bool {
        guard isFirst() else { return true }
        GameLoop.run(HowToPlayScreen(keys: keys, rules: rules), on: term)
        guard Terminal.interrupted == 0 else { return false }
        markSeen()
        return true
    }

    /// The screen's lines: what the game is, the rules, the keys, where help is.
    static func lines(keys: KeyMap, rules: RuleSet) -> [(text: String, bold: Bool)] {
        var lines: [(text: String, bold: Bool)] = [("Welcome to eggs: how to play (shown once)", true)]
        for rule in HelpOverlay.rules(rules) { lines.append(("· " + rule, false)) }
        lines.append(("Keys", true))
        lines.append(("\(keys.labels(.left)) / \(keys.labels(.right)) move   \(keys.labels(.rotateCW)) / \(keys.labels(.rotateCCW)) turn   "
                      + "\(keys.labels(.softDrop)) soft drop   \(keys.labels(.hardDrop)) hard drop", false))
        lines.append(("In the lobby: \(keys.labels(.ready)) ready (the match starts when every player is), b practice against a bot, "
                      + "\(keys.labels(.quit)) quit. Others on your network who choose the same room appear there.", false))
        lines.append(("? shows the keys and these rules at any time.", false))
        lines.append(("Press any key to go on.", true))
        return lines
    }
}

/// The first-run screen: ``FirstRun/lines(keys:rules:)`` until a key.
final class HowToPlayScreen: Screen {
    let keys: KeyMap
    let rules: RuleSet
    private(set) var finished = false
    var wantsTicks: Bool { false }

    init(keys: KeyMap, rules: RuleSet) {
        self.keys = keys
        self.rules = rules
    }

    func handle(key: TerminalKey) {
        if key != .resize { finished = true }
    }
    func tick() -> Bool { false }
    func interrupted() { finished = true }

    func draw(on term: Terminal) {
        term.clear()
        let width = max(12, min(term.columns, 80) - 2)
        var row = 0
        for (text, bold) in FirstRun.lines(keys: keys, rules: rules) {
            for (index, line) in GameLoop.wrap(text, width: width).enumerated() {
                guard row < term.rows else { return }
                term.put(row, 1, index > 0 && text.hasPrefix("· ") ? "  " + line : line, bold: bold)
                row += 1
            }
        }
    }
}
