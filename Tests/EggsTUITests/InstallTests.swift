import EggTestSupport
import Foundation
import Testing

/// scripts/install.sh and scripts/package-deb.sh, run for real on the debug build (their
/// `--debug` option: the release build takes many minutes on these machines). The manual
/// page comes from swift-argument-parser's generate-manual tool, run on the built binary each
/// time; its build reuses what the binary's build compiled. The swift calls pass --ignore-lock
/// (EGGS_SWIFTPM_FLAGS), since `swift test` holds the build folder's lock meanwhile.
@Suite("install and package", .serialized, .tags(.slow), .slowTier)
struct InstallTests {
    /// The package root: the folder above `.build` holding this test bundle.
    static var packageRoot: String {
        var url = URL(fileURLWithPath: Harness.binary).deletingLastPathComponent()
        while url.path != "/" && url.lastPathComponent != ".build" { url.deleteLastPathComponent() }
        return url.deletingLastPathComponent().path
    }

    /// Runs a shell command in the package root, with a time limit; returns status and output.
    static func shell(_ command: String, environment: [String: String] = [:], timeoutSeconds: Double = 300) throws -> Harness.Result {
        try Harness.runProcess("/bin/bash", ["-c", command], environment: environment, directory: packageRoot, timeoutSeconds: timeoutSeconds)
    }

    static let swiftpm = ["EGGS_SWIFTPM_FLAGS": "--ignore-lock"]

    /// `man -l PAGE` rendered as plain text (no pager, 100 columns; man strips the bold and
    /// underlining when its output is not a terminal).
    static func manual(_ page: String) throws -> Harness.Result {
        try shell("MANPAGER=cat MANWIDTH=100 man -l \(page)", environment: ["LC_ALL": "C.UTF-8"])
    }

    /// What a bash user gets offered after typing `words` and pressing tab.
    static func bashCompletions(_ script: String, _ words: [String]) throws -> [String] {
        let line = words.joined(separator: " ")
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let result = try shell("""
            source \(script)
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
            fn=$(complete -p eggs-tui | sed -n 's/.*-F \\([^ ]*\\).*/\\1/p')
            "$fn" eggs-tui '\(words.last!)' '\(words.count > 1 ? words[words.count - 2] : "")'
            printf '%s\\n' "${COMPREPLY[@]}"
            """)
        #expect(result.status == 0, "bash completion: \(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test("install.sh puts eggs-tui, its generated manual eggs-tui(6) and bash/zsh/fish completions under PREFIX")
    func installIntoPrefix() throws {
        let prefix = try Harness.temporaryDirectory("prefix")
        defer { try? FileManager.default.removeItem(atPath: prefix) }
        let run = try Self.shell("scripts/install.sh --debug \(prefix)", environment: Self.swiftpm)
        try #require(run.status == 0, "install.sh: \(run.stderr.suffix(2000))")

        let version = try Self.shell("\(prefix)/bin/eggs-tui --version")
        #expect(version.status == 0)
        #expect(version.stdout.range(of: #"^eggs-tui \d+\.\d+\.\d+ "#, options: .regularExpression) != nil, "\(version.stdout)")

        // The manual page, read as a player would: section 6, the subcommands with their
        // options (from the command definitions), and the keys, files and exit statuses.
        let page = "\(prefix)/share/man/man6/eggs-tui.6"
        let man = try Self.manual(page)
        #expect(man.status == 0, "man -l: \(man.stderr)")
        for text in ["EGGS-TUI(6)", "KEYS", "FILES", "EXIT STATUS", "config.toml", "hard-drop", "--verify", "--cast",
                     "--room", "resolve", "soak", "bad usage"] {
            #expect(man.stdout.contains(text), "the manual page lacks '\(text)'")
        }

        // Completions: bash offers the subcommands and a subcommand's options.
        let bash = "\(prefix)/share/bash-completion/completions/eggs-tui"
        let subcommands = try Self.bashCompletions(bash, ["eggs-tui", "re"])
        #expect(Set(subcommands) == ["replay", "resolve"], "offered: \(subcommands)")
        let options = try Self.bashCompletions(bash, ["eggs-tui", "replay", "--veri"])
        #expect(options == ["--verify"], "offered: \(options)")
        let zsh = try String(contentsOfFile: "\(prefix)/share/zsh/site-functions/_eggs-tui", encoding: .utf8)
        #expect(zsh.hasPrefix("#compdef eggs-tui"))
        let fish = try String(contentsOfFile: "\(prefix)/share/fish/vendor_completions.d/eggs-tui.fish", encoding: .utf8)
        #expect(fish.contains("complete -c 'eggs-tui'") || fish.contains("complete -c eggs-tui"))
    }

    @Test("install.sh refuses a relative PREFIX and an unknown option (exit 2)")
    func installBadUsage() throws {
        let relative = try Self.shell("scripts/install.sh --debug relative/prefix")
        #expect(relative.status == 2)
        #expect(relative.stderr.contains("absolute"))
        let unknown = try Self.shell("scripts/install.sh --frobnicate")
        #expect(unknown.status == 2)
    }

    @Test("package-deb.sh builds a .deb: /usr/games/eggs-tui runs, man -l reads its page, it needs the ncurses runtime only")
    func debianPackage() throws {
        let out = try Harness.temporaryDirectory("deb")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try Self.shell("scripts/package-deb.sh --debug \(out)", environment: Self.swiftpm)
        try #require(run.status == 0, "package-deb.sh: \(run.stderr.suffix(2000))")
        let deb = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(deb.hasSuffix(".deb") && FileManager.default.fileExists(atPath: deb))

        let depends = try Self.shell("dpkg-deb --field \(deb) Depends")
        let packages = depends.stdout.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(packages.contains("libncursesw6"), "Depends: \(depends.stdout)")
        #expect(!packages.contains { $0.hasSuffix("-dev") }, "Depends: \(depends.stdout)")
        #expect(try Self.shell("dpkg-deb --field \(deb) Section").stdout.hasPrefix("games"))

        let root = "\(out)/root"
        let extract = try Self.shell("dpkg -x \(deb) \(root)")
        try #require(extract.status == 0, "\(extract.stderr)")
        let version = try Self.shell("\(root)/usr/games/eggs-tui --version")
        #expect(version.status == 0, "\(version.stderr)")
        let field = try Self.shell("dpkg-deb --field \(deb) Version").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!field.isEmpty && version.stdout.hasPrefix("eggs-tui \(field) "), "Version \(field) vs \(version.stdout)")

        let man = try Self.manual("\(root)/usr/share/man/man6/eggs-tui.6.gz")
        #expect(man.status == 0, "\(man.stderr)")
        #expect(man.stdout.contains("EGGS-TUI(6)") && man.stdout.contains("EXIT STATUS"))
        for path in ["usr/share/bash-completion/completions/eggs-tui", "usr/share/zsh/site-functions/_eggs-tui",
                     "usr/share/fish/vendor_completions.d/eggs-tui.fish"] {
            #expect(FileManager.default.fileExists(atPath: "\(root)/\(path)"), "the package lacks /\(path)")
        }
    }
}
