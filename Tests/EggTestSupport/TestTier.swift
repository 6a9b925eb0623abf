import Foundation
import Testing

// What the test targets share: the slow tier and the port allocator.

extension Tag {
    /// Suites that run real-time processes, tmux, namespaces, soaks or hundreds of seeds.
    @Tag public static var slow: Self
}

extension Trait where Self == ConditionTrait {
    /// Goes with `.tags(.slow)`: off when `EGGS_TESTS=fast` (`scripts/test-fast.sh`); CI runs everything.
    public static var slowTier: Self {
        .enabled(if: ProcessInfo.processInfo.environment["EGGS_TESTS"] != "fast", "slow tier, skipped with EGGS_TESTS=fast")
    }
}
