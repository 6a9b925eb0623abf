import EggGame
#if canImport(Glibc)
import Glibc
#endif

/// With `EGGS_CHAIN_FRAMES=PATH`, the screens count the frames drawn while a board resolves a
/// chain, and the chain steps seen, for boards ticked here (`owner`: the local player's grid,
/// or both practice seats) and boards mirrored from the network (`mirror`); at exit one line
/// per kind is written to PATH: `<kind> steps <S> frames <F> per-step <F/S> pictures <P>
/// per-step <P/S> carried <C> per-step <C/S>`, where pictures counts only frames that showed the
/// board differently from its frame before (a cell, a popping mark, the counter or the flash phase changed), and
/// carried counts the pictures of a mirrored board whose cells changed while it was carried on
/// by the screen's own ticks beyond the mirror's stream (``RemoteBoard/ahead``): a mirror that
/// drew a chain only when the owner's ticks arrived would carry none. docs/measurements.md's
/// table gives frames per chain step from it.
final class ChainFrames {
    enum Kind: String, CaseIterable {
        case owner, mirror
    }

    private let log: LogFile
    private var steps: [Kind: Int] = [:]
    private var frames: [Kind: Int] = [:]
    private var pictures: [Kind: Int] = [:]
    private var carried: [Kind: Int] = [:]
    /// The cells last drawn of each board (its picture without the flash phase).
    private var lastCells: [String: Int] = [:]
    /// The picture last drawn of each board.
    private var lastPicture: [String: Int] = [:]
    /// The chain step last seen of each board's chain in progress.
    private var seen: [String: Int] = [:]

    private init(log: LogFile) { self.log = log }

    /// The counter the environment asks for (made once per process), `nil` when it is unset.
    nonisolated(unsafe) static var shared: ChainFrames? = {
        guard let path = getenv("EGGS_CHAIN_FRAMES").map({ String(cString: $0) }), !path.isEmpty,
              let log = try? LogFile(path: path) else { return nil }
        return ChainFrames(log: log)
    }()

    /// One frame drew `grid` as board `board` (a name unique to the player and game);
    /// `carriedOn` says the grid was carried on by the screen's ticks beyond its stream.
    func drew(_ kind: Kind, board: String, grid: PlayerGrid, carriedOn: Bool = false) {
        let picture = RemoteBoard.picture(grid)
        let shown = picture.popping ? picture.hash &+ (MatchView.flashOn() ? 1 : 0) : picture.hash
        let boardKey = "\(kind.rawValue)/\(board)"
        let before = lastPicture.updateValue(shown, forKey: boardKey)
        let cellsBefore = lastCells.updateValue(picture.hash, forKey: boardKey)
        if lastPicture.count > 4_096 { lastPicture = [boardKey: shown]; lastCells = [boardKey: picture.hash] }
        guard grid.state == .resolving, grid.chainStep > 0 else { return }
        let key = "\(boardKey)/\(grid.pairsSpawned)"
        frames[kind, default: 0] += 1
        if before != shown { pictures[kind, default: 0] += 1 }
        if carriedOn, cellsBefore != picture.hash { carried[kind, default: 0] += 1 }
        if seen[key] != grid.chainStep {
            seen[key] = grid.chainStep
            steps[kind, default: 0] += 1
        }
        if seen.count > 4_096 { seen = [key: grid.chainStep] }
    }

    /// The lines written at exit.
    var lines: [String] {
        Kind.allCases.map { kind in
            let s = steps[kind] ?? 0, f = frames[kind] ?? 0, p = pictures[kind] ?? 0, c = carried[kind] ?? 0
            func per(_ n: Int) -> String { s == 0 ? "-" : String(Double(Int((Double(n) / Double(s) * 10).rounded())) / 10) }
            return "\(kind.rawValue) steps \(s) frames \(f) per-step \(per(f)) pictures \(p) per-step \(per(p)) carried \(c) per-step \(per(c))"
        }
    }

    private var finished = false

    /// Writes the lines (once, at exit).
    func finish() {
        guard !finished else { return }
        finished = true
        for line in lines { log.write(line) }
        log.finish(atMicroseconds: 0)
    }
}
