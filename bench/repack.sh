#!/usr/bin/env bash
# A repacked site mirror (issue 41 item 3), on loopback, one run each
# (BENCH_RUNS for more, median): the tf profile of bench/components.sh (its
# archives, BENCH_SCALE, generated once) + cuDNN, mirrored three times:
#   plain       cudaenv mirror tf-2.14: NVIDIA's .tar.xz as they are
#   zstd        cudaenv mirror tf-2.14 --repack zstd (.tar.zst)
#   tar         cudaenv mirror tf-2.14 --repack tar (.tar)
# each served by one loopback server; a node installs tf-2.14 from each
# (a fresh root, the download cache empty), against
#   download    curl of the zstd mirror's archives, all at once
#   tar -x      every .tar of the tar mirror extracted at once (the floor:
#               no decoding at all), and zstd -dc | tar -x of every .tar.zst
# The rows run on the bare loopback and through one shared link of each of
# BENCH_LINKS bytes/s (default 400000000; httpd.py link=), where the floor
# is the download of the same files through that link.
# Issue 41's targets are for the H200 (16 cores; 400 MB/s and 1.25 GB/s:
# BENCH_LINKS="400000000 1250000000", through the device tool): install from
# the zstd mirror <= 1.1x the plain download of the same files.  On a 2-core
# machine the rows show the ratios, not the targets.  BENCH_FROM=DIR: the
# archives of bench/linerate.sh (DIR = its LR_DIR's www: xz -T0's 24 MiB
# blocks, 2.8 GB at its scale 1) instead of bench/components.sh's.
# BENCH_ALTS="LABEL=CMD;...": more install rows from the zstd mirror, each
# CMD a full binary with env's assignments before it (before=/old/cudaenv-full;
# nosync=LD_PRELOAD=/x/nosync.so /new/cudaenv-full; shm=CUDAENV_ROOT=
# /dev/shm/cudaenv-bench/root /new/cudaenv-full: that folder is made 0700 and
# removed here).  BENCH_TIMELINE=DIR: one more zstd install per link
# whose messages are stamped with seconds since its start (DIR/timeline-LINK).
# BENCH_LOOPBACK=0: only the links.
set -eu
cd "$(dirname "$0")/.."
REPO=$PWD
BUILD=${BUILD:-build}
SCALE=${BENCH_SCALE:-8}
RUNS=${BENCH_RUNS:-1}
CUDAENV=$REPO/$BUILD/bin/cudaenv
export CUDAENV_FULL=$REPO/$BUILD/libexec/cudaenv/cudaenv-full
if [ -n "${BENCH_FROM:-}" ]; then   # archives bench/linerate.sh made (its LR_DIR): xz -T0's blocks
    G=$(cd "$BENCH_FROM/.." && pwd)
