#!/usr/bin/env bash
# Measurements between namespaced hosts on a private LAN, with loss (issue 14).
#
#   scripts/lan-bench.sh [LOSS_PERCENT] [SECONDS] [HOSTS]            # a bot match (20 %, 60 s, 3)
#   scripts/lan-bench.sh netbench [LOSS_PERCENT] [SECONDS] [HOSTS]   # PeerNet alone (20 %, 20 s, 4)
#
# Inside a private user, network and mount namespace this script makes HOSTS network namespaces
# (10.77.0.1, .2, … on one bridge; see NOTES.md), each dropping LOSS_PERCENT % of the UDP
# datagrams coming in to the room's port (nftables). Multicast goes across the bridge with TTL
# 1; nothing leaves the namespaces, and all of it dies with the script.
#
# A bot match: one `eggs-tui bot` per host, a HOSTS-player match played for SECONDS. It prints
# each bot's summary, the one-way delivery latency read from the message logs
# (scripts/one-way.py), the datagrams and bytes the hosts sent (nftables counters on their
# output), and bytes on the wire per delivered message. EGGS_TUI picks the binary (default: the
# release build); KEEP=DIR keeps the logs there.
#
# netbench: `eggs-netbench latency` with one peer per host, every peer sending 60 messages a
# second (game traffic), as `scripts/netbench.sh latency` does on 127.0.0.1. BIN picks the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=match
if [ "${1:-}" = netbench ]; then MODE=netbench; shift; fi
LOSS=${1:-20}
if [ $MODE = netbench ]; then SECONDS_=${2:-20}; HOSTS=${3:-4}; else SECONDS_=${2:-60}; HOSTS=${3:-3}; fi
. scripts/common.sh
if [ $MODE = netbench ]; then
    BIN=${BIN:-.build/release/eggs-netbench}
    release_binary "$BIN" eggs-netbench
else
    BIN=${EGGS_TUI:-.build/release/eggs-tui}
    release_binary "$BIN" eggs-tui
fi
BIN=$(realpath "$BIN")
[[ $LOSS =~ ^[0-9]+$ ]] && [ "$LOSS" -le 99 ] || { echo "LOSS_PERCENT must be 0 to 99" >&2; exit 2; }
[[ $SECONDS_ =~ ^[0-9]+$ ]] && [ "$SECONDS_" -ge 5 ] || { echo "SECONDS must be 5 or more" >&2; exit 2; }
[[ $HOSTS =~ ^[0-9]+$ ]] && [ "$HOSTS" -ge 2 ] && [ "$HOSTS" -le 8 ] || { echo "HOSTS must be 2 to 8" >&2; exit 2; }
command -v nft >/dev/null || { echo "nft is missing (apt-get install nftables)" >&2; exit 2; }
dir=${KEEP:-$(mktemp -d)}
mkdir -p "$dir"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$dir"' EXIT
port=$(random_port)

timeout --kill-after=5 $((SECONDS_ + 90)) unshare -rnm sh -c '
    set -e
    bin=$1 dir=$2 port=$3 loss=$4 seconds=$5 hosts=$6
    pids=""
    trap "kill \$pids 2>/dev/null || true" EXIT
    mount -t tmpfs tmpfs /run
    mkdir -p /run/netns
    ip link set lo up
    ip link add br0 type bridge
    ip link set br0 up
    for i in $(seq 1 "$hosts"); do
        h=h$i
        ip netns add $h
        ip link add veth-$h type veth peer name eth0 netns $h
        ip link set veth-$h master br0
        ip link set veth-$h up
        ip -n $h addr add 10.77.0.$i/24 dev eth0
        ip -n $h link set eth0 up
        ip -n $h link set lo up
        ip -n $h route add 224.0.0.0/4 dev eth0
        ip netns exec $h nft add table inet lan
        ip netns exec $h nft add chain inet lan out "{ type filter hook output priority 0; }"
        ip netns exec $h nft add rule inet lan out udp dport "$port" counter
        ip netns exec $h nft add chain inet lan in "{ type filter hook input priority 0; }"
        if [ "$loss" -gt 0 ]; then
            ip netns exec $h nft add rule inet lan in udp dport "$port" numgen random mod 100 "<" "$loss" drop
        fi
    done
    if [ "$7" = netbench ]; then
        "$bin" latency --peers "$hosts" --senders "$hosts" --rate 60 --seconds "$seconds" --port "$port" \
            --netns-prefix h --netns-subnet 10.77.0 --group 239.255.77.91
        exit $?
    fi
    for i in $(seq 1 "$hosts"); do
        ip netns exec h$i "$bin" bot --interface 10.77.0.$i --port "$port" --room lan-bench --id "1${i}00" \
            --players "$hosts" --games 99 --seconds "$seconds" \
            --log "$dir/h$i.jsonl" --summary "$dir/h$i.json" 2>"$dir/h$i.err" >"$dir/h$i.out" &
        pids="$pids $!"
    done
    status=0
    for pid in $pids; do wait "$pid" || status=1; done
    pids=""
    for i in $(seq 1 "$hosts"); do
        ip netns exec h$i nft list chain inet lan out | sed -n "s/.*counter packets \([0-9]*\) bytes \([0-9]*\).*/sent h$i \1 \2/p"
    done
    exit $status
' sh "$BIN" "$dir" "$port" "$LOSS" "$SECONDS_" "$HOSTS" "$MODE" >"$dir/counters.txt" || {
    [ $MODE = netbench ] && { cat "$dir/counters.txt"; exit 1; }
    echo "the match failed; bot errors:" >&2
    for f in "$dir"/h*.err; do echo "--- $f" >&2; tail -n 5 "$f" >&2; done
    exit 1
}
echo "lan: $HOSTS hosts on a bridge, $LOSS % of incoming UDP dropped on each, $SECONDS_ s"
if [ $MODE = netbench ]; then
    cat "$dir/counters.txt"
    exit 0
fi
python3 - "$dir"/h*.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    for bot in json.load(open(path))["bots"]:
        print(f"{bot['peer'][-4:]}: games {bot['games']}, checkpoints verified {bot['checkpointsVerified']}, "
              f"desyncs {bot['desyncs']}, sent {bot['sent']}, retransmitted {bot['retransmitted']}, "
              f"delivered {bot['delivered']}, views {bot['views']}")
PY
python3 scripts/one-way.py "$dir"/h*.jsonl
awk '/^sent/ { d += $3; b += $4 } END { printf "datagrams sent %d, bytes sent %d (IP packets, all hosts)\n", d, b }' "$dir/counters.txt"
deliveries=$(python3 scripts/one-way.py "$dir"/h*.jsonl | sed -n 's/^one-way deliveries: \([0-9]*\).*/\1/p')
awk -v n="$deliveries" '/^sent/ { b += $4 } END { if (n > 0) printf "bytes on the wire per delivered message: %.1f\n", b / n }' "$dir/counters.txt"
