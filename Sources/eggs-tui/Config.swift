import SystemPackage
import TOMLKit
#if canImport(Glibc)
import Glibc
#endif

/// The defaults a player sets once, from `$XDG_CONFIG_HOME/eggs/config.toml` (docs/playing.md and docs/network.md).
/// Command-line flags win over every value here. Example:
///
///     name = "ada"
///     room = "friday"
///     interface = "192.168.1.20"
///     color = false            # draw without colours, as --no-color
///     colors = 5               # egg colours in play, as --colors
///     bell = true              # the terminal bell on a chain of 3 or more, garbage and a top-out, as --bell
///     preview = true           # show where the pair will land (the preview key, v, toggles it)
///     das = 133                # ms a held move waits before it repeats (kitty keyboard protocol)
///     arr = 33                 # ms between repeats of a held move
///     keyboard = "auto"        # "kitty" forces the kitty keyboard protocol, "legacy" keeps the terminal's repeat
///     logs-keep = 200          # message logs kept in $XDG_STATE_HOME/eggs (0: every log)
///     logs-max-mb = 500        # and megabytes they take at most
///     [keys]
///     left = "a"
///     rotate-cw = ["w", "up"]
///
/// A file that does not parse, an unknown key, a value of the wrong type or out of its
/// limits is bad input: exit 2 with one line naming the file and the line.
struct Config: Equatable {
    var name: String?
    var room: String?
    var interface: String?
    var group: String?
    var port: Int?
    /// `false` draws without colours (as `--no-color`).
    var color: Bool?
    /// Egg colours in play, 4 to 6 (as `--colors`).
    var colors: Int?
    /// `true` rings the terminal bell on your chain of 3 or more, garbage landing on you and
    /// your top-out (as `--bell`).
    var bell: Bool?
    /// `true` shows the drop preview from the start (the preview key toggles it).
    var preview: Bool?
    /// Delayed auto shift: milliseconds a held move key waits before it repeats (kitty keyboard
    /// protocol only; default ``KeyRepeat/defaultDelayMilliseconds``).
    var das: Int?
    /// Auto repeat rate: milliseconds between repeats of a held move key (0: every tick).
    var arr: Int?
    /// How keys are read: `auto` (the kitty keyboard protocol when the terminal answers its
    /// query), `kitty` (always), `legacy` (never: the terminal's own repeat).
    var keyboard: KeyboardMode?
    /// Message logs kept in eggs-tui's own directory, at most (0: every log; default 200:
    /// ``LogRetention``).
    var logsKeep: Int?
    /// Megabytes (2^20 bytes) the logs in eggs-tui's own directory take, at most.
    var logsMaxMB: Int?
    /// `[keys]`: action → keys, in the `action=key` form ``KeyMap/apply(spec:source:)`` reads.
    var keys: [String] = []

    static let fileSizeMax = 64 * 1024
    static let keysPerActionMax = 8
    static let topLevelKeys = ["name", "room", "interface", "group", "port", "color", "colors", "bell", "preview", "das", "arr", "keyboard", "logs-keep", "logs-max-mb", "keys"]
    static let logsKeepMax = 1_000_000
    static let dasMax = 2_000, arrMax = 1_000
    static let logsMaxMBMax = 1 << 20

    /// `$XDG_CONFIG_HOME/eggs/config.toml`, default `~/.config/eggs/config.toml`.
    static func path() -> String {
        if let xdg = getenv("XDG_CONFIG_HOME").map({ String(cString: $0) }), xdg.hasPrefix("/") {
            return xdg + "/eggs/config.toml"
        }
        return (getenv("HOME").map { String(cString: $0) } ?? "/tmp") + "/.config/eggs/config.toml"
    }

    /// The file read once per process: an empty config when there is none, a failure when
    /// it is unreadable, too large or bad.
    static let loaded: Result<Config, CommandFailure> = {
        do throws(CommandFailure) { return .success(try load(path: path())) } catch { return .failure(error) }
    }()

    /// The config, or the one-line failure (exit 2) that a bad file is.
    static func checked() throws(CommandFailure) -> Config { try loaded.get() }

    /// The config for code that cannot fail; commands check it first in `validate()`.
    static var current: Config { (try? loaded.get()) ?? Config() }

