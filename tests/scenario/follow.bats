#!/usr/bin/env bats
# The archive unpacks while it downloads ("follow" mode) for every entry
# shape: the matrix of size present/absent x .tar.xz one block / several
# blocks / .tgz x a server that is fast / throttled (slower than the
# unpacker) / pauses mid-body then resumes / ignores Range (a garbage .part
# is left in the cache, so the one request asks for a Range and the server
# starts over from byte 0).  Every cell installs on the first try, requests
# the archive once, and composes the same files (same receipt).
# The archive is over 1 MiB (the download writes in 1 MiB pieces) so the
# unpacker catches up with the .part several times.
load ../lib/common
load ../lib/server

setup_file() {
    source "$BATS_TEST_DIRNAME/../lib/fixtures.sh"
    source "$BATS_TEST_DIRNAME/../lib/server.bash"
    export FM=$BATS_FILE_TMPDIR/mirror BASE=$BATS_FILE_TMPDIR/base RECEIPTS=$BATS_FILE_TMPDIR/receipts
    mkdir -p "$FM/one" "$FM/multi" "$FM/tgz" "$RECEIPTS"
    fx_runfile "$FM/cuda_11.8.0_520.61.05_linux.run" 11.8.0
    local w=$BATS_FILE_TMPDIR/w top=cudnn-linux-x86_64-8.7.0.84_cuda11-archive
    fx_cudnn "$w/$top" 8.7.0.84 11
    head -c 2600000 /dev/urandom > "$w/$top/lib/libcudnn_static_pad.a"
    tar -C "$w" --owner=0 --group=0 --numeric-owner -cf "$w/a.tar" "$top"
    xz -T1 -c "$w/a.tar" > "$FM/one/$top.tar.xz"
    xz -T2 --block-size=256KiB -c "$w/a.tar" > "$FM/multi/$top.tar.xz"
    gzip -c "$w/a.tar" > "$FM/tgz/cudnn-11.8-linux-x64-v8.7.0.84.tgz"
    rm -rf "$w"
    # CUDA 11.8.0 installed once: each cell adds only the cuDNN archive
    export CUDAENV_ROOT=$BASE CUDAENV_MANIFEST=$BATS_FILE_TMPDIR/base.json HOME=$BATS_FILE_TMPDIR/home
    mkdir -p "$HOME"
    server_start "$FM"
    follow_manifest "$SERVER_URL/one/$top.tar.xz" yes > "$CUDAENV_MANIFEST"
    "$CUDAENV" install 11.8.0 --no-cudnn >"$BATS_FILE_TMPDIR/base.log" 2>&1 \
        || { cat "$BATS_FILE_TMPDIR/base.log"; server_stop; return 1; }
    server_stop
}

# follow_manifest CUDNN_URL SIZED: CUDA 11.8.0 + cuDNN 8.7.0.84 (tf 2.14),
# the cuDNN entry with or without its size; the file is found by the URL's tail.
follow_manifest() {
    python3 - "$FM" "$1" "$2" "$SERVER_URL" <<'PY'
import hashlib, json, os, sys
fm, url, sized, server = sys.argv[1:]
def art(path, url, sized):
    a = {"url": url, "sha256": hashlib.sha256(open(path, "rb").read()).hexdigest()}
    if sized == "yes":
        a["size"] = os.path.getsize(path)
    return a
kind = url.rsplit("/", 2)[-2]
local = os.path.join(fm, kind, url.rsplit("/", 1)[-1])
run = os.path.join(fm, "cuda_11.8.0_520.61.05_linux.run")
m = {"schema": 1, "tensorflow": {"2.14": {"cuda": "11.8.0", "cudnn": "8.7.0.84"}},
     "cuda": {"11.8.0": {"min_driver": "520.61.05", "max_gcc": 11, "sm": {"min": "3.5", "max": "9.0"},
                         "runfile": {"linux-x86_64": art(run, server + "/" + os.path.basename(run), "yes")}}},
     "cudnn": {"8.7.0.84": {"cuda11": {"linux-x86_64": art(local, url, sized)}}}}
json.dump(m, sys.stdout)
PY
}

setup() {
    common_setup
    server_start "$FM"
    export CUDAENV_RETRY_DELAY_MS=10
}

teardown() {
    server_stop
    common_teardown
}

