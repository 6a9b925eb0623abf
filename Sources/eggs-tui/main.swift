import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

// The exit statuses (docs/formats.md): 0 success, 1 a failure the run detected, 2 bad usage or bad
// input, with one line on stderr naming what was wrong. ArgumentParser's own usage
// status (64) is mapped to 2.
// Logs are written by threads of their own: every queued line reaches its file before exit.
do {
    var command = try EggsCommand.parseAsRoot()
    try command.run()
    LogFile.flushAll()
} catch let failure as CommandFailure {
    LogFile.flushAll()
    FileHandleOutput.stderr("eggs-tui: \(failure.description)")
    exit(failure.status)
} catch let exitCode as ExitCode {
    LogFile.flushAll()
    exit(exitCode.rawValue)
} catch {
    LogFile.flushAll()
    if EggsCommand.exitCode(for: error) == .success {
        print(EggsCommand.fullMessage(for: error))  // --help, --version
        exit(0)
    }
    let message = EggsCommand.fullMessage(for: error)
    let first = message.split(separator: "\n").first.map(String.init) ?? "bad usage"
    let line = first.hasPrefix("Error: ") ? String(first.dropFirst(7)) : first
    FileHandleOutput.stderr("eggs-tui: \(line) (see 'eggs-tui --help')")
    exit(2)
}
