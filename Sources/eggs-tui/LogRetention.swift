#if canImport(Glibc)
import Glibc
#endif

/// Keeps the message logs in eggs-tui's own directory (`$XDG_STATE_HOME/eggs`) within the bound
/// the player sets in config.toml: `logs-keep` logs at most (default ``defaultKeep``; 0 keeps
/// every log) and `logs-max-mb` megabytes at most (no bound by default). Run when a new log has
/// been opened there (a `play`, a practice match, a `bot` without `--log`); the oldest logs go
/// first (by the time they were last written, then by name).
///
/// **A log in use is never deleted.** A process writing a message log holds a shared `flock` on
/// it until it closes the log (``LogFile``); the pruner deletes a log only while it holds an
/// exclusive `flock` on it, taken without waiting, so a log that this process or another running
/// process writes is skipped, whatever its age. A killed process's lock goes with it, so its log
/// is deleted in its turn. As a second guard, for a process of an older eggs-tui that does not
/// lock, a log written in the last ``recentSeconds`` is not deleted either. Logs in use count
/// towards the bound: it can be passed while they are.
///
/// Only files named as eggs-tui names its logs there are candidates (``isLogName(_:)``):
/// `<peer ID, 16 hex digits>-<unix seconds><suffix>.jsonl`. A log written elsewhere (`--log`) is
/// never touched.
enum LogRetention {
    static let defaultKeep = 200
    static let recentSeconds = 60

    /// The bound: logs and bytes at most (nil: none).
    struct Bound: Equatable {
        var keep: Int?
        var maxBytes: Int64?
    }

    /// A log of the directory.
    struct Entry: Equatable {
        var name: String
        var bytes: Int64
        var modified: Int64
    }

    /// Whether `name` is one of eggs-tui's own log names: 16 hex digits, a dash, a digit, and
    /// `.jsonl` at the end.
    static func isLogName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count > 24, name.hasSuffix(".jsonl"), bytes[16] == UInt8(ascii: "-") else { return false }
        let hex = bytes[0..<16].allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
        return hex && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[17])
    }

    /// The logs of `directory`, oldest first.
    static func entries(in directory: String) -> [Entry] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var found: [Entry] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard isLogName(name) else { continue }
            var info = stat()
            guard lstat(directory + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            found.append(Entry(name: name, bytes: Int64(info.st_size), modified: Int64(info.st_mtim.tv_sec)))
        }
        return found.sorted { ($0.modified, $0.name) < ($1.modified, $1.name) }
    }

    /// Deletes the oldest logs of `directory` not in use until it holds at most `bound.keep` logs
    /// of at most `bound.maxBytes` bytes in all. Returns the names deleted, oldest first.
    @discardableResult
    static func prune(directory: String, bound: Bound, now: Int64 = Int64(time(nil)), recentSeconds: Int = recentSeconds) -> [String] {
        let keep = bound.keep.flatMap { $0 > 0 ? $0 : nil }
        guard keep != nil || bound.maxBytes != nil else { return [] }
        let all = entries(in: directory)
        var count = all.count
        var bytes = all.reduce(0) { $0 + $1.bytes }
        var deleted: [String] = []
        for entry in all {
            let overCount = keep.map { count > $0 } ?? false
            let overBytes = bound.maxBytes.map { bytes > $0 } ?? false
            guard overCount || overBytes else { break }
            guard now - entry.modified >= Int64(recentSeconds) else { continue }
            guard deleteUnlessInUse(directory + "/" + entry.name) else { continue }
            deleted.append(entry.name)
            count -= 1
            bytes -= entry.bytes
        }
        return deleted
    }

    /// Deletes the file at `path` while holding an exclusive lock on it, taken without waiting:
    /// false (and the file kept) when a writer holds its lock.
    private static func deleteUnlessInUse(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        return unlink(path) == 0
    }

    /// Prunes eggs-tui's own log directory by the config's bound; never fails (a log that cannot
    /// be deleted stays).
    static func pruneOwnDirectory(config: Config = Config.current) {
        let bound = Bound(keep: config.logsKeep ?? defaultKeep, maxBytes: config.logsMaxMB.map { Int64($0) << 20 })
        prune(directory: NetworkOptions.stateDirectory(), bound: bound)
    }
}
