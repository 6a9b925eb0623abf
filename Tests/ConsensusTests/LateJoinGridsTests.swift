import EggGame
import PeerNet
import Testing
@testable import Consensus

@Suite("Late joiners see the grids")
struct LateJoinGridsTests {
    @Test("a peer joining mid-game gets every player's grid at once and each new one as pairs spawn")
    func joinerGetsGrids() throws {
        let h = VSHarness(seed: 21)
        let ids = startRoom(h, count: 2, settings: MatchSettings(speed: 6, colors: 4, gamesPerMatch: 1), level: .medium)
        for _ in 0..<900 { h.tick(deliveries: 20) }
        let game = try #require(h.peers[ids[0]]!.match?.game)
        #expect(h.peers[ids[0]]!.match!.mirrors[ids[1]]!.grid.board.eggsCount > 0, "nothing landed yet")
        let joiner = PeerID(0x0900_0000_0001)
        h.installView(members: ids + [joiner], joining: [joiner])
        h.deliverAll(to: ids + [joiner])
        // At once: the snapshot's sender sent every grid as its mirrors held them.
        let first = try #require(h.peers[joiner]!.match)
        #expect(!first.mirrored && first.game == game)
        #expect(Set(first.pictures.keys) == Set(ids))
        // Later: each spawn sends that player's grid again.
        for _ in 0..<300 { h.tick(deliveries: 20) }
        h.deliverAll(to: ids + [joiner])
        let m = try #require(h.peers[joiner]!.match)
        try #require(m.game == game, "the game ended meanwhile")
        let sender = ids.max()!
        for player in ids {
            let mirror = h.peers[sender]!.match!.mirrors[player]!.grid
            let picture = try #require(m.pictures[player])
            #expect(Int(picture.pairs) == mirror.pairsSpawned)
            #expect(picture.pairs > first.pictures[player]!.pairs)
            // The joiner holds what the sender sent last, and that is the mirror as it looks now
            // unless fewer than `pictureTicks` ticks have passed since.
            let sent = try #require(h.peers[sender]!.match!.picturesSent[player])
            #expect(picture == sent.picture)
            let mirrorNow = h.peers[sender]!.match!.mirrors[player]!
            #expect(mirror.ticksPlayed - sent.tick < MatchPeer.pictureTicks || sent.picture == MatchPeer.picture(of: player, mirrorNow))
        }
    }

    @Test("between spawns the pictures follow the falling pair, at most one a player every pictureTicks ticks")
    func picturesFollowThePair() throws {
        let h = VSHarness(seed: 23)
        let ids = startRoom(h, count: 2, settings: MatchSettings(speed: 6, colors: 4, gamesPerMatch: 1), level: .medium)
        for _ in 0..<600 { h.tick(deliveries: 20) }
        let joiner = PeerID(0x0900_0000_0001)
        h.installView(members: ids + [joiner], joining: [joiner])
        h.deliverAll(to: ids + [joiner])
        let game = try #require(h.peers[joiner]!.match?.game)
        let ticks = 240
        var seen: [PeerID: [GridPicture]] = [:]
        var live = 0
        for _ in 0..<ticks {
            h.tick(deliveries: 20)
            h.deliverAll(to: ids + [joiner])
            let m = try #require(h.peers[joiner]!.match)
            try #require(m.game == game, "the game ended meanwhile")
            for (player, picture) in m.pictures where seen[player]?.last != picture { seen[player, default: []].append(picture) }
            // A picture taken while a pair falls shows it: more eggs than the mirror's board holds.
            let sender = h.peers[ids.max()!]!.match!
            for player in ids {
                guard let sent = sender.picturesSent[player], let mirror = sender.mirrors[player]?.grid,
                      mirror.state == .live, Int(sent.picture.pairs) == mirror.pairsSpawned,
                      sent.tick == mirror.ticksPlayed else { continue }
                let eggs = sent.picture.cells.filter { $0 != 0 }.count
                guard eggs == mirror.board.eggsCount + 2 else { continue }
                live += 1
                // The joiner draws the falling pair where the picture has it, not settled.
                let drawn = GridPicture(player: player, grid: sent.picture.grid(rules: mirror.rules))
                #expect(drawn.cells == sent.picture.cells, "\(player.hex): the pair is drawn elsewhere")
            }
        }
        #expect(live > 0, "no picture showed a falling pair")
        for player in ids {
            let pictures = seen[player] ?? []
            let spawns = Set(pictures.map(\.pairs)).count
            // More pictures than pairs: the joiner saw pairs move between spawns ...
            #expect(pictures.count >= 2 * spawns, "\(player.hex): \(pictures.count) pictures for \(spawns) pairs")
            // ... and no more than one a spawn plus one every `pictureTicks` ticks.
            #expect(pictures.count <= spawns + ticks / MatchPeer.pictureTicks + 1)
        }
    }

