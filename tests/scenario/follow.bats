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

load ../lib/hold

setup_file() {
    source "$BATS_TEST_DIRNAME/../lib/hold.bash"
    hold_setup_file || return 1
    export RECEIPTS=$BATS_FILE_TMPDIR/receipts
    mkdir -p "$FM/one" "$FM/multi" "$FM/tgz" "$FM/big" "$RECEIPTS"
    local w=$BATS_FILE_TMPDIR/w top=cudnn-linux-x86_64-8.7.0.84_cuda11-archive
    fx_cudnn "$w/$top" 8.7.0.84 11
    head -c 2600000 /dev/urandom > "$w/$top/lib/libcudnn_static_pad.a"
    tar -C "$w" --owner=0 --group=0 --numeric-owner -cf "$w/a.tar" "$top"
    xz -T1 -c "$w/a.tar" > "$FM/one/$top.tar.xz"
    xz -T2 --block-size=256KiB -c "$w/a.tar" > "$FM/multi/$top.tar.xz"
    gzip -c "$w/a.tar" > "$FM/tgz/cudnn-11.8-linux-x64-v8.7.0.84.tgz"
    # 20 MiB that do not compress: the download writes it in many writeback ranges
    head -c 20M /dev/urandom > "$w/$top/lib/libcudnn_static_pad.a"
    tar -C "$w" --owner=0 --group=0 --numeric-owner -cf - "$top" | xz -0 -T2 > "$FM/big/$top.tar.xz"
    rm -rf "$w"
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
    hold_manifest "$SERVER_URL/_/$modes/$kind/$file" "$sized" > "$CUDAENV_MANIFEST"
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
    no_staging
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

# A throttled .tgz (2.6 MiB at 500 kB/s; the download writes 1 MiB pieces): the
# unpacker, out of bytes after the first piece, goes on when the next one lands,
# so the padding library passes 1.5 MiB in staging while the .part is still there;
# an unpacker that waited for the whole file would stop at the first piece.
@test "follow: a throttled download is unpacked as its pieces land, not when it ends" {
    cp -a "$BASE" "$CUDAENV_ROOT"
    export CUDAENV_MANIFEST=$T/manifest.json
    local file sha pid seen= sz
    file=$(cd "$FM/tgz" && ls)
    sha=$(sha256sum "$FM/tgz/$file" | cut -d' ' -f1)
    hold_manifest "$SERVER_URL/_/throttle=500000/tgz/$file" yes > "$CUDAENV_MANIFEST"
    "$CUDAENV" install tf-2.14 > "$T/out" 2>&1 &
    pid=$!
    for _ in $(seq 600); do
        sz=$(find "$CUDAENV_ROOT" -path '*staging*' -name libcudnn_static_pad.a -printf '%s\n' 2>/dev/null | sort -n | tail -1)
        if [ "${sz:-0}" -gt 1572864 ] && [ -e "$CUDAENV_ROOT/cache/$sha.part" ]; then seen=1; break; fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    wait "$pid" || { cat "$T/out"; false; }
    [ -n "$seen" ] || { echo "the library never passed 1.5 MiB in staging while the .part was there"; false; }
    no_staging
}

@test "follow: a download that fails mid-archive is a download error (exit 4), not a bad archive" {
    cp -a "$BASE" "$CUDAENV_ROOT"
    export CUDAENV_MANIFEST=$T/manifest.json
    # every answer stops at byte 1500000 (1 MiB is in the .part, the unpacker
    # waits for more): the retries make no progress and the download fails
    hold_manifest "$SERVER_URL/_/truncate=1500000/one/$(cd "$FM/one" && ls)" no > "$CUDAENV_MANIFEST"
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
    hold_manifest "$SERVER_URL/bad/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz" no > "$CUDAENV_MANIFEST"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"not a readable archive: "*"match the manifest"* ]] || { echo "$output"; false; }
    [ "$(grep -c "^GET /bad/" "$SERVER_LOG")" -eq 1 ]
    no_staging
}

