#!/usr/bin/env bash
# Component install vs runfile install (issue 10), on loopback, one run each
# (BENCH_RUNS for more, median):
#   components  cudaenv install tf-2.14: the tf profile's archives with the
#               real size distribution of NVIDIA's redistrib_11.8.0.json
#               (data/redist), scaled down BENCH_SCALE times (default 8),
#               built from real shared objects (+15% random bytes, xz -3, one
#               block each as NVIDIA's), + the cuDNN tarball at the same scale
#   runfile     cudaenv install tf-2.14 --from runfile: a makeself runfile
#               of the real runfile's size / BENCH_SCALE with a compressed
#               payload (BENCH_RUNFILE_COMP, default gzip: makeself's default;
#               xz or nocomp) sized so that the compressed runfile has that
#               size, unpacked and run as the real one is, + the same cuDNN
#   floor       max(download of the component + cuDNN bytes with curl in
#               parallel, xz -dc | tar -x of every archive / cores)
# Each row runs twice: on the bare loopback, and through one shared link of
# BENCH_LINK bytes/s (default 50 MB/s; httpd.py link=) where the smaller
# download counts as it does on a real line.
# Targets: components <= 0.35x runfile, <= 1.15x floor; peak RSS < 96 MiB
# with 8 archives unpacking at once (CUDAENV_UNPACK_JOBS=8).
# Archives are generated once into $BUILD/bench/components-<scale>/
# (BENCH_GEN_ONLY=1: only that, for bench/repack.sh).
set -eu
cd "$(dirname "$0")/.."
REPO=$PWD
BUILD=${BUILD:-build}
SCALE=${BENCH_SCALE:-8}
RUNS=${BENCH_RUNS:-1}
CUDAENV=$REPO/$BUILD/bin/cudaenv
export CUDAENV_FULL=$REPO/$BUILD/libexec/cudaenv/cudaenv-full
G=$REPO/$BUILD/bench/components-$SCALE
W=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-bench-comp.XXXXXX")
TESTS_DIR=$REPO/tests
source tests/lib/fixtures.sh
source tests/lib/server.bash
trap 'server_stop >/dev/null 2>&1; rm -rf "$W"' EXIT
RUNFILE_BYTES=4336730777 CUDNN_BYTES=886423308

# the tf profile of NVIDIA's 11.8.0 JSON: "name version size" lines
python3 - data/redist/cuda/redistrib_11.8.0.json share/manifests/cudaenv.json > "$W/plan" <<'PY'
import json, sys
j, m = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
p = m["profiles"]["tf"]["components"]
for n in p:
    if n in j and "linux-x86_64" in j[n]:
        print(n, j[n]["version"], j[n]["linux-x86_64"]["size"])
PY

# fill FILE BYTES: real shared objects, then 15% random (xz ratio near NVIDIA's)
mapfile -t SOS < <(find /usr/local/cuda-13.0/lib64 /usr/lib -name '*.so*' -type f -size +1M 2>/dev/null | sort)
fill() {
    local f=$1 want=$2 i=0
    : > "$f"
    while [ "$(stat -c %s "$f")" -lt $((want * 85 / 100)) ]; do
        cat "${SOS[$(( (i * 7 + ${#want}) % ${#SOS[@]} ))]}" >> "$f"; i=$((i + 1))
    done
    truncate -s $((want * 85 / 100)) "$f"
    head -c $((want * 15 / 100)) /dev/urandom >> "$f"
}
# each archive is made once (kept in $G); the JSON is rewritten from what is there
mkdir -p "$G/www/compute/cuda/redist" "$G/www/compute/cudnn" "$W/gen"
fx_toolkit "$W/tk" 11.8.0 >/dev/null
while read -r n v s; do
    top=$n-linux-x86_64-$v-archive
    out=$G/www/compute/cuda/redist/$n/linux-x86_64/$top.tar.xz
    [ -s "$out" ] && continue
    echo "generating $top at 1/$SCALE (once; kept in $G)..." >&2
    mkdir -p "$W/gen/$top/lib" "$(dirname "$out")"
    echo "$n bench" > "$W/gen/$top/LICENSE"
    case $n in  # what makes a toolkit a toolkit (install checks nvcc, libcudart, versions)
        cuda_nvcc) cp -a "$W/tk/bin" "$W/gen/$top/" ;;
        cuda_cudart) cp -a "$W/tk/lib64"/libcudart* "$W/gen/$top/lib/"; cp -a "$W/tk/include" "$W/gen/$top/" ;;
    esac
    fill "$W/gen/$top/lib/$n.so.11" $((s * 5 / 2 / SCALE))   # raw ~2.5x the archive
    ( tar -C "$W/gen" -cf - "$top" | xz -T1 -3 > "$out.tmp" && mv "$out.tmp" "$out" ) &
    [ "$(jobs -r | wc -l)" -ge "$(nproc)" ] && wait -n
