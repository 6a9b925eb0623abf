#!/usr/bin/env bash
# CPU and memory of `eggs-tui play` (issue 5): an idle lobby, then a running match.
#
#   scripts/tui-usage.sh [SECONDS]     # each phase sampled for SECONDS (default 30)
#
# Runs two players on 127.0.0.1 in their own tmux server: A alone in its lobby first, then B
# joins, both get ready, and the match runs (pairs falling by gravity, no keys) while A is sampled.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_=${1:-30}
. scripts/common.sh
BIN=${EGGS_TUI:-.build/release/eggs-tui}
release_binary "$BIN" eggs-tui
dir=$(mktemp -d)
mkdir -p "$dir/config/eggs" && : > "$dir/config/eggs/config.toml"  # not a first run: no how-to-play screen
port=$(random_port)
tmux_server eggs-usage-$$
start() {
    mkdir -p "$dir/state-$1"
    tmux -L "$sock" new-session -d -s "$1" -x 120 -y 40 \
        "echo \$\$ > $dir/$1.pid; exec env XDG_STATE_HOME=$dir/state-$1 XDG_CONFIG_HOME=$dir/config TERM=xterm-256color $BIN play --interface 127.0.0.1 --port $port --room usage$$ --name $1"
}
start a
sleep 3
echo "idle lobby (one player alone):"
python3 scripts/proc-sample.py --interval 5 "$SECONDS_" "$(cat "$dir/a.pid")" | tail -n 1
start b
sleep 3
tmux -L "$sock" send-keys -t a r
tmux -L "$sock" send-keys -t b r
sleep 5   # the lobby's 3-s countdown runs first
tmux -L "$sock" capture-pane -p -t a | grep -q "game 1" || { echo "tui-usage: no match started" >&2; exit 1; }
echo "running match (two players, speed 0, gravity only):"
python3 scripts/proc-sample.py --interval 5 "$SECONDS_" "$(cat "$dir/a.pid")" | tail -n 1
