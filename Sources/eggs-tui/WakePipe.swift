import PeerNet
import PeerNetUDP
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Wakes the game loop from another thread: the network thread signals it when a delivery
/// changed what the screen shows, so a remote move is drawn at once instead of at the next
/// tick. Signals coalesce: at most one byte is in the pipe at a time.
final class WakePipe: Sendable {
    /// The end the game loop polls.
    let readFD: Int32
    private let reader: FileDescriptor
    private let writer: FileDescriptor
    private let pending = Atomic<Bool>(false)

    init?() {
        guard let ends = try? FileDescriptor.pipe(options: .init(rawValue: O_NONBLOCK | O_CLOEXEC)) else { return nil }
        reader = ends.readEnd
        writer = ends.writeEnd
        readFD = reader.rawValue
    }

    deinit {
        try? reader.close()
        try? writer.close()
    }

    /// Makes the loop's next poll return (cheap; safe from any thread).
    func signal() {
        guard !pending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let byte: [UInt8] = [1]
        if (try? byte.withUnsafeBytes({ try writer.write($0) })) != 1 {
            // Nothing to wake the loop with: clear the flag so the next signal tries again
            // (the loop still redraws at its next tick).
            pending.store(false, ordering: .releasing)
        }
    }

    /// Empties the pipe; called by the loop after it woke, before it looks at the world.
    /// The pipe is read before the flag is cleared: a signal that lands in between finds the
    /// flag still set and writes nothing, and what it announced is drawn by the look that
    /// follows. (Clearing first could let a byte written after the clear be read here, leaving
    /// the flag set with an empty pipe, and every later signal would be swallowed.)
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while let count = try? buffer.withUnsafeMutableBytes({ try reader.read(into: $0) }), count > 0 {}
        pending.store(false, ordering: .releasing)
    }
}

/// With `EGGS_TRACE_INPUT=PATH`, play records when each local move was made and when each
/// remote player's moves reached the match and the screen, one line each with the wall
/// clock in microseconds; `scripts/input-latency.sh` pairs the lines of two peers.
final class InputTrace {
    private let log: LogFile

    private init(log: LogFile) { self.log = log }

    /// The trace `EGGS_TRACE_INPUT` asks for, `nil` when it is unset or empty.
    /// Throws a one-line error when the file cannot be written.
    static func fromEnvironment() throws -> InputTrace? {
        guard let path = getenv("EGGS_TRACE_INPUT").map({ String(cString: $0) }), !path.isEmpty else { return nil }
        return InputTrace(log: try LogFile(path: path))
    }

    /// `kind` is `key`, `applied` or `shown`; `inputs` the owner's stream count.
    func record(_ kind: String, player: String, game: UInt32, inputs: Int, atMicroseconds: UInt64 = MonotonicClock.wallMicroseconds()) {
        log.write("\(kind) \(player) \(game) \(inputs) \(atMicroseconds)")
    }
}

/// What an ``InputTrace`` has recorded of one kind of line: the game, and each remote player's
/// stream count last written.
struct InputProgress {
    var game: UInt32 = 0
    var counts: [PeerID: Int] = [:]
}

extension InputTrace {
    /// Records a `kind` line for every player whose stream count in `game` grew past `progress`,
    /// and moves `progress` on (a new game starts it afresh).
    func recordAdvances(_ kind: String, game: UInt32, counts: [PeerID: Int], progress: inout InputProgress) {
        if game != progress.game { progress = InputProgress(game: game) }
        for (player, count) in counts where count > progress.counts[player, default: 0] {
            record(kind, player: player.hex, game: game, inputs: count)
            progress.counts[player] = count
        }
    }
}
