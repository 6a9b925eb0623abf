import EggGame
import EggPrimitives
import PeerNet

extension MatchMessage {
    /// The message as one JSON object with a `"type"` field (the log's `"msg"`).
    /// 64-bit values (votes, hashes, peer IDs) are 16 lowercase hex digits.
    public var json: JSONValue {
        switch self {
        case .hello(let h):
            return .object([("type", .string("hello")), ("name", .string(h.name)), ("role", .string(h.role.jsonName)),
                            ("protocol", .int(Int64(h.protocolVersion))), ("rules", .string(h.rules))])
        case .votes(let game, let first, let values):
            return .object([("type", .string("votes")), ("game", .int(Int64(game))), ("first", .int(Int64(first))),
                            ("values", .array(values.map { .string(hex16($0)) }))])
        case .startProposal(let match, let s, let play):
            return .object([("type", .string("start")), ("match", .int(Int64(match))), ("speed", .int(Int64(s.speed))),
                            ("colors", .int(Int64(s.colors))), ("games", .int(Int64(s.gamesPerMatch))),
                            ("play", .bool(play))] + Self.rulesField(s) + Self.heightField(s))
        case .inputs(let game, let items):
            return .object([("type", .string("inputs")), ("game", .int(Int64(game))),
                            ("inputs", .array(items.map { .string(Self.jsonName($0)) }))])
        case .checkpoint(let game, let pairs, let hash):
            return .object([("type", .string("checkpoint")), ("game", .int(Int64(game))),
                            ("pairs", .int(Int64(pairs))), ("hash", .string(hex16(hash)))])
        case .gameOverVote(let game, let winner):
            return .object([("type", .string("gameOver")), ("game", .int(Int64(game))),
                            ("winner", winner.map { .string($0.hex) } ?? .null)])
        case .clock(let game, let tick):
            return .object([("type", .string("clock")), ("game", .int(Int64(game))), ("tick", .int(Int64(tick)))])
        case .snapshot(let s):
            return Self.json(s)
        case .leave:
            return .object([("type", .string("leave"))])
        case .roomSettings(let version, let s):
            return .object([("type", .string("settings")), ("version", .int(Int64(version))),
                            ("speed", .int(Int64(s.speed))), ("colors", .int(Int64(s.colors))),
                            ("games", .int(Int64(s.gamesPerMatch)))] + Self.rulesField(s) + Self.heightField(s))
        case .ready(let match, let key, let s, let play):
            return .object([("type", .string("ready")), ("match", .int(Int64(match))),
                            ("version", .int(Int64(key.version))), ("author", .string(key.author.hex)),
                            ("speed", .int(Int64(s.speed))), ("colors", .int(Int64(s.colors))),
                            ("games", .int(Int64(s.gamesPerMatch))), ("play", .bool(play))] + Self.rulesField(s) + Self.heightField(s))
        case .unready(let match):
            return .object([("type", .string("unready")), ("match", .int(Int64(match)))])
        case .go(let match):
            return .object([("type", .string("go")), ("match", .int(Int64(match)))])
        case .grids(let game, let pictures):
            return .object([("type", .string("grids")), ("game", .int(Int64(game))),
                            ("grids", .array(pictures.map {
                                .object([("player", .string($0.player.hex)), ("pairs", .int(Int64($0.pairs))),
                                         ("cells", .string($0.digits))] + ($0.garbage == 0 ? [] : [("garbage", .int(Int64($0.garbage)))]))
                            }))])
        }
    }

    static func jsonName(_ item: StreamInput) -> String {
        switch item {
        case .spawn: "spawn"
        case .move(let m): m.jsonName
        case .landGarbage(let n): "garbage:\(n)"
        case .ticks(let n): "ticks:\(n)"
        case .offsetGarbage(let n): "offset:\(n)"
        }
    }

    static func parseInput(_ text: String) -> StreamInput? {
        var text = text
        return text.withUTF8 { parseInput(utf8: $0) }
    }

