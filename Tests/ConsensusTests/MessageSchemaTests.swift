import EggGame
import EggPrimitives
import PeerNet
import Testing
@testable import Consensus

/// Random valid messages of every kind from the project's seeded ``SplitMix64`` (a failing seed
/// reruns exactly): values often at the ends of their ranges, names with escapes and non-ASCII.
struct MessageGenerator {
    var rng: SplitMix64

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    mutating func below(_ bound: Int) -> Int { rng.nextInt(below: bound) }
    mutating func oneIn(_ n: Int) -> Bool { below(n) == 0 }

    /// A value in `range`: an end of it a quarter of the time, else small or anywhere.
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        switch below(4) {
        case 0: return below(2) == 0 ? range.lowerBound : range.upperBound
        case 1: return range.lowerBound + below(min(range.count, 10))
        default: return range.lowerBound + Int(rng.next() % UInt64(range.count))
        }
    }

    mutating func u32(max: UInt32 = .max) -> UInt32 { UInt32(int(0...Int(max))) }
    mutating func u64() -> UInt64 { [0, .max, rng.next(), rng.next() >> 40][below(4)] }
    /// `count` distinct peers (in drawing order: a set's order differs between processes).
    mutating func peers(_ count: Int) -> [PeerID] {
        var seen: Set<PeerID> = [], out: [PeerID] = []
        while out.count < count {
            let peer = PeerID(u64() ^ UInt64(out.count))
            if seen.insert(peer).inserted { out.append(peer) }
        }
        return out
    }

    static let scalars: [String] = ["a", "Z", "0", " ", "é", "✨", "😀", "\"", "\\", "\n", "\u{1}", "万", "/"]

    /// A string of at most `maxBytes` UTF-8 bytes (cut on a scalar boundary).
    mutating func text(maxBytes: Int) -> String {
        var text = ""
        for _ in 0..<below(maxBytes + 4) { text += Self.scalars[below(Self.scalars.count)] }
        var out = ""
        for character in text where out.utf8.count + character.utf8.count <= maxBytes { out.append(character) }
        return out
    }

    mutating func settings() -> MatchSettings {
        let rules = RuleSet.all[below(RuleSet.all.count)]
        return MatchSettings(speed: int(rules.speeds), colors: int(MatchSettings.colorCounts),
                             gamesPerMatch: MatchSettings.gamesPerMatchAllowed[below(4)], ruleSet: rules,
                             startingHeight: int(rules.startingHeights))
    }

    mutating func item() -> StreamInput {
        switch below(5) {
        case 0: .spawn
        case 1: .move(Move(rawValue: UInt8(below(6)))!)
        case 2: .landGarbage(int(0...MatchMessage.garbageLandMax))
        case 3: .offsetGarbage(int(1...MatchMessage.garbageOffsetMax))
        default: .ticks(int(1...MatchMessage.ticksPerItemMax))
        }
    }

    mutating func matchSnapshot() -> MatchSnapshot {
        let settings = settings()
        let players = peers(int(1...MatchMessage.playersMax))
        return MatchSnapshot(settings: settings, players: players, wins: players.map { _ in int(0...settings.gamesPerMatch) },
                             game: u32(), frontier: u32(max: EggRounds.roundsMax),
                             pairsSpawned: players.map { _ in u32(max: EggRounds.roundsMax) })
    }

    mutating func room() -> RoomSnapshot {
        let marked = peers(int(0...Snapshot.lobbyEntriesMax))
        return RoomSnapshot(settings: settings(), key: SettingsKey(version: u32(), author: PeerID(u64())),
                            marks: Dictionary(uniqueKeysWithValues: marked.map { ($0, oneIn(2)) }),
                            goLeader: oneIn(2) ? nil : PeerID(u64()))
    }

    mutating func picture(_ player: PeerID) -> GridPicture {
        GridPicture(player: player, pairs: u32(max: EggRounds.roundsMax),
                    cells: (0..<GridPicture.cellsCount).map { _ in UInt8(below(8)) },
                    garbage: oneIn(2) ? 0 : int(0...GridPicture.garbageMax))
    }

    /// A valid message of kind `tag` (within the wire's ``MatchMessage/bytesMax``).
    mutating func message(_ tag: MatchMessage.Tag) -> MatchMessage {
        while true {
            let message = anyMessage(tag)
            if message.encoded().count <= MatchMessage.bytesMax { return message }
        }
    }

    private mutating func anyMessage(_ tag: MatchMessage.Tag) -> MatchMessage {
        switch tag {
        case .hello:
            return .hello(Hello(name: text(maxBytes: Hello.nameBytesMax), role: oneIn(2) ? .player : .spectator,
                                protocolVersion: int(0...65_535), rules: text(maxBytes: MatchMessage.rulesBytesMax)))
        case .votes:
            let count = oneIn(4) ? int(1...MatchMessage.votesPerMessageMax) : int(1...8)
            return .votes(game: u32(), firstRound: u32(max: EggRounds.roundsMax - UInt32(count)),
                          values: (0..<count).map { _ in u64() })
        case .startProposal: return .startProposal(match: u32(), settings: settings(), wantsToPlay: oneIn(2))
        case .inputs:
            let count = oneIn(4) ? int(1...MatchMessage.inputsPerMessageMax) : int(1...12)
            return .inputs(game: u32(), items: (0..<count).map { _ in item() })
        case .checkpoint: return .checkpoint(game: u32(), pairs: u32(), hash: u64())
        case .gameOverVote: return .gameOverVote(game: u32(), winner: oneIn(2) ? nil : PeerID(u64()))
        case .clock: return .clock(game: u32(), tick: u32())
        case .snapshot:
            let lobby = peers(int(0...Snapshot.lobbyEntriesMax)).map {
                LobbyEntry(peer: $0, name: text(maxBytes: Hello.nameBytesMax), role: oneIn(2) ? .player : .spectator)
            }
            return .snapshot(Snapshot(view: u64(), matchRound: u32(), nextGame: u32(), lobby: lobby,
                                      match: oneIn(3) ? nil : matchSnapshot(), room: oneIn(3) ? nil : room()))
        case .leave: return .leave
        case .roomSettings: return .roomSettings(version: u32(), settings: settings())
        case .ready:
            return .ready(match: u32(), key: SettingsKey(version: u32(), author: PeerID(u64())), settings: settings(),
                          wantsToPlay: oneIn(2))
        case .unready: return .unready(match: u32())
        case .go: return .go(match: u32())
        case .forfeit: return .forfeit(game: u32())
        case .grids: return .grids(game: u32(), pictures: peers(int(1...MatchMessage.playersMax)).map { picture($0) })
        }
    }
}

