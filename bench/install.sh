#!/usr/bin/env bash
# Installing a cuDNN-sized .tar.xz from a loopback server (PERFORMANCE.md §2),
# side by side in one run, median of BENCH_RUNS:
#   seeds     curl -o, then sha256sum, then tar -xJf (the manual procedure)
#   xz|tar    xz -dc | tar -x of the already-downloaded file (the decode floor)
#   cudaenv   cudaenv install (download, sha256 and unpack in one pass,
#             compose, receipt, commit), peak RSS from /usr/bin/time -v
# then the single-block archive through a throttled loopback link (BENCH_LINKS,
# MB/s, default "50 200"), seeds vs cudaenv, with the bound no installer
# beats on one xz block: max(download, `xz -dc >/dev/null`); and composing a second toolchain
# from an already-unpacked CUDA release of
# BENCH_FILES files (hardlinks).  Targets: <= 0.6x seeds, <= 1.15x xz|tar,
# RSS < 64 MiB, compose < 0.2 s.
#
# The archive is generated once and kept in $BUILD/bench/ (BENCH_RAW_MB of
# real shared objects from /usr/lib, mixed with some random data so xz's
# ratio is close to NVIDIA's ~2.5x), in two kinds, each measured: one xz
# block like a plain `tar -cJf` (decoded on one core), and many blocks like
# `xz -T2` writes (12 MiB blocks, decoded on several cores by cudaenv and by
# `xz -T0 -d`, also shown).  Whether NVIDIA's archives have several blocks
# is for `xz -lvv` on them to say.
set -eu
cd "$(dirname "$0")/.."
REPO=$PWD
BUILD=${BUILD:-build}
RAW_MB=${BENCH_RAW_MB:-2200}
RUNS=${BENCH_RUNS:-3}
FILES=${BENCH_FILES:-4000}
CUDAENV=$REPO/$BUILD/bin/cudaenv
export CUDAENV_FULL=$REPO/$BUILD/libexec/cudaenv/cudaenv-full
CACHE=$REPO/$BUILD/bench
W=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-bench.XXXXXX")
TESTS_DIR=$REPO/tests
source tests/lib/fixtures.sh
source tests/lib/server.bash
trap 'server_stop >/dev/null 2>&1; rm -rf "$W"' EXIT

top=cudnn-linux-x86_64-8.7.0.84_cuda11-archive
big=$CACHE/cudnn-bench-${RAW_MB}M.tar.xz
if [ ! -s "$big" ]; then
    echo "generating a ${RAW_MB} MB cuDNN-like archive (once; kept in $CACHE)..." >&2
    mkdir -p "$CACHE" "$W/gen/$top/include" "$W/gen/$top/lib"
    fx_cudnn "$W/fx" 8.7.0.84 11
    cp -a "$W/fx/include/." "$W/gen/$top/include/"
    mapfile -t sos < <(find /usr/lib /usr/local/cuda-13.0/lib64 -name '*.so*' -type f -size +1M 2>/dev/null | sort)
    total=0 i=0
    while [ $total -lt $((RAW_MB * 1024 * 1024)) ]; do
        # one "library" of ~64-200 MB: real code, plus 15% random bytes
        f=$W/gen/$top/lib/libcudnn_part$i.so.8.7.0
        : > "$f"
        while [ "$(stat -c %s "$f")" -lt $(( (64 + (i * 37) % 136) * 1024 * 1024 )) ]; do
            cat "${sos[$(( (i * 7 + RANDOM) % ${#sos[@]} ))]}" >> "$f"
        done
        head -c $(( $(stat -c %s "$f") * 15 / 100 )) /dev/urandom >> "$f"
        total=$((total + $(stat -c %s "$f"))); i=$((i + 1))
    done
    cp -a "$W/fx/lib/." "$W/gen/$top/lib/"
    tar -C "$W/gen" -cf - "$top" | xz -T1 -3 > "$big.tmp" && mv "$big.tmp" "$big"
    rm -rf "$W/gen" "$W/fx"
fi
# the same tar in many xz blocks
multi=$CACHE/cudnn-bench-${RAW_MB}M-mt.tar.xz
if [ ! -s "$multi" ]; then
    echo "recompressing it in 12 MiB blocks (xz -T2 -3; once)..." >&2
    xz -dc "$big" | xz -T2 -3 --block-size=12MiB > "$multi.tmp" && mv "$multi.tmp" "$multi"
fi
mkdir -p "$W/www"
fx_runfile "$W/www/cuda.run" 11.8.0
server_start "$W/www" >/dev/null
rsha=$(sha256sum "$W/www/cuda.run" | cut -d' ' -f1)
export CUDAENV_MANIFEST=$W/manifest.json

