import EggGame
import EggPrimitives
import Foundation
import PeerNet
import Testing
@testable import Consensus

/// The codec's sample messages plus one of every kind and optional field they lack (room
/// settings, ready marks, grids with garbage, offsets, a snapshot with a room, the tsu rules, a
/// starting height), so every parser branch has a field to mutate.
let fuzzSamples: [MatchMessage] = sampleMessages + [
    .roomSettings(version: 4, settings: MatchSettings(speed: 2, colors: 5, gamesPerMatch: 5, startingHeight: 3)),
    .roomSettings(version: 0, settings: MatchSettings(speed: 1, colors: 4, gamesPerMatch: 1, ruleSet: .tsu)),
    .ready(match: 2, key: SettingsKey(version: 3, author: PeerID(0xabc)), settings: .default, wantsToPlay: true),
    .startProposal(match: 1, settings: MatchSettings(speed: 0, colors: 6, gamesPerMatch: 1, ruleSet: .tsu), wantsToPlay: true),
    .unready(match: 9),
    .go(match: 1),
    .forfeit(game: 7),
    .inputs(game: 3, items: [.offsetGarbage(5), .offsetGarbage(MatchMessage.garbageOffsetMax), .ticks(12), .spawn]),
    .grids(game: 2, pictures: [
        GridPicture(player: PeerID(1), pairs: 12, cells: (0..<GridPicture.cellsCount).map { UInt8($0 % 8) }, garbage: 4),
        GridPicture(player: PeerID(2), pairs: 11, cells: Array(repeating: 0, count: GridPicture.cellsCount)),
    ]),
    .snapshot(Snapshot(
        view: .max, matchRound: 3, nextGame: 2,
        lobby: [LobbyEntry(peer: PeerID(1), name: "a", role: .player), LobbyEntry(peer: PeerID(3), name: "c ✨", role: .spectator)],
        match: MatchSnapshot(settings: MatchSettings(speed: 4, colors: 5, gamesPerMatch: 5, startingHeight: 2),
                             players: [PeerID(1), PeerID(2), PeerID(3)], wins: [0, 2, 1], game: 1, frontier: 9,
                             pairsSpawned: [9, 8, 7]),
        room: RoomSnapshot(settings: .default, key: SettingsKey(version: 2, author: PeerID(1)),
                           marks: [PeerID(1): true, PeerID(2): false], goLeader: PeerID(2)))),
]

/// Replaces, drops, adds and duplicates one field of a JSON value (at any depth: object values
/// and array elements) with hostile values, driven by the project's seeded ``SplitMix64`` so a
/// failing seed reruns exactly.
struct JSONFieldMutator {
    var rng: SplitMix64
    /// Subvalues of every sample (plausible values of the wrong field, or of the right one).
    let donors: [JSONValue]
    /// Every key of every sample (an added field is often a known, optional one).
    let keys: [String]

    init(seed: UInt64, pool: (donors: [JSONValue], keys: [String])) {
        rng = SplitMix64(seed: seed)
        (donors, keys) = pool
    }

    /// The donors and keys of `samples` (built once, shared by every seed).
    static func pool(_ samples: [JSONValue]) -> (donors: [JSONValue], keys: [String]) {
        var donors: [JSONValue] = [], keys: Set<String> = []
        func walk(_ value: JSONValue) {
            donors.append(value)
            switch value {
            case .array(let items): items.forEach(walk)
            case .object(let pairs):
                for (key, item) in pairs {
                    keys.insert(key)
                    walk(item)
                }
            default: break
            }
        }
        samples.forEach(walk)
        return (donors, keys.sorted() + ["bytes", "garbage", "height", "room", "rules", "end", "unknown", ""])
    }

