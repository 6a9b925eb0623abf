import ArgumentParser

struct EggsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eggs-tui",
        abstract: "A falling-egg puzzle game for the terminal, played peer to peer on a LAN.",
        discussion: ManualText.discussion,
        version: ManualText.version,
        subcommands: [Play.self, Bot.self, Replay.self, Soak.self, Resolve.self],
        defaultSubcommand: Play.self
    )
}
