import EggGame

/// How a bot judges a settled board: mostly by the chain it could fire with one or two more eggs
/// (virtual drops of 1 to 3 eggs), plus shape terms (same-colour contacts, a smooth surface, free spawn columns).
struct BotEvaluation {
    /// The best chain that a few more eggs of one colour dropped in one column would fire.
    struct Potential: Hashable {
        var chain: Int
        /// Eggs the trigger needs (1 to ``eggsMax``); 0 when there is no chain.
        var eggs: Int
        /// Eggs the chain pops beyond four a step (groups of five or more, two groups in a step).
        var excess = 0
    }

    /// Eggs a virtual drop may use: 1 (easy), 2 or 3 (insane).
    let eggsMax: Int
    let weights: Weights
    /// Judging for the longest chain (``Building``): set by insane while nothing presses it.
    var building = false
    /// No opponent in view (``BotContext/opponents`` empty: alone, or their boards unknown): under
    /// `tsu` the building keeps its surface (``Building/oneSpawnSurface``) only then.
    var alone = true
    /// Whether the rules have two spawn columns (`sfe`) rather than one (`tsu`).
    private var twoSpawnColumns: Bool { simulator.spawnColumns.low != simulator.spawnColumns.high }
    /// Building around `sfe`'s two spawn columns: the value by steps, the U-shaped surface, the
    /// pair-sized trigger.
    private var buildsAroundTwoSpawns: Bool { building && twoSpawnColumns }
    /// Building around `tsu`'s one spawn column: its limits a row higher.
    private var buildsAroundOneSpawn: Bool { building && !twoSpawnColumns }
    let build = Building()
    /// The rules the virtual drops are played out by (the match's rule set).
    var simulator: BotSimulator

    /// The weights of the shape terms and of firing (the same at every level but easy's, see
    /// ``BotLevel/evaluationWeights``).
    struct Weights {
        var contact = 30
        var rough = 15
        /// The spawn columns' height from which they cost (squared, by ``dangerWeight``).
        var dangerFrom = 9
        var dangerWeight = 900
        var crowdFrom = 54
        var crowdWeight = 60
        var eggPenalty = 40
        /// Per empty cell a pair can no longer reach: the cells of the columns beyond one standing a
        /// row below the spawn row or taller, on the far side from the spawn columns
        /// (``BotSimulator/reachableColumns(_:)``). A bot that walled off a side column topped out
        /// beside it, holding the chain whose trigger lay there.
        var walledCell = 400
        /// Per egg the potential chain pops beyond four a step: a chain of groups of four fires more
        /// steps from the same eggs. 100 raised insane's mean largest chain from 8.48 to 8.86
        /// (`sfe`) and 9.46 to 9.72 (`tsu`); 200–400 did no better in `sfe` and worse in `tsu`.
        var excess = 100
        /// The spawn columns' height (before the placement) from which any chain is fired.
        var spawnFire = 9
        var waste = 250
        var fireScale = 3
        var fireBonus = 1_000
        /// Tenths of a later pair's chain counted now.
        var discount = 9
    }

