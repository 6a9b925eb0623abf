import EggGame
import PeerNet
import Testing
@testable import Consensus

/// Plays a 2-player bot match with peer 1's log recorded; returns the harness and the log lines
/// (unsealed: ``MessageLog/sealed(_:passphrase:)`` makes them a log).
func recordedMatch(seed: UInt64) -> (VSHarness, PeerID, [String]) {
    let h = VSHarness(seed: seed)
    let first = PeerID(0x1000_0000_0001)
    h.logged = [first]
    let ids = startRoom(h, count: 2, settings: MatchSettings(speed: 9, colors: 4, gamesPerMatch: 1))
    var ticks = 0
    while matchOvers(h).count < ids.count && ticks < 40_000 {
        h.tick(deliveries: 12)
        ticks += 1
    }
    h.deliverAll(to: ids)
    return (h, first, h.logs[first] ?? [])
}

@Suite("Message log and replay")
struct ReplayTests {
    @Test("a recorded log replays: every checkpoint verifies and the decisions equal the recorder's")
    func roundTrip() throws {
        let (h, id, lines) = recordedMatch(seed: 7)
        #expect(lines.first?.contains("\"format\":\"eggs-log\"") == true)
        let report = try Replay.verify(MessageLog.sealed(lines))
        #expect(report.ok)
        #expect(report.truncatedAtLine == nil)
        #expect(report.checkpoints == h.peers[id]!.stats.checkpointsVerified)
        #expect(report.checkpoints > 10)
        #expect(report.decisions == h.peers[id]!.decisionsLog.map(\.value))
        #expect(report.players.count == 2)
        #expect(report.json.hasPrefix("{\"ok\":true,\"messages\":"))
    }

    @Test("a flipped checkpoint hash is reported as a mismatch naming player and pair")
    func flippedCheckpoint() throws {
        var (_, _, lines) = recordedMatch(seed: 8)
        let index = try #require(lines.firstIndex { $0.contains("\"type\":\"checkpoint\"") })
        let line = lines[index]
        let hashStart = try #require(line.range(of: "\"hash\":\"")).upperBound
        let digit = line[hashStart]
        lines[index] = line.replacingCharacters(in: hashStart...hashStart, with: digit == "0" ? "1" : "0")
        let report = try Replay.verify(MessageLog.sealed(lines))
        #expect(!report.ok)
        #expect(report.desyncs.count >= 1)
        #expect(report.json.contains("\"mismatch\":\"desync: player"))
    }

    @Test("a removed input message makes later checkpoints mismatch")
    func removedMessage() throws {
        var (_, _, lines) = recordedMatch(seed: 9)
        // A message with a sideways move or a hard drop: without it the board differs.
        let inputs = lines.indices.filter { index in
            lines[index].contains("\"type\":\"inputs\"") && ["\"left\"", "\"right\"", "\"drop\""].contains { lines[index].contains($0) }
        }
        let index = try #require(inputs.dropFirst(3).first)
        let removed = lines.remove(at: index)
        // The gap in its sender's seqs is damage at the sender's next line.
        let sender = try #require(removed.range(of: "\"from\":\"")).upperBound
        let from = String(removed[sender...].prefix(16))
        let next = try #require(lines[index...].firstIndex { $0.contains("\"from\":\"\(from)\"") })
        #expect(throws: ReplayError.self) { try Replay.verify(MessageLog.sealed(lines)) }
        do throws(ReplayError) {
            _ = try Replay.verify(MessageLog.sealed(lines))
        } catch {
            #expect(error.line == next + 1 && error.reason.contains("missing or out of order"), "\(error)")
        }
        // With the sender's later seqs renumbered (an order with no gap), the replay runs and its
        // checkpoints mismatch.
        for later in index..<lines.count where lines[later].contains("\"from\":\"\(from)\"") {
            let json = try #require(JSONValue.parse(lines[later]))
            guard case .object(var pairs) = json, let at = pairs.firstIndex(where: { $0.0 == "seq" }),
                  let seq = pairs[at].1.intValue else { continue }
            pairs[at].1 = .int(seq - 1)
            lines[later] = JSONValue.object(pairs).serialized
        }
        let report = try Replay.verify(MessageLog.sealed(lines))
        #expect(!report.ok)
    }

    @Test("a truncated last line stops the replay there and says so")
    func truncatedLine() throws {
        let (_, _, lines) = recordedMatch(seed: 10)
        let sealed = MessageLog.sealed(lines).split(separator: "\n").map(String.init)
        let cut = sealed.dropLast().joined(separator: "\n") + "\n" + String(sealed.last!.prefix(sealed.last!.count / 2))
        let report = try Replay.verify(cut)
        #expect(report.truncatedAtLine == lines.count)
    }

    @Test("a corrupt line in the middle is an error naming its 1-based line number")
    func corruptLine() {
        let (_, _, lines) = recordedMatch(seed: 11)
        var broken = MessageLog.sealed(lines).split(separator: "\n").map(String.init)
        broken[5] = "{\"from\": nonsense"
        let error = #expect(throws: ReplayError.self) {
            _ = try Replay.verify(broken.joined(separator: "\n") + "\n")
        }
        #expect(error?.line == 6)
        let noHeader = MessageLog.sealed(Array(lines.dropFirst()))
        #expect(throws: ReplayError.self) { _ = try Replay.verify(noHeader) }
    }
}
