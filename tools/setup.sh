#!/usr/bin/env bash
# One command for a newcomer on Debian/Ubuntu: install the build dependencies
# (as root, or through sudo) and build cudaenv.  On a first boot another apt
# (unattended-upgrades, cloud-init) often holds the dpkg/apt locks for minutes:
# wait for it (SETUP_LOCK_WAIT seconds, default 900) instead of failing.
# tools/deps.txt is what the build and make demo need; tools/deps-test.txt what
# only the tests need (bats, cmocka, the shells, lmod, ansible, Debian's torch),
# and Environment Modules unpacked by tools/envmodules.sh.
#   tools/setup.sh                 install what the build needs, then build
#   tools/setup.sh --test          ... and what the tests need, then build
#   tools/setup.sh --deps [--test] install what is missing only (make demo: --deps;
#                                  make check: --deps --test); no build
#   tools/setup.sh --check [--test] exit 0 when nothing of those is missing
set -euo pipefail
cd "$(dirname "$0")/.."
mode=build test=0
for a in "$@"; do
    case $a in
        --deps|--check) mode=${a#--} ;;
        --test) test=1 ;;
        *) echo "usage: tools/setup.sh [--deps|--check] [--test]" >&2; exit 2 ;;
    esac
done
lists=tools/deps.txt
[ "$test" -eq 1 ] && lists="$lists tools/deps-test.txt"
packages() { cat $lists; }
missing() {
    local p
    for p in $(packages); do
        dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || echo "$p"
    done
    if [ "$test" -eq 1 ]; then
        [ -f /var/cache/cudaenv-test/environment-modules/usr/lib/x86_64-linux-gnu/modulecmd.tcl ] || echo environment-modules
    fi
    return 0
}
if [ "$mode" = check ]; then
    m=$(missing); [ -z "$m" ] && exit 0
    echo "missing: $(echo $m)"; exit 1
fi
SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
wait_s=${SETUP_LOCK_WAIT:-900}
poll_s=${SETUP_LOCK_POLL:-5}

# apt_get ARGS...: apt-get, retried while it fails because another process
# holds the lock ("Could not get lock", "Unable to acquire the dpkg frontend lock").
apt_get() {
    local start=$SECONDS err rc
    err=$(mktemp)
    while :; do
        rc=0
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$wait_s" "$@" 2>"$err" || rc=$?
        cat "$err" >&2
        [ "$rc" -eq 0 ] && { rm -f "$err"; return 0; }
        if grep -qiE 'could not get lock|unable to acquire the dpkg frontend lock|is another process using it' "$err" &&
            [ $((SECONDS - start)) -lt "$wait_s" ]; then
            echo "setup: another apt/dpkg holds the lock (first boot: unattended-upgrades); waiting ${poll_s}s, up to ${wait_s}s in all" >&2
            sleep "$poll_s"
            continue
        fi
        rm -f "$err"
        return "$rc"
    done
}

# --deps (from make check / make demo): nothing to do when nothing is missing
if [ "$mode" != deps ] || [ -n "$(missing)" ]; then
    apt_get update
    apt_get install -y --no-install-recommends $(packages)
    if [ "$test" -eq 1 ]; then
        $SUDO tools/envmodules.sh || echo "environment-modules not unpacked: its module-file test will skip"
    fi
fi
[ "$mode" = deps ] && exit 0
make -j"$(nproc)"
if [ "$test" -eq 1 ]; then
    echo "built: build/bin/cudaenv   next: make check, make demo, sudo make install"
else
    echo "built: build/bin/cudaenv   next: make demo, sudo make install (make check installs what the tests need: tools/setup.sh --test)"
fi