    /// How a board is judged while ``building``: for the longest chain the bot can build rather than
    /// the quickest answer (insane alone, or while no opponent can hit it; see
    /// ``BotLevel/buildsWhenUnpressed``). Under `sfe`, measured on 100 solo games at insane (mean
    /// largest chain 8.86 without): each of the first three parts alone, 9.05 (the value by steps)
    /// and 9.18 (the surface, on 40 games); all three, 9.87. Under `tsu`, the spawn column's
    /// height moves (``oneSpawnColumnHeight``) and the surface is shaped around its one spawn
    /// column (``oneSpawnSurface``).
    struct Building {
        /// The potential chain's value per step, instead of ``chainValue(_:)``'s square: the first
        /// steps of a long chain are worth building (the square valued a chain of 3 at a tenth of
        /// a chain of 9).
        var stepValue = 1_100
        /// Cost per egg the potential chain's trigger needs.
        var triggerEgg = 150
        /// Cost per egg of height a column stands away from a U-shaped surface: the board's mean
        /// height plus ``surfaceOffset(column:)``. Under `sfe` both middle columns are spawn columns;
        /// building up the sides first lets the board hold more eggs before they reach the height
        /// at which any chain is fired (9), and the chain grows with the eggs. 45 and offsets of
        /// 3, 2, −2, −2, 2, 3 since insane judges reachability by gravity (it reaches columns 1
        /// and 4 over the spawn columns more often): on 300 solo games 10.19 against 9.94 with 40
        /// and 3, 1, −2, −2, 1, 3 (seeds 0–99: 10.07 against 10.06; 2 beside the sides with 40 or
        /// 50: 10.10 and 10.21 on 300, but 68 % at hard's pace against hard on 100 games).
        var surface = 45
        /// Eggs on the board from which only a trigger one pair can lay (1 or 2 eggs) counts: a
        /// nearly full board whose chain needs three eggs of one colour topped out waiting for them.
        var pairTriggerFrom = 50
        /// Under `tsu` (one spawn column): the height of the spawn column from which it costs and
        /// from which any chain is fired, 10 instead of ``Weights/dangerFrom`` and
        /// ``Weights/spawnFire``'s 9. On 300 solo games insane's mean largest chain went from 9.64
        /// to 9.93 (seeds 0–99: 9.72 to 10.00). Under `sfe` the same (with both spawn columns)
        /// topped out more (8.98–9.13, 126–131 pairs a game).
        var oneSpawnColumnHeight = 10
        /// Under `tsu`: cost per egg of height a column stands away from a surface low at the spawn
        /// column (column 2) and high at the left side: the board's mean height plus
        /// ``surfaceOffset(column:twoSpawnColumns:)``'s 2, 1, −2, −1, 0, 1. The spawn column is the
        /// one whose height forces a fire (from 10); kept under the others, the board holds more
        /// eggs before it must fire, as under `sfe`. On 600 solo games (seeds 5000–5599) insane's
        /// mean largest chain went from 10.78 to 11.00, by pair 50 from 9.12 to 9.38; 20 and 45 gave
        /// 10.91 / 9.35 and 10.99 / 9.36, other offsets (2, 1, −2, 0, 1, 2; 3, 1, −3, −1, 1, 2)
        /// 10.97–11.02 / 9.38–9.41. `sfe`'s surface tried for `tsu` before the beam and the walls
        /// (9.40–9.95 on 100 games against 9.72) had its sides reach the spawn row. Only with no
        /// opponent in view (``alone``): kept in versus too, insane beat hard in 85.0 % of 200 `tsu`
        /// games (seeds 1000–1199) against 92.0 % without, 62.5 % at hard's pace against 67.5 %.
        var oneSpawnSurface = 30

        /// A column's height in the surface the building keeps, against the mean: under `sfe` (two
        /// spawn columns, the middle ones) 3, 2, −2, −2, 2, 3; under `tsu` (one, column 2) 2, 1, −2,
        /// −1, 0, 1.
        @inline(__always)
        static func surfaceOffset(column: Int, twoSpawnColumns: Bool = true) -> Int {
            if !twoSpawnColumns {
                switch column {
                case 0: return 2
                case 1, 5: return 1
                case 2: return -2
                case 3: return -1
                default: return 0
                }
            }
            switch column {
            case 0, 5: return 3
            case 1, 4: return 2
            default: return -2
            }
        }
    }

    init(eggsMax: Int, weights: Weights = Weights(), rules: RuleSet = .sfe) {
        self.eggsMax = eggsMax
        self.weights = weights
        simulator = BotSimulator(rules: rules)
    }

    /// The value of a chain of `chain` steps, realised or within reach.
    @inline(__always)
    static func chainValue(_ chain: Int) -> Int { chain &* chain &* 60 &+ chain &* 100 }

    /// The virtual drops: for every column a pair can reach (every column: `anyColumn`) and every
    /// colour touching the cells a drop would fill, 1 then up to `eggsMax` eggs of that colour,
    /// and the longest chain they fire.
    func potential(_ board: Board, anyColumn: Bool = false) -> Potential {
        let eggsMax = buildsAroundTwoSpawns && board.eggsCount >= build.pairTriggerFrom ? min(2, self.eggsMax) : self.eggsMax
        var best = Potential(chain: 0, eggs: 0)
        let quiet = simulator.isQuiet(board)
        // A trigger behind a column that walls it off from the spawn columns cannot be laid.
        let reach = anyColumn ? (low: 0, high: BotSimulator.columns - 1) : simulator.reachableColumns(board)
        for column in reach.low...reach.high {
            let height = BotSimulator.height(board, column: column)
            guard height < simulator.pairRows else { continue }
            var colours: UInt8 = 0
            if height > 0 { colours |= Self.colourBit(BotSimulator.code(board, column: column, y: height - 1)) }
            for y in height..<min(height + eggsMax, simulator.rows) {
                if column > 0 { colours |= Self.colourBit(BotSimulator.code(board, column: column - 1, y: y)) }
                if column < BotSimulator.columns - 1 { colours |= Self.colourBit(BotSimulator.code(board, column: column + 1, y: y)) }
            }
            var code: UInt8 = 1
            while colours != 0 && code <= 6 {
                defer { code += 1 }
                guard colours & (1 << code) != 0 else { continue }
                colours &= ~(1 << code)
                for eggs in 1...eggsMax {
                    let (chain, popped) = simulator.virtualChain(board, code: code, column: column, count: eggs, quiet: quiet)
                    guard chain > 0 else { continue }
                    if chain > best.chain || (chain == best.chain && eggs < best.eggs) {
                        best = Potential(chain: chain, eggs: eggs, excess: popped &- 4 &* chain)
                    }
                    break
                }
            }
        }
        return best
    }

