// swift-tools-version: 6.1
import PackageDescription

// The engine, the network core, the consensus layer and the simulator are built optimized in
// debug builds too: the tests' simulations (swarms of a thousand peers, hundreds of seeds, bot
// games) spend nearly all their time there. Preconditions stay on (-O keeps them), and
// `@testable import` still works (SwiftPM keeps -enable-testing). docs/testing.md says more.
let optimizedInDebug: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

// The network core and its UDP adapter leave out the run-time exclusivity checks in release
// builds only: on a received datagram they were about a seventh of the core's time (each access
// to the core's state goes through a thread-local access set). Debug builds, which the tests run,
// keep them, so an overlapping access still fails a test. docs/network.md, "Latency on one machine".
let exclusivityUncheckedInRelease: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "eggs",
    // Linux only (Glibc, /proc, SOCK_CLOEXEC, ncursesw, nftables and namespaces in the tests): no
    // `platforms` entry claims a macOS build that nobody builds or tests.
    products: [
        .executable(name: "eggs-tui", targets: ["eggs-tui"]),
        .library(name: "EggGame", targets: ["EggGame"]),
        .library(name: "EggBot", targets: ["EggBot"]),
        .library(name: "PeerNet", targets: ["PeerNet"]),
        .library(name: "Consensus", targets: ["Consensus"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // One of each primitive (SplitMix64, FNV-1a 64, byte writers and readers, hex16): no dependencies.
        .target(name: "EggPrimitives", swiftSettings: optimizedInDebug),
        // The rules engine: pure, deterministic, no dependencies but the primitives.
        .target(name: "EggGame", dependencies: ["EggPrimitives"], swiftSettings: optimizedInDebug),
        // The bots, their bench and the local-match runner: they play by the rules, they are not the rules.
        .target(name: "EggBot", dependencies: ["EggGame", "EggPrimitives"], swiftSettings: optimizedInDebug),
        // CRC-32C by the processor's instruction where it has one: the checksum of PeerNet datagrams.
        .target(name: "CEggsChecksum"),
        // Reliable ordered multicast with membership: a sans-I/O core (no sockets, no clock).
        .target(
            name: "PeerNet",
            dependencies: [
                "EggPrimitives", "CEggsChecksum",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: optimizedInDebug + exclusivityUncheckedInRelease
        ),
        // ppoll, recvmmsg, pipe2 and timerfd for a peer's reading thread (Swift's Glibc module leaves them out).
        .target(name: "CEggsIO"),
        // The UDP multicast adapter around the PeerNet core: a reading thread per peer, plain sendto.
        .target(
            name: "PeerNetUDP",
            dependencies: [
                "PeerNet", "CEggsIO",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: exclusivityUncheckedInRelease
        ),
        // Voting rounds and the replicated match.
        .target(
            name: "Consensus",
            dependencies: [
                "PeerNet", "EggGame", "EggPrimitives",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: optimizedInDebug
        ),
        // The deterministic simulated network (never NIO).
        .target(
            name: "EggSim",
            dependencies: ["PeerNet", "Consensus", "EggGame", "EggPrimitives", .product(name: "HeapModule", package: "swift-collections")],
            swiftSettings: optimizedInDebug
        ),
        // The local match history: SQLite through GRDB (matches, games, per-player stats, Glicko-2).
        .target(
            name: "EggHistory",
            dependencies: ["Consensus", "PeerNet", "EggGame", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .systemLibrary(
            name: "CNcurses",
            pkgConfig: "ncursesw",
            providers: [.apt(["libncurses-dev"])]
        ),
        .executableTarget(
            name: "eggs-tui",
            dependencies: [
                "EggGame", "EggBot", "EggPrimitives", "PeerNet", "PeerNetUDP", "Consensus", "EggHistory", "CNcurses",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // What the test targets share: the slow-tier trait and the one port allocator.
        .target(name: "EggTestSupport", path: "Tests/EggTestSupport"),
        .testTarget(name: "EggPrimitivesTests", dependencies: ["EggPrimitives"]),
        .testTarget(name: "EggGameTests", dependencies: ["EggGame", "EggBot", "EggTestSupport"]),
        .testTarget(name: "PeerNetTests", dependencies: ["PeerNet", "PeerNetUDP", "EggSim", "EggPrimitives", "EggTestSupport"]),
        .testTarget(name: "ConsensusTests", dependencies: ["Consensus", "EggSim", "EggGame", "EggBot", "EggPrimitives", "PeerNet", "EggTestSupport"]),
        .testTarget(
            name: "EggsTUITests",
            dependencies: [
                "eggs-tui", "EggTestSupport", "Consensus", "PeerNet", "PeerNetUDP",
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "EggHistoryTests", dependencies: ["EggHistory", "Consensus", "PeerNet", "EggTestSupport"]),
        // The layering self-check: reads Package.swift and Sources/ (each target imports only what its layer allows).
        .testTarget(name: "LayeringTests"),
        .executableTarget(
            name: "EggBenchmarks",
            dependencies: [
                "EggGame", "EggBot", "EggPrimitives", "PeerNet", "Consensus", "EggSim",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/EggBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // PeerNet measurements across processes on 127.0.0.1 (latency, throughput) and in EggSim.
        .executableTarget(
            name: "eggs-netbench",
            dependencies: [
                "EggPrimitives", "PeerNet", "PeerNetUDP", "EggSim",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/NetBench"
        ),
    ]
)
