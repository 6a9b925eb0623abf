import Foundation
import Testing

/// Runs the built `eggs-tui` binary and tmux sessions for end-to-end tests.
enum Harness {
    /// The `eggs-tui` executable beside this test bundle (`.build/<config>/eggs-tui`), or the one
    /// `EGGS_TUI_BINARY` names (to run these tests against another build, e.g. an older one).
    static var binary: String {
        if let other = ProcessInfo.processInfo.environment["EGGS_TUI_BINARY"], !other.isEmpty { return other }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("eggs-tui").path
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `eggs-tui` with `arguments`, feeding `stdin`, and waits (at most `timeoutSeconds`).
    static func run(
        _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil, timeoutSeconds: Double = 60
    ) throws -> Result {
        try runProcess(binary, arguments, stdin: stdin, environment: environment, timeoutSeconds: timeoutSeconds)
    }

    /// A new directory under the system's temporary directory, named after `name` and this process.
    static func temporaryDirectory(_ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "eggs-\(name)-\(getpid())-\(Int.random(in: 0...1_000_000))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Runs `executable` with `arguments` (in `directory`, with `environment` added), feeding
    /// `stdin` (else an empty one), and waits at most `timeoutSeconds`: then it is terminated
    /// (its process group too, when it leads one) and the test records an issue.
    static func runProcess(
        _ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil,
        directory: String? = nil, timeoutSeconds: Double = 60
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? input.fileHandleForWriting.close()
        let outData = ReadAll(out.fileHandleForReading)
        let errData = ReadAll(err.fileHandleForReading)
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(-process.processIdentifier, SIGTERM)
            process.terminate()
            process.waitUntilExit()
            Issue.record("\(executable) \(arguments) did not finish within \(timeoutSeconds) s")
        }
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: outData.wait(), stderr: errData.wait())
    }

    /// The bottom row of every full-size grid on a screen, left to right: the text between the
    /// side borders on the line just above the bottom borders (normal or large cells alike).
    static func gridBottomRows(_ screen: String) -> [String] {
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let bottom = lines.firstIndex(where: { $0.contains("└") }), bottom > 0 else { return [] }
        let parts = lines[bottom - 1].split(separator: "│", omittingEmptySubsequences: false).map(String.init)
        // "<left> │cells│ next … │cells│ …": the cells are every other part after the first.
        return stride(from: 1, to: parts.count, by: 2).map { parts[$0] }
    }

    /// Whether the bottom-left cell of a grid row from ``gridBottomRows(_:)`` holds an egg or garbage.
    static func leftCellFilled(_ row: String) -> Bool {
        guard let first = row.first else { return false }
        return first != "·" && first != " "
    }

    /// Whether tmux is installed (scripts/setup.sh installs it).
    static var hasTmux: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") || FileManager.default.isExecutableFile(atPath: "/usr/local/bin/tmux")
    }

    /// Runs a tmux command against the test server socket; returns stdout.
    ///
    /// Spawned with posix_spawn and reaped with waitpid, output through a file: a command that
    /// starts the tmux server hands its descriptors to the server, so a pipe would never end.
    @discardableResult
    static func tmux(_ socket: String, _ arguments: [String]) throws -> String {
        let path = NSTemporaryDirectory() + "eggs-tmux-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).out"
        defer { unlink(path) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ["tmux", "-L", socket] + arguments
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        // The test's worker threads block most signals, and a spawned process inherits that
        // mask: a tmux server started so never reaps its panes (SIGCHLD) nor gets them to quit
        // (SIGHUP), and lingers after kill-server. Start it with no signal blocked, default handlers.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, "tmux", &actions, &attributes, &cArgs, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
}

/// Reads a pipe to its end on a background thread.
final class ReadAll: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}

/// A detached tmux session running one command, read with capture-pane.
///
/// Each session has its own tmux server (`tmux -L <unique name>`). ``close()`` (also run by
/// `deinit`, so a failing test cleans up too) kills every process started in the panes, the
/// server, and removes the server's socket.
final class TmuxSession {
    let socket: String
    let name: String
    private var closed = false
    /// The session's own state and data directories, when the test gave none: logs, practice
    /// logs and the history never go to the real home (retention would prune its logs). Removed
    /// at close.
    private var ownHome: String?

