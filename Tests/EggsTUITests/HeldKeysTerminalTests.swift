import EggTestSupport
import Foundation
import Testing

/// Held keys by the kitty keyboard protocol and the drop preview, end to end in tmux: the
/// protocol's key events are fed to the pane as the bytes a terminal that speaks it sends.
@Suite("held keys and the drop preview in tmux", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"), .tags(.slow), .slowTier)
struct HeldKeysTerminalTests {
    /// Sends raw bytes to the pane (as the terminal would send them).
    static func sendBytes(_ session: TmuxSession, _ text: String) {
        let hex = text.utf8.map { String(format: "%02x", $0) }
        _ = try? Harness.tmux(session.socket, ["send-keys", "-t", session.name, "-H"] + hex)
    }

    static let esc = "\u{1B}"
    /// A key's press and release events: `CSI code u`, `CSI code;1:3 u`.
    static func tap(_ code: Int) -> String { "\(esc)[\(code)u\(esc)[\(code);1:3u" }

    /// The cells of the bottom row of the first (the player's) board: one string per column.
    static func bottomRow(_ screen: String) -> [String]? {
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map { Array(String($0)) }
        guard let bottom = lines.firstIndex(where: { $0.contains("└") || String($0).contains("+-") }), bottom > 0 else { return nil }
        let row = lines[bottom - 1]
        guard let left = row.firstIndex(where: { $0 == "│" || $0 == "|" }), row.count >= left + 13 else { return nil }
        return (0..<6).map { String(row[left + 1 + 2 * $0]) }
    }

    static func isEmptyCell(_ cell: String) -> Bool { cell == "·" || cell == "." }

    /// Practice with `config`: turns the first pair upright, taps left to the wall, holds
    /// right for `holdMilliseconds` (with the terminal's own repeat events in between when
    /// `terminalRepeats`), hard drops, and returns the column the pair landed in.
    static func landingColumn(config: String, holdMilliseconds: UInt32, terminalRepeats: Bool = false) throws -> Int? {
        let home = try ConfigTests.configHome("keyboard = \"kitty\"\n" + config)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let session = try TmuxSession(
            command: "\(Harness.binary) play --practice --seed 5 --speed 0 --name held; echo EXIT=$?; sleep 60",
            width: 100, height: 30, environment: ["XDG_CONFIG_HOME": home])
        defer { session.close() }
        guard session.waitFor("? help") != nil else {
            Issue.record("the game did not start: \(session.screen())")
            return nil
        }
        sendBytes(session, tap(120))  // x: turn clockwise, the pair stands in one column
        for _ in 0..<4 { sendBytes(session, "\(esc)[1;1:1D\(esc)[1;1:3D") }  // four taps left: to the wall
        usleep(300_000)
        sendBytes(session, "\(esc)[1;1:1C")
        if terminalRepeats {
            for _ in 0..<5 {
                usleep(holdMilliseconds * 1000 / 6)
                sendBytes(session, "\(esc)[1;1:2C")
            }
            usleep(holdMilliseconds * 1000 / 6)
        } else {
            usleep(holdMilliseconds * 1000)
        }
        sendBytes(session, "\(esc)[1;1:3C")
        usleep(100_000)
        sendBytes(session, tap(32))  // space: hard drop
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let row = bottomRow(session.screen()) {
                let filled = row.indices.filter { !isEmptyCell(row[$0]) }
                if filled.count == 1 { return filled[0] }
                if filled.count > 1 {
                    Issue.record("the pair did not land upright in one column: \(row)")
                    return nil
                }
            }
            usleep(100_000)
        }
        Issue.record("the pair never landed: \(session.screen())")
        return nil
    }

    @Test("kitty protocol: holding right 500 ms moves the pair as DAS/ARR predict; the terminal's own repeats are ignored")
    func holdRight() throws {
        // das 200, arr 200: the press moves at once, repeats at 200 and 400 ms (the next would
        // be at 600): 3 columns from the wall, ±1.
        let glided = try #require(try Self.landingColumn(config: "das = 200\narr = 200\n", holdMilliseconds: 500))
        #expect((2...4).contains(glided), "held 500 ms with das 200 / arr 200 the pair moved \(glided) columns, DAS/ARR predict 3 (±1)")
        // das 2000: 500 ms is within the delay, so the press alone moves it, whatever the
        // terminal repeats meanwhile.
        let once = try #require(try Self.landingColumn(config: "das = 2000\narr = 150\n", holdMilliseconds: 500, terminalRepeats: true))
        #expect(once == 1, "held 500 ms within a 2 s delay (with 5 terminal repeats) the pair moved \(once) columns, not 1")
    }

    @Test("kitty protocol: pushed at start, popped on quit and on SIGTERM; Ctrl-C by the protocol quits")
    func pushedAndPopped() throws {
        let home = try ConfigTests.configHome("keyboard = \"kitty\"\n")
        defer { try? FileManager.default.removeItem(atPath: home) }
        for way in ["quit", "sigterm", "ctrl-c"] {
            let output = home + "/pane-\(way).bytes", pidFile = home + "/pid-\(way)"
            // The pane's output is piped to a file before the game starts (the sleep), so its
            // first bytes are in it.
            let session = try TmuxSession(
                command: "sleep 1; echo $$ > \(pidFile); exec \(Harness.binary) play --practice --seed 5 --name held",
                width: 100, height: 30, environment: ["XDG_CONFIG_HOME": home])
            defer { session.close() }
            _ = try Harness.tmux(session.socket, ["pipe-pane", "-t", session.name, "-O", "cat >> \(output)"])
            #expect(session.waitFor("? help") != nil, "\(way): the game did not start: \(session.screen())")
            switch way {
            case "quit":
                Self.sendBytes(session, Self.tap(113))
                Self.sendBytes(session, Self.tap(121))
            case "sigterm":
                let pid = try #require(Int32((try String(contentsOfFile: pidFile, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)))
                kill(pid, SIGTERM)
            default:
                Self.sendBytes(session, "\(Self.esc)[99;5u")
            }
            let deadline = Date().addingTimeInterval(10)
            var bytes = ""
            while Date() < deadline {
                bytes = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                if let push = bytes.range(of: "\(Self.esc)[>15u"), bytes[push.upperBound...].contains("\(Self.esc)[<u") { break }
                usleep(100_000)
            }
            let push = bytes.range(of: "\(Self.esc)[>15u")
            #expect(push != nil, "\(way): the protocol was never pushed")
            if let push { #expect(bytes[push.upperBound...].contains("\(Self.esc)[<u"), "\(way): the protocol was not popped at exit") }
        }
    }

    @Test("preview = true shows where the pair will land, hollow, on the player's board; v hides and shows it")
    func preview() throws {
        let home = try ConfigTests.configHome("preview = true\n")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let session = try TmuxSession(
            command: "\(Harness.binary) play --practice --seed 5 --speed 0 --name looker; echo EXIT=$?; sleep 60",
            width: 100, height: 30, environment: ["XDG_CONFIG_HOME": home])
        defer { session.close() }
        #expect(session.waitFor("? help") != nil, "the game did not start: \(session.screen())")
        let hollow: Set<String> = ["○", "□", "△", "◇", "♧", "✛", "r", "b", "y", "p", "g", "o"]
        func previewColumns() -> [Int] {
            guard let row = Self.bottomRow(session.screen()) else { return [] }
            return row.indices.filter { hollow.contains(row[$0]) }
        }
        func wait(for columns: [Int]) -> Bool {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if previewColumns() == columns { return true }
                usleep(100_000)
            }
            return false
        }
        // The sfe pair spawns flat over columns 2 and 3.
        #expect(wait(for: [2, 3]), "no preview under the new pair: \(session.screen())")
        session.send("v")
        #expect(wait(for: []), "v did not hide the preview: \(session.screen())")
        session.send("v")
        #expect(wait(for: [2, 3]), "v did not show the preview again: \(session.screen())")
        session.send("Left")
        #expect(wait(for: [1, 2]), "the preview did not follow the pair: \(session.screen())")
        session.send("q")
        session.send("y")
        #expect(session.waitFor("EXIT=0") != nil, "\(session.screen())")
    }
}
