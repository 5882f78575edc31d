#!/usr/bin/env bash
# Issue 25's rows on the device machine (docs/PERFORMANCE.md), from the
# binaries of tests/gpu/devdeps.sh; rows and logs to $OUT.
#   tests/gpu/linerate.sh 16   every core: the tf profile at scale 1 (19
#                              archives, 2.8 GB of xz), from loopback and
#                              through LR_LINKS (default 100 and 400 MB/s)
#   tests/gpu/linerate.sh 2    two cores (taskset -c 0,1): one big multi-block
#                              archive (libcublas at 1/4), loopback and 20 MB/s
# With $DEST/libexec/cudaenv/cudaenv-full-before (another build's full binary,
# same libraries) the install rows run for it too, in the same run; with
# cudaenv-full-liblzma (make XZ=liblzma: liblzma's threaded decoder instead of
# ours, issue 40 item 5) its rows too.
# LR_ALTS="LABEL=PATH ..." from the caller: more builds' rows (e.g. another
# commit's full binary, built as DEVDEPS_BEFORE builds one).
# LR_REPEAT=N (default 5): N rounds of the floor and the loopback installs,
# the ratio's median printed (a single round's floor moves by ~20 %).
# Then: run(carry=[".devdeps/gpu"], command="tests/gpu/linerate.sh 16")
set -eu
cd "$(dirname "$0")/../.."
D=${DEST:-.devdeps/gpu}
OUT=${OUT:-/tmp/linerate-out}
mkdir -p "$OUT"
export LR_CUDAENV=$PWD/$D/bin/cudaenv LR_FULL=$PWD/$D/libexec/cudaenv/cudaenv-full
if [ -x "$D/libexec/cudaenv/cudaenv-full-before" ]; then
    export LR_BEFORE=$PWD/$D/libexec/cudaenv/cudaenv-full-before   # run as is (bench/linerate.sh inst)
fi
LR_ALTS=${LR_ALTS:-}
if [ -x "$D/libexec/cudaenv/cudaenv-full-liblzma" ]; then   # tests/gpu/devdeps.sh with DEVDEPS_LIBLZMA=1
    LR_ALTS="$LR_ALTS liblzma=$PWD/$D/libexec/cudaenv/cudaenv-full-liblzma"
fi
export LR_ALTS
export LR_SEEDS=${LR_SEEDS:-0} LR_REPEAT=${LR_REPEAT:-5}   # the seeds' way (92 s at scale 1) is in PERFORMANCE.md
nproc > "$OUT/machine.txt"; xz --version | head -1 >> "$OUT/machine.txt"; free -g | sed -n 2p >> "$OUT/machine.txt"
case "${1:-16}" in
16) LR_SCALE=1 LR_OUT=$OUT/rows16.txt bench/linerate.sh 2>&1 | tee "$OUT/log16.txt" ;;
2)  LR_BIG=1 LR_SCALE=4 LR_LINKS=${LR_LINKS:-20000000} LR_OUT=$OUT/rows2.txt \
        taskset -c 0,1 bench/linerate.sh 2>&1 | tee "$OUT/log2.txt" ;;
*)  echo "usage: tests/gpu/linerate.sh 16|2" >&2; exit 2 ;;
esac