/// Changes the `target`-th field a message's description names (every field of every record
/// counted), through the field's own form: the first JSON value near the old one that the form
/// reads back to another value. Run with no target, it counts the fields.
struct FieldPerturber: MessageCoder {
    let target: Int
    var index = 0
    /// The key of the field changed, if one was.
    var changed: String?
    /// Keys of fields no nearby value was found for.
    var stuck: [String] = []
    /// Every key visited.
    var keys: Set<String> = []

    init(target: Int = -1) { self.target = target }

    var failed: Bool { false }
    mutating func require(_ condition: @autoclosure () -> Bool) {}

    /// Other JSON values of the kind of `json`, nearest first.
    static func neighbours(of json: JSONValue) -> [JSONValue] {
        switch json {
        case .int(let n): return [n &+ 1, n &- 1, 0, 1, 4, 5, 7].filter { $0 != n }.map { .int($0) }
        case .bool(let b): return [.bool(!b)]
        case .string(let s):
            var out: [String] = []
            if let last = s.last {
                out.append(String(s.dropLast()) + (last == "0" ? "1" : "0"))
                out.append((s.first == "1" ? "2" : "1") + String(s.dropFirst()))
            }
            out += ["tsu", "sfe", "spectator", "player", "spawn", "left", "ticks:2", s + "x", String(s.dropLast())]
            return out.filter { $0 != s }.map { .string($0) }
        default: return []
        }
    }

