import Foundation
import Testing

/// What a target may import: its layer. `nil` is anything (the programs at the top).
struct Layer: Sendable {
    let allowed: Set<String>?
    let why: String

    static func only(_ modules: Set<String>, _ why: String) -> Layer { Layer(allowed: modules, why: why) }
    static func anything(_ why: String) -> Layer { Layer(allowed: nil, why: why) }
}

/// The layers, bottom up, by module name (`eggs-tui` is the module `eggs_tui`). A new target needs
/// a row here: the check fails on a target of Package.swift or a folder of Sources/ that has none.
let layers: [String: Layer] = [
    "EggPrimitives": .only([], "the primitives import nothing"),
    "EggGame": .only(["EggPrimitives"], "the rules are pure: nothing but the primitives"),
    "EggBot": .only(["EggGame", "EggPrimitives"], "the bots play by the rules, nothing else"),
    "PeerNet": .only(["EggPrimitives", "CEggsChecksum", "Crypto", "DequeModule"], "a sans-I/O core: no sockets, no clock, no NIO"),
    "CEggsChecksum": .only([], "CRC-32C in a few lines of C: the processor's instruction, which Swift cannot name"),
    "CEggsIO": .only([], "a few lines of C: the Linux calls Swift's Glibc module leaves out"),
    "PeerNetUDP": .only(["PeerNet", "CEggsIO", "EggPrimitives", "Crypto", "NIOCore", "NIOPosix", "Glibc", "Synchronization"],
                        "the UDP adapter around the PeerNet core"),
    "Consensus": .only(["PeerNet", "EggGame", "EggPrimitives", "Crypto", "DequeModule"],
                       "the replicated match: no I/O, no NIO, no bots"),
    "EggSim": .only(["PeerNet", "Consensus", "EggGame", "EggPrimitives", "HeapModule", "Foundation"],
                    "the deterministic simulated network never imports NIO"),
    "EggHistory": .only(["Consensus", "PeerNet", "EggGame", "GRDB", "Foundation", "Glibc"],
                        "the match history: logs read through Consensus into SQLite (GRDB); no network, no terminal"),
    "CNcurses": .only([], "a system library's module map"),
    "eggs_tui": .anything("the program"),
    "EggTestSupport": .anything("what the test targets share"),
    "EggBenchmarks": .anything("a benchmark program"),
    "eggs_netbench": .anything("a benchmark program"),
]

/// Reads `import` lines from Swift sources and target entries from Package.swift, and names every
/// import or declared dependency outside the target's layer. Text only: nothing is compiled.
enum LayeringChecker {
    struct Import: Equatable {
        let line: Int
        let module: String
    }

    struct ManifestTarget: Equatable {
        let kind: String
        let name: String
        let dependencies: [String]
    }

    /// The module a target name stands for (`eggs-tui` → `eggs_tui`).
    static func moduleName(_ target: String) -> String { target.replacingOccurrences(of: "-", with: "_") }

    /// The module of one line if it is an import (`import X`, `@testable import X`,
    /// `import struct X.Y`, `@preconcurrency import X.Sub`), else nil.
    static func importedModule(_ line: Substring) -> String? {
        var words = line.split(whereSeparator: \.isWhitespace)[...]
        while let word = words.first, word.hasPrefix("@") { words.removeFirst() }
        if let word = words.first, ["public", "package", "internal", "fileprivate", "private"].contains(word) { words.removeFirst() }
        guard words.first == "import" else { return nil }
        words.removeFirst()
        if let word = words.first, ["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"].contains(word) {
            words.removeFirst()
        }
        guard let path = words.first, let module = path.split(separator: ".").first else { return nil }
        let name = module.trimmingCharacters(in: CharacterSet(charactersIn: ";"))
        return name.isEmpty ? nil : name
    }