done < "$W/plan"
wait
RCOMP=${BENCH_RUNFILE_COMP:-gzip}
RUN=cuda-$RCOMP.run
if [ ! -s "$G/www/$RUN" ]; then
    # the payload is as large, unpacked, as it must be for the compressed
    # runfile to have the real one's size / BENCH_SCALE: the ratio is taken
    # from a 64 MiB sample of the same fill
    echo "generating the runfile ($RCOMP payload) at 1/$SCALE..." >&2
    mkdir -p "$W/payload"
    cp -a "$W/tk/." "$W/payload/"
    fill "$W/payload/rest.bin" $((64 << 20))
    case $RCOMP in gzip) zc="gzip -c";; xz) zc="xz -T1 -c";; *) zc=cat;; esac
    zs=$($zc < "$W/payload/rest.bin" | wc -c)
    fill "$W/payload/rest.bin" $(( RUNFILE_BYTES / SCALE * (64 << 20) / zs ))
    FX_RUNFILE_TREE=$W/payload FX_RUNFILE_COMP=--$RCOMP fx_runfile "$G/www/$RUN" 11.8.0
    rm -rf "$W/payload"
fi
ctop=cudnn-linux-x86_64-8.7.0.84_cuda11-archive
if [ ! -s "$G/www/compute/cudnn/$ctop.tar.xz" ]; then
    echo "generating the cuDNN tarball at 1/$SCALE..." >&2
    fx_cudnn "$W/c/$ctop" 8.7.0.84 11
    fill "$W/c/$ctop/lib/libcudnn_bench.so.8" $((CUDNN_BYTES * 5 / 2 / SCALE))
    tar -C "$W/c" -cf - "$ctop" | xz -T1 -3 > "$G/www/compute/cudnn/$ctop.tar.xz"
    rm -rf "$W/c"
fi
rm -rf "$W/gen" "$W/tk"
python3 - "$G/www" "$W/plan" > "$G/www/compute/cuda/redist/redistrib_11.8.0.json" <<'PY'
import hashlib, json, os, sys
www, plan = sys.argv[1:]
doc = {"release_date": "2022-10-03", "release_label": "11.8.0", "release_product": "cuda"}
for line in open(plan):
    n, v, _ = line.split()
    rel = "%s/linux-x86_64/%s-linux-x86_64-%s-archive.tar.xz" % (n, n, v)
    raw = open(os.path.join(www, "compute/cuda/redist", rel), "rb").read()
    doc[n] = {"name": n, "version": v, "linux-x86_64": {"relative_path": rel, "sha256": hashlib.sha256(raw).hexdigest(),
                                                        "md5": hashlib.md5(raw).hexdigest(), "size": str(len(raw))}}
