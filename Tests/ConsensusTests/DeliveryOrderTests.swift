import EggTestSupport
import PeerNet
import Testing
@testable import Consensus

/// A log of a room without a passphrase can be sealed again by anybody, so `replay --verify`
/// checks that its lines are a delivery order one peer could have recorded (``DeliveryOrder``).
@Suite("Delivery order: a log sealed again still has to be a delivery order")
struct DeliveryOrderTests {
    /// The reason of the ReplayError `lines` (sealed afresh, unkeyed) raise, with its line.
    static func breach(_ lines: [String]) -> (line: Int, reason: String)? {
        do throws(ReplayError) {
            _ = try Replay.verify(MessageLog.sealed(lines))
            return nil
        } catch {
            return (error.line, error.reason)
        }
    }

    /// The recorded log without its end line (a killed peer's log: nothing marks where it ends).
    static let body = Array(recordedLog.dropLast())

    /// Indices (0-based) of `inputs` lines sent by `sender`.
    static func inputsLines(of sender: String) -> [Int] {
        body.indices.filter { body[$0].contains("\"from\":\"\(sender)\"") && body[$0].contains("\"type\":\"inputs\"") }
    }

    static var senders: [String] {
        Array(Set(body.compactMap { line -> String? in
            guard let range = line.range(of: "\"from\":\"") else { return nil }
            return String(line[range.upperBound...].prefix(16))
        })).sorted()
    }

    @Test("the recorded log, sealed again as it is, verifies and every message's place was checked")
    func genuineVerifies() throws {
        let report = try Replay.verify(MessageLog.sealed(recordedLog))
        #expect(report.ok)
        #expect(report.orderChecked == report.messages && report.messages > 100, "\(report.orderChecked) of \(report.messages)")
        #expect(report.json.contains("\"orderChecked\":\(report.messages)"))
    }

    @Test("the lines after the header reversed: damage at the first line out of order")
    func reversed() throws {
        let lines = [Self.body[0]] + Self.body.dropFirst().reversed()
        let found = try #require(Self.breach(lines))
        // The first line after the header is now the last delivery: no view came before it.
        #expect(found.line == 2 && found.reason == "a message before any view", "\(found)")
    }

    @Test("two matches interleaved line by line: damage at the first line of the other log")
    func interleaved() throws {
        // The other log is of another room's peer (its header is left out: a header inside a log
        // is damage already).
        let other = otherRecordedLog.dropFirst().dropLast().map {
            $0.replacingOccurrences(of: "0000100000000001", with: "0000300000000003").replacingOccurrences(of: "0000200000000002", with: "0000400000000004")
        }
        var lines = [Self.body[0]]
        for index in 1..<min(Self.body.count, other.count + 1) { lines += [Self.body[index], other[index - 1]] }
        let found = try #require(Self.breach(lines))
        #expect(found.line == 3 && found.reason.contains("a line of another peer's log"), "\(found)")
        // The same peer's two matches interleaved (its own ids in both): seqs break at once.
        var same = [Self.body[0]]
        let second = otherRecordedLog.dropFirst().dropLast()
        for (mine, theirs) in zip(Self.body.dropFirst(), second) { same += [mine, theirs] }
        let sameFound = try #require(Self.breach(same))
        #expect(sameFound.line <= 10, "\(sameFound)")
    }

    @Test("two inputs lines of one sender swapped: damage at the first of them")
    func swapped() throws {
        for sender in Self.senders {
            let own = Self.inputsLines(of: sender)
            try #require(own.count > 10)
            var lines = Self.body
            lines.swapAt(own[5], own[6])
            let found = try #require(Self.breach(lines), "sender \(sender)")
            #expect(found.line == own[5] + 1 && found.reason.contains("comes next"), "\(found)")
        }
    }

    @Test("one message repeated 2,000 times under the same (from, seq): damage at the first copy")
    func repeated() throws {
        let own = Self.inputsLines(of: Self.senders[0])
        let at = own[3]
        let lines = Array(Self.body[...at]) + Array(repeating: Self.body[at], count: 2_000) + Array(Self.body[(at + 1)...])
        let found = try #require(Self.breach(lines))
        #expect(found.line == at + 2 && found.reason.contains("again or out of order"), "\(found)")
    }

