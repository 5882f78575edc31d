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
# (/var/cache/cudaenv-dist/bullseye-build), one per architecture of DIST_ARCHS (default
# "x86_64 aarch64"; the other one's root, DIST_ROOT-aarch64, is an arm64 Debian 11 run
# through qemu-user-static's binfmt handler); DIST_ROOT=host builds on this machine
# instead (its glibc is the floor then: for quick tests only).  Every ELF is checked:
# nothing newer than GLIBC_$DIST_GLIBC_MAX, no library outside glibc and its own lib/.
# Needs root for the build root (debootstrap, chroot); DIST_ROOT=host does not
# (DIST_BUILD: its build directory, default build-dist).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
VER=$(sed -n 's/^VERSION *= *//p' Makefile)
HOST_ARCH=$(uname -m)
OUT=${DIST_DIR:-dist}
SUITE=${DIST_SUITE:-bullseye}
MIRROR=${DIST_MIRROR:-http://deb.debian.org/debian}
GLIBC_MAX=${DIST_GLIBC_MAX:-2.31}
BASE=${RELEASE_BASE:-}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
RELOC="-Wl,--disable-new-dtags,-rpath,'\$\$ORIGIN/../lib:\$\$ORIGIN/../../lib/full'"
BUILD_PKGS=gcc,libc6-dev,make,pkg-config,liblzma-dev,libcurl4-openssl-dev,libarchive-dev,libssl-dev,libcjson-dev,python3,binutils,ca-certificates

say() { echo "dist: $*"; }
die() { echo "dist: $*" >&2; exit 1; }
debarch_of() { case $1 in x86_64) echo amd64 ;; aarch64) echo arm64 ;; *) echo "$1" ;; esac; }

# build_inside BUILD STAGE: the installed tree, stripped and bundled, in STAGE/opt/cudaenv
# (PREFIX /opt/cudaenv: every path the binaries use is found relative to them; the
# compiled-in one is a last resort).  Runs in the build root (or on the host).
build_inside() {
    rm -f "$1/bin/cudaenv" "$1/libexec/cudaenv/cudaenv-full"   # make does not relink for new LDFLAGS
    make -s -C "$SRC" BUILD="$1" WERROR=0 LDFLAGS="$RELOC" -j"$(nproc)" all >/dev/null
    rm -rf "$2"
    make -s -C "$SRC" BUILD="$1" WERROR=0 LDFLAGS="$RELOC" DESTDIR="$2" PREFIX=/opt/cudaenv install >/dev/null
    for b in "$2/opt/cudaenv/bin/cudaenv" "$2/opt/cudaenv/libexec/cudaenv/cudaenv-full"; do strip --strip-unneeded "$b"; done
    "$SRC/tools/bundle.sh" "$2/opt/cudaenv"
}
# check_floor TREE MAX: no symbol version newer than GLIBC_MAX, no library outside glibc
# and lib/; prints the newest GLIBC_ version used.  Runs where the tree was built (its
# objdump reads that architecture).
check_floor() {
    local t=$1 max=$2 newest=0 f v n
    while IFS= read -r -d '' f; do
        head -c4 "$f" | grep -q 'ELF' || continue
        v=$( (objdump -T "$f" | grep -o 'GLIBC_[0-9.]*' || true) | sed 's/GLIBC_//' | sort -V | tail -1)
        [ -n "$v" ] || continue
        if [ "$(printf '%s\n%s\n' "$v" "$max" | sort -V | tail -1)" != "$max" ]; then
            die "${f#"$t"/} needs GLIBC_$v, newer than the floor GLIBC_$max"
        fi
        newest=$(printf '%s\n%s\n' "$v" "$newest" | sort -V | tail -1)
        for n in $(objdump -p "$f" | awk '$1 == "NEEDED" {print $2}'); do
            case $n in ld-linux*|libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libresolv.so*|libutil.so*|libstdc++.so*|libgcc_s.so*) continue ;; esac
            [ -e "$t/lib/$n" ] || [ -e "$t/lib/full/$n" ] || die "${f#"$t"/} needs $n, which is neither glibc's nor in lib/"
        done
    done < <(find "$t" -type f -print0)
    echo "$newest"
}
if [ "${1:-}" = --inside ]; then build_inside "$2" "$3"; exit 0; fi
if [ "${1:-}" = --floor ]; then check_floor "$2" "$3"; exit 0; fi

