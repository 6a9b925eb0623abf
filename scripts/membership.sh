#!/usr/bin/env bash
# Membership timings on 127.0.0.1 (issue 10), release build, bot processes with fixed IDs:
#
#   scripts/membership.sh [SECONDS_OF_STORM]
#
# 1. graceful leave (SIGTERM) → the other player installs a view without it (2 players, a
#    match in progress), the highest and the lowest ID leaving: goal ≤ 1 s;
# 2. SIGKILL → the same: goal ≤ suspect timeout (3 s) + 1 s (the lowest ID surviving gives its
#    view up at once and founds one of its own: the rule of two);
#    1 and 2 in both start orders (the lowest or the highest ID started first);
# 3. SIGKILL and an immediate restart under the same ID → the restarted peer in a view with
#    the other again (back in the lobby): goal ≤ 5 s;
# 4. the longest egg wait of a 2-player match while 1,000 fake IDs send heartbeats (a small
#    forger below: well-formed heartbeats with a valid CRC, or with a passphrase a trailer that
#    cannot be right), without and with a passphrase: goal ≤ 100 ms with one.
# Multicast stays on 127.0.0.1 (TTL 0). Every process it starts is ended on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
BIN=${EGGS_TUI:-.build/release/eggs-tui}
release_binary "$BIN" eggs-tui
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$BIN" "$dir" "$(random_port)" "${1:-30}" <<'PY'
import json, os, signal, socket, struct, subprocess, sys, threading, time, zlib

binary, directory, port, storm_seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
GROUP = "239.255.77.77"
children = []

def now_us():
    return int(time.time() * 1e6)

class Bot:
    def __init__(self, name, ident, room, life=1, extra=()):
        self.id = "%016x" % ident
        self.log = f"{directory}/{name}-{self.id}-{life}.jsonl"
        self.summary = f"{directory}/{name}-{self.id}-{life}.json"
        args = [binary, "bot", "--interface", "127.0.0.1", "--port", str(port), "--room", room, "--players", "2",
                "--speed", "9", "--best-of", "7", "--seconds", "300", "--id", self.id, "--log", self.log,
                "--summary", self.summary, *extra]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(self.log + ".err", "w"))
        children.append(self.proc)

    def report(self):
        try:
            return json.load(open(self.summary))["bots"][0]
        except Exception:
            return {}

    def views(self):
        out = []
        try:
            for line in open(self.log):
                try:
                    j = json.loads(line)
                except ValueError:
                    continue
                if "view" in j:
                    out.append((j["at"], j["view"]["members"]))
        except FileNotFoundError:
            pass
        return out

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