    mutating func below(_ bound: Int) -> Int { rng.nextInt(below: bound) }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    static let ints: [Int64] = [
        .min, .max, Int64(UInt32.max) + 1, Int64(UInt32.max), Int64(Int32.max) + 1, -1, 0, 1, 2, 3, 4, 6, 7, 8, 9, 10,
        16, 17, 91, 100, 101, 255, 256, 400, 401, 3_600, 3_601, 65_535, 65_536, 1 << 20, (1 << 20) + 1, 1 << 53,
        -(1 << 53), Int64(EggRounds.roundsMax), Int64(EggRounds.roundsMax) + 1, .min + 1,
    ]
    static let doubles: [Double] = [1e308, -1e308, -0.0, 0.0, 0.5, 1.0, 3.0, 4_294_967_296.0, 5e-324]
    static let strings: [String] = {
        let cells = GridPicture.cellsCount
        return [
            "", " ", "万", "௲", "٣", "³", "½", "1\u{301}", "٣٣", "１２", "𝟗", "Ⅻ", "⑦",
            "0123456789ABCDEF", "+123456789abcdef", "-000000000000001", "-0000000000000000", "0123456789abcdeg",
            "0123456789abcde", "0123456789abcdef0", "0x23456789abcdef", " 123456789abcdef", "0123456789abcdé",
            "٣٣٣٣٣٣٣٣", "ffffffffffffffff", "0000000000000000", "+f", "-0", "ff0", "0g", "é", "FF00",
            "sfe", "tsu", "SFE", "player", "spectator", "invalid", "snapshot", "hello", "grids",
            "spawn", "ticks:0", "ticks:1", "ticks:3601", "ticks:-1", "ticks:+1", "ticks:01", "ticks:٣", "ticks:万",
            "ticks:1\u{301}", "ticks:99999999999999999999", "ticks:", "garbage:91", "garbage:", "garbage:0", "garbage:-0",
            "offset:0", "offset:1048577", "offset:9223372036854775807", "offset:١", "null", "\u{0}", "\"\\", "\u{1F600}",
            String(repeating: "7", count: cells), String(repeating: "8", count: cells), String(repeating: "9", count: cells),
            String(repeating: "万", count: cells), String(repeating: "٣", count: cells), String(repeating: "³", count: cells),
            String(repeating: "0", count: cells + 1), String(repeating: "0", count: cells - 1),
            String(repeating: "1\u{301}", count: cells), String(repeating: "x", count: 25), String(repeating: "é", count: 13),
            String(repeating: "x", count: 5_000), String(repeating: "9", count: 5_000), String(repeating: "万", count: 3_000),
            String(repeating: "ab", count: 1_001),
        ]
    }()

    /// Characters spliced into a string field: digits of other scripts (worth over 255, or
    /// fractions), a combining mark, non-hex letters, signs, a NUL.
    static let exotic: [String] = ["万", "௲", "٣", "³", "½", "𝟗", "\u{301}", "é", "G", "g", "F", "+", "-", " ", "\u{0}", "x", "0", "9", "\""]

    /// One hostile value, often shaped after `original` (the value it replaces): a string with a
    /// character spliced in or swapped, cased, cut or doubled; an integer off by one, negated or
    /// past 32 bits.
    mutating func hostile(_ original: JSONValue?) -> JSONValue {
        if case .string(let text) = original, below(2) == 0 {
            var chars = Array(text)
            switch below(6) {
            case 0: chars.insert(contentsOf: pick(Self.exotic), at: below(chars.count + 1))
            case 1 where !chars.isEmpty:
                let at = below(chars.count)
                chars.replaceSubrange(at...at, with: Array(pick(Self.exotic)))
            case 2: return .string(text.uppercased())
            case 3 where !chars.isEmpty: chars.removeLast()
            case 4: return .string(text + text)
            default:
                // The whole string in another script's digits, one character each.
                let digit = pick(["万", "௲", "٣", "³", "½", "𝟗"])
                chars = Array(String(repeating: digit, count: max(1, chars.count)))
            }
            return .string(String(chars))
        }
        if case .int(let n) = original, below(2) == 0 {
            return .int(pick([n &+ 1, n &- 1, 0 &- n, n &+ (1 << 32), n &* 1_000, .min, .max, -1]))
        }
        switch below(10) {
        case 0, 1: return .int(pick(Self.ints))
        case 2: return .double(pick(Self.doubles))
        case 3, 4: return .string(pick(Self.strings))
        case 5:
            let wrapped = original ?? .null
            return pick([.null, .bool(true), .bool(false), .array([]), .object([]), .array([wrapped]),
                         .object([("x", wrapped)]), .array([.int(1)]), .object([("type", .string("leave"))])])
        case 6:
            // A very long array of one plausible or hostile element.
            let element: JSONValue
            switch below(3) {
            case 0: element = original?.arrayValue?.first ?? pick(donors)
            case 1: element = pick(donors)
            default: element = below(2) == 0 ? .int(pick(Self.ints)) : .string(pick(Self.strings.filter { $0.utf8.count < 100 }))
            }
            let count = pick([2, 7, 8, 9, 16, 17, 100, 101, 400, 401, 1_001, 3_000])
            return .array(Array(repeating: element, count: count))
        case 7:
            // The array it replaces, one element longer, shorter, or empty.
            guard var items = original?.arrayValue, !items.isEmpty else { return pick(donors) }
            switch below(3) {
            case 0: items.insert(items[below(items.count)], at: below(items.count + 1))
            case 1: items.remove(at: below(items.count))
            default: items = []
            }
            return .array(items)
        default:
            return pick(donors)
        }
    }

