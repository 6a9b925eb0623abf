import EggPrimitives

extension LogReader {
    /// A message line read in place.
    struct MessageLine: Equatable {
        var from: UInt64
        var seq: Int64
        var at: Int64
        var message: MatchMessage
    }

    /// Reads the log's common lines, `inputs`, `checkpoint` and `votes` messages, in the exact
    /// form the writer gives them:
    ///
    ///     {"from":"<16 hex>","seq":N,"at":N,"msg":{"type":"inputs","game":N,"inputs":["…",…]}
    ///     {"from":"<16 hex>","seq":N,"at":N,"msg":{"type":"checkpoint","game":N,"pairs":N,"hash":"<16 hex>"}
    ///     {"from":"<16 hex>","seq":N,"at":N,"msg":{"type":"votes","game":N,"first":N,"values":["<16 hex>",…]}
    ///
    /// `body` is the line up to its `,"d":"…"}` (checked with the digest before). No JSON tree,
    /// no strings: nearly all of a replay's lines are these. The fast path takes only lines the
    /// general reader reads to the same message (keys in the writer's order, none twice, no
    /// spaces, no escapes, numbers of 18 digits at most without a sign or a leading zero, every
    /// value within its limits); for anything else it returns nil and the general
    /// reader takes the line, with its errors. `LogFastPathTests` checks the two agree on the
    /// mutants of every such line.
    static func messageLine(_ body: UnsafeBufferPointer<UInt8>) -> MessageLine? {
        var cursor = Cursor(bytes: body)
        guard cursor.take("{\"from\":\""), let from = cursor.hex16(), cursor.take("\",\"seq\":"),
              let seq = cursor.number(), cursor.take(",\"at\":"), let at = cursor.number(),
              cursor.take(",\"msg\":{\"type\":\"") else { return nil }
        let message: MatchMessage
        if cursor.take("inputs\",\"game\":") {
            guard let game = cursor.u32(), cursor.take(",\"inputs\":[") else { return nil }
            var items: [StreamInput] = []
            items.reserveCapacity(4)
            repeat {
                guard items.count < MatchMessage.inputsPerMessageMax, let item = cursor.item() else { return nil }
                items.append(item)
            } while cursor.take(",")
            guard cursor.take("]}") else { return nil }
            message = .inputs(game: game, items: items)
        } else if cursor.take("checkpoint\",\"game\":") {
            guard let game = cursor.u32(), cursor.take(",\"pairs\":"), let pairs = cursor.u32(),
                  cursor.take(",\"hash\":\""), let hash = cursor.hex16(), cursor.take("\"}") else { return nil }
            message = .checkpoint(game: game, pairs: pairs, hash: hash)
        } else if cursor.take("votes\",\"game\":") {
            guard let game = cursor.u32(), cursor.take(",\"first\":"), let first = cursor.u32(),
                  cursor.take(",\"values\":[") else { return nil }
            var values: [UInt64] = []
            repeat {
                guard values.count < MatchMessage.votesPerMessageMax, cursor.take("\""), let value = cursor.hex16(),
                      cursor.take("\"") else { return nil }
                values.append(value)
            } while cursor.take(",")
            guard cursor.take("]}") else { return nil }
            message = .votes(game: game, firstRound: first, values: values)
        } else {
            return nil
        }
        guard cursor.isAtEnd, message.isValid else { return nil }
        return MessageLine(from: from, seq: seq, at: at, message: message)
    }

    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        /// Advances past `literal` if the bytes here are it.
        mutating func take(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard bytes.count - offset >= count else { return false }
            let start = literal.utf8Start
            for index in 0..<count where bytes[offset &+ index] != start[index] { return false }
            offset += count
            return true
        }

        /// 16 hex digits (``parseHex16(utf8:)``, as the general reader reads them).
        mutating func hex16() -> UInt64? {
            guard bytes.count - offset >= 16,
                  let value = parseHex16(utf8: UnsafeBufferPointer(rebasing: bytes[offset..<offset + 16])) else { return nil }
            offset += 16
            return value
        }

        /// A count as the general reader takes it for a number the writer writes: the digits here,
        /// read by ``MatchMessage/decimal(utf8:)`` (1 to 18 of them, no sign, no leading zero).
        mutating func number() -> Int64? {
            let start = offset
            while offset < bytes.count, bytes[offset] >= UInt8(ascii: "0"), bytes[offset] <= UInt8(ascii: "9") { offset += 1 }
            return MatchMessage.decimal(utf8: UnsafeBufferPointer(rebasing: bytes[start..<offset])).map(Int64.init)
        }

        /// A number within `UInt32` (what the general reader's `u32` takes).
        mutating func u32() -> UInt32? {
            guard let value = number(), value <= Int64(UInt32.max) else { return nil }
            return UInt32(value)
        }

        /// One stream item: a string of printable ASCII without escapes, named as the writer names it.
        mutating func item() -> StreamInput? {
            guard take("\"") else { return nil }
            let start = offset
            while offset < bytes.count, bytes[offset] != UInt8(ascii: "\"") {
                let byte = bytes[offset]
                guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
                offset += 1
            }
            guard offset < bytes.count else { return nil }
            let name = UnsafeBufferPointer(rebasing: bytes[start..<offset])
            offset += 1
            return MatchMessage.parseInput(utf8: name)
        }
    }
}