    /// ``parseInput(_:)`` on the name's UTF-8 bytes (the log reader's fast path reads them in place).
    static func parseInput(utf8 name: UnsafeBufferPointer<UInt8>) -> StreamInput? {
        func equals(_ word: StaticString) -> Bool {
            word.utf8CodeUnitCount == name.count && word.withUTF8Buffer { $0.elementsEqual(name) }
        }
        /// The count after `prefix`, if the name starts with it.
        func count(after prefix: StaticString) -> Int?? {
            let length = prefix.utf8CodeUnitCount
            guard name.count > length, prefix.withUTF8Buffer({ $0.elementsEqual(name[0..<length]) }) else { return nil }
            return .some(decimal(utf8: UnsafeBufferPointer(rebasing: name[length...])))
        }
        switch name.count {
        case 2: if equals("cw") { return .move(.rotateCW) }
        case 3: if equals("ccw") { return .move(.rotateCCW) }
        case 4:
            if equals("left") { return .move(.left) }
            if equals("down") { return .move(.down) }
            if equals("drop") { return .move(.hardDrop) }
        case 5:
            if equals("spawn") { return .spawn }
            if equals("right") { return .move(.right) }
        default: break
        }
        if let n = count(after: "ticks:") {
            guard let n, (1...ticksPerItemMax).contains(n) else { return nil }
            return .ticks(n)
        }
        if let n = count(after: "offset:") {
            guard let n, (1...garbageOffsetMax).contains(n) else { return nil }
            return .offsetGarbage(n)
        }
        guard let n = count(after: "garbage:"), let n, (0...garbageLandMax).contains(n) else { return nil }
        return .landGarbage(n)
    }