    init(command: String, width: Int = 120, height: Int = 40, environment: [String: String] = [:]) throws {
        socket = "eggs-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        name = "main"
        var environment = environment
        if environment["XDG_STATE_HOME"] == nil || environment["XDG_DATA_HOME"] == nil || environment["XDG_CONFIG_HOME"] == nil {
            let home = NSTemporaryDirectory() + "eggs-home-" + socket
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            ownHome = home
            if environment["XDG_STATE_HOME"] == nil { environment["XDG_STATE_HOME"] = home + "/state" }
            if environment["XDG_DATA_HOME"] == nil { environment["XDG_DATA_HOME"] = home + "/data" }
            if environment["XDG_CONFIG_HOME"] == nil {
                // An empty config file: not a first run (no how-to-play screen before the lobby),
                // unless the test asks for one (`firstRun`).
                environment["XDG_CONFIG_HOME"] = home + "/config"
                if environment.removeValue(forKey: "EGGS_TEST_FIRST_RUN") == nil {
                    try FileManager.default.createDirectory(atPath: home + "/config/eggs", withIntermediateDirectories: true)
                    FileManager.default.createFile(atPath: home + "/config/eggs/config.toml", contents: Data())
                }
            }
        }
        var env: [String] = []
        for (key, value) in environment.sorted(by: { $0.key < $1.key }) { env += ["-e", "\(key)=\(value)"] }
        do {
            try Harness.tmux(socket, ["new-session", "-d", "-s", name, "-x", "\(width)", "-y", "\(height)"] + env + [command])
            try Harness.tmux(socket, ["set-option", "-t", name, "remain-on-exit", "on"])
        } catch {
            close()
            throw error
        }
    }

    /// The visible screen as text.
    func screen() -> String {
        (try? Harness.tmux(socket, ["capture-pane", "-p", "-t", name])) ?? ""
    }

    /// The visible screen with its colours and attributes as escape sequences.
    func screenWithAttributes() -> String {
        (try? Harness.tmux(socket, ["capture-pane", "-p", "-e", "-t", name])) ?? ""
    }

    func send(_ keys: String...) {
        _ = try? Harness.tmux(socket, ["send-keys", "-t", name] + keys)
    }

    /// Resizes the session's window (the program sees a terminal resize).
    func resize(width: Int, height: Int) {
        _ = try? Harness.tmux(socket, ["resize-window", "-t", name, "-x", "\(width)", "-y", "\(height)"])
    }

    /// Quits `play` from whatever screen it shows: `q`, and `y` when a match asks (a network
    /// match's `q`, `y` leads to the lobby, where `q` quits), until the program has exited (at
    /// most `seconds`). Returns whether it did.
    @discardableResult
    func quitPlay(seconds: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let shown = screen()
            if shown.contains("EXIT=") { return true }
            send(shown.contains("Leave the match") ? "y" : "q")
            usleep(300_000)
        }
        return screen().contains("EXIT=")
    }

    /// Waits until the screen contains `text` (at most `seconds`); returns the last screen.
    @discardableResult
    func waitFor(_ text: String, seconds: Double = 20) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let shown = screen()
            if shown.contains(text) { return shown }
            usleep(50_000)
        }
        return nil
    }

    /// Waits until some line of the screen matches `pattern` (a regular expression); returns that line.
    func waitForLine(matching pattern: String, seconds: Double = 20) -> String? {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return nil }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            for line in screen().split(separator: "\n").map(String.init) {
                if regex.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil { return line }
            }
            usleep(50_000)
        }
        return nil
    }

    /// Whether the command in the pane has exited.
    var paneDead: Bool {
        ((try? Harness.tmux(socket, ["display-message", "-p", "-t", name, "#{pane_dead}"])) ?? "").hasPrefix("1")
    }

    /// The process IDs of the tmux server and of every process running in its panes.
    func processes() -> (server: pid_t?, panes: [pid_t]) {
        let server = pid_t(((try? Harness.tmux(socket, ["display-message", "-p", "#{pid}"])) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines))
        let panePIDs = ((try? Harness.tmux(socket, ["list-panes", "-a", "-F", "#{pane_pid}"])) ?? "")
            .split(separator: "\n").compactMap { pid_t($0.trimmingCharacters(in: .whitespaces)) }
        var all: [pid_t] = []
        var pending = panePIDs
        while let pid = pending.popLast(), all.count < 4_096 {
            guard pid > 0, !all.contains(pid) else { continue }
            all.append(pid)
            pending += Self.children(of: pid)
        }
        return (server, all)
    }

    /// The children of `pid`, from every thread's children list in /proc.
    static func children(of pid: pid_t) -> [pid_t] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task -> [pid_t] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    /// Whether a process exists and is not a zombie.
    static func alive(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let close = stat.lastIndex(of: ")") else { return false }
        return !stat[close...].hasPrefix(") Z")
    }

    /// The path of this session's server socket.
    var socketPath: String {
        let base = ProcessInfo.processInfo.environment["TMUX_TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return "\(base)/tmux-\(getuid())/\(socket)"
    }

    /// Kills the server and every process started in its panes (waiting up to 5 s for them to go),
    /// then removes the socket. Safe to call twice.
    func close() {
        guard !closed else { return }
        closed = true
        let (server, panes) = processes()
        _ = try? Harness.tmux(socket, ["kill-server"])
        var left = panes + (server.map { [$0] } ?? [])
        let deadline = Date().addingTimeInterval(5)
        var killed = false
        while true {
            left = left.filter(Self.alive)
            if left.isEmpty { break }
            if Date() >= deadline { break }
            if !killed && Date() >= deadline.addingTimeInterval(-4) {
                for pid in left { kill(pid, SIGKILL) }
                killed = true
            }
            usleep(20_000)
        }
        unlink(socketPath)
        if let ownHome { try? FileManager.default.removeItem(atPath: ownHome) }
    }

    deinit { close() }
}
