import PeerNetUDP
#if canImport(Glibc)
import Glibc
#endif

/// The terminal's 60-tick/s loop: waits for a key or the next tick (never spins), ticks the
/// game, and redraws when something changed. Shared by practice, network play and replay.
protocol Screen: AnyObject {
    /// Whether the loop should end.
    var finished: Bool { get }
    /// Whether the game needs ticks now (false in a lobby or when paused: the loop then sleeps longer).
    var wantsTicks: Bool { get }
    func handle(key: TerminalKey)
    /// One logic tick (1/60 s). Returns whether anything visible changed.
    func tick() -> Bool
    /// Draws the whole screen into curses' buffer (curses sends only what changed).
    func draw(on term: Terminal)
    /// Called when the loop ends by a signal (Ctrl-C, SIGTERM).
    func interrupted()
    /// A pipe another thread signals when the screen should be drawn again now.
    var wake: WakePipe? { get }
    /// Called after a draw reached the terminal.
    func drawn()
    /// Called when the wake pipe woke the loop: whether the screen would now show something
    /// else (a frame is drawn only then).
    func woke() -> Bool
    /// How `key` repeats while held, when eggs repeats held keys itself (the kitty keyboard
    /// protocol): nil for a key that does not repeat (the default).
    func repeatKind(_ key: TerminalKey) -> KeyRepeatKind?
}

/// How a held key repeats (``KeyRepeat``).
enum KeyRepeatKind {
    /// After the delay (DAS), then at the rate (ARR): moves.
    case delayed
    /// At the rate from the press: soft drop.
    case immediate
}

extension Screen {
    var wake: WakePipe? { nil }
    func drawn() {}
    func woke() -> Bool { true }
    func repeatKind(_ key: TerminalKey) -> KeyRepeatKind? { nil }
}

enum GameLoop {
    static let tickNanoseconds: UInt64 = 1_000_000_000 / 60
    /// How long an idle screen sleeps between looks at the world (signals, network changes).
    static let idleWaitMilliseconds: Int32 = 100

