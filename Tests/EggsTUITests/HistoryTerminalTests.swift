import EggTestSupport
import Foundation
import Testing

/// The history as two players see it: two `play` terminals on 127.0.0.1, each with a history of
/// its own (two machines), play two matches; each history holds both with the results the match
/// screens showed, the two agree game by game, and the lobby shows the head-to-head record.
@Suite("history of two terminals in tmux", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"), .tags(.slow), .slowTier)
struct HistoryTerminalTests {
    /// A row of the results table: the player's name (as shown), wins and largest chain.
    struct ShownRow: Equatable {
        var name: String
        var wins: Int
        var largestChain: Int
    }

    /// The rows of the results table on `screen`, under its header line.
    static func resultRows(_ screen: String) -> [ShownRow] {
        let lines = screen.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let header = lines.firstIndex(where: { $0.hasPrefix("player") && $0.contains("largest chain") }) else { return [] }
        var rows: [ShownRow] = []
        for line in lines[(header + 1)...] {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 7, let wins = Int(fields[1]), let chain = Int(fields[2]) else { break }
            rows.append(ShownRow(name: fields[0], wins: wins, largestChain: chain))
        }
        return rows
    }

    /// The matches of the history in `data`, oldest first.
    static func matches(data: String) throws -> [[String: Any]] {
        let result = try Harness.run(["history", "--json", "--last", "0"], environment: ["XDG_DATA_HOME": data])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let matches = (object?["matches"] as? [[String: Any]]) ?? []
        return matches.sorted { ($0["startedAt"] as? Int ?? 0) < ($1["startedAt"] as? Int ?? 0) }
    }

    /// What both peers must agree on in a match: each game's winner and each player's figures.
    static func games(_ match: [String: Any]) -> [String] {
        ((match["games"] as? [[String: Any]]) ?? []).map { game in
            let players = ((game["players"] as? [[String: Any]]) ?? []).map { player in
                "\(player["peer"] ?? "?"):\(player["largestChain"] ?? "?")/\(player["pairsPlaced"] ?? "?")/\(player["garbageSent"] ?? "?")/\(player["garbageReceived"] ?? "?")/\(player["toppedOut"] ?? "?")"
            }.sorted()
            return "\(game["number"] ?? "?") \(game["winner"] ?? "draw") \(players.joined(separator: " "))"
        }
    }

    @Test("two matches between two terminals: both histories hold both, as the results screens showed them; the lobby shows the record")
    func twoMatches() throws {
        let port = TestPorts.next()
        let home = try Harness.temporaryDirectory("history-two")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let common = "play --interface 127.0.0.1 --port \(port) --room hist-\(port) --speed 9"
        func session(_ name: String, id: String) throws -> TmuxSession {
            try TmuxSession(command: "\(Harness.binary) \(common) --name \(name) --id \(id); echo EXIT=$?; sleep 60", width: 100, height: 30,
                            environment: ["XDG_DATA_HOME": "\(home)/\(name)/data", "XDG_STATE_HOME": "\(home)/\(name)/state"])
        }
        let alice = try session("alice", id: "a1")
        defer { alice.close() }
        let bob = try session("bob", id: "b2")
        defer { bob.close() }
        try #require(alice.waitFor("bob") != nil, "alice's lobby never listed bob: \(alice.screen())")
        var shown: [(alice: [ShownRow], bob: [ShownRow])] = []
        for match in 1...2 {
            alice.send("r")
            bob.send("r")
            try #require(alice.waitFor("game 1", seconds: 30) != nil, "match \(match) did not start: \(alice.screen())")
            // Alice drops her pairs at once: she tops out first and bob wins the game.
            // Not once the game is over: a key on the results screen goes back to the lobby.
            for _ in 0..<100 {
                let screen = alice.screen()
                if screen.contains("topped out") || screen.contains("largest chain") { break }
                alice.send("Space")
                usleep(100_000)
            }
            let aliceResults = try #require(alice.waitFor("largest chain", seconds: 120), "match \(match): no results for alice: \(alice.screen())")
            let bobResults = try #require(bob.waitFor("largest chain", seconds: 30), "match \(match): no results for bob: \(bob.screen())")
            shown.append((Self.resultRows(aliceResults), Self.resultRows(bobResults)))
            #expect(shown.last?.alice.count == 2 && shown.last?.bob.count == 2, "match \(match): results tables: \(aliceResults)\n\(bobResults)")
            // Any key other than ready and quit: back to the lobby.
            alice.send("x")
            bob.send("x")
            #expect(alice.waitFor("Press r", seconds: 20) != nil, "alice is not back in the lobby: \(alice.screen())")
        }
        // The lobby shows the record against bob, from alice's own history (2 matches, each won by bob).
        let record = alice.waitForLine(matching: #"bob [0-9]+ ±[0-9]+, 0-2 with you"#, seconds: 20)
        #expect(record != nil, "alice's lobby lacks the head-to-head record: \(alice.screen())")
        alice.send("q")
        bob.send("q")
        #expect(alice.waitFor("EXIT=0") != nil, "\(alice.screen())")
        #expect(bob.waitFor("EXIT=0") != nil, "\(bob.screen())")

        let aliceMatches = try Self.matches(data: "\(home)/alice/data"), bobMatches = try Self.matches(data: "\(home)/bob/data")
        #expect(aliceMatches.count == 2 && bobMatches.count == 2, "alice recorded \(aliceMatches.count), bob \(bobMatches.count)")
        for (index, (mine, theirs)) in zip(aliceMatches, bobMatches).enumerated() {
            #expect(Self.games(mine) == Self.games(theirs), "match \(index + 1): the two histories differ:\n\(Self.games(mine))\n\(Self.games(theirs))")
            #expect(mine["abandoned"] as? Bool == false && theirs["abandoned"] as? Bool == false)
            // As the results screens showed them: wins and largest chain of each player.
            guard index < shown.count else { continue }
            let players = (mine["players"] as? [[String: Any]]) ?? []
            let games = (mine["games"] as? [[String: Any]]) ?? []
            func recorded(_ peer: String) -> ShownRow? {
                guard let player = players.first(where: { ($0["peer"] as? String)?.hasSuffix(peer) == true }),
                      let wins = player["wins"] as? Int else { return nil }
                let chains = games.flatMap { ($0["players"] as? [[String: Any]]) ?? [] }
                    .filter { ($0["peer"] as? String)?.hasSuffix(peer) == true }.compactMap { $0["largestChain"] as? Int }
                return ShownRow(name: "", wins: wins, largestChain: chains.max() ?? 0)
            }
            func onScreen(_ rows: [ShownRow], _ name: String) -> ShownRow? {
                rows.first { $0.name == name }.map { ShownRow(name: "", wins: $0.wins, largestChain: $0.largestChain) }
            }
            #expect(recorded("a1") != nil && recorded("b2") != nil, "match \(index + 1): players not found in \(players)")
            #expect(recorded("a1") == onScreen(shown[index].alice, "you") && recorded("a1") == onScreen(shown[index].bob, "alice"),
                    "match \(index + 1): alice's record \(String(describing: recorded("a1"))) against the screens \(shown[index])")
            #expect(recorded("b2") == onScreen(shown[index].alice, "bob") && recorded("b2") == onScreen(shown[index].bob, "you"),
                    "match \(index + 1): bob's record \(String(describing: recorded("b2"))) against the screens \(shown[index])")
            #expect(mine["result"] as? String == "lost 0-1" && theirs["result"] as? String == "won 1-0",
                    "match \(index + 1): alice \(mine["result"] ?? "?"), bob \(theirs["result"] ?? "?")")
        }
    }
}
