import EggGame
import EggPrimitives
import PeerNet
import Testing
@testable import Consensus

/// The log reader reads `inputs`, `checkpoint` and `votes` lines as the writer writes them in
/// place, without a JSON tree (``LogReader/messageLine(_:)``), and every other line through the
/// JSON reader. The two must
/// agree: on every line the in-place reader takes, the same event; on every line it leaves,
/// the general reader's event or error. These tests read byte-mutated lines both ways.
@Suite("Log reader: common lines read in place")
struct LogFastPathTests {
    /// `inputs` messages as peers send them, and at their limits.
    static let messages: [MatchMessage] = [
        .inputs(game: 4_015_445_309, items: [.ticks(12)]),
        .inputs(game: 0, items: [.spawn, .move(.left), .move(.right), .move(.rotateCW), .move(.rotateCCW), .move(.down),
                                 .move(.hardDrop), .ticks(1), .ticks(MatchMessage.ticksPerItemMax)]),
        .inputs(game: UInt32.max, items: [.landGarbage(0), .landGarbage(MatchMessage.garbageLandMax), .offsetGarbage(1),
                                          .offsetGarbage(MatchMessage.garbageOffsetMax)]),
        .inputs(game: 7, items: Array(repeating: .move(.down), count: MatchMessage.inputsPerMessageMax)),
        .checkpoint(game: 4_015_445_309, pairs: 17, hash: 0x0123_4567_89ab_cdef),
        .checkpoint(game: UInt32.max, pairs: UInt32.max, hash: .max),
        .votes(game: 3, firstRound: 0, values: [0, 1, .max, 0x00ff_00ff_00ff_00ff]),
        .votes(game: 9, firstRound: UInt32(EggRounds.roundsMax) - 1, values: [42]),
        .votes(game: 1, firstRound: 10, values: (0..<UInt64(MatchMessage.votesPerMessageMax)).map { $0 &* 0x9E37_79B9_7F4A_7C15 }),
    ]

    /// A delivery line of `message` (unsealed).
    static func line(_ message: MatchMessage, seq: Int64, at: Int64, from: PeerID = alice) -> String {
        JSONValue.object([("from", .string(from.hex)), ("seq", .int(seq)), ("at", .int(at)), ("msg", message.json)]).serialized
    }

    /// The events of `text` read with or without the in-place reader, up to the first error.
    static func read(_ text: String, inPlace: Bool) -> (events: [LogReaderEvent], error: ReplayError?, inPlace: Int) {
        var reader = LogReader()
        reader.readsInPlace = inPlace
        reader.receive(Array(text.utf8))
        reader.finish()
        var events: [LogReaderEvent] = []
        do throws(ReplayError) {
            while true {
                let event = try reader.nextEvent()
                events.append(event)
                if event == .end { break }
            }
        } catch {
            return (events, error, reader.linesReadInPlace)
        }
        return (events, nil, reader.linesReadInPlace)
    }

    static let carol = PeerID(0xca201)
    static let head = [MessageLog.header(peer: bob, room: "eggs"),
                       MessageLog.line(for: .viewChanged(MembershipView(id: 2, members: [alice, bob, Self.carol], joined: [bob], key: 7)),
                                       atMicroseconds: 1)!]

    @Test("the writer's inputs, checkpoint and votes lines are read in place, to the events the JSON reader gives")
    func writerLines() {
        var lines = Self.head
        for (index, message) in Self.messages.enumerated() {
            lines.append(Self.line(message, seq: Int64(index + 1), at: Int64(index) * 1_000_000_007))
        }
        // The largest values a number in place holds (18 digits), and the general reader's beyond.
        // (From two other members: each is a sender's first message, so any seq is in order.)
        lines.append(Self.line(Self.messages[0], seq: 999_999_999_999_999_999, at: 999_999_999_999_999_999, from: bob))
        lines.append(Self.line(Self.messages[0], seq: .max, at: 0, from: Self.carol))
        let text = MessageLog.sealed(lines)
        let fast = Self.read(text, inPlace: true), general = Self.read(text, inPlace: false)
        #expect(fast.error == nil && general.error == nil)
        #expect(fast.events == general.events)
        #expect(fast.inPlace == Self.messages.count + 1, "every line but the 19-digit seq's is read in place")
        #expect(general.inPlace == 0)
        // And the events are the messages written.
        let payloads = fast.events.compactMap { event -> [UInt8]? in
            if case .event(.delivered(let d), _, _) = event { d.payload } else { nil }
        }
        #expect(payloads.prefix(Self.messages.count).map(MatchMessage.decode) == Self.messages.map(Optional.some))
    }

