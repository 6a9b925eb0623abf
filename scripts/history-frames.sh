#!/usr/bin/env bash
# How late a frame can be while the history records a match (issue 33's goal: under 5 ms).
#
#   scripts/history-frames.sh [MATCHES] [FILL]   # default 3 matches, on a history of FILL (40) bot matches
#
# First FILL bot matches fill a fresh history database (each of the two bots records its own
# view, so 2 x FILL records), so a record is written into a database of realistic size and the
# ratings reload reads all of it. Then two `eggs-tui play` peers on 127.0.0.1 (tmux, 100x30,
# speed 9, nobody at the keys: the grids top out) play MATCHES matches, a rematch each time; every
# match's end makes both peers record it. Each peer runs with EGGS_LOOP_STATS: at exit it writes
# its game loop's longest iteration (keys, ticks and the frame drawn), overall and while a
# record was being written. EGGS_TUI picks the binary (default: the release build).
set -euo pipefail
cd "$(dirname "$0")/.."
MATCHES=${1:-3}
FILL=${2:-40}
. scripts/common.sh
BIN=${EGGS_TUI:-.build/release/eggs-tui}
release_binary "$BIN" eggs-tui
dir=$(mktemp -d)
mkdir -p "$dir/config/eggs" && : > "$dir/config/eggs/config.toml"  # not a first run
export XDG_DATA_HOME=$dir/data XDG_STATE_HOME=$dir/state XDG_CONFIG_HOME=$dir/config
port=$(random_port)
tmux_server eggs-history-frames-$$
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock"; rm -rf "$dir"' EXIT

echo "filling the history: $FILL bot matches at speed 9..."
"$BIN" bot --interface 127.0.0.1 --port "$port" --room "fill$$" --count 2 --players 2 --speed 9 \
    --games "$FILL" --seconds 600 --history --quiet >/dev/null
echo "history: $("$BIN" history --json --last 0 | grep -o '"id"' | wc -l) matches listed"

for who in alice bob; do
    tmux -L "$sock" new-session -d -s "$who" -x 100 -y 30 \
        "env XDG_DATA_HOME=$XDG_DATA_HOME XDG_STATE_HOME=$XDG_STATE_HOME XDG_CONFIG_HOME=$XDG_CONFIG_HOME EGGS_LOOP_STATS=$dir/$who.json TERM=xterm-256color $BIN play --interface 127.0.0.1 --port $port --room frames$$ --speed 9 --name $who; sleep 30"
done
screen_of() { tmux -L "$sock" capture-pane -p -t "$1"; }
# wait_for SESSION TEXT SECONDS (absent: wait until TEXT is gone)
wait_for() {
    local end=$((SECONDS + $3))
    while [ $SECONDS -lt $end ]; do
        if screen_of "$1" | grep -q -- "$2"; then return 0; fi
        sleep 0.3
    done
    echo "timed out waiting for '$2' on $1" >&2
    screen_of "$1" >&2
    return 1
}
wait_gone() {
    local end=$((SECONDS + $3))
    while [ $SECONDS -lt $end ]; do
        if ! screen_of "$1" | grep -q -- "$2"; then return 0; fi
        sleep 0.3
    done
    echo "timed out waiting for '$2' to go on $1" >&2
    return 1
}
wait_for alice bob 20
for match in $(seq 1 "$MATCHES"); do
    tmux -L "$sock" send-keys -t alice r
    tmux -L "$sock" send-keys -t bob r
    wait_gone alice "largest chain" 20
    wait_for alice "largest chain" 180
    wait_for bob "largest chain" 60
    echo "match $match over"
    sleep 3  # both record it meanwhile
done
# Leave the results (any key: the lobby), then quit from the lobby.
for who in alice bob; do tmux -L "$sock" send-keys -t "$who" x; done
sleep 1
for who in alice bob; do tmux -L "$sock" send-keys -t "$who" q; done
for who in alice bob; do
    end=$((SECONDS + 20))
    while [ ! -s "$dir/$who.json" ] && [ $SECONDS -lt $end ]; do sleep 0.3; done
done
echo "history: $("$BIN" history --json --last 0 | grep -o '"id"' | wc -l) matches listed"
status=0
for who in alice bob; do
    if [ -s "$dir/$who.json" ]; then
        echo "$who: $(cat "$dir/$who.json")"
        if grep -q '"iterationsDuringHistory":0,' "$dir/$who.json"; then
            echo "$who: no iteration ran while a record was written" >&2
            status=1
        fi
    else
        echo "$who: no figures written" >&2
        status=1
    fi
done
exit $status
