#!/usr/bin/env bash
# make demo: install -> use -> verify, offline, in a temporary CUDAENV_ROOT.
# Builds a local mirror with the test fixtures (fake but real-shaped CUDA
# 11.8.0 / 12.2.2 runfiles and cuDNN tarballs, with real shared objects),
# serves it on 127.0.0.1, and shows each step with the command it ran.
set -eu
cd "$(dirname "$0")/.."
REPO=$PWD
BUILD=${BUILD:-build}
CUDAENV=$REPO/$BUILD/bin/cudaenv
export CUDAENV_FULL=$REPO/$BUILD/libexec/cudaenv/cudaenv-full
TESTS_DIR=$REPO/tests
source tests/lib/fixtures.sh
source tests/lib/server.bash
D=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-demo.XXXXXX")
trap 'rc=$?; server_stop >/dev/null 2>&1 || true; rm -rf "$D"; exit $rc' EXIT
export CUDAENV_ROOT=$D/root CUDAENV_SYSROOT=$D/sys HOME=$D/home NO_COLOR=1
unset CUDAENV_VERSION CUDAENV_MIRROR
mkdir -p "$HOME" "$CUDAENV_SYSROOT"

step() { printf '\n$ %s\n' "$*"; "$@"; }

echo "cudaenv demo in $D (nothing outside it is touched)"
echo "building a local mirror: CUDA 11.8.0 + 12.2.2 runfiles, cuDNN 8.6/8.7/8.9 tarballs ..."
fx_mirror "$D/mirror"
server_start "$D/mirror" >/dev/null
fx_mirror_manifest "$D/mirror" "$SERVER_URL" > "$D/manifest.json"
export CUDAENV_MANIFEST=$D/manifest.json
echo "serving it on $SERVER_URL; CUDAENV_MANIFEST=$CUDAENV_MANIFEST"

step "$CUDAENV" info tf-2.14
step "$CUDAENV" install tf-2.14
step "$CUDAENV" install tf-2.12
step "$CUDAENV" list
p=$("$CUDAENV" prefix 11.8.0+cudnn8.7.0.84)
echo
echo "tf-2.12 and tf-2.14 share the toolkit (same inode for libcudart):"
stat -c '  %i %n' "$p/lib64/libcudart.so.11.8.89" "$CUDAENV_ROOT/versions/11.8.0+cudnn8.6.0.163/lib64/libcudart.so.11.8.89"
step "$CUDAENV" env 11.8.0+cudnn8.7.0.84
fx_probe "$D/probe" "$p"
echo
echo "a program linked with -lcudart, run through cudaenv exec (prints the runtime version and the library the loader chose):"
step "$CUDAENV" exec 11.8.0+cudnn8.7.0.84 -- "$D/probe"
step "$CUDAENV" exec 11.8.0+cudnn8.7.0.84 -- nvcc --version
rc=0
step "$CUDAENV" verify 11.8.0+cudnn8.7.0.84 || rc=$?
case $rc in
    0) echo "verify: all checks passed" ;;
    8) echo "verify: the files and versions check out; no usable GPU here, so the kernel test could not run (exit 8)" ;;
    *) echo "verify: exit $rc (the demo's toolchains are fixtures: their libraries cannot drive a real GPU)" ;;
esac
step "$CUDAENV" uninstall 11.8.0+cudnn8.6.0.163
step "$CUDAENV" list
echo
echo "demo done; the temporary root is removed now."
