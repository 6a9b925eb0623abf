import EggGame

/// A whole match in one process, with no network: grids sharing one egg sequence, gravity, garbage
/// exchanged by the rules, games until one seat has won enough. Seats are bots or driven from
/// outside (a human at the terminal), tick by tick.
public struct LocalMatch: Sendable {
    /// Who plays a seat.
    public enum Seat: Sendable, Hashable {
        case bot(BotLevel)
        /// Moves come from ``LocalMatch/enqueue(_:seat:)`` and ``LocalMatch/setSoftDrop(_:seat:)``.
        case external
    }

    public struct Options: Sendable, Hashable {
        public var seed: UInt64
        public var colors: Int
        public var speed: Int
        /// 1, 3, 5 or 7.
        public var bestOf: Int
        /// A game still running after this many ticks is a draw (30 minutes at 60 ticks/s).
        public var gameTicksMax: Int
        /// The match ends after this many games even without a winner (draws repeat a game).
        public var gamesMax: Int
        /// The rule set every grid of the match is built from.
        public var rules: RuleSet
        /// Full rows of garbage on every grid before the first spawn (in the rule set's range).
        public var startingHeight: Int

        public init(seed: UInt64, colors: Int = 4, speed: Int = 0, bestOf: Int = 1,
                    gameTicksMax: Int = 108_000, gamesMax: Int = 21, rules: RuleSet = .sfe, startingHeight: Int = 0) {
            precondition([1, 3, 5, 7].contains(bestOf), "bestOf must be 1, 3, 5 or 7")
            precondition(EggPair.colorsSupported.contains(colors), "colors must be 4, 5 or 6")
            precondition(GravityClock.speedsSupported.contains(speed), "speed must be 0...9")
            precondition(gameTicksMax > 0 && gamesMax >= bestOf, "limits must allow a game")
            precondition(rules.startingHeights.contains(startingHeight), "starting height out of the rule set's range")
            self.seed = seed
            self.colors = colors
            self.speed = speed
            self.bestOf = bestOf
            self.gameTicksMax = gameTicksMax
            self.gamesMax = gamesMax
            self.rules = rules
            self.startingHeight = startingHeight
        }

        /// A seat's grid at the start of a game.
        func startingGrid(garbageSeed: UInt64) -> PlayerGrid {
            PlayerGrid(startingHeight: startingHeight, rules: rules, speed: speed, garbageSeed: garbageSeed)
        }
    }

    /// Something that happened during a tick, for a renderer or a log.
    public enum Event: Sendable, Hashable {
        /// An input was applied to a seat's grid, with its outcome.
        case input(seat: Int, PlayerInput, InputOutcome)
        /// Garbage went from one seat to another's incoming queue.
        case garbageSent(from: Int, to: Int, count: Int)
        /// A game ended; nil means a draw.
        case gameOver(winner: Int?)
        /// The match ended; nil means no seat won enough games within the limit.
        case matchOver(winner: Int?)
    }

    public let options: Options
    public let seats: [Seat]
    /// The grids of the current game, one per seat.
    public internal(set) var grids: [PlayerGrid]
    /// Games won per seat.
    public private(set) var wins: [Int]
    /// Each seat's garbage account (``GarbageExchange``: sent to it, accepted during its live
    /// pair, landed, cancelled by its offsetting), by the same rules as a network match.
    public internal(set) var garbage: [GarbageExchange]
    /// Every input applied to each seat's grid in the current game, in order (for replays).
    public private(set) var inputs: [[PlayerInput]]
    /// Games played to the end (draws included).
    public private(set) var gamesPlayed = 0
    /// Ticks into the current game.
    public private(set) var gameTicks = 0
    public private(set) var isOver = false
    public private(set) var matchWinner: Int?
    /// The egg sequence of the current game.
    public private(set) var sequence: EggSequence
    /// The grids as the last finished game ended (a renderer holds them up after the game).
    public private(set) var lastGameGrids: [PlayerGrid]?

    private var clocks: [GravityClock]
    private var bots: [BotPlayer?]
    private var queuedMoves: [[Move]]
    private var softDrop: [Bool]
    static let queuedMovesMax = 16

