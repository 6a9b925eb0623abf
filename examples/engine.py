#!/usr/bin/env python3
"""A tiny eggs bot engine (protocol: docs/formats.md, "The engine protocol").

It drops each pair upright on the lowest column. With --record FILE it also appends its process
ID (`pid N`) and then each answer it gives to FILE, one line each.
"""
import os
import sys

record = open(sys.argv[sys.argv.index("--record") + 1], "a") if "--record" in sys.argv else None
if record:
    record.write(f"pid {os.getpid()}\n")
    record.flush()
for line in sys.stdin:
    words = line.split()
    if words[:1] == ["eggs-engine"]:
        print("ready lowest-column", flush=True)
    elif words[:1] == ["state"]:
        seq, rows = words[1], words[2].split("/")
        heights = [sum(row[c] != "." for row in rows) for c in range(6)]
        column = min(range(6), key=lambda c: (heights[c], abs(c - 2)))
        answer = f"place {seq} {column} up"
        print(answer, flush=True)
        if record:
            record.write(answer + "\n")
            record.flush()
