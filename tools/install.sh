#!/bin/sh
# Install cudaenv from a release, without root:
#   curl -LsSf https://BASE/install.sh | sh
#   curl -LsSf https://BASE/install.sh | sh -s -- --version 0.1.0 --prefix ~/opt
# Downloads BASE/VER/cudaenv-VER-linux-ARCH.tar.gz with BASE/VER/SHA256SUMS and its
# signature SHA256SUMS.sig, checks the signature (openssl, against the release key
# below) and the checksum, and installs into PREFIX (~/.local; /usr/local as root):
#   PREFIX/lib/cudaenv/releases/VER/      the release's tree
#   PREFIX/lib/cudaenv/current            -> releases/VER (switched in one rename)
#   PREFIX/bin/cudaenv                    -> ../lib/cudaenv/current/bin/cudaenv
# Running it again upgrades in place (the previous release is kept for a rollback:
# ln -sfn releases/OLD PREFIX/lib/cudaenv/current).  `cudaenv self update` does the same.
# A bad checksum or signature: exit 5, nothing installed; any other failure: exit 1 (2: usage).
# Environment: CUDAENV_INSTALL_BASE (a mirror of the release server), CUDAENV_INSTALL_VERSION.
set -eu
RELEASE_BASE_DEFAULT=https://github.com/cudaenv/cudaenv/releases/download
# The public half of the release key (ed25519; make dist SIGN_KEY= fills it in).
# BEGIN RELEASE KEY
RELEASE_KEY=
# END RELEASE KEY

say() { [ "$quiet" = 1 ] || printf 'cudaenv-install: %s\n' "$*"; }
die() { printf 'cudaenv-install: %s\n' "$*" >&2; exit 1; }
bad() { printf 'cudaenv-install: %s\n' "$*" >&2; exit 5; }   # integrity: a checksum or signature
usage() {
    cat <<USAGE
usage: install.sh [--prefix DIR] [--version VER] [--base URL] [-q]
  --prefix DIR   where to install (default ~/.local; /usr/local as root)
  --version VER  this release instead of the newest (BASE/latest)
  --base URL     the release server (CUDAENV_INSTALL_BASE; default $RELEASE_BASE_DEFAULT)
  -q             quiet: errors only
USAGE
}
quiet=0 prefix= version=${CUDAENV_INSTALL_VERSION:-} base=${CUDAENV_INSTALL_BASE:-$RELEASE_BASE_DEFAULT}
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --version) [ $# -ge 2 ] || die "--version needs a version (e.g. 0.1.0)"; version=$2; shift 2 ;;
        --version=*) version=${1#--version=}; shift ;;
        --base) [ $# -ge 2 ] || die "--base needs a URL"; base=$2; shift 2 ;;
        --base=*) base=${1#--base=}; shift ;;
        -q|--quiet) quiet=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
base=${base%/}
if [ -z "$prefix" ]; then
    if [ "$(id -u)" -eq 0 ]; then prefix=/usr/local; else
        [ -n "${HOME:-}" ] || die "HOME is not set: name the place with --prefix DIR"
        prefix=$HOME/.local
    fi