    /// The imports of a source file, with their line numbers (1-based); lines inside block
    /// comments and multi-line string literals are skipped.
    static func imports(in source: String) -> [Import] {
        var found: [Import] = []
        var inBlockComment = false
        var inMultilineString = false
        for (index, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.drop(while: \.isWhitespace)
            if inBlockComment {
                if trimmed.contains("*/") { inBlockComment = false }
                continue
            }
            let quotes = line.components(separatedBy: "\"\"\"").count - 1
            if inMultilineString {
                if quotes % 2 == 1 { inMultilineString = false }
                continue
            }
            if quotes % 2 == 1 { inMultilineString = true }
            if trimmed.hasPrefix("/*"), !trimmed.contains("*/") {
                inBlockComment = true
                continue
            }
            if let module = importedModule(trimmed) { found.append(Import(line: index + 1, module: module)) }
        }
        return found
    }

    /// The imports of `source` (a file of `target`, shown as `file`) outside the target's layer.
    static func violations(target: String, file: String, source: String, layers: [String: Layer]) -> [String] {
        guard let layer = layers[moduleName(target)] else {
            return ["\(file): target \(target) has no layer in LayeringTests' table"]
        }
        guard let allowed = layer.allowed else { return [] }
        return imports(in: source).filter { !allowed.contains($0.module) }.map {
            "\(file):\($0.line): \(target) imports \($0.module), outside its layer (\(layer.why); may import: \(describe(allowed)))"
        }
    }

    /// The targets of a manifest (`.target`, `.executableTarget`, `.testTarget`, `.systemLibrary`,
    /// `.binaryTarget`), each with the target and product names of its `dependencies:` array.
    static func targets(inManifest manifest: String) -> [ManifestTarget] {
        let text = Array(strippingComments(manifest))
        let kinds = ["target", "executableTarget", "testTarget", "systemLibrary", "binaryTarget", "macro", "plugin"]
        var found: [ManifestTarget] = []
        var index = 0
        while index < text.count {
            if text[index] == "\"" {
                index = endOfString(text, from: index)
                continue
            }
            guard text[index] == ".",
                  let kind = kinds.first(where: { matches(text, at: index + 1, "\($0)(") }) else {
                index += 1
                continue
            }
            let open = index + 1 + kind.count
            let close = closing(text, from: open, open: "(", close: ")")
            let block = Array(text[(open + 1)..<close])
            if let name = stringArgument(block, label: "name") {
                found.append(ManifestTarget(kind: kind, name: name, dependencies: dependencies(block)))
            }
            index = close + 1
        }
        return found
    }

    /// The declared dependencies of the manifest's targets outside their layers, and the targets
    /// (tests aside) that have no layer.
    static func manifestViolations(_ manifest: String, layers: [String: Layer]) -> [String] {
        var problems: [String] = []
        for target in targets(inManifest: manifest) where target.kind != "testTarget" {
            guard let layer = layers[moduleName(target.name)] else {
                problems.append("Package.swift: target \(target.name) has no layer in LayeringTests' table")
                continue
            }
            guard let allowed = layer.allowed else { continue }
            for dependency in target.dependencies where !allowed.contains(moduleName(dependency)) {
                problems.append("Package.swift: target \(target.name) depends on \(dependency), outside its layer (\(layer.why); may depend on: \(describe(allowed)))")
            }
        }
        return problems
    }

    static func describe(_ modules: Set<String>) -> String { modules.isEmpty ? "nothing" : modules.sorted().joined(separator: ", ") }

    // MARK: the manifest's text

    /// `text` without `//` and `/* */` comments (outside string literals).
    static func strippingComments(_ text: String) -> String {
        let characters = Array(text)
        var out: [Character] = []
        var index = 0
        while index < characters.count {
            if characters[index] == "\"" {
                let end = endOfString(characters, from: index)
                out.append(contentsOf: characters[index..<end])
                index = end
            } else if matches(characters, at: index, "//") {
                while index < characters.count, characters[index] != "\n" { index += 1 }
            } else if matches(characters, at: index, "/*") {
                index += 2
                while index < characters.count, !matches(characters, at: index, "*/") { index += 1 }
                index += 2
            } else {
                out.append(characters[index])
                index += 1
            }
        }
        return String(out)
    }

