import CNcurses
#if canImport(Glibc)
import Glibc
#endif

/// A key read from the terminal.
enum TerminalKey: Equatable {
    case character(Character)
    case up, down, left, right
    case enter, escape, backspace
    case resize
    case other(Int32)
}

/// The ncurses screen: set up once, every curses call on the thread that made it,
/// restored on every way out (quit, Ctrl-C, SIGTERM, a crash).
final class Terminal {
    /// Whether colour pairs are in use (off with NO_COLOR, --no-color or a mono terminal).
    let colors: Bool
    /// Whether to draw Unicode glyphs (off when the locale is not UTF-8).
    let unicode: Bool
    /// How orange eggs stand apart from red ones: a 256-colour orange, or (with fewer colours,
    /// where orange would be red again) red in reverse video.
    private(set) var orangeInReverse = false
    private var screen: OpaquePointer?
    /// Whether keys come by the kitty keyboard protocol (press, repeat and release events):
    /// eggs then repeats held keys itself (``KeyRepeat``).
    let kittyKeyboard: Bool
    private var decoder = KittyDecoder()

    /// Colour pair numbers for the egg colours R B Y P G O, then garbage and UI accents.
    static let pairRed: Int32 = 1, pairBlue: Int32 = 2, pairYellow: Int32 = 3, pairPurple: Int32 = 4,
        pairGreen: Int32 = 5, pairOrange: Int32 = 6, pairGarbage: Int32 = 7, pairAccent: Int32 = 8, pairAlert: Int32 = 9

