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
# The manual page is generated from the command definitions by swift-argument-parser's
# generate-manual plugin; the completions by `eggs-tui --generate-completion-script`.
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
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

# 1. The manual page. The plugin builds the package's products in $config and runs
#    generate-manual on each executable that uses ArgumentParser, writing
#    <scratch>/plugins/GenerateManual/outputs/<target>/<target>.6.
bin_dir=$(swift build "${swiftpm_flags[@]}" -c "$config" --show-bin-path)
manual="$(dirname "$(dirname "$bin_dir")")/plugins/GenerateManual/outputs/eggs-tui/eggs-tui.6"
rm -f "$manual"
echo "install: generating the manual page (swift package plugin generate-manual, $config)" >&2
swift package "${swiftpm_flags[@]}" plugin generate-manual \
    --configuration "$config" --section 6 >&2
if [ ! -s "$manual" ]; then
    echo "install.sh: the generate-manual plugin wrote no $manual" >&2
    exit 1
fi

# 2. The binary: release links the Swift runtime in, so it runs without the toolchain. Those
#    link flags change every compile command, so that build has its own scratch folder
#    (.build-static): the plugin's build above and this one both stay incremental.
build_flags=(-c "$config")
if [ "$config" = release ]; then
    build_flags+=(--static-swift-stdlib --scratch-path .build-static)
fi
echo "install: building eggs-tui ($config)" >&2
swift build "${swiftpm_flags[@]}" "${build_flags[@]}" --product eggs-tui >&2
bin="$(swift build "${swiftpm_flags[@]}" "${build_flags[@]}" --show-bin-path)/eggs-tui"
[ -x "$bin" ] || { echo "install.sh: no binary at $bin" >&2; exit 1; }

# 3. Install.
root="$destdir$prefix"
install -d "$root/$bindir_name" "$root/share/man/man6" \
    "$root/share/bash-completion/completions" "$root/share/zsh/site-functions" \
    "$root/share/fish/vendor_completions.d"
install -m 0755 "$bin" "$root/$bindir_name/eggs-tui"
install -m 0644 "$manual" "$root/share/man/man6/eggs-tui.6"
for shell in bash zsh fish; do
    case $shell in
        bash) target="$root/share/bash-completion/completions/eggs-tui" ;;
        zsh) target="$root/share/zsh/site-functions/_eggs-tui" ;;
        fish) target="$root/share/fish/vendor_completions.d/eggs-tui.fish" ;;
    esac
    "$bin" --generate-completion-script "$shell" > "$target.tmp"
    [ -s "$target.tmp" ] || { echo "install.sh: empty $shell completion script" >&2; exit 1; }
    chmod 0644 "$target.tmp"
    mv "$target.tmp" "$target"
done

echo "installed eggs-tui in $root/$bindir_name, its manual in $root/share/man/man6 and bash, zsh and fish completions"
case ":$PATH:" in
    *":$prefix/$bindir_name:"*) ;;
    *) [ -n "$destdir" ] || echo "note: $prefix/$bindir_name is not on your PATH" ;;
esac
