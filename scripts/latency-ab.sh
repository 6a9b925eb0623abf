#!/usr/bin/env bash
# Two builds of eggs-netbench against each other and the machine's floor (issue 30): PAIRS times,
# `latency` with game traffic (4 peers each sending 60 msg/s for 20 s on 127.0.0.1, no loss) from
# OLD then NEW, each under `perf stat` (context switches, CPU), then `scripts/latency-floor.sh`'s
# C program. Alternating keeps a busy machine's drift out of the comparison. Prints one line a run
# and the medians.
#
#   scripts/latency-ab.sh OLD_BINARY NEW_BINARY [PAIRS]     # PAIRS defaults to 6
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
old=${1:?old eggs-netbench}
new=${2:?new eggs-netbench}
pairs=${3:-6}
command -v perf >/dev/null || { echo "latency-ab.sh: needs perf (linux-tools)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cc -O2 -o "$dir/latency-floor" scripts/latency-floor.c
for _ in $(seq "$pairs"); do
    for side in old new; do
        binary=$old; [ "$side" = new ] && binary=$new
        out=$(timeout --kill-after=5 120 perf stat -e context-switches,task-clock -- \
              "$binary" latency --peers 4 --senders 4 --rate 60 --seconds 20 --port "$(random_port)" 2>&1)
        echo "$side $(grep 'latency all' <<<"$out" | tr -s ' ') | $(grep -E 'context-switches|task-clock' <<<"$out" | awk '{print $1, $2}' | tr '\n' ' ')"
    done
    echo "floor $(timeout --kill-after=5 60 "$dir/latency-floor" 4 60 20 "$(random_port)")"
done | tee "$dir/runs.txt"
python3 - "$dir/runs.txt" <<'PY'
import re, statistics, sys
runs = {"old": [], "new": [], "floor": []}
for line in open(sys.argv[1]):
    side = line.split()[0]
    if side in ("old", "new"):
        def us(name):
            m = re.search(name + r"=([\d.]+) (µs|ms)", line)
            return float(m.group(1)) * (1000 if m.group(2) == "ms" else 1)
        switches = int(re.search(r"\| (\d+) context", line).group(1))
        cpu = float(re.search(r"context-switches ([\d.]+)", line).group(1))
        runs[side].append((us("p50"), us("p99"), switches, cpu))
    elif side == "floor":
        runs[side].append((float(re.search(r"p50 (\d+)", line).group(1)), float(re.search(r"p99 (\d+)", line).group(1))))
for side, rows in runs.items():
    if not rows: continue
    text = f"{side}: p50 median {statistics.median(r[0] for r in rows):.0f} µs, p99 median {statistics.median(r[1] for r in rows):.0f} µs"
    if side != "floor":
        text += f", context switches median {statistics.median(r[2] for r in rows):.0f}, CPU median {statistics.median(r[3] for r in rows):.0f} ms"
    print(text)
PY