    static func matches(_ text: [Character], at index: Int, _ word: String) -> Bool {
        let word = Array(word)
        guard index >= 0, index + word.count <= text.count else { return false }
        return Array(text[index..<(index + word.count)]) == word
    }

    /// The index just past the string literal opening at `start`.
    static func endOfString(_ text: [Character], from start: Int) -> Int {
        var index = start + 1
        while index < text.count, text[index] != "\"" {
            index += text[index] == "\\" ? 2 : 1
        }
        return min(index + 1, text.count)
    }

    /// The index of the bracket closing the one at `start` (or the end of the text).
    static func closing(_ text: [Character], from start: Int, open: Character, close: Character) -> Int {
        var depth = 0
        var index = start
        while index < text.count {
            if text[index] == "\"" {
                index = endOfString(text, from: index)
                continue
            }
            if text[index] == open { depth += 1 }
            if text[index] == close {
                depth -= 1
                if depth == 0 { return index }
            }
            index += 1
        }
        return text.count
    }

    /// The string literals of `text` with what comes before each (for the `package:` label).
    static func strings(_ text: [Character]) -> [(before: String, value: String)] {
        var found: [(String, String)] = []
        var index = 0
        var last = 0
        while index < text.count {
            if text[index] == "\"" {
                let end = endOfString(text, from: index)
                found.append((String(text[last..<index]), String(text[(index + 1)..<max(index + 1, end - 1)])))
                index = end
                last = end
            } else {
                index += 1
            }
        }
        return found
    }

    /// The string after `label:` at the top of a target's arguments (the first one).
    static func stringArgument(_ block: [Character], label: String) -> String? {
        strings(block).first { $0.before.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("\(label):") }?.value
    }

    /// The names in a target's `dependencies: [...]`: bare target names, `.product(name:)`,
    /// `.target(name:)` and `.byName(name:)`; package names (`package: "swift-nio"`) are not modules.
    static func dependencies(_ block: [Character]) -> [String] {
        var index = 0
        while index < block.count, !matches(block, at: index, "dependencies:") {
            if block[index] == "\"" {
                index = endOfString(block, from: index)
                continue
            }
            index += 1
        }
        guard index < block.count, let open = block[index...].firstIndex(of: "[") else { return [] }
        let close = closing(block, from: open, open: "[", close: "]")
        return strings(Array(block[(open + 1)..<close]))
            .filter { !$0.before.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("package:") }
            .map(\.value)
    }
}

