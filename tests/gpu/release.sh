#!/usr/bin/env bash
# Issue 38's device proof: the x86_64 release as a user gets it.  dist/ (make dist,
# carried) is served on 127.0.0.1 as the release server; install.sh installs the
# newest release into a fresh HOME's ~/.local (checksums and, where dist/ is signed,
# the signature), `cudaenv --version` runs from there with nothing of this machine's
# but glibc, then tests/gpu/run.sh (GPU_MODE=redist: NVIDIA-style component archives
# of this machine's CUDA + cuDNN, the tf profile) installs from loopback with that
# binary and runs verify: every step must pass.  A tarball changed after signing is
# refused (exit 5) and installs nothing.
# Usage: run(carry=[".devdeps/rel", ".devdeps/gpu/makeself"], command="RELEASE_DIST=.devdeps/rel tests/gpu/release.sh")
# (.devdeps/rel: dist/latest and dist/VER/ without the .deb and wheels, to fit the carry limit)
set -u
cd "$(dirname "$0")/../.." || exit 1
REPO=$PWD
TESTS_DIR=$REPO/tests
source tests/lib/server.bash
DIST=${RELEASE_DIST:-dist}   # what make dist wrote (the tarball, SHA256SUMS(.sig), install.sh suffice)
VER=$(cat "$DIST/latest" 2>/dev/null) || { echo "no $DIST/latest: make dist first"; exit 1; }
W=$(mktemp -d /tmp/cudaenv-rel.XXXXXX)
trap 'server_stop >/dev/null 2>&1; rm -rf "$W"' EXIT
pass=0 fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
cp -a "$DIST" "$W/srv"
server_start "$W/srv" >/dev/null || { echo "the loopback release server did not start"; exit 1; }
echo "== install.sh from $SERVER_URL (release $VER), as a user: HOME=$W/home"
mkdir -p "$W/home"
# --prefix: as root (the device runs commands as root) install.sh's default is /usr/local
(cd "$W" && HOME=$W/home sh "$W/srv/$VER/install.sh" --base "$SERVER_URL" --prefix "$W/home/.local") 2>&1 | sed 's/^/  /'
BIN=$W/home/.local/bin/cudaenv
[ -x "$BIN" ] && ok "install.sh installed $BIN" || { bad "install.sh installed nothing"; echo "$pass passed, $fail failed"; exit 1; }
"$BIN" --version | sed 's/^/  /'
full=$(readlink -f "$(dirname "$(readlink -f "$BIN")")/../libexec/cudaenv/cudaenv-full")
ldd "$full" | awk '{print $1, $3}' | grep -v -E '^(linux-vdso|/lib64/ld-linux)' > "$W/ldd"
outside=$(grep -v -E "$(dirname "$(dirname "$full")")|lib(c|m|dl|pthread|rt|resolv|util)\.so|libstdc\+\+|libgcc_s" "$W/ldd" || true)
[ -z "$outside" ] && ok "cudaenv-full loads only glibc and the release's own lib/" || bad "cudaenv-full loads from this machine: $outside"
# a tampered tarball: refused, nothing installed
cp -a "$W/srv" "$W/bad"; tb=$(ls "$W/bad/$VER"/cudaenv-*-linux-x86_64.tar.gz)
printf 'x' | dd of="$tb" bs=1 seek=1000 conv=notrunc status=none
server_stop; server_start "$W/bad" >/dev/null
mkdir -p "$W/home2"
HOME=$W/home2 sh "$W/bad/$VER/install.sh" --base "$SERVER_URL" --prefix "$W/home2/.local" > "$W/bad.log" 2>&1; rc=$?
[ "$rc" -eq 5 ] && [ ! -e "$W/home2/.local/bin/cudaenv" ] && ok "a tampered tarball: exit 5, nothing installed ($(tail -1 "$W/bad.log" | cut -c1-120))" \
    || bad "a tampered tarball: exit $rc"
server_stop
echo "== tests/gpu/run.sh with the release's binary: the tf profile from components, verify"
GPU_BIN=$(readlink -f "$BIN") GPU_MODE=redist tests/gpu/run.sh; rc=$?   # the release tree, where libexec/ lies
[ "$rc" -eq 0 ] && ok "run.sh with the release's binary: every step passed" || bad "run.sh with the release's binary: exit $rc"
echo "release: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