    public init(options: Options, seats: [Seat]) {
        precondition((1...8).contains(seats.count), "a match has 1 to 8 seats")
        self.options = options
        self.seats = seats
        let count = seats.count
        sequence = LocalMatch.sequence(options: options, game: 0)
        grids = Array(repeating: options.startingGrid(garbageSeed: sequence.seed), count: count)
        wins = Array(repeating: 0, count: count)
        garbage = Array(repeating: GarbageExchange(), count: count)
        inputs = Array(repeating: [], count: count)
        clocks = Array(repeating: GravityClock(speed: options.speed, rules: options.rules), count: count)
        bots = []
        queuedMoves = Array(repeating: [], count: count)
        softDrop = Array(repeating: false, count: count)
        bots = LocalMatch.bots(seats: seats, seed: options.seed, game: 0)
    }

    private static func sequence(options: Options, game: Int) -> EggSequence {
        EggSequence(seed: SplitMix64.output(seed: options.seed, index: UInt64(game)), colors: options.colors)
    }

    private static func bots(seats: [Seat], seed: UInt64, game: Int) -> [BotPlayer?] {
        seats.enumerated().map { index, seat in
            guard case .bot(let level) = seat else { return nil }
            return BotPlayer(level: level, seed: SplitMix64.mix(seed &+ UInt64(game * 64 + index)))
        }
    }

    /// Garbage sent to `seat` and not landed yet (accepted or waiting for the next pair).
    public func queuedGarbage(seat: Int) -> Int { garbage[seat].queued }

    /// Credits `count` eggs of garbage to `seat` as accepted during its live pair (a test's set-up).
    package mutating func acceptGarbage(_ count: Int, seat: Int) {
        garbage[seat].credit(count)
        garbage[seat].acceptQueued()
    }

    /// Queues a move for an external seat, applied at the next tick (at most 16 wait).
    public mutating func enqueue(_ move: Move, seat: Int) {
        precondition(seats.indices.contains(seat), "no such seat")
        guard queuedMoves[seat].count < LocalMatch.queuedMovesMax else { return }
        queuedMoves[seat].append(move)
    }

    /// Whether an external seat holds soft drop.
    public mutating func setSoftDrop(_ held: Bool, seat: Int) {
        precondition(seats.indices.contains(seat), "no such seat")
        softDrop[seat] = held
    }

    /// The pair after the live one of a seat (its preview).
    public func nextPair(seat: Int) -> EggPair {
        sequence.pair(at: grids[seat].pairsSpawned)
    }

    /// The pairs the rule set shows after the live one (`sfe` one, `tsu` two).
    public func nextPairs(seat: Int) -> [EggPair] {
        (0..<options.rules.nextPairsShown).map { sequence.pair(at: grids[seat].pairsSpawned + $0) }
    }

    /// Advances the match by one tick (1/60 s) and reports what happened.
    @discardableResult
    public mutating func tick() -> [Event] {
        guard !isOver else { return [] }
        var events: [Event] = []
        for seat in seats.indices where grids[seat].state != .toppedOut {
            tickSeat(seat, events: &events)
        }
        gameTicks += 1
        endGameIfDecided(events: &events)
        return events
    }

    private mutating func tickSeat(_ seat: Int, events: inout [Event]) {
        if grids[seat].state == .awaitingSpawn {
            // Offsetting: the chain garbage this seat sends at its next spawn first cancels
            // garbage queued against it, the garbage due to land soonest (accepted) first.
            if options.rules.offsetting { garbage[seat].offset(pending: grids[seat].garbagePending) }
            // Garbage accepted during the last pair lands after its chain, all at once (up to
            // the rule set's most; the rest after the next pair).
            let count = garbage[seat].landAccepted(dropMax: options.rules.garbageDropMax)
            if count > 0 { apply(.landGarbage(count), seat: seat, events: &events) }
        }
        if grids[seat].state == .awaitingSpawn {
            let outcome = apply(.spawn(sequence.pair(at: grids[seat].pairsSpawned)), seat: seat, events: &events)
            clocks[seat].reset()
            switch outcome {
            case .spawned(let sent), .toppedOut(let sent): sendGarbage(garbage[seat].spawnSends(sent), from: seat, events: &events)
            default: preconditionFailure("a spawn in awaitingSpawn must be accepted")
            }
            guard grids[seat].state == .live else { return }
        }
        if grids[seat].state == .live {
            for move in movesThisTick(seat) where grids[seat].state == .live {
                apply(.move(move), seat: seat, events: &events)
            }
            if grids[seat].state == .live && clocks[seat].tick(softDrop: softDrop[seat]) {
                apply(.move(.down), seat: seat, events: &events)
            }
        }
        if grids[seat].state == .live { garbage[seat].acceptQueued() }
        apply(.ticks(1), seat: seat, events: &events)
    }

