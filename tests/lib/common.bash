# Shared setup for bats scenarios: a private CUDAENV_ROOT per test, the
# binaries under test, and fixture helpers.  Load with: load ../lib/common
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=$(cd "$TESTS_DIR/.." && pwd)
BUILD=${CUDAENV_TEST_BUILD:-$REPO/build}
CUDAENV=$BUILD/bin/cudaenv
export CUDAENV_FULL=$BUILD/libexec/cudaenv/cudaenv-full
# (as root cudaenv ignores CUDAENV_FULL and finds ../libexec/cudaenv itself)
source "$TESTS_DIR/lib/fixtures.sh"

# The product reads no test variable: the CUDAENV_TEST_* variables
# (CRASH_AT, FAULT, FREE_BYTES, HASH_LOG, XZ_THREADS, LIBDIR, LIBCUDA) act
# through the fault-point double tests/doubles/seams.c (src/core/fault.h),
# which `make units` builds.  seams CMD [ARG...] runs one command with it
# preloaded; seams_on preloads it for the rest of the test.
SEAMS_SO=$BUILD/doubles/seams.so
seams() {
    LD_PRELOAD=$SEAMS_SO${LD_PRELOAD:+:$LD_PRELOAD} ASAN_OPTIONS=$(fx_asan_preload_ok) "$@"
}
seams_on() {
    case ":${LD_PRELOAD:-}:" in *":$SEAMS_SO:"*) return 0;; esac
    export LD_PRELOAD=$SEAMS_SO${LD_PRELOAD:+:$LD_PRELOAD} ASAN_OPTIONS=$(fx_asan_preload_ok)
}
export SEAMS_SO
export -f seams seams_on fx_asan_preload_ok   # for bash -c, unshare, sysns.sh

# Each test gets its own root; nothing outside $T is written.
common_setup() {
    T=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cudaenv-test.XXXXXX")
    export CUDAENV_ROOT=$T/root
    export CUDAENV_SYSROOT=$T/sys
    export HOME=$T/home
    mkdir -p "$HOME" "$CUDAENV_SYSROOT"
    unset CUDAENV_VERSION CUDAENV_MANIFEST CUDAENV_MIRROR
    # caches and configs under this HOME too: CI's own XDG_CACHE_HOME (.ci/run) is
    # shared by every test, and a user's XDG_CONFIG_HOME is not the test's
    unset XDG_CACHE_HOME XDG_CONFIG_HOME
    export NO_COLOR=1
    # the test machine's own Python frameworks must not decide doctor's findings
    # (framework.bats names the Python it checks)
    export CUDAENV_DOCTOR_PYTHON=none
}

# no staging directory (an install's tree not yet committed) left in the
# store at $1 (default $CUDAENV_ROOT)
# pids_gone FILE: none of the pids in FILE is alive (waits up to 10 s)
pids_gone() {
    local i p alive
    for i in $(seq 100); do
        alive=
        for p in $(cat "$1"); do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
        [ -z "$alive" ] && return 0
        sleep 0.1
    done
    echo "still running:$alive"; ps -o pid,pgid,args -p "${alive# }" || true
    return 1
}

no_staging() {
    ! ls -d "${1:-$CUDAENV_ROOT}"/versions/.staging-* "${1:-$CUDAENV_ROOT}"/pkgs/.staging-* 2>/dev/null | grep -q .
}

# does running the binary with "$@" open the manifest ($CUDAENV_MANIFEST)?
opens_manifest() {
    strace -f -qq -e trace=open,openat -o "$T/st" "$CUDAENV" "$@" >/dev/null 2>&1 || true
    grep -qF "\"$CUDAENV_MANIFEST\"" "$T/st"
}

common_teardown() {
    [ -n "${T:-}" ] && chmod -R u+w "$T" 2>/dev/null; [ -n "${T:-}" ] && rm -rf "$T"
}

# A toolchain laid out directly in the store (no download), for tests of
# switching, doctor and verify.  fx_installed 11.8.0 [8.7.0.84]
# Built once per bats file (cc is the slow part: up to ten shared objects)
# and copied into each test's store.
fx_installed() {
    local cuda=$1 cudnn=${2:-}
    local name=$cuda
    [ -n "$cudnn" ] && name="$cuda+cudnn$cudnn"
    [ -n "${BATS_FILE_TMPDIR:-}" ] || { fx_installed_build "$@"; return; }
    local tpl=$BATS_FILE_TMPDIR/fx-installed
    if [ ! -d "$tpl/root/versions/$name" ]; then
        ( T=$tpl; CUDAENV_ROOT=$tpl/root; mkdir -p "$T"; fx_installed_build "$@" >/dev/null ) \
            || { rm -rf "$tpl/root/versions/$name"; return 1; }
    fi
    mkdir -p "$CUDAENV_ROOT/versions"
    cp -a "$tpl/root/versions/$name" "$CUDAENV_ROOT/versions/"
    echo "$CUDAENV_ROOT/versions/$name"
}

fx_installed_build() {
    local cuda=$1 cudnn=${2:-}
    local name=$cuda
    [ -n "$cudnn" ] && name="$cuda+cudnn$cudnn"
    local p=$CUDAENV_ROOT/versions/$name
    fx_toolkit "$p" "$cuda"
    if [ -n "$cudnn" ]; then
        fx_cudnn "$T/.cudnn-$cudnn" "$cudnn" "${cuda%%.*}"
        cp -a "$T/.cudnn-$cudnn/include/." "$p/include/"
        cp -a "$T/.cudnn-$cudnn/lib/." "$p/lib64/"
        rm -rf "$T/.cudnn-$cudnn"
    fi
    echo "$p"
}

# run the light binary, capturing stdout and stderr separately
# (bats 1.8 `run --separate-stderr` is used where stderr matters)

# Setup shared by the switching scenarios (switch.bats, shell.bats): only the
# build's binaries and the system on PATH, no inherited CUDA variables, and
# three installed toolchains in $P118 (with cuDNN 8.7), $P117 and $P123.
switch_setup() {
    common_setup
    export PATH=$BUILD/bin:/usr/bin:/bin
    unset LD_LIBRARY_PATH CUDA_HOME CUDA_PATH CUDNN_PATH CUDAENV_WARNED
    P118=$(fx_installed 11.8.0 8.7.0.84)
    P117=$(fx_installed 11.7.0)
    P123=$(fx_installed 12.3.0)
}

# switch_setup, plus a project at $T/proj (.cuda-version 11.7, nested a/b)
# and $T/elsewhere, for the shell integration in real shells
shell_setup() {
    switch_setup
    mkdir -p "$T/proj/a/b" "$T/elsewhere"
    echo 11.7 > "$T/proj/.cuda-version"
    export T P118 P117 P123
}