# serve $1 as cudnn.tar.xz, with a manifest naming its sha256 and size;
# URLP=_/rate=BPS/ serves it through a link of about BPS bytes a second
URLP=
serve() {
    rm -f "$W/www/cudnn.tar.xz"
    ln "$1" "$W/www/cudnn.tar.xz" 2>/dev/null || cp "$1" "$W/www/cudnn.tar.xz"
    size=$(stat -c %s "$1")
    local sha; sha=$(sha256sum "$1" | cut -d' ' -f1)
    cat > "$W/manifest.json" <<JSON
{ "schema": 1, "tensorflow": { "2.14": { "cuda": "11.8.0", "cudnn": "8.7.0.84" } },
  "cuda": { "11.8.0": { "runfile": { "linux-x86_64": {
      "url": "$SERVER_URL/cuda.run", "sha256": "$rsha", "size": $(stat -c %s "$W/www/cuda.run") } } } },
  "cudnn": { "8.7.0.84": { "cuda11": { "linux-x86_64": {
      "url": "$SERVER_URL/${URLP}cudnn.tar.xz", "sha256": "$sha", "size": $size } } } } }
JSON
}

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

seeds() {
    rm -rf "$W/s" && mkdir -p "$W/s/x"
    local t0; t0=$(now)
    curl -s -o "$W/s/c.tar.xz" "$SERVER_URL/${URLP}cudnn.tar.xz"
    sha256sum "$W/s/c.tar.xz" > /dev/null
    tar -xJf "$W/s/c.tar.xz" -C "$W/s/x"
    echo "$(now) - $t0" | bc
}
xztar() { # [xz options]
    rm -rf "$W/x" && mkdir -p "$W/x"
    local t0; t0=$(now)
    xz "$@" -dc "$W/www/cudnn.tar.xz" | tar -x -C "$W/x"
    echo "$(now) - $t0" | bc
}
xzdc() { # the decode alone, single-threaded, nothing written: no installer finishes sooner
    local t0; t0=$(now)
    xz -dc "$W/www/cudnn.tar.xz" > /dev/null
    echo "$(now) - $t0" | bc
}
cudaenv_install() {
    # the toolkit is already unpacked (as after any earlier 11.8 install):
    # what is timed is the cuDNN archive's download + verify + unpack + compose
    export CUDAENV_ROOT=$W/root
    rm -rf "$W/root/versions" "$W/root/cache" "$W/root/pkgs"/cudnn-*
    [ -d "$W/root/pkgs/cuda-11.8.0" ] || "$CUDAENV" -q install 11.8.0 --no-cudnn >/dev/null
    rm -rf "$W/root/versions" "$W/root/cache"
    local t0; t0=$(now)
    /usr/bin/time -f %M -o "$W/rss" "$CUDAENV" -q install tf-2.14
    echo "$(now) - $t0" | bc
}

echo "bench/install.sh: $RUNS runs, $(nproc) cores, liblzma $(xz --version | sed -n 's/^liblzma //p')"
ratio() { echo "scale=2; $1 / $2" | bc; }
rows=() summary=()
# measure KIND ARCHIVE: seeds, xz|tar (and xz -T0 for several blocks), cudaenv
measure() {
    local kind=$1 arc=$2 blocks r
    serve "$arc"
    blocks=$(xz -lv "$arc" | awk '/^ *Blocks:/ {print $2; exit}')
    echo "$kind: $(numfmt --to=iec "$size") .tar.xz, $blocks xz blocks (xz -l: $(xz -l "$arc" | awk 'NR==2{print $5, $6, "unpacked, ratio", $7}'))" >&2
    : > "$W/t.seeds"; : > "$W/t.xz"; : > "$W/t.xzmt"; : > "$W/t.ce"; : > "$W/t.rss"
    for r in $(seq "$RUNS"); do
        seeds >> "$W/t.seeds"
        xztar >> "$W/t.xz"
        [ "$blocks" -gt 1 ] && xztar -T0 >> "$W/t.xzmt"
        rm -rf "$W/s" "$W/x"
        cudaenv_install >> "$W/t.ce"
        cat "$W/rss" >> "$W/t.rss"
    done
    local s x c m rss
    s=$(median < "$W/t.seeds"); x=$(median < "$W/t.xz"); c=$(median < "$W/t.ce")
    rss=$(sort -n "$W/t.rss" | tail -1)
    [ -f "$W/root/versions/11.8.0+cudnn8.7.0.84/include/cudnn_version.h" ] || { echo "cudaenv install produced no toolchain" >&2; exit 1; }
    rows+=("$(printf '%-46s %10s %10s' "$kind: $(numfmt --to=iec "$size"), $blocks xz block(s)" "" "")")
    rows+=("$(printf '  %-44s %10.2f %10s' "seeds: curl -o; sha256sum; tar -xJf" "$s" "1.00")")
    rows+=("$(printf '  %-44s %10.2f %10s' "xz -dc | tar -x (decode floor, no download)" "$x" "$(ratio "$x" "$s")")")
    if [ "$blocks" -gt 1 ]; then
        m=$(median < "$W/t.xzmt")
        rows+=("$(printf '  %-44s %10.2f %10s' "xz -T0 -dc | tar -x (threaded decode)" "$m" "$(ratio "$m" "$s")")")
    fi
    rows+=("$(printf '  %-44s %10.2f %10s' "cudaenv install" "$c" "$(ratio "$c" "$s")")")
    summary+=("$(printf '%-8s cudaenv / seeds = %s (target <= 0.60)   cudaenv / xz|tar = %s (target <= 1.15)   peak RSS = %s MiB (target < 64)' \
        "$kind" "$(ratio "$c" "$s")" "$(ratio "$c" "$x")" "$((rss / 1024))")")
}
measure single "$big"
measure multi "$multi"

