import EggTestSupport
import Foundation
import Testing

/// `--peer HOST[:PORT]` and `--no-multicast`: bot matches where multicast does not reach,
/// the second player knowing nobody's address (it learns the first's from its announcement).
@Suite("unicast peers", .serialized, .tags(.slow), .slowTier)
struct UnicastTests {
    struct Bot {
        var games: Int
        var desyncs: Int
        var retransmitted: Int
        var log: String
    }

    static func bots(_ directory: String) throws -> [Bot] {
        try ["a", "b"].map { name in
            let entry = try #require(try BotAndReplayTests.summaryEntries("\(directory)/\(name).json").first)
            return Bot(games: try #require(entry["games"] as? Int), desyncs: try #require(entry["desyncs"] as? Int),
                       retransmitted: try #require(entry["retransmitted"] as? Int), log: try #require(entry["log"] as? String))
        }
    }

    /// Both bots played their game without a desync, and each log verifies.
    static func expectPlayed(_ directory: String, passphrase: String? = nil) throws -> [Bot] {
        let bots = try Self.bots(directory)
        for bot in bots {
            #expect(bot.games >= 1, "a bot played no game: \(bot)")
            #expect(bot.desyncs == 0)
            let (verify, json) = try BotAndReplayTests.verify(bot.log, passphrase: passphrase)
            #expect(verify.status == 0, "\(bot.log): \(verify.stderr)")
            #expect((json?["players"] as? [String: Any])?.count == 2)
        }
        return bots
    }

    @Test("two bots on 127.0.0.1 with --no-multicast on different ports play through --peer given to one of them")
    func loopbackNoMulticast() throws {
        let directory = try Harness.temporaryDirectory("unicast")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let portA = TestPorts.next(count: 2), portB = portA + 1
        func bot(_ name: String, port: Int, id: String, extra: [String]) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Harness.binary)
            process.arguments = ["bot", "--no-multicast", "--interface", "127.0.0.1", "--port", "\(port)", "--room", "uni-\(portA)",
                                 "--players", "2", "--games", "1", "--speed", "9", "--seconds", "45", "--id", id,
                                 "--passphrase", "p-\(portA)", "--log", "\(directory)/\(name).jsonl", "--summary", "\(directory)/\(name).json"] + extra
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        let a = try bot("a", port: portA, id: "c00", extra: ["--peer", "127.0.0.1:\(portB)"])
        let b = try bot("b", port: portB, id: "c01", extra: [])
        a.waitUntilExit()
        b.waitUntilExit()
        #expect(a.terminationStatus == 0 && b.terminationStatus == 0)
        _ = try Self.expectPlayed(directory, passphrase: "p-\(portA)")
    }

    @Test("a bad --peer is exit 2 naming it")
    func badPeer() throws {
        for peer in ["10.1.2.3:0", "10.1.2.3:99999", "no such host.invalid", "1.2.3.4:5:6"] {
            let result = try Harness.run(["bot", "--interface", "127.0.0.1", "--peer", peer, "--seconds", "1"])
            #expect(result.status == 2, "--peer \(peer)")
            #expect(result.stderr.contains("--peer"), "--peer \(peer): \(result.stderr)")
        }
    }

    /// Two hosts (network namespaces a = 10.77.0.1 and b = 10.77.0.2 on a bridge, inside a
    /// private user, network and mount namespace) whose nftables drop every multicast
    /// datagram, optionally `lossPercent` of the UDP datagrams coming in as well. Bot a is
    /// told b's address; b is told nothing. Returns the multicast datagrams dropped.
    static func bridgedMatch(directory: String, lossPercent: Int) throws -> Int {
        let port = 47777
        let script = """
            set -e
            pids=""
            trap 'kill $pids 2>/dev/null || true' EXIT
            mount -t tmpfs tmpfs /run
            mkdir -p /run/netns
            ip link set lo up
            ip link add br0 type bridge
            ip link set br0 up
            i=1
            for h in a b; do
              ip netns add $h
              ip link add veth-$h type veth peer name eth0 netns $h
              ip link set veth-$h master br0
              ip link set veth-$h up
              ip -n $h addr add 10.77.0.$i/24 dev eth0
              ip -n $h link set eth0 up
              ip -n $h link set lo up
              ip netns exec $h nft add table inet f
              ip netns exec $h nft add chain inet f out '{ type filter hook output priority 0; }'
              ip netns exec $h nft add rule inet f out ip daddr 224.0.0.0/4 counter drop
              ip netns exec $h nft add chain inet f in '{ type filter hook input priority 0; }'
              ip netns exec $h nft add rule inet f in ip daddr 224.0.0.0/4 counter drop
              if [ "$2" -gt 0 ]; then
                ip netns exec $h nft add rule inet f in udp dport \(port) numgen random mod 100 '<' "$2" drop
              fi
              i=$((i+1))
            done
            common="bot --port \(port) --room bridged --players 2 --games 1 --speed 9 --seconds 50"
            ip netns exec a "$0" $common --interface 10.77.0.1 --id d00 --peer 10.77.0.2 \\
                --log "$1/a.jsonl" --summary "$1/a.json" 2>"$1/a.err" &
            pids="$!"
            ip netns exec b "$0" $common --interface 10.77.0.2 --id d01 \\
                --log "$1/b.jsonl" --summary "$1/b.json" 2>"$1/b.err" &
            pids="$pids $!"
            status=0
            for pid in $pids; do wait "$pid" || status=1; done
            pids=""
            for h in a b; do
              ip netns exec $h nft list ruleset | sed -n 's/.*ip daddr 224.0.0.0\\/4 counter packets \\([0-9]*\\).*/dropped \\1/p'
            done
            exit $status
            """
        let run = try Harness.runProcess(
            "/usr/bin/timeout", ["-k", "5", "80", "/usr/bin/unshare", "-rnm", "sh", "-c", script, Harness.binary, directory, "\(lossPercent)"],
            timeoutSeconds: 120)
        let output = run.stdout
        let botErrors = ["a", "b"].map { (try? String(contentsOfFile: "\(directory)/\($0).err", encoding: .utf8)) ?? "" }
        #expect(run.status == 0, "bridged match failed: \(run.stderr.suffix(1_000)) bots: \(botErrors)")
        return output.split(separator: "\n").compactMap { line in line.hasPrefix("dropped ") ? Int(line.dropFirst(8)) : nil }.reduce(0, +)
    }

    @Test("two namespaced hosts whose multicast nftables drops play a bot match through --peer",
          .enabled(if: SoakTests.namespaceWithNftables, "skipped: no unprivileged network namespace with nftables here"))
    func bridgedWithoutMulticast() throws {
        let directory = try Harness.temporaryDirectory("bridged")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let dropped = try Self.bridgedMatch(directory: directory, lossPercent: 0)
        #expect(dropped > 0, "no multicast datagram was dropped: the test would not show that unicast carried the match")
        _ = try Self.expectPlayed(directory)
    }

    @Test("the same with 20 % of incoming datagrams dropped: the match repairs and completes",
          .enabled(if: SoakTests.namespaceWithNftables, "skipped: no unprivileged network namespace with nftables here"))
    func bridgedWithLoss() throws {
        let directory = try Harness.temporaryDirectory("bridged-loss")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let dropped = try Self.bridgedMatch(directory: directory, lossPercent: 20)
        #expect(dropped > 0)
        let bots = try Self.expectPlayed(directory)
        #expect(bots.contains { $0.retransmitted > 0 }, "no retransmission under 20 % loss: \(bots)")
    }
}
