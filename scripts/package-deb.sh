#!/usr/bin/env bash
# Builds a Debian package of eggs-tui with dpkg-deb: the binary in /usr/games, the manual
# page in section 6 (/usr/share/man/man6/eggs-tui.6.gz) and the bash, zsh and fish
# completions, depending on the ncurses runtime (not the -dev package).
#
#   scripts/package-deb.sh [--debug] [OUTDIR]
#
# Writes OUTDIR/eggs_<version>_<arch>.deb (OUTDIR defaults to .build/deb) and prints its
# path. The files are staged by scripts/install.sh (DESTDIR=stage, PREFIX=/usr, --games),
# which builds the binary (once); this script adds /usr/share/doc/eggs/copyright (DEP-5,
# from LICENSE) and changelog.gz. --debug packages the debug build (quick, for tests: that
# binary needs the Swift toolchain's runtime, which no package provides); the default
# release build links the Swift runtime in, and the Depends line lists the packages that own
# the shared libraries the binary loads (found with ldd and dpkg -S). The Maintainer is
# "$DEBFULLNAME <$DEBEMAIL>" (Debian's variables), by default a placeholder address in the
# reserved .invalid domain. Dates (changelog, manual page, files) come from SOURCE_DATE_EPOCH,
# by default the time of the last commit.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/package-deb.sh [--debug] [OUTDIR]" >&2; exit 2; }
debug=()
outdir=""
while [ $# -gt 0 ]; do
    case "$1" in
        --debug) debug=(--debug) ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "package-deb.sh: unknown option '$1'" >&2; usage ;;
        *) [ -z "$outdir" ] || usage; outdir=$1 ;;
    esac
    shift
done
outdir=${outdir:-.build/deb}
for tool in dpkg-deb dpkg ldd gzip strip; do
    command -v "$tool" >/dev/null 2>&1 || { echo "package-deb.sh: $tool is missing (scripts/setup.sh installs it)" >&2; exit 2; }
done

[ -s LICENSE ] || { echo "package-deb.sh: no LICENSE file" >&2; exit 1; }
maintainer="${DEBFULLNAME:-The eggs developers} <${DEBEMAIL:-eggs@eggs.invalid}>"
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
    SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH

stage=$(mktemp -d "${TMPDIR:-/tmp}/eggs-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
DESTDIR="$stage/root" scripts/install.sh "${debug[@]}" --games /usr >&2
root="$stage/root"
bin="$root/usr/games/eggs-tui"

# Release packages ship a stripped binary, compressed with xz; the large debug binary is
# kept whole (for its symbols) and compressed quickly with gzip.
if [ ${#debug[@]} -eq 0 ]; then
    strip --strip-unneeded "$bin"
    compress=(-Zxz)
else
    compress=(-Zgzip -z1)
fi

# Debian keeps manual pages gzipped, and completions where each shell looks for them.
gzip -9n "$root/usr/share/man/man6/eggs-tui.6"

# Depends: the packages owning the shared libraries the binary loads. Libraries no package
# owns (the toolchain's Swift runtime in a --debug build) are named on stderr and left out.
depends=()
while read -r lib; do
    owner=""
    for candidate in "$lib" "$(readlink -f "$lib")" "/usr$lib" "${lib#/usr}"; do
        owner=$(dpkg -S "$candidate" 2>/dev/null | head -n 1 | cut -d: -f1) && [ -n "$owner" ] && break
    done
    if [ -z "$owner" ]; then
        echo "package-deb.sh: no package owns $lib; not in Depends" >&2
        continue
    fi
    case " ${depends[*]} " in *" $owner "*) ;; *) depends+=("$owner") ;; esac
done < <(ldd "$bin" | awk '/=> \// { print $3 } /^\t\// { print $1 }' | sort -u)
case " ${depends[*]} " in
    *" libncursesw6 "*) ;;
    *) echo "package-deb.sh: the binary does not load libncursesw (ldd found: ${depends[*]})" >&2; exit 1 ;;
esac
for dep in "${depends[@]}"; do
    case "$dep" in *-dev) echo "package-deb.sh: refusing a dependency on $dep" >&2; exit 1 ;; esac
done
depends_line=$(printf '%s\n' "${depends[@]}" | sort | paste -sd, | sed 's/,/, /g')

# `eggs-tui --version` prints "eggs-tui X.Y.Z (protocol N, rules …)": the package version is X.Y.Z.
said=$("$bin" --version | head -n 1)
version=$(printf '%s\n' "$said" | sed -n 's/^eggs-tui \([0-9][0-9.]*\)\( .*\)\{0,1\}$/\1/p')
if [ -z "$version" ]; then
    echo "package-deb.sh: eggs-tui --version printed '$said'" >&2; exit 1
fi
arch=$(dpkg --print-architecture)

# /usr/share/doc/eggs: the copyright file in Debian's machine-readable format (DEP-5), its
# notice and license text taken from LICENSE (the MIT license, which DEP-5 calls Expat), and
# the changelog. The version has no Debian revision (a native package): changelog.gz.
doc="$root/usr/share/doc/eggs"
install -d "$doc"
notice=$(sed -n 's/^Copyright (c) //p' LICENSE | head -n 1)
[ -n "$notice" ] || { echo "package-deb.sh: LICENSE has no 'Copyright (c)' line" >&2; exit 1; }
{
    printf '%s\n' \
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" \
        "Upstream-Name: eggs" \
        "" \
        "Files: *" \
        "Copyright: $notice" \
        "License: Expat" \
        "Comment: The MIT License: the LICENSE file of the eggs repository." \
        "" \
        "License: Expat"
    # The license text: LICENSE from its first paragraph on, indented by one space, blank
    # lines written as " ." (DEP-5).
    awk 'started || /^Permission/ { started = 1; print ($0 == "" ? " ." : " " $0) }' LICENSE
} > "$doc/copyright"
commit=$(git rev-parse --short HEAD 2>/dev/null || true)
{
    printf 'eggs (%s) unstable; urgency=medium\n\n' "$version"
    printf '  * Built by scripts/package-deb.sh from the eggs repository%s.\n\n' "${commit:+ at $commit}"
    printf ' -- %s  %s\n' "$maintainer" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/copyright" "$doc/changelog.gz"

size_kib=$(du -sk "$root" | cut -f1)
install -d "$root/DEBIAN"
# DEBIAN/md5sums, as dh_md5sums writes it (for dpkg --verify and debsums).
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums"
cat > "$root/DEBIAN/control" <<EOF
Package: eggs
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size_kib
Depends: $depends_line
Section: games
Priority: optional
Description: falling-egg puzzle game for the terminal, played peer to peer
 Two players on two machines start eggs-tui, find each other by UDP multicast
 (or unicast --peer addresses) and play, each seeing its own grid and a live
 mirror of the other's. There is no server. Includes headless bots, replays of
 any peer's message log and asciicast recordings of matches.
EOF

mkdir -p "$outdir"
deb="$outdir/eggs_${version}_${arch}.deb"
dpkg-deb --root-owner-group "${compress[@]}" --build "$root" "$deb" >&2
echo "$deb"
