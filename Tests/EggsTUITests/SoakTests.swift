import EggTestSupport
import Foundation
import Testing

/// Soak runs: bot peers as separate processes. Multicast stays on 127.0.0.1, or inside a
/// private network namespace the test creates.
@Suite("soak", .serialized, .tags(.slow), .slowTier)
struct SoakTests {
    static func verdict(_ stdout: String) -> [String: Any]? {
        guard let line = stdout.split(separator: "\n").last else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    }

    @Test("a 60 s soak of 4 peers with churn on 127.0.0.1 passes its verdict")
    func soakWithChurn() throws {
        let directory = NSTemporaryDirectory() + "eggs-soak-\(getpid())-\(Int.random(in: 0...1_000_000))"
        let port = TestPorts.next()
        let result = try Harness.run(
            ["soak", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "soak-\(port)", "--peers", "4",
             "--seconds", "60", "--churn", "--dir", directory, "--seed", "\(port)"],
            timeoutSeconds: 180)
        #expect(result.status == 0, "soak failed (logs kept in \(directory)): \(result.stderr.suffix(2_000))")
        if result.status == 0 { try? FileManager.default.removeItem(atPath: directory) }
        let verdict = try #require(Self.verdict(result.stdout), "no verdict: \(result.stdout)")
        #expect(verdict["ok"] as? Bool == true)
        #expect((verdict["killed"] as? Int ?? 0) >= 3, "churn killed too few peers: \(verdict)")
        #expect(verdict["crashed"] as? Int == 0)
        #expect(verdict["mismatches"] as? Int == 0)
        #expect(verdict["disagreements"] as? Int == 0)
        #expect((verdict["roundsDecided"] as? Int ?? 0) > 50)
        #expect((verdict["logsVerified"] as? Int ?? 0) + (verdict["killedBeforeLog"] as? Int ?? 0) == verdict["lives"] as? Int)
        #expect(result.stderr.contains("soak 10s:"), "no live progress on stderr")
    }

    /// Whether this machine lets an unprivileged test make a network namespace with nftables.
    static var namespaceWithNftables: Bool {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["-rn", "sh", "-c", "ip link set lo up && nft add table inet probe"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"), (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }

    @Test("a soak inside a private network namespace with 20 % packet loss from nftables passes its verdict",
          .enabled(if: namespaceWithNftables, "skipped: no unprivileged network namespace with nftables here (needs unshare -rn, ip and nft)"))
    func soakUnderLoss() throws {
        let directory = NSTemporaryDirectory() + "eggs-lossy-\(getpid())-\(Int.random(in: 0...1_000_000))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = 47777
        let script = """
            set -e
            ip link set lo up
            ip link set lo multicast on
            nft add table inet chaos
            nft add chain inet chaos in '{ type filter hook input priority 0; }'
            nft add rule inet chaos in udp dport \(port) numgen random mod 100 '<' 20 drop
            exec "$0" soak --interface 127.0.0.1 --port \(port) --peers 3 --seconds 40 --dir "$1"
            """
        let run = try Harness.runProcess("/usr/bin/unshare", ["-rn", "sh", "-c", script, Harness.binary, directory], timeoutSeconds: 300)
        let output = run.stdout
        #expect(run.status == 0, "soak under loss failed: \(run.stderr.suffix(2_000))")
        let verdict = try #require(Self.verdict(output), "no verdict: \(output)")
        #expect(verdict["ok"] as? Bool == true)
        #expect(verdict["mismatches"] as? Int == 0)
        #expect((verdict["roundsDecided"] as? Int ?? 0) > 20)
        // The loss is real: the peers had to repair.
        let retransmissions = run.stderr.split(separator: "\n").last { $0.hasPrefix("soak ") }.map(String.init) ?? ""
        #expect(!retransmissions.contains("retransmitted 0,"), "no retransmissions under 20 % loss: \(retransmissions)")
    }
}
