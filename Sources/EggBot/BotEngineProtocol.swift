import EggGame

/// The line protocol between eggs and an external bot engine (docs/formats.md, the engine protocol): pure
/// formatting of what eggs says and validation of what the engine answers.
///
/// ```
/// eggs → engine   eggs-engine 1
/// engine → eggs   ready [NAME]
/// eggs → engine   state SEQ BOARD PAIR PREVIEW GARBAGE OPPONENTS
/// engine → eggs   place SEQ COLUMN ORIENTATION
/// ```
public enum BotEngineProtocol {
    /// The protocol version eggs speaks.
    public static let version = 1
    /// The first line eggs writes.
    public static let hello = "eggs-engine \(version)"
    /// The longest line eggs reads from an engine, in bytes (newline excluded).
    public static let lineMax = 256

    /// Why an engine's line was refused.
    public struct AnswerError: Error, Sendable, Hashable, CustomStringConvertible {
        public let line: String
        public let reason: String

        public var description: String {
            let shown = line.count > 60 ? String(line.prefix(60)) + "…" : line
            return "bad answer '\(BotEngineProtocol.escaped(shown))' (\(reason))"
        }
    }

    /// `text` safe to show on a terminal: every control character (C0 with NUL and ESC, DEL, C1)
    /// and the backslash become visible escapes (`\0`, `\t`, `\n`, `\r`, `\x1b`, `\x7f`,
    /// `\u{9b}`, `\\`); the rest is unchanged. Every engine line a message quotes goes through it.
    public static func escaped(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x5C: shown += "\\\\"
            case 0x00: shown += "\\0"
            case 0x09: shown += "\\t"
            case 0x0A: shown += "\\n"
            case 0x0D: shown += "\\r"
            case 0x00...0x0F: shown += "\\x0" + String(scalar.value, radix: 16)
            case 0x10...0x1F, 0x7F: shown += "\\x" + String(scalar.value, radix: 16)
            case 0x80...0x9F: shown += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    /// A board as all its rows (15 for `sfe`: rows 0–2 hold only garbage), 6 cells each, top first, joined by `/` (cells `.RBYPGO#`).
    public static func boardField(_ board: Board) -> String {
        board.notationRows.joined(separator: "/")
    }

    /// A pair as two letters, pivot then child.
    public static func pairField(_ pair: EggPair) -> String {
        String([pair.pivot.letter, pair.child.letter])
    }

    /// The `state` line for one decision.
    /// - Parameters:
    ///   - seq: the decision's number, increasing from 1.
    ///   - preview: the pairs shown after `pair` (sent as `-` when none).
    ///   - garbage: garbage eggs queued against the bot.
    ///   - opponents: the boards of the other players still in the game (sent as `-` when none).
    public static func stateLine(seq: Int, board: Board, pair: EggPair, preview: [EggPair], garbage: Int, opponents: [Board]) -> String {
        let previewField = preview.isEmpty ? "-" : preview.map(pairField).joined(separator: ",")
        let opponentsField = opponents.isEmpty ? "-" : opponents.map(boardField).joined(separator: ",")
        return "state \(seq) \(boardField(board)) \(pairField(pair)) \(previewField) \(max(0, garbage)) \(opponentsField)"
    }

    /// Validates the answer to the hello: `ready`, optionally followed by a name.
    public static func parseReady(_ line: String) -> Result<String, AnswerError> {
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        guard words.first == "ready", words.count <= 2 else {
            return .failure(AnswerError(line: line, reason: "expected 'ready [NAME]'"))
        }
        return .success(words.count == 2 ? String(words[1]) : "")
    }

    /// Validates an answer to the `state` line numbered `seq`: `place SEQ COLUMN ORIENTATION`,
    /// a placement inside the grid.
    public static func parsePlacement(_ line: String, seq: Int) -> Result<Placement, AnswerError> {
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count == 4, words[0] == "place" else {
            return .failure(AnswerError(line: line, reason: "expected 'place \(seq) COLUMN up|right|down|left'"))
        }
        guard Int(words[1]) == seq else {
            return .failure(AnswerError(line: line, reason: "answers state \(words[1]), expected \(seq)"))
        }
        guard let column = Int(words[2]), (0..<Board.columnsCount).contains(column) else {
            return .failure(AnswerError(line: line, reason: "column must be 0 to \(Board.columnsCount - 1)"))
        }
        let orientations: [Substring: Orientation] = ["up": .up, "right": .right, "down": .down, "left": .left]
        guard let orientation = orientations[words[3]] else {
            return .failure(AnswerError(line: line, reason: "orientation must be up, right, down or left"))
        }
        let placement = Placement(column: column, orientation: orientation)
        guard Placement.all.contains(placement) else {
            return .failure(AnswerError(line: line, reason: "the child egg would be outside the grid"))
        }
        return .success(placement)
    }
}
