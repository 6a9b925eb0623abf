import EggTestSupport
import Foundation
import Testing

/// `$XDG_CONFIG_HOME/eggs/config.toml`: the defaults a player sets once; flags win; a bad
/// file is exit 2 naming its line.
@Suite("config file", .tags(.slow), .slowTier)
struct ConfigTests {
    /// A fresh XDG_CONFIG_HOME holding `eggs/config.toml` with `text`.
    static func configHome(_ text: String) throws -> String {
        let home = try Harness.temporaryDirectory("config")
        try FileManager.default.createDirectory(atPath: home + "/eggs", withIntermediateDirectories: true)
        try text.write(toFile: home + "/eggs/config.toml", atomically: true, encoding: .utf8)
        return home
    }

    /// The `room` of a message log's header line.
    static func loggedRoom(_ log: String) throws -> String? {
        let text = try String(contentsOfFile: log, encoding: .utf8)
        let header = try #require(text.split(separator: "\n").first)
        let json = try JSONSerialization.jsonObject(with: Data(header.utf8)) as? [String: Any]
        return json?["room"] as? String
    }

    @Test("room and interface come from the config file; --room on the command line wins")
    func networkDefaultsAndFlagsWin() throws {
        let home = try Self.configHome("""
            # set once
            room = "from-config"
            interface = "127.0.0.1"
            """)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let port = TestPorts.next()
        let env = ["XDG_CONFIG_HOME": home, "XDG_STATE_HOME": home + "/state"]
        let fromConfig = try Harness.run(["bot", "--port", "\(port)", "--seconds", "0.5", "--log", home + "/a.jsonl"], environment: env)
        #expect(fromConfig.status == 0, "\(fromConfig.stderr)")
        #expect(try Self.loggedRoom(home + "/a.jsonl") == "from-config")
        let flagged = try Harness.run(["bot", "--port", "\(port)", "--seconds", "0.5", "--room", "from-flag", "--log", home + "/b.jsonl"],
                                      environment: env)
        #expect(flagged.status == 0, "\(flagged.stderr)")
        #expect(try Self.loggedRoom(home + "/b.jsonl") == "from-flag")
    }

    /// The `colors` of the first match start a log records.
    static func loggedColors(_ log: String) throws -> Int? {
        let text = try String(contentsOfFile: log, encoding: .utf8)
        for line in text.split(separator: "\n").dropFirst() where line.contains("\"type\":\"start\"") {
            let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return (json?["msg"] as? [String: Any])?["colors"] as? Int
        }
        return nil
    }

    @Test("colors from the config file set the match's egg colours; --colors wins")
    func colorsAndFlagWins() throws {
        let home = try Self.configHome("interface = \"127.0.0.1\"\ncolors = 5\n")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let port = TestPorts.next()
        func match(_ name: String, port: Int, extra: [String]) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Harness.binary)
            process.arguments = ["bot", "--port", "\(port)", "--room", "colors-\(port)", "--count", "2", "--players", "2",
                                 "--games", "1", "--speed", "9", "--seconds", "40", "--log", "\(home)/\(name).jsonl"] + extra
            process.environment = ProcessInfo.processInfo.environment.merging(["XDG_CONFIG_HOME": home]) { $1 }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        let fromConfig = try match("config", port: port, extra: [])
        let fromFlag = try match("flag", port: port + 1, extra: ["--colors", "6"])
        fromConfig.waitUntilExit()
        fromFlag.waitUntilExit()
        #expect(fromConfig.terminationStatus == 0 && fromFlag.terminationStatus == 0)
        let logs = try FileManager.default.contentsOfDirectory(atPath: home).filter { $0.hasSuffix(".jsonl") }
        let configLog = try #require(logs.first { $0.hasPrefix("config") }), flagLog = try #require(logs.first { $0.hasPrefix("flag") })
        #expect(try Self.loggedColors("\(home)/\(configLog)") == 5)
        #expect(try Self.loggedColors("\(home)/\(flagLog)") == 6)
    }

    @Test("a config file that is not TOML, has an unknown key or a bad value exits 2 naming file and line",
          arguments: [
            ("room = \"x\"\nport = [1,\n", "line 2"),
            ("room = \"x\"\n\n  colour = true\n", "line 3: unknown key 'colour'"),
            ("name = \"ada\"\nport = 70000\n", "line 2: port must be an integer from 1 to 65535"),
            ("room = \"x\"\n[keys]\nleft = \"a\"\njump = \"w\"\n", "line 4: unknown action 'jump'"),
            ("[keys]\nleft = \"ab\"\n", "line 2: unknown key 'ab'"),
            ("color = \"no\"\n", "line 1: color must be true or false"),
            ("name = \"x\"\n# many colours\ncolors = 9\n", "line 3: colors must be 4, 5 or 6"),
            ("name = \"x\"\nroom = friday\n", "line 2: room: a string in quotes"),
            ("[keys]\nleft = a\n", "line 2: left: a key name in quotes, or a list of them in brackets"),
          ])
    func badFile(text: String, expected: String) throws {
        let home = try Self.configHome(text)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let result = try Harness.run(["bot", "--interface", "127.0.0.1", "--seconds", "0.5", "--log", home + "/x.jsonl"],
                                     environment: ["XDG_CONFIG_HOME": home])
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "stderr: \(result.stderr)")
        #expect(result.stderr.contains(home + "/eggs/config.toml: " + expected), "stderr: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home + "/x.jsonl"))
    }

    @Test("name and keys from the config file show in a practice game; --keys still wins for its action",
          .enabled(if: Harness.hasTmux))
    func nameAndKeys() throws {
        let home = try Self.configHome("""
            name = "ada-cfg"
            color = false
            [keys]
            hard-drop = "w"
            left = ["a", "left"]
            """)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let session = try TmuxSession(
            command: "\(Harness.binary) play --practice --seed 3 --keys 'pause=o'; echo EXIT=$?; sleep 60",
            environment: ["XDG_CONFIG_HOME": home, "XDG_STATE_HOME": home + "/state"])
        defer { session.close() }
        _ = try #require(session.waitFor("ada-cfg"), "screen: \(session.screen())")
        // The names come before the key hints in a frame: a loaded machine can show one without
        // the other, so wait for the hints too (whatever keys they name).
        let screen = try #require(session.waitFor("hard drop"), "screen: \(session.screen())")
        #expect(screen.contains("w hard drop"), "screen: \(screen)")
        #expect(screen.contains("o pause"), "screen: \(screen)")
        #expect(screen.contains("a/→ move"), "screen: \(screen)")
        session.send("q")
        session.send("y")
        #expect(session.waitFor("EXIT=0", seconds: 10) != nil, "screen: \(session.screen())")
    }
}
