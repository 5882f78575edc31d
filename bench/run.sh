#!/usr/bin/env bash
# make bench: every benchmark prints its own table (PERFORMANCE.md).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build} bench/switch.sh
BUILD=${BUILD:-build} bench/list.sh
BUILD=${BUILD:-build} bench/flat.sh
BUILD=${BUILD:-build} bench/install.sh
BUILD=${BUILD:-build} bench/components.sh
BUILD=${BUILD:-build} bench/linerate.sh
BUILD=${BUILD:-build} bench/peers.sh
BUILD=${BUILD:-build} bench/repack.sh
