import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A swift-log handler that appends one line per record to a file. Diagnostics go
/// here, never to the screen (the terminal belongs to the game).
struct FileLogHandler: LogHandler {
    private final class Sink: Sendable {
        private let file: Mutex<UnsafeMutablePointer<FILE>?>

        init(path: String) {
            file = Mutex(fopen(path, "a"))
        }

        /// Appends `line`; the first write that fails (a full disk) closes the file for good:
        /// diagnostics never reach the screen, and a half-written stream is worth nothing.
        func write(_ line: String) {
            file.withLock { handle in
                guard let current = handle else { return }
                if fputs(line, current) < 0 || fflush(current) != 0 {
                    fclose(current)
                    handle = nil
                }
            }
        }
    }

    private let sink: Sink
    private let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    private init(label: String, sink: Sink) {
        self.label = label
        self.sink = sink
    }

    /// Routes every logger of the process to `path` (appending). Call once at start.
    static func bootstrap(path: String, level: Logger.Level = .info) {
        let sink = Sink(path: path)
        LoggingSystem.bootstrap { label in
            var handler = FileLogHandler(label: label, sink: sink)
            handler.logLevel = level
            return handler
        }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let meta = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        sink.write("\(Self.timestamp()) \(event.level) \(label): \(event.message)\(meta)\n")
    }

    private static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return "\(ts.tv_sec).\(String(ts.tv_nsec / 1_000_000 + 1000).dropFirst())"
    }
}
