import ArgumentParser
import Consensus
import EggHistory
import Foundation

extension EggsCommand {
    /// `eggs-tui history`: the matches recorded on this machine, their ratings, and importing logs.
    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Your match history and ratings, kept in $XDG_DATA_HOME/eggs/history.sqlite.",
            discussion: """
                Every match play (and bot --history) finishes is recorded from its verified log; \
                'history import LOG...' adds matches from logs. Ratings are Glicko-2 from the games \
                recorded on this machine: every player keeps their own view.
                """,
            subcommands: [List.self, Show.self, Import.self],
            defaultSubcommand: List.self
        )
    }
}

/// Options every `history` subcommand takes.
struct HistoryOptions: ParsableArguments {
    @Option(help: "The history database (default: $XDG_DATA_HOME/eggs/history.sqlite).")
    var database: String?

    var path: String { database ?? HistoryDatabase.defaultPath() }

    /// Opens the database; a corrupt, locked or unwritable file is exit 2 naming it.
    func open() throws -> HistoryDatabase {
        do {
            return try HistoryDatabase(path: path)
        } catch {
            throw CommandFailure.badInput(error.description)
        }
    }
}

extension EggsCommand.History {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "The last matches (the default): date, opponents, result, games, largest chain; then the ratings.")

        @OptionGroup var options: HistoryOptions

        @Option(help: "Only matches against this player name.")
        var opponent: String?

        @Option(help: "Only matches of this rule set (sfe, tsu).")
        var rules: String?

        @Option(help: "Only matches since this day (YYYY-MM-DD, UTC).")
        var since: String?

        @Option(parsing: .unconditional, help: "At most this many matches (default 20; 0 for all).")
        var last: Int = 20

        @Flag(help: "Print one JSON object (matches and ratings) for scripts.")
        var json = false

        func validate() throws {
            if let since, HistoryReport.day(since) == nil { throw ValidationError("--since must be a day as YYYY-MM-DD") }
            if last < 0 { throw ValidationError("--last must be 0 or more") }
        }

        func run() throws {
            let database = try options.open()
            do {
                let filter = MatchFilter(opponent: opponent, rules: rules, sinceMicroseconds: since.flatMap(HistoryReport.day),
                                         limit: last == 0 ? nil : last)
                let shown = try database.matches(filter)
                let standings = Ratings.standings(try database.matches())
                if json {
                    print(HistoryReport.json(shown, standings: standings))
                } else {
                    for line in HistoryReport.table(shown, standings: standings) { print(line) }
                }
            } catch {
                throw CommandFailure.badInput(error.description)
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One match with its games and the command that replays it.")

        @OptionGroup var options: HistoryOptions

        @Argument(help: "The match's number (the first column of 'history').")
        var number: Int64

        @Flag(help: "Print the match as one JSON object.")
        var json = false

        func run() throws {
            let database = try options.open()
            let match: StoredMatch?
            do {
                match = try database.match(id: number)
            } catch {
                throw CommandFailure.badInput(error.description)
            }
            guard let match else { throw CommandFailure.badInput("no match \(number) in '\(database.path)'") }
            if json {
                print(HistoryReport.json(match).serialized)
            } else {
                for line in HistoryReport.show(match) { print(line) }
            }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add the matches of message logs, each after it verifies (a log imported before changes nothing).")

        @OptionGroup var options: HistoryOptions

        @Argument(help: "Message logs (JSON Lines).")
        var logs: [String]

        @Option(help: "The room's passphrase, for logs written in a passphrase room (or set EGGS_PASSPHRASE).")
        var passphrase: String?

        func validate() throws {
            if logs.isEmpty { throw ValidationError("name at least one log") }
        }

        func run() throws {
            let database = try options.open()
            let key = passphrase ?? ProcessInfo.processInfo.environment["EGGS_PASSPHRASE"]
            var total = ImportResult()
            var refused: [String] = []
            for log in logs {
                do {
                    let result = PracticeLog.isPracticeLog(path: log)
                        ? try PracticeLog.record(path: log, in: database)
                        : try database.importLog(path: log, passphrase: key)
                    total.added += result.added
                    total.updated += result.updated
                    total.unchanged += result.unchanged
                } catch let error as LogRefused {
                    FileHandleOutput.stderr("eggs-tui: \(error.description)")
                    refused.append(log)
                } catch {
                    throw CommandFailure.badInput("\(error)")
                }
            }
            print("\(total.added) match\(total.added == 1 ? "" : "es") added, \(total.updated) updated, \(total.unchanged) already recorded"
                  + (refused.isEmpty ? "" : "; \(refused.count) log\(refused.count == 1 ? "" : "s") refused"))
            // Each refused log was named on stderr with its reason.
            if !refused.isEmpty { throw ExitCode(2) }
        }
    }
}
