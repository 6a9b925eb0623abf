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
