import Foundation
import Testing

/// Which seeds a simulation swarm test runs, read from the environment, and the command that
/// reruns one of them.
///
/// - `EGGS_SEED=N` sets the base seed (default 1, so a plain `swift test` runs the same seeds
///   every time); `EGGS_SEED=random` draws one, which the test prints.
/// - `EGGS_SIM_SEEDS=N` runs N seeds per chunk instead of the test's default count.
/// - `EGGS_SIM_SEED=N` runs exactly seed N (in the first chunk; the other chunks run none):
///   the failure message of every swarm names this command.
///
/// Chunk `c` (from 0) of a test with `count` seeds a chunk runs `base + c·count` up to
/// `base + c·count + count − 1`.
public struct SwarmSeeds: Sendable, CustomStringConvertible {
    /// The first seed of chunk 0.
    public let base: UInt64
    /// Set when `EGGS_SIM_SEED` asks for exactly one seed.
    public let only: UInt64?
    /// `EGGS_SIM_SEEDS`, when set.
    public let perChunk: Int?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        if environment["EGGS_SEED"] == "random" {
            base = UInt64.random(in: 1...UInt64(UInt32.max))
        } else {
            base = environment["EGGS_SEED"].flatMap(UInt64.init) ?? 1
        }
        only = environment["EGGS_SIM_SEED"].flatMap(UInt64.init)
        perChunk = environment["EGGS_SIM_SEEDS"].flatMap(Int.init).map { max($0, 0) }
    }

    /// Read once per test process, so every chunk of every swarm shares the (printed) base.
    public static let current: SwarmSeeds = {
        let seeds = SwarmSeeds()
        print("simulation swarms: EGGS_SEED=\(seeds.base)\(seeds.only.map { " EGGS_SIM_SEED=\($0)" } ?? "")")
        return seeds
    }()

    /// The seeds of chunk `chunk` when a chunk runs `defaultCount` seeds unless `EGGS_SIM_SEEDS` says otherwise.
    public func seeds(chunk: Int, defaultCount: Int) -> [UInt64] {
        precondition(chunk >= 0 && defaultCount >= 0, "chunk and count must not be negative")
        if let only { return chunk == 0 ? [only] : [] }
        let count = UInt64(perChunk ?? defaultCount)
        let first = base &+ count &* UInt64(chunk)
        return (0..<count).map { first &+ $0 }
    }

    /// Whether `EGGS_SIM_SEED` narrowed the run to one seed (tests skip their checks over many seeds then).
    public var isSingleSeed: Bool { only != nil }

    /// The shell command that reruns `seed` of the test(s) matching `filter`.
    public static func rerunCommand(seed: UInt64, filter: String) -> String {
        "EGGS_SIM_SEED=\(seed) swift test --skip-build --filter '\(filter)'"
    }

    public var description: String { "EGGS_SEED=\(base)" }
}

/// Runs `run` on the seeds of chunk `chunk` until one fails, and expects none to: a failure
/// names the command that reruns its seed (tests matching `filter`) and the call that
/// reproduces it in code (`reproduce`).
public func expectSeedsPass(
    chunk: Int, defaultCount: Int, filter: String, reproduce: (UInt64) -> String, _ run: (UInt64) -> [String],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    for seed in SwarmSeeds.current.seeds(chunk: chunk, defaultCount: defaultCount) {
        let failures = run(seed)
        #expect(failures.isEmpty, """
            rerun with \(SwarmSeeds.rerunCommand(seed: seed, filter: filter)) (or call \(reproduce(seed))):
            \(failures.prefix(5).joined(separator: "\n"))
            """, sourceLocation: sourceLocation)
        if !failures.isEmpty { break }
    }
}
