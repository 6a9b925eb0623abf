import PeerNetUDP
#if canImport(Glibc)
import Glibc
#endif

/// How keys are read (config `keyboard`).
enum KeyboardMode: String, Equatable {
    /// The kitty keyboard protocol when the terminal answers its query, else the terminal's repeat.
    case auto
    /// The kitty keyboard protocol, always (for a terminal that speaks it but does not answer).
    case kitty
    /// The terminal's own key repeat, never the protocol.
    case legacy
}

/// Whether a key went down, repeats (the terminal's own repeat) or went up.
enum KeyEventKind: Equatable {
    case press, `repeat`, release
}

/// One key event: a key and what it did. Without the kitty keyboard protocol every key is a press.
struct KeyEvent: Equatable {
    var key: TerminalKey
    var kind: KeyEventKind

    static func press(_ key: TerminalKey) -> KeyEvent { KeyEvent(key: key, kind: .press) }
}

/// eggs' own auto-repeat of a held key (the kitty keyboard protocol reports presses and releases):
/// a move repeats first `delay` after its press (DAS), then every `interval` (ARR), until it is
/// released, so holding a key glides the pair at the same speed in every terminal. A soft drop
/// repeats every `interval` from its press, with no delay. Pure: the caller says what time it is.
struct KeyRepeat {
    static let defaultDelayMilliseconds = 133, defaultIntervalMilliseconds = 33
    /// Repeats handed out at one look at most (a stalled loop does not fire a burst).
    static let burstMax = 6

    let delay: UInt64
    let interval: UInt64
    /// The key held now, and when it repeats next.
    private(set) var held: (key: TerminalKey, next: UInt64)?

    /// `das` and `arr` in milliseconds; an `arr` of 0 repeats every tick (1/60 s).
    init(dasMilliseconds: Int = defaultDelayMilliseconds, arrMilliseconds: Int = defaultIntervalMilliseconds) {
        precondition(dasMilliseconds >= 0 && arrMilliseconds >= 0, "negative das or arr")
        delay = UInt64(dasMilliseconds) * 1_000_000
        interval = arrMilliseconds == 0 ? GameLoop.tickNanoseconds : UInt64(arrMilliseconds) * 1_000_000
    }

    /// `key` went down at `now` (its first action is the caller's): it repeats while held. A press
    /// of another key takes over from the one held before.
    mutating func press(_ key: TerminalKey, at now: UInt64, immediate: Bool = false) {
        held = (key, now + (immediate ? interval : delay))
    }

    /// `key` went up: its repeat stops (a release of a key not held changes nothing).
    mutating func release(_ key: TerminalKey) {
        if held?.key == key { held = nil }
    }

    /// Stops any repeat (focus lost, the screen changed).
    mutating func cancel() { held = nil }

    /// The repeats due by `now` (at most ``burstMax``): the key and how many times it fires.
    mutating func due(at now: UInt64) -> (key: TerminalKey, count: Int)? {
        guard var current = held, now >= current.next else { return nil }
        var count = 0
        while now >= current.next {
            count += 1
            current.next += interval
        }
        if count > Self.burstMax {
            count = Self.burstMax
            current.next = now + interval
        }
        held = current
        return (current.key, count)
    }

    /// When the next repeat is due (nil: no key held).
    var nextDue: UInt64? { held?.next }
}

/// Reads the kitty keyboard protocol's key events, and the legacy bytes a terminal sends
/// without it, from the characters the terminal sends. What it cannot read is dropped and counted.
///
/// The protocol (pushed with flags 1 | 2 | 4 | 8: disambiguate, event types, alternate keys, all
/// keys as escape codes) sends `CSI code[:shifted[:base]] [; mods[:event]] [; text] u` for most
/// keys and `CSI 1 ; mods:event A|B|C|D` for the arrows; event 1 is a press, 2 a repeat, 3 a release.
struct KittyDecoder {
    /// The longest escape sequence read; a longer one is garbage and dropped.
    static let sequenceMax = 64
    /// Pushes the protocol with flags 15; pops it again.
    static let push = "\u{1B}[>15u", pop = "\u{1B}[<u"
    /// Key codes of the protocol's functional keys (modifiers, media keys) in the private use area.
    static let functionalKeys: ClosedRange<UInt32> = 57344...63743

