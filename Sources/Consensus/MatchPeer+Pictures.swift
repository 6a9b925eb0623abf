import EggGame
import PeerNet

/// Late joiners see the game in progress: a peer that joins during a game cannot mirror it (it
/// has neither the streams before its join nor the rounds decided then), so the member that sends
/// it the snapshot also sends the players' grids as its mirrors show them (``GridPicture``: the
/// falling pair and falling eggs in place), and sends each player's again while such a peer is in
/// the view: at every spawn, and between spawns whenever it looks different after at least
/// ``pictureTicks`` of the player's game ticks (so the joiner sees pairs fall and chains pop, at
/// most about ten pictures a second a player). The joiner draws them until the next game, which
/// it mirrors. Pictures are not part of the replicated state: nothing is decided from them.
extension MatchPeer {
    /// Game ticks of a player (60 a second) between two pictures of it within one pair.
    static let pictureTicks = 6

    /// At a view with members that have no state, during a game: they are watchers of it, and
    /// the picture sender sends them every grid now.
    mutating func noteWatchers(_ unsynced: Set<PeerID>) {
        guard playing?.match.mirrored == true, !unsynced.isEmpty else { return }
        uniquePlaying?.match.watchers.formUnion(unsynced)
        uniquePlaying?.match.picturesSent = [:]
        sendPicturesIfWatched()
    }

    /// Sends the grids that changed since the last pictures (a pair spawned, or the grid looks
    /// different ``pictureTicks`` ticks on), if this peer is the highest-ID member mirroring the
    /// game and a watcher is in the view.
    mutating func sendPicturesIfWatched() {
        // Nobody watching is the common case: answered without copying the match.
        guard playing?.match.watchers.isEmpty == false || playing?.match.receiversWatching == true else { return }
        guard let m = match, m.mirrored, let members = view?.members else { return }
        let watching = m.watchers.intersection(members)
        guard !watching.isEmpty || m.receiversWatching else {
            if !m.watchers.isEmpty { uniquePlaying?.match.watchers = [] }
            return
        }
        guard Set(members).subtracting(m.watchers).max() == config.id else { return }
        var pictures: [GridPicture] = []
        for player in m.players {
            guard let mirror = m.mirrors[player] else { continue }
            let grid = mirror.grid
            let picture: GridPicture
            if let sent = m.picturesSent[player], Int(sent.picture.pairs) == grid.pairsSpawned {
                // The same pair: a new picture only after `pictureTicks` ticks, and if it differs.
                guard grid.ticksPlayed - sent.tick >= Self.pictureTicks else { continue }
                picture = Self.picture(of: player, mirror)
                guard picture != sent.picture else { continue }
            } else {
                picture = Self.picture(of: player, mirror)
            }
            pictures.append(picture)
            uniquePlaying?.match.picturesSent[player] = (picture, grid.ticksPlayed)
        }
        guard !pictures.isEmpty else { return }
        send(.grids(game: m.game, pictures: pictures))
    }

    /// The picture of `player` as `mirror` shows it: its grid and the garbage queued against it.
    static func picture(of player: PeerID, _ mirror: PlayerMirror) -> GridPicture {
        GridPicture(player: player, grid: mirror.grid, garbage: max(0, mirror.garbageReceived - mirror.garbageLanded))
    }

    /// A snapshot for receivers was delivered during a mirrored game: they start from it and
    /// cannot mirror this game, so its pictures go out until it ends.
    mutating func noteReceiversWatching() {
        guard playing?.match.mirrored == true, playing?.match.receiversWatching == false else { return }
        uniquePlaying?.match.receiversWatching = true
        uniquePlaying?.match.picturesSent = [:]
        sendPicturesIfWatched()
    }

    /// Pictures for this peer, if it does not mirror `game`; a picture never goes back in time.
    mutating func receivePictures(game: UInt32, pictures: [GridPicture]) {
        guard let m = match, m.game == game, !m.mirrored else { return }
        var changed = false
        for picture in pictures where m.players.contains(picture.player) {
            if let held = m.pictures[picture.player], held.pairs > picture.pairs { continue }
            uniquePlaying?.match.pictures[picture.player] = picture
            changed = true
        }
        if changed { emit(.lobbyChanged) }
    }
}
