# Shared by the measurement scripts: sourced, not run.

# release_binary PATH PRODUCT: builds PRODUCT in release when PATH is not there yet.
release_binary() {
    if [ ! -x "$1" ]; then
        export PATH=/opt/swift/usr/bin:$PATH
        swift build -c release --product "$2"
    fi
}

# A random UDP port for this run's room.
random_port() { echo $((20000 + RANDOM % 40000)); }

# tmux_server NAME: a tmux server of this script's own (socket $sock), killed on exit, and
# its socket file removed (kill-server leaves it behind).
tmux_server() {
    sock=$1
    trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock"' EXIT
}
