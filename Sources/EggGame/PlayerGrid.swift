/// One input to a ``PlayerGrid``. An owner's ordered stream of these is all a mirror needs.
public enum PlayerInput: Sendable, Hashable {
    /// The next pair of the shared sequence (the one at index ``PlayerGrid/pairsSpawned``).
    case spawn(EggPair)
    /// A move of the live pair.
    case move(Move)
    /// Incoming garbage, landed between a lock and the next spawn.
    case landGarbage(Int)
}

/// Where a ``PlayerGrid`` stands.
public enum PlayerState: UInt8, Sendable, Hashable {
    /// No live pair: garbage may land, then the next pair spawns.
    case awaitingSpawn = 0
    /// A pair is falling.
    case live = 1
    /// A pair could not spawn: the player is out. Every input is rejected.
    case toppedOut = 2
}

/// Why an input was refused. A refused input changes nothing.
public enum InputRejection: Sendable, Hashable {
    case toppedOut
    case pairAlreadyLive
    case noLivePair
    case negativeGarbage
}

/// What applying one input did.
public enum InputOutcome: Sendable, Hashable {
    /// The pair spawned; `garbageSent` is the pending chain garbage of the previous lock.
    case spawned(garbageSent: Int)
    /// The spawn cells were occupied: the player is out. Pending garbage is still sent.
    case toppedOut(garbageSent: Int)
    /// The live pair moved or turned.
    case moved
    /// The move was legal but blocked; nothing changed.
    case blocked
    /// The pair locked; the chain was resolved. Its garbage is sent at the next spawn.
    case locked(ChainResult)
    /// This many garbage eggs landed (the rest were discarded).
    case garbageLanded(Int)
    /// The input is not valid in the current state; nothing changed.
    case rejected(InputRejection)

    /// Whether the input was accepted (anything but ``rejected(_:)``).
    public var isAccepted: Bool {
        if case .rejected = self { return false }
        return true
    }
}

/// One player's grid as a replicated state machine: driven by explicit inputs only, no clock.
///
/// The owner and every mirror apply the same ordered inputs and reach the same state, which
/// ``stableHash`` summarises. Timing (gravity, soft drop) lives in ``GravityClock`` on the owner,
/// who turns ticks into ``Move/down`` inputs.
public struct PlayerGrid: Sendable, Hashable {
    /// The settled eggs (the live pair is not part of it).
    public private(set) var board: Board
    /// The falling pair, if any.
    public private(set) var livePair: LivePair?
    /// How many pairs have spawned (or failed to spawn): the index of the next pair to spawn.
    public private(set) var pairsSpawned: Int = 0
    /// Garbage of the last lock, sent when the next pair spawns.
    public private(set) var garbagePending: Int = 0
    /// The chain of the last lock.
    public private(set) var lastChain: ChainResult?
    private var isToppedOut = false

    /// A grid starting from `board` (settled first), waiting for its first spawn.
    public init(board: Board = Board()) {
        var settled = board
        settled.settle()
        self.board = settled
        checkInvariants()
    }

    /// Where the grid stands.
    public var state: PlayerState {
        if isToppedOut { return .toppedOut }
        return livePair == nil ? .awaitingSpawn : .live
    }

    /// Applies one input; invalid inputs are rejected, never trapped on.
    @discardableResult
    public mutating func apply(_ input: PlayerInput) -> InputOutcome {
        checkInvariants()
        defer { checkInvariants() }
        if isToppedOut { return .rejected(.toppedOut) }
        switch input {
        case .spawn(let pair): return spawn(pair)
        case .move(let move): return apply(move)
        case .landGarbage(let count): return landGarbage(count)
        }
    }

    private mutating func spawn(_ pair: EggPair) -> InputOutcome {
        guard livePair == nil else { return .rejected(.pairAlreadyLive) }
        let sent = garbagePending
        garbagePending = 0
        pairsSpawned += 1
        if board.isSpawnBlocked {
            isToppedOut = true
            return .toppedOut(garbageSent: sent)
        }
        livePair = LivePair(spawning: pair)
        return .spawned(garbageSent: sent)
    }