    /// A count as ``jsonName(_:)`` writes it: decimal digits only, no sign, no leading zero, at
    /// most 18 digits (so it never overflows); nil otherwise.
    static func decimal(utf8 digits: UnsafeBufferPointer<UInt8>) -> Int? {
        guard (1...18).contains(digits.count), digits[0] != UInt8(ascii: "0") || digits.count == 1 else { return nil }
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            value = value &* 10 &+ Int(byte &- UInt8(ascii: "0"))
        }
        return value
    }

    private static func json(_ s: Snapshot) -> JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("type", .string("snapshot")), ("view", .int(Int64(bitPattern: s.view))),
            ("matchRound", .int(Int64(s.matchRound))), ("nextGame", .int(Int64(s.nextGame))),
            ("lobby", .array(s.lobby.map {
                .object([("peer", .string($0.peer.hex)), ("name", .string($0.name)), ("role", .string($0.role.jsonName))])
            })),
        ]
        if let m = s.match {
            pairs.append(("match", .object([
                ("speed", .int(Int64(m.settings.speed))), ("colors", .int(Int64(m.settings.colors))),
                ("games", .int(Int64(m.settings.gamesPerMatch))),
            ] + Self.rulesField(m.settings) + Self.heightField(m.settings) + [
                ("players", .array(m.players.map { .string($0.hex) })),
                ("wins", .array(m.wins.map { .int(Int64($0)) })),
                ("pairsSpawned", .array(m.pairsSpawned.map { .int(Int64($0)) })),
                ("game", .int(Int64(m.game))), ("frontier", .int(Int64(m.frontier))),
            ])))
        } else {
            pairs.append(("match", .null))
        }
        if let room = s.room {
            pairs.append(("room", .object([
                ("speed", .int(Int64(room.settings.speed))), ("colors", .int(Int64(room.settings.colors))),
                ("games", .int(Int64(room.settings.gamesPerMatch))),
            ] + Self.rulesField(room.settings) + Self.heightField(room.settings) + [
                ("version", .int(Int64(room.key.version))),
                ("author", .string(room.key.author.hex)),
                ("ready", .array(room.marks.sorted { $0.key < $1.key }.map {
                    .object([("peer", .string($0.key.hex)), ("play", .bool($0.value))])
                })),
                ("go", room.goLeader.map { .string($0.hex) } ?? .null),
            ])))
        }
        return .object(pairs)
    }

    /// Parses the JSON rendering back; `nil` if anything is missing or out of range.
    /// Every field is checked against its limits (``isValid``) before the message is used.
    public init?(json: JSONValue) {
        guard let message = MatchMessage(unvalidatedJSON: json), message.isValid else { return nil }
        self = message
    }

    private init?(unvalidatedJSON json: JSONValue) {
        guard let type = json["type"]?.stringValue else { return nil }
        func u32(_ key: String, in value: JSONValue = json) -> UInt32? {
            guard let n = value[key]?.intValue, n >= 0, n <= Int64(UInt32.max) else { return nil }
            return UInt32(n)
        }
        switch type {
        case "hello":
            guard let name = json["name"]?.stringValue, name.utf8.count <= Hello.nameBytesMax,
                  let role = Self.parseRole(json["role"]?.stringValue),
                  let version = json["protocol"]?.intValue, (0...65_535).contains(version),
                  let rules = json["rules"]?.stringValue else { return nil }
            self = .hello(Hello(name: name, role: role, protocolVersion: Int(version), rules: rules))
        case "votes":
            guard let game = u32("game"), let first = u32("first"), let raw = json["values"]?.arrayValue,
                  (1...Self.votesPerMessageMax).contains(raw.count) else { return nil }
            let values = raw.compactMap { parseHex16($0.stringValue) }
            guard values.count == raw.count else { return nil }
            self = .votes(game: game, firstRound: first, values: values)
        case "start":
            guard let match = u32("match"), let speed = u32("speed"), let colors = u32("colors"),
                  let games = u32("games"), let play = json["play"]?.boolValue else { return nil }
            guard let rules = Self.parseRules(json), let height = Self.parseHeight(json) else { return nil }
            let settings = MatchSettings(speed: Int(speed), colors: Int(colors), gamesPerMatch: Int(games), ruleSet: rules,
                                         startingHeight: height)
            guard settings.isValid else { return nil }
            self = .startProposal(match: match, settings: settings, wantsToPlay: play)
        case "inputs":
            guard let game = u32("game"), let raw = json["inputs"]?.arrayValue,
                  (1...Self.inputsPerMessageMax).contains(raw.count) else { return nil }
            let items = raw.compactMap { $0.stringValue.flatMap(Self.parseInput) }
            guard items.count == raw.count else { return nil }
            self = .inputs(game: game, items: items)
        case "checkpoint":
            guard let game = u32("game"), let pairs = u32("pairs"), let hash = parseHex16(json["hash"]?.stringValue) else {
                return nil
            }
            self = .checkpoint(game: game, pairs: pairs, hash: hash)
        case "gameOver":
            guard let game = u32("game"), let winner = json["winner"] else { return nil }
            if winner == .null {
                self = .gameOverVote(game: game, winner: nil)
            } else {
                guard let raw = parseHex16(winner.stringValue) else { return nil }
                self = .gameOverVote(game: game, winner: PeerID(raw))
            }
        case "clock":
            guard let game = u32("game"), let tick = u32("tick") else { return nil }
            self = .clock(game: game, tick: tick)
        case "snapshot":
            guard let snapshot = Self.parseSnapshot(json) else { return nil }
            self = .snapshot(snapshot)
        case "leave":
            self = .leave
        case "settings":
            guard let version = u32("version"), let settings = Self.parseSettings(json) else { return nil }
            self = .roomSettings(version: version, settings: settings)
        case "ready":
            guard let match = u32("match"), let version = u32("version"),
                  let author = parseHex16(json["author"]?.stringValue), let settings = Self.parseSettings(json),
                  let play = json["play"]?.boolValue else { return nil }
            self = .ready(match: match, key: SettingsKey(version: version, author: PeerID(author)), settings: settings,
                          wantsToPlay: play)
        case "unready":
            guard let match = u32("match") else { return nil }
            self = .unready(match: match)
        case "go":
            guard let match = u32("match") else { return nil }
            self = .go(match: match)
        case "grids":
            guard let game = u32("game"), let raw = json["grids"]?.arrayValue, (1...Self.playersMax).contains(raw.count) else {
                return nil
            }
            var pictures: [GridPicture] = []
            for entry in raw {
                guard let player = parseHex16(entry["player"]?.stringValue), let pairs = u32("pairs", in: entry),
                      let digits = entry["cells"]?.stringValue, digits.count <= GridPicture.cellsCount,
                      let cells = GridPicture.cells(digits: digits) else { return nil }
                var garbage = 0
                if let raw = entry["garbage"] {
                    guard let value = raw.intValue, (0...Int64(GridPicture.garbageMax)).contains(value) else { return nil }
                    garbage = Int(value)
                }
                pictures.append(GridPicture(player: PeerID(player), pairs: pairs, cells: cells, garbage: garbage))
            }
            self = .grids(game: game, pictures: pictures)
        default:
            return nil
        }
    }

    private static func parseRole(_ text: String?) -> PeerRole? {
        switch text {
        case "player": .player
        case "spectator": .spectator
        default: nil
        }
    }

    private static func parseSettings(_ json: JSONValue) -> MatchSettings? {
        guard let speed = json["speed"]?.intValue, let colors = json["colors"]?.intValue, let games = json["games"]?.intValue,
              (0...9).contains(speed), (0...9).contains(colors), (0...9).contains(games),
              let rules = parseRules(json), let height = parseHeight(json) else { return nil }
        let settings = MatchSettings(speed: Int(speed), colors: Int(colors), gamesPerMatch: Int(games), ruleSet: rules,
                                     startingHeight: height)
        return settings.isValid ? settings : nil
    }

    /// The settings' `"rules"` field: omitted for the default rule set (`sfe`), so logs written
    /// before the field existed read the same.
    static func rulesField(_ s: MatchSettings) -> [(String, JSONValue)] {
        s.ruleSet == RuleSet.all[0] ? [] : [("rules", .string(s.ruleSet.name))]
    }

    /// The rule set a settings object names (`sfe` when it names none), or nil for an unknown one.
    static func parseRules(_ json: JSONValue) -> RuleSet? {
        guard let field = json["rules"] else { return RuleSet.all[0] }
        return field.stringValue.flatMap(RuleSet.named)
    }

    /// The settings' `"height"` field (the starting height): omitted when 0, so logs written
    /// before the field existed read the same.
    static func heightField(_ s: MatchSettings) -> [(String, JSONValue)] {
        s.startingHeight == 0 ? [] : [("height", .int(Int64(s.startingHeight)))]
    }

    /// The starting height a settings object names (0 when it names none), or nil for one that is
    /// not a small count (the rule set's range is checked with the other settings).
    static func parseHeight(_ json: JSONValue) -> Int? {
        guard let field = json["height"] else { return 0 }
        guard let height = field.intValue, (0...9).contains(height) else { return nil }
        return Int(height)
    }

    private static func parseRoom(_ json: JSONValue) -> RoomSnapshot? {
        guard let settings = parseSettings(json), let version = json["version"]?.intValue,
              (0...Int64(UInt32.max)).contains(version), let author = parseHex16(json["author"]?.stringValue),
              let readyRaw = json["ready"]?.arrayValue, readyRaw.count <= Snapshot.lobbyEntriesMax,
              let go = json["go"] else { return nil }
        var marks: [PeerID: Bool] = [:]
        for entry in readyRaw {
            guard let peer = parseHex16(entry["peer"]?.stringValue), let play = entry["play"]?.boolValue,
                  marks[PeerID(peer)] == nil else { return nil }
            marks[PeerID(peer)] = play
        }
        var leader: PeerID?
        if go != .null {
            guard let raw = parseHex16(go.stringValue) else { return nil }
            leader = PeerID(raw)
        }
        return RoomSnapshot(settings: settings, key: SettingsKey(version: UInt32(version), author: PeerID(author)),
                            marks: marks, goLeader: leader)
    }

    private static func parseSnapshot(_ json: JSONValue) -> Snapshot? {
        guard let view = json["view"]?.intValue, let matchRound = json["matchRound"]?.intValue,
              let nextGame = json["nextGame"]?.intValue, let lobbyRaw = json["lobby"]?.arrayValue,
              lobbyRaw.count <= Snapshot.lobbyEntriesMax,
              (0...Int64(UInt32.max)).contains(matchRound), (0...Int64(UInt32.max)).contains(nextGame) else { return nil }
        var lobby: [LobbyEntry] = []
        for entry in lobbyRaw {
            guard let peer = parseHex16(entry["peer"]?.stringValue), let name = entry["name"]?.stringValue,
                  let role = parseRole(entry["role"]?.stringValue) else { return nil }
            lobby.append(LobbyEntry(peer: PeerID(peer), name: name, role: role))
        }
        var snapshot = Snapshot(view: UInt64(bitPattern: view), matchRound: UInt32(matchRound),
                                nextGame: UInt32(nextGame), lobby: lobby, match: nil)
        if let room = json["room"] {
            guard let parsed = parseRoom(room) else { return nil }
            snapshot.room = parsed
        }
        guard let m = json["match"] else { return nil }
        if m == .null { return snapshot }
        let ints: (String) -> [Int]? = { key in
            guard let raw = m[key]?.arrayValue else { return nil }
            let values = raw.compactMap { $0.intValue }.filter { $0 >= 0 && $0 <= Int64(UInt32.max) }.map { Int($0) }
            return values.count == raw.count ? values : nil
        }
        guard let speed = m["speed"]?.intValue, let colors = m["colors"]?.intValue, let games = m["games"]?.intValue,
              let playersRaw = m["players"]?.arrayValue, (1...playersMax).contains(playersRaw.count),
              let wins = ints("wins"), let spawned = ints("pairsSpawned"),
              wins.count == playersRaw.count, spawned.count == playersRaw.count,
              let game = m["game"]?.intValue, let frontier = m["frontier"]?.intValue,
              (0...Int64(UInt32.max)).contains(game), (0...Int64(UInt32.max)).contains(frontier) else { return nil }
        let players = playersRaw.compactMap { parseHex16($0.stringValue) }.map(PeerID.init)
        guard let rules = parseRules(m), let height = parseHeight(m) else { return nil }
        let settings = MatchSettings(speed: Int(speed), colors: Int(colors), gamesPerMatch: Int(games), ruleSet: rules,
                                     startingHeight: height)
        guard players.count == playersRaw.count, settings.isValid else { return nil }
        snapshot.match = MatchSnapshot(settings: settings, players: players, wins: wins, game: UInt32(game),
                                       frontier: UInt32(frontier), pairsSpawned: spawned.map { UInt32($0) })
        return snapshot
    }
}
