import Synchronization

/// The one allocator of UDP ports for every test target (they run in one process): consecutive
/// blocks from a random start in 20,000–59,999, so no two tests of a run share a port and runs
/// in parallel on one machine rarely meet.
public enum TestPorts {
    static let range = 20_000..<60_000
    private static let nextOffset = Mutex(Int.random(in: 0..<20_000))

    /// The first of `count` consecutive ports that no other test of this run was given.
    public static func next(count: Int = 1) -> Int {
        precondition(count >= 1 && count <= 16, "a test takes 1 to 16 ports")
        let offset = nextOffset.withLock { offset in
            if offset + count > range.count { offset = 0 }
            defer { offset += count }
            return offset
        }
        return range.lowerBound + offset
    }
}