    private mutating func apply(_ move: Move) -> InputOutcome {
        guard let live = livePair else { return .rejected(.noLivePair) }
        let next: LivePair?
        switch move {
        case .left: next = live.moved(columns: -1, on: board)
        case .right: next = live.moved(columns: 1, on: board)
        case .rotateCW: next = live.rotated(clockwise: true, on: board)
        case .rotateCCW: next = live.rotated(clockwise: false, on: board)
        case .down:
            guard let fallen = live.fallen(on: board) else { return lock(live) }
            next = fallen
        case .hardDrop: return lock(live)
        }
        guard let next else { return .blocked }
        livePair = next
        return .moved
    }

    private mutating func lock(_ live: LivePair) -> InputOutcome {
        board.drop(live.pair, orientation: live.orientation, column: live.column)
        let chain = board.resolveChain()
        livePair = nil
        lastChain = chain
        garbagePending = chain.garbage
        return .locked(chain)
    }

    private mutating func landGarbage(_ count: Int) -> InputOutcome {
        guard livePair == nil else { return .rejected(.pairAlreadyLive) }
        guard count >= 0 else { return .rejected(.negativeGarbage) }
        return .garbageLanded(board.landGarbage(count))
    }

    /// The cell to draw at `(column, row)`, with the live pair drawn over the board.
    public func displayCell(column: Int, row: Int) -> Cell {
        if let live = livePair {
            if live.column == column && live.row == row { return .egg(live.pair.pivot) }
            if live.childColumn == column && live.childRow == row { return .egg(live.pair.child) }
        }
        return board[column: column, row: row]
    }

    /// A stable 64-bit FNV-1a hash of the state: cells, live pair, pairs spawned, pending garbage
    /// and topped-out flag. The same on every machine and process (unlike `Hasher`).
    public var stableHash: UInt64 {
        var hash = StableHasher()
        for row in 0..<Board.rowsCount {
            for column in 0..<Board.columnsCount {
                hash.combine(board.code(column: column, y: Board.rowsCount - 1 - row))
            }
        }
        if let live = livePair {
            hash.combine(UInt8(1))
            hash.combine(live.pair.pivot.rawValue)
            hash.combine(live.pair.child.rawValue)
            hash.combine(UInt8(live.column))
            hash.combine(UInt8(live.row))
            hash.combine(live.orientation.rawValue)
        } else {
            hash.combine(UInt8(0))
        }
        hash.combine(UInt64(pairsSpawned))
        hash.combine(UInt64(garbagePending))
        hash.combine(state.rawValue)
        return hash.value
    }

    /// Panics when the grid breaks a rule that no sequence of inputs may break.
    public func checkInvariants() {
        board.checkInvariants()
        precondition(board.isSettled, "settled board has a floating egg")
        precondition(pairsSpawned >= 0, "negative pairs spawned")
        precondition(garbagePending >= 0, "negative pending garbage")
        if let live = livePair {
            precondition(!isToppedOut, "a topped-out grid has a live pair")
            precondition(live.fits(on: board), "live pair overlaps the board")
        }
    }
}

/// The owner-side timing of one player: turns 60 Hz ticks into gravity ``Move/down`` inputs.
///
/// Mirrors never run one; they only see the moves it produced.
public struct GravityClock: Sendable, Hashable {
    /// Logic ticks per second.
    public static let ticksPerSecond = 60
    /// Ticks between soft-drop steps.
    public static let softDropIntervalTicks = 4
    /// Speeds a match may use.
    public static let speedsSupported = 0...9

    public let speed: Int
    private var ticksSinceFall = 0

    public init(speed: Int) {
        precondition(GravityClock.speedsSupported.contains(speed), "speed must be 0...9")
        self.speed = speed
    }

    /// Ticks between gravity steps: max(4, 76 − 8·speed).
    public var fallIntervalTicks: Int { max(4, 76 - 8 * speed) }

    /// Restarts the count; call when a pair spawns.
    public mutating func reset() {
        ticksSinceFall = 0
    }

    /// Advances one tick; returns true when the owner should apply and send ``Move/down``.
    public mutating func tick(softDrop: Bool) -> Bool {
        let interval = softDrop ? min(GravityClock.softDropIntervalTicks, fallIntervalTicks) : fallIntervalTicks
        ticksSinceFall += 1
        guard ticksSinceFall >= interval else { return false }
        ticksSinceFall = 0
        return true
    }
}
