import Consensus
import Foundation
import Synchronization
import Testing
@testable import eggs_tui
#if canImport(Glibc)
import Glibc
#endif

/// The log's writer thread: the caller (the network's path) never waits for the disk, the
/// queue is bounded and a writer that falls behind stops the log loudly; what was queued is
/// written, in order, sealed, before `finish` returns.
@Suite("log writer")
struct LogWriterTests {
    @Test("queued lines are written in order, sealed, with the end line counting them, by the time finish returns")
    func writesInOrder() throws {
        let directory = try Harness.temporaryDirectory("writer")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/log.jsonl"
        let log = try LogFile(path: path, sealed: true)
        let lines = (0..<5_000).map { #"{"n":\#($0)}"# }
        for line in lines { log.write(line) }
        log.finish(atMicroseconds: 42)
        #expect(log.failure == nil)
        #expect(log.lines == 5_001)
        let written = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(written.count == 5_001)
        #expect(written.last?.contains(#""end":{"lines":5000}"#) == true, "\(written.last ?? "")")
        var digest = LogDigest(passphrase: nil)
        for (index, line) in written.enumerated() {
            let checks = digest.check(Array(line.utf8)[...])
            #expect(checks, "line \(index + 1) breaks the digest")
            if index < lines.count { #expect(line.hasPrefix(String(lines[index].dropLast()) + ",")) }
        }
    }

    @Test("a writer stuck on its file never blocks write(); past its bound the log stops with one line saying so")
    func boundedAndLoud() throws {
        let directory = try Harness.temporaryDirectory("writer")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/stuck"
        try #require(mkfifo(fifo, 0o600) == 0)
        // A reader that never reads: the writer thread blocks once the pipe (64 KiB) is full.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        let log = try LogFile(path: fifo, sealed: true, queueLimit: 32)
        let line = #"{"x":""# + String(repeating: "x", count: 1_024) + #""}"#
        let start = ContinuousClock.now
        for _ in 0..<1_000 { log.write(line) }
        let took = ContinuousClock.now - start
        #expect(took < .seconds(2), "write() waited for the disk: \(took)")
        let failure = try #require(log.failure, "1,000 KiB into a stuck 64 KiB pipe with a 32-line queue did not stop the log")
        #expect(failure == "cannot write the log '\(fifo)': the writer fell 32 lines behind")
        // Unstick it: drain the pipe until the writer is done, then stop draining before the
        // reader is closed.
        let stopDraining = Atomic<Bool>(false)
        let drained = DispatchSemaphore(value: 0)
        let received = Mutex<[UInt8]>([])
        let draining = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while !stopDraining.load(ordering: .acquiring) {
                let count = read(reader, &buffer, buffer.count)
                if count > 0 { received.withLock { $0 += buffer[0..<count] } } else { usleep(2_000) }
            }
            drained.signal()
        }
        draining.start()
        log.finish(atMicroseconds: 1)
        stopDraining.store(true, ordering: .releasing)
        drained.wait()
        // A log that stopped ends without its end line: it reads as cut off, never as whole.
        let text = received.withLock { String(decoding: $0, as: UTF8.self) }
        #expect(!text.contains(#""end":"#), "a stopped log was given an end line")
        #expect(text.split(separator: "\n").count < 1_000, "lines queued past the bound were written")
        #expect(log.failure == failure, "the first failure is kept")
    }
}
