/// The optional terminal bell (`--bell`, config `bell = true`; off by default): it rings when the
/// local player's chain reaches 3 or more, when garbage lands on them, and when they top out; at
/// most once per ``spacingNanoseconds``. The policy is pure (``observe(_:at:)``); the screens ring
/// the terminal when it says so.
struct BellWatch {
    /// What the local player's board shows now.
    struct Board: Equatable {
        /// The game it is in.
        var game: UInt32
        /// Resolutions ended so far (`PlayerGrid.chainsResolved`), and the steps of the chain
        /// resolving now (`chainSteps.count`).
        var resolutions: Int
        var steps: Int
        /// Garbage landed on it so far this game.
        var garbageLanded: Int
        var toppedOut: Bool
    }

    static let chainMin = 3
    static let spacingNanoseconds: UInt64 = 250_000_000
    let enabled: Bool
    private var last: Board?
    private var lastRing: UInt64?
    /// Rings so far.
    private(set) var rings = 0

    init(enabled: Bool) {
        self.enabled = enabled
    }

    /// Whether the change from the board seen before to `board` rings the bell at `now`.
    mutating func observe(_ board: Board, at now: UInt64) -> Bool {
        defer { last = board }
        guard enabled, let last, last.game == board.game else { return false }
        // The chain resolving now reached 3 steps.
        let chained = board.steps >= Self.chainMin && (board.resolutions != last.resolutions || last.steps < Self.chainMin)
        let garbage = board.garbageLanded > last.garbageLanded
        let out = board.toppedOut && !last.toppedOut
        guard chained || garbage || out else { return false }
        return ring(at: now)
    }

    /// An event the screen saw itself (the local player topped out as its game ended): whether
    /// it rings now.
    mutating func ring(at now: UInt64) -> Bool {
        guard enabled else { return false }
        if let lastRing, now &- lastRing < Self.spacingNanoseconds { return false }
        lastRing = now
        rings += 1
        return true
    }
}
