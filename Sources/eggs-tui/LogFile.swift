import Consensus
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A peer's message log on disk (SPEC §5): append-only, one sealed line per write (each carries
/// the running digest, see ``LogDigest``), written at once so a crash loses at most the line
/// being written. Every write is checked: the first that fails (a full disk, an I/O error, a
/// short write that cannot complete) stops the log and is kept in ``failure``.
final class LogFile: @unchecked Sendable {
    let path: String
    private var file: FileDescriptor?
    /// `nil` for a plain text file (a trace): lines are written as given.
    private var digest: LogDigest?
    /// Lines written so far, header included.
    private(set) var lines = 0
    /// "cannot write the log '<path>': <error>" once a write failed.
    private(set) var failure: String?

    /// Opens (truncates) `path`. Its directory must exist: only the default directory is ever
    /// created (``NetworkOptions/stateDirectory()``).
    /// - Parameter sealed: seal every line with the running digest keyed by `passphrase`
    ///   (a message log); false for a plain text file.
    /// - Throws: ``CommandFailure`` (status 2) naming the path.
    init(path: String, sealed: Bool = false, passphrase: String? = nil) throws {
        self.path = path
        digest = sealed ? LogDigest(passphrase: passphrase) : nil
        do {
            file = try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate, .closeOnExec],
                                           permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch let code as Errno {
            if code == .noSuchFileOrDirectory, let slash = path.lastIndex(of: "/") {
                let directory = String(path[..<slash])
                throw CommandFailure.badInput("cannot write the log '\(path)': the directory '\(directory.isEmpty ? "/" : directory)' does not exist")
            }
            throw CommandFailure.badInput("cannot write the log '\(path)': \(Self.describe(code))")
        }
    }

    /// strerror's text for `code` ("No space left on device").
    static func describe(_ code: Errno) -> String { String(cString: strerror(code.rawValue)) }

    /// Seals and appends one line (a JSON object without its digest).
    func write(_ line: String) {
        guard let file, failure == nil else { return }
        let text = digest == nil ? line : digest!.seal(line)
        if let code = FileHandleOutput.writeAll(file.rawValue, text + "\n") {
            stop(code)
            return
        }
        lines += 1
    }

    /// Writes the end line (of a message log) and closes the file (checked too).
    func finish(atMicroseconds: Int64) {
        if digest != nil { write(MessageLog.end(lines: lines, atMicroseconds: atMicroseconds)) }
        guard let file else { return }
        self.file = nil
        do {
            try file.close()
        } catch {
            if failure == nil { failure = "cannot write the log '\(path)': \(Self.describe(error as? Errno ?? .ioError))" }
        }
    }

    private func stop(_ code: Int32) {
        failure = "cannot write the log '\(path)': \(String(cString: strerror(code)))"
        try? file?.close()
        file = nil
    }
}
