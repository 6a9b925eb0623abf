#!/usr/bin/env bash
# How many bot peers this machine sustains in one match on 127.0.0.1 (issues 6 and 30).
#
#   scripts/capacity.sh [--one-process] [--per-process K] [--kill-half-at S] PLAYERS SPECTATORS [SECONDS] [LEVEL] [SPEED]
#
# Starts PLAYERS bot players and SPECTATORS watchers in one room (a process each; with
# --per-process K, the spectators K to a process; with --one-process, everyone in one process),
# lets them play match after match for SECONDS (default 120), then checks: no desync, every log
# verifies, the longest wait for a next egg of every player is at most 100 ms, and every spectator
# followed the players within 2 s of its start. With --kill-half-at S, half the spectator processes
# are killed (SIGKILL) S seconds in, and the one-way latency of the players' messages sent around
# the kill (from 0.1 s before to 3 s after it) is checked (goal: at most 50 ms), from the players'
# logs: a message's time in its sender's log (its own delivery, at the send) against its time in
# each other player's (one machine, one clock). The players' longest pause between two delivered
# messages of a game is printed beside it, around the kill and elsewhere; a pause also counts the
# players' own silences, which no kill causes. Prints CPU and memory of the processes, each
# player's CPU and bytes sent, and a verdict; exits 1 when it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
one=0
per=1
killAt=0
while [ $# -gt 0 ]; do
    case "$1" in
        --one-process) one=1; shift ;;
        --per-process) per=${2:?count}; shift 2 ;;
        --kill-half-at) killAt=${2:?seconds}; shift 2 ;;
        *) break ;;
    esac
done
PLAYERS=${1:?players}
SPECTATORS=${2:?spectators}
SECONDS_=${3:-120}
LEVEL=${4:-medium}
SPEED=${5:-5}
. scripts/common.sh
BIN=${EGGS_TUI:-.build/release/eggs-tui}
release_binary "$BIN" eggs-tui
dir=$(mktemp -d)
pids=()
# Whatever way the script ends, no peer outlives it and its logs go.
trap 'kill -KILL "${pids[@]}" 2>/dev/null || true; rm -rf "$dir"' EXIT
port=$(random_port)
common=(--interface 127.0.0.1 --port "$port" --room "capacity$$" --players "$PLAYERS" --level "$LEVEL"
        --speed "$SPEED" --seconds "$SECONDS_")
spectatorPids=()
if [ "$one" = 1 ]; then
    "$BIN" bot "${common[@]}" --count "$PLAYERS" --spectators "$SPECTATORS" --id 1000 \
        --log "$dir/peer.jsonl" --summary "$dir/summary-0.json" 2>"$dir/err-0" &
    pids+=($!)
else
    for i in $(seq 0 $((PLAYERS - 1))); do
        "$BIN" bot "${common[@]}" --count 1 --id $((0x1000 + i)) \
            --log "$dir/peer-$i.jsonl" --summary "$dir/summary-$i.json" 2>"$dir/err-$i" &
        pids+=($!)
    done
    i=$PLAYERS
    left=$SPECTATORS
    while [ "$left" -gt 0 ]; do
        n=$(( left < per ? left : per ))
        "$BIN" bot "${common[@]}" --count 0 --spectators "$n" --id $((0x1000 + i)) \
            --log "$dir/peer-$i.jsonl" --summary "$dir/summary-$i.json" 2>"$dir/err-$i" &
        pids+=($!)
        spectatorPids+=($!)
        i=$((i + n))
        left=$((left - n))
    done