    static func isContainer(_ value: JSONValue) -> Bool {
        switch value {
        case .array, .object: true
        default: false
        }
    }

    /// Paths (child indices, object pairs and array elements alike) to every value in `value`.
    static func paths(_ value: JSONValue, _ prefix: [Int] = [], into out: inout [[Int]]) {
        out.append(prefix)
        switch value {
        case .array(let items): for (index, item) in items.enumerated() { paths(item, prefix + [index], into: &out) }
        case .object(let pairs): for (index, pair) in pairs.enumerated() { paths(pair.1, prefix + [index], into: &out) }
        default: break
        }
    }

    static func value(_ root: JSONValue, at path: ArraySlice<Int>) -> JSONValue {
        guard let first = path.first else { return root }
        switch root {
        case .array(let items): return value(items[first], at: path.dropFirst())
        case .object(let pairs): return value(pairs[first].1, at: path.dropFirst())
        default: return root
        }
    }

    static func modify(_ root: inout JSONValue, at path: ArraySlice<Int>, _ edit: (inout JSONValue) -> Void) {
        guard let first = path.first else { return edit(&root) }
        switch root {
        case .array(var items):
            modify(&items[first], at: path.dropFirst(), edit)
            root = .array(items)
        case .object(var pairs):
            modify(&pairs[first].1, at: path.dropFirst(), edit)
            root = .object(pairs)
        default: break
        }
    }

    /// `value` with one field replaced, dropped, added or duplicated; the root stays an object
    /// unless `keepRoot` is false.
    mutating func mutate(_ value: JSONValue, keepRoot: Bool = true) -> JSONValue {
        var all: [[Int]] = []
        Self.paths(value, into: &all)
        var mutant = value
        switch below(8) {
        case 0:
            // Drop a field or an array element.
            let children = all.filter { !$0.isEmpty }
            guard !children.isEmpty else { return hostile(value) }
            let path = pick(children)
            Self.modify(&mutant, at: path.dropLast()) { parent in
                switch parent {
                case .array(var items): items.remove(at: path.last!); parent = .array(items)
                case .object(var pairs): pairs.remove(at: path.last!); parent = .object(pairs)
                default: break
                }
            }
        case 1, 2:
            // Add a field (unknown, optional or a duplicate of one there) to an object, before or
            // after the others: a duplicate before the original is the one a reader sees.
            let objects = all.filter { if case .object = Self.value(value, at: $0[...]) { true } else { false } }
            guard !objects.isEmpty else { return hostile(value) }
            let path = pick(objects)
            let target = Self.value(value, at: path[...])
            var key = pick(keys)
            var original: JSONValue?
            if below(2) == 0, case .object(let pairs) = target, !pairs.isEmpty {
                (key, original) = pick(pairs)
            }
            let field = (key, below(4) == 0 && original != nil ? original! : hostile(original))
            Self.modify(&mutant, at: path[...]) { object in
                guard case .object(var pairs) = object else { return }
                pairs.insert(field, at: below(pairs.count + 1))
                object = .object(pairs)
            }
        default:
            // Mostly a scalar (the fields parsers convert), sometimes any value, the root too.
            let leaves = all.filter { !$0.isEmpty && !Self.isContainer(Self.value(value, at: $0[...])) }
            let candidates = !leaves.isEmpty && below(4) != 0 ? leaves : (keepRoot ? all.filter { !$0.isEmpty } : all)
            guard !candidates.isEmpty else { return hostile(value) }
            let path = pick(candidates)
            let replacement = hostile(Self.value(value, at: path[...]))
            Self.modify(&mutant, at: path[...]) { $0 = replacement }
        }
        return mutant
    }
}

