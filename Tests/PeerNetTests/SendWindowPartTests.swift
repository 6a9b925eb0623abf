import Testing
@testable import PeerNet

/// `SendWindow`, the part of a peer that numbers and queues its own messages and the repairs
/// asked of it, on its own (the protocol around it: `ScenarioTests`, `BlockedFlushTests`,
/// `RecoveryTests`).
@Suite("SendWindow: own seqs, the outgoing queues, the repairs asked")
struct SendWindowPartTests {
    static let me = Member(id: PeerID(1), incarnation: 1)
    static func item(_ seq: UInt64) -> DataItem { DataItem(origin: me, viewID: 1, seq: seq, payload: [UInt8(seq)]) }

    @Test("seqs are assigned 1, 2, 3…, wait until transmitted in order, and the wire seq trails the data queue")
    func assignAndTransmit() {
        var w = SendWindow()
        let first = w.assign([1]), second = w.assign([2]), third = w.assign([3])
        #expect([first, second, third] == [1, 2, 3])
        #expect(w.lastSentSeq == 3 && w.transmittedSeq == 0 && w.pendingSends.count == 3)
        w.checkInvariants(windowSizeMax: 8)
        while let pending = w.takePending() { w.transmit(Self.item(pending.seq)) }
        #expect(w.transmittedSeq == 3 && w.pendingSends.isEmpty)
        #expect(w.outData.map(\.seq) == [1, 2, 3])
        #expect(w.wireSeq == 0, "nothing is in a datagram yet")
        w.outData.removeFirst()
        w.outData.removeFirst()
        #expect(w.wireSeq == 2)
        w.checkInvariants(windowSizeMax: 8)
    }

    @Test("abandoning the queued messages counts them and leaves nothing pending; later seqs go on")
    func abandon() {
        var w = SendWindow()
        _ = w.assign([1])
        if let pending = w.takePending() { w.transmit(Self.item(pending.seq)) }
        _ = w.assign([2])
        _ = w.assign([3])
        let abandoned = w.abandonPending()
        #expect(abandoned == 2)
        #expect(w.transmittedSeq == 3 && w.pendingSends.isEmpty)
        w.checkInvariants(windowSizeMax: 8)
        let next = w.assign([4])
        #expect(next == 4)
        let again = w.abandonPending()
        #expect(again == 1)
        w.checkInvariants(windowSizeMax: 8)
    }

    @Test("repairs: each key once, taken in (origin, seq) order, cancelled when seen, bounded")
    func repairs() {
        var w = SendWindow()
        let a = ReliableMulticast.SeqKey(origin: PeerID(2), seq: 5), b = ReliableMulticast.SeqKey(origin: PeerID(1), seq: 9)
        let c = ReliableMulticast.SeqKey(origin: PeerID(2), seq: 4)
        for key in [a, b, c, a] { w.requestRepair(key) }
        #expect(w.repairPending.count == 3)
        w.repairSeen(c)
        let taken = w.takeRepairs()
        #expect(taken == [b, a])
        #expect(w.repairPending.isEmpty)
        for seq in 0..<UInt64(SendWindow.repairPendingMax + 100) { w.requestRepair(.init(origin: PeerID(3), seq: seq)) }
        #expect(w.repairPending.count == SendWindow.repairPendingMax)
        w.checkInvariants(windowSizeMax: 8)
        w.clearRepairs()
        #expect(w.repairPending.isEmpty)
    }
}