fi
playerPids=("${pids[@]:0:$PLAYERS}")
killed=()
if [ "$killAt" != 0 ] && [ "${#spectatorPids[@]}" -gt 1 ]; then
    (
        sleep "$killAt"
        half=$(( ${#spectatorPids[@]} / 2 ))
        date +%s%3N > "$dir/killed-at"
        kill -KILL "${spectatorPids[@]:0:$half}" 2>/dev/null || true
    ) &
    killer=$!
    half=$(( ${#spectatorPids[@]} / 2 ))
    killed=("${spectatorPids[@]:0:$half}")
fi
sleep 2
# A killed process ends the sampling: with --kill-half-at, only the players are sampled.
sampled=("${pids[@]}")
if [ "${#killed[@]}" -gt 0 ]; then sampled=("${playerPids[@]}"); fi
python3 scripts/proc-sample.py --interval 10 $((SECONDS_ - 5)) "${sampled[@]}" > "$dir/proc.txt" || true
status=0
for p in "${pids[@]}"; do
    if [[ " ${killed[*]:-} " == *" $p "* ]]; then wait "$p" || true; else wait "$p" || status=1; fi
done
rc=0
python3 - "$dir" "$BIN" "$status" "$killAt" <<'PY' || rc=$?
import glob, json, subprocess, sys
directory, binary, status, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
peers = []
for path in sorted(glob.glob(directory + "/summary-*.json")):
    try:
        peers += json.load(open(path))["bots"]
    except (OSError, ValueError):
        pass  # a killed process's summary may be missing
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
synced = [p.get("syncedAfterMs") for p in watchers]
late = [s for s in synced if s is None or s > 2000]
gap = max((p.get("longestDeliveryGapMs", 0) for p in players), default=0)
# Around the kill: a pause (of 20 ms or more; each player lists its 64 longest) that overlaps
# 0.1 s before to 3 s after it. Shorter pauses are not listed, so "none" reads as under 20 ms.
around = None
if kill_at > 0:
    try:
        killed_at = int(open(directory + "/killed-at").read())
    except (OSError, ValueError):
        killed_at = None
    if killed_at is not None:
        around = 0.0
        for p in players:
            for g in p.get("deliveryGaps", []):
                if g["endedAtMs"] >= killed_at - 100 and g["endedAtMs"] - g["ms"] <= killed_at + 3000:
                    around = max(around, g["ms"])
# The players' messages: when each sender logged its own (at the send) and when the other players
# logged it (their delivery), in µs of the wall clock.
latency_around, latency_elsewhere = [], []
if kill_at > 0 and killed_at is not None:
    sent, heard = {}, []
    for p in players:
        try:
            lines = open(p["log"]).read().splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if "from" not in entry or "seq" not in entry or "at" not in entry:
                continue
            key = (entry["from"], entry["seq"])
            if entry["from"] == p["peer"]:
                sent[key] = entry["at"]
            else:
                heard.append((key, entry["at"]))
    for key, at in heard:
        if key not in sent:
            continue  # not a player's message
        ms = (at - sent[key]) / 1000
        if killed_at * 1000 - 100_000 <= sent[key] <= killed_at * 1000 + 3_000_000:
            latency_around.append(ms)
        else:
            latency_elsewhere.append(ms)
print(f"{len(players)} players + {len(watchers)} spectators: games {games}, "
      f"checkpoints verified per peer min {min(p['checkpointsVerified'] for p in peers)}, "
      f"longest egg wait {worst:.1f} ms, desyncs {desyncs}, logs failing verify {len(bad_logs)}, "
      f"retransmitted {sum(p['retransmitted'] for p in peers)} of {sum(p['sent'] for p in peers)} sent")
if watchers:
    known = sorted(s for s in synced if s is not None)
    print(f"spectators following within: max {known[-1] if known else 0:.0f} ms, median {known[len(known) // 2] if known else 0:.0f} ms; "
          f"later than 2 s or never: {len(late)}; the players heard {max(p.get('watching', 0) for p in players)} watching at the end")
print("players' bytes sent: " + ", ".join(f"{p['peer'][-4:]} {p.get('bytesSent', 0) / 1e6:.2f} MB" for p in players)
      + f"; longest pause between delivered messages in a game: {gap:.1f} ms")
if kill_at > 0:
    print("longest pause between delivered messages around the kill (0.1 s before to 3 s after): "
          + ("unknown (no kill time)" if around is None else f"{around:.1f} ms" if around > 0 else "under 20 ms"))
    def spread(values):
        values = sorted(values)
        return f"{len(values)} deliveries, p50 {values[len(values) // 2]:.2f} ms, p99 {values[int(len(values) * 0.99)]:.2f} ms, max {values[-1]:.2f} ms" if values else "no deliveries"
    print(f"players' messages sent around the kill, one-way latency: {spread(latency_around)}; elsewhere: {spread(latency_elsewhere)}")
for line in bad_logs: print("  " + line)
ok = status == 0 and desyncs == 0 and not bad_logs and worst <= 100 and games > 0 and not late
if kill_at > 0:
    ok = ok and bool(latency_around) and max(latency_around) <= 50
print("capacity: PASS" if ok else "capacity: FAIL")
sys.exit(0 if ok else 1)
PY
tail -n "${#sampled[@]}" "$dir/proc.txt" | awk '{cpu+=$5; rss+=$17} END {printf "processes: total mean CPU %.1f%% of a core, total RSS at the end %.1f MiB\n", cpu, rss}'
tail -n "${#sampled[@]}" "$dir/proc.txt" | head -n "$PLAYERS" | awk '{cpu+=$5; if ($5 > max) max=$5} END {printf "players: mean CPU %.1f%% of a core each, the busiest %.1f%%\n", cpu / NR, max}'
exit $rc
