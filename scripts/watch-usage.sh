#!/usr/bin/env bash
# CPU and memory of `eggs-tui play --spectate` watching a match full of chains (issue 12).
#
#   scripts/watch-usage.sh [SECONDS]   # sampled for SECONDS (default 30)
#
# Two insane bots play on 127.0.0.1 (speed 5: they chain often); a spectator in its own tmux
# server at 120x40 mirrors both grids and draws every chain, and is sampled.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_=${1:-30}
. scripts/common.sh
BIN=${EGGS_TUI:-.build/release/eggs-tui}
release_binary "$BIN" eggs-tui
dir=$(mktemp -d)
mkdir -p "$dir/config/eggs" && : > "$dir/config/eggs/config.toml"  # not a first run: no how-to-play screen
port=$(random_port)
tmux_server eggs-watch-$$
tmux -L "$sock" new-session -d -s bots -x 120 -y 40 \
    "exec env XDG_STATE_HOME=$dir $BIN bot --interface 127.0.0.1 --port $port --room watch$$ --count 2 --players 2 --level insane --speed 5 --best-of 7 --seconds $((SECONDS_ + 30))"
sleep 1
tmux -L "$sock" new-session -d -s w -x 120 -y 40 \
    "echo \$\$ > $dir/w.pid; exec env XDG_STATE_HOME=$dir XDG_CONFIG_HOME=$dir/config TERM=xterm-256color $BIN play --interface 127.0.0.1 --port $port --room watch$$ --spectate --name watcher"
sleep 5
echo "spectator of two insane bots (chains, 120x40):"
python3 scripts/proc-sample.py --interval 5 "$SECONDS_" "$(cat "$dir/w.pid")" | tail -n 1
rm -rf "$dir"
