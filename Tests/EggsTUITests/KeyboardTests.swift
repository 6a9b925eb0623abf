import EggTestSupport
import Foundation
import Testing
@testable import eggs_tui

/// Held keys: eggs' own auto-repeat (DAS and ARR) and the kitty keyboard protocol's key events.
@Suite("held keys and the kitty keyboard protocol")
struct KeyboardTests {
    static let ms: UInt64 = 1_000_000

    /// Repeats fired between a press at 0 and a release at `held` ms, looking every millisecond.
    static func repeats(das: Int, arr: Int, held: UInt64, immediate: Bool = false) -> Int {
        var repeater = KeyRepeat(dasMilliseconds: das, arrMilliseconds: arr)
        repeater.press(.right, at: 0, immediate: immediate)
        var fired = 0
        for now in stride(from: 0, to: held * ms, by: Int(ms)) {
            fired += repeater.due(at: UInt64(now))?.count ?? 0
        }
        repeater.release(.right)
        #expect(repeater.due(at: held * ms + 10_000 * ms) == nil, "a released key repeated")
        return fired
    }

    @Test("a held move repeats after DAS, then every ARR, until released", arguments: [
        (133, 33, UInt64(500), 12),  // the defaults: at 133, 166, … 496 ms
        (133, 33, UInt64(100), 0),   // released before the delay: the press alone
        (200, 100, UInt64(500), 3),  // 200, 300, 400
        (0, 50, UInt64(260), 6),     // 0, 50, … 250
        (300, 1000, UInt64(2000), 2), // 300, 1300
    ])
    func dasAndArr(das: Int, arr: Int, held: UInt64, expected: Int) {
        #expect(Self.repeats(das: das, arr: arr, held: held) == expected)
    }

    @Test("a soft drop repeats at ARR from its press; ARR 0 repeats every tick; a stall fires a bounded burst")
    func immediateTickAndBurst() {
        #expect(Self.repeats(das: 500, arr: 50, held: 260, immediate: true) == 5)  // 50 … 250
        #expect(Self.repeats(das: 0, arr: 0, held: 1000) == 60)
        var repeater = KeyRepeat(dasMilliseconds: 100, arrMilliseconds: 10)
        repeater.press(.left, at: 0)
        let burst = repeater.due(at: 5_000 * Self.ms)
        #expect(burst?.key == .left && burst?.count == KeyRepeat.burstMax)
        #expect(repeater.due(at: 5_000 * Self.ms) == nil, "the burst did not move the next repeat past now")
    }

    @Test("a press of another key takes over; releasing a key not held changes nothing")
    func takeOver() {
        var repeater = KeyRepeat(dasMilliseconds: 100, arrMilliseconds: 50)
        repeater.press(.left, at: 0)
        repeater.press(.right, at: 50 * Self.ms)
        repeater.release(.left)
        #expect(repeater.due(at: 150 * Self.ms).map { [$0.key] } == [.right])
        repeater.release(.right)
        #expect(repeater.nextDue == nil)
    }

    static func decode(_ text: String) -> [KeyEvent] {
        var decoder = KittyDecoder()
        return decoder.feed(Array(text.unicodeScalars)) + decoder.flush()
    }

