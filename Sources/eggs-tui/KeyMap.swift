#if canImport(Glibc)
import Glibc
#endif

/// What a key does in the game.
enum KeyAction: String, CaseIterable {
    case left, right
    case softDrop = "soft-drop"
    case hardDrop = "hard-drop"
    case rotateCW = "rotate-cw"
    case rotateCCW = "rotate-ccw"
    case pause, quit, ready
    /// Shows or hides the drop preview (where the pair will land).
    case preview
}

/// Keys to actions. Defaults: arrows and h/j/k/l move, z/x (and up) rotate, space hard
/// drops, p pauses, q quits, r toggles ready. `--keys` or the config file
/// `$XDG_CONFIG_HOME/eggs/keys` (lines `action = key`) replace an action's keys.
struct KeyMap {
    private(set) var bindings: [KeyAction: [TerminalKey]]
    /// Where each action's keys were set, when not by the defaults (the keys file, the config
    /// file, `--keys`): a conflict names it.
    private(set) var sources: [KeyAction: String] = [:]

    static let defaults: [KeyAction: [TerminalKey]] = [
        .left: [.left, .character("h")],
        .right: [.right, .character("l")],
        .softDrop: [.down, .character("j")],
        .rotateCW: [.up, .character("x"), .character("k")],
        .rotateCCW: [.character("z")],
        .hardDrop: [.character(" ")],
        .pause: [.character("p")],
        .quit: [.character("q")],
        .ready: [.character("r"), .enter],
        .preview: [.character("v")],
    ]

    init() { bindings = Self.defaults }

    func action(for key: TerminalKey) -> KeyAction? {
        for action in KeyAction.allCases where bindings[action]?.contains(key) == true { return action }
        return nil
    }

    /// The first key bound to `action`, as shown in help lines.
    func label(_ action: KeyAction) -> String {
        guard let key = bindings[action]?.first else { return "-" }
        return Self.name(of: key)
    }

    /// Keys bound to more than one action, each with its actions (in ``KeyAction`` order).
    func conflicts() -> [(key: TerminalKey, actions: [KeyAction])] {
        var seen: [(key: TerminalKey, actions: [KeyAction])] = []
        for action in KeyAction.allCases {
            for key in bindings[action] ?? [] {
                if let index = seen.firstIndex(where: { $0.key == key }) {
                    if !seen[index].actions.contains(action) { seen[index].actions.append(action) }
                } else {
                    seen.append((key, [action]))
                }
            }
        }
        return seen.filter { $0.actions.count > 1 }
    }

    /// Every key bound to `action`, as the help overlay lists them ("←/h").
    func labels(_ action: KeyAction) -> String {
        let keys = bindings[action] ?? []
        return keys.isEmpty ? "-" : keys.map(Self.name(of:)).joined(separator: "/")
    }

    /// The label a hint shows for a rotate key: its first character key when it has one (so
    /// "z/x rotate" names both rotations even though ↑ also turns clockwise), else its first key.
    func rotateLabel(_ action: KeyAction) -> String {
        let keys = bindings[action] ?? []
        if let character = keys.first(where: { if case .character(let c) = $0 { c != " " } else { false } }) {
            return Self.name(of: character)
        }
        return label(action)
    }

    /// The key hints of a player in a game: moves, both rotations, drops, then pause (practice
    /// only), help and quit.
    /// Narrower than `width`, the moves shorten (the actions' names go), never the rest.
    func playHints(pause: Bool, width: Int = .max) -> String {
        let move = "\(label(.left))/\(label(.right))", rotate = "\(rotateLabel(.rotateCCW))/\(rotateLabel(.rotateCW))"
        let tail = (pause ? ["\(label(.pause)) pause"] : []) + [HelpOverlay.hint, "\(label(.quit)) \(pause ? "quit" : "leave")"]
        let forms = [
            ["\(move) move", "\(rotate) rotate", "\(label(.softDrop)) drop", "\(label(.hardDrop)) hard drop"],
            ["\(move) move", "\(rotate) rotate", "\(label(.softDrop))/\(label(.hardDrop)) drop"],
            ["\(move) \(rotate) \(label(.softDrop)) \(label(.hardDrop))"],
        ]
        return GameLoop.fitting(forms.map { ($0 + tail).joined(separator: "  ") }, width: width)
    }

    /// Applies `action=key` pairs separated by commas or newlines; `#` starts a comment.
    mutating func apply(spec: String, source: String) throws {
        var replaced: Set<KeyAction> = []
        for (index, rawLine) in spec.split(whereSeparator: { $0 == "," || $0 == "\n" }).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let trimmed = line.trimmingCharacters(in: " \t")
            if trimmed.isEmpty { continue }
            let parts = trimmed.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: " \t") }
            guard parts.count == 2, let action = KeyAction(rawValue: parts[0]) else {
                throw CommandFailure.badInput("\(source): entry \(index + 1) '\(trimmed)': want ACTION=KEY with ACTION one of \(KeyAction.allCases.map(\.rawValue).joined(separator: " "))")
            }
            guard let key = Self.key(named: parts[1]) else {
                throw CommandFailure.badInput("\(source): entry \(index + 1): unknown key '\(parts[1])' (a character, or left right up down space enter)")
            }
            if !replaced.contains(action) {
                bindings[action] = []
                replaced.insert(action)
                sources[action] = source
            }
            bindings[action, default: []].append(key)
        }
    }

    /// The default map, then the config file (when present), then `--keys`.
    static func load(keysOption: String?) throws -> KeyMap {
        var map = KeyMap()
        let path = configPath()
        if let text = readSmallFile(path) { try map.apply(spec: text, source: path) }
        try map.apply(spec: Config.checked().keys.joined(separator: ","), source: Config.path())
        if let keysOption { try map.apply(spec: keysOption, source: "--keys") }
        if let conflict = map.conflicts().first {
            // Name where the clashing bindings came from (the defaults never clash by themselves).
            var named: [String] = []
            for action in conflict.actions { if let source = map.sources[action], !named.contains(source) { named.append(source) } }
            throw CommandFailure.badInput(
                "key '\(name(of: conflict.key))' is bound to both \(conflict.actions.map(\.rawValue).joined(separator: " and ")); bind it to one action (in \(named.isEmpty ? path : named.joined(separator: " or ")))")
        }
        return map
    }

    static func configPath() -> String {
        if let xdg = getenv("XDG_CONFIG_HOME").map({ String(cString: $0) }), xdg.hasPrefix("/") {
            return xdg + "/eggs/keys"
        }
        return (getenv("HOME").map { String(cString: $0) } ?? "/tmp") + "/.config/eggs/keys"
    }

    static func key(named name: String) -> TerminalKey? {
        switch name.lowercased() {
        case "left": return .left
        case "right": return .right
        case "up": return .up
        case "down": return .down
        case "space": return .character(" ")
        case "enter": return .enter
        default: return name.count == 1 ? .character(name.first!) : nil
        }
    }

    static func name(of key: TerminalKey) -> String {
        switch key {
        case .left: return "←"
        case .right: return "→"
        case .up: return "↑"
        case .down: return "↓"
        case .enter: return "enter"
        case .character(" "): return "space"
        case .character(let c): return String(c)
        default: return "?"
        }
    }
}

private func readSmallFile(_ path: String) -> String? {
    guard case .success(let bytes) = WholeFile.read(path, limit: 64 * 1024) else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}

extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
