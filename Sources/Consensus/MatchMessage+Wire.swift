import EggGame
import EggPrimitives
import PeerNet

extension MatchMessage {
    /// The compact binary encoding (≤ ``bytesMax`` bytes for every message the core produces).
    public func encoded() -> [UInt8] {
        var w = LEB128ByteWriter()
        switch self {
        case .hello(let hello):
            w.u8(Tag.hello.rawValue)
            w.string(hello.name)
            w.u8(hello.role.rawValue)
            w.varint(UInt64(hello.protocolVersion))
            w.string(hello.rules)
        case .votes(let game, let firstRound, let values):
            w.u8(Tag.votes.rawValue)
            w.varint(UInt64(game))
            w.varint(UInt64(firstRound))
            w.varint(UInt64(values.count))
            for value in values { w.fixed64(value) }
        case .startProposal(let match, let settings, let wantsToPlay):
            w.u8(Tag.startProposal.rawValue)
            w.varint(UInt64(match))
            Self.write(settings, to: &w)
            w.u8(wantsToPlay ? 1 : 0)
        case .inputs(let game, let items):
            w.u8(Tag.inputs.rawValue)
            w.varint(UInt64(game))
            w.varint(UInt64(items.count))
            for item in items { Self.write(item, to: &w) }
        case .checkpoint(let game, let pairs, let hash):
            w.u8(Tag.checkpoint.rawValue)
            w.varint(UInt64(game))
            w.varint(UInt64(pairs))
            w.fixed64(hash)
        case .gameOverVote(let game, let winner):
            w.u8(Tag.gameOverVote.rawValue)
            w.varint(UInt64(game))
            w.u8(winner == nil ? 0 : 1)
            if let winner { w.fixed64(winner.raw) }
        case .clock(let game, let tick):
            w.u8(Tag.clock.rawValue)
            w.varint(UInt64(game))
            w.varint(UInt64(tick))
        case .snapshot(let snapshot):
            w.u8(Tag.snapshot.rawValue)
            Self.write(snapshot, to: &w)
        case .leave:
            w.u8(Tag.leave.rawValue)
        case .roomSettings(let version, let settings):
            w.u8(Tag.roomSettings.rawValue)
            w.varint(UInt64(version))
            Self.write(settings, to: &w)
        case .ready(let match, let key, let settings, let wantsToPlay):
            w.u8(Tag.ready.rawValue)
            w.varint(UInt64(match))
            w.varint(UInt64(key.version))
            w.fixed64(key.author.raw)
            Self.write(settings, to: &w)
            w.u8(wantsToPlay ? 1 : 0)
        case .unready(let match):
            w.u8(Tag.unready.rawValue)
            w.varint(UInt64(match))
        case .go(let match):
            w.u8(Tag.go.rawValue)
            w.varint(UInt64(match))
        case .grids(let game, let pictures):
            w.u8(Tag.grids.rawValue)
            w.varint(UInt64(game))
            w.varint(UInt64(pictures.count))
            for picture in pictures {
                w.fixed64(picture.player.raw)
                w.varint(UInt64(picture.pairs))
                // Two cells a byte (codes 0...7).
                for index in stride(from: 0, to: picture.cells.count, by: 2) {
                    let high = picture.cells[index]
                    let low = index + 1 < picture.cells.count ? picture.cells[index + 1] : 0
                    w.u8(high << 4 | (low & 0x0F))
                }
            }
            // The queued garbage of each picture, after all of them, and only when some picture
            // has any: a message that ends before it reads as no garbage, and a message without
            // garbage is the bytes a build that predates it sends and reads.
            if pictures.contains(where: { $0.garbage > 0 }) {
                for picture in pictures {
                    w.varint(UInt64(clamping: max(0, picture.garbage)))
                }
            }
        }
        return w.bytes
    }

