#!/usr/bin/env bash
# make dist: the release, built where the glibc floor is low.
#
#   dist/latest                                   the version, one line
#   dist/VER/cudaenv-VER-linux-ARCH.tar.gz        the relocatable tree (bin/, libexec/,
#                                                 lib/ with every library but glibc's,
#                                                 share/ with manifests, keys, man, completions)
#   dist/VER/cudaenv_VER_DEBARCH.deb              the same tree under /usr/lib/cudaenv
#   dist/VER/cudaenv-VER-py3-none-manylinux_2_31_ARCH.whl   the same tree in a wheel (pipx, uvx)
#   dist/VER/install.sh                           tools/install.sh with the release key and base
#   dist/VER/SHA256SUMS, SHA256SUMS.sig           every file above; the ed25519 signature
#                                                 (SIGN_KEY=key.pem; base64, as manifests' .sig)
# dist/ is laid out as a release server serves it (CUDAENV_INSTALL_BASE).
#
# The binaries are built in a Debian 11 root (glibc 2.31: Ubuntu 20.04+, Debian 11+,
# RHEL/Rocky 9+) made once with debootstrap and kept in DIST_ROOT
# (/var/cache/cudaenv-dist/bullseye-build); DIST_ROOT=host builds on this machine
# instead (its glibc is the floor then: for quick tests only).  Every ELF is checked:
# nothing newer than GLIBC_$DIST_GLIBC_MAX, no library outside glibc and its own lib/.
# Needs root for the build root (debootstrap, chroot); DIST_ROOT=host does not
# (DIST_BUILD: its build directory, default build-dist).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
VER=$(sed -n 's/^VERSION *= *//p' Makefile)
ARCH=$(uname -m)
case $ARCH in x86_64) DEBARCH=amd64 ;; aarch64) DEBARCH=arm64 ;; *) DEBARCH=$ARCH ;; esac
OUT=${DIST_DIR:-dist}
ROOT=${DIST_ROOT:-/var/cache/cudaenv-dist/bullseye-build}
SUITE=${DIST_SUITE:-bullseye}
MIRROR=${DIST_MIRROR:-http://deb.debian.org/debian}
GLIBC_MAX=${DIST_GLIBC_MAX:-2.31}
BASE=${RELEASE_BASE:-}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
RELOC="-Wl,--disable-new-dtags,-rpath,'\$\$ORIGIN/../lib:\$\$ORIGIN/../../lib/full'"
BUILD_PKGS=gcc,libc6-dev,make,pkg-config,liblzma-dev,libcurl4-openssl-dev,libarchive-dev,libssl-dev,libcjson-dev,python3,binutils,ca-certificates

say() { echo "dist: $*"; }
die() { echo "dist: $*" >&2; exit 1; }

# build_tree DIR: the installed tree, bundled, in DIR (PREFIX /opt/cudaenv: every path
# the binaries use is found relative to them; the compiled-in one is a last resort)
build_inside() {   # runs in the build root (or on the host): $1 = build dir, $2 = stage
    rm -f "$1/bin/cudaenv" "$1/libexec/cudaenv/cudaenv-full"   # make does not relink for new LDFLAGS
    make -s -C "$SRC" BUILD="$1" WERROR=0 LDFLAGS="$RELOC" -j"$(nproc)" all >/dev/null
    rm -rf "$2"
    make -s -C "$SRC" BUILD="$1" WERROR=0 LDFLAGS="$RELOC" DESTDIR="$2" PREFIX=/opt/cudaenv install >/dev/null
    "$SRC/tools/bundle.sh" "$2/opt/cudaenv"
}
if [ "${1:-}" = --inside ]; then build_inside "$2" "$3"; exit 0; fi

work=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-dist.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ "$ROOT" = host ]; then
    say "building on this machine (glibc $(ldd --version | awk 'NR==1{print $NF}')): DIST_ROOT=host"
    GLIBC_MAX=$(ldd --version | awk 'NR==1{print $NF}')
    build_inside "${DIST_BUILD:-$SRC/build-dist}" "$work/stage"
    tree=$work/stage/opt/cudaenv
