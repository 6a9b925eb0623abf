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
    last_time = {p: start for p in pids}
    rss = {p: [rss_mib(p)] for p in pids}
    ended = False
    while not ended and time.monotonic() - start < seconds:
        time.sleep(min(interval, max(0.0, seconds - (time.monotonic() - start))))
        elapsed = time.monotonic() - start
        parts = []
        for p in pids:
            try:
                now = cpu_seconds(p)
                size = rss_mib(p)
            except (FileNotFoundError, ProcessLookupError):
                print(f"proc-sample: process {p} ended; stopping at {elapsed:.0f} s", file=sys.stderr)
                ended = True
                break
            parts.append(f"{p}: {100 * (now - last_cpu[p]) / interval:.1f}% {size:.1f} MiB")
            rss[p].append(size)
            last_cpu[p] = now
            last_time[p] = time.monotonic()
        if not ended:
            print(f"{elapsed:7.1f} s  " + "  ".join(parts), flush=True)
    for p in pids:
        elapsed = max(1e-9, last_time[p] - start)
        mean = 100 * (last_cpu[p] - first_cpu[p]) / elapsed
        print(f"pid {p}: mean CPU {mean:.2f}% of a core over {elapsed:.0f} s; RSS first {rss[p][0]:.1f} MiB, "
              f"last {rss[p][-1]:.1f} MiB, max {max(rss[p]):.1f} MiB")


main()
