#!/usr/bin/env bash
# Line rate on this machine (issue 25): cudaenv install of the tf profile of
# CUDA 13.0 + cuDNN 9.14 from NVIDIA-layout component archives, against the
# floors, measured in the same run on the same archives:
#   seeds       the seeds' way: one tar -xJf after another
#   xz-T0-dc    every archive at once, xz -T0 -dc > /dev/null (decode floor)
#   xz-T0-tar   every archive at once, xz -T0 -dc | tar -x to disk
#               (decode + write floor)
#   install     cudaenv install from loopback (fresh CUDAENV_ROOT)
#   dl-loop     the plain parallel download below, from loopback (what the
#               server delivers at most)
#   dl@R        a plain parallel download (8 x curl, largest first) of the
#               very files the install fetches, through one shared link of R
#               bytes/s (httpd.py link=R: a token bucket across connections)
#   install@R   cudaenv install through that link
# Each row: wall, CPU % (100 = one core), the largest process's peak RSS,
# the process tree's peak RSS sum and threads (bench/lrtime.py).
# Archives: 18 components (the tf profile's, in redistrib_13.0.0.json) and
# the cuDNN tarball, each unpacked to 1.8x its published size / LR_SCALE
# (at scale 1: 19 archives, ~4.8 GB unpacked, libcublas ~1.5 GB) of this
# machine's real shared objects + 15% random bytes, packed the way xz -T0
# packs (24 MiB blocks: LR_XZ, default "-1 --block-size=24MiB": -6's blocks
# made 10x faster), generated once into $LR_DIR.
# Knobs: LR_SCALE (default 8), LR_LINKS (bytes/s, default "20000000" under 8
# cores, else "100000000 400000000"), LR_SEEDS=0 skips the seeds' row,
# LR_BIG=1 only libcublas (one big multi-block archive, no cuDNN),
# LR_BEFORE=cudaenv-full of another build: its install rows too ("before"),
# LR_ALTS="LABEL=cudaenv-full ...": more builds' install rows (install-LABEL;
# e.g. liblzma=a build of make XZ=liblzma: liblzma's threaded decoder),
# LR_OUT=file: the raw rows, LR_TRACE_DIR: a trace per row (lrtime.py),
# LR_REPEAT=N: N rounds of the floor and install rows (medians printed),
# LR_GEN_ONLY=1: generate the archives and stop, LR_ROWS=regex: only the
# rows whose label matches, LR_WRAP: a prefix for the cudaenv of the install
# rows (where it waits: "python3 bench/lrthreads.py" with THR_OUT=FILE, per
# thread CPU every 0.1 s; or "strace -f -c -o FILE").  Targets (PERFORMANCE.md): install <= 1.1x
# xz-T0-tar; install@R <= 1.1x max(dl@R, xz-T0-tar) (2 cores: 1.15x).
set -eu
cd "$(dirname "$0")/.."
REPO=$PWD
BUILD=${BUILD:-build}
SCALE=${LR_SCALE:-8}
CORES=$(nproc)
if [ "$CORES" -ge 8 ]; then LINKS=${LR_LINKS:-100000000 400000000}; else LINKS=${LR_LINKS:-20000000}; fi
CUDAENV=${LR_CUDAENV:-$REPO/$BUILD/bin/cudaenv}
FULL=${LR_FULL:-$REPO/$BUILD/libexec/cudaenv/cudaenv-full}
BIG=${LR_BIG:-0}
G=${LR_DIR:-$REPO/$BUILD/bench/linerate-$SCALE-$BIG}
W=$(mktemp -d "${LR_TMP:-${TMPDIR:-/tmp}}/cudaenv-lr.XXXXXX")
RES=${LR_OUT:-$W/results}
TESTS_DIR=$REPO/tests
source tests/lib/fixtures.sh
source tests/lib/server.bash
trap 'server_stop >/dev/null 2>&1; rm -rf "$W"' EXIT
: >> "$RES"

