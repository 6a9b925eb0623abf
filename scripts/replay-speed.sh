#!/usr/bin/env bash
# Replay speed (issue 6): messages per second of `eggs-tui replay --verify`.
#
#   scripts/replay-speed.sh [LOG...]
#
# Without LOGs it records two with bots on 127.0.0.1 (2 players 20 games, 8 players 6 games, at
# speed 9), then verifies each log 5 times and prints the best and median rate, by the wall clock
# and per CPU second of the verify process (the figure that holds on a busy machine).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
BIN=${EGGS_TUI:-.build/release/eggs-tui}
release_binary "$BIN" eggs-tui
logs=("$@")
if [ ${#logs[@]} -eq 0 ]; then
    dir=$(mktemp -d)
    for players in 2 8; do
        port=$(random_port)
        "$BIN" bot --interface 127.0.0.1 --port "$port" --room "replay$$-$players" --count "$players" \
            --players "$players" --games $(( players == 2 ? 20 : 6 )) --speed 9 --seconds 300 --id 100 --log "$dir/p$players.jsonl" >/dev/null
        logs+=("$(ls "$dir"/p"$players"-*.jsonl | head -n 1)")
    done
fi
for log in "${logs[@]}"; do
    python3 - "$BIN" "$log" <<'PY'
import json, os, resource, subprocess, sys, time
binary, log = sys.argv[1], sys.argv[2]
rates, cpu_rates, messages = [], [], 0
for _ in range(5):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run([binary, "replay", "--verify", log], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        sys.exit(f"replay-speed: {log}: {run.stderr.strip()}")
    report = json.loads(run.stdout)
    messages = report["messages"]
    rates.append(messages / elapsed)
    # CPU time of the verify process alone: what it costs, whatever else the machine runs.
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cpu_rates.append(messages / cpu)
rates.sort()
cpu_rates.sort()
print(f"{log}: {len(report['players'])} players, {messages} messages: "
      f"wall clock best {rates[-1]:,.0f} msg/s, median {rates[2]:,.0f} msg/s; "
      f"per CPU second best {cpu_rates[-1]:,.0f}, median {cpu_rates[2]:,.0f} msg/s "
      f"(whole process, 5 runs; load average {os.getloadavg()[0]:.1f})")
PY
done