    @Test("a line missing from one sender's stream: damage at the next line of that sender")
    func missing() throws {
        let own = Self.inputsLines(of: Self.senders[1])
        var lines = Self.body
        lines.remove(at: own[4])
        let found = try #require(Self.breach(lines))
        #expect(found.line == own[5] && found.reason.contains("is missing or out of order"), "\(found)")
    }

    // MARK: - The rules, one by one

    let me = PeerID(1), other = PeerID(2), third = PeerID(3)

    @Test("a peer that joins late starts anywhere in a sender's stream, then follows it one seq at a time")
    func lateStart() {
        var order = DeliveryOrder(recorder: me)
        #expect(order.view(MembershipView(id: 7, members: [me, other], joined: [me])) == nil)
        #expect(order.delivery(from: other, seq: 40) == nil)
        #expect(order.delivery(from: other, seq: 41) == nil)
        #expect(order.delivery(from: me, seq: 1) == nil)
        #expect(order.delivery(from: other, seq: 43) != nil)
        #expect(order.checkedDeliveries == 3)
    }

    @Test("views move forward; a view without the log's peer or a sender outside the view is a breach")
    func views() {
        var order = DeliveryOrder(recorder: me)
        #expect(order.delivery(from: other, seq: 1) == "a message before any view")
        #expect(order.view(MembershipView(id: 3, members: [other, third], joined: [other, third]))?.contains("another peer's log") == true)
        #expect(order.view(MembershipView(id: 3, members: [me, other], joined: [me, other])) == nil)
        #expect(order.delivery(from: third, seq: 1)?.contains("not a member of view 3") == true)
        #expect(order.view(MembershipView(id: 3, members: [me, other, third], joined: [third])) == "view 3 after view 3: views only move forward")
        #expect(order.view(MembershipView(id: 4, members: [me, other, third], joined: [third])) == nil)
        #expect(order.delivery(from: third, seq: 1) == nil)
    }

    @Test("a receiver's log: views without its peer, each starting afresh from a snapshot (seq 0); a member's view is a breach")
    func receiverLog() {
        var order = DeliveryOrder(recorder: me, receiver: true)
        #expect(order.view(MembershipView(id: 5, members: [other, third]))  == nil)
        #expect(order.delivery(from: other, seq: 3)?.contains("before the snapshot") == true)
        #expect(order.delivery(from: third, seq: 0) == nil)
        #expect(order.delivery(from: other, seq: 40) == nil)
        #expect(order.delivery(from: other, seq: 42)?.contains("is missing or out of order") == true)
        #expect(order.delivery(from: other, seq: 0) != nil)
        // Starting again (a resync) in the same view, or a later one: afresh.
        #expect(order.view(MembershipView(id: 5, members: [other, third])) == nil)
        #expect(order.delivery(from: other, seq: 0) == nil)
        #expect(order.delivery(from: third, seq: 17) == nil)
        #expect(order.view(MembershipView(id: 6, members: [me, other]))?.contains("another peer's log") == true)
        var member = DeliveryOrder(recorder: me)
        #expect(member.view(MembershipView(id: 1, members: [me, other], joined: [me, other])) == nil)
        #expect(member.delivery(from: other, seq: 0) != nil)
    }

    @Test("a sender that departs and joins again starts over; the log's peer joining afresh starts everything over")
    func rejoins() {
        var order = DeliveryOrder(recorder: me)
        #expect(order.view(MembershipView(id: 1, members: [me, other], joined: [me, other])) == nil)
        #expect(order.delivery(from: other, seq: 1) == nil)
        #expect(order.delivery(from: other, seq: 2) == nil)
        // Restarted (a new incarnation counts from 1): it departs, then joins again.
        #expect(order.view(MembershipView(id: 2, members: [me], departed: [other])) == nil)
        #expect(order.view(MembershipView(id: 3, members: [me, other], joined: [other])) == nil)
        #expect(order.delivery(from: other, seq: 1) == nil)
        #expect(order.delivery(from: other, seq: 1) != nil)
        // This peer gave up its view and joins a group founded afresh (its ids start over).
        #expect(order.view(MembershipView(id: 1, members: [me, other], joined: [me, other])) == nil)
        #expect(order.delivery(from: other, seq: 9) == nil)
        // Without joining afresh, a lower id is a breach.
        #expect(order.view(MembershipView(id: 1, members: [me, other])) != nil)
    }
}