    private mutating func visit<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F) {
        keys.insert(key.string)
        defer { index += 1 }
        guard index == target else { return }
        let old = form.json(value)
        for candidate in Self.neighbours(of: old) {
            if let new = form.value(json: candidate), form.json(new) != old {
                value = new
                changed = key.string
                return
            }
        }
        stuck.append(key.string)
    }

    mutating func field<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F) { visit(key, &value, form) }

    mutating func field<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F, jsonOmits omitted: F.Value)
        where F.Value: Equatable { visit(key, &value, form) }

    mutating func trailingField<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F, omitted: F.Value)
        where F.Value: Equatable { visit(key, &value, form) }

    mutating func nullable<F: FieldForm>(_ key: StaticString, _ value: inout F.Value?, _ form: F) {
        keys.insert(key.string)
        defer { index += 1 }
        guard index == target else { return }
        if value != nil {
            value = nil
        } else if let some = form.value(json: .string(hex16(0x1234))) {
            value = some
        } else {
            return stuck.append(key.string)
        }
        changed = key.string
    }

    mutating func list<F: FieldForm>(_ key: StaticString, _ values: inout [F.Value], _ form: F, count: ClosedRange<Int>) {
        guard !values.isEmpty else { return visit(key, &values, ArrayForm(element: form)) }
        // The first element, as a field of the list.
        visit(key, &values[0], form)
    }

    mutating func records<T>(_ key: StaticString, _ values: inout [T], count: ClosedRange<Int>, blank: T,
                             _ describe: (inout T, inout Self) -> Void) {
        for index in values.indices { describe(&values[index], &self) }
    }

    mutating func columns<T>(_ values: inout [T], count: ClosedRange<Int>, blank: T, _ describe: (inout T, inout Self) -> Void) {
        records("", &values, count: count, blank: blank, describe)
    }

    mutating func nullable<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void) {
        presence(key, &value, blank: blank, describe)
    }

    mutating func trailing<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void) {
        presence(key, &value, blank: blank, describe)
    }

    /// The record's presence is a field, then its fields.
    private mutating func presence<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void) {
        keys.insert(key.string)
        if index == target {
            value = value == nil ? blank : nil
            changed = key.string
        }
        index += 1
        if var record = value {
            describe(&record, &self)
            value = record
        }
    }
}

/// An empty list's stand-in form (a list is never empty in a valid message).
private struct ArrayForm<Element: FieldForm>: FieldForm {
    let element: Element
    func write(_ value: [Element.Value], to out: inout WireOut) {}
    func read(from input: inout WireIn) -> [Element.Value]? { nil }
    func json(_ value: [Element.Value]) -> JSONValue { .array(value.map(element.json)) }
    func value(json: JSONValue) -> [Element.Value]? { nil }
}

@Suite("Message schema: one description, every codec")
struct MessageSchemaTests {
    static let perKind = 150
    /// Fields changed a message in `everyFieldInBothEncodings` (spread over its fields).
    static let targetsPerMessage = 8

    /// `perKind` messages of every kind, seeded by kind.
    static let messages: [MatchMessage] = MatchMessage.Tag.allCases.flatMap { tag in
        var generator = MessageGenerator(seed: 0x5C4E_3A00 + UInt64(tag.rawValue))
        return (0..<perKind).map { _ in generator.message(tag) }
    }

    /// The log line body the fast path reads (the line up to its digest, without the closing brace).
    static func lineBody(_ message: MatchMessage, seq: Int64) -> [UInt8] {
        let line = JSONValue.object([("from", .string(alice.hex)), ("seq", .int(seq)), ("at", .int(seq * 16_667)),
                                     ("msg", message.json)]).serialized
        return Array(line.utf8.dropLast())
    }

