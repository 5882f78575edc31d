#!/usr/bin/env bash
# make distcheck: the release on machines that have nothing of ours.
# Builds the release (make dist: the Debian 11 build root, a throwaway signing
# key), then in bare roots made with debootstrap --variant=minbase (Debian 11:
# glibc 2.31, the floor; Debian 13), each kept in /var/cache/cudaenv-dist/
# SUITE-bare and used through an overlay in a private mount namespace (the
# cached root is never changed):
#   - no libcurl, libarchive or libcjson is there;
#   - the tarball, unpacked in /opt, runs: --version, info, list-remote;
#     install tf-2.14 from a loopback mirror (the test fixtures), exec runs its
#     nvcc, verify exits 8 (no GPU);
#   - the .deb installs (dpkg -i), runs, and removes cleanly (dpkg -r: nothing
#     of it left); before that, lintian finds no error in it.
# The aarch64 release the same way in a bare arm64 Debian 11 root, run through
# qemu-user-static's binfmt handler (the binaries emulated, the loopback mirror shared).
# Needs root (debootstrap, chroot, mount).  DISTCHECK_ROOTS="bullseye:x86_64 trixie:x86_64
# bullseye:aarch64" (SUITE:ARCH).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
TESTS_DIR=$REPO/tests
source tests/lib/fixtures.sh
source tests/lib/server.bash
[ "$(id -u)" -eq 0 ] || { echo "distcheck: needs root (debootstrap, chroot, mount)" >&2; exit 2; }
ROOTS=${DISTCHECK_ROOTS:-bullseye:x86_64 trixie:x86_64 bullseye:aarch64}
CACHE=${DISTCHECK_CACHE:-/var/cache/cudaenv-dist}
MIRROR=${DIST_MIRROR:-http://deb.debian.org/debian}
W=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-distcheck.XXXXXX")
trap 'server_stop >/dev/null 2>&1 || true; rm -rf "$W"' EXIT
VER=$(sed -n 's/^VERSION *= *//p' Makefile)
HOST_ARCH=$(uname -m)
ARCHS=$(for r in $ROOTS; do echo "${r#*:}"; done | sort -u | tr '\n' ' ')

openssl genpkey -algorithm ed25519 -out "$W/sign.key" 2>/dev/null
DIST_DIR=$W/dist SIGN_KEY=$W/sign.key DIST_ARCHS=$ARCHS tools/dist.sh
rel=$W/dist/$VER

# every .deb passes lintian without an error (the bundled libraries are overridden with the
# reason, in the package: tools/dist-pkg.sh)
command -v lintian >/dev/null || { echo "distcheck: no lintian (tools/deps-test.txt has it)" >&2; exit 1; }
for deb in "$rel"/*.deb; do
    lintian --fail-on error --tag-display-limit 0 "$deb" 2>&1 | grep -v 'running with root privileges' \
        || true
    lintian --fail-on error "$deb" >/dev/null 2>&1 || { echo "distcheck: lintian finds errors in $deb" >&2; exit 1; }
    echo "distcheck: lintian: no errors in ${deb##*/}"
done

# the fixture runfiles as gzip makeself archives: a bare root has gzip but no xz (NVIDIA's
# component archives, .tar.xz, cudaenv decodes itself; a makeself header runs the machine's tools)
FX_RUNFILE_COMP=--gzip fx_mirror "$W/mirror" >/dev/null
server_start "$W/mirror" >/dev/null
FX_MIRROR_PLATFORMS="linux-x86_64 linux-sbsa" fx_mirror_manifest "$W/mirror" "$SERVER_URL" > "$W/manifest.json"

fails=0
for r in $ROOTS; do
    suite=${r%%:*} arch=${r#*:}
    case $arch in x86_64) debarch=amd64 ;; aarch64) debarch=arm64 ;; *) debarch=$arch ;; esac
    # the host architecture's roots keep their first names (SUITE-bare)
    bare=$CACHE/$suite-bare; [ "$arch" = "$HOST_ARCH" ] || bare=$CACHE/$suite-$debarch-bare
    if [ ! -x "$bare/bin/sh" ]; then
        echo "distcheck: making the bare $suite $debarch root in $bare (once)"
        rm -rf "$bare.new"; mkdir -p "$CACHE"
        debootstrap --arch="$debarch" --variant=minbase "$suite" "$bare.new" "$MIRROR" > "$W/debootstrap-$suite.log" 2>&1 \
            || { tail -20 "$W/debootstrap-$suite.log" >&2; echo "distcheck: debootstrap $suite $debarch failed" >&2; exit 1; }
        mv "$bare.new" "$bare"
    fi
    d=$W/$suite-$arch
    mkdir -p "$d/up" "$d/work" "$d/root" "$d/in"
    cp "$rel/cudaenv-$VER-linux-$arch.tar.gz" "$rel/cudaenv_${VER}_$debarch.deb" "$W/manifest.json" "$d/in/"
    cat > "$d/in/check.sh" <<'IN'