# The unpacker follows the .part from byte 0, so it reads what an earlier run
# left there while the one request is still unanswered (wait=1).  The server
# ignores Range and sends the whole file: the download starts over, and the
# unpacker must start over too.  The archive is a valid .xz without integrity
# checks (xz --check=none) and the stale .part differs from it only inside
# the library's bytes, so nothing but cudaenv's own rule (the .part truncated
# -> the watch's generation bumped -> the pass that read it lost) keeps stale
# bytes out of the tree; the final sha256 covers the new file only.
@test "a stale .part that differs inside a library, and a server that ignores Range: the library is the served file's, byte for byte" {
    local top=cudnn-linux-x86_64-8.7.0.84_cuda11-archive w=$T/w
    mkdir -p "$w" "$FM/nocheck"
    xz -dc "$FM/one/$top.tar.xz" > "$w/a.tar"
    xz -T1 --check=none -c "$w/a.tar" > "$FM/nocheck/$top.tar.xz"
    local file=$FM/nocheck/$top.tar.xz sha
    sha=$(sha256sum "$file" | cut -d' ' -f1)
    cp -a "$BASE" "$CUDAENV_ROOT"
    # 64 bytes flipped at a quarter of the file, where the stale copy still decodes (an
    # uncompressed LZMA2 chunk of the random padding): a library of different bytes
    python3 - "$file" "$w/stale.tar.xz" <<'PY'
import subprocess, sys
src = open(sys.argv[1], "rb").read()
for off in range(len(src) // 4, len(src) // 2, 4099):
    b = bytearray(src); b[off:off + 64] = bytes(x ^ 0xA5 for x in b[off:off + 64])
    r = subprocess.run(["xz", "-dc"], input=bytes(b), capture_output=True)
    if r.returncode == 0:
        open(sys.argv[2], "wb").write(b); sys.exit(0)
sys.exit("no offset decodes")
PY
    head -c $(($(stat -c %s "$file") / 2)) "$w/stale.tar.xz" > "$CUDAENV_ROOT/cache/$sha.part"
    ! cmp -s <(tar -xOf "$w/stale.tar.xz" --wildcards '*/lib/libcudnn_static_pad.a') \
              <(tar -xOf "$file" --wildcards '*/lib/libcudnn_static_pad.a') || false
    export CUDAENV_MANIFEST=$T/manifest.json
    hold_manifest "$SERVER_URL/_/stale,wait=1,norange/nocheck/$top.tar.xz" yes > "$CUDAENV_MANIFEST"
    run "$CUDAENV" -v install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; cat "$SERVER_LOG"; false; }
    grep -q "stale,wait=1,norange/.* range=bytes=.*status=200" "$SERVER_LOG"
    # the lost pass is not an error, but -v says it happened, and why
    [[ "$output" == *"$top.tar.xz: the unpacking that followed the download was lost ("*"); it is unpacked again from the verified file"* ]] ||
        { echo "$output"; false; }
    local p=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    [ "$(sha256sum < "$p/lib64/libcudnn_static_pad.a")" = \
      "$(tar -xOf "$file" --wildcards '*/lib/libcudnn_static_pad.a' | sha256sum)" ]
    [ "$(sha256sum < "$CUDAENV_ROOT/cache/$sha" | cut -d' ' -f1)" = "$sha" ]
    no_staging
}

# The unpacker opens the archive while the download thread makes it (it starts
# once the .part is there; unpack_read.c: the final name, else the .part, else
# wait): each race
# lost on purpose, by holding one side's open (tests/doubles/slowpath.c,
# whose log shows the race was taken).  Either way the one pass that follows
# the download unpacks the archive, the download's hash is the only one of it
# (a pass that gave up would unpack, and hash, the verified file again), and
# nothing is left behind.
race() { # race create|read MS [SERVER_MODES]: hold that side's opens of the .part for MS
    cp -a "$BASE" "$CUDAENV_ROOT"
    export CUDAENV_MANIFEST=$T/manifest.json CUDAENV_TEST_HASH_LOG=$T/hashes
    file=$(cd "$FM/tgz" && ls)
    sha=$(sha256sum "$FM/tgz/$file" | cut -d' ' -f1)
    url=tgz/$file
    [ -z "${3:-}" ] || url=_/$3/$url
    hold_manifest "$SERVER_URL/$url" yes > "$CUDAENV_MANIFEST"
    fx_slowpath "$T/slowpath.so"
    LD_PRELOAD=$SEAMS_SO:$T/slowpath.so CUDAENV_TEST_SLOW_OPEN=/cache/$sha.part CUDAENV_TEST_SLOW_OPEN_FLAGS=$1 \
        CUDAENV_TEST_SLOW_OPEN_MS=$2 CUDAENV_TEST_SLOW_OPEN_LOG=$T/opens ASAN_OPTIONS=$(fx_asan_preload_ok) \
        run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; cat "$T/opens"; false; }
    # byte-exact, hashed once (the download), unpacked once (the per-file
    # digest of the 2600000-byte library, taken as it is unpacked)
    local p=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    cmp "$p/lib64/libcudnn_static_pad.a" <(tar -xOzf "$FM/tgz/$file" --wildcards '*/lib/libcudnn_static_pad.a')
    [ "$(grep -cx "$(stat -c %s "$FM/tgz/$file")" "$T/hashes")" -eq 1 ] || { echo "archive hashed:"; cat "$T/hashes"; false; }
    [ "$(grep -cx 2600000 "$T/hashes")" -eq 1 ] || { echo "library hashed:"; cat "$T/hashes"; false; }
    [ "$(grep -c "^GET /$url " "$SERVER_LOG")" -eq 1 ] || { cat "$SERVER_LOG"; false; }
    cmp "$CUDAENV_ROOT/cache/$sha" "$FM/tgz/$file"
    [ ! -e "$CUDAENV_ROOT/cache/$sha.part" ]
    no_staging
}