    /// Decodes a payload; `nil` for anything malformed (unknown tag, out-of-range field,
    /// truncated, trailing bytes). Never traps.
    public static func decode(_ bytes: [UInt8]) -> MatchMessage? {
        guard bytes.count <= bytesMax else { return nil }
        var r = LEB128ByteReader(bytes)
        guard let raw = r.u8(), let tag = Tag(rawValue: raw) else { return nil }
        let message: MatchMessage?
        switch tag {
        case .hello: message = readHello(&r)
        case .votes: message = readVotes(&r)
        case .startProposal: message = readStart(&r)
        case .inputs: message = readInputs(&r)
        case .checkpoint:
            guard let game = r.varint(max: UInt64(UInt32.max)), let pairs = r.varint(max: UInt64(UInt32.max)),
                  let hash = r.fixed64() else { return nil }
            message = .checkpoint(game: UInt32(game), pairs: UInt32(pairs), hash: hash)
        case .gameOverVote:
            guard let game = r.varint(max: UInt64(UInt32.max)), let flag = r.u8(), flag <= 1 else { return nil }
            var winner: PeerID?
            if flag == 1 {
                guard let raw = r.fixed64() else { return nil }
                winner = PeerID(raw)
            }
            message = .gameOverVote(game: UInt32(game), winner: winner)
        case .snapshot: message = readSnapshot(&r).map { .snapshot($0) }
        case .leave: message = .leave
        case .clock:
            guard let game = r.varint(max: UInt64(UInt32.max)), let tick = r.varint(max: UInt64(UInt32.max)) else { return nil }
            message = .clock(game: UInt32(game), tick: UInt32(tick))
        case .roomSettings:
            guard let version = r.varint(max: UInt64(UInt32.max)), let settings = readSettings(&r) else { return nil }
            message = .roomSettings(version: UInt32(version), settings: settings)
        case .ready:
            guard let match = r.varint(max: UInt64(UInt32.max)), let version = r.varint(max: UInt64(UInt32.max)),
                  let author = r.fixed64(), let settings = readSettings(&r), let play = r.u8(), play <= 1 else { return nil }
            message = .ready(match: UInt32(match), key: SettingsKey(version: UInt32(version), author: PeerID(author)),
                             settings: settings, wantsToPlay: play == 1)
        case .unready:
            guard let match = r.varint(max: UInt64(UInt32.max)) else { return nil }
            message = .unready(match: UInt32(match))
        case .go:
            guard let match = r.varint(max: UInt64(UInt32.max)) else { return nil }
            message = .go(match: UInt32(match))
        case .grids:
            guard let game = r.varint(max: UInt64(UInt32.max)), let count = r.varint(max: UInt64(playersMax)) else { return nil }
            var pictures: [GridPicture] = []
            for _ in 0..<count {
                guard let player = r.fixed64(), let pairs = r.varint(max: UInt64(EggRounds.roundsMax)) else { return nil }
                var cells: [UInt8] = []
                for _ in 0..<(GridPicture.cellsCount / 2) {
                    guard let byte = r.u8() else { return nil }
                    cells.append(byte >> 4)
                    cells.append(byte & 0x0F)
                }
                pictures.append(GridPicture(player: PeerID(player), pairs: UInt32(pairs), cells: cells))
            }
            if !r.isAtEnd {
                for index in pictures.indices {
                    guard let garbage = r.varint(max: UInt64(GridPicture.garbageMax)) else { return nil }
                    pictures[index].garbage = Int(garbage)
                }
            }
            message = .grids(game: UInt32(game), pictures: pictures)
        }
        guard let message, r.isAtEnd, message.isValid else { return nil }
        return message
    }

    private static func readHello(_ r: inout LEB128ByteReader) -> MatchMessage? {
        guard let name = r.string(maxBytes: Hello.nameBytesMax), let roleRaw = r.u8(),
              let role = PeerRole(rawValue: roleRaw), let version = r.varint(max: 65_535),
              let rules = r.string(maxBytes: rulesBytesMax) else { return nil }
        return .hello(Hello(name: name, role: role, protocolVersion: Int(version), rules: rules))
    }

