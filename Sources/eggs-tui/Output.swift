#if canImport(Glibc)
import Glibc
#endif

/// Line output on the standard streams, flushed at once.
enum FileHandleOutput {
    static func stderr(_ line: String) {
        fputs(line + "\n", Glibc.stderr)
        fflush(Glibc.stderr)
    }

    static func stdout(_ line: String) {
        fputs(line + "\n", Glibc.stdout)
        fflush(Glibc.stdout)
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
