#!/usr/bin/env bash
# Key press → the move shown on the other player's terminal (issue 5), on 127.0.0.1.
#
#   scripts/input-latency.sh [KEYS] [INTERVAL_S]     # default 300 keys, one every 0.05 s
#
# Two `eggs-tui play` run in their own tmux server with EGGS_TRACE_INPUT set; both get ready,
# and player A gets KEYS left/right presses. Each peer's trace has one line per event:
#   key     PLAYER GAME N µs   (A made the Nth item of its stream)
#   applied PLAYER GAME N µs   (B's mirror of A reached N: the network share, both ends included)
#   shown   PLAYER GAME N µs   (B's screen drawn with N: what the other player sees)
# Both are on one host, so their wall clocks agree.
set -euo pipefail
cd "$(dirname "$0")/.."
KEYS=${1:-300}
INTERVAL=${2:-0.05}
. scripts/common.sh
BIN=${EGGS_TUI:-.build/release/eggs-tui}
release_binary "$BIN" eggs-tui
dir=$(mktemp -d)
mkdir -p "$dir/config/eggs" && : > "$dir/config/eggs/config.toml"  # not a first run: no how-to-play screen
port=$(random_port)
tmux_server eggs-latency-$$
for p in a b; do
    mkdir -p "$dir/state-$p"
    tmux -L "$sock" new-session -d -s "$p" -x 120 -y 40 \
        "EGGS_TRACE_INPUT=$dir/$p.trace XDG_STATE_HOME=$dir/state-$p XDG_CONFIG_HOME=$dir/config TERM=xterm-256color $BIN play --interface 127.0.0.1 --port $port --room latency$$ --name $p 2>$dir/$p.err"
done
screen() { tmux -L "$sock" capture-pane -p -t "$1"; }
wait_for() { # PANE PATTERN SECONDS
    for _ in $(seq 1 $(( $3 * 10 ))); do
        if screen "$1" | grep -q "$2"; then return 0; fi
        sleep 0.1
    done
    echo "input-latency: '$2' did not appear on $1:" >&2; screen "$1" >&2; exit 1
}
wait_for a "name b\| b " 15
wait_for b "name a\| a " 15
sleep 1
tmux -L "$sock" send-keys -t a r
tmux -L "$sock" send-keys -t b r
wait_for a "game 1" 15
wait_for b "game 1" 15
sleep 0.5
for i in $(seq 1 "$KEYS"); do
    if (( i % 2 )); then k=Left; else k=Right; fi
    tmux -L "$sock" send-keys -t a "$k"
    sleep "$INTERVAL"
done
sleep 1
for p in a b; do tmux -L "$sock" send-keys -t "$p" q y; done
sleep 1
python3 - "$dir/a.trace" "$dir/b.trace" <<'PY'
import math, sys
def read(path):
    out = []
    for line in open(path):
        kind, player, game, n, t = line.split()
        out.append((kind, player, int(game), int(n), int(t)))
    return out
a, b = read(sys.argv[1]), read(sys.argv[2])
keys = [r for r in a if r[0] == "key"]
def latencies(kind):
    seen = {}
    for r in b:
        if r[0] == kind:
            seen.setdefault((r[1], r[2]), []).append((r[3], r[4]))
    out = []
    for _, player, game, n, t in keys:
        later = [ts for (m, ts) in seen.get((player, game), []) if m >= n]
        if later:
            out.append(max(0, min(later) - t))
    return sorted(out)
def pct(xs, p):
    # Nearest rank, the rule of EggPrimitives' nearestRank: the ceil(p/100 * n)-th smallest.
    return xs[min(len(xs) - 1, max(0, math.ceil(p / 100 * len(xs)) - 1))] / 1000
for label, kind in (("key -> shown on the other terminal", "shown"), ("key -> applied to the other peer's mirror (network share)", "applied")):
    xs = latencies(kind)
    if not xs:
        print(f"{label}: no samples"); continue
    print(f"{label}: n={len(xs)} of {len(keys)} keys  p50 {pct(xs,50):.2f} ms  p99 {pct(xs,99):.2f} ms  max {xs[-1]/1000:.2f} ms")
PY
