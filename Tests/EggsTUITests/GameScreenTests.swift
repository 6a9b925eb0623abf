import EggTestSupport
import Foundation
import Testing

/// What a player meets in the terminal: pause, the too-small notice, the lobby's practice key,
/// a plain-ASCII locale and the egg colours, driven end to end in tmux.
@Suite("game screens in tmux", .serialized, .enabled(if: Harness.hasTmux, "tmux is not installed (scripts/setup.sh installs it)"), .tags(.slow), .slowTier)
struct GameScreenTests {
    /// The screen's lines, joined with spaces (for text the game word-wraps).
    static func joined(_ screen: String) -> String {
        screen.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

    static func firstMatch(_ pattern: String, in text: String) -> [String]? {
        guard let regex = try? NSRegularExpression(pattern: pattern),
              let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) else { return nil }
        return (0..<match.numberOfRanges).map { index in
            Range(match.range(at: index), in: text).map { String(text[$0]) } ?? ""
        }
    }

    @Test("a closed tmux session leaves no server, no process and no socket behind, even one that ignores SIGHUP")
    func sessionCleansUp() throws {
        let session = try TmuxSession(command: "sh -c 'trap \"\" HUP; sleep 300 & sleep 300; wait'")
        var found: (server: pid_t?, panes: [pid_t]) = (nil, [])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            found = session.processes()
            if found.panes.count >= 3 { break }
            usleep(50_000)
        }
        #expect(found.server != nil, "no tmux server found")
        #expect(found.panes.count >= 3, "the shell and its two sleeps were not found: \(found.panes)")
        #expect(FileManager.default.fileExists(atPath: session.socketPath))
        session.close()
        for pid in found.panes + (found.server.map { [$0] } ?? []) {
            #expect(!TmuxSession.alive(pid), "process \(pid) survived the session")
        }
        #expect(!FileManager.default.fileExists(atPath: session.socketPath), "the socket \(session.socketPath) is left")
    }

    @Test("pause freezes the whole practice screen (pairs, garbage, the bot, the clock) for 5 s; p resumes")
    func practicePauseFreezes() throws {
        let session = try TmuxSession(
            command: "\(Harness.binary) play --practice --seed 5 --level insane --speed 9 --name pauser; echo EXIT=$?; sleep 60",
            width: 100, height: 30)
        defer { session.close() }
        #expect(session.waitFor("pauser") != nil, "the game did not start: \(session.screen())")
        usleep(1_500_000)
        session.send("p")
        let paused = try #require(session.waitFor("Paused"), "no pause: \(session.screen())")
        usleep(300_000)
        let before = session.screen()
        usleep(5_000_000)
        let after = session.screen()
        #expect(before == after, "the paused screen changed:\n\(before)\n---\n\(after)")
        #expect(paused.contains("0:0"))
        session.send("p")
        usleep(2_000_000)
        #expect(session.screen() != after, "the game did not resume")
        session.send("q")
        session.send("y")
        #expect(session.waitFor("EXIT=0") != nil)
    }

    @Test("replay: pause freezes the boards and the message counter for 5 s")
    func replayPauseFreezes() throws {
        let directory = try Harness.temporaryDirectory("replay-pause")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bots = try BotAndReplayTests.runBots(processes: 2, games: 1, directory: directory)
        let log = try #require(bots.first?.log)
        let session = try TmuxSession(command: "\(Harness.binary) replay \(log); echo EXIT=$?; sleep 60", width: 120, height: 40)
        defer { session.close() }
        #expect(session.waitFor("message ") != nil, "the replay did not start: \(session.screen())")
        session.send("Space")
        #expect(session.waitFor("PAUSED") != nil, "no pause: \(session.screen())")
        usleep(300_000)
        let before = session.screen()
        #expect(!before.contains("end of log"), "the log ended before the pause: \(before)")
        usleep(5_000_000)
        let after = session.screen()
        #expect(before == after, "the paused replay changed:\n\(before)\n---\n\(after)")
        session.send("q")
        #expect(session.waitFor("EXIT=0") != nil)
    }

    @Test("the too-small notice shows the size needed at 40 columns, and practice waits behind it")
    func tooSmallFreezes() throws {
        let session = try TmuxSession(
            command: "\(Harness.binary) play --practice --seed 2 --level insane --speed 9 --name tiny; echo EXIT=$?; sleep 60",
            width: 40, height: 12)
        defer { session.close() }
        let notice = try #require(session.waitFor("Terminal too small"), "no notice: \(session.screen())")
        let text = Self.joined(notice)
        let needed = Self.firstMatch(#"needs at least ([0-9]+)x([0-9]+)"#, in: text)
        #expect(needed != nil, "the size needed is not shown: \(notice)")
        #expect(text.contains("this one is 40x12"), "the terminal's size is not shown: \(notice)")
        for line in notice.split(separator: "\n") { #expect(line.count <= 40) }
        usleep(5_000_000)
        session.resize(width: 100, height: 30)
        let screen = try #require(session.waitFor("tiny"), "the game did not appear: \(session.screen())")
        // The game clock in the title: the 5 s behind the notice did not count.
        let clock = Self.firstMatch(#"[—-] ([0-9]+):([0-9]{2})"#, in: screen)
        #expect(clock != nil, "no game clock in: \(screen)")
        if let clock { #expect(clock[1] == "0" && Int(clock[2])! <= 1, "the game ran behind the notice: \(clock[0])") }
        session.send("q")
        session.send("y")
        #expect(session.waitFor("EXIT=0") != nil)
    }

    @Test("LANG=C: the title, the board and the key hints are plain ASCII, not garbled")
    func asciiLocale() throws {
        let session = try TmuxSession(
            command: "\(Harness.binary) play --practice --seed 4 --name asc; echo EXIT=$?; sleep 60",
            width: 100, height: 30, environment: ["LANG": "C", "LC_ALL": "C"])
        defer { session.close() }
        let screen = try #require(session.waitFor("asc"), "the game did not start: \(session.screen())")
        let lines = screen.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("eggs - practice against the medium bot") == true, "title: \(lines.first ?? "")")
        let hints = try #require(lines.last { !$0.trimmingCharacters(in: .whitespaces).isEmpty })
        #expect(hints.contains("move") && hints.contains("rotate"), "hints: \(hints)")
        for line in lines {
            let ascii = line.unicodeScalars.allSatisfy { $0.isASCII }
            #expect(ascii, "not ASCII: \(line)")
            #expect(!line.contains("~") && !line.contains("M-"), "garbled: \(line)")
        }
        session.send("q")
        session.send("y")
        #expect(session.waitFor("EXIT=0") != nil)
    }

    /// The colour and reverse-video state of every `glyph` drawn on a `capture-pane -e` screen.
    static func styles(of glyph: Character, in screen: String) -> Set<String> {
        var foreground = "default", reverse = false
        var found: Set<String> = []
        var index = screen.startIndex
        while index < screen.endIndex {
            let char = screen[index]
            if char == "\u{1B}", screen[screen.index(after: index)...].hasPrefix("["),
               let end = screen[index...].firstIndex(of: "m") {
                let body = screen[screen.index(index, offsetBy: 2)..<end]
                let params = body.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) ?? 0 }
                var p = 0
                while p < params.count {
                    switch params[p] {
                    case 0: foreground = "default"; reverse = false
                    case 7: reverse = true
                    case 27: reverse = false
                    case 30...37, 90...97: foreground = "\(params[p])"
                    case 39: foreground = "default"
                    case 38 where p + 2 < params.count && params[p + 1] == 5:
                        foreground = "5;\(params[p + 2])"
                        p += 2
                    default: break
                    }
                    p += 1
                }
                index = screen.index(after: end)
                continue
            }
            if char == glyph { found.insert("\(foreground)\(reverse ? " reverse" : "")") }
            index = screen.index(after: index)
        }
        return found
    }

    @Test("with 6 colours red and orange eggs look different: 256-colour orange, reverse video with 8 colours", arguments: ["tmux-256color", "screen"])
    func redAndOrangeDiffer(term: String) throws {
        let session = try TmuxSession(
            // swift test sets NO_COLOR for the processes it starts; this test needs colours.
            command: "env -u NO_COLOR TERM=\(term) \(Harness.binary) play --practice --seed 11 --colors 6 --level insane --speed 9 --name colours; echo EXIT=$?; sleep 60",
            width: 100, height: 30, environment: ["LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"])
        defer { session.close() }
        var red: Set<String> = [], orange: Set<String> = []
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && (red.isEmpty || orange.isEmpty) {
            let screen = session.screenWithAttributes()
            red = Self.styles(of: "●", in: screen)
            orange = Self.styles(of: "✚", in: screen)
            usleep(200_000)
        }
        try #require(!red.isEmpty && !orange.isEmpty, "no red and orange eggs drawn: \(session.screen())")
        #expect(red.isDisjoint(with: orange), "red \(red) and orange \(orange) look the same")
        if term == "tmux-256color" {
            #expect(orange == ["5;208"], "orange is \(orange)")
        } else {
            #expect(orange.allSatisfy { $0.hasSuffix("reverse") }, "orange is \(orange)")
        }
        session.send("q")
        session.send("y")
        #expect(session.waitFor("EXIT=0") != nil)
    }

    @Test("a game-over banner holds the final boards, then the match results stay until a key; a rematch starts at game 1")
    func resultsStay() throws {
        // Nobody plays the left grid: at speed 9 it tops out within seconds and the bot wins.
        let session = try TmuxSession(
            command: "\(Harness.binary) play --practice --seed 3 --level insane --speed 9 --name idle; echo EXIT=$?; sleep 60",
            width: 100, height: 30)
        defer { session.close() }
        let banner = try #require(session.waitFor("You topped out", seconds: 40), "no game-over banner: \(session.screen())")
        #expect(banner.contains("the bot wins game 1"), "banner: \(banner)")
        let results = try #require(session.waitFor("largest chain", seconds: 10), "no results screen: \(session.screen())")
        #expect(results.contains("You lose: the bot wins the match."), "results: \(results)")
        for column in ["pairs", "pairs/min", "garbage sent", "received", "idle", "bot (insane)", "Match over: 1 game"] {
            #expect(results.contains(column), "the results lack '\(column)': \(results)")
        }
        usleep(5_000_000)
        #expect(session.screen() == results, "the results screen did not stay: \(session.screen())")
        session.send("r")
        #expect(session.waitFor("game 1 —") != nil, "no rematch: \(session.screen())")
        // The frame may still be arriving when its title shows: wait for the results to go.
        var gone = false
        let deadline = Date().addingTimeInterval(5)
        while !gone && Date() < deadline {
            gone = !session.screen().contains("largest chain")
            usleep(50_000)
        }
        #expect(gone, "the results stayed over the rematch: \(session.screen())")
        session.send("q")
        session.send("y")
        #expect(session.waitFor("EXIT=0") != nil, "screen: \(session.screen())")
    }

    @Test("at 80x24 both boards, the title and the key hints are whole, the boards centred; at 120x40 cells are 4x2")
    func boardsFitTheTerminal() throws {
        let small = try TmuxSession(
            command: "\(Harness.binary) play --practice --seed 6 --name fit; echo EXIT=$?; sleep 60", width: 80, height: 24)
        defer { small.close() }
        // The key line is drawn last: once it shows, the whole frame is there.
        let screen = try #require(small.waitFor("q quit"), "the game did not start: \(small.screen())")
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let top = try #require(lines.first { $0.contains("┌") })
        let bottom = try #require(lines.first { $0.contains("└") })
        #expect(top.filter { $0 == "┌" }.count == 2 && top.filter { $0 == "┐" }.count == 2, "top borders: \(top)")
        #expect(bottom.filter { $0 == "└" }.count == 2 && bottom.filter { $0 == "┘" }.count == 2, "bottom borders: \(bottom)")
        #expect(Harness.gridBottomRows(screen).map(\.count) == [12, 12], "grid rows: \(Harness.gridBottomRows(screen))")
        let left = top.prefix { $0 == " " }.count
        let right = 80 - top.count
        #expect(left >= 10 && abs(left - right) <= 12, "not centred: \(left) columns left, \(right) right: \(top)")
        #expect(Self.firstMatch(#"[0-9]+:[0-9]{2}$"#, in: lines[0].trimmingCharacters(in: .whitespaces)) != nil, "title cut: \(lines[0])")
        let hints = try #require(lines.last { !$0.trimmingCharacters(in: .whitespaces).isEmpty })
        #expect(hints.hasSuffix("q quit") && hints.contains("z/x rotate"), "key hints: \(hints)")
        small.send("q")
        small.send("y")
        #expect(small.waitFor("EXIT=0") != nil)

        let large = try TmuxSession(
            command: "\(Harness.binary) play --practice --seed 6 --name big; echo EXIT=$?; sleep 60", width: 120, height: 40)
        defer { large.close() }
        let big = try #require(large.waitFor("q quit"), "the game did not start: \(large.screen())")
        let border = "┌" + String(repeating: "─", count: 24) + "┐"
        #expect(big.components(separatedBy: border).count == 3, "no 4x2 cells: \(big)")
        #expect(Harness.gridBottomRows(big).map(\.count) == [24, 24])
        large.send("q")
        large.send("y")
        #expect(large.waitFor("EXIT=0") != nil)
    }

    @Test("--starting-height 4 at 80x24 and 120x40: both boards start on 4 full rows of garbage")
    func startingHeight() throws {
        for (width, height, row) in [(80, 24, "│▒ ▒ ▒ ▒ ▒ ▒ │"), (120, 40, "│▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ │")] {
            let session = try TmuxSession(
                command: "\(Harness.binary) play --practice --seed 6 --starting-height 4 --name tall; echo EXIT=$?; sleep 60",
                width: width, height: height)
            defer { session.close() }
            let screen = try #require(session.waitFor("q quit"), "the game did not start: \(session.screen())")
            let lines = screen.split(separator: "\n").map(String.init)
            let full = lines.filter { $0.components(separatedBy: row).count == 3 }
            // 4 rows of one line a cell, or of two lines (4x2 cells).
            #expect(full.count == (width == 80 ? 4 : 8), "\(width)x\(height): \(screen)")
            session.send("q")
            session.send("y")
            #expect(session.waitFor("EXIT=0") != nil)
        }
    }

    @Test("the lobby at 80x24: the settings and every key are shown, wrapped rather than cut")
    func lobbyFits() throws {
        let port = TestPorts.next()
        let state = try Harness.temporaryDirectory("lobby-fit")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let session = try TmuxSession(
            command: "\(Harness.binary) play --interface 127.0.0.1 --port \(port) --room fit-\(port) --name narrow; echo EXIT=$?; sleep 60",
            width: 80, height: 24, environment: ["XDG_STATE_HOME": state])
        defer { session.close() }
        // The settings its flags offer (best of 1) become the room's as soon as it has the room.
        let screen = try #require(session.waitFor("best of 1"), "the lobby does not show the offered settings: \(session.screen())")
        let text = Self.joined(screen)
        for phrase in ["(l: level)", "best of 1", "r: ready", "b: practice", "narrow (you)", "rtt/loss", "rules sfe  starting height 0", "h: height"] {
            #expect(text.contains(phrase), "the lobby lacks '\(phrase)': \(screen)")
        }
        // h changes the room's starting height.
        session.send("h")
        #expect(session.waitFor("rules sfe  starting height 1") != nil, "h did not change the height: \(session.screen())")
        session.send("q")
        #expect(session.waitFor("EXIT=0") != nil)
    }

    @Test("the room's lobby: a setting changed by one is shown to both and clears ready marks; the countdown runs when both are ready, un-ready cancels it")
    func roomLobby() throws {
        let port = TestPorts.next()
        let state = try Harness.temporaryDirectory("lobby-room")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let common = "play --interface 127.0.0.1 --port \(port) --room set-\(port)"
        let alice = try TmuxSession(
            command: "\(Harness.binary) \(common) --name alice --id a1 --speed 2; echo EXIT=$?; sleep 60",
            environment: ["XDG_STATE_HOME": state])
        defer { alice.close() }
        #expect(alice.waitFor("speed 2  colours 4  best of 1  (set by you)") != nil, "alice's lobby: \(alice.screen())")
        let bob = try TmuxSession(
            command: "\(Harness.binary) \(common) --name bob --id b2 --speed 7 --best-of 3; echo EXIT=$?; sleep 60",
            environment: ["XDG_STATE_HOME": state])
        defer { bob.close() }
        #expect(alice.waitFor("bob") != nil, "alice's lobby never listed bob: \(alice.screen())")
        // Bob joined a room whose settings alice set: he sees hers, not his own flags.
        #expect(bob.waitFor("speed 2  colours 4  best of 1  (set by alice)") != nil, "bob's lobby: \(bob.screen())")
        // Bob changes the speed: both show it at once, as his.
        bob.send("s")
        #expect(alice.waitFor("speed 3  colours 4  best of 1  (set by bob)") != nil, "alice's lobby: \(alice.screen())")
        #expect(bob.waitFor("speed 3  colours 4  best of 1  (set by you)") != nil, "bob's lobby: \(bob.screen())")
        // Alice gets ready; bob's change of the games clears her mark.
        alice.send("r")
        #expect(alice.waitFor("r: not ready") != nil, "alice's lobby: \(alice.screen())")
        #expect(bob.waitForLine(matching: #"alice +player +ready"#) != nil, "bob's lobby: \(bob.screen())")
        bob.send("g")
        #expect(alice.waitFor("best of 3  (set by bob)") != nil, "alice's lobby: \(alice.screen())")
        #expect(alice.waitFor("r: ready ") != nil, "alice is still marked ready: \(alice.screen())")
        // Both ready: the countdown shows on both; alice un-readies within it and nothing starts.
        alice.send("r")
        #expect(alice.waitFor("r: not ready") != nil, "alice's lobby: \(alice.screen())")
        bob.send("r")
        #expect(alice.waitFor("Everyone is ready: the match starts in") != nil, "alice's lobby: \(alice.screen())")
        alice.send("r")
        #expect(bob.waitFor("The match starts 3 s after every player is ready") != nil, "bob's countdown ran on: \(bob.screen())")
        #expect(bob.waitFor("game 1", seconds: 5) == nil, "a match started after the un-ready: \(bob.screen())")
        // Ready again: the match starts on both, with the room's settings.
        alice.send("r")
        #expect(bob.waitFor("Everyone is ready: the match starts in") != nil, "bob's lobby: \(bob.screen())")
        #expect(alice.waitFor("game 1, best of 3, speed 3") != nil, "alice's match: \(alice.screen())")
        #expect(bob.waitFor("game 1, best of 3, speed 3") != nil, "bob's match: \(bob.screen())")
        // q, y leaves the match for the lobby; q there quits.
        #expect(alice.quitPlay() && alice.screen().contains("EXIT=0"), "\(alice.screen())")
        #expect(bob.quitPlay() && bob.screen().contains("EXIT=0"), "\(bob.screen())")
    }

    @Test("start now: 30 s after the first ready, with two of three ready, n appears in a ready player's hints and starts the match with the ready players")
    func lobbyStartNow() throws {
        let port = TestPorts.next()
        let state = try Harness.temporaryDirectory("lobby-start-now")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let common = "play --interface 127.0.0.1 --port \(port) --room now-\(port)"
        let sessions = try ["ann", "ben", "cy"].enumerated().map { index, name in
            try TmuxSession(command: "\(Harness.binary) \(common) --name \(name) --id \(index + 1)0; echo EXIT=$?; sleep 60",
                            environment: ["XDG_STATE_HOME": state])
        }
        defer { sessions.forEach { $0.close() } }
        let (ann, ben, cy) = (sessions[0], sessions[1], sessions[2])
        for session in sessions {
            #expect(session.waitForLine(matching: "cy ", seconds: 15) != nil && session.waitFor("ben") != nil, "the lobby lacks a player: \(session.screen())")
        }
        // Ann and Ben get ready; Cy does not. Nothing starts, and no one is offered n yet.
        ann.send("r")
        #expect(ann.waitFor("r: not ready") != nil, "ann's lobby: \(ann.screen())")
        ben.send("r")
        #expect(ben.waitFor("2 players ready: in") != nil, "ben's lobby: \(ben.screen())")
        #expect(!ann.screen().contains("n: start now"), "n offered before 30 s: \(ann.screen())")
        // Pressed too early, n starts nothing.
        ann.send("n")
        #expect(ann.waitFor("Not yet") != nil, "ann's lobby: \(ann.screen())")
        // 30 s after the first ready: the ready players are offered n, Cy (not ready) is not,
        // and still nothing has started by itself.
        #expect(ann.waitFor("n: start now", seconds: 40) != nil, "ann is not offered n: \(ann.screen())")
        #expect(ben.waitFor("n: start now", seconds: 5) != nil, "ben is not offered n: \(ben.screen())")
        #expect(!cy.screen().contains("n: start now"), "cy is offered n without being ready: \(cy.screen())")
        usleep(2_000_000)
        #expect(!ann.screen().contains("game 1"), "a match started by itself: \(ann.screen())")
        // Ben presses it: the match starts everywhere with Ann and Ben; Cy watches it.
        ben.send("n")
        for session in sessions {
            #expect(session.waitFor("game 1, best of", seconds: 10) != nil, "no match: \(session.screen())")
        }
        // Two boards (Ann's and Ben's) on every screen, Cy's among them none of its own.
        let shown = cy.screen()
        let top = shown.split(separator: "\n").first { $0.contains("┌") } ?? ""
        #expect(top.filter { $0 == "┌" }.count == 2 && !shown.contains(" you "), "cy's screen: \(shown)")
        // q, y leaves the match for the lobby; q there quits (a spectator's q at once).
        for session in sessions { #expect(session.quitPlay() && session.screen().contains("EXIT=0"), "\(session.screen())") }
    }

    @Test("the lobby's b starts a practice match against a local bot; leaving it returns to the lobby")
    func lobbyPractice() throws {
        let port = TestPorts.next()
        let state = try Harness.temporaryDirectory("lobby-b")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let session = try TmuxSession(
            command: "\(Harness.binary) play --interface 127.0.0.1 --port \(port) --room solo-\(port) --name solo; echo EXIT=$?; sleep 60",
            environment: ["XDG_STATE_HOME": state])
        defer { session.close() }
        #expect(session.waitFor("lobby of room") != nil, "no lobby: \(session.screen())")
        session.send("b")
        #expect(session.waitFor("practice against the medium bot") != nil, "b did not start a practice match: \(session.screen())")
        session.send("q")
        session.send("y")
        #expect(session.waitFor("lobby of room") != nil, "leaving practice did not return to the lobby: \(session.screen())")
        session.send("q")
        #expect(session.waitFor("EXIT=0") != nil, "screen: \(session.screen())")
    }
}
