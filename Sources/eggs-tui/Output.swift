#if canImport(Glibc)
import Glibc
#endif

/// Line output on the standard streams, flushed at once.
enum FileHandleOutput {
    static func stderr(_ line: String) { writeAll(STDERR_FILENO, line + "\n") }

    static func stdout(_ line: String) { writeAll(STDOUT_FILENO, line + "\n") }

    /// Writes every byte of `text` to `fd`, retrying short writes and EINTR.
    static func writeAll(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Reads `fd` to its end, failing past `limit` bytes.
    static func readAll(_ fd: Int32, limit: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return bytes }
            bytes += buffer[0..<count]
            if bytes.count > limit { return nil }
        }
    }
}

/// A failure to report as one line on stderr with a SPEC §3 exit status.
struct CommandFailure: Error, CustomStringConvertible {
    /// 1: a failure the run detected; 2: bad usage or bad input.
    let status: Int32
    let description: String

    static func badInput(_ message: String) -> CommandFailure { CommandFailure(status: 2, description: message) }
    static func detected(_ message: String) -> CommandFailure { CommandFailure(status: 1, description: message) }
}

/// Signals that ask a headless run to stop; the loops poll ``stopRequested``.
enum StopSignals {
    nonisolated(unsafe) static var requested: Int32 = 0

    static var stopRequested: Bool { requested != 0 }

    /// Catches SIGINT and SIGTERM, first unblocking them: a parent (a test runner, a
    /// process supervisor) may hand down a signal mask or ignored dispositions that would
    /// otherwise make the run deaf to a stop.
    static func install() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigprocmask(SIG_UNBLOCK, &set, nil)
        for sig in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in StopSignals.requested = 1 }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(sig, &action, nil)
        }
    }
}
