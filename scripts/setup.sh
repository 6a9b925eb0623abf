#!/usr/bin/env bash
# Installs the system packages eggs needs on Debian/Ubuntu when they are missing:
# libncurses-dev (the terminal UI), libsqlite3-dev (the match history, through GRDB), tmux (end-to-end UI tests), nftables and
# iproute2 (lossy-network tests inside private namespaces), man-db (the manual page
# test) and, from the Python package index, asciinema (the --cast recording test).
set -euo pipefail
need=()
dpkg -s libncurses-dev >/dev/null 2>&1 || need+=(libncurses-dev)
dpkg -s libsqlite3-dev >/dev/null 2>&1 || need+=(libsqlite3-dev)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
command -v nft >/dev/null 2>&1 || need+=(nftables)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v man >/dev/null 2>&1 || need+=(man-db)
command -v dpkg-deb >/dev/null 2>&1 || need+=(dpkg)
if [ "${#need[@]}" -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v asciinema >/dev/null 2>&1; then
  echo "setup: installing asciinema 2.4.0 with pip" >&2
  python3 -m pip install --quiet --root-user-action=ignore 'asciinema==2.4.0' >/dev/null
fi
