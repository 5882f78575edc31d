#!/usr/bin/env bash
# One command for a newcomer on Debian/Ubuntu: install the build dependencies
# (as root, or through sudo) and build cudaenv.  On a first boot another apt
# (unattended-upgrades, cloud-init) often holds the dpkg/apt locks for minutes:
# wait for it (SETUP_LOCK_WAIT seconds, default 900) instead of failing.
set -euo pipefail
cd "$(dirname "$0")/.."
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

apt_get update
apt_get install -y --no-install-recommends $(cat tools/deps.txt)
$SUDO tools/envmodules.sh || echo "environment-modules not unpacked: its module-file test will skip"
make -j"$(nproc)"
echo "built: build/bin/cudaenv   next: make check, make demo, sudo make install"
