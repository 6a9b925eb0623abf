import EggGame
import PeerNet

/// The one description of every match message: each field once, in order, with its JSON key, its
/// form (``FieldForm``) and its limit. The wire codec (`MatchMessage+Wire.swift`), the JSON codec
/// (`MatchMessage+JSON.swift`) and the log's fast path (`LogReader+MessageLine.swift`) all follow
/// it (``MessageCoder``), so adding a field to a message touches only its description here.
/// The wire bytes and the JSON text are a contract: a field added to a message that older peers
/// or logs know goes where they read nothing (``MessageCoder/trailing(_:_:blank:_:)``,
/// ``MessageCoder/trailingField(_:_:_:omitted:)``, a spare nibble, a JSON default).
extension MatchMessage {
    mutating func describe<C: MessageCoder>(_ c: inout C) {
        switch self {
        case .hello(var hello):
            hello.describe(&c)
            self = .hello(hello)
        case .votes(var game, var first, var values):
            c.field("game", &game, .u32)
            c.field("first", &first, .u32)
            c.list("values", &values, .hex64, count: 1...Self.votesPerMessageMax)
            self = .votes(game: game, firstRound: first, values: values)
        case .startProposal(var match, var settings, var play):
            c.field("match", &match, .u32)
            settings.describe(&c) { $0.field("play", &play, .bool) }
            self = .startProposal(match: match, settings: settings, wantsToPlay: play)
        case .inputs(var game, var items):
            c.field("game", &game, .u32)
            c.list("inputs", &items, .item, count: 1...Self.inputsPerMessageMax)
            self = .inputs(game: game, items: items)
        case .checkpoint(var game, var pairs, var hash):
            c.field("game", &game, .u32)
            c.field("pairs", &pairs, .u32)
            c.field("hash", &hash, .hex64)
            self = .checkpoint(game: game, pairs: pairs, hash: hash)
        case .gameOverVote(var game, var winner):
            c.field("game", &game, .u32)
            c.nullable("winner", &winner, .peer)
            self = .gameOverVote(game: game, winner: winner)
        case .clock(var game, var tick):
            c.field("game", &game, .u32)
            c.field("tick", &tick, .u32)
            self = .clock(game: game, tick: tick)
        case .snapshot(var snapshot):
            snapshot.describe(&c)
            self = .snapshot(snapshot)
        case .leave:
            break
        case .roomSettings(var version, var settings):
            c.field("version", &version, .u32)
            settings.describe(&c)
            self = .roomSettings(version: version, settings: settings)
        case .ready(var match, var key, var settings, var play):
            c.field("match", &match, .u32)
            key.describe(&c)
            settings.describe(&c) { $0.field("play", &play, .bool) }
            self = .ready(match: match, key: key, settings: settings, wantsToPlay: play)
        case .unready(var match):
            c.field("match", &match, .u32)
            self = .unready(match: match)
        case .go(var match):
            c.field("match", &match, .u32)
            self = .go(match: match)
        case .grids(var game, var pictures):
            c.field("game", &game, .u32)
            c.records("grids", &pictures, count: 1...Self.playersMax, blank: .blank) { $0.describe(&$1) }
            self = .grids(game: game, pictures: pictures)
        case .forfeit(var game):
            c.field("game", &game, .u32)
            self = .forfeit(game: game)
        }
    }

    /// A message of kind `tag` for a reader to fill in.
    static func blank(_ tag: Tag) -> MatchMessage {
        switch tag {
        case .hello: .hello(.blank)
        case .votes: .votes(game: 0, firstRound: 0, values: [])
        case .startProposal: .startProposal(match: 0, settings: .default, wantsToPlay: false)
        case .inputs: .inputs(game: 0, items: [])
        case .checkpoint: .checkpoint(game: 0, pairs: 0, hash: 0)
        case .gameOverVote: .gameOverVote(game: 0, winner: nil)
        case .clock: .clock(game: 0, tick: 0)
        case .snapshot: .snapshot(.blank)
        case .leave: .leave
        case .roomSettings: .roomSettings(version: 0, settings: .default)
        case .ready: .ready(match: 0, key: .initial, settings: .default, wantsToPlay: false)
        case .unready: .unready(match: 0)
        case .go: .go(match: 0)
        case .grids: .grids(game: 0, pictures: [])
        case .forfeit: .forfeit(game: 0)
        }
    }

    /// The message's kind: its first byte on the wire, its `"type"` in JSON.
    var tag: Tag {
        switch self {
        case .hello: .hello
        case .votes: .votes
        case .startProposal: .startProposal
        case .inputs: .inputs
        case .checkpoint: .checkpoint
        case .gameOverVote: .gameOverVote
        case .clock: .clock
        case .snapshot: .snapshot
        case .leave: .leave
        case .roomSettings: .roomSettings
        case .ready: .ready
        case .unready: .unready
        case .go: .go
        case .grids: .grids
        case .forfeit: .forfeit
        }
    }
}

extension MatchMessage.Tag {
    /// The kind's `"type"` in the log.
    var jsonType: StaticString {
        switch self {
        case .hello: "hello"
        case .votes: "votes"
        case .startProposal: "start"
        case .inputs: "inputs"
        case .checkpoint: "checkpoint"
        case .gameOverVote: "gameOver"
        case .clock: "clock"
        case .snapshot: "snapshot"
        case .leave: "leave"
        case .roomSettings: "settings"
        case .ready: "ready"
        case .unready: "unready"
        case .go: "go"
        case .grids: "grids"
        case .forfeit: "forfeit"
        }
    }
}

