import EggBot
import EggGame
import Foundation
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// An external engine: a child process (`/bin/sh -c 'exec CMD'`) speaking ``BotEngineProtocol``
/// on its stdin and stdout; its stderr is this process's. It leads a process group of its own
/// (`posix_spawn` with `POSIX_SPAWN_SETPGROUP`), so ``close()`` ends whatever it started too, and
/// this process reaps it itself (`waitpid`): nothing waits for an end of file on a pipe, which a
/// child the engine left running may hold open. (Foundation's `Process` learns of an exit from
/// such an end of file, on a socket every descendant inherits.) Every fault of the engine (it
/// cannot start, says something else than the protocol, is silent past the timeout, exits) is a
/// ``CommandFailure`` with status 2 naming it, its lines escaped (``BotEngineProtocol/escaped(_:)``).
final class EngineProcess {
    let command: String
    let timeoutMilliseconds: Int
    /// The child's process ID, also its process group's ID (0 before it started).
    private(set) var pid: pid_t = 0
    /// This process's ends of the engine's stdin and stdout.
    private var input = FileDescriptor(rawValue: -1)
    private var output = FileDescriptor(rawValue: -1)
    private(set) var name = ""
    private var open = false
    /// Whether the engine itself has been reaped (its group may outlive it).
    private var reaped = false
    private var buffer: [UInt8] = []

    /// Starts the engine and waits (at most the timeout) for its answer to the hello.
    init(command: String, timeoutMilliseconds: Int) throws {
        self.command = command
        self.timeoutMilliseconds = timeoutMilliseconds
        // A dead engine must be an error on write, not a signal that ends the bot.
        signal(SIGPIPE, SIG_IGN)
        do {
            (pid, input, output) = try Self.spawn(command)
        } catch {
            throw fault("cannot start: \(String(cString: strerror(error.rawValue)))")
        }
        open = true
        _ = fcntl(output.rawValue, F_SETFL, fcntl(output.rawValue, F_GETFL) | O_NONBLOCK)
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
        CommandFailure.badInput("engine '\(BotEngineProtocol.escaped(command))': \(message)")
    }