json.dump(doc, sys.stdout, indent=4)
PY
[ -n "${BENCH_GEN_ONLY:-}" ] && exit 0   # bench/repack.sh: the archives only
server_start "$G/www" >/dev/null
LINK=${BENCH_LINK:-50000000}   # the throttled rows: one shared link of LINK bytes/s
mkman() {  # mkman BASE OUT: the manifest with every URL under BASE
python3 - "$G/www" "$1" "$RUN" > "$2" <<'PY'
import hashlib, json, os, sys
www, base = sys.argv[1:3]
def art(rel):
    raw = open(os.path.join(www, rel), "rb").read()
    return {"url": base + "/" + rel, "sha256": hashlib.sha256(raw).hexdigest(), "size": len(raw)}
m = json.load(open("share/manifests/cudaenv.json"))
print(json.dumps({"schema": 1, "profiles": m["profiles"],
    "tensorflow": {"2.14": {"cuda": "11.8.0", "cudnn": "8.7.0.84"}},
    "cuda": {"11.8.0": {"runfile": {"linux-x86_64": art(sys.argv[3])},
                        "redist": art("compute/cuda/redist/redistrib_11.8.0.json")}},
    "cudnn": {"8.7.0.84": {"cuda11": {"linux-x86_64": art("compute/cudnn/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz")}}}}))
PY
}
mkman "$SERVER_URL" "$W/manifest.json"
mkman "$SERVER_URL/_/link=$LINK" "$W/manifest-link.json"
export CUDAENV_MANIFEST=$W/manifest.json CUDAENV_UNPACK_JOBS=8
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
inst() {  # inst ARGS...: a fresh root each time; prints seconds, leaves $W/rss
    export CUDAENV_ROOT=$W/root
    rm -rf "$W/root"
    local t0; t0=$(now)
    /usr/bin/time -f %M -o "$W/rss" "$CUDAENV" -q install tf-2.14 "$@" >/dev/null
    echo "$(now) - $t0" | bc
}
treemem() {  # an untimed install; prints the peak over 0.1 s samples of the
    # whole tree (cudaenv + its unpackers): sum of RSS, and of PSS (shared pages
    # counted once: the unpackers are forks of cudaenv), in KiB
    export CUDAENV_ROOT=$W/root
    rm -rf "$W/root"
    "$CUDAENV" -q install tf-2.14 >/dev/null &
    local pid=$! rss=0 pss=0 ids i a b
    while kill -0 "$pid" 2>/dev/null; do
        ids=$(ps -e -o pid=,ppid= | awk -v r="$pid" '{p[$1]=$2} END {
            for (i in p) { j=i; while (j in p && j != r && j > 1) j=p[j]; if (j == r) print i } }')
        a=0 b=0
        for i in $ids; do
            read -r x y < <(awk '/^Rss:/ {r=$2} /^Pss:/ {p=$2} END {print r+0, p+0}' "/proc/$i/smaps_rollup" 2>/dev/null) || continue
            a=$((a + x)) b=$((b + y))
        done
        [ "$a" -gt "$rss" ] && rss=$a
        [ "$b" -gt "$pss" ] && pss=$b
        sleep 0.1
    done
    wait "$pid"
    echo "$rss $pss"
}
arcs=$(find "$G/www/compute" -name '*.tar.xz' | sort)
download() {  # download BASE: seconds to fetch every archive with curl in parallel
    local t0 a pids=()
    t0=$(now)
    for a in $arcs; do curl -s -o /dev/null "$1/${a#$G/www/}" & pids+=($!); done
    wait "${pids[@]}"   # not a bare wait: the server is a background job too
    echo "$(now) - $t0" | bc
}
floor() {
    local t0 d x=0 a
    d=$(download "$SERVER_URL")
    for a in $arcs; do
        rm -rf "$W/x" && mkdir -p "$W/x"
        t0=$(now); xz -dc "$a" | tar -x -C "$W/x"; x=$(echo "$x + $(now) - $t0" | bc)
    done
    rm -rf "$W/x"
    echo "$d $x"
}
: > "$W/t.c"; : > "$W/t.r"; : > "$W/t.f"; : > "$W/t.cl"; : > "$W/t.rl"; : > "$W/t.dl"; rssmax=0
for r in $(seq "$RUNS"); do
    inst >> "$W/t.c"; rss=$(cat "$W/rss"); [ "$rss" -gt "$rssmax" ] && rssmax=$rss

    inst --from runfile >> "$W/t.r"
    floor >> "$W/t.f"
    CUDAENV_MANIFEST=$W/manifest-link.json inst >> "$W/t.cl"
    CUDAENV_MANIFEST=$W/manifest-link.json inst --from runfile >> "$W/t.rl"
    download "$SERVER_URL/_/link=$LINK" >> "$W/t.dl"