extension Hello {
    static let blank = Hello(name: "", role: .player)

    mutating func describe<C: MessageCoder>(_ c: inout C) {
        c.field("name", &name, .text(maxBytes: Hello.nameBytesMax))
        c.field("role", &role, .role)
        c.field("protocol", &protocolVersion, .int(max: 65_535))
        c.field("rules", &rules, .text(maxBytes: MatchMessage.rulesBytesMax))
    }
}

extension MatchSettings {
    /// Wire: three bytes (speed, colours, games), the rule set's index in ``RuleSet/all`` in the
    /// speed's high nibble and the starting height in the colours' (`sfe` and height 0 leave the
    /// bytes as they were before those fields), then `between`. JSON: speed, colours, games,
    /// `between`, then the rule set and the height, each left out at its default. Ranges are
    /// ``isValid``'s (every message checks it).
    mutating func describe<C: MessageCoder>(_ c: inout C, then between: (inout C) -> Void = { _ in }) {
        c.field("speed", &speed, .nibble(0))
        c.field("colors", &colors, .nibble(1))
        c.field("games", &gamesPerMatch, .byte)
        between(&c)
        c.field("rules", &ruleSet, .ruleSet(highNibble: 0), jsonOmits: RuleSet.all[0])
        c.field("height", &startingHeight, .highNibble(1), jsonOmits: 0)
    }
}

extension SettingsKey {
    mutating func describe<C: MessageCoder>(_ c: inout C) {
        c.field("version", &version, .u32)
        c.field("author", &author, .peer)
    }
}

extension LobbyEntry {
    static let blank = LobbyEntry(peer: PeerID(0), name: "", role: .player)

    mutating func describe<C: MessageCoder>(_ c: inout C) {
        c.field("peer", &peer, .peer)
        // A log's over-long name is cut, as the entry's initialiser cuts it (the wire rejects one).
        c.field("name", &name, .text(maxBytes: Hello.nameBytesMax, truncatesInJSON: true))
        c.field("role", &role, .role)
    }
}

extension MatchSnapshot {
    static let blank = MatchSnapshot(settings: .default, players: [], wins: [], game: 0, frontier: 0, pairsSpawned: [])

    /// One player's entry: a row on the wire, a column each in JSON.
    struct Row {
        var player = PeerID(0)
        var wins = 0
        var pairsSpawned: UInt32 = 0
    }

    mutating func describe<C: MessageCoder>(_ c: inout C) {
        settings.describe(&c)
        var rows = players.indices.map {
            Row(player: players[$0], wins: wins.indices.contains($0) ? wins[$0] : 0,
                pairsSpawned: pairsSpawned.indices.contains($0) ? pairsSpawned[$0] : 0)
        }
        c.columns(&rows, count: 1...MatchMessage.playersMax, blank: Row()) { row, c in
            c.field("players", &row.player, .peer)
            c.field("wins", &row.wins, .int(max: 7))  // the most games of a match
            c.field("pairsSpawned", &row.pairsSpawned, .u32)
        }
        if !c.failed {
            players = rows.map(\.player)
            wins = rows.map(\.wins)
            pairsSpawned = rows.map(\.pairsSpawned)
        }
        c.field("game", &game, .u32)
        c.field("frontier", &frontier, .u32)
    }
}

extension RoomSnapshot {
    static let blank = RoomSnapshot(settings: .default, key: .initial, marks: [:], goLeader: nil)

    /// One ready mark (sorted by peer in both encodings).
    struct Mark {
        var peer = PeerID(0)
        var play = false
    }

    mutating func describe<C: MessageCoder>(_ c: inout C) {
        settings.describe(&c)
        key.describe(&c)
        var list = marks.sorted { $0.key < $1.key }.map { Mark(peer: $0.key, play: $0.value) }
        c.records("ready", &list, count: 0...Snapshot.lobbyEntriesMax, blank: Mark()) { mark, c in
            c.field("peer", &mark.peer, .peer)
            c.field("play", &mark.play, .bool)
        }
        marks = Dictionary(list.map { ($0.peer, $0.play) }, uniquingKeysWith: { first, _ in first })
        c.require(marks.count == list.count)
        c.nullable("go", &goLeader, .peer)
    }
}

extension Snapshot {
    static let blank = Snapshot(view: 0, matchRound: 0, nextGame: 0, lobby: [], match: nil)

    mutating func describe<C: MessageCoder>(_ c: inout C) {
        c.field("view", &view, .bits64)
        c.field("matchRound", &matchRound, .u32)
        c.field("nextGame", &nextGame, .u32)
        c.records("lobby", &lobby, count: 0...Snapshot.lobbyEntriesMax, blank: .blank) { $0.describe(&$1) }
        c.nullable("match", &match, blank: .blank) { $0.describe(&$1) }
        c.trailing("room", &room, blank: .blank) { $0.describe(&$1) }
    }
}

extension GridPicture {
    static let blank = GridPicture(player: PeerID(0), pairs: 0, cells: [])

    mutating func describe<C: MessageCoder>(_ c: inout C) {
        c.field("player", &player, .peer)
        c.field("pairs", &pairs, .u32(max: EggRounds.roundsMax))
        c.field("cells", &cells, .cells(GridPicture.cellsCount))
        c.trailingField("garbage", &garbage, .int(max: GridPicture.garbageMax), omitted: 0)
    }
}