    @Test("the protocol's arrows and keys: press, repeat and release; legacy bytes still read")
    func decoding() {
        let esc = "\u{1B}"
        #expect(Self.decode("\(esc)[1;1:1C\(esc)[1;1:2C\(esc)[1;1:3C") == [
            KeyEvent(key: .right, kind: .press), KeyEvent(key: .right, kind: .repeat), KeyEvent(key: .right, kind: .release)])
        #expect(Self.decode("\(esc)[D") == [.press(.left)])
        #expect(Self.decode("\(esc)[104u\(esc)[104;1:3u") == [.press(.character("h")), KeyEvent(key: .character("h"), kind: .release)])
        #expect(Self.decode("\(esc)[32u\(esc)[13u\(esc)[27u\(esc)[127u") == [.press(.character(" ")), .press(.enter), .press(.escape), .press(.backspace)])
        // Shift: the alternate (shifted) key when the terminal sends it, else the letter in capitals.
        #expect(Self.decode("\(esc)[47:63;2u\(esc)[113;2u") == [.press(.character("?")), .press(.character("Q"))])
        // Ctrl-C is the control character (the game loop interrupts on it).
        #expect(Self.decode("\(esc)[99;5u") == [.press(.character("\u{3}"))])
        // A modifier key on its own and the answers to queries are not keys.
        #expect(Self.decode("\(esc)[57441u\(esc)[?15u\(esc)[?62;22c").isEmpty)
        // Legacy bytes: characters, SS3 arrows, a lone escape.
        #expect(Self.decode("q\r\(esc)OA") == [.press(.character("q")), .press(.enter), .press(.up)])
        #expect(Self.decode(esc) == [.press(.escape)])
    }

    @Test("a sequence cut between two reads waits for its rest; garbage is dropped and counted, and keys after it still read")
    func splitAndGarbage() {
        var decoder = KittyDecoder()
        #expect(decoder.feed(Array("\u{1B}[1;1".unicodeScalars)).isEmpty)
        #expect(decoder.flush().isEmpty)
        #expect(decoder.feed(Array(":3C".unicodeScalars)) == [KeyEvent(key: .right, kind: .release)])
        #expect(decoder.feed(Array("\u{1B}[1;1:9C\u{1B}[5;0u\u{1B}[99999999999u".unicodeScalars)).isEmpty)
        #expect(decoder.dropped == 3)
        let long = "\u{1B}[" + String(repeating: "1", count: 100) + "u" + "l"
        let events = decoder.feed(Array(long.unicodeScalars))
        #expect(decoder.dropped == 4)
        #expect(events.last == .press(.character("l")), "\(events)")
    }

    @Test("the terminal's answers: the protocol's answer before the device attributes' means it speaks it")
    func answers() {
        #expect(KittyDecoder.answered("\u{1B}[?0u\u{1B}[?62;22c") == true)
        #expect(KittyDecoder.answered("\u{1B}[?1;2c") == false)
        #expect(KittyDecoder.answered("\u{1B}[?0u") == nil)
        #expect(KittyDecoder.answered("") == nil)
    }

    @Test("config preview, das, arr and keyboard are read; wrong values name the file and the line")
    func config() throws {
        let config = try Config.parse("preview = true\ndas = 150\narr = 0\nkeyboard = \"kitty\"\n", source: "c.toml")
        #expect(config.preview == true && config.das == 150 && config.arr == 0 && config.keyboard == .kitty)
        for (text, message) in [
            ("name = \"a\"\npreview = 1\n", "c.toml: line 2: preview must be true or false"),
            ("das = -1\n", "c.toml: line 1: das must be a whole number of milliseconds from 0 to 2000"),
            ("arr = 5000\n", "c.toml: line 1: arr must be a whole number of milliseconds from 0 to 1000"),
            ("keyboard = \"fast\"\n", "c.toml: line 1: keyboard must be \"auto\", \"kitty\" or \"legacy\""),
        ] {
            #expect(throws: CommandFailure.self) { try Config.parse(text, source: "c.toml") }
            do {
                _ = try Config.parse(text, source: "c.toml")
            } catch {
                #expect("\(error)".contains(message), "\(error)")
            }
        }
    }
}

/// A name changed in the lobby is saved in the config file for next time.
@Suite("saving the name in the config file")
struct ConfigNameTests {
    @Test("the name line is replaced, or added at the top; comments, tables and other keys are kept; quotes are escaped")
    func settingName() throws {
        let text = "# mine\nroom = \"friday\"\n  name = \"ada\"   # me\n[keys]\nname = \"x\"\n"
        let updated = Config.settingName("zel\"da\\", in: text)
        #expect(updated == "# mine\nroom = \"friday\"\nname = \"zel\\\"da\\\\\"\n[keys]\nname = \"x\"\n", "\(updated)")
        let added = Config.settingName("bob", in: "# only a comment\n[keys]\nleft = \"a\"\n")
        #expect(added.hasPrefix("name = \"bob\"\n# only a comment\n[keys]"), "\(added)")
        #expect(try Config.parse(Config.settingName("bob", in: FirstRun.template), source: "t").name == "bob")
    }

    @Test("saveName writes a file that reads back with the name; a missing file is created; a bad file is left alone")
    func save() throws {
        let directory = try Harness.temporaryDirectory("save-name")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/eggs/config.toml"
        #expect(Config.saveName("ada", path: path) == nil)
        #expect(try Config.load(path: path).name == "ada")
        try "colors = 5\nname = \"old\"\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(Config.saveName("zelda", path: path) == nil)
        let saved = try Config.load(path: path)
        #expect(saved.name == "zelda" && saved.colors == 5)
        try "colors = [\n".write(toFile: path, atomically: true, encoding: .utf8)
        let problem = Config.saveName("x", path: path)
        #expect(problem != nil)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "colors = [\n", "a bad file was changed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/eggs") == ["config.toml"], "a temporary file was left")
    }
}
