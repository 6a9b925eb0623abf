import Consensus
import DequeModule
import Foundation
import PeerNet
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A peer's message log on disk (docs/formats.md): append-only, one sealed line per message (each
/// carries the running digest, see ``LogDigest``).
///
/// Lines are written by a writer thread of the log's own, so neither the digest nor the disk
/// is ever on the network's path: ``write(_:)`` only queues the line (the caller may hold the
/// network's lock). The queue is bounded (``queueLinesMax``); a writer that falls that far behind
/// stops the log like a failed write. Every write is checked: the first that fails (a full
/// disk, an I/O error, a short write that cannot complete) stops the log and is kept in
/// ``failure``. A killed process loses the lines still queued, at most what the writer had not
/// reached (normally none or a few); the log then ends in a cut-off or complete line as before.
final class LogFile: @unchecked Sendable {
    let path: String
    /// Lines queued and not yet written, at most (by default).
    static let queueLinesMax = 1 << 16
    /// This log's bound on queued lines.
    let queueLimit: Int

    private enum Item {
        case line(String)
        /// A delivery or view change, turned into its line by the writer (so the network's path
        /// never decodes a payload for the log).
        case event(PeerNetEvent, atMicroseconds: Int64)
        /// The end line of a message log (its count of lines is the writer's).
        case end(atMicroseconds: Int64)
    }

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var queue = Deque<Item>()
    private var failureText: String?
    private var linesWritten = 0
    /// Lines queued, and lines the writer is done with (written or dropped), since the start.
    private var linesQueued = 0
    private var linesHandled = 0
    private var closing = false
    private var finished = false

    // The writer thread's own (and `init`'s, before the thread starts).
    private var file: FileDescriptor?
    /// `nil` for a plain text file (a trace): lines are written as given. The writer's own once
    /// it runs (it changes as lines are sealed); other threads read ``sealed``.
    private var digest: LogDigest?
    /// Whether lines are sealed (a message log, which ends with an end line).
    private let sealed: Bool

    /// Logs whose writer may still hold lines: ``flushAll()`` empties them before the process exits.
    nonisolated(unsafe) private static var open: [ObjectIdentifier: LogFile] = [:]
    private static let openLock = NSLock()

    /// Opens (truncates) `path` and starts its writer. Its directory must exist: only the
    /// default directory is ever created (``NetworkOptions/stateDirectory()``).
    /// - Parameter sealed: seal every line with the running digest keyed by `passphrase`
    ///   (a message log); false for a plain text file.
    /// - Throws: ``CommandFailure`` (status 2) naming the path.
    init(path: String, sealed: Bool = false, passphrase: String? = nil, queueLimit: Int = LogFile.queueLinesMax) throws {
        precondition(queueLimit > 0)
        self.path = path
        self.queueLimit = queueLimit
        self.sealed = sealed
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
        // A message log is locked (shared) while it is written: retention never deletes a log
        // whose lock another holds (``LogRetention``). The lock goes with the file's close.
        if sealed, let file { _ = flock(file.rawValue, LOCK_SH | LOCK_NB) }
        Self.openLock.withLock { Self.open[ObjectIdentifier(self)] = self }
        let thread = Thread { [self] in runWriter() }
        thread.name = "eggs-log"
        thread.start()
    }

    /// strerror's text for `code` ("No space left on device").
    static func describe(_ code: Errno) -> String { String(cString: strerror(code.rawValue)) }

    /// Queues one line (a JSON object without its digest) for the writer; never blocks on the disk.
    func write(_ line: String) { enqueue(.line(line)) }

    /// Queues the line of a PeerNet event (docs/formats.md; events without a line are skipped by the writer).
    func write(event: PeerNetEvent, atMicroseconds: Int64) { enqueue(.event(event, atMicroseconds: atMicroseconds)) }