    /// What a mutation writes: every character the line's grammar gives a meaning to, and some it
    /// does not (a control character, DEL, a two-byte letter).
    static let mutationTokens: [[UInt8]] = "0123456789abcdefABCDEF\"\\ ,:[]{}-+.eE\t".utf8.map { [$0] }
        + [[0x00], [0x1f], [0x7f], Array("é".utf8), Array("٣".utf8)]

    @Test("a byte changed, inserted, deleted or a span repeated in an inputs, checkpoint or votes line: both readers agree")
    func mutatedLines() {
        var rng = SplitMix64(seed: 0x1090_f457)
        var read = 0, inPlace = 0, rejected = 0
        for round in 0..<4_000 {
            let message = Self.messages[round % Self.messages.count]
            var bytes = Array(Self.line(message, seq: Int64(round + 1), at: Int64(round) * 16_666).utf8)
            for _ in 0...rng.nextInt(below: 2) {
                let position = rng.nextInt(below: bytes.count)
                let token = Self.mutationTokens[rng.nextInt(below: Self.mutationTokens.count)]
                switch rng.nextInt(below: 4) {
                case 0: bytes.replaceSubrange(position...position, with: token)
                case 1: bytes.insert(contentsOf: token, at: position)
                case 2: if bytes.count > 2 { bytes.remove(at: position) }
                default:
                    let end = min(bytes.count, position + 1 + rng.nextInt(below: 12))
                    bytes.insert(contentsOf: bytes[position..<end], at: end)
                }
            }
            // Sealing needs one JSON object's braces and UTF-8; the rest of the line may be anything.
            guard bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}"), !bytes.contains(0x0a),
                  let body = String(validating: bytes, as: UTF8.self) else { continue }
            let text = MessageLog.sealed(Self.head + [body])
            let fast = Self.read(text, inPlace: true), general = Self.read(text, inPlace: false)
            read += 1
            if fast.events != general.events || fast.error != general.error {
                Issue.record("""
                    round \(round): the readers differ on \(body): in place \(String(describing: fast.events.last)) \
                    \(String(describing: fast.error)), JSON \(String(describing: general.events.last)) \(String(describing: general.error))
                    """)
            }
            inPlace += fast.inPlace
            if general.error != nil { rejected += 1 }
        }
        // The mutants exercise both ways: some still read in place, many rejected.
        #expect(read > 2_700)
        #expect(inPlace > 100)
        #expect(rejected > 500)
    }

    @Test("the reader finds each line's end eight bytes at a time where a byte-by-byte search does")
    func newlineSearch() {
        var rng = SplitMix64(seed: 0x0a0a)
        for _ in 0..<2_000 {
            let count = rng.nextInt(below: 40)
            // Newlines, bytes one off a newline (0x0b, 0x09, 0x8a) and others.
            let bytes = (0..<count).map { _ in [0x0a, 0x0b, 0x09, 0x8a, 0x00, 0xff, 0x41][rng.nextInt(below: 7)] as UInt8 }
            for start in 0...count {
                #expect(LogReader.newline(in: bytes, from: start) == bytes[start...].firstIndex(of: 0x0a))
            }
        }
    }

    @Test("an inputs line too big for a datagram is damage either way")
    func oversized() {
        let items = Array(repeating: StreamInput.offsetGarbage(MatchMessage.garbageOffsetMax), count: MatchMessage.inputsPerMessageMax)
        let text = MessageLog.sealed(Self.head + [Self.line(.inputs(game: 1, items: items), seq: 1, at: 5)])
        let fast = Self.read(text, inPlace: true), general = Self.read(text, inPlace: false)
        #expect(fast.error != nil)
        #expect(fast.error == general.error)
        #expect(fast.error?.line == 3)
    }
}
