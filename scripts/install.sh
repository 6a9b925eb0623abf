#!/usr/bin/env bash
# Builds eggs-tui and installs it with its manual page eggs-tui(6) and its bash, zsh and
# fish completions, like any Linux game.
#
#   scripts/install.sh [--debug] [--games] [PREFIX]
#
# PREFIX defaults to ~/.local, or /usr/local when run as root. DESTDIR (environment) stages
# the files under another root, as packagers do. --debug builds the debug configuration
# (quick, for tests; the binary then needs the Swift toolchain's runtime) instead of a
# release build with the Swift runtime linked in. --games puts the binary in PREFIX/games
# (Debian's place for games) instead of PREFIX/bin. EGGS_SWIFTPM_FLAGS adds flags to every
# swift call (the tests pass --ignore-lock, since they run inside `swift test`).
#
# The binary is built once. The manual page is generated from it by swift-argument-parser's
# generate-manual tool (the one its `generate-manual` plugin runs; the plugin itself would build
# every product of the package again first), the completions by
# `eggs-tui --generate-completion-script`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

usage() { echo "usage: scripts/install.sh [--debug] [--games] [PREFIX]" >&2; exit 2; }

config=release
bindir_name=bin
prefix=""
while [ $# -gt 0 ]; do
    case "$1" in
        --debug) config=debug ;;
        --games) bindir_name=games ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "install.sh: unknown option '$1'" >&2; usage ;;
        *) [ -z "$prefix" ] || usage; prefix=$1 ;;
    esac
    shift
done
if [ -z "$prefix" ]; then
    if [ "$(id -u)" -eq 0 ]; then prefix=/usr/local; else prefix="$HOME/.local"; fi
fi
case "$prefix" in
    /*) ;;
    *) echo "install.sh: PREFIX must be an absolute path, not '$prefix'" >&2; exit 2 ;;
esac
destdir=${DESTDIR:-}
read -r -a swiftpm_flags <<< "${EGGS_SWIFTPM_FLAGS:-}"

# 1. The binary: release links the Swift runtime in, so it runs without the toolchain. Those
#    link flags change every compile command, so that build has its own scratch folder
#    (.build-static), and the development builds in .build stay incremental.
build_flags=(-c "$config")
if [ "$config" = release ]; then
    build_flags+=(--static-swift-stdlib --scratch-path .build-static)
fi
echo "install: building eggs-tui ($config)" >&2
swift build "${swiftpm_flags[@]}" "${build_flags[@]}" --product eggs-tui >&2
bin_dir=$(swift build "${swiftpm_flags[@]}" "${build_flags[@]}" --show-bin-path)
bin="$bin_dir/eggs-tui"
[ -x "$bin" ] || { echo "install.sh: no binary at $bin" >&2; exit 1; }

# 2. The manual page: generate-manual (a product of the swift-argument-parser dependency,
#    built with the same flags in the same folder, so it reuses the ArgumentParser objects just
#    built) reads `eggs-tui --experimental-dump-help` and writes eggs-tui.6. SOURCE_DATE_EPOCH,
#    when set, dates the page (reproducible builds); otherwise it carries today's date.
echo "install: generating the manual page (swift-argument-parser's generate-manual, $config)" >&2
swift build "${swiftpm_flags[@]}" "${build_flags[@]}" --product generate-manual >&2
work=$(mktemp -d "${TMPDIR:-/tmp}/eggs-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
date_flags=()
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
    date_flags=(--date "$(date -u -d "@$SOURCE_DATE_EPOCH" +%F)")
fi
"$bin_dir/generate-manual" "$bin" --section 6 "${date_flags[@]}" --output-directory "$work" >&2
manual="$work/eggs-tui.6"
if [ ! -s "$manual" ]; then
    echo "install.sh: generate-manual wrote no $manual" >&2
    exit 1
fi
# generate-manual copies the blank lines of the commands' discussions into the mdoc source,
# where groff warns "empty input line" (lintian's groff-message); .Pp is mdoc's paragraph break.
sed -i 's/^[[:space:]]*$/.Pp/' "$manual"

# 3. Install.
root="$destdir$prefix"
install -d "$root/$bindir_name" "$root/share/man/man6" \
    "$root/share/bash-completion/completions" "$root/share/zsh/site-functions" \
    "$root/share/fish/vendor_completions.d"
install -m 0755 "$bin" "$root/$bindir_name/eggs-tui"
install -m 0644 "$manual" "$root/share/man/man6/eggs-tui.6"
# The bash script is sourced, not run: its "#!/bin/bash" line goes (lintian's
# bash-completion-with-hashbang).
for shell in bash zsh fish; do
    filter=(cat)
    case $shell in
        bash) target="$root/share/bash-completion/completions/eggs-tui"; filter=(sed '1{/^#!/d}') ;;
        zsh) target="$root/share/zsh/site-functions/_eggs-tui" ;;
        fish) target="$root/share/fish/vendor_completions.d/eggs-tui.fish" ;;
    esac
    "$bin" --generate-completion-script "$shell" | "${filter[@]}" > "$target.tmp"
    [ -s "$target.tmp" ] || { echo "install.sh: empty $shell completion script" >&2; exit 1; }
    chmod 0644 "$target.tmp"
    mv "$target.tmp" "$target"
done

echo "installed eggs-tui in $root/$bindir_name, its manual in $root/share/man/man6 and bash, zsh and fish completions"
case ":$PATH:" in
    *":$prefix/$bindir_name:"*) ;;
    *) [ -n "$destdir" ] || echo "note: $prefix/$bindir_name is not on your PATH" ;;
esac
