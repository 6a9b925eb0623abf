import EggGame
import PeerNet

/// A player's grid as a mirror shows it (the falling pair and falling eggs in their cells), for a
/// peer that joined during the game and does not mirror it (it cannot: it has neither the stream
/// before its join nor the decided rounds). It draws these pictures instead of "in progress":
/// sent with the snapshot and again as the mirror's grid changes while such a peer is in the view
/// (see `MatchPeer+Pictures.swift`).
public struct GridPicture: Hashable, Sendable {
    public var player: PeerID
    /// Pairs the player had spawned (the picture's stream position).
    public var pairs: UInt32
    /// The cells (`cellsCount`), row 0 (top) first, six per row: 0 empty, 1...6 the colours, 7 garbage.
    public var cells: [UInt8]
    /// Garbage queued against the player (drawn as its tray); 0 from a sender that predates it.
    public var garbage: Int

    public static let cellsCount = Board.columnsCount * Board.rowsCount
    /// The most queued garbage a picture may carry (as much as an offset item may cancel).
    public static let garbageMax = MatchMessage.garbageOffsetMax

    public init(player: PeerID, pairs: UInt32, cells: [UInt8], garbage: Int = 0) {
        self.player = player
        self.pairs = pairs
        self.cells = cells
        self.garbage = garbage
    }

    /// The picture of `grid` as it is drawn: its board with the falling pair and falling eggs in
    /// the cells they are in.
    public init(player: PeerID, grid: PlayerGrid, garbage: Int = 0) {
        var cells: [UInt8] = []
        cells.reserveCapacity(Self.cellsCount)
        for row in 0..<Board.rowsCount {
            for column in 0..<Board.columnsCount {
                switch grid.displayCell(column: column, row: row) {
                case .empty: cells.append(0)
                case .egg(let color): cells.append(color.rawValue + 1)
                case .garbage: cells.append(7)
                }
            }
        }
        self.init(player: player, pairs: UInt32(clamping: grid.pairsSpawned), cells: cells, garbage: min(garbage, Self.garbageMax))
    }

    /// `cellsCount` cells of codes 0...7, a stream position within a game's rounds, garbage
    /// within ``garbageMax``.
    public var isValid: Bool {
        cells.count == Self.cellsCount && cells.allSatisfy { $0 <= 7 } && pairs <= EggRounds.roundsMax
            && (0...Self.garbageMax).contains(garbage)
    }

    /// The picture as a grid to draw: every cell where the picture has it. An egg over an empty
    /// cell (the falling pair, a falling egg) becomes a loose egg in that cell, drawn in place and
    /// not settled; a grid for drawing only, never ticked. An invalid picture draws empty. `rules`:
    /// the match's (they decide which rows are drawn how: `tsu`'s hidden row stays hidden).
    public func grid(rules: RuleSet) -> PlayerGrid {
        var board = Board()
        guard isValid else { return PlayerGrid(rules: rules) }
        for (index, code) in cells.enumerated() {
            let cell: Cell = code == 0 ? .empty : (code == 7 ? .garbage : .egg(EggColor(rawValue: code - 1)!))
            board[column: index % Board.columnsCount, row: index / Board.columnsCount] = cell
        }
        return PlayerGrid(lockedOnto: board, rules: rules)
    }

    /// The cells as `cellsCount` digits (the log's form).
    var digits: String { String(cells.map { Character(String($0)) }) }

    /// The cells of the log's digits: ASCII 0-9 only (range checks are ``isValid``'s); nil for
    /// any other character, such as a digit of another script worth over 255.
    static func cells(digits: String) -> [UInt8]? {
        let bytes = Array(digits.utf8)
        guard bytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return bytes.map { $0 - UInt8(ascii: "0") }
    }
}
