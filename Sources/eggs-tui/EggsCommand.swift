import ArgumentParser
import Consensus
import EggGame

struct EggsCommand: ParsableCommand {
    /// What `--version` prints: the program's version and the match protocol it speaks.
    static let version = "eggs-tui \(ManualText.version) (protocol \(Hello.currentProtocol), rules \(RuleSet.names))"

    static let configuration = CommandConfiguration(
        commandName: "eggs-tui",
        abstract: "A falling-egg puzzle game for the terminal, played peer to peer on a LAN.",
        discussion: ManualText.discussion,
        version: EggsCommand.version,
        subcommands: [Play.self, Bot.self, Replay.self, Soak.self, Resolve.self, BotEval.self, History.self],
        defaultSubcommand: Play.self
    )
}
