#!/usr/bin/env bash
# The machine's own floor for the no-loss latency row of issue 14: the same traffic as
# `scripts/netbench.sh latency` (4 processes on 127.0.0.1, each multicasting 60 datagrams a second
# to the others, TTL 0) sent and received by a few lines of C with no protocol, so what it
# measures is the kernel and the scheduler of this machine: a PeerNet figure cannot beat it.
# Like the benchmark's senders, each process sends at a random phase within one interval.
#
# WORK spins that many µs of CPU on each delivery: the floor of code that costs that much a delivery.
#
#   scripts/latency-floor.sh [PEERS] [RATE] [SECONDS] [WORK]    # defaults 4, 60, 20, 0
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cc -O2 -o "$dir/latency-floor" scripts/latency-floor.c
timeout --kill-after=5 $(( ${3:-20} + 30 )) "$dir/latency-floor" "${1:-4}" "${2:-60}" "${3:-20}" "$(random_port)" "${4:-0}"