    private var pending: [Unicode.Scalar] = []
    /// Sequences that were not key events the decoder knows (dropped).
    private(set) var dropped = 0

    /// The events in `scalars`; an escape sequence cut at the end waits for the rest.
    mutating func feed(_ scalars: [Unicode.Scalar]) -> [KeyEvent] {
        var events: [KeyEvent] = []
        for scalar in scalars {
            if pending.isEmpty {
                if scalar == "\u{1B}" {
                    pending = [scalar]
                } else {
                    events.append(.press(Self.legacyKey(scalar)))
                }
                continue
            }
            pending.append(scalar)
            if let event = step() { events.append(contentsOf: event) }
        }
        return events
    }

    /// Ends a read: a lone escape is the escape key.
    mutating func flush() -> [KeyEvent] {
        guard pending == ["\u{1B}"] else { return [] }
        pending = []
        return [.press(.escape)]
    }

    /// Looks at the escape sequence read so far: the events once it is whole, nil while it is not.
    private mutating func step() -> [KeyEvent]? {
        let second = pending[1]
        if second == "O" {
            // SS3: ESC O A..D (arrows in the terminal's application mode).
            guard pending.count >= 3 else { return nil }
            let final = pending[2]
            pending = []
            return Self.arrow(final).map { [.press($0)] } ?? count()
        }
        if second != "[" {
            // ESC then a character: the escape key, then that character.
            pending = []
            if second == "\u{1B}" {
                pending = [second]
                return [.press(.escape)]
            }
            return [.press(.escape), .press(Self.legacyKey(second))]
        }
        guard pending.count >= 3 else { return nil }
        let last = pending[pending.count - 1]
        if (0x40...0x7E).contains(last.value) {
            let body = String(String.UnicodeScalarView(pending[2..<(pending.count - 1)]))
            pending = []
            return Self.csi(body, final: last) ?? count()
        }
        guard (0x20...0x3F).contains(last.value), pending.count < Self.sequenceMax else {
            pending = []
            return count()
        }
        return nil
    }

    private mutating func count() -> [KeyEvent] {
        dropped += 1
        return []
    }

    /// A whole CSI sequence: `body` between `CSI` and the final character.
    static func csi(_ body: String, final: Unicode.Scalar) -> [KeyEvent]? {
        // Answers to queries (`CSI ? flags u`, `CSI ? … c`) are not keys.
        if body.hasPrefix("?") || body.hasPrefix(">") { return [] }
        let fields = body.split(separator: ";", omittingEmptySubsequences: false).map { $0.split(separator: ":", omittingEmptySubsequences: false) }
        func number(_ field: Int, _ part: Int, default value: UInt32) -> UInt32? {
            guard field < fields.count, part < fields[field].count else { return value }
            let text = fields[field][part]
            return text.isEmpty ? value : UInt32(text)
        }
        guard let modifiers = number(1, 0, default: 1), let eventCode = number(1, 1, default: 1), modifiers >= 1 else { return nil }
        let kind: KeyEventKind
        switch eventCode {
        case 1: kind = .press
        case 2: kind = .repeat
        case 3: kind = .release
        default: return nil
        }
        let shift = (modifiers - 1) & 1 != 0, control = (modifiers - 1) & 4 != 0
        switch final {
        case "u":
            guard let code = number(0, 0, default: 0), let shifted = number(0, 1, default: 0) else { return nil }
            if functionalKeys.contains(code) { return [] }  // a modifier key on its own, a media key
            let key: TerminalKey
            switch code {
            case 13: key = .enter
            case 27: key = .escape
            case 127, 8: key = .backspace
            case 9: key = .other(9)
            default:
                guard let scalar = Unicode.Scalar(shift && shifted != 0 ? shifted : code) else { return nil }
                if control {
                    // Ctrl and a letter: its control character (Ctrl-C interrupts as it would without the protocol).
                    let lower = Character(scalar).lowercased()
                    guard let letter = lower.unicodeScalars.first, lower.count == 1, ("a"..."z").contains(letter) else { return nil }
                    key = .character(Character(Unicode.Scalar(letter.value - 96)!))
                } else if shift && shifted == 0 {
                    key = .character(Character(String(Character(scalar)).uppercased()))
                } else {
                    key = .character(Character(scalar))
                }
            }
            return [KeyEvent(key: key, kind: kind)]
        case "A", "B", "C", "D":
            return [KeyEvent(key: arrow(final)!, kind: kind)]
        case "~", "H", "F", "P", "Q", "S", "E":
            // Insert, delete, page keys, home, end, F1–F4: keys eggs does not use.
            return [KeyEvent(key: .other(Int32(bitPattern: final.value)), kind: kind)]
        default:
            return nil
        }
    }