else
    G=$REPO/$BUILD/bench/components-$SCALE
    BENCH_GEN_ONLY=1 BUILD=$BUILD BENCH_SCALE=$SCALE bench/components.sh   # the archives, once
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-bench-repack.XXXXXX")
TESTS_DIR=$REPO/tests
source tests/lib/fixtures.sh
source tests/lib/server.bash
trap 'server_stop >/dev/null 2>&1; rm -rf "$W" /dev/shm/cudaenv-bench' EXIT
case ${BENCH_ALTS:-} in */dev/shm/cudaenv-bench/*) mkdir -p -m 700 /dev/shm/cudaenv-bench ;; esac
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN {printf "%.3f\n", a - b}'; }   # no bc on the GPU machine
div() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f\n", a / b}'; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# the source: $G/www as NVIDIA, a manifest of its JSON + cuDNN (bench/components.sh's shape)
server_start "$G/www" >/dev/null
python3 - "$G/www" "$SERVER_URL" > "$W/source.json" <<'PY'
import hashlib, json, os, sys
www, base = sys.argv[1:3]
def art(rel):
    raw = open(os.path.join(www, rel), "rb").read()
    return {"url": base + "/" + rel, "sha256": hashlib.sha256(raw).hexdigest(), "size": len(raw)}
m = json.load(open("share/manifests/cudaenv.json"))
red = json.load(open(os.path.join(www, "compute/cuda/redist/redistrib_11.8.0.json")))
prof = dict(m["profiles"])   # the tf profile: the components this JSON has (linerate's archives: 13.0's)
prof["tf"] = dict(prof["tf"], components=[n for n in prof["tf"]["components"] if n in red])
print(json.dumps({"schema": 1, "updated": m["updated"], "profiles": prof,
    "tensorflow": {"2.14": {"cuda": "11.8.0", "cudnn": "8.7.0.84"}},
    "cuda": {"11.8.0": {"redist": art("compute/cuda/redist/redistrib_11.8.0.json")}},
    "cudnn": {"8.7.0.84": {"cuda11": {"linux-x86_64": art("compute/cudnn/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz")}}}}))
PY
export CUDAENV_MANIFEST=$W/source.json CUDAENV_ROOT=$W/mroot
mkdir -p "$W/srv"
"$CUDAENV" -q mirror tf-2.14 --to "$W/srv/plain"
t0=$(now); "$CUDAENV" -q mirror tf-2.14 --to "$W/srv/zstd" --repack zstd; tz=$(since "$t0")
t0=$(now); "$CUDAENV" -q mirror tf-2.14 --to "$W/srv/tar" --repack tar; tt=$(since "$t0")
server_stop
server_start "$W/srv" >/dev/null
# archives unpacked at once: the default a user gets (the cores, at most 16), unless
# BENCH_UNPACK_JOBS says (the first H200 run had 8 from bench/components.sh's setting)
export CUDAENV_MANIFEST_UNSIGNED=1 CUDAENV_RETRY_DELAY_MS=10
[ -z "${BENCH_UNPACK_JOBS:-}" ] || export CUDAENV_UNPACK_JOBS=$BENCH_UNPACK_JOBS

arcs() { find "$W/srv/$1/compute" -name "*$2" | sort; }
inst() {  # inst URL [CMD]: a fresh root and cache each time; prints seconds
    rm -rf "$W/root" /dev/shm/cudaenv-bench/root
    local t0; t0=$(now)
    # shellcheck disable=SC2086  # CMD: assignments and a binary, split on purpose
    CUDAENV_ROOT=$W/root CUDAENV_MANIFEST=$1 env ${2:-$CUDAENV} -q install tf-2.14 --insecure >/dev/null 2>"$W/err" ||
        { cat "$W/err" >&2; exit 1; }   # (the unsigned manifest's warning is expected: left out)
    since "$t0"
}
timeline() {  # timeline URL FILE: one install, each line it prints with its time since the start
    rm -rf "$W/root"
    local t0=${EPOCHREALTIME/./} l t
    CUDAENV_ROOT=$W/root CUDAENV_MANIFEST=$1 "$CUDAENV" -v install tf-2.14 --insecure 2>&1 |
        while IFS= read -r l; do
            t=$(( ${EPOCHREALTIME/./} - t0 ))
            printf '%4d.%03d %s\n' $((t / 1000000)) $((t / 1000 % 1000)) "$l"
        done > "$2"
    t=$(( ${EPOCHREALTIME/./} - t0 ))
    printf '%4d.%03d (the install returned)\n' $((t / 1000000)) $((t / 1000 % 1000)) >> "$2"
}
download() {  # download BASE MIRROR SUFFIX: every archive with curl in parallel
    local t0 a pids=()
    t0=$(now)
    for a in $(arcs "$2" "$3"); do curl -s -o /dev/null "$1/${a#$W/srv/}" & pids+=($!); done
    wait "${pids[@]}"
    since "$t0"
}
extract() {  # extract MIRROR SUFFIX CMD: every archive unpacked at once; seconds
    local t0 a i=0 pids=()
    rm -rf "$W/x"
    t0=$(now)
    for a in $(arcs "$1" "$2"); do
        i=$((i + 1)); mkdir -p "$W/x/$i"
        if [ "$3" = tar ]; then tar -xf "$a" -C "$W/x/$i" & else zstd -qdc "$a" | tar -x -C "$W/x/$i" & fi
        pids+=($!)
    done
    wait "${pids[@]}"
    since "$t0"
    rm -rf "$W/x"
}
row() {  # row BASE LABEL: the install rows and the floors through BASE
    local b=$1 f
    for f in p z t d x y; do : > "$W/t.$f"; done
    local alt i=0
    IFS=';' read -ra alts <<< "${BENCH_ALTS:-}"
    for alt in "${alts[@]}"; do i=$((i + 1)); : > "$W/t.a$i"; done
    for r in $(seq "$RUNS"); do
        i=0
        for alt in "${alts[@]}"; do i=$((i + 1)); inst "$b/zstd/cudaenv.json" "${alt#*=}" >> "$W/t.a$i"; done
        inst "$b/plain/cudaenv.json" >> "$W/t.p"
        inst "$b/zstd/cudaenv.json" >> "$W/t.z"
        inst "$b/tar/cudaenv.json" >> "$W/t.t"
        download "$b" zstd .tar.zst >> "$W/t.d"
        extract tar .tar tar >> "$W/t.x"
        extract zstd .tar.zst zstd >> "$W/t.y"
    done
    p=$(median < "$W/t.p"); z=$(median < "$W/t.z"); t=$(median < "$W/t.t")
    d=$(median < "$W/t.d"); x=$(median < "$W/t.x"); y=$(median < "$W/t.y")
    [ -z "${BENCH_TIMELINE:-}" ] || { mkdir -p "$BENCH_TIMELINE"; timeline "$b/zstd/cudaenv.json" "$BENCH_TIMELINE/timeline-${3:-loop}"; }
    printf '%s:\n' "$2"
    printf '  %-58s %9.2f\n' "install tf-2.14 from the plain mirror (.tar.xz)" "$p"
    printf '  %-58s %9.2f\n' "install tf-2.14 from the repacked mirror (.tar.zst)" "$z"
    printf '  %-58s %9.2f\n' "install tf-2.14 from the repacked mirror (.tar)" "$t"
    i=0
    for alt in "${alts[@]}"; do
        i=$((i + 1))
        printf '  %-58s %9.2f\n' "  the same (.tar.zst), ${alt%%=*}" "$(median < "$W/t.a$i")"
    done
    printf '  %-58s %9.2f\n' "download of the .tar.zst files (curl, all at once)" "$d"
    printf '  %-58s %9.2f\n' "floor: tar -x of every .tar at once" "$x"
    printf '  %-58s %9.2f\n' "zstd -dc | tar -x of every .tar.zst at once" "$y"
    printf '  zstd / plain = %.2f   zstd / download = %.2f   zstd / tar -x floor = %.2f   tar / tar -x floor = %.2f\n' \
        "$(div "$z" "$p")" "$(div "$z" "$d")" "$(div "$z" "$x")" "$(div "$t" "$x")"
}
size() { cat $(arcs "$1" "$2") | wc -c; }
printf '\nbench/repack.sh: %s, %s run(s), %s cores, %s archives (tf profile of redistrib_11.8.0.json + cuDNN)\n' \
    "${BENCH_FROM:+the archives of bench/linerate.sh in $BENCH_FROM}${BENCH_FROM:-1/$SCALE scale}" "$RUNS" "$(nproc)" "$(arcs plain .tar.xz | wc -l)"
printf '  bytes: .tar.xz %s, .tar.zst %s, .tar %s; repacking took %.2f s (zstd), %.2f s (tar)\n' \
    "$(numfmt --to=iec "$(size plain .tar.xz)")" "$(numfmt --to=iec "$(size zstd .tar.zst)")" \
    "$(numfmt --to=iec "$(size tar .tar)")" "$tz" "$tt"
[ "${BENCH_LOOPBACK:-1}" = 0 ] || row "$SERVER_URL" "loopback, unthrottled"
for l in ${BENCH_LINKS-400000000}; do
    row "$SERVER_URL/_/link=$l" "through one $((l / 1000000)) MB/s link (httpd.py link=$l, shared by all connections)" "$l"
done