    @inline(__always)
    static func colourBit(_ code: UInt8) -> UInt8 { code >= 1 && code <= 6 ? 1 << code : 0 }

    /// The score of a settled board (higher is better).
    func score(_ board: Board) -> Int {
        let potential = self.potential(board)
        var value = buildsAroundTwoSpawns
            ? potential.chain &* build.stepValue &- potential.eggs &* build.triggerEgg
            : Self.chainValue(potential.chain) &- (potential.eggs > 1 ? potential.chain &* weights.eggPenalty : 0)
        value &-= potential.excess &* weights.excess
        value &+= shape(board)
        return value
    }

    /// Same-colour contacts, surface smoothness and the height of the spawn columns.
    func shape(_ board: Board) -> Int {
        var contacts = 0
        for code in UInt8(1)...6 {
            let plane = BotSimulator.plane(board, code: code)
            if plane == 0 { continue }
            contacts &+= (plane & (plane >> 1)).nonzeroBitCount &+ (plane & (plane >> Board.laneBits)).nonzeroBitCount
        }
        var roughness = 0
        var previous = BotSimulator.height(board, column: 0)
        var heights = previous
        for column in 1..<BotSimulator.columns {
            let height = BotSimulator.height(board, column: column)
            let step = abs(height &- previous)
            roughness &+= step > 1 ? (step &- 1) &* (step &- 1) : 0
            heights &+= height
            previous = height
        }
        // The spawn columns stay low: a pair must be able to travel along the top row.
        let spawn = simulator.spawnHeight(board)
        let over = spawn &- dangerFrom &+ 1
        let danger = over > 0 ? over &* over &* weights.dangerWeight : 0
        let crowding = heights > weights.crowdFrom ? (heights &- weights.crowdFrom) &* weights.crowdWeight : 0
        let surface = buildsAroundTwoSpawns || (buildsAroundOneSpawn && alone) ? surfaceCost(board, heights: heights) : 0
        return contacts &* weights.contact &- roughness &* weights.rough &- danger &- crowding &- surface
            &- walledCells(board) &* weights.walledCell
    }

    /// The empty cells of the columns a pair can no longer reach (``BotSimulator/reachableColumns(_:)``).
    func walledCells(_ board: Board) -> Int {
        let reach = simulator.reachableColumns(board)
        var cells = 0
        for column in 0..<BotSimulator.columns where column < reach.low || column > reach.high {
            cells &+= max(0, simulator.pairRows &- BotSimulator.height(board, column: column))
        }
        return cells
    }

    /// The spawn columns' height from which they cost (squared, by ``Weights/dangerWeight``).
    var dangerFrom: Int {
        buildsAroundOneSpawn ? build.oneSpawnColumnHeight : weights.dangerFrom
    }

    /// The spawn columns' height (before the placement) from which any chain is fired.
    var spawnFire: Int {
        buildsAroundOneSpawn ? build.oneSpawnColumnHeight : weights.spawnFire
    }

    /// ``Building/surface`` (`sfe`) or ``Building/oneSpawnSurface`` (`tsu`) per egg of height the
    /// columns stand away from the surface the building keeps (`heights`: the board's eggs by
    /// column, summed).
    func surfaceCost(_ board: Board, heights: Int) -> Int {
        let two = twoSpawnColumns
        // In sixths of an egg: six times a column's height against the sum of the six.
        var sixths = 0
        for column in 0..<BotSimulator.columns {
            let target = heights &+ 6 &* Building.surfaceOffset(column: column, twoSpawnColumns: two)
            sixths &+= abs(6 &* BotSimulator.height(board, column: column) &- target)
        }
        return sixths &* (two ? build.surface : build.oneSpawnSurface) / 6
    }
}