    private mutating func movesThisTick(_ seat: Int) -> [Move] {
        if var bot = bots[seat] {
            let move = bot.tick(grid: grids[seat], preview: nextPairs(seat: seat),
                                context: BotContext(incomingGarbage: garbage[seat].queued,
                                                    opponents: bot.level.readsOpponents ? opponentBoards(of: seat) : []))
            bots[seat] = bot
            return move.map { [$0] } ?? []
        }
        defer { queuedMoves[seat].removeAll(keepingCapacity: true) }
        return queuedMoves[seat]
    }

    /// The boards of the other seats still playing (what a seat's bot sees of its opponents).
    public func opponentBoards(of seat: Int) -> [Board] {
        seats.indices.filter { $0 != seat && grids[$0].state != .toppedOut }.map { grids[$0].board }
    }

    @discardableResult
    private mutating func apply(_ input: PlayerInput, seat: Int, events: inout [Event]) -> InputOutcome {
        let outcome = grids[seat].apply(input)
        precondition(outcome.isAccepted, "the match only feeds valid inputs")
        if case .ticks(let count) = input, case .ticks(let before)? = inputs[seat].last,
           before + count <= PlayerGrid.ticksPerInputMax {
            inputs[seat][inputs[seat].count - 1] = .ticks(before + count)
        } else {
            inputs[seat].append(input)
        }
        events.append(.input(seat: seat, input, outcome))
        return outcome
    }

    /// Sends garbage to every other seat still playing.
    private mutating func sendGarbage(_ count: Int, from sender: Int, events: inout [Event]) {
        guard count > 0 else { return }
        for seat in seats.indices where seat != sender && grids[seat].state != .toppedOut {
            // During the live pair it is accepted at once; otherwise with the next pair.
            garbage[seat].credit(count)
            if grids[seat].state == .live { garbage[seat].acceptQueued() }
            events.append(.garbageSent(from: sender, to: seat, count: count))
        }
    }

    private mutating func endGameIfDecided(events: inout [Event]) {
        let alive = seats.indices.filter { grids[$0].state != .toppedOut }
        let decided = seats.count == 1 ? alive.isEmpty : alive.count <= 1
        guard decided || gameTicks >= options.gameTicksMax else { return }
        let winner = decided && seats.count > 1 ? alive.first : nil
        if let winner { wins[winner] += 1 }
        lastGameGrids = grids
        gamesPlayed += 1
        events.append(.gameOver(winner: winner))
        let needed = options.bestOf / 2 + 1
        if let leader = wins.indices.first(where: { wins[$0] >= needed }) {
            finish(winner: leader, events: &events)
        } else if gamesPlayed >= options.gamesMax || seats.count == 1 {
            finish(winner: nil, events: &events)
        } else {
            startGame(gamesPlayed)
        }
    }

    private mutating func finish(winner: Int?, events: inout [Event]) {
        isOver = true
        matchWinner = winner
        events.append(.matchOver(winner: winner))
    }

    private mutating func startGame(_ game: Int) {
        sequence = LocalMatch.sequence(options: options, game: game)
        grids = Array(repeating: options.startingGrid(garbageSeed: sequence.seed), count: seats.count)
        garbage = Array(repeating: GarbageExchange(), count: seats.count)
        inputs = Array(repeating: [], count: seats.count)
        clocks = Array(repeating: GravityClock(speed: options.speed, rules: options.rules), count: seats.count)
        queuedMoves = Array(repeating: [], count: seats.count)
        softDrop = Array(repeating: false, count: seats.count)
        bots = LocalMatch.bots(seats: seats, seed: options.seed, game: game)
        gameTicks = 0
    }

    /// Runs the match to its end headless (every seat must be a bot); returns the winner.
    public mutating func run() -> Int? {
        precondition(seats.allSatisfy { $0 != .external }, "headless runs need bots in every seat")
        while !isOver { tick() }
        return matchWinner
    }
}
