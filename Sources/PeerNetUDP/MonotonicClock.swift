import PeerNet
#if canImport(Glibc)
import Glibc
#endif

/// The monotonic clock the real adapters pass to the sans-I/O cores.
public enum MonotonicClock {
    /// Now, in nanoseconds since an arbitrary fixed point (CLOCK_MONOTONIC).
    public static func now() -> NetTime {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return NetTime(nanoseconds: UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec))
    }

    /// Wall-clock microseconds since the Unix epoch (for log lines).
    public static func wallMicroseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }
}