done
cl=$(median < "$W/t.cl"); rl=$(median < "$W/t.rl"); dll=$(median < "$W/t.dl")
c=$(median < "$W/t.c"); r=$(median < "$W/t.r")
dl=$(awk '{print $1}' "$W/t.f" | median); dec=$(awk '{print $2}' "$W/t.f" | median)
cores=$(nproc)
fl=$(echo "d=$dl; x=$dec / $cores; if (d > x) d else x" | bc -l)
cbytes=$(cat $arcs | wc -c); rbytes=$(( $(stat -c %s "$G/www/$RUN") + $(stat -c %s "$G/www/compute/cudnn/"*.tar.xz) ))
real_tf=$(awk '{s += $3} END {print s}' "$W/plan")
printf '\nbench/components.sh: 1/%s scale, %s run(s), %s cores, %s archives (tf profile of redistrib_11.8.0.json + cuDNN)\n' \
    "$SCALE" "$RUNS" "$cores" "$(echo "$arcs" | wc -l)"
printf '  %-52s %9s %12s\n' "" "seconds" "downloaded"
printf '  %-52s %9.2f %12s\n' "runfile: install tf-2.14 --from runfile (+ cuDNN)" "$r" "$(numfmt --to=iec "$rbytes")"
printf '  %-52s %9.2f %12s\n' "components: install tf-2.14 (tf profile + cuDNN)" "$c" "$(numfmt --to=iec "$cbytes")"
printf '  %-52s %9.2f %12s\n' "floor: max(download $dl s, decode $dec s / $cores)" "$fl" ""
printf 'components / runfile = %.2f (target <= 0.35)   components / floor = %.2f (target <= 1.15)   peak RSS = %d MiB (target < 96; largest process)\n' \
    "$(echo "$c / $r" | bc -l)" "$(echo "$c / $fl" | bc -l)" "$((rssmax / 1024))"
read -r trss tpss < <(treemem)
printf 'whole process tree (cudaenv + %s unpackers, an untimed run sampled every 0.1 s): peak RSS sum %d MiB, peak PSS sum %d MiB\n' \
    "$CUDAENV_UNPACK_JOBS" "$((trss / 1024))" "$((tpss / 1024))"
fll=$(echo "d=$dll; x=$dec / $cores; if (d > x) d else x" | bc -l)
printf 'through one %s MB/s link (httpd.py link=%s, shared by all connections):\n' "$((LINK / 1000000))" "$LINK"
printf '  %-52s %9.2f %12s\n' "runfile: install tf-2.14 --from runfile (+ cuDNN)" "$rl" "$(numfmt --to=iec "$rbytes")"
printf '  %-52s %9.2f %12s\n' "components: install tf-2.14 (tf profile + cuDNN)" "$cl" "$(numfmt --to=iec "$cbytes")"
printf '  %-52s %9.2f %12s\n' "floor: max(download $dll s, decode $dec s / $cores)" "$fll" ""
printf 'components / runfile = %.2f (target <= 0.35)   components / floor = %.2f (target <= 1.15)\n' \
    "$(echo "$cl / $rl" | bc -l)" "$(echo "$cl / $fll" | bc -l)"
printf 'full scale, from NVIDIA'"'"'s sizes: tf profile %s bytes (%s) + cuDNN %s vs runfile %s + cuDNN: %.0f %% of the bytes\n' \
    "$real_tf" "$(numfmt --to=iec "$real_tf")" "$(numfmt --to=iec $CUDNN_BYTES)" "$(numfmt --to=iec $RUNFILE_BYTES)" \
    "$(echo "($real_tf + $CUDNN_BYTES) * 100 / ($RUNFILE_BYTES + $CUDNN_BYTES)" | bc -l)"