    @Test("the generator covers every kind, every stream item, both states of every optional part")
    func coverage() {
        let messages = Self.messages
        #expect(Set(messages.map(\.tag)) == Set(MatchMessage.Tag.allCases))
        var items: Set<String> = [], optionals: Set<String> = [], rules: Set<String> = []
        for message in messages {
            switch message {
            case .inputs(_, let list):
                for item in list {
                    switch item {
                    case .spawn: items.insert("spawn")
                    case .move(let move): items.insert("move \(move)")
                    case .landGarbage: items.insert("garbage")
                    case .offsetGarbage: items.insert("offset")
                    case .ticks: items.insert("ticks")
                    }
                }
            case .gameOverVote(_, let winner): optionals.insert("winner \(winner != nil)")
            case .snapshot(let s):
                optionals.insert("match \(s.match != nil)")
                optionals.insert("room \(s.room != nil)")
                if let room = s.room { optionals.insert("go \(room.goLeader != nil)") }
                if let m = s.match { rules.insert("\(m.settings.ruleSet.name) \(m.settings.startingHeight > 0)") }
            case .grids(_, let pictures): optionals.insert("garbage \(pictures.contains { $0.garbage > 0 })")
            case .startProposal(_, let s, _), .roomSettings(_, let s), .ready(_, _, let s, _):
                rules.insert("\(s.ruleSet.name) \(s.startingHeight > 0)")
            default: break
            }
        }
        #expect(items.count == 4 + 6, "\(items.sorted())")
        #expect(optionals == ["winner true", "winner false", "match true", "match false", "room true", "room false",
                              "go true", "go false", "garbage true", "garbage false"])
        #expect(rules == ["sfe true", "sfe false", "tsu false"])
    }

    @Test("every message: wire → decode → equal; wire → JSON → text → JSON → wire: the same bytes")
    func roundTrips() {
        for message in Self.messages {
            #expect(message.isValid)
            let bytes = message.encoded()
            #expect(MatchMessage.decode(bytes) == message, "\(message)")
            let json = message.json
            let text = json.serialized
            let parsed = JSONValue.parse(text)
            #expect(parsed == json, "\(text)")
            let back = parsed.flatMap(MatchMessage.init(json:))
            #expect(back == message, "\(text)")
            #expect(back?.encoded() == bytes, "\(text)")
            #expect(MatchMessage.decode(bytes)?.json.serialized == text)
        }
    }

    @Test("every message's log line: the fast path reads its kinds to the same message and JSON tree, and leaves the rest")
    func fastPath() {
        var inPlace = 0
        for (index, message) in Self.messages.enumerated() {
            let body = Self.lineBody(message, seq: Int64(index + 1))
            let fast = body.withUnsafeBufferPointer { LogReader.messageLine($0) }
            switch message.tag {
            case .inputs, .checkpoint, .votes:
                #expect(fast?.message == message, "\(message.json.serialized)")
                #expect(fast?.message.json == message.json)
                #expect(fast?.from == alice.raw && fast?.seq == Int64(index + 1))
                inPlace += 1
            default:
                #expect(fast == nil, "\(message.tag)")
            }
        }
        #expect(inPlace == 3 * Self.perKind)
    }

    /// The property that keeps the codecs in step: a field the description names changes both
    /// encodings, and a message with it changed still round-trips through both (and the fast
    /// path). A codec that dropped or misplaced a field fails here.
    @Test("every field of every message's description appears in the wire bytes and in the JSON")
    func everyFieldInBothEncodings() {
        var perturbed = 0
        var keys: Set<String> = [], described: Set<String> = []
        for message in Self.messages {
            var counter = FieldPerturber()
            var copy = message
            copy.describe(&counter)
            described.formUnion(counter.keys.map { "\(message.tag.jsonType.string).\($0)" })
            let bytes = message.encoded(), text = message.json.serialized
            // At most `targetsPerMessage` fields a message, spread over all of them: a long list
            // of votes or items repeats one key, and every key still comes up across the messages.
            let step = max(1, counter.index / Self.targetsPerMessage)
            for target in stride(from: 0, to: counter.index, by: step) {
                var changed = message
                var perturber = FieldPerturber(target: target)
                changed.describe(&perturber)
                #expect(perturber.stuck.isEmpty, "no other value for \(perturber.stuck) in \(text)")
                guard let key = perturber.changed else { continue }
                keys.insert("\(message.tag.jsonType.string).\(key)")
                perturbed += 1
                #expect(changed != message, "\(key) in \(text)")
                #expect(changed.encoded() != bytes, "\(key) is not on the wire: \(text)")
                #expect(changed.json.serialized != text, "\(key) is not in the JSON: \(text)")
                guard changed.isValid, changed.encoded().count <= MatchMessage.bytesMax else { continue }
                #expect(MatchMessage.decode(changed.encoded()) == changed, "\(key) changed in \(text)")
                #expect(JSONValue.parse(changed.json.serialized).flatMap(MatchMessage.init(json:)) == changed,
                        "\(key) changed in \(text)")
                if [.inputs, .checkpoint, .votes].contains(changed.tag) {
                    let body = Self.lineBody(changed, seq: 1)
                    #expect(body.withUnsafeBufferPointer { LogReader.messageLine($0) }?.message == changed, "\(key) changed in \(text)")
                }
            }
        }
        #expect(perturbed > 2_000, "\(perturbed) fields changed")
        // Every key of every kind was changed at least once.
        #expect(keys == described, "never changed: \(described.subtracting(keys).sorted())")
        #expect(described.count > 60)
    }
}