# ensure_emulation ARCH: a foreign build root runs through qemu-user-static's binfmt
# handler (its F flag: the kernel opens the interpreter once, so chroot needs no copy)
ensure_emulation() {
    local q=/proc/sys/fs/binfmt_misc/qemu-$1
    [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || true
    [ -e "$q" ] || { command -v update-binfmts >/dev/null && update-binfmts --enable "qemu-$1" >/dev/null 2>&1; } || true
    [ -e "$q" ] && grep -q enabled "$q" ||
        die "building for $1 on $HOST_ARCH needs qemu-user-static's binfmt handler (apt-get install qemu-user-static binfmt-support: tools/deps-test.txt has them), or DIST_ARCHS=$HOST_ARCH"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-dist.XXXXXX")
trap 'rm -rf "$work"' EXIT
rel=$OUT/$VER
rm -rf "$rel"; mkdir -p "$rel"

# in_root ROOT CMD...: CMD in the build root, with /dev and /proc, in a private mount namespace
in_root() {
    unshare -m --propagation private sh -c '
        r=$1; shift
        mount --rbind /dev "$r/dev" && mount -t proc proc "$r/proc" &&
        chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"' _ "$@"
}

# build_arch ARCH: the tarball, .deb and wheel of one architecture, into $rel
build_arch() {
    local arch=$1 debarch root tree glibc newest max=$GLIBC_MAX
    debarch=$(debarch_of "$arch")
    if [ "${DIST_ROOT:-}" = host ]; then
        [ "$arch" = "$HOST_ARCH" ] || die "DIST_ROOT=host builds for this machine's $HOST_ARCH only, not $arch"
        max=$(ldd --version | awk 'NR==1{print $NF}')
        glibc=$max
        say "building on this machine (glibc $glibc): DIST_ROOT=host"
        build_inside "${DIST_BUILD:-$SRC/build-dist}" "$work/stage"
        tree=$work/stage/opt/cudaenv
        newest=$(check_floor "$tree" "$max")
    else
        [ "$(id -u)" -eq 0 ] || die "the build root needs root (debootstrap, chroot); run as root, or DIST_ROOT=host for a build on this machine's glibc"
        # the host architecture's root keeps its first name (roots cached before aarch64 builds)
        root=${DIST_ROOT:-/var/cache/cudaenv-dist/$SUITE-build}
        [ "$arch" = "$HOST_ARCH" ] || { root=$root-$arch; ensure_emulation "$arch"; }
        if [ ! -x "$root/usr/bin/gcc" ] || [ ! -f "$root/usr/include/cjson/cJSON.h" ] || [ ! -f "$root/usr/include/lzma.h" ] || [ ! -f "$root/usr/include/stdio.h" ]; then
            command -v debootstrap >/dev/null || die "no debootstrap: apt-get install debootstrap (tools/deps-test.txt has it)"
            say "making the $SUITE $debarch build root in $root (once; kept for the next make dist)"
            rm -rf "$root.new"; mkdir -p "$(dirname "$root")"
            debootstrap --arch="$debarch" --variant=minbase --include="$BUILD_PKGS" "$SUITE" "$root.new" "$MIRROR" > "$work/debootstrap.log" 2>&1 \
                || { tail -20 "$work/debootstrap.log" >&2; die "debootstrap $SUITE $debarch failed (log above)"; }
            rm -rf "$root"; mv "$root.new" "$root"
        fi
        rm -rf "$root/src" "$root/stage"; mkdir -p "$root/src/cudaenv"
        git ls-files -co --exclude-standard -z | tar --null -T - -c | tar -x -C "$root/src/cudaenv"
        say "building for $arch in $root$([ "$arch" = "$HOST_ARCH" ] || echo " (emulated by qemu-$arch)")"
        in_root "$root" /src/cudaenv/tools/dist.sh --inside /build /stage
        newest=$(in_root "$root" /src/cudaenv/tools/dist.sh --floor /stage/opt/cudaenv "$max")
        tree=$root/stage/opt/cudaenv
        glibc=$(chroot "$root" ldd --version | awk 'NR==1{print $NF}')
    fi
    local name=cudaenv-$VER-linux-$arch
    local t=$work/$name
    rm -rf "$t"; cp -a "$tree" "$t"
    rm -rf "$t/share/cudaenv/init"     # written for the real prefix by install.sh (cudaenv init --static)
    say "$arch: glibc floor GLIBC_$newest (built on glibc $glibc; limit GLIBC_$max)"
    tar --owner=0 --group=0 --numeric-owner --sort=name --mtime="@$SOURCE_DATE_EPOCH" -C "$work" -czf "$rel/$name.tar.gz" "$name"
    "$SRC/tools/dist-pkg.sh" "$t" "$VER" "$arch" "$debarch" "$rel"
}
# both architectures (DIST_ARCHS to choose); DIST_ROOT=host: this machine's only
ARCHS=${DIST_ARCHS:-$([ "${DIST_ROOT:-}" = host ] && echo "$HOST_ARCH" || echo "x86_64 aarch64")}
for a in $ARCHS; do build_arch "$a"; done

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