    static func load(path: String) throws(CommandFailure) -> Config {
        let bytes: [UInt8]
        switch WholeFile.read(path, limit: fileSizeMax) {
        case .success(let read): bytes = read
        case .failure(.cannotOpen(.noSuchFileOrDirectory)): return Config()
        case .failure(.cannotOpen(let code)): throw .badInput("cannot open \(path): \(WholeFile.Failure.cannotOpen(code).reason)")
        case .failure(.unreadableOrTooLarge): throw .badInput("\(path): unreadable or larger than \(fileSizeMax) bytes")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .badInput("\(path): not UTF-8 text")
        }
        return try parse(text, source: path)
    }

    /// Parses the TOML text of a config file; `source` names it in errors.
    static func parse(_ text: String, source: String) throws(CommandFailure) -> Config {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            // A value of a known key that does not parse (`room = friday`) is said as what the
            // key wants; other syntax errors as TOMLKit words them.
            let line = error.source.begin.line
            if let (section, key) = KeyLines.entry(atLine: line, in: text), let wanted = expected(key: key, section: section) {
                throw .badInput("\(source): line \(line): \(key): \(wanted)")
            }
            throw .badInput("\(source): line \(line): \(error.description)")
        } catch {
            throw .badInput("\(source): \(error)")
        }
        let lines = KeyLines(text: text)
        func bad(_ key: String, _ section: String?, _ message: String) -> CommandFailure {
            .badInput("\(source): line \(lines.line(of: key, section: section)): \(message)")
        }
        var config = Config()
        for key in table.keys {
            guard let value = table[key] else { continue }
            switch key {
            case "name":
                config.name = try string(value, key, bytes: 1...24, bad)
            case "room":
                config.room = try string(value, key, bytes: 1...64, bad)
            case "interface":
                config.interface = try string(value, key, bytes: 1...64, bad)
            case "group":
                config.group = try string(value, key, bytes: 7...15, bad)
            case "port":
                guard let port = value.int, (1...65535).contains(port) else {
                    throw bad(key, nil, "port must be an integer from 1 to 65535")
                }
                config.port = port
            case "color":
                guard let color = value.bool else { throw bad(key, nil, "color must be true or false") }
                config.color = color
            case "bell":
                guard let bell = value.bool else { throw bad(key, nil, "bell must be true or false") }
                config.bell = bell
            case "preview":
                guard let preview = value.bool else { throw bad(key, nil, "preview must be true or false") }
                config.preview = preview
            case "das":
                guard let das = value.int, (0...dasMax).contains(das) else { throw bad(key, nil, "das must be a whole number of milliseconds from 0 to \(dasMax)") }
                config.das = das
            case "arr":
                guard let arr = value.int, (0...arrMax).contains(arr) else { throw bad(key, nil, "arr must be a whole number of milliseconds from 0 to \(arrMax)") }
                config.arr = arr
            case "keyboard":
                guard let text = value.string, let mode = KeyboardMode(rawValue: text) else {
                    throw bad(key, nil, "keyboard must be \"auto\", \"kitty\" or \"legacy\"")
                }
                config.keyboard = mode
            case "colors":
                guard let colors = value.int, (4...6).contains(colors) else { throw bad(key, nil, "colors must be 4, 5 or 6") }
                config.colors = colors
            case "logs-keep":
                guard let keep = value.int, (0...logsKeepMax).contains(keep) else {
                    throw bad(key, nil, "logs-keep must be a whole number of logs from 0 (keep every log) to \(logsKeepMax)")
                }
                config.logsKeep = keep
            case "logs-max-mb":
                guard let megabytes = value.int, (1...logsMaxMBMax).contains(megabytes) else {
                    throw bad(key, nil, "logs-max-mb must be a whole number of megabytes from 1 to \(logsMaxMBMax)")
                }
                config.logsMaxMB = megabytes
            case "keys":
                guard let keys = value.table else { throw bad(key, nil, "keys must be a table: [keys] then lines action = \"key\"") }
                config.keys = try keyBindings(keys, bad)
            default:
                throw bad(key, nil, "unknown key '\(key)' (known: \(topLevelKeys.joined(separator: " ")))")
            }
        }
        return config
    }

    /// What the value of `key` in `section` ("" for the top level) must be, as errors say it.
    static func expected(key: String, section: String) -> String? {
        if section == "keys" {
            return KeyAction(rawValue: key) != nil ? "a key name in quotes, or a list of them in brackets" : nil
        }
        guard section.isEmpty else { return nil }
        switch key {
        case "name", "room", "interface", "group": return "a string in quotes"
        case "port": return "a whole number from 1 to 65535"
        case "colors": return "a whole number: 4, 5 or 6"
        case "color", "bell", "preview": return "true or false"
        case "das": return "a whole number of milliseconds, 0 to \(dasMax)"
        case "arr": return "a whole number of milliseconds, 0 to \(arrMax)"
        case "keyboard": return "\"auto\", \"kitty\" or \"legacy\""
        case "logs-keep": return "a whole number of logs, 0 (keep every log) to \(logsKeepMax)"
        case "logs-max-mb": return "a whole number of megabytes, 1 to \(logsMaxMBMax)"
        case "keys": return "a table: [keys] then lines action = \"key\""
        default: return nil
        }
    }

    private static func string(
        _ value: TOMLValueConvertible, _ key: String, bytes: ClosedRange<Int>,
        _ bad: (String, String?, String) -> CommandFailure
    ) throws(CommandFailure) -> String {
        guard let text = value.string, bytes.contains(text.utf8.count) else {
            throw bad(key, nil, "\(key) must be a string of \(bytes.lowerBound) to \(bytes.upperBound) bytes")
        }
        return text
    }

    private static func keyBindings(
        _ table: TOMLTable, _ bad: (String, String?, String) -> CommandFailure
    ) throws(CommandFailure) -> [String] {
        var spec: [String] = []
        for action in table.keys {
            guard let value = table[action] else { continue }
            guard KeyAction(rawValue: action) != nil else {
                throw bad(action, "keys", "unknown action '\(action)' (one of \(KeyAction.allCases.map(\.rawValue).joined(separator: " ")))")
            }
            let names: [String]
            if let one = value.string {
                names = [one]
            } else if let array = value.array, (1...keysPerActionMax).contains(array.count),
                      case let strings = array.compactMap(\.string), strings.count == array.count {
                names = strings
            } else {
                throw bad(action, "keys", "\(action) must be a key name or a list of 1 to \(keysPerActionMax) key names")
            }
            for name in names {
                guard KeyMap.key(named: name) != nil, !name.contains(","), !name.contains("#") else {
                    throw bad(action, "keys", "unknown key '\(name)' for \(action) (a character, or left right up down space enter)")
                }
                spec.append("\(action)=\(name)")
            }
        }
        return spec
    }
}