    private static func readVotes(_ r: inout LEB128ByteReader) -> MatchMessage? {
        guard let game = r.varint(max: UInt64(UInt32.max)), let first = r.varint(max: UInt64(UInt32.max)),
              let count = r.varint(max: UInt64(votesPerMessageMax)), count > 0 else { return nil }
        var values: [UInt64] = []
        values.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let value = r.fixed64() else { return nil }
            values.append(value)
        }
        guard first + count <= UInt64(UInt32.max) else { return nil }
        return .votes(game: UInt32(game), firstRound: UInt32(first), values: values)
    }

    private static func readStart(_ r: inout LEB128ByteReader) -> MatchMessage? {
        guard let match = r.varint(max: UInt64(UInt32.max)), let settings = readSettings(&r),
              let play = r.u8(), play <= 1 else { return nil }
        return .startProposal(match: UInt32(match), settings: settings, wantsToPlay: play == 1)
    }

    private static func readInputs(_ r: inout LEB128ByteReader) -> MatchMessage? {
        guard let game = r.varint(max: UInt64(UInt32.max)),
              let count = r.varint(max: UInt64(inputsPerMessageMax)), count > 0 else { return nil }
        var items: [StreamInput] = []
        for _ in 0..<count {
            guard let code = r.u8() else { return nil }
            switch code {
            case 0...5: items.append(.move(Move(rawValue: code)!))
            case 6: items.append(.spawn)
            case 7:
                guard let n = r.varint(max: UInt64(garbageLandMax)) else { return nil }
                items.append(.landGarbage(Int(n)))
            case 8:
                guard let n = r.varint(max: UInt64(ticksPerItemMax)), n > 0 else { return nil }
                items.append(.ticks(Int(n)))
            case 9:
                guard let n = r.varint(max: UInt64(garbageOffsetMax)), n > 0 else { return nil }
                items.append(.offsetGarbage(Int(n)))
            default: return nil
            }
        }
        return .inputs(game: UInt32(game), items: items)
    }

    private static func write(_ item: StreamInput, to w: inout LEB128ByteWriter) {
        switch item {
        case .move(let move): w.u8(move.rawValue)
        case .spawn: w.u8(6)
        case .landGarbage(let n):
            w.u8(7)
            w.varint(UInt64(max(0, n)))
        case .ticks(let n):
            w.u8(8)
            w.varint(UInt64(max(0, n)))
        case .offsetGarbage(let n):
            w.u8(9)
            w.varint(UInt64(max(0, n)))
        }
    }

    /// Settings are three bytes: speed (0–9) with the rule set's index in ``RuleSet/all`` in the
    /// high nibble (`sfe`, index 0, leaves the byte as it was), colours (4–6) with the starting
    /// height in the high nibble (height 0 leaves the byte as it was), games. A nibble naming no
    /// rule set, or a height outside the rule set's range, makes the settings (and the message)
    /// invalid.
    private static func write(_ s: MatchSettings, to w: inout LEB128ByteWriter) {
        w.u8(UInt8(clamping: s.speed) & 0x0F | UInt8(clamping: s.ruleSetIndex ?? 0x0F) << 4)
        w.u8(UInt8(clamping: s.colors) & 0x0F | UInt8(clamping: min(max(s.startingHeight, 0), 0x0F)) << 4)
        w.u8(UInt8(clamping: s.gamesPerMatch))
    }

    private static func readSettings(_ r: inout LEB128ByteReader) -> MatchSettings? {
        guard let speedAndRules = r.u8(), let colorsAndHeight = r.u8(), let games = r.u8() else { return nil }
        let index = Int(speedAndRules >> 4)
        guard index < RuleSet.all.count else { return nil }
        let settings = MatchSettings(speed: Int(speedAndRules & 0x0F), colors: Int(colorsAndHeight & 0x0F), gamesPerMatch: Int(games),
                                     ruleSet: RuleSet.all[index], startingHeight: Int(colorsAndHeight >> 4))
        return settings.isValid ? settings : nil
    }

    private static func write(_ s: Snapshot, to w: inout LEB128ByteWriter) {
        w.varint(s.view)
        w.varint(UInt64(s.matchRound))
        w.varint(UInt64(s.nextGame))
        w.varint(UInt64(s.lobby.count))
        for entry in s.lobby {
            w.fixed64(entry.peer.raw)
            w.string(entry.name)
            w.u8(entry.role.rawValue)
        }
        if let m = s.match {
            w.u8(1)
            write(m.settings, to: &w)
            w.varint(UInt64(m.players.count))
            for (index, player) in m.players.enumerated() {
                w.fixed64(player.raw)
                w.varint(UInt64(m.wins[index]))
                w.varint(UInt64(m.pairsSpawned[index]))
            }
            w.varint(UInt64(m.game))
            w.varint(UInt64(m.frontier))
        } else {
            w.u8(0)
        }
        // The room part trails the rest (a snapshot without it decodes as before).
        guard let room = s.room else { return }
        write(room.settings, to: &w)
        w.varint(UInt64(room.key.version))
        w.fixed64(room.key.author.raw)
        w.varint(UInt64(room.marks.count))
        for (peer, wants) in room.marks.sorted(by: { $0.key < $1.key }) {
            w.fixed64(peer.raw)
            w.u8(wants ? 1 : 0)
        }
        w.u8(room.goLeader == nil ? 0 : 1)
        if let leader = room.goLeader { w.fixed64(leader.raw) }
    }

    private static func readRoom(_ r: inout LEB128ByteReader) -> RoomSnapshot? {
        guard let settings = readSettings(&r), let version = r.varint(max: UInt64(UInt32.max)), let author = r.fixed64(),
              let count = r.varint(max: UInt64(Snapshot.lobbyEntriesMax)) else { return nil }
        var marks: [PeerID: Bool] = [:]
        for _ in 0..<count {
            guard let peer = r.fixed64(), let wants = r.u8(), wants <= 1, marks[PeerID(peer)] == nil else { return nil }
            marks[PeerID(peer)] = wants == 1
        }
        guard let flag = r.u8(), flag <= 1 else { return nil }
        var leader: PeerID?
        if flag == 1 {
            guard let raw = r.fixed64() else { return nil }
            leader = PeerID(raw)
        }
        return RoomSnapshot(settings: settings, key: SettingsKey(version: UInt32(version), author: PeerID(author)),
                            marks: marks, goLeader: leader)
    }

    private static func readSnapshot(_ r: inout LEB128ByteReader) -> Snapshot? {
        guard let view = r.varint(), let matchRound = r.varint(max: UInt64(UInt32.max)),
              let nextGame = r.varint(max: UInt64(UInt32.max)),
              let lobbyCount = r.varint(max: UInt64(Snapshot.lobbyEntriesMax)) else { return nil }
        var lobby: [LobbyEntry] = []
        for _ in 0..<lobbyCount {
            guard let peer = r.fixed64(), let name = r.string(maxBytes: Hello.nameBytesMax),
                  let roleRaw = r.u8(), let role = PeerRole(rawValue: roleRaw) else { return nil }
            lobby.append(LobbyEntry(peer: PeerID(peer), name: name, role: role))
        }
        var snapshot = Snapshot(view: view, matchRound: UInt32(matchRound), nextGame: UInt32(nextGame), lobby: lobby, match: nil)
        guard let flag = r.u8(), flag <= 1 else { return nil }
        if flag == 0 {
            if !r.isAtEnd {
                guard let room = readRoom(&r) else { return nil }
                snapshot.room = room
            }
            return snapshot
        }
        guard let settings = readSettings(&r), let count = r.varint(max: UInt64(playersMax)), count >= 1 else { return nil }
        var players: [PeerID] = [], wins: [Int] = [], spawned: [UInt32] = []
        for _ in 0..<count {
            guard let peer = r.fixed64(), let won = r.varint(max: 7), let pairs = r.varint(max: UInt64(UInt32.max)) else {
                return nil
            }
            players.append(PeerID(peer))
            wins.append(Int(won))
            spawned.append(UInt32(pairs))
        }
        guard let game = r.varint(max: UInt64(UInt32.max)), let frontier = r.varint(max: UInt64(UInt32.max)) else {
            return nil
        }
        snapshot.match = MatchSnapshot(settings: settings, players: players, wins: wins, game: UInt32(game),
                                       frontier: UInt32(frontier), pairsSpawned: spawned)
        if !r.isAtEnd {
            guard let room = readRoom(&r) else { return nil }
            snapshot.room = room
        }
        return snapshot
    }
}
