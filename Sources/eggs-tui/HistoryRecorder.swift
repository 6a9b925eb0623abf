import DequeModule
import EggHistory
import Foundation
import Synchronization

/// Records matches into the history database off the game loop (docs/history.md). A thread of
/// its own takes jobs (a log and a way to flush its writer), opens the database on first use and
/// imports what the log holds so far: the same verified path as `history import`, so a later
/// import of the whole log changes nothing. ``record(logPath:passphrase:flush:)`` only queues;
/// a database that is locked, full, read-only or corrupt is one warning line
/// (``takeWarnings()`` and the `warn` callback), never a crash and never a stop of play.
final class HistoryRecorder: @unchecked Sendable {
    struct Job {
        var logPath: String
        var passphrase: String?
        /// Waits until the log's writer wrote every line queued so far (on this thread).
        var flush: () -> Void
    }

    let path: String
    private let warn: (String) -> Void
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var jobs = Deque<Job>()
    private var busy = false
    private var warnings: [String] = []
    private var lastWarning: String?
    private(set) var matchesRecorded = 0
    /// Ratings and records by name, as of the last load (after opening, after each record).
    private var standings: [String: Standing] = [:]
    // The recorder thread's own.
    private var database: HistoryDatabase?

    /// Records being written now, by every recorder of the process (the game loop's figures
    /// tell frames drawn during a write from the others: `EGGS_LOOP_STATS`).
    static let writesInProgress = Atomic<Int>(0)

    /// Jobs waiting at most: more are dropped with a warning (a stuck database).
    static let jobsMax = 64

    /// - Parameter warn: called on the recorder's thread with each warning line (once per
    ///   distinct warning in a row).
    init(path: String = HistoryDatabase.defaultPath(), warn: @escaping (String) -> Void) {
        self.path = path
        self.warn = warn
        // Busy with the first load of the ratings until the thread is done with it.
        busy = true
        let thread = Thread { [self] in run() }
        thread.name = "eggs-history"
        thread.start()
    }

    /// Queues the import of `logPath` as it stands once `flush` returns. Never blocks on the disk.
    func record(logPath: String, passphrase: String?, flush: @escaping () -> Void) {
        condition.withLock {
            guard jobs.count < Self.jobsMax else { return }
            jobs.append(Job(logPath: logPath, passphrase: passphrase, flush: flush))
            condition.signal()
        }
    }

    /// Waits until every queued job is done, at most `timeoutSeconds` (at exit).
    func finish(timeoutSeconds: Double = 15) {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        condition.withLock {
            while !jobs.isEmpty || busy {
                if !condition.wait(until: deadline) { break }
            }
        }
    }

    /// The lobby's line for each name with a record: "bob 1620 ±80, 7-5 with you" (names
    /// without one are left out). Reads the last loaded ratings; never the database.
    func headToHeadLines(names: [String]) -> [String] {
        let known = condition.withLock { standings }
        return names.compactMap { name in
            let text = HistoryReport.headToHead(name: name, standings: known)
            return text == name ? nil : text
        }
    }

    /// Warnings since the last call.
    func takeWarnings() -> [String] {
        condition.withLock {
            defer { warnings.removeAll() }
            return warnings
        }
    }

    private func note(_ warning: String) {
        let fresh = condition.withLock { () -> Bool in
            guard warning != lastWarning else { return false }
            lastWarning = warning
            if warnings.count < 16 { warnings.append(warning) }
            return true
        }
        if fresh { warn(warning) }
    }

    /// Loads the ratings from the database (opening it first when needed).
    private func loadStandings() throws {
        if database == nil { database = try HistoryDatabase(path: path) }
        let loaded = Ratings.standings(try database!.matches())
        condition.withLock { standings = loaded }
    }

    private func run() {
        // Opened at once: a bad database is one warning line before the first match.
        do {
            try loadStandings()
        } catch {
            failed(error)
        }
        idle()
        while true {
            let job: Job = condition.withLock {
                while jobs.isEmpty { condition.wait() }
                busy = true
                return jobs.removeFirst()
            }
            Self.writesInProgress.add(1, ordering: .relaxed)
            defer { Self.writesInProgress.subtract(1, ordering: .relaxed) }
            job.flush()
            do {
                if database == nil { database = try HistoryDatabase(path: path) }
                let result = PracticeLog.isPracticeLog(path: job.logPath)
                    ? try PracticeLog.record(path: job.logPath, in: database!)
                    : try database!.importLog(path: job.logPath, passphrase: job.passphrase)
                condition.withLock {
                    matchesRecorded += result.added + result.updated
                    lastWarning = nil
                }
                if result.added + result.updated > 0 { try loadStandings() }
            } catch {
                failed(error)
            }
            idle()
        }
    }

    /// One warning line for `error`; the database is opened afresh next time unless only the
    /// log was refused.
    private func failed(_ error: Error) {
        switch error {
        case let error as LogRefused:
            note("history not recorded: \(error.description)")
        case let error as HistoryError:
            database = nil
            note("history not recorded: \(error.description)")
        default:
            database = nil
            note("history not recorded: \(error)")
        }
    }

    /// The writer waits for work again: whoever waits for it to finish may go on.
    private func idle() {
        condition.withLock {
            busy = false
            condition.broadcast()
        }
    }
}
