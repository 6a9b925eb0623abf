/// The root command's discussion: what the generated manual page eggs-tui(6) (and
/// `eggs-tui --help`) says about keys, files and exit statuses.
enum ManualText {
    /// The release number (what `eggs-tui --version` names, and the .deb version).
    static let version = "0.12.0"

    static let discussion = """
        Two players on two machines start eggs-tui, find each other by UDP multicast (or by \
        --peer addresses) and play, each seeing its own grid and a live mirror of the other's. \
        There is no server; every peer keeps a message log from which the match replays exactly.

        KEYS (in a match): arrows or h/j/k/l move (down drops faster); z, x and up rotate; \
        space hard-drops; v shows or hides the drop preview; p pauses a practice match; q leaves (asking first; a network match for its room's lobby); ? shows the \
        keys as bound and the rules, in every screen (any key closes it). In the lobby: \
        r or enter marks you ready, b starts a practice match against a local bot, l picks \
        its level, s the speed, c the colours, g the games per match. During a replay: space \
        pauses, . steps, + and - change the speed, n seeks to the next game, q quits. Remap \
        with --keys 'left=a,right=d' or in the config file; actions: \
        \(KeyAction.allCases.map(\.rawValue).joined(separator: " ")).

        FILES: $XDG_CONFIG_HOME/eggs/config.toml (default ~/.config/eggs/config.toml): the \
        defaults a player sets once, as TOML keys name, room, interface, group, port, color \
        (true or false: draw in colour), colors (4 to 6 in play), bell, preview (true: the drop \
        preview from the start), das and arr (ms a held move waits before it repeats, and between \
        repeats, where the terminal speaks the kitty keyboard protocol), keyboard ("auto", "kitty" \
        or "legacy"), logs-keep, logs-max-mb and a [keys] table (action = "key"); command-line \
        flags win; a bad file exits 2 naming its line. $XDG_CONFIG_HOME/eggs/keys: older \
        key bindings, lines 'action = key'. $XDG_STATE_HOME/eggs/ (default \
        ~/.local/state/eggs/): message logs (<peer>-<time>.jsonl, JSON Lines) and the \
        diagnostics log eggs-tui.log. $XDG_DATA_HOME/eggs/history.sqlite (default \
        ~/.local/share/eggs/history.sqlite): the match history (eggs-tui history).

        ENVIRONMENT: EGGS_PASSPHRASE authenticates every datagram (as --passphrase); NO_COLOR \
        draws without colours; XDG_CONFIG_HOME, XDG_STATE_HOME and XDG_DATA_HOME move the files above.

        EXIT STATUS: 0 success; 1 a failure the run detected (a desync, a stall, a checkpoint \
        that does not match); 2 bad usage or bad input (a bad flag, a corrupt log, a bad \
        config file), with one line on standard error naming what was wrong.
        """
}