set -eu
ok() { echo "  ok: $*"; }
fail() { echo "  FAIL: $*"; exit 1; }
glibc=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
for l in libcurl.so.4 libarchive.so.13 libcjson.so.1; do
    [ -z "$(find / -xdev -name "$l*" -not -path '/in/*' 2>/dev/null | head -1)" ] || fail "$l is in the bare root"
done
ok "$(uname -m), glibc $glibc; no libcurl, libarchive or libcjson"
mkdir -p /opt && tar -xzf /in/cudaenv-*.tar.gz -C /opt
ce=$(echo /opt/cudaenv-*/bin/cudaenv)
export HOME=/root CUDAENV_ROOT=/root/.cudaenv CUDAENV_MANIFEST=/in/manifest.json
"$ce" --version | grep -q '^cudaenv ' || fail "--version"
ok "$("$ce" --version | head -1)"
"$ce" info tf-2.14 | grep -q 11.8 || fail "info tf-2.14"
"$ce" list-remote > /dev/null || fail "list-remote"
ok "info, list-remote"
"$ce" install tf-2.14 > /in/install.log 2>&1 || { cat /in/install.log; fail "install tf-2.14"; }
ok "install tf-2.14 from the loopback mirror: $(tail -1 /in/install.log)"
"$ce" exec tf-2.14 -- nvcc --version | grep -q 'release 11.8' || fail "exec tf-2.14 -- nvcc"
ok "exec tf-2.14 -- nvcc --version"
if [ "$(uname -m)" = x86_64 ]; then
    rc=0; "$ce" verify tf-2.14 > /in/verify.log 2>&1 || rc=$?
    [ "$rc" -eq 8 ] || { cat /in/verify.log; fail "verify: exit $rc, expected 8 (no GPU)"; }
    ok "verify exits 8 (no GPU)"
else   # the fixture toolkit's libraries are x86_64 ELF: verify's loader step would judge them, not cudaenv
    ok "verify left out: the fixture toolkit's libraries are built for x86_64"
fi
dpkg -i /in/cudaenv_*.deb > /in/dpkg.log 2>&1 || { cat /in/dpkg.log; fail "dpkg -i"; }
cudaenv --version | grep -q '^cudaenv ' || fail "cudaenv from the .deb"
cudaenv self update > /in/self.log 2>&1 && fail "self update from a .deb"
grep -q 'apt-get install --only-upgrade cudaenv' /in/self.log || fail "self update does not name apt"
dpkg -r cudaenv > /in/dpkg.log 2>&1 || { cat /in/dpkg.log; fail "dpkg -r"; }
[ ! -e /usr/bin/cudaenv ] && [ ! -e /usr/lib/cudaenv ] || fail "dpkg -r left files"
ok ".deb: dpkg -i, run, self update names apt, dpkg -r leaves nothing"
IN
    echo "distcheck: $suite $arch$([ "$arch" = "$HOST_ARCH" ] || echo " (emulated by qemu-$arch)")"
    if unshare -m --propagation private sh -c '
        r=$1
        mount -t overlay overlay -o "lowerdir=$2,upperdir=$r/up,workdir=$r/work" "$r/root" &&
        mkdir -p "$r/root/in" && mount --bind "$r/in" "$r/root/in" &&
        mount --rbind /dev "$r/root/dev" && mount -t proc proc "$r/root/proc" &&
        chroot "$r/root" env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin /bin/sh /in/check.sh' _ "$d" "$bare"; then
        :
    else
        fails=$((fails + 1))
    fi
done
[ "$fails" -eq 0 ] && echo "distcheck: the release passed in: $ROOTS" || { echo "distcheck: $fails root(s) failed"; exit 1; }
