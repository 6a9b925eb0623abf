#!/usr/bin/env bash
# Frames drawn per chain step (issue 12), on a grid ticked here and on a mirrored grid.
#
#   scripts/chain-frames.sh [SECONDS]   # each scenario runs SECONDS (default 45)
#
# Owner: a practice match at 120x40, the insane bot's board chaining (the board is ticked in
# this process, as a player's own grid is in network play). Mirror: two hard bots on 127.0.0.1
# (speed 3) watched by a spectator at 120x40, which mirrors both grids. Each `eggs-tui play`
# writes its counts at exit (EGGS_CHAIN_FRAMES): frames drawn while a board resolved a chain,
# the chain steps seen, and the pictures among those frames (frames that showed the board
# otherwise than the frame before). EGGS_TUI picks the binary (default: the release build).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_=${1:-45}
. scripts/common.sh
BIN=${EGGS_TUI:-.build/release/eggs-tui}
release_binary "$BIN" eggs-tui
dir=$(mktemp -d)
mkdir -p "$dir/config/eggs" && : > "$dir/config/eggs/config.toml"  # not a first run: no how-to-play screen
port=$(random_port)
tmux_server eggs-chain-frames-$$
tmux -L "$sock" new-session -d -s p -x 120 -y 40 \
    "env EGGS_CHAIN_FRAMES=$dir/owner.txt TERM=xterm-256color $BIN play --practice --seed 3 --level insane --speed 3 --name idle"
tmux -L "$sock" new-session -d -s w -x 120 -y 40 \
    "env XDG_STATE_HOME=$dir XDG_CONFIG_HOME=$dir/config EGGS_CHAIN_FRAMES=$dir/mirror.txt TERM=xterm-256color $BIN play --interface 127.0.0.1 --port $port --room frames$$ --spectate --name watcher"
sleep 2
tmux -L "$sock" new-session -d -s bots -x 120 -y 40 \
    "exec env XDG_STATE_HOME=$dir $BIN bot --interface 127.0.0.1 --port $port --room frames$$ --count 2 --players 2 --level hard --speed 3 --games 50 --seconds $((SECONDS_ + 10))"
sleep "$SECONDS_"
tmux -L "$sock" send-keys -t p q || true
sleep 0.5
tmux -L "$sock" send-keys -t p y || true  # the practice may be on its results already (q left)
tmux -L "$sock" send-keys -t w q || true
sleep 2
echo "owner (practice, the insane bot's board):"
grep '^owner' "$dir/owner.txt" || echo "  no counts written"
echo "mirror (a spectator of two hard bots):"
grep '^mirror' "$dir/mirror.txt" || echo "  no counts written"
rm -rf "$dir"