/// Where each `key =` line and `[section]` header of a TOML text is, to name the line of a
/// bad value (TOMLKit gives positions of syntax errors only). Lines count from 1.
private struct KeyLines {
    /// "section NUL key" → line of its first occurrence.
    private var keys: [String: Int] = [:]
    /// section → line of its header.
    private var headers: [String: Int] = [:]

    init(text: String) {
        var section = ""
        var number = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let line = raw.trimmingCharacters(in: " \t\r")
            if line.hasPrefix("[") {
                section = line.trimmingCharacters(in: "[] \t")
                if headers[section] == nil { headers[section] = number }
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: " \t\"'")
            if keys[section + "\u{0}" + key] == nil { keys[section + "\u{0}" + key] = number }
        }
    }

    /// The section ("" for the top level) and key of the `key = value` line `number` of `text`.
    static func entry(atLine number: Int, in text: String) -> (section: String, key: String)? {
        var section = ""
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: " \t\r")
            if line.hasPrefix("[") { section = line.trimmingCharacters(in: "[] \t") }
            guard index + 1 == number else { continue }
            guard !line.hasPrefix("["), let equals = line.firstIndex(of: "=") else { return nil }
            return (section, line[..<equals].trimmingCharacters(in: " \t\"'"))
        }
        return nil
    }

    /// The line of `key` in `section` (nil: the top level), else of a `[key]` header, else 1.
    func line(of key: String, section: String?) -> Int {
        keys[(section ?? "") + "\u{0}" + key] ?? headers[key] ?? 1
    }
}