/// Seeds to run: all of `0..<count` (`0..<EGGS_FUZZ_SEEDS` for a longer hunt), or the one
/// `EGGS_FUZZ_SEED` names (to rerun a failure). With `EGGS_FUZZ_TRACE=1` every mutant is
/// printed to stderr before it is parsed, so a trap's last line names its seed and input.
private func fuzzSeeds(_ count: UInt64) -> [UInt64] {
    let environment = ProcessInfo.processInfo.environment
    if let text = environment["EGGS_FUZZ_SEED"], let seed = UInt64(text) { return [seed] }
    return Array(0..<(environment["EGGS_FUZZ_SEEDS"].flatMap { UInt64($0) } ?? count))
}

private let fuzzTrace = ProcessInfo.processInfo.environment["EGGS_FUZZ_TRACE"] != nil

private func trace(_ text: @autoclosure () -> String) {
    guard fuzzTrace else { return }
    FileHandle.standardError.write(Data((text() + "\n").utf8))
}

private func shown(_ value: JSONValue) -> String {
    let text = value.serialized
    return text.utf8.count <= 400 ? text : String(text.prefix(400)) + "… (\(text.utf8.count) bytes)"
}

@Suite("JSON field fuzz")
struct JSONFieldFuzzTests {
    static let seeds: UInt64 = 300

