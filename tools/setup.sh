#!/usr/bin/env bash
# One command for a newcomer on Debian/Ubuntu: install the build dependencies
# (as root, or through sudo) and build cudaenv.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(cat tools/deps.txt)
$SUDO tools/envmodules.sh || echo "environment-modules not unpacked: its module-file test will skip"
make -j"$(nproc)"
echo "built: build/bin/cudaenv   next: make check, make demo, sudo make install"
