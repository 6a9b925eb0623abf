# Shared by the measurement scripts: sourced, not run.

# BIN: the release eggs-tui (or $EGGS_TUI), built first when missing.
BIN=${EGGS_TUI:-.build/release/eggs-tui}
if [ ! -x "$BIN" ]; then
    export PATH=/opt/swift/usr/bin:$PATH
    swift build -c release --product eggs-tui
fi

# A random UDP port for this run's room.
random_port() { echo $((20000 + RANDOM % 40000)); }

# tmux_server NAME: a tmux server of this script's own (socket $sock), killed on exit.
tmux_server() {
    sock=$1
    trap 'tmux -L "$sock" kill-server 2>/dev/null || true' EXIT
}