    @Test("the fuzz samples cover every message kind and round-trip through JSON")
    func samplesRoundTrip() {
        for message in fuzzSamples {
            #expect(message.isValid)
            #expect(MatchMessage(json: message.json) == message, "\(message.json.serialized)")
        }
        let types = Set(fuzzSamples.compactMap { $0.json["type"]?.stringValue })
        #expect(types == ["hello", "votes", "start", "inputs", "checkpoint", "gameOver", "clock", "snapshot", "leave",
                          "settings", "ready", "unready", "go", "grids", "forfeit"])
    }

    @Test("hex with a sign (which UInt64(_:radix:) takes) is no peer ID, hash or payload")
    func signedHex() {
        for hash in ["+123456789abcdef", "-000000000000000", "-000000000000001"] {
            let checkpoint = JSONValue.object([("type", .string("checkpoint")), ("game", .int(1)), ("pairs", .int(2)),
                                               ("hash", .string(hash))])
            #expect(MatchMessage(json: checkpoint) == nil, "\(hash)")
        }
        #expect(MatchMessage(json: .object([("type", .string("checkpoint")), ("game", .int(1)), ("pairs", .int(2)),
                                            ("hash", .string("0123456789ABCDEF"))])) == .checkpoint(game: 1, pairs: 2, hash: 0x0123_4567_89ab_cdef))
    }

    @Test("an invalid payload's bytes are hex digit pairs: no sign")
    func signedPayloadHex() {
        #expect(LogReader.parseHexBytes("ff00") == [0xff, 0x00])
        #expect(LogReader.parseHexBytes("FF") == [0xff])
        for bad in ["+f", "-0", "ff+f", "0-", "f", "é0", "٣٣"] { #expect(LogReader.parseHexBytes(bad) == nil, "\(bad)") }
    }

    /// Every sample message once per seed (24 samples × 300 seeds = 7,200 mutants): one field replaced with a hostile value (or dropped,
    /// added, duplicated). A mutant that parses is valid and re-renders to itself; the mutant's
    /// text parses back to the same JSON value and the same message; nothing traps.
    @Test("one hostile field in any message: rejected, or parsed to a valid message that round-trips; never a trap")
    func messageFields() {
        let samples = fuzzSamples.map(\.json)
        let pool = JSONFieldMutator.pool(samples)
        var failures = 0
        var parsedCount = 0
        func fail(_ what: String, _ seed: UInt64, _ index: Int, _ mutant: JSONValue) {
            failures += 1
            if failures <= 20 { Issue.record("seed \(seed), sample \(index): \(what): \(shown(mutant))") }
        }
        for seed in fuzzSeeds(Self.seeds) {
            var mutator = JSONFieldMutator(seed: seed, pool: pool)
            for (index, sample) in samples.enumerated() {
                let mutant = mutator.mutate(sample, keepRoot: mutator.below(50) != 0)
                trace("seed \(seed), sample \(index): \(shown(mutant))")
                let parsed = MatchMessage(json: mutant)
                let text = mutant.serialized
                let reparsed = JSONValue.parse(text)
                if reparsed != mutant { fail("its text parses to another JSON value", seed, index, mutant) }
                if let reparsed, MatchMessage(json: reparsed) != parsed { fail("its text parses to another message", seed, index, mutant) }
                guard let message = parsed else { continue }
                parsedCount += 1
                if !message.isValid { fail("parsed to an invalid message", seed, index, mutant) }
                if MatchMessage(json: message.json) != message { fail("does not round-trip", seed, index, mutant) }
                if JSONValue.parse(message.json.serialized).flatMap(MatchMessage.init(json:)) != message {
                    fail("its rendering's text does not round-trip", seed, index, mutant)
                }
                // A message a log line may hold: within the wire limit it decodes to itself.
                let bytes = message.encoded()
                if bytes.count <= MatchMessage.bytesMax, MatchMessage.decode(bytes) != message {
                    fail("its binary encoding does not decode to it", seed, index, mutant)
                }
            }
        }
        #expect(failures == 0)
        // The mutator keeps some mutants parseable (harmless fields, same-valued duplicates).
        #expect(parsedCount > 0)
    }

    /// A small log (header, a view, one delivery per sample message, an invalid payload, the end
    /// line) with one line mutated before the digests are computed (one log per seed, 300 logs), so the reader parses the
    /// hostile line rather than stopping at a digest mismatch. The whole log is replayed (reader
    /// and replica): it verifies or is damaged at the mutated line, and never traps.
    @Test("one hostile field in any line of a sealed log: damage at that line or a replay; never a trap")
    func logLines() throws {
        let lines = Self.fuzzLog
        _ = try Replay.verify(MessageLog.sealed(lines))  // the unmutated log replays
        let values = lines.map { JSONValue.parse($0)! }
        let pool = JSONFieldMutator.pool(values)
        var failures = 0
        for seed in fuzzSeeds(Self.seeds) {
            var mutator = JSONFieldMutator(seed: seed, pool: pool)
            do {
                let index = mutator.below(values.count)
                let mutant = mutator.mutate(values[index])
                var edited = lines
                edited[index] = mutant.serialized
                trace("log seed \(seed), line \(index + 1): \(shown(mutant))")
                do throws(ReplayError) {
                    _ = try Replay.verify(MessageLog.sealed(edited))
                } catch {
                    // A first message's seq (or sender) changed reads as a delivery of its own: the
                    // order breaks at that sender's next line, which is where it can be seen.
                    let reordered = error.line > index + 1
                        && (mutant["seq"] != values[index]["seq"] || mutant["from"] != values[index]["from"])
                    if error.line != index + 1 && !reordered {
                        failures += 1
                        if failures <= 20 {
                            Issue.record("seed \(seed), line \(index + 1): damage named at line \(error.line) (\(error.reason)): \(shown(mutant))")
                        }
                    }
                }
            }
        }
        #expect(failures == 0)
    }

    /// The unsealed lines of the fuzzed log, recorded by `bob` in `alice`'s room.
    static let fuzzLog: [String] = {
        let view = MessageLog.line(for: .viewChanged(MembershipView(id: 2, members: [alice, bob], joined: [bob], key: 7)),
                                   atMicroseconds: 1)!
        let invalid = JSONValue.object([("type", .string("invalid")), ("bytes", .string("ff00"))])
        let deliveries = (fuzzSamples.map(\.json) + [invalid]).enumerated().map { index, msg in
            JSONValue.object([("from", .string(alice.hex)), ("seq", .int(Int64(index + 1))), ("at", .int(Int64(index + 2))),
                              ("msg", msg)]).serialized
        }
        let lines = [MessageLog.header(peer: bob, room: "eggs", rules: "sfe", startingHeight: 2), view] + deliveries
        return lines + [MessageLog.end(lines: lines.count, atMicroseconds: 1_000)]
    }()
}