def wait_until(predicate, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    return None

def playing(*bots):
    return all(b.report().get("checkpointsVerified", 0) >= 3 for b in bots)

def first_view(bot, since_us, test):
    for at, members in bot.views():
        if at >= since_us and test(members):
            return at
    return None

def fmt(us):
    return "never (20 s)" if us is None else "%.0f ms" % (us / 1000)

room_counter = [0]
def pair(name, high_first=False):
    room_counter[0] += 1
    room = f"membership-{os.getpid()}-{room_counter[0]}"
    if high_first:
        high = Bot(name, 0x2000, room)
        time.sleep(0.3)
        low = Bot(name, 0x1000, room)
    else:
        low, high = Bot(name, 0x1000, room), Bot(name, 0x2000, room)
    if not wait_until(lambda: playing(low, high), 40):
        raise SystemExit(f"{name}: the match did not start")
    return low, high, room

def departure(kind, sig, leaver_high, high_first=False):
    low, high, _ = pair(f"{kind}-{'high' if leaver_high else 'low'}{'-hf' if high_first else ''}", high_first)
    leaver, other = (high, low) if leaver_high else (low, high)
    t0 = now_us()
    leaver.proc.send_signal(sig)
    at = wait_until(lambda: first_view(other, t0, lambda m: leaver.id not in m), 20)
    other.stop()
    leaver.stop()
    return None if at is None else at - t0

def restart(victim_high):
    low, high, room = pair(f"restart-{'high' if victim_high else 'low'}")
    victim, other = (high, low) if victim_high else (low, high)
    victim.proc.kill()
    victim.proc.wait()
    t0 = now_us()
    reborn = Bot(f"restart-{'high' if victim_high else 'low'}", int(victim.id, 16), room, life=2)
    at = wait_until(lambda: first_view(reborn, t0, lambda m: other.id in m and reborn.id in m), 20)
    for b in (reborn, other):
        b.stop()
    return None if at is None else at - t0

def fnv1a(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h

def forge(room, sender, incarnation, packet, passphrase):
    header = b"EG" + struct.pack(">HBBQQQQ", 1, 1 if passphrase else 0, 1, fnv1a(room.encode()), sender, incarnation, packet)
    body = struct.pack(">BQQQB", 0, 0, 0, 0, 0)  # heartbeat: joining, no view, nothing sent or delivered
    datagram = header + body
    if passphrase:
        return datagram + os.urandom(16)  # the forger does not know the passphrase
    return datagram + struct.pack(">I", zlib.crc32(datagram) & 0xFFFFFFFF)

def storm(room, passphrase, stop, sent):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 0)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
    ids = [0x7000_0000_0000_0000 + i for i in range(1000)]
    packet = 1
    while not stop.is_set():
        started = time.time()
        for fake in ids:  # every fake ID once per 250 ms, like a peer's heartbeat
            try:
                s.sendto(forge(room, fake, 1, packet, passphrase), (GROUP, port))
                sent[0] += 1
            except OSError:
                pass
        packet += 1
        time.sleep(max(0, 0.25 - (time.time() - started)))

def egg_wait(passphrase, before_start):
    name = ("storm-pass" if passphrase else "storm-open") + ("-early" if before_start else "")
    room_counter[0] += 1
    room = f"membership-{os.getpid()}-{room_counter[0]}"
    extra = ("--passphrase", passphrase) if passphrase else ()
    stop, sent = threading.Event(), [0]
    forger = threading.Thread(target=storm, args=(room, passphrase, stop, sent), daemon=True)
    if before_start:
        forger.start()
        time.sleep(1)
    low, high = Bot(name, 0x1000, room, extra=extra), Bot(name, 0x2000, room, extra=extra)
    started = wait_until(lambda: playing(low, high), 30)
    if not before_start:
        forger.start()
    before = sum(b.report().get("checkpointsVerified", 0) for b in (low, high))
    time.sleep(storm_seconds)
    reports = [b.report() for b in (low, high)]
    stop.set()
    forger.join()
    for b in (low, high):
        b.stop()
    # A wait still in progress counts too (a stalled match never ends its wait).
    waits = [r.get("maxEggWaitMs", -1) + r.get("eggWaitNowMs", 0) for r in reports]
    checks = sum(r.get("checkpointsVerified", 0) for r in reports) - before
    dropped = sum(r.get("droppedInvalid", 0) for r in reports)
    return started is not None, max(waits), checks, sent[0], dropped

try:
    print("membership timings on 127.0.0.1, 2 players (IDs 1000 and 2000), a match in progress:")
    for high_first in (False, True):
        started = "the highest ID started first" if high_first else "the lowest ID started first"
        for high in (True, False):
            who = "highest" if high else "lowest"
            print(f"  graceful leave of the {who} ID ({started}) → the other's view without it: {fmt(departure('leave', signal.SIGTERM, high, high_first))} (goal ≤ 1000 ms)")
    for high_first in (False, True):
        started = "the highest ID started first" if high_first else "the lowest ID started first"
        for high in (True, False):
            who = "highest" if high else "lowest"
            print(f"  SIGKILL of the {who} ID ({started}) → the other's view without it: {fmt(departure('kill', signal.SIGKILL, high, high_first))} (goal ≤ 4000 ms)")
    for high in (True, False):
        who = "highest" if high else "lowest"
        print(f"  SIGKILL and restart of the {who} ID → back in a view with the other: {fmt(restart(high))} (goal ≤ 5000 ms)")
    for before_start in (False, True):
        for passphrase in (None, "membership"):
            ok, wait, checks, sent, dropped = egg_wait(passphrase, before_start)
            label = "with a passphrase" if passphrase else "without a passphrase"
            when = "from before the start" if before_start else "once the match runs"
            played = "" if ok else " (the match never started: 30 s)"
            print(f"  1,000 fake IDs sending heartbeats {when} ({sent} datagrams), {label}: longest egg wait {wait:.1f} ms, "
                  f"{checks} checkpoints verified in the {storm_seconds:.0f} s of storm, {dropped} datagrams dropped as invalid{played} (goal ≤ 100 ms)")
finally:
    for p in children:
        if p.poll() is None:
            p.kill()
            p.wait()
PY