# a real link: the loopback server at ~50 and ~200 MB/s, single-block archive.
# The seeds pay download, then hash, then decode; cudaenv overlaps them.
for mbps in ${BENCH_LINKS:-50 200}; do
    URLP="_/rate=$((mbps * 1000 * 1000))/"
    serve "$big"
    : > "$W/t.seeds"; : > "$W/t.ce"; : > "$W/t.dc"
    for r in $(seq "$RUNS"); do
        seeds >> "$W/t.seeds"
        rm -rf "$W/s"
        xzdc >> "$W/t.dc"
        cudaenv_install >> "$W/t.ce"
    done
    s=$(median < "$W/t.seeds"); c=$(median < "$W/t.ce"); dc=$(median < "$W/t.dc")
    floor=$(echo "scale=2; $size / ($mbps * 1000 * 1000)" | bc)
    # one xz block decodes on one core: an installer that overlaps download,
    # hash and decode perfectly still takes max(download, decode)
    bound=$(echo "if ($dc > $floor) $dc else $floor" | bc)
    rows+=("$(printf '%-46s %10s %10s' "single, ~$mbps MB/s link (download alone >= ${floor} s)" "" "")")
    rows+=("$(printf '  %-44s %10.2f %10s' "seeds: curl -o; sha256sum; tar -xJf" "$s" "1.00")")
    rows+=("$(printf '  %-44s %10.2f %10s' "max(download, xz -dc >/dev/null): any installer" "$bound" "$(ratio "$bound" "$s")")")
    rows+=("$(printf '  %-44s %10.2f %10s' "cudaenv install" "$c" "$(ratio "$c" "$s")")")
    summary+=("$(printf 'link %-3s cudaenv / seeds = %s (target <= 0.60; bound for one xz block: %s)   cudaenv / bound = %s' \
        "$mbps" "$(ratio "$c" "$s")" "$(ratio "$bound" "$s")" "$(ratio "$c" "$bound")")")
done
URLP=

# compose a second toolchain from an unpacked release of $FILES files
export CUDAENV_ROOT=$W/croot
mkdir -p "$W/croot/pkgs"
fx_toolkit "$W/croot/pkgs/cuda-11.8.0" 11.8.0 >/dev/null
python3 - "$W/croot/pkgs/cuda-11.8.0" "$FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
# the shape of a real toolkit: a few hundred directories, mostly small
# headers, some big libraries (sparse: linking does not read data)
for i in range(n):
    d = os.path.join(root, "targets/x86_64-linux/include" if i % 3 else "nsight/lib", "d%02d" % (i % 200))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.h" % i), "wb") as f:
        f.truncate(200_000_000 if i % 400 == 0 else 4096)
PY
composed=()
for r in $(seq "$RUNS"); do
    rm -rf "$W/croot/versions"
    out=$("$CUDAENV" -v install 11.8.0 --no-cudnn 2>&1)
    composed+=("$(sed -n 's/.*composed \([0-9]*\) files.* in \([0-9.]*\) ms.*/\2/p' <<<"$out")")
done
nfiles=$(sed -n 's/.*composed \([0-9]*\) files.*/\1/p' <<<"$out")
cms=$(printf '%s\n' "${composed[@]}" | median)
tsize=$(du -sh --apparent-size "$W/croot/pkgs/cuda-11.8.0" | cut -f1)

printf '\n%-46s %10s %10s\n' "install a cuDNN-sized .tar.xz (loopback)" "median s" "ratio"
printf '%s\n' "${rows[@]}"
echo
printf '%s\n' "${summary[@]}"
printf 'compose a second toolchain: %s files (%s apparent) in %s ms   (target < 200 ms)\n' "$nfiles" "$tsize" "$cms"
