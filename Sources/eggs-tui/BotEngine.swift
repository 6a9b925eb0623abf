import EggBot
import EggGame
import Foundation
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// An external engine: a child process (`/bin/sh -c 'exec CMD'`, started by Foundation's
/// `Process`) speaking ``BotEngineProtocol`` on its stdin and stdout; its stderr is this
/// process's. Every fault of the engine (it cannot start, says something else than the protocol,
/// is silent past the timeout, exits) is a ``CommandFailure`` with status 2 naming it.
/// ``close()`` ends the child and reaps it.
final class EngineProcess {
    let command: String
    let timeoutMilliseconds: Int
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private(set) var name = ""
    private var open = false
    private var buffer: [UInt8] = []

    /// The child's process ID (0 before it started).
    var pid: pid_t { process.processIdentifier }

    /// Starts the engine and waits (at most the timeout) for its answer to the hello.
    init(command: String, timeoutMilliseconds: Int) throws {
        self.command = command
        self.timeoutMilliseconds = timeoutMilliseconds
        // A dead engine must be an error on write, not a signal that ends the bot.
        signal(SIGPIPE, SIG_IGN)
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exec " + command]
        process.standardInput = input
        process.standardOutput = output
        do {
            // `run` closes the child's ends of both pipes in this process.
            try process.run()
        } catch {
            throw fault("cannot start: \(error.localizedDescription)")
        }
        open = true
        let reading = output.fileHandleForReading.fileDescriptor
        _ = fcntl(reading, F_SETFL, fcntl(reading, F_GETFL) | O_NONBLOCK)
        do {
            // An engine that answered at once and exited makes the hello fail to write: what it
            // said is still in the pipe, and names the fault better than the broken pipe.
            var helloFailure: Error?
            do { try send(BotEngineProtocol.hello) } catch { helloFailure = error }
            let answer: String?
            do {
                answer = try readLine(waitingMilliseconds: helloFailure == nil ? timeoutMilliseconds : 0)
            } catch {
                throw helloFailure ?? error
            }
            guard let line = answer else {
                throw helloFailure ?? fault("no answer to '\(BotEngineProtocol.hello)' within \(timeoutMilliseconds) ms")
            }
            switch BotEngineProtocol.parseReady(line) {
            case .success(let name): self.name = name
            case .failure(let error): throw fault("\(error) to '\(BotEngineProtocol.hello)'")
            }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    func fault(_ message: String) -> CommandFailure {
        CommandFailure.badInput("engine '\(command)': \(message)")
    }

    /// Writes one line to the engine.
    func send(_ line: String) throws {
        guard open else { throw fault("exited") }
        if let code = FileHandleOutput.writeAll(input.fileHandleForWriting.fileDescriptor, line + "\n") {
            throw fault("exited (cannot write to it: \(String(cString: strerror(code))))")
        }
    }

    /// The next complete line from the engine, or nil when none has arrived yet (never blocks).
    /// Lines starting with `#` are comments and skipped.
    func readLine() throws -> String? {
        guard open else { throw fault("exited") }
        let file = FileDescriptor(rawValue: output.fileHandleForReading.fileDescriptor)
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                if line.hasPrefix("#") { continue }
                return line.hasSuffix("\r") ? String(line.dropLast()) : line
            }
            guard buffer.count <= BotEngineProtocol.lineMax else {
                throw fault("a line longer than \(BotEngineProtocol.lineMax) bytes")
            }
            var chunk = [UInt8](repeating: 0, count: 512)
            let count: Int
            do {
                // swift-system retries EINTR.
                count = try chunk.withUnsafeMutableBytes { try file.read(into: $0) }
            } catch Errno.wouldBlock {
                return nil
            } catch {
                throw fault("exited (cannot read from it: \(error))")
            }
            guard count > 0 else { throw fault("exited") }
            buffer += chunk[0..<count]
        }
    }

    /// The next line, waiting for it at most `waitingMilliseconds`; nil when none came in time.
    func readLine(waitingMilliseconds: Int) throws -> String? {
        let deadline = MonotonicNanoseconds.now() + UInt64(waitingMilliseconds) * 1_000_000
        while true {
            if let line = try readLine() { return line }
            let now = MonotonicNanoseconds.now()
            guard now < deadline else { return nil }
            var fds = pollfd(fd: output.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&fds, 1, Int32(min(1_000, (deadline - now) / 1_000_000 + 1)))
        }
    }

    /// Closes the engine's input (it should exit at end of input), then ends it if it does not
    /// within 200 ms (SIGTERM, then SIGKILL) and reaps it.
    func close() {
        guard open else { return }
        open = false
        try? input.fileHandleForWriting.close()
        try? output.fileHandleForReading.close()
        for step in 0..<40 {
            if !process.isRunning { break }
            if step == 20 { process.terminate() }
            usleep(10_000)
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
enum MonotonicNanoseconds {
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

/// A bot player whose placements come from an engine: on each new pair it sends the state, then
/// (without blocking the game loop) waits for the answer, validates it and plays it at the pace
/// of its level. A placement the pair can no longer reach when the answer arrives (it fell while
/// the engine thought) becomes a hard drop where it is.
struct EnginePlayer {
    private(set) var pacer: BotPacer
    private var seq = 0
    private var plannedPairIndex = -1
    private var askedAt: UInt64?
    private(set) var answers = 0
    private(set) var fallbacks = 0

    init(level: BotLevel) {
        pacer = BotPacer(level: level)
    }

    /// Advances one tick; returns the move to apply now, if any.
    /// - Throws: ``CommandFailure`` (status 2) when the engine fails.
    mutating func tick(engine: EngineProcess, grid: PlayerGrid, preview: [EggPair], garbage: Int, opponents: [Board]) throws -> Move? {
        guard grid.state == .live, let live = grid.livePair else { return nil }
        if plannedPairIndex != grid.pairsSpawned {
            plannedPairIndex = grid.pairsSpawned
            seq += 1
            try engine.send(BotEngineProtocol.stateLine(seq: seq, board: grid.board, pair: live.pair, preview: preview,
                                                        garbage: garbage, opponents: opponents))
            askedAt = MonotonicNanoseconds.now()
            pacer.start([])
        }
        if let asked = askedAt {
            guard let line = try engine.readLine() else {
                if MonotonicNanoseconds.now() - asked > UInt64(engine.timeoutMilliseconds) * 1_000_000 {
                    throw engine.fault("no answer to state \(seq) within \(engine.timeoutMilliseconds) ms")
                }
                return nil
            }
            askedAt = nil
            let placement: Placement
            switch BotEngineProtocol.parsePlacement(line, seq: seq) {
            case .success(let chosen): placement = chosen
            case .failure(let error): throw engine.fault(error.description)
            }
            answers += 1
            if let moves = Bot.moves(to: placement, from: live, on: grid.board, rules: grid.rules) {
                pacer.start(moves)
            } else {
                fallbacks += 1
                pacer.start([.hardDrop])
            }
        }
        return pacer.tick()
    }
}
