#!/usr/bin/env python3
"""CPU and memory of running processes, from /proc (issues 5 and 6).

    scripts/proc-sample.py [--interval S] SECONDS PID...

Prints one line per sample (elapsed s, CPU % of one core over the interval, RSS MiB per PID)
and a last line with the mean CPU % and the first/last/max RSS of each PID.
"""
import argparse
import os
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main():
    parser = argparse.ArgumentParser(description="CPU and memory of running processes")
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between samples")
    parser.add_argument("seconds", type=float)
    parser.add_argument("pids", type=int, nargs="+")
    options = parser.parse_args()
    seconds, interval, pids = options.seconds, options.interval, options.pids
    start = time.monotonic()
    last_cpu = {p: cpu_seconds(p) for p in pids}
    first_cpu = dict(last_cpu)
    rss = {p: [rss_mib(p)] for p in pids}
    while time.monotonic() - start < seconds:
        time.sleep(interval)
        elapsed = time.monotonic() - start
        parts = []
        for p in pids:
            try:
                now = cpu_seconds(p)
            except FileNotFoundError:
                sys.exit(f"proc-sample: process {p} ended")
            parts.append(f"{p}: {100 * (now - last_cpu[p]) / interval:.1f}% {rss_mib(p):.1f} MiB")
            rss[p].append(rss_mib(p))
            last_cpu[p] = now
        print(f"{elapsed:7.1f} s  " + "  ".join(parts), flush=True)
    elapsed = time.monotonic() - start
    for p in pids:
        mean = 100 * (last_cpu[p] - first_cpu[p]) / elapsed
        print(f"pid {p}: mean CPU {mean:.2f}% of a core over {elapsed:.0f} s; RSS first {rss[p][0]:.1f} MiB, "
              f"last {rss[p][-1]:.1f} MiB, max {max(rss[p]):.1f} MiB")


main()