    @Test("a hostile grids message is dropped and counted; a picture never goes back in time")
    func hostileGrids() throws {
        let good = GridPicture(player: PeerID(1), pairs: 5, cells: Array(repeating: 0, count: GridPicture.cellsCount - 1) + [3])
        let message = MatchMessage.grids(game: 4, pictures: [good])
        #expect(MatchMessage.decode(message.encoded()) == message)
        #expect(MatchMessage(json: message.json) == message)
        #expect(good.grid(rules: .sfe).board[column: 5, row: Board.rowsCount - 1] == .egg(.yellow))
        // Queued garbage travels after the pictures; a message that ends before it (from a
        // sender that predates it) reads as none, and a count over the limit is hostile.
        var queued = good
        queued.garbage = 37
        let withGarbage = MatchMessage.grids(game: 4, pictures: [queued])
        #expect(MatchMessage.decode(withGarbage.encoded()) == withGarbage)
        #expect(MatchMessage(json: withGarbage.json) == withGarbage)
        #expect(MatchMessage.decode(Array(withGarbage.encoded().dropLast())) == message)
        // Without garbage the message is the bytes an older build sends, so an older build reads it.
        #expect(Array(withGarbage.encoded().dropLast()) == message.encoded())
        // A digit of another script is not a cell (one worth 10,000 trapped the reader).
        for digit in ["万", "௲", "٣", "³"] {
            guard case .object(var fields) = message.json, let at = fields.firstIndex(where: { $0.0 == "grids" }),
                  case .array(var entries) = fields[at].1, case .object(var entry) = entries[0],
                  let cellsAt = entry.firstIndex(where: { $0.0 == "cells" }) else {
                Issue.record("no cells in \(message.json)")
                break
            }
            entry[cellsAt].1 = .string(String(repeating: "0", count: GridPicture.cellsCount - 1) + digit)
            entries[0] = .object(entry)
            fields[at].1 = .array(entries)
            #expect(MatchMessage(json: .object(fields)) == nil, "\(digit)")
        }
        var tooMuch = good
        tooMuch.garbage = GridPicture.garbageMax + 1
        var badCell = good
        badCell.cells[0] = 9
        let tooFar = GridPicture(player: PeerID(1), pairs: EggRounds.roundsMax + 1, cells: good.cells)
        let short = GridPicture(player: PeerID(1), pairs: 1, cells: Array(good.cells.prefix(70)))
        let hostile: [MatchMessage] = [
            .grids(game: 4, pictures: [badCell]), .grids(game: 4, pictures: [tooFar]), .grids(game: 4, pictures: [short]),
            .grids(game: 4, pictures: [good, good]), .grids(game: 4, pictures: [tooMuch]),
            .grids(game: 4, pictures: (1...9).map { GridPicture(player: PeerID(UInt64($0)), pairs: 1, cells: good.cells) }),
        ]
        for bad in hostile {
            #expect(MatchMessage.decode(bad.encoded()) == nil, "\(bad)")
            #expect(MatchMessage(json: bad.json) == nil, "\(bad)")
        }

        // Delivered to a joiner mid-game: counted, and its pictures stay as they were.
        let h = VSHarness(seed: 22)
        let ids = startRoom(h, count: 2, settings: MatchSettings(speed: 6, colors: 4, gamesPerMatch: 1))
        for _ in 0..<300 { h.tick(deliveries: 20) }
        let joiner = PeerID(0x0900_0000_0001)
        h.installView(members: ids + [joiner], joining: [joiner])
        h.deliverAll(to: ids + [joiner])
        let before = try #require(h.peers[joiner]!.match?.pictures)
        #expect(before[ids[1]].map { $0.pairs > 0 } == true, "no picture of a game under way: \(before)")
        let game = h.peers[joiner]!.match!.game
        let dropped = h.peers[joiner]!.stats.invalidDropped
        h.queues[joiner]![ids[0], default: []].append(MatchMessage.grids(game: game, pictures: [badCell]).encoded())
        // A well-formed but older picture does not replace a newer one.
        let old = GridPicture(player: ids[1], pairs: 0, cells: Array(repeating: 7, count: GridPicture.cellsCount))
        h.queues[joiner]![ids[0], default: []].append(MatchMessage.grids(game: game, pictures: [old]).encoded())
        h.deliverAll(to: [joiner])
        #expect(h.peers[joiner]!.stats.invalidDropped == dropped + 1)
        #expect(h.peers[joiner]!.match?.pictures == before)
    }
}