@test "follow: the download makes the .part late: its unpacker starts once it is there, one pass, hashed once" {
    race create 500
    # one scheduler for every archive (install/unpackers.c): an unpacker starts
    # once its download made the .part, so no open of it comes before the held create
    [ "$(sed -n 1p "$T/opens")" = "create ok slow $CUDAENV_ROOT/cache/$sha.part" ] || { cat "$T/opens"; false; }
    [ "$(grep -c "^create ok slow " "$T/opens")" -eq 1 ] || { cat "$T/opens"; false; }
}

@test "follow: the .part is renamed between the unpacker's two opens: it opens the final name, one pass, hashed once" {
    # the server answers after 0.3 s, so the download cannot be over before
    # the unpacker's first look (at the final name); its open of the .part is
    # held 1 s: the download verified and renamed it meanwhile, and ended
    race read 1000 wait=0.3
    # the .part was made, then was gone when the held open of it went on
    [ "$(sed -n 1p "$T/opens")" = "create ok - $CUDAENV_ROOT/cache/$sha.part" ] || { cat "$T/opens"; false; }
    [ "$(sed -n 2p "$T/opens")" = "read ENOENT slow $CUDAENV_ROOT/cache/$sha.part" ] || { cat "$T/opens"; false; }
    [ "$(wc -l < "$T/opens")" -eq 2 ] || { cat "$T/opens"; false; }
}

@test "the download's writeback starts as it is written: the .part's fdatasync has at most the last 9 MiB left (issue 25)" {
    # without it the kernel starts writing a fast download ~30 s later, and the
    # install waited after the last byte for the sync of whole archives
    cp -a "$BASE" "$CUDAENV_ROOT"
    export CUDAENV_MANIFEST=$T/manifest.json
    file=$(cd "$FM/big" && ls)
    sha=$(sha256sum "$FM/big/$file" | cut -d' ' -f1)
    hold_manifest "$SERVER_URL/big/$file" yes > "$CUDAENV_MANIFEST"
    fx_writeback "$T/writeback.so"
    LD_PRELOAD=$T/writeback.so CUDAENV_TEST_WRITEBACK_LOG=$T/wb ASAN_OPTIONS=$(fx_asan_preload_ok) \
        run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    cmp "$CUDAENV_ROOT/cache/$sha" "$FM/big/$file"
    # the .part's ranges: from byte 0, each where the last ended, all before its fdatasync
    run awk -v p="$CUDAENV_ROOT/cache/$sha.part" -v size="$(stat -c %s "$FM/big/$file")" '
        BEGIN { end = 0 }
        $1 == "range" && $4 == p { if ($2 != end) bad = "range at " $2 ", expected " end
                                   if (synced) bad = "a range after the fdatasync"
                                   end = $2 + $3; n++ }
        $1 == "datasync" && $2 == p { synced++ }
        END { if (bad) print bad; else if (n < 2) print n " range(s)"; else if (synced != 1) print synced + 0 " fdatasync(s)"
              else if (size - end > 9 * 1048576) print "the fdatasync had " size - end " bytes left"; else print "ok" }' "$T/wb"
    [ "$output" = ok ] || { echo "$output"; cat "$T/wb"; false; }
}