# "name raw_bytes" for the tf profile of 13.0.0 (+ cudnn), 1.8x the published size / SCALE
python3 - data/redist/cuda/redistrib_13.0.0.json data/redist/cudnn/redistrib_9.14.0.json \
    share/manifests/cudaenv.json "$SCALE" "$BIG" > "$W/plan" <<'PY'
import json, sys
j, c, m = (json.load(open(p)) for p in sys.argv[1:4])
scale, big = float(sys.argv[4]), sys.argv[5] == "1"
for n in m["profiles"]["tf"]["components"]:
    if n in j and "linux-x86_64" in j[n] and (not big or n == "libcublas"):
        print(n, int(int(j[n]["linux-x86_64"]["size"]) * 1.8 / scale))
if not big:
    print("cudnn", int(int(c["cudnn"]["linux-x86_64"]["cuda13"]["size"]) * 1.8 / scale))
PY
mapfile -t SOS < <(find /usr/local/cuda/lib64/ /usr/local/cuda-13.0/lib64/ /usr/lib/ ${LR_SO_DIRS:-} -name '*.so*' -type f -size +1M 2>/dev/null | sort -u)
[ "${#SOS[@]}" -gt 0 ] || { echo "linerate: no shared objects to fill the archives with" >&2; exit 1; }
fill() {  # fill FILE BYTES: real shared objects, then 15% random
    local f=$1 want=$2 i=${3:-0}
    : > "$f"
    while [ "$(stat -c %s "$f")" -lt $((want * 85 / 100)) ]; do
        cat "${SOS[$(( (i * 7 + ${#want}) % ${#SOS[@]} ))]}" >> "$f"; i=$((i + 1))
    done
    truncate -s $((want * 85 / 100)) "$f"
    head -c $((want * 15 / 100)) /dev/urandom >> "$f"
}
XZ=${LR_XZ:--1 --block-size=24MiB}
RED=$G/www/compute/cuda/redist
CTOP=cudnn-linux-x86_64-8.7.0.84_cuda11-archive
CREL=compute/cudnn/$CTOP.tar.xz
mkdir -p "$RED" "$G/www/compute/cudnn" "$W/gen"
fx_toolkit "$W/tk" 11.8.0 >/dev/null
t0=$(date +%s)
k=0
while read -r n s; do
    k=$((k + 1))
    if [ "$n" = cudnn ]; then
        out=$G/www/$CREL
        [ -s "$out" ] && continue
        fx_cudnn "$W/gen/$CTOP" 8.7.0.84 11
        fill "$W/gen/$CTOP/lib/libcudnn_bench.so.8" "$s" "$k"
        top=$CTOP
    else
        top=$n-linux-x86_64-11.8.89-archive
        out=$RED/$n/linux-x86_64/$top.tar.xz
        [ -s "$out" ] && continue
        mkdir -p "$W/gen/$top/lib" "$(dirname "$out")"
        echo "$n bench" > "$W/gen/$top/LICENSE"
        case $n in  # what makes a toolkit a toolkit (install checks nvcc, libcudart, versions)
            cuda_nvcc) cp -a "$W/tk/bin" "$W/gen/$top/" ;;
            cuda_cudart) cp -a "$W/tk/lib64"/libcudart* "$W/gen/$top/lib/"; cp -a "$W/tk/include" "$W/gen/$top/" ;;
        esac
        fill "$W/gen/$top/lib/$n.so.13" "$s" "$k"
    fi
    echo "generating $top ($((s >> 20)) MiB unpacked, xz $XZ)..." >&2
    # shellcheck disable=SC2086
    ( tar -C "$W/gen" --owner=0 --group=0 --numeric-owner -cf - "$top" | xz -T0 $XZ > "$out.tmp" &&
      mv "$out.tmp" "$out" && rm -rf "${W:?}/gen/$top" ) &
    [ "$(jobs -r | wc -l)" -ge 4 ] && wait -n