    private func enqueue(_ item: Item) {
        condition.withLock {
            guard failureText == nil, !closing else { return }
            guard queue.count < queueLimit else {
                // Stopped like a failed write: nothing queued is written, and no end line
                // follows, so the file reads as cut off here.
                failureText = "cannot write the log '\(path)': the writer fell \(queueLimit) lines behind"
                linesHandled += queue.count
                queue.removeAll()
                condition.broadcast()
                return
            }
            queue.append(item)
            linesQueued += 1
            condition.signal()
        }
    }

    /// Writes the end line (of a message log) after every queued line, waits for the writer to
    /// write them and close the file (checked too).
    func finish(atMicroseconds: Int64) {
        condition.withLock {
            if !closing {
                // A log that stopped (a failed write, a writer fallen behind) gets no end line:
                // it reads as cut off where it stopped.
                if sealed && failureText == nil { queue.append(.end(atMicroseconds: atMicroseconds)) }
                closing = true
                condition.broadcast()
            }
            while !finished { condition.wait() }
        }
        Self.openLock.withLock { _ = Self.open.removeValue(forKey: ObjectIdentifier(self)) }
    }

    /// Waits until the writer is done with every line queued so far (written, or dropped once
    /// the log stopped), so no write is under way when it returns.
    func flush() {
        condition.withLock {
            let target = linesQueued
            while linesHandled < target && !finished { condition.wait() }
        }
    }

    /// Flushes every log still open: called before the process exits, so no queued line is lost.
    static func flushAll() {
        let logs = openLock.withLock { Array(open.values) }
        for log in logs { log.flush() }
    }

    /// "cannot write the log '<path>': <error>" once a write failed or the writer fell behind.
    var failure: String? { condition.withLock { failureText } }

    /// Lines written so far, header included.
    var lines: Int { condition.withLock { linesWritten } }

    private func runWriter() {
        var batch: [UInt8] = []
        while true {
            let (items, ending): (Deque<Item>, Bool) = condition.withLock {
                while queue.isEmpty && !closing { condition.wait() }
                defer { queue.removeAll(keepingCapacity: true) }
                return (queue, closing)
            }
            var count = 0, skipped = 0
            batch.removeAll(keepingCapacity: true)
            for item in items {
                let text: String
                switch item {
                case .line(let line): text = digest == nil ? line : digest!.seal(line)
                case .event(let event, let at):
                    guard let line = MessageLog.line(for: event, atMicroseconds: at) else {
                        skipped += 1
                        continue
                    }
                    text = digest == nil ? line : digest!.seal(line)
                case .end(let at): text = digest!.seal(MessageLog.end(lines: linesWrittenUnlocked + count, atMicroseconds: at))
                }
                batch.append(contentsOf: text.utf8)
                batch.append(UInt8(ascii: "\n"))
                count += 1
            }
            var failure: String?
            if let file, !batch.isEmpty, let code = FileHandleOutput.writeAll(file, batch[...]) {
                failure = "cannot write the log '\(path)': \(Self.describe(code))"
            }
            if let failure { stop(failure) }
            condition.withLock {
                if failure == nil && file != nil { linesWritten += count }
                linesHandled += count + skipped
                condition.broadcast()
            }
            if ending {
                let stillQueued = condition.withLock { !queue.isEmpty }
                if stillQueued { continue }
                if let file {
                    self.file = nil
                    do {
                        try file.close()
                    } catch {
                        condition.withLock {
                            if failureText == nil { failureText = "cannot write the log '\(path)': \(Self.describe(Errno(thrown: error)))" }
                        }
                    }
                }
                condition.withLock {
                    finished = true
                    condition.broadcast()
                }
                return
            }
        }
    }

    /// `linesWritten` read by the writer thread, the only one that changes it.
    private var linesWrittenUnlocked: Int { linesWritten }

    /// The first failed write stops the log: nothing more is written.
    private func stop(_ message: String) {
        try? file?.close()
        file = nil
        condition.withLock {
            if failureText == nil { failureText = message }
            linesHandled += queue.count
            queue.removeAll()
            condition.broadcast()
        }
    }
}
