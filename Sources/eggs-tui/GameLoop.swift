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
}

enum GameLoop {
    static let tickNanoseconds: UInt64 = 1_000_000_000 / 60
    /// How long an idle screen sleeps between looks at the world (signals, network changes).
    static let idleWaitMilliseconds: Int32 = 100

    static func run(_ screen: Screen, on term: Terminal) {
        var nextTick = MonotonicClock.now().nanoseconds
        var dirty = true
        while !screen.finished {
            if Terminal.interrupted != 0 {
                screen.interrupted()
                break
            }
            if dirty {
                term.clear()
                screen.draw(on: term)
                term.refresh()
                dirty = false
            }
            let now = MonotonicClock.now().nanoseconds
            var wait = idleWaitMilliseconds
            if screen.wantsTicks {
                wait = Int32(clamping: nextTick > now ? (nextTick - now + 999_999) / 1_000_000 : 0)
            }
            if let key = term.readKey(timeoutMilliseconds: wait) {
                if key != .resize { screen.handle(key: key) }
                dirty = true
                continue
            }
            let after = MonotonicClock.now().nanoseconds
            if !screen.wantsTicks {
                nextTick = after
                dirty = screen.tick() || dirty
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

    /// Draws the "terminal too small" notice; true when it was drawn.
    static func drawTooSmall(on term: Terminal, columns: Int, rows: Int) -> Bool {
        guard term.columns < columns || term.rows < rows else { return false }
        term.put(0, 0, "Terminal too small: eggs needs at least \(columns)x\(rows),")
        term.put(1, 0, "this one is \(term.columns)x\(term.rows). Enlarge it, or q to quit.")
        return true
    }
}
