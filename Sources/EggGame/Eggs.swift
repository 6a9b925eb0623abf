/// One of the six egg colours. A game uses the first 4, 5 or 6 of them.
public enum EggColor: UInt8, CaseIterable, Sendable, Hashable {
    case red = 0, blue, yellow, purple, green, orange

    /// The board-notation letter: `R B Y P G O`.
    public var letter: Character {
        switch self {
        case .red: "R"
        case .blue: "B"
        case .yellow: "Y"
        case .purple: "P"
        case .green: "G"
        case .orange: "O"
        }
    }

    /// The colour for a board-notation letter, or nil.
    public init?(letter: Character) {
        guard let color = EggColor.allCases.first(where: { $0.letter == letter }) else { return nil }
        self = color
    }
}

/// What one cell of a grid holds.
public enum Cell: Sendable, Hashable {
    case empty
    case egg(EggColor)
    case garbage

    /// The 3-bit code stored in the bit planes: 0 empty, 1...6 colours, 7 garbage.
    var code: UInt8 {
        switch self {
        case .empty: 0
        case .egg(let color): color.rawValue + 1
        case .garbage: 7
        }
    }

    init(code: UInt8) {
        precondition(code < 8, "cell code out of range")
        switch code {
        case 0: self = .empty
        case 7: self = .garbage
        default: self = .egg(EggColor(rawValue: code - 1)!)
        }
    }

    /// The board-notation character: `.` empty, `R B Y P G O` eggs, `#` garbage.
    public var letter: Character {
        switch self {
        case .empty: "."
        case .egg(let color): color.letter
        case .garbage: "#"
        }
    }

    /// The cell for a board-notation character, or nil.
    public init?(letter: Character) {
        switch letter {
        case ".": self = .empty
        case "#": self = .garbage
        default:
            guard let color = EggColor(letter: letter) else { return nil }
            self = .egg(color)
        }
    }
}

/// Two eggs that fall together: the pivot, around which the pair rotates, and the child.
public struct EggPair: Sendable, Hashable {
    /// How many colours a game may use.
    public static let colorsSupported = 4...6

    public var pivot: EggColor
    public var child: EggColor

    public init(pivot: EggColor, child: EggColor) {
        self.pivot = pivot
        self.child = child
    }

    /// The pair for one decided 64-bit round value, using the first `colors` colours.
    ///
    /// Pure and portable: the value seeds a ``SplitMix64`` and two unbiased bounded draws pick
    /// the pivot and then the child colour, so any value (even a badly chosen vote) maps to a
    /// well-mixed pair.
    public init(value: UInt64, colors: Int) {
        precondition(EggPair.colorsSupported.contains(colors), "colors must be 4, 5 or 6")
        var rng = SplitMix64(seed: value)
        let bound = UInt64(colors)
        pivot = EggColor(rawValue: UInt8(rng.next(below: bound)))!
        child = EggColor(rawValue: UInt8(rng.next(below: bound)))!
    }
}
