#!/usr/bin/env bash
# The fast tier of the tests, after `swift build --build-tests`: every suite but those tagged
# `.slow` (real-time processes, tmux, namespaces, soaks, hundreds of seeds), which
# EGGS_TESTS=fast skips. Extra arguments go to `swift test` (e.g. --filter Codec).
set -euo pipefail
cd "$(dirname "$0")/.."
EGGS_TESTS=fast exec swift test --skip-build "$@"