@Suite("layering: each target imports only what its layer allows")
struct LayeringTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func manifest() throws -> String {
        try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
    }

    /// Every Swift file under Sources/<target>/, by target, paths relative to the root.
    static func sources() throws -> [(target: String, path: String)] {
        let sources = root.appendingPathComponent("Sources")
        var files: [(String, String)] = []
        for target in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let directory = sources.appendingPathComponent(target)
            guard let walker = FileManager.default.enumerator(atPath: directory.path) else { continue }
            for case let relative as String in walker where relative.hasSuffix(".swift") {
                files.append((target, "Sources/\(target)/\(relative)"))
            }
        }
        return files.sorted { $0.1 < $1.1 }
    }

    @Test("Sources/: no target imports a module outside its layer")
    func sourceImports() throws {
        let files = try Self.sources()
        #expect(Set(files.map(\.target)).isSuperset(of: ["EggPrimitives", "EggGame", "EggBot", "PeerNet", "Consensus", "EggSim"]),
                "the scan found no sources: \(Self.root.path)")
        var problems: [String] = []
        var importsSeen = 0
        for (target, path) in files {
            let source = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
            importsSeen += LayeringChecker.imports(in: source).count
            problems += LayeringChecker.violations(target: target, file: path, source: source, layers: layers)
        }
        #expect(importsSeen > 0, "no import lines found: the scan reads nothing")
        #expect(problems.isEmpty, "\n\(problems.joined(separator: "\n"))")
    }

    @Test("Package.swift: no target declares a dependency outside its layer, every target has a layer")
    func manifestDependencies() throws {
        let manifest = try Self.manifest()
        let targets = LayeringChecker.targets(inManifest: manifest)
        // The parse reads the real manifest, not nothing.
        let sim = try #require(targets.first { $0.name == "EggSim" }, "Package.swift: no EggSim target parsed")
        #expect(sim.dependencies.contains("HeapModule") && sim.dependencies.contains("Consensus"), "EggSim parsed as \(sim.dependencies)")
        let udp = try #require(targets.first { $0.name == "PeerNetUDP" })
        #expect(udp.dependencies.contains("NIOCore") && !udp.dependencies.contains("swift-nio"), "PeerNetUDP parsed as \(udp.dependencies)")
        #expect(targets.first { $0.name == "EggPrimitives" }?.dependencies == [])
        let problems = LayeringChecker.manifestViolations(manifest, layers: layers)
        #expect(problems.isEmpty, "\n\(problems.joined(separator: "\n"))")
        // Each layer row names a target that exists (no stale rows).
        let names = Set(targets.map { LayeringChecker.moduleName($0.name) })
        #expect(Set(layers.keys).subtracting(names).isEmpty, "rows without a target: \(Set(layers.keys).subtracting(names).sorted())")
    }

    @Test("the checker itself reports what it must: NIO in EggSim, a bot in EggGame, an unknown target")
    func checkerCatchesViolations() {
        let sim = LayeringChecker.violations(target: "EggSim", file: "Sources/EggSim/Made.swift",
                                             source: "import HeapModule\nimport NIOCore\n", layers: layers)
        #expect(sim.count == 1)
        #expect(sim.first?.hasPrefix("Sources/EggSim/Made.swift:2: EggSim imports NIOCore") == true, "\(sim)")
        let forms = "// import NIOPosix\n@testable import EggBot\nimport struct NIOCore.ByteBuffer\n@preconcurrency import Glibc\n"
            + "/*\nimport Logging\n*/\nlet text = \"\"\"\nimport Logging\n\"\"\"\nimport EggPrimitives\n"
        #expect(LayeringChecker.imports(in: forms).map(\.module) == ["EggBot", "NIOCore", "Glibc", "EggPrimitives"])
        #expect(LayeringChecker.violations(target: "EggGame", file: "g.swift", source: forms, layers: layers).count == 3)
        #expect(LayeringChecker.violations(target: "EggGame", file: "g.swift", source: "import EggPrimitives\n", layers: layers).isEmpty)
        #expect(LayeringChecker.violations(target: "eggs-tui", file: "t.swift", source: "import NIOCore\n", layers: layers).isEmpty)
        #expect(LayeringChecker.violations(target: "Nowhere", file: "n.swift", source: "", layers: layers).count == 1)

        let manifest = """
            // .target(name: "Commented", dependencies: ["NIOCore"]),
            targets: [
                .target(name: "EggSim", dependencies: ["PeerNet", .product(name: "NIOCore", package: "swift-nio")]),
                .target(name: "EggGame", dependencies: ["EggPrimitives"]),
                .testTarget(name: "AnyTests", dependencies: ["NIOPosix"]),
                .executableTarget(name: "Stray", dependencies: [.target(name: "EggGame")]),
            ]
            """
        #expect(LayeringChecker.targets(inManifest: manifest) == [
            .init(kind: "target", name: "EggSim", dependencies: ["PeerNet", "NIOCore"]),
            .init(kind: "target", name: "EggGame", dependencies: ["EggPrimitives"]),
            .init(kind: "testTarget", name: "AnyTests", dependencies: ["NIOPosix"]),
            .init(kind: "executableTarget", name: "Stray", dependencies: ["EggGame"]),
        ])
        let problems = LayeringChecker.manifestViolations(manifest, layers: layers)
        #expect(problems.count == 2, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("Package.swift: target EggSim depends on NIOCore") })
        #expect(problems.contains { $0.hasPrefix("Package.swift: target Stray has no layer") })
    }
}
