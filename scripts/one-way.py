#!/usr/bin/env python3
"""One-way delivery latency read from message logs of peers on one machine (issue 14).

    scripts/one-way.py LOG...

Every log line of a delivered message carries its sender and sequence number and the
wall-clock microsecond at which this peer delivered it ("at"); a peer logs its own messages as
it sends them. All peers share the machine's clock, so a message's one-way latency to a peer is
that peer's "at" minus the sender's own "at". Prints the count, the nearest-rank percentiles and
the share of messages later than 10 ms; exit 1 when no message was seen on two logs.
"""
import json
import math
import sys


def read(path):
    peer, at = None, {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                value = json.loads(line)
            except ValueError:
                print(f"{path}:{number}: not JSON; the rest of this log is skipped", file=sys.stderr)
                break
            if number == 1:
                peer = value.get("peer")
                continue
            if "from" in value and "seq" in value and "at" in value:
                at[(value["from"], value["seq"])] = value["at"]
    if peer is None:
        raise SystemExit(f"{path}: no header line naming the peer")
    return peer, at


def rank(sorted_values, p):
    return sorted_values[max(0, math.ceil(p / 100 * len(sorted_values)) - 1)]


def main(paths):
    logs = [read(p) for p in paths]
    sent = {}
    for peer, at in logs:
        for (sender, seq), t in at.items():
            if sender == peer:
                sent[(sender, seq)] = t
    latencies = []
    for peer, at in logs:
        for key, t in at.items():
            if key[0] != peer and key in sent:
                latencies.append(max(0, t - sent[key]))
    if not latencies:
        print("no message was seen by its sender and another peer", file=sys.stderr)
        return 1
    latencies.sort()
    late = sum(1 for v in latencies if v > 10_000)
    print(f"one-way deliveries: {len(latencies)}  p50 {rank(latencies, 50) / 1000:.3f} ms  "
          f"p90 {rank(latencies, 90) / 1000:.3f} ms  p99 {rank(latencies, 99) / 1000:.3f} ms  "
          f"p99.9 {rank(latencies, 99.9) / 1000:.3f} ms  max {latencies[-1] / 1000:.3f} ms  "
          f"over 10 ms {100 * late / len(latencies):.2f} %")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
