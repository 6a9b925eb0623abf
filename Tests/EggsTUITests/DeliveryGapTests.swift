import PeerNet
import Testing
@testable import eggs_tui

/// The pauses a bot's summary lists (`longestDeliveryGapMs`, `deliveryGaps`): what
/// `scripts/capacity.sh --kill-half-at` checks around the kill.
@Suite("delivery gaps")
struct DeliveryGapTests {
    static let ms: UInt64 = 1_000_000

    @Test("a pause within a game counts; one across the end of a game, or outside a match, does not")
    func withinAGameOnly() {
        var gaps = DeliveryGaps()
        var wall: UInt64 = 0
        func deliver(_ at: UInt64, game: UInt32?) {
            wall += 1
            gaps.delivered(at: NetTime(nanoseconds: at * Self.ms), game: game, wallMicroseconds: wall)
        }
        deliver(1000, game: 1)
        deliver(1010, game: 1)
        deliver(1040, game: 1)  // 30 ms: noted
        deliver(1700, game: 2)  // the next game's first move, 660 ms on: not a pause of a game
        deliver(1705, game: 2)
        deliver(1800, game: nil)  // back in the lobby
        deliver(2900, game: 3)  // a new match, 1.1 s on
        deliver(2910, game: 3)
        #expect(gaps.longestNanoseconds == 30 * Self.ms)
        #expect(gaps.noted.map(\.nanoseconds) == [30 * Self.ms])
        #expect(gaps.noted.map(\.endedAtWallMicroseconds) == [3])
    }

    @Test("pauses under 20 ms are not listed, and the list keeps the 64 longest")
    func boundedList() {
        var gaps = DeliveryGaps()
        var at: UInt64 = 0
        gaps.delivered(at: NetTime(nanoseconds: 0), game: 7, wallMicroseconds: 0)
        // Pauses of 1 to 100 ms, in a scrambled order.
        for step in 0..<100 {
            let gap = UInt64((step * 37) % 100 + 1)
            at += gap * Self.ms
            gaps.delivered(at: NetTime(nanoseconds: at), game: 7, wallMicroseconds: gap)
        }
        #expect(gaps.longestNanoseconds == 100 * Self.ms)
        #expect(gaps.noted.count == DeliveryGaps.notedMax)
        #expect(Set(gaps.noted.map(\.nanoseconds)) == Set((37...100).map { UInt64($0) * Self.ms }))
        #expect(gaps.noted.allSatisfy { $0.endedAtWallMicroseconds * Self.ms == $0.nanoseconds })
    }
}