    /// Starts `/bin/sh -c 'exec CMD'` as the leader of a new process group, its stdin and stdout
    /// two new pipes (this process keeps the other ends, close-on-exec), its stderr this process's,
    /// SIGPIPE at its default, no signal blocked and no other descriptor of this process open.
    private static func spawn(_ command: String) throws(Errno) -> (pid: pid_t, input: FileDescriptor, output: FileDescriptor) {
        var toChild: [Int32] = [-1, -1], fromChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0 else { throw Errno(rawValue: errno) }
        guard pipe(&fromChild) == 0 else {
            let code = errno
            Glibc.close(toChild[0]); Glibc.close(toChild[1])
            throw Errno(rawValue: code)
        }
        // Close-on-exec, so no other engine started later inherits them (its copy of an engine's
        // stdin would keep that engine from its end of input).
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], STDOUT_FILENO)
        // What this process inherited without close-on-exec (a parent's descriptors) stays here.
        for fd in inheritableDescriptors() where !(toChild + fromChild).contains(fd) {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t(), mask = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        sigemptyset(&mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &mask)
        let arguments = ["sh", "-c", "exec " + command]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, environ)
        Glibc.close(toChild[0])
        Glibc.close(fromChild[1])
        guard status == 0 else {
            Glibc.close(toChild[1])
            Glibc.close(fromChild[0])
            throw Errno(rawValue: status)
        }
        return (pid, FileDescriptor(rawValue: toChild[1]), FileDescriptor(rawValue: fromChild[0]))
    }

    /// This process's open descriptors above stderr without close-on-exec (those a child would get).
    private static func inheritableDescriptors() -> [Int32] {
        guard let directory = opendir("/proc/self/fd") else { return [] }
        defer { closedir(directory) }
        let own = dirfd(directory)
        var found: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let fd = Int32(name), fd > STDERR_FILENO, fd != own else { continue }
            if fcntl(fd, F_GETFD) & FD_CLOEXEC == 0 { found.append(fd) }
        }
        return found
    }

    /// Writes one line to the engine.
    func send(_ line: String) throws {
        guard open else { throw fault("exited") }
        if let code = FileHandleOutput.writeAll(input.rawValue, line + "\n") {
            throw fault("exited (cannot write to it: \(String(cString: strerror(code))))")
        }
    }

    /// The next complete line from the engine, or nil when none has arrived yet (never blocks).
    /// Lines starting with `#` are comments and skipped. An engine that exited is a fault once
    /// what it wrote is read, whether or not a child it left holds its stdout open.
    func readLine() throws -> String? {
        guard open else { throw fault("exited") }
        var sawExit = false
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
                count = try chunk.withUnsafeMutableBytes { try output.read(into: $0) }
            } catch Errno.wouldBlock {
                if sawExit { throw fault("exited") }
                guard reapIfExited() else { return nil }
                // What it wrote before it exited is in the pipe already: read once more.
                sawExit = true
                continue
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
            // Short waits: an engine that exits while a child holds its stdout sends no end of file.
            var fds = pollfd(fd: output.rawValue, events: Int16(POLLIN), revents: 0)
            _ = poll(&fds, 1, Int32(min(50, (deadline - now) / 1_000_000 + 1)))
        }
    }

    /// Reaps the engine if it has exited (never waits); whether it has.
    @discardableResult
    private func reapIfExited() -> Bool {
        guard !reaped else { return true }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        // ECHILD: someone else reaped it (it is gone all the same).
        if result == pid || (result == -1 && errno == ECHILD) { reaped = true }
        return reaped
    }

    /// Whether anything of the engine is left: itself unreaped, or a process of its group that
    /// is not a zombie (a child it started, whose new parent may be slow to reap it).
    private var groupRemains: Bool {
        !reapIfExited() || Self.groupHasLiveMember(pid)
    }

    /// Whether a process other than a zombie is in process group `group`.
    static func groupHasLiveMember(_ group: pid_t) -> Bool {
        if kill(-group, 0) == -1 && errno == ESRCH { return false }
        guard let directory = opendir("/proc") else { return true }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard Int32(name) != nil, let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                  let end = stat.lastIndex(of: ")") else { continue }
            // After "PID (COMM) ": state, parent, process group.
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            if fields.count > 2, fields[0] != "Z", Int32(fields[2]) == group { return true }
        }
        return false
    }

    /// Ends the engine and all its process group, and reaps it: see ``close(_:)``.
    func close() { Self.close([self]) }

    /// Ends engines and whatever they started, all at once, and reaps them: closes their stdin (an
    /// engine must exit at end of input) and stdout, gives them 200 ms to exit, then sends SIGTERM
    /// to each process group where anything is left, and SIGKILL 200 ms later to each where
    /// anything still is. Never waits for a pipe or past about 0.6 s; a process that left its
    /// group (`setsid`) is not ended, and holds nothing up.
    static func close(_ engines: [EngineProcess]) {
        let closing = engines.filter(\.open)
        for engine in closing {
            engine.open = false
            try? engine.input.close()
            try? engine.output.close()
        }
        func wait(milliseconds: UInt64, until done: () -> Bool) {
            let deadline = MonotonicNanoseconds.now() + milliseconds * 1_000_000
            while !done() && MonotonicNanoseconds.now() < deadline { usleep(10_000) }
        }
        wait(milliseconds: 200) { closing.allSatisfy { $0.reapIfExited() } }
        let left = closing.filter(\.groupRemains)
        for engine in left { kill(-engine.pid, SIGTERM) }
        wait(milliseconds: 200) { !left.contains(where: \.groupRemains) }
        for engine in left where engine.groupRemains { kill(-engine.pid, SIGKILL) }
        wait(milliseconds: 200) { left.allSatisfy { $0.reapIfExited() } }
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