fi
case $prefix in /*) ;; *) prefix=$(pwd)/$prefix ;; esac

[ "$(uname -s)" = Linux ] || die "cudaenv runs on Linux only (this is $(uname -s))"
case $(uname -m) in
    x86_64|amd64) arch=x86_64 ;;
    aarch64|arm64) arch=aarch64 ;;
    *) die "no cudaenv release for $(uname -m): build it from source (README: From source)" ;;
esac
glibc=$( (getconf GNU_LIBC_VERSION 2>/dev/null || true) | awk '{print $2}')
[ -n "$glibc" ] || die "no glibc found (musl?): cudaenv's releases need glibc 2.31 or newer; build from source"
case $(printf '%s\n%s\n' "$glibc" 2.31 | sort -t. -k1,1n -k2,2n | head -n1) in
    2.31) ;; *) die "glibc $glibc is older than 2.31, the release's floor (Ubuntu 20.04, Debian 11, RHEL 9): build from source" ;;
esac

if command -v curl >/dev/null 2>&1; then
    fetch() { curl -fsSL --retry 2 --connect-timeout 20 -o "$2" "$1" || die "cannot download $1 (curl exit $?)"; }
elif command -v wget >/dev/null 2>&1; then
    fetch() { wget -q -T 20 -O "$2" "$1" || die "cannot download $1 (wget exit $?)"; }
else
    die "neither curl nor wget is installed: install one of them"
fi
sha256() {
    if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | awk '{print $1}'
    elif command -v shasum >/dev/null 2>&1; then shasum -a 256 "$1" | awk '{print $1}'
    elif command -v openssl >/dev/null 2>&1; then openssl dgst -sha256 "$1" | awk '{print $NF}'
    else die "no sha256sum, shasum or openssl to check the download with"; fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
if [ -z "$version" ]; then
    fetch "$base/latest" "$tmp/latest"
    version=$(head -n1 "$tmp/latest" | tr -d ' \r')
fi
case $version in ''|*[!0-9A-Za-z.+~-]*) die "'$version' from $base/latest is no version" ;; esac
file=cudaenv-$version-linux-$arch.tar.gz
fetch "$base/$version/SHA256SUMS" "$tmp/SHA256SUMS"
if [ -n "$RELEASE_KEY" ]; then
    if command -v openssl >/dev/null 2>&1; then
        fetch "$base/$version/SHA256SUMS.sig" "$tmp/SHA256SUMS.sig"
        printf '%s\n' "$RELEASE_KEY" > "$tmp/key.pem"
        base64 -d < "$tmp/SHA256SUMS.sig" > "$tmp/sig.raw" 2>/dev/null || bad "$base/$version/SHA256SUMS.sig is no base64 signature"
        openssl pkeyutl -verify -pubin -inkey "$tmp/key.pem" -rawin -in "$tmp/SHA256SUMS" -sigfile "$tmp/sig.raw" >/dev/null 2>&1 \
            || bad "the signature of $base/$version/SHA256SUMS does not match the release key: nothing installed (a tampered or foreign release)"
        say "SHA256SUMS signature ok"
    else
        say "no openssl: the signature of SHA256SUMS is not checked, only the checksum"
    fi
else
    say "this install.sh carries no release key: only the checksum is checked"
fi
want=$(awk -v f="$file" '$2 == f || $2 == "*" f {print $1; exit}' "$tmp/SHA256SUMS")
[ -n "$want" ] || die "$base/$version/SHA256SUMS has no line for $file (no $arch build of $version?)"
fetch "$base/$version/$file" "$tmp/$file"
got=$(sha256 "$tmp/$file")
[ "$got" = "$want" ] || bad "$file: sha256 $got, SHA256SUMS says $want: nothing installed (download again; a mirror may be stale)"
say "$file: sha256 ok"

top=$prefix/lib/cudaenv
mkdir -p "$top/releases" "$prefix/bin" || die "cannot create $top (name another place with --prefix DIR)"
old=
[ -x "$top/current/bin/cudaenv" ] && old=$("$top/current/bin/cudaenv" --version 2>/dev/null | awk '{print $2; exit}') || true
new=$top/releases/.new-$version.$$
rm -rf "$new"; mkdir -p "$new"
tar -xzf "$tmp/$file" -C "$new" --strip-components=1 || { rm -rf "$new"; die "cannot unpack $file into $top"; }
"$new/bin/cudaenv" --version >/dev/null 2>&1 || { rm -rf "$new"; die "the unpacked cudaenv does not run on this machine: nothing installed"; }
echo install.sh > "$new/share/cudaenv/INSTALLER"
printf 'base=%s\n' "$base" > "$top/release.conf.new" && mv "$top/release.conf.new" "$top/release.conf"
if [ -n "$RELEASE_KEY" ]; then printf '%s\n' "$RELEASE_KEY" > "$top/release-key.pem.new" && mv "$top/release-key.pem.new" "$top/release-key.pem"; fi
if [ -e "$top/releases/$version" ]; then
    rm -rf "$top/releases/.old-$version"; mv "$top/releases/$version" "$top/releases/.old-$version"
fi
mv "$new" "$top/releases/$version"
# the static init files, written by the release from where it now lies (its own path in them)
mkdir -p "$top/releases/$version/share/cudaenv/init"
for sh in bash zsh fish; do
    "$top/releases/$version/bin/cudaenv" init "$sh" --static -q -o "$top/releases/$version/share/cudaenv/init/cudaenv.$sh" >/dev/null 2>&1 || true
done
ln -s "releases/$version" "$top/current.new.$$"
if mv -T "$top/current.new.$$" "$top/current" 2>/dev/null; then :; else
    rm -f "$top/current.new.$$"; ln -sfn "releases/$version" "$top/current"
fi
rm -rf "$top/releases/.old-$version"
ln -sfn ../lib/cudaenv/current/bin/cudaenv "$prefix/bin/cudaenv"
for m in man1/cudaenv.1 man5/cudaenv-manifest.5; do
    mkdir -p "$prefix/share/man/${m%/*}"
    ln -sfn "../../../lib/cudaenv/current/share/man/$m" "$prefix/share/man/$m"
done
# keep the previous release for a rollback, drop the older ones
for r in "$top"/releases/*; do
    v=${r##*/}
    [ "$v" = "$version" ] || [ "$v" = "$old" ] || rm -rf "$r"
done
if [ -n "$old" ] && [ "$old" != "$version" ]; then say "cudaenv $old -> $version in $prefix"
elif [ -n "$old" ]; then say "cudaenv $version reinstalled in $prefix"
else say "cudaenv $version installed in $prefix"; fi
case ":${PATH:-}:" in
    *":$prefix/bin:"*) say "start a new shell, or: . $top/current/share/cudaenv/init/cudaenv.bash" ;;
    *) say "add this line to ~/.bashrc (then start a new shell):"
       [ "$quiet" = 1 ] || printf '  export PATH="%s/bin:$PATH"; . %s/current/share/cudaenv/init/cudaenv.bash\n' "$prefix" "$top" ;;
esac