else
    [ "$(id -u)" -eq 0 ] || die "the build root needs root (debootstrap, chroot); run as root, or DIST_ROOT=host for a build on this machine's glibc"
    if [ ! -x "$ROOT/usr/bin/gcc" ] || [ ! -f "$ROOT/usr/include/cjson/cJSON.h" ] || [ ! -f "$ROOT/usr/include/lzma.h" ] || [ ! -f "$ROOT/usr/include/stdio.h" ]; then
        command -v debootstrap >/dev/null || die "no debootstrap: apt-get install debootstrap (tools/deps-test.txt has it)"
        say "making the $SUITE build root in $ROOT (once; kept for the next make dist)"
        rm -rf "$ROOT.new"; mkdir -p "$(dirname "$ROOT")"
        debootstrap --variant=minbase --include="$BUILD_PKGS" "$SUITE" "$ROOT.new" "$MIRROR" > "$work/debootstrap.log" 2>&1 \
            || { tail -20 "$work/debootstrap.log" >&2; die "debootstrap $SUITE failed (log above)"; }
        rm -rf "$ROOT"; mv "$ROOT.new" "$ROOT"
    fi
    rm -rf "$ROOT/src" "$ROOT/stage"; mkdir -p "$ROOT/src/cudaenv"
    git ls-files -co --exclude-standard -z | tar --null -T - -c | tar -x -C "$ROOT/src/cudaenv"
    unshare -m --propagation private sh -c '
        mount --rbind /dev "$1/dev" && mount -t proc proc "$1/proc" &&
        chroot "$1" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root /src/cudaenv/tools/dist.sh --inside /build /stage' _ "$ROOT"
    tree=$ROOT/stage/opt/cudaenv
fi
glibc=$(ldd --version 2>/dev/null | awk 'NR==1{print $NF}')
[ "$ROOT" = host ] || glibc=$(chroot "$ROOT" ldd --version | awk 'NR==1{print $NF}')

name=cudaenv-$VER-linux-$ARCH
rel=$OUT/$VER
rm -rf "$rel"; mkdir -p "$rel"
t=$work/$name
cp -a "$tree" "$t"
rm -rf "$t/share/cudaenv/init"     # written for the real prefix by install.sh (cudaenv init --static)
for b in "$t/bin/cudaenv" "$t/libexec/cudaenv/cudaenv-full"; do strip --strip-debug "$b"; done

# the floor: no symbol version newer than GLIBC_MAX, no library outside glibc and lib/
newest=0
while IFS= read -r -d '' f; do
    head -c4 "$f" | grep -q 'ELF' || continue
    v=$( (objdump -T "$f" | grep -o 'GLIBC_[0-9.]*' || true) | sed 's/GLIBC_//' | sort -V | tail -1)
    [ -n "$v" ] || continue
    if [ "$(printf '%s\n%s\n' "$v" "$GLIBC_MAX" | sort -V | tail -1)" != "$GLIBC_MAX" ]; then
        die "${f#"$t"/} needs GLIBC_$v, newer than the floor GLIBC_$GLIBC_MAX"
    fi
    newest=$(printf '%s\n%s\n' "$v" "$newest" | sort -V | tail -1)
    for n in $(objdump -p "$f" | awk '$1 == "NEEDED" {print $2}'); do
        case $n in ld-linux*|libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libresolv.so*|libutil.so*|libstdc++.so*|libgcc_s.so*) continue ;; esac
        [ -e "$t/lib/$n" ] || [ -e "$t/lib/full/$n" ] || die "${f#"$t"/} needs $n, which is neither glibc's nor in lib/"
    done
done < <(find "$t" -type f -print0)
say "glibc floor: GLIBC_$newest (built on glibc $glibc; limit GLIBC_$GLIBC_MAX)"

tar --owner=0 --group=0 --numeric-owner --sort=name --mtime="@$SOURCE_DATE_EPOCH" -C "$work" -czf "$rel/$name.tar.gz" "$name"
"$SRC/tools/dist-pkg.sh" "$t" "$VER" "$ARCH" "$DEBARCH" "$rel"

# install.sh with this release's key and base
pub=
if [ -n "${SIGN_KEY:-}" ]; then
    pub=$(openssl pkey -in "$SIGN_KEY" -pubout) || die "SIGN_KEY=$SIGN_KEY is no private key openssl can read"
fi
python3 - "$SRC/tools/install.sh" "$rel/install.sh" "$pub" "$BASE" <<'PY'
import sys, re
src, dst, pub, base = sys.argv[1:]
s = open(src).read()
if pub:
    s = re.sub(r"(?s)(# BEGIN RELEASE KEY\n).*?(# END RELEASE KEY\n)",
               lambda m: m.group(1) + "RELEASE_KEY='" + pub.strip() + "\n'\n" + m.group(2), s)
if base:
    s = s.replace('RELEASE_BASE_DEFAULT=', "RELEASE_BASE_DEFAULT='%s' #" % base, 1)
open(dst, "w").write(s)
PY
chmod 755 "$rel/install.sh"
(cd "$rel" && sha256sum -- *.tar.gz *.deb *.whl install.sh > SHA256SUMS)
if [ -n "${SIGN_KEY:-}" ]; then
    openssl pkeyutl -sign -inkey "$SIGN_KEY" -rawin -in "$rel/SHA256SUMS" | base64 -w0 > "$rel/SHA256SUMS.sig"
    say "signed SHA256SUMS with $SIGN_KEY"
else
    say "SHA256SUMS not signed (no SIGN_KEY=): install.sh checks the checksums only"
fi
echo "$VER" > "$OUT/latest"
(cd "$rel" && for f in *; do printf '  %-52s %s\n' "$f" "$(du -h "$f" | cut -f1)"; done)
