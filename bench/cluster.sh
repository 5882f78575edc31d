#!/usr/bin/env bash
# One toolchain (tf-2.14) onto NODES simulated nodes (each a private mount
# namespace with its own store at /opt/cudaenv, tests/lib/node.sh; separate
# CUDAENV_ROOTs when namespaces are unavailable), three ways, against a loopback "NVIDIA" server limited to RATE bytes/s per
# connection (a WAN link):
#   direct  every node downloads from the "NVIDIA" server
#   mirror  `cudaenv mirror` fetches once; the nodes install from a second,
#           unlimited loopback server serving the mirror directory (the LAN)
#   path    the same mirror directory used as a path (a shared filesystem)
# Prints wall time per phase and the bytes the "NVIDIA" server sent, counted
# from its request log (file size minus the Range start of each 200/206).
# FROM=redist (default, what install does): CUDA 11.8.0 has a redistrib JSON
# and the nodes install its tf profile's components; libcublas carries PAD_MB
# MiB of random data.  FROM=runfile: no JSON, the runfile is padded instead.
# Either way the mirror holds exactly what install fetches.
#   NODES=8 PAD_MB=64 RATE=52428800 bench/cluster.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
NODES=${NODES:-8} PAD_MB=${PAD_MB:-64} RATE=${RATE:-52428800} FROM=${FROM:-redist}
export TESTS_DIR=$PWD/tests CUDAENV_FULL=$PWD/$BUILD/libexec/cudaenv/cudaenv-full NO_COLOR=1
CUDAENV=$PWD/$BUILD/bin/cudaenv
source tests/lib/fixtures.sh
source tests/lib/server.bash
W=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-bench-cluster.XXXXXX")
trap 'server_stop; [ -n "${UP_PID:-}" ] && kill "$UP_PID" 2>/dev/null; rm -rf "$W"' EXIT

UP=$W/nvidia
fx_mirror "$UP" >/dev/null
if [ "$FROM" = redist ]; then
    source tests/lib/redist.sh
    FX_REDIST_BIG=$((PAD_MB * 1024 * 1024)) fx_redist "$UP" 11.8.0
    fx_mirror_manifest "$UP" "https://developer.download.nvidia.com" > "$UP/manifest-nvidia.json"
    fx_redist_manifest "$UP/manifest-nvidia.json" "$UP" 11.8.0 "https://developer.download.nvidia.com"
    PADDED=lib64/libcublasLt.so.11
    BIG=$(echo "$UP"/compute/cuda/redist/libcublas/linux-x86_64/*.tar.xz)
else
    # pad the 11.8.0 runfile: a toolkit tree with PAD_MB of incompressible data
    fx_toolkit "$W/tk" 11.8.0
    head -c $((PAD_MB * 1024 * 1024)) /dev/urandom > "$W/tk/lib64/libpadding.so.11.8.89"
    FX_RUNFILE_TREE=$W/tk FX_RUNFILE_COMP=--nocomp \
        fx_runfile "$UP/compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run" 11.8.0
    fx_mirror_manifest "$UP" "https://developer.download.nvidia.com" > "$UP/manifest-nvidia.json"
    PADDED=lib64/libpadding.so.11.8.89
    BIG=$UP/compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run
fi

server_start "$UP"
UP_URL=$SERVER_URL UP_LOG=$SERVER_LOG UP_PID=$SERVER_PID UP_STATE=$SERVER_STATE
unset SERVER_PID SERVER_STATE
export CUDAENV_MANIFEST=$UP/manifest-nvidia.json CUDAENV_MIRROR=$UP_URL/_/rate=$RATE

bytes_sent() {  # from the "NVIDIA" server's log
    python3 - "$UP" "$UP_LOG" <<'PY'
import os, re, sys
root, log = sys.argv[1], sys.argv[2]
total = 0
for line in open(log):
    m = re.match(r"GET /_/[^/]*/(\S+) range=(\S+) status=(\d+)", line)
    if not m or m.group(3) not in ("200", "206"):
        continue
    size = os.path.getsize(os.path.join(root, m.group(1)))
    r = re.match(r"bytes=(\d+)-", m.group(2))
    total += size - (int(r.group(1)) if r and m.group(3) == "206" else 0)
print(total)
PY
}
now() { date +%s.%N; }
# node DIR CMD...: run CMD as one node whose store is DIR
if tests/lib/node.sh "$W" -c true 2>/dev/null; then
    NODE_KIND="mount namespaces, store at /opt/cudaenv"
    node() { local d=$1; shift; mkdir -p "$d"; tests/lib/node.sh "$d" -c '"$@"' _ "$@"; }
else
    NODE_KIND="separate CUDAENV_ROOTs"
    node() { local d=$1; shift; CUDAENV_ROOT=$d "$@"; }
fi
secs() { python3 -c "print(f'{$2 - $1:.2f}')"; }
size=$(stat -c %s "$BIG")
echo "tf-2.14 onto $NODES nodes ($NODE_KIND) from $FROM; largest file ${BIG##*/} $size bytes; \"NVIDIA\" link $((RATE / 1048576)) MiB/s per connection"

: > "$UP_LOG"
t0=$(now)
for i in $(seq "$NODES"); do
    node "$W/direct/node$i" "$CUDAENV" -q install tf-2.14 2>/dev/null
done
t1=$(now)
direct_bytes=$(bytes_sent)
echo "direct: $(secs "$t0" "$t1") s for $NODES nodes; \"NVIDIA\" sent $direct_bytes bytes"

: > "$UP_LOG"
t0=$(now)
"$CUDAENV" -q mirror tf-2.14 --to "$W/site" 2>/dev/null
t1=$(now)
mirror_bytes=$(bytes_sent)
server_start "$W/site"   # the LAN: no rate limit
unset CUDAENV_MIRROR
for i in $(seq "$NODES"); do
    CUDAENV_MANIFEST_UNSIGNED=1 CUDAENV_MANIFEST=$SERVER_URL/cudaenv.json node "$W/mirror/node$i" "$CUDAENV" -q install tf-2.14 --insecure 2>/dev/null
done
t2=$(now)
echo "mirror: $(secs "$t0" "$t1") s to build the mirror + $(secs "$t1" "$t2") s for $NODES nodes = $(secs "$t0" "$t2") s; \"NVIDIA\" sent $mirror_bytes bytes"
t3=$(now)
for i in $(seq "$NODES"); do
    CUDAENV_MANIFEST=$W/site/cudaenv.json node "$W/path/node$i" "$CUDAENV" -q install tf-2.14 2>/dev/null
done
t4=$(now)
echo "path:   the same mirror as a shared directory: $(secs "$t3" "$t4") s for $NODES nodes; \"NVIDIA\" sent 0 more bytes ($(bytes_sent) in all)"
for i in $(seq "$NODES"); do
    for way in mirror path; do
        cmp -s "$W/direct/node$i/versions/11.8.0+cudnn8.7.0.84/$PADDED" \
               "$W/$way/node$i/versions/11.8.0+cudnn8.7.0.84/$PADDED" \
            || { echo "node $i: the $way install differs"; exit 1; }
    done
done
echo "all $NODES nodes identical all three ways"
mirror_files=$(find "$W/site" -type f ! -path "*/.cudaenv-mirror/*" ! -name cudaenv.json | wc -l)
echo "the mirror holds $mirror_files files ($FROM); mirror --check: $("$CUDAENV" -q mirror --check "$W/site" 2>&1 && echo ok)"
