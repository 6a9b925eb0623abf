import ArgumentParser
import PeerNet
import PeerNetUDP
#if canImport(Glibc)
import Glibc
#endif

/// The network options every networked subcommand shares (docs/playing.md and docs/network.md). Room, group, port and
/// interface fall back to the config file (``Config``), then to their defaults.
struct NetworkOptions: ParsableArguments {
    @Option(name: .customLong("room"), help: "The room to join; peers in other rooms are ignored (default: eggs).")
    var roomFlag: String?

    @Option(name: .customLong("group"), help: "The IPv4 multicast group (default: 239.255.77.77).")
    var groupFlag: String?

    @Option(name: .customLong("port"), parsing: .unconditional, help: "The UDP port of the group (default: 47777).")
    var portFlag: Int?

    @Option(name: .customLong("interface"), help: "The IPv4 address whose interface carries the multicast (127.0.0.1 plays on one machine).")
    var interfaceFlag: String?

    @Option(help: "Authenticate every datagram with this passphrase (or set EGGS_PASSPHRASE).")
    var passphrase: String?

    @Option(help: "A fixed 64-bit peer ID in hex instead of a random one.")
    var id: String?

    @Option(help: "Where the message log goes; its directory must exist (default: under $XDG_STATE_HOME/eggs/, created when missing).")
    var log: String?

    @Option(name: .customLong("peer"), help: ArgumentHelp(
        "A unicast peer, HOST or HOST:PORT (default port: --port); repeatable. For networks that do not carry multicast: peers share the addresses they know, so one other player's address is enough.",
        valueName: "host[:port]"))
    var peers: [String] = []

    @Flag(name: .customLong("no-multicast"), help: "Unicast peers only: neither join nor send to the multicast group.")
    var noMulticast = false

    var room: String { roomFlag ?? Config.current.room ?? "eggs" }
    var group: String { groupFlag ?? Config.current.group ?? "239.255.77.77" }
    var port: Int { portFlag ?? Config.current.port ?? 47777 }
    var interface: String? { interfaceFlag ?? Config.current.interface }

    func validate() throws {
        _ = try Config.checked()
        guard (1...65535).contains(port) else {
            throw ValidationError("--port must be from 1 to 65535, not \(port)")
        }
        if let id, PeerID(hex: id) == nil {
            throw ValidationError("--id must be 1 to 16 hex digits, not '\(id)'")
        }
        guard !room.isEmpty, room.utf8.count <= 64 else {
            throw ValidationError("--room must be 1 to 64 bytes")
        }
        guard peers.count <= UnicastOptions.addressesMax else {
            throw ValidationError("at most \(UnicastOptions.addressesMax) --peer addresses")
        }
        for peer in peers {
            do {
                _ = try PeerAddress.resolve(peer, defaultPort: UInt16(port))
            } catch {
                throw ValidationError("--peer: \(error.description)")
            }
        }
    }

    /// The passphrase from the flag, else from EGGS_PASSPHRASE; empty means none.
    var effectivePassphrase: String? {
        let value = passphrase ?? getenv("EGGS_PASSPHRASE").map { String(cString: $0) }
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    var multicast: MulticastOptions {
        // Resolved once more here (validate() checked every address).
        let addresses = peers.compactMap { try? PeerAddress.resolve($0, defaultPort: UInt16(port)) }
        return MulticastOptions(group: group, port: port, interface: interface, multicast: !noMulticast,
                                unicast: addresses.isEmpty ? nil : UnicastOptions(peers: addresses))
    }

    /// The peer ID from `--id`, else a random one from the system's generator.
    func peerID() -> PeerID {
        if let id, let parsed = PeerID(hex: id) { return parsed }
        var generator = SystemRandomNumberGenerator()
        return PeerID(generator.next() | 1)
    }

    /// The log path from `--log`, else `$XDG_STATE_HOME/eggs/<peer>-<unix seconds>.jsonl`.
    func logPath(peer: PeerID, suffix: String = "") -> String {
        if let log {
            // A second log of the same run (a spectator that became a player) beside the first.
            guard !suffix.isEmpty else { return log }
            return log.hasSuffix(".jsonl") ? String(log.dropLast(6)) + suffix + ".jsonl" : log + suffix
        }
        return "\(Self.stateDirectory())/\(peer.hex)-\(time(nil))\(suffix).jsonl"
    }

    /// `$XDG_STATE_HOME/eggs`, default `~/.local/state/eggs`, created when missing: the only
    /// directory eggs-tui creates (a user's `--log` must name an existing directory).
    static func stateDirectory() -> String {
        let base: String
        if let xdg = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), xdg.hasPrefix("/") {
            base = xdg
        } else {
            let home = getenv("HOME").map { String(cString: $0) } ?? "/tmp"
            base = home + "/.local/state"
        }
        let dir = base + "/eggs"
        makeDirectories(dir)
        return dir
    }

    static func makeDirectories(_ path: String) {
        var prefix = ""
        for part in path.split(separator: "/") {
            prefix += "/" + part
            mkdir(prefix, 0o755)
        }
    }
}