    static func run(_ screen: Screen, on term: Terminal) {
        var nextTick = MonotonicClock.now().nanoseconds
        var dirty = true
        let config = Config.current
        var stats = LoopStats.fromEnvironment()
        defer { stats?.write() }
        var awake: UInt64?
        var repeater = KeyRepeat(dasMilliseconds: config.das ?? KeyRepeat.defaultDelayMilliseconds,
                                 arrMilliseconds: config.arr ?? KeyRepeat.defaultIntervalMilliseconds)
        while !screen.finished {
            if Terminal.interrupted != 0 {
                screen.interrupted()
                break
            }
            if dirty {
                term.clear()
                screen.draw(on: term)
                term.refresh()
                screen.drawn()
                dirty = false
            }
            let now = MonotonicClock.now().nanoseconds
            var wait = idleWaitMilliseconds
            if screen.wantsTicks {
                wait = Int32(clamping: nextTick > now ? (nextTick - now + 999_999) / 1_000_000 : 0)
            }
            if let due = repeater.nextDue {
                wait = min(wait, Int32(clamping: due > now ? (due - now + 999_999) / 1_000_000 : 0))
            }
            // Sleep until a key, a wake-up from the network, a held key's repeat or the tick;
            // then take every key already typed without waiting.
            if let awake, stats != nil { stats!.add(MonotonicClock.now().nanoseconds - awake) }
            var fds = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)]
            if let wake = screen.wake { fds.append(pollfd(fd: wake.readFD, events: Int16(POLLIN), revents: 0)) }
            _ = poll(&fds, nfds_t(fds.count), wait)
            // The iteration's work (keys, ticks and the next frame) is measured from here to
            // the next wait: what a frame can be late by.
            awake = MonotonicClock.now().nanoseconds
            if let wake = screen.wake, fds[1].revents != 0 {
                wake.drain()
                dirty = screen.woke() || dirty
            }
            var gotKey = false
            for event in term.readEvents(timeoutMilliseconds: 0) {
                gotKey = true
                deliver(event, to: screen, repeater: &repeater, ownRepeat: term.kittyKeyboard)
                if screen.finished { break }
            }
            if let held = repeater.held?.key, screen.repeatKind(held) == nil {
                // The screen changed under the held key (the pair locked, a question opened).
                repeater.cancel()
            }
            if !screen.finished, let due = repeater.due(at: MonotonicClock.now().nanoseconds) {
                for _ in 0..<due.count where !screen.finished { screen.handle(key: due.key) }
                gotKey = true
            }
            if gotKey {
                dirty = true
                continue
            }
            // A wake-up alone falls through to the ticks, so a busy network never starves them.
            let after = MonotonicClock.now().nanoseconds
            if !screen.wantsTicks {
                // Paused, asking a question or too small to show the game: no tick at all, so
                // nothing moves until the screen asks for ticks again.
                nextTick = after
                continue
            }
            // Catch up after a stall, but at most a second's worth of ticks.
            var ticks = 0
            while nextTick <= after && ticks < 60 {
                dirty = screen.tick() || dirty
                nextTick += tickNanoseconds
                ticks += 1
            }
            if nextTick <= after { nextTick = after + tickNanoseconds }
        }
    }

    /// The longest iterations of the loop (`EGGS_LOOP_STATS=FILE`: written as JSON when the loop
    /// ends), overall and while the history writes a record (`HistoryRecorder`): how late a
    /// frame can be, measured rather than guessed. An iteration's time is its work: the keys,
    /// the ticks and the frame drawn after them, not the wait.
    struct LoopStats {
        let path: String
        var iterations = 0, longest: UInt64 = 0
        var iterationsDuringHistory = 0, longestDuringHistory: UInt64 = 0

        static func fromEnvironment() -> LoopStats? {
            guard let path = getenv("EGGS_LOOP_STATS").map({ String(cString: $0) }), !path.isEmpty else { return nil }
            return LoopStats(path: path)
        }

        mutating func add(_ nanoseconds: UInt64) {
            iterations += 1
            longest = max(longest, nanoseconds)
            if HistoryRecorder.writesInProgress.load(ordering: .relaxed) > 0 {
                iterationsDuringHistory += 1
                longestDuringHistory = max(longestDuringHistory, nanoseconds)
            }
        }

        func write() {
            let text = "{\"iterations\":\(iterations),\"longestMicroseconds\":\(longest / 1000),"
                + "\"iterationsDuringHistory\":\(iterationsDuringHistory),\"longestDuringHistoryMicroseconds\":\(longestDuringHistory / 1000)}\n"
            guard let file = fopen(path, "a") else { return }
            fputs(text, file)
            fclose(file)
        }
    }

    /// One key event to the screen. With the kitty protocol (`ownRepeat`) eggs repeats held keys
    /// itself: a press of a key the screen repeats starts its repeat, its release ends it, and the
    /// terminal's own repeats of it are ignored. Ctrl-C, which the protocol sends as a key rather
    /// than a signal, interrupts as the signal would.
    static func deliver(_ event: KeyEvent, to screen: Screen, repeater: inout KeyRepeat, ownRepeat: Bool) {
        if event.key == .character("\u{3}") {
            Terminal.interrupted = SIGINT
            return
        }
        if event.key == .resize { return }
        switch event.kind {
        case .release:
            repeater.release(event.key)
        case .repeat:
            // The terminal's repeat of a key eggs does not repeat itself (text entry, for one).
            if !ownRepeat || screen.repeatKind(event.key) == nil { screen.handle(key: event.key) }
        case .press:
            screen.handle(key: event.key)
            if ownRepeat, let kind = screen.repeatKind(event.key) {
                repeater.press(event.key, at: MonotonicClock.now().nanoseconds, immediate: kind == .immediate)
            }
        }
    }

    /// Draws the "terminal too small" notice, word-wrapped to the terminal's width so the size
    /// needed is always shown; true when it was drawn.
    static func drawTooSmall(on term: Terminal, columns: Int, rows: Int) -> Bool {
        guard term.columns < columns || term.rows < rows else { return false }
        let text = "Terminal too small: eggs needs at least \(columns)x\(rows), this one is \(term.columns)x\(term.rows). The game waits. Enlarge it, or q to quit."
        for (index, line) in wrap(text, width: term.columns).enumerated() {
            term.put(index, 0, line, bold: index == 0)
        }
        return true
    }

    /// The first of `candidates` that fits in `width` characters (titles and key hints shorten
    /// rather than cut), else the last one cut to it with "…".
    static func fitting(_ candidates: [String], width: Int) -> String {
        if let fit = candidates.first(where: { $0.count <= width }) { return fit }
        let last = candidates.last ?? ""
        return width > 1 ? String(last.prefix(width - 1)) + "…" : String(last.prefix(max(0, width)))
    }

    /// Splits `text` into lines of at most `width` characters at spaces (a longer word is cut).
    static func wrap(_ text: String, width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        var line = ""
        // Runs of spaces are kept inside a line ("a  b" stays so), dropped at a line's start.
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            var word = String(word)
            if line.isEmpty && word.isEmpty { continue }
            while word.count > width {
                if !line.isEmpty { lines.append(line); line = "" }
                lines.append(String(word.prefix(width)))
                word = String(word.dropFirst(width))
            }
            if line.isEmpty {
                line = word
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = word
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