    static func arrow(_ final: Unicode.Scalar) -> TerminalKey? {
        switch final {
        case "A": .up
        case "B": .down
        case "C": .right
        case "D": .left
        default: nil
        }
    }

    /// A character as the terminal sends it without the protocol.
    static func legacyKey(_ scalar: Unicode.Scalar) -> TerminalKey {
        switch scalar.value {
        case 10, 13: .enter
        case 127, 8: .backspace
        default: .character(Character(scalar))
        }
    }

    /// Asks the terminal whether it speaks the protocol, before curses starts: writes the
    /// protocol's query and the primary device attributes query, and reads the answers for up
    /// to `timeoutMilliseconds` (every terminal answers the second; one that speaks the
    /// protocol answers the first before it). Input typed meanwhile is lost.
    static func terminalSpeaksProtocol(timeoutMilliseconds: Int32 = 300) -> Bool {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else { return false }
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { return false }
        defer { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { return false }
        let query = Array("\u{1B}[?u\u{1B}[c".utf8)
        guard query.withUnsafeBytes({ write(STDOUT_FILENO, $0.baseAddress, $0.count) }) == query.count else { return false }
        var answer: [UInt8] = []
        let deadline = MonotonicClock.now().nanoseconds + UInt64(timeoutMilliseconds) * 1_000_000
        while answer.count < 256 {
            let now = MonotonicClock.now().nanoseconds
            guard now < deadline else { break }
            var fds = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 1, Int32((deadline - now) / 1_000_000) + 1) > 0 else { break }
            var buffer = [UInt8](repeating: 0, count: 64)
            let got = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            guard got > 0 else { break }
            answer += buffer[0..<got]
            if let text = String(bytes: answer, encoding: .utf8), Self.answered(text) != nil { break }
        }
        return Self.answered(String(decoding: answer, as: UTF8.self)) ?? false
    }

    /// Reads the answers: nil until the device attributes' answer (`CSI ? … c`) came; then whether
    /// the protocol's answer (`CSI ? flags u`) came too.
    static func answered(_ text: String) -> Bool? {
        let scalars = Array(text.unicodeScalars)
        var sawKitty = false
        var index = 0
        while index + 2 < scalars.count {
            if scalars[index] == "\u{1B}", scalars[index + 1] == "[", scalars[index + 2] == "?" {
                var end = index + 3
                while end < scalars.count, ("0"..."9").contains(scalars[end]) || scalars[end] == ";" { end += 1 }
                guard end < scalars.count else { return nil }
                if scalars[end] == "u" { sawKitty = true }
                if scalars[end] == "c" { return sawKitty }
                index = end
            }
            index += 1
        }
        return nil
    }
}
