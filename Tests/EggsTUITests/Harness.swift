import Foundation
import Testing

/// Runs the built `eggs-tui` binary and tmux sessions for end-to-end tests.
enum Harness {
    /// The `eggs-tui` executable beside this test bundle (`.build/<config>/eggs-tui`).
    static var binary: String {
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
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
            process.terminate()
            process.waitUntilExit()
            Issue.record("eggs-tui \(arguments) did not finish within \(timeoutSeconds) s")
        }
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: outData.wait(), stderr: errData.wait())
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
final class TmuxSession {
    let socket: String
    let name: String

    init(command: String, width: Int = 120, height: Int = 40, environment: [String: String] = [:]) throws {
        socket = "eggs-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        name = "main"
        var env: [String] = []
        for (key, value) in environment { env += ["-e", "\(key)=\(value)"] }
        try Harness.tmux(socket, ["new-session", "-d", "-s", name, "-x", "\(width)", "-y", "\(height)"] + env + [command])
        try Harness.tmux(socket, ["set-option", "-t", name, "remain-on-exit", "on"])
    }

    /// The visible screen as text.
    func screen() -> String {
        (try? Harness.tmux(socket, ["capture-pane", "-p", "-t", name])) ?? ""
    }

    func send(_ keys: String...) {
        _ = try? Harness.tmux(socket, ["send-keys", "-t", name] + keys)
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

    func close() {
        _ = try? Harness.tmux(socket, ["kill-server"])
    }

    deinit { close() }
}
