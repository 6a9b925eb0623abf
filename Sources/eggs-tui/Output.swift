#if canImport(Glibc)
import Glibc
#endif
import SystemPackage

/// Line output on the standard streams, flushed at once.
enum FileHandleOutput {
    static func stderr(_ line: String) { writeAll(STDERR_FILENO, line + "\n") }

    static func stdout(_ line: String) { writeAll(STDOUT_FILENO, line + "\n") }

    /// Writes every byte of `text` to `fd`, retrying short writes and EINTR (a write of nothing
    /// is EIO, never an endless retry; swift-system's `writeAll` would retry it).
    /// - Returns: `nil` when every byte was written, else the `errno` of the failed write
    ///   (ENOSPC, EIO, EPIPE, ...).
    @discardableResult
    static func writeAll(_ fd: Int32, _ text: String) -> Int32? {
        writeAll(FileDescriptor(rawValue: fd), Array(text.utf8)[...])?.rawValue
    }

    /// Writes every byte of `bytes` to `file` (the one loop every writer here uses).
    /// - Returns: `nil` when every byte was written, else the error of the failed write.
    static func writeAll(_ file: FileDescriptor, _ bytes: ArraySlice<UInt8>) -> Errno? {
        var rest = bytes
        while !rest.isEmpty {
            let written: Int
            do {
                // swift-system retries EINTR.
                written = try rest.withUnsafeBytes { try file.write($0) }
            } catch {
                return Errno(thrown: error)
            }
            if written == 0 { return .ioError }
            rest = rest.dropFirst(written)
        }
        return nil
    }

    /// Writes `text` to `path` whole or not at all: to `path.tmp` (checked, synced, closed),
    /// then renamed over `path`, so a reader never sees half a file and a full disk leaves the
    /// old file in place.
    /// - Throws: ``CommandFailure`` (status 1) naming the file and the error.
    static func writeFileAtomically(_ path: String, _ text: String, what: String) throws(CommandFailure) {
        let temporary = path + ".tmp"
        func failed(_ code: Int32) -> CommandFailure {
            unlink(temporary)
            return .detected("cannot write the \(what) '\(path)': \(String(cString: strerror(code)))")
        }
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(temporary, .writeOnly, options: [.create, .truncate, .closeOnExec],
                                           permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch {
            throw failed(Errno(thrown: error).rawValue)
        }
        if let code = writeAll(file.rawValue, text) {
            try? file.close()
            throw failed(code)
        }
        if fsync(file.rawValue) != 0 && errno != EINVAL {
            let code = errno
            try? file.close()
            throw failed(code)
        }
        do {
            try file.close()
        } catch {
            throw failed(Errno(thrown: error).rawValue)
        }
        guard rename(temporary, path) == 0 else { throw failed(errno) }
    }

    /// Reads `fd` to its end, failing past `limit` bytes.
    static func readAll(_ fd: Int32, limit: Int) -> [UInt8]? {
        let file = FileDescriptor(rawValue: fd)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            // swift-system retries EINTR.
            guard let count = try? buffer.withUnsafeMutableBytes({ try file.read(into: $0) }) else { return nil }
            if count == 0 { return bytes }
            bytes += buffer[0..<count]
            if bytes.count > limit { return nil }
        }
    }
}

/// A whole file read into memory through swift-system, with a bound on its size.
enum WholeFile {
    enum Failure: Error {
        /// It could not be opened (ENOENT, EACCES, ...).
        case cannotOpen(Errno)
        /// A read failed, or it is larger than the limit.
        case unreadableOrTooLarge

        /// strerror's text for `cannotOpen` ("No such file or directory").
        var reason: String {
            switch self {
            case .cannotOpen(let code): LogFile.describe(code)
            case .unreadableOrTooLarge: "cannot read it, or it is too large"
            }
        }
    }

    /// The bytes of `path`, at most `limit` of them.
    static func read(_ path: String, limit: Int) -> Result<[UInt8], Failure> {
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(path, .readOnly, options: [.closeOnExec])
        } catch {
            return .failure(.cannotOpen(Errno(thrown: error)))
        }
        defer { try? file.close() }
        guard let bytes = FileHandleOutput.readAll(file.rawValue, limit: limit) else { return .failure(.unreadableOrTooLarge) }
        return .success(bytes)
    }
}

/// A failure to report as one line on stderr with an exit status of docs/formats.md.
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

extension Errno {
    /// The error a swift-system call threw, as its `Errno` (any other error reads as EIO).
    init(thrown error: any Error) { self = error as? Errno ?? .ioError }
}