# cell KIND(one|multi|tgz) SIZED(yes|no) SERVER(fast|throttled|pause|norange)
cell() {
    local kind=$1 sized=$2 srv=$3
    local name=$kind-$sized-$srv file modes
    file=$(cd "$FM/$kind" && ls)
    case $srv in
        fast) modes="cell=$name" ;;
        throttled) modes="cell=$name,throttle=1500000" ;;
        pause) modes="cell=$name,pause=1.5" ;;
        norange) modes="cell=$name,norange" ;;
    esac
    cp -a "$BASE" "$CUDAENV_ROOT"
    export CUDAENV_MANIFEST=$T/manifest.json
    follow_manifest "$SERVER_URL/_/$modes/$kind/$file" "$sized" > "$CUDAENV_MANIFEST"
    if [ "$srv" = norange ]; then
        # a wrong .part from an earlier run: cudaenv asks for the rest, gets the whole file
        local sha; sha=$(sha256sum "$FM/$kind/$file" | cut -d' ' -f1)
        head -c $(($(stat -c %s "$FM/$kind/$file") / 2)) /dev/urandom > "$CUDAENV_ROOT/cache/$sha.part"
    fi
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; cat "$SERVER_LOG"; false; }
    [ "$(grep -c "^GET /_/cell=$name[,/]" "$SERVER_LOG")" -eq 1 ] || { cat "$SERVER_LOG"; false; }
    if [ "$srv" = norange ]; then grep -q "cell=$name.* range=bytes=.*status=200" "$SERVER_LOG"; fi
    local p=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    cmp "$p/lib64/libcudnn_static_pad.a" <(tar -xOf "$FM/$kind/$file" --wildcards '*/lib/libcudnn_static_pad.a')
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps([r["cuda"], r["cudnn"], r["files"]], sort_keys=True))' \
        "$p/.cudaenv-receipt.json" > "$RECEIPTS/$name"
    ! ls -d "$CUDAENV_ROOT"/pkgs/.staging-* "$CUDAENV_ROOT"/versions/.staging-* 2>/dev/null | grep -q .
}

@test "fixtures: one xz block, several xz blocks, gzip" {
    [ "$(xz -lv "$FM/one/"*.tar.xz | awk '/^ *Blocks:/ {print $2; exit}')" -eq 1 ]
    [ "$(xz -lv "$FM/multi/"*.tar.xz | awk '/^ *Blocks:/ {print $2; exit}')" -gt 1 ]
    gzip -t "$FM/tgz/"*.tgz
    [ "$(stat -c %s "$FM/one/"*.tar.xz)" -gt 2000000 ]
}

@test "follow: .tar.xz one block, size, fast" { cell one yes fast; }
@test "follow: .tar.xz one block, no size, fast" { cell one no fast; }
@test "follow: .tar.xz blocks, size, fast" { cell multi yes fast; }
@test "follow: .tar.xz blocks, no size, fast" { cell multi no fast; }
@test "follow: .tgz, size, fast" { cell tgz yes fast; }
@test "follow: .tgz, no size, fast" { cell tgz no fast; }
@test "follow: .tar.xz one block, size, throttled" { cell one yes throttled; }
@test "follow: .tar.xz one block, no size, throttled" { cell one no throttled; }
@test "follow: .tar.xz blocks, size, throttled" { cell multi yes throttled; }
@test "follow: .tar.xz blocks, no size, throttled" { cell multi no throttled; }
@test "follow: .tgz, size, throttled" { cell tgz yes throttled; }
@test "follow: .tgz, no size, throttled" { cell tgz no throttled; }
@test "follow: .tar.xz one block, size, pause then resume" { cell one yes pause; }
@test "follow: .tar.xz one block, no size, pause then resume" { cell one no pause; }
@test "follow: .tar.xz blocks, size, pause then resume" { cell multi yes pause; }
@test "follow: .tar.xz blocks, no size, pause then resume" { cell multi no pause; }
@test "follow: .tgz, size, pause then resume" { cell tgz yes pause; }
@test "follow: .tgz, no size, pause then resume" { cell tgz no pause; }
@test "follow: .tar.xz one block, size, Range ignored" { cell one yes norange; }
@test "follow: .tar.xz one block, no size, Range ignored" { cell one no norange; }
@test "follow: .tar.xz blocks, size, Range ignored" { cell multi yes norange; }
@test "follow: .tar.xz blocks, no size, Range ignored" { cell multi no norange; }
@test "follow: .tgz, size, Range ignored" { cell tgz yes norange; }
@test "follow: .tgz, no size, Range ignored" { cell tgz no norange; }

@test "follow: all 24 cells composed the same files (same receipt)" {
    [ "$(ls "$RECEIPTS" | wc -l)" -eq 24 ]
    [ "$(cat "$RECEIPTS"/* | sort -u | wc -l)" -eq 1 ]
}

@test "follow: a download that fails mid-archive is a download error (exit 4), not a bad archive" {
    cp -a "$BASE" "$CUDAENV_ROOT"
    export CUDAENV_MANIFEST=$T/manifest.json
    # every answer stops at byte 1500000 (1 MiB is in the .part, the unpacker
    # waits for more): the retries make no progress and the download fails
    follow_manifest "$SERVER_URL/_/truncate=1500000/one/$(cd "$FM/one" && ls)" no > "$CUDAENV_MANIFEST"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 4 ] || { echo "$output"; false; }
    [[ "$output" != *"not a readable archive"* ]]
    [ ! -e "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84" ]
}

@test "follow: a published archive that is not an archive: exit 5, and the message says the file matched its sha256" {
    cp -a "$BASE" "$CUDAENV_ROOT"
    export CUDAENV_MANIFEST=$T/manifest.json
    mkdir -p "$FM/bad"
    head -c 3000000 /dev/urandom > "$FM/bad/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz"
    follow_manifest "$SERVER_URL/bad/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz" no > "$CUDAENV_MANIFEST"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"not a readable archive"*"match the manifest"* ]] || { echo "$output"; false; }
    [ "$(grep -c "^GET /bad/" "$SERVER_LOG")" -eq 1 ]
    ! ls -d "$CUDAENV_ROOT"/pkgs/.staging-* 2>/dev/null | grep -q .
}
