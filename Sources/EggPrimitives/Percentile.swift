/// The nearest-rank percentile: the `q` quantile (0 ≤ q ≤ 1) of samples sorted ascending is the
/// smallest sample with at least `q·n` samples at or below it (index `⌈q·n⌉ − 1`, clamped to the
/// samples; q = 0 gives the minimum, q = 1 the maximum). `nil` when there are no samples.
///
/// The one rank rule of the project's measurements (tests, benchmarks, reports).
public func nearestRank<Sample>(_ q: Double, ofSorted sorted: [Sample]) -> Sample? {
    precondition((0...1).contains(q), "a quantile is between 0 and 1")
    guard !sorted.isEmpty else { return nil }
    let index = min(sorted.count - 1, max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))
    return sorted[index]
}
