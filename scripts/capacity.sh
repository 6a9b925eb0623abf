#!/usr/bin/env bash
# How many bot peers this machine sustains in one match on 127.0.0.1 (issue 6).
#
#   scripts/capacity.sh [--one-process] PLAYERS SPECTATORS [SECONDS] [LEVEL] [SPEED]
#
# Starts PLAYERS bot players and SPECTATORS watchers in one room (a process each, or all in one
# process with --one-process), lets them play match after match for SECONDS (default 120), then
# checks: no desync, every log verifies, and the longest wait for a next egg of every player is
# at most 100 ms. Prints CPU and memory of the processes and a verdict; exits 1 when it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
one=0
if [ "${1:-}" = "--one-process" ]; then one=1; shift; fi
PLAYERS=${1:?players}
SPECTATORS=${2:?spectators}
SECONDS_=${3:-120}
LEVEL=${4:-medium}
SPEED=${5:-5}
. scripts/common.sh
BIN=${EGGS_TUI:-.build/release/eggs-tui}
release_binary "$BIN" eggs-tui
dir=$(mktemp -d)
port=$(random_port)
common=(--interface 127.0.0.1 --port "$port" --room "capacity$$" --players "$PLAYERS" --level "$LEVEL"
        --speed "$SPEED" --seconds "$SECONDS_")
pids=()
if [ "$one" = 1 ]; then
    "$BIN" bot "${common[@]}" --count "$PLAYERS" --spectators "$SPECTATORS" --id 1000 \
        --log "$dir/peer.jsonl" --summary "$dir/summary-0.json" 2>"$dir/err-0" &
    pids+=($!)
else
    for i in $(seq 0 $((PLAYERS + SPECTATORS - 1))); do
        if [ "$i" -lt "$PLAYERS" ]; then role=(--count 1); else role=(--count 0 --spectators 1); fi
        "$BIN" bot "${common[@]}" "${role[@]}" --id $((0x1000 + i)) \
            --log "$dir/peer-$i.jsonl" --summary "$dir/summary-$i.json" 2>"$dir/err-$i" &
        pids+=($!)
    done
fi
sleep 2
python3 scripts/proc-sample.py --interval 10 $((SECONDS_ - 5)) "${pids[@]}" > "$dir/proc.txt" || true
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
rc=0
python3 - "$dir" "$BIN" "$status" <<'PY' || rc=$?
import glob, json, subprocess, sys
directory, binary, status = sys.argv[1], sys.argv[2], int(sys.argv[3])
peers = []
for path in sorted(glob.glob(directory + "/summary-*.json")):
    peers += json.load(open(path))["bots"]
players = [p for p in peers if p.get("role", "player") == "player"]
watchers = [p for p in peers if p.get("role") == "spectator"]
worst = max((p["maxEggWaitMs"] for p in players), default=0)
desyncs = sum(p["desyncs"] for p in peers)
bad_logs = []
for p in peers:
    run = subprocess.run([binary, "replay", "--verify", p["log"]], capture_output=True, text=True)
    if run.returncode != 0:
        bad_logs.append(f'{p["log"]}: {run.stderr.strip()}')
games = max((p["games"] for p in players), default=0)
print(f"{len(players)} players + {len(watchers)} spectators: games {games}, "
      f"checkpoints verified per peer min {min(p['checkpointsVerified'] for p in peers)}, "
      f"longest egg wait {worst:.1f} ms, desyncs {desyncs}, logs failing verify {len(bad_logs)}, "
      f"retransmitted {sum(p['retransmitted'] for p in peers)} of {sum(p['sent'] for p in peers)} sent")
for line in bad_logs: print("  " + line)
ok = status == 0 and desyncs == 0 and not bad_logs and worst <= 100 and games > 0
print("capacity: PASS" if ok else "capacity: FAIL")
sys.exit(0 if ok else 1)
PY
tail -n "${#pids[@]}" "$dir/proc.txt" | awk '{cpu+=$5; rss+=$17} END {printf "processes: total mean CPU %.1f%% of a core, total RSS at the end %.1f MiB\n", cpu, rss}'
exit $rc