done < "$W/plan"
wait
rm -rf "$W/gen" "$W/tk"
echo "archives ready ($(( $(date +%s) - t0 )) s)" >&2
[ "${LR_GEN_ONLY:-0}" = 1 ] && exit 0
python3 - "$G/www" "$W/plan" "$CREL" "$BIG" > "$W/manifest.json" <<'PY'
import hashlib, json, os, sys
www, plan, crel, big = sys.argv[1:]
def art(rel):
    h = hashlib.sha256()
    with open(os.path.join(www, rel), "rb") as f:
        for b in iter(lambda: f.read(1 << 22), b""):
            h.update(b)
    return {"url": "BASE/" + rel, "sha256": h.hexdigest(), "size": os.path.getsize(os.path.join(www, rel))}
doc = {"release_date": "2025-08-04", "release_label": "11.8.0", "release_product": "cuda"}
names = []
for line in open(plan):
    n = line.split()[0]
    if n == "cudnn":
        continue
    names.append(n)
    rel = "%s/linux-x86_64/%s-linux-x86_64-11.8.89-archive.tar.xz" % (n, n)
    a = art("compute/cuda/redist/" + rel)
    doc[n] = {"name": n, "version": "11.8.89", "linux-x86_64": {"relative_path": rel, "sha256": a["sha256"], "size": str(a["size"])}}
jp = os.path.join(www, "compute/cuda/redist/redistrib_11.8.0.json")
json.dump(doc, open(jp, "w"), indent=1)
man = {"schema": 1, "profiles": {"tf": {"components": names}, "toolkit": {"components": names}},
       "cuda": {"11.8.0": {"redist": art("compute/cuda/redist/redistrib_11.8.0.json")}}}
if big != "1":
    man["tensorflow"] = {"2.14": {"cuda": "11.8.0", "cudnn": "8.7.0.84"}}
    man["cudnn"] = {"8.7.0.84": {"cuda11": {"linux-x86_64": art(crel)}}}
print(json.dumps(man))
PY
server_start "$G/www" >/dev/null
# answering before the first row (an install row first could find it not up yet)
for _ in $(seq 50); do curl -s -o /dev/null "$SERVER_URL/" && break; sleep 0.1; done
mkman() { sed "s|BASE|$1|g" "$W/manifest.json" > "$2"; }
mkman "$SERVER_URL" "$W/m-loop.json"
# the archives the install fetches, largest first
arcs=$(find "$G/www/compute" -name '*.tar.xz' -printf '%s %p\n' | sort -rn | awk '{print $2}')
narcs=$(echo "$arcs" | wc -l)
xzbytes=$(cat $arcs | wc -c)
T="python3 $REPO/bench/lrtime.py $RES"
clean() { rm -rf "$W/x" "$W/root"; sync; }
row() {  # row LABEL CMD...: measured, then the trees it wrote removed
    [[ $1 =~ ${LR_ROWS:-.} ]] || return 0
    clean
    LR_TRACE=${LR_TRACE_DIR:+$LR_TRACE_DIR/trace-$1.txt} LR_WATCH=$W/root/cache \
        $T "$1" -- "${@:2}" || echo "linerate: $1 failed (exit $?)" >&2
    clean
}
seeds() { local i=0 a; for a in $arcs; do i=$((i + 1)); mkdir -p "$W/x/$i"; tar -xJf "$a" -C "$W/x/$i"; done; }
atonce() {  # atonce tar|null: every archive at once through xz -T0
    local i=0 a pids=()
    for a in $arcs; do
        i=$((i + 1)); mkdir -p "$W/x/$i"
        if [ "$1" = tar ]; then (xz -T0 -dc "$a" | tar -x -C "$W/x/$i") & else xz -T0 -dc "$a" > /dev/null & fi
        pids+=($!)
    done
    wait "${pids[@]}"
}
download() {  # download BASE: 8 x curl, largest first, the bytes thrown away
    for a in $arcs; do echo "$1/${a#$G/www/}"; done | xargs -P8 -n1 curl -sf -o /dev/null
}
SPEC=tf-2.14
[ "$BIG" = 1 ] && SPEC=11.8.0   # CUDA alone: libcublas, no cuDNN
inst() {  # inst MANIFEST [FULL]: the full binary itself (as root CUDAENV_FULL is ignored)
    # shellcheck disable=SC2086
    CUDAENV_MANIFEST=$1 CUDAENV_ROOT=$W/root ${LR_WRAP:-} "${2:-$FULL}" -q install "$SPEC" >/dev/null
}
export -f seeds atonce download inst
export W G arcs CUDAENV FULL SPEC LR_WRAP
ALTS=${LR_BEFORE:+before=$LR_BEFORE}${LR_ALTS:+ $LR_ALTS}
alts() {  # alts SUFFIX MANIFEST: the other builds' install rows
    local a
    for a in $ALTS; do row "install-${a%%=*}$1" bash -c "inst $2 ${a#*=}"; done
}
row xz-T0-dc bash -c 'atonce null'
# LR_REPEAT rounds of the floor and the installs from loopback, each install
# compared with the floor of its round: between runs the floor alone moves
# by ~20 % on the H200 (5.3-6.8 s), so one round proves little
for _ in $(seq "${LR_REPEAT:-1}"); do
    row xz-T0-tar bash -c 'atonce tar'
    row install bash -c "inst $W/m-loop.json"
    alts "" "$W/m-loop.json"
