import Testing
@testable import PeerNet

/// `ReceiveWindows`, the part of a peer that holds one stream per member of its view, on its
/// own (the protocol around it: `RecoveryTests`, `ScenarioTests`, `SwarmTests`).
@Suite("ReceiveWindows: streams, arrivals within the window, eviction, freeing")
struct ReceiveWindowsPartTests {
    static let other = Member(id: PeerID(2), incarnation: 1)
    static func item(_ seq: UInt64, from origin: Member = other) -> DataItem {
        DataItem(origin: origin, viewID: 1, seq: seq, payload: [UInt8(truncatingIfNeeded: seq)])
    }

    static func windows(start: UInt64 = 0) -> ReceiveWindows {
        var w = ReceiveWindows()
        w.replace(with: [other.id: ReceiveWindows.Stream(member: other, start: start)])
        return w
    }

    @Test("an item is held once, within twice the window, only from the stream's incarnation")
    func arrivals() {
        let w = Self.windows()
        #expect(w.accept(Self.item(2), windowSizeMax: 4) == .stored(evicted: 0))
        #expect(w.accept(Self.item(2), windowSizeMax: 4) == .duplicate)
        #expect(w.accept(Self.item(9), windowSizeMax: 4) == .beyondWindow, "more than 2 × 4 past delivered")
        #expect(w.accept(Self.item(8), windowSizeMax: 4) == .stored(evicted: 0))
        #expect(w.accept(Self.item(1, from: Member(id: PeerID(2), incarnation: 2)), windowSizeMax: 4) == .unknownSender)
        #expect(w.accept(Self.item(1, from: Member(id: PeerID(3), incarnation: 1)), windowSizeMax: 4) == .unknownSender)
        let stream = w[Self.other.id]!
        #expect(stream.highestKnown == 8)
        #expect(stream.contiguous == 0, "seq 1 is missing")
        #expect(w.accept(Self.item(1), windowSizeMax: 4) == .stored(evicted: 0))
        #expect(stream.contiguous == 2)
        stream.delivered = 2
        #expect(w.accept(Self.item(1), windowSizeMax: 4) == .duplicate, "delivered already")
        w.checkInvariants(windowSizeMax: 4)
    }

    @Test("a held seq fills its gap; known seqs only rise, and only for the stream's incarnation")
    func gapsAndKnown() {
        let w = Self.windows()
        let stream = w[Self.other.id]!
        stream.scannedUpTo = 3
        stream.gaps = [1: .zero, 3: .zero]
        _ = w.accept(Self.item(3), windowSizeMax: 4)
        #expect(stream.gaps.keys.sorted() == [1])
        w.noteKnown(6, of: Self.other)
        w.noteKnown(5, of: Self.other)
        #expect(stream.highestKnown == 6)
        w.noteKnown(7, of: Member(id: PeerID(2), incarnation: 9))
        #expect(stream.highestKnown == 6, "another incarnation's seqs say nothing of this stream")
        w.checkInvariants(windowSizeMax: 4)
    }

    @Test("a full buffer frees its oldest delivered messages; stable ones are freed up to the floor")
    func evictionAndFreeing() {
        let w = Self.windows()
        let stream = w[Self.other.id]!
        for seq in UInt64(1)...8 { _ = w.accept(Self.item(seq), windowSizeMax: 4) }
        stream.delivered = 8
        stream.free(upTo: 2)
        #expect(stream.stableFloor == 2 && stream.messages.count == 6)
        stream.free(upTo: 1)
        #expect(stream.stableFloor == 2, "the floor never goes back")
        // Cap 4 × 2 = 8 with a window of 2: seq 9...12 fit within 2 × 2 of delivered 8.
        for seq in UInt64(9)...10 { _ = w.accept(Self.item(seq), windowSizeMax: 2) }
        #expect(stream.messages.count == 8)
        #expect(w.accept(Self.item(11), windowSizeMax: 2) == .stored(evicted: 1), "the buffer is full: the oldest delivered goes")
        #expect(stream.messages[3] == nil && stream.stableFloor == 3)
        w.checkInvariants(windowSizeMax: 2)
    }

    @Test("no view: no streams")
    func removeAll() {
        var w = Self.windows(start: 5)
        #expect(w.count == 1 && w[Self.other.id]?.delivered == 5)
        w.removeAll()
        #expect(w.isEmpty && w[Self.other.id] == nil)
        w.checkInvariants(windowSizeMax: 4)
    }
}