    /// Opens the terminal. Throws a one-line error when there is no usable terminal.
    init(noColor: Bool) throws {
        let noColor = try noColor || Config.checked().color == false
        setlocale(LC_ALL, "")
        let codeset = String(cString: nl_langinfo(nl_item(CODESET)))
        unicode = codeset.uppercased().contains("UTF-8") || codeset.uppercased().contains("UTF8")
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw CommandFailure.badInput("no usable terminal: standard input and output must be a terminal")
        }
        let term = getenv("TERM").map { String(cString: $0) } ?? ""
        // Asked before curses starts, so the terminal's answers never reach the game as keys.
        switch try Config.checked().keyboard ?? .auto {
        case .kitty: kittyKeyboard = true
        case .legacy: kittyKeyboard = false
        case .auto: kittyKeyboard = KittyDecoder.terminalSpeaksProtocol()
        }
        // A parent (a test runner, a supervisor) may hand down SIGWINCH blocked or ignored:
        // curses would then never hear of a resize. Take it back before curses sets up.
        var winch = sigset_t()
        sigemptyset(&winch)
        sigaddset(&winch, SIGWINCH)
        sigprocmask(SIG_UNBLOCK, &winch, nil)
        signal(SIGWINCH, SIG_DFL)
        guard !term.isEmpty, let output = fdopen(STDOUT_FILENO, "w"), let input = fdopen(STDIN_FILENO, "r"),
              let screen = newterm(nil, output, input) else {
            throw CommandFailure.badInput("no usable terminal: TERM is \(term.isEmpty ? "not set" : "'\(term)', which terminfo does not know")")
        }
        self.screen = screen
        set_term(screen)
        Terminal.installRestoreHandlers()
        cbreak()
        noecho()
        // With the kitty protocol eggs reads the escape sequences itself; curses would take
        // the ones it does not know apart.
        keypad(eggs_stdscr(), !kittyKeyboard)
        curs_set(0)
        if kittyKeyboard {
            Terminal.writeRaw(KittyDecoder.push)
            Terminal.kittyPushed = true
        }
        let wantColor = !noColor && getenv("NO_COLOR").map { String(cString: $0).isEmpty } ?? true
        if wantColor && has_colors() {
            start_color()
            use_default_colors()
            // Orange is colour 208 of the 256-colour palette; 8 or 16 colours have no orange.
            let orange: Int32 = eggs_colors() >= 256 ? 208 : Int32(COLOR_RED)
            orangeInReverse = eggs_colors() < 256
            let table: [(Int32, Int32)] = [
                (Terminal.pairRed, Int32(COLOR_RED)), (Terminal.pairBlue, Int32(COLOR_BLUE)), (Terminal.pairYellow, Int32(COLOR_YELLOW)),
                (Terminal.pairPurple, Int32(COLOR_MAGENTA)), (Terminal.pairGreen, Int32(COLOR_GREEN)), (Terminal.pairOrange, orange),
                (Terminal.pairGarbage, Int32(COLOR_WHITE)), (Terminal.pairAccent, Int32(COLOR_CYAN)), (Terminal.pairAlert, Int32(COLOR_RED)),
            ]
            for (pair, fg) in table { init_pair(Int16(pair), Int16(fg), -1) }
            colors = true
        } else {
            colors = false
        }
    }

    deinit { restore() }

    /// Leaves curses mode and restores the terminal; safe to call twice.
    func restore() {
        guard let screen else { return }
        if Terminal.kittyPushed {
            Terminal.writeRaw(KittyDecoder.pop)
            Terminal.kittyPushed = false
        }
        endwin()
        delscreen(screen)
        self.screen = nil
        Terminal.active = false
    }

    var rows: Int { Int(eggs_lines()) }
    var columns: Int { Int(eggs_cols()) }

    /// Waits up to `milliseconds` for a key (-1 waits forever); then takes every key already
    /// typed. Sleeps, never spins. Without the kitty protocol every key is a press.
    func readEvents(timeoutMilliseconds: Int32) -> [KeyEvent] {
        var events: [KeyEvent] = []
        var scalars: [Unicode.Scalar] = []
        var timeout = timeoutMilliseconds
        while events.count + scalars.count < 256 {
            wtimeout(eggs_stdscr(), timeout)
            timeout = 0
            var ch: wint_t = 0
            let result = wget_wch(eggs_stdscr(), &ch)
            if result == eggs_err() { break }
            if result == KEY_CODE_YES {
                let key: TerminalKey
                switch Int32(ch) {
                case KEY_UP: key = .up
                case KEY_DOWN: key = .down
                case KEY_LEFT: key = .left
                case KEY_RIGHT: key = .right
                case KEY_ENTER: key = .enter
                case KEY_BACKSPACE: key = .backspace
                case eggs_key_resize(): key = .resize
                default: key = .other(Int32(ch))
                }
                events += decoder.feed(scalars) + [.press(key)]
                scalars = []
                continue
            }
            guard let scalar = Unicode.Scalar(UInt32(ch)) else { continue }
            if kittyKeyboard {
                scalars.append(scalar)
            } else {
                switch ch {
                case 27: events.append(.press(.escape))
                default: events.append(.press(KittyDecoder.legacyKey(scalar)))
                }
            }
        }
        if kittyKeyboard { events += decoder.feed(scalars) + decoder.flush() }
        return events
    }

    /// Escape sequences the kitty decoder could not read (dropped).
    var undecodedKeys: Int { decoder.dropped }

    func clear() { werase(eggs_stdscr()) }
    /// Rings the terminal bell (or flashes, as the terminal does it).
    func bell() { beep() }
    func refresh() { wrefresh(eggs_stdscr()) }

    /// Writes `text` at row `y`, column `x`, clipped to the screen, with optional attributes.
    func put(_ y: Int, _ x: Int, _ text: String, pair: Int32 = 0, bold: Bool = false, reverse: Bool = false, underline: Bool = false) {
        guard y >= 0, y < rows, x >= 0, x < columns else { return }
        var attrs: attr_t = 0
        if colors && pair != 0 { attrs |= eggs_color_pair(pair) }
        if bold { attrs |= eggs_a_bold() }
        if underline { attrs |= eggs_a_underline() }
        if reverse || (colors && pair == Terminal.pairOrange && orangeInReverse) { attrs |= eggs_a_reverse() }
        if attrs != 0 { wattron(eggs_stdscr(), Int32(bitPattern: attrs)) }
        let room = columns - x
        let shown = unicode ? text : Terminal.ascii(text)
        // Clipped by characters; a text of no more bytes than the room has no more characters.
        let clipped = shown.utf8.count <= room ? shown : String(shown.prefix(room))
        // Handed to curses as wide characters: its multibyte path converts byte by byte
        // (mbrtowc for each), which was most of a spectator's drawing time.
        var wide: [wchar_t] = []
        wide.reserveCapacity(clipped.utf8.count + 1)
        for scalar in clipped.unicodeScalars { wide.append(wchar_t(bitPattern: scalar.value)) }
        wide.append(0)
        mvwaddnwstr(eggs_stdscr(), Int32(y), Int32(x), wide, Int32(wide.count - 1))
        if attrs != 0 { wattroff(eggs_stdscr(), Int32(bitPattern: attrs)) }
    }

    /// `text` in plain ASCII, for a locale that is not UTF-8: the few symbols the screens use get
    /// ASCII stand-ins, anything else becomes "?" (ncurses would garble it).
    static func ascii(_ text: String) -> String {
        guard !text.unicodeScalars.allSatisfy(\.isASCII) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.isASCII {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "—", "–", "─", "━": out += "-"
            case "←": out += "<-"
            case "→": out += "->"
            case "↑": out += "^"
            case "↓": out += "v"
            case "·", "•": out += "."
            case "…": out += "..."
            case "×": out += "x"
            case "│", "┃": out += "|"
            case "┌", "┐", "└", "┘", "├", "┤", "┬", "┴", "┼": out += "+"
            case "▒", "█", "▓": out += "#"
            default: out += "?"
            }
        }
        return out
    }

    // MARK: restoring the terminal on signals and crashes

    nonisolated(unsafe) static var active = true
    /// Whether the kitty keyboard protocol is pushed (popped again on every way out).
    nonisolated(unsafe) static var kittyPushed = false

    /// Writes `text` to the terminal directly (outside curses' buffer).
    static func writeRaw(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }
    nonisolated(unsafe) static var interrupted: Int32 = 0

    private static func installRestoreHandlers() {
        active = true
        var set = sigset_t()
        sigemptyset(&set)
        for sig in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&set, sig) }
        sigprocmask(SIG_UNBLOCK, &set, nil)
        // Ctrl-C and SIGTERM end the loop cleanly: the loop sees `interrupted` and quits.
        signal(SIGINT) { sig in Terminal.interrupted = sig }
        signal(SIGTERM) { sig in Terminal.interrupted = sig }
        signal(SIGHUP) { sig in Terminal.interrupted = sig }
        // A crash restores the terminal first, then dies as it would have.
        for sig in [SIGSEGV, SIGABRT, SIGILL, SIGTRAP, SIGBUS, SIGFPE] {
            signal(sig) { sig in
                if Terminal.kittyPushed {
                    // "\e[<u", written without allocating.
                    var pop: (UInt8, UInt8, UInt8, UInt8) = (27, 91, 60, 117)
                    _ = withUnsafeBytes(of: &pop) { write(STDOUT_FILENO, $0.baseAddress, 4) }
                }
                if Terminal.active { endwin() }
                signal(sig, SIG_DFL)
                raise(sig)
            }
        }
    }
}