done
row dl-loop bash -c "download $SERVER_URL"
for L in $LINKS; do
    mkman "$SERVER_URL/_/link=$L" "$W/m-$L.json"
    row "dl@$L" bash -c "download $SERVER_URL/_/link=$L"
    row "install@$L" bash -c "inst $W/m-$L.json"
    alts "@$L" "$W/m-$L.json"
done
[ "${LR_SEEDS:-1}" = 1 ] && row seeds bash -c seeds   # last: the longest, the least news

get() { awk -v l="$1" '$1 == l {v = $2} END {print v}' "$RES"; }
# the floor a row is compared with: the last before it (its round), else the first
floor=$(awk '$1 == "xz-T0-tar" {print $2; exit}' "$RES")
printf '\nbench/linerate.sh: %s cores, %s archive(s), %s MiB of xz (%s), 1/%s scale, %s\n' "$CORES" "$narcs" \
    "$((xzbytes >> 20))" "$XZ" "$SCALE" "$(awk '/MemTotal/ {printf "%.0f GiB RAM", $2 / 1048576}' /proc/meminfo)"
printf '  %-26s %8s %6s %9s %9s %9s %4s  %s\n' "way, same archives" "wall s" "CPU %" "maxRSS" "treeRSS" "treePSS" "thr" "ratio"
: > "$W/ratios"
while read -r l w c m t th ps; do
    ratio=
    case $l in
        xz-T0-tar) floor=$w ;;
        install*@*) L=${l#*@}; d=$(get "dl@$L")
            ratio=$(awk -v a="$w" -v d="$d" -v b="$floor" "BEGIN {f = d > b ? d : b; printf \"%.2fx max(download %.2f, floor)\", a / f, d}");;
        install|install-[!@]*) ratio=$(awk -v a="$w" -v b="$floor" "BEGIN {printf \"%.2fx decode+write floor\", a / b}")
            echo "$l ${ratio%%x*}" >> "$W/ratios" ;;
        seeds) ratio=$(awk -v a="$w" -v b="$floor" "BEGIN {printf \"%.2fx floor\", a / b}");;
    esac
    printf '  %-26s %8.2f %6s %5s MiB %5s MiB %5s MiB %4s  %s\n' "$l" "$w" "$c" "$m" "$t" "$ps" "$th" "$ratio"
done < "$RES"
for l in install $(for a in $ALTS; do echo "install-${a%%=*}"; done); do   # with several rounds: the ratio's median and range
    sort -k2 -n "$W/ratios" | awk -v l="$l" '$1 == l {v[n++] = $2}
        END {if (n > 1) printf "  %-26s median %.2fx of the floor of its round, %.2f-%.2fx over %d rounds\n",
             l, n % 2 ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1], n}'
done
