#!/usr/bin/env bash
# PeerNet measurements (issue 3). Multicast stays on 127.0.0.1 (TTL 0); loss is injected by
# nftables inside a private network namespace that this script creates and that dies with it.
#
#   scripts/netbench.sh latency            # game traffic: 4 peers each sending 60 msg/s for 20 s, no loss
#   scripts/netbench.sh latency-loss [20]  # the same inside a namespace dropping 20 % of UDP
#                                          # (one sender at 1,000 msg/s, as before issue 14:
#                                          #  ... latency --peers 2 --senders 1 --rate 1000 --seconds 10)
#   scripts/netbench.sh throughput         # 4 peer processes, 64-byte messages, flat out
#   scripts/netbench.sh sim                # recovery time in the simulator, 0/10/20 % loss
#   scripts/netbench.sh all
# Extra arguments after the section go to eggs-netbench (e.g. --nack-delay-ms 2 --window 2048).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
BIN=${BIN:-.build/release/eggs-netbench}
release_binary "$BIN" eggs-netbench

# in_lossy_namespace LOSS_PERCENT PORT COMMAND...: runs COMMAND in a new network namespace
# whose only interface is lo, where LOSS_PERCENT % of incoming UDP to PORT is dropped.
in_lossy_namespace() {
    local loss=$1 port=$2
    shift 2
    timeout --kill-after=5 300 unshare -rn sh -c '
        set -e
        ip link set lo up
        ip link set lo multicast on
        nft add table inet chaos
        nft add chain inet chaos in "{ type filter hook input priority 0; }"
        nft add rule inet chaos in udp dport "$1" numgen random mod 100 "<" "$2" drop
        shift 2
        exec "$@"' sh "$port" "$loss" "$@"
}

section=${1:-all}
[ $# -gt 0 ] && shift
case "$section" in
latency)
    timeout --kill-after=5 120 "$BIN" latency --peers 4 --senders 4 --rate 60 --seconds 20 --port "$(random_port)" "$@" ;;
latency-loss)
    loss=20
    if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then loss=$1; shift; fi
    p=$(random_port)
    in_lossy_namespace "$loss" "$p" "$BIN" latency --peers 4 --senders 4 --rate 60 --seconds 20 --port "$p" --slow-threshold-us 1000 "$@" ;;
throughput)
    timeout --kill-after=5 120 "$BIN" throughput --peers 4 --seconds 10 --payload 64 --port "$(random_port)" "$@" ;;
sim)
    timeout --kill-after=5 600 "$BIN" sim-recovery --peers 4 --rate 250 --seconds 20 --loss 0 0.1 0.2 "$@" ;;
all)
    "$0" latency "$@"
    "$0" latency-loss 20 "$@"
    "$0" throughput "$@"
    "$0" sim "$@" ;;
*)
    echo "usage: $0 latency|latency-loss [PERCENT]|throughput|sim|all [eggs-netbench options]" >&2
    exit 2 ;;
esac
