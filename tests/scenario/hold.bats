#!/usr/bin/env bats
# Installs that hold on hostile inputs (issue 8): a tampered cache, write
# errors during extraction (a full tmpfs, a file size limit), xz and
# sparse-file bombs.  Each test adds one cuDNN archive to a copy of a store
# that already holds CUDA 11.8.0 (tests/lib/hold.bash).
load ../lib/common
load ../lib/server
load ../lib/hold

setup_file() {
    source "$BATS_TEST_DIRNAME/../lib/hold.bash"
    hold_setup_file || return 1
    local w=$BATS_FILE_TMPDIR/w top=cudnn-linux-x86_64-8.7.0.84_cuda11-archive
    mkdir -p "$FM/bomb" "$FM/big" "$FM/bigmb" "$w"
    # xz bomb: 128 MiB of zeros in about 20 KB
    fx_cudnn "$w/$top" 8.7.0.84 11
    truncate -s 128M "$w/$top/lib/libcudnn_bomb.so"
    tar -C "$w" -cf - "$top" | xz -1 > "$FM/bomb/xz.tar.xz"
    # sparse-file bomb: a 40 GiB hole in a few hundred bytes
    rm "$w/$top/lib/libcudnn_bomb.so"
    mkdir -p "$w/s/$top/lib"
    truncate -s 40G "$w/s/$top/lib/libcudnn_hole.so"
    tar -C "$w/s" --sparse -cf - "$top" | xz -9 > "$FM/bomb/sparse.tar.xz"
    # a normal archive with one 6 MiB file (zeros: a few KB compressed)
    head -c 6M /dev/zero > "$w/$top/lib/libcudnn_big.so"
    tar -C "$w" -cf - "$top" | xz -1 > "$FM/big/$top.tar.xz"
    # the same in 256 KiB blocks (xz -T2): the decoder writes the big file itself (xzsink.c)
    tar -C "$w" -cf - "$top" | xz -T2 -1 --block-size=256KiB > "$FM/bigmb/$top.tar.xz"
    # a GNU sparse file (data, a 4 MiB hole, data) in 256 KiB blocks: libarchive places its pieces
    rm "$w/$top/lib/libcudnn_big.so"
    mkdir -p "$FM/sparsemb"
    head -c 300000 /dev/urandom > "$w/$top/lib/libcudnn_sparse.so"
    head -c 300000 /dev/urandom | dd of="$w/$top/lib/libcudnn_sparse.so" bs=1M seek=5 conv=notrunc status=none
    sha256sum < "$w/$top/lib/libcudnn_sparse.so" > "$FM/sparsemb/sha"
    tar -C "$w" --sparse -cf - "$top" | xz -T2 -1 --block-size=256KiB > "$FM/sparsemb/$top.tar.xz"
    rm -rf "$w"
}

setup() {
    common_setup
    server_start "$FM"
    export CUDAENV_RETRY_DELAY_MS=10 CUDAENV_MANIFEST=$T/manifest.json
    cp -a "$BASE" "$CUDAENV_ROOT"
}

teardown() {
    server_stop
    common_teardown
}

# in_tmpfs SIZE SCRIPT: run bash SCRIPT in a private mount namespace where a
# SIZE tmpfs is mounted on $T/fs holding a copy of the store as $T/fs/root
# (CUDAENV_ROOT); it vanishes with the namespace.  Skips without namespaces.
in_tmpfs() {
    [ "$(id -u)" -eq 0 ] || skip "needs root for a private tmpfs"
    mkdir -p "$T/fs"
    unshare -m --propagation private true 2>/dev/null || skip "no mount namespaces"
    CUDAENV=$CUDAENV run unshare -m --propagation private bash -c '
        mount -t tmpfs -o size="$1" tmpfs "$2" || exit 77
        cp -a "$3" "$2/root" || exit 77
        export CUDAENV_ROOT=$2/root
        eval "$4"' _ "$1" "$T/fs" "$CUDAENV_ROOT" "$2"
    [ "$status" -ne 77 ] || skip "cannot mount a tmpfs"
}

@test "a same-size tampered runfile in the cache: exit 5, never executed, deleted; the rerun downloads it" {
    rm -rf "$CUDAENV_ROOT/pkgs/cuda-11.8.0" "$CUDAENV_ROOT/versions/11.8.0"
    hold_manifest "$SERVER_URL/plain/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz" yes > "$CUDAENV_MANIFEST"
    local run=$FM/cuda_11.8.0_520.61.05_linux.run sha
    sha=$(sha256sum "$run" | cut -d' ' -f1)
    local cached=$CUDAENV_ROOT/cache/$sha
    [ -f "$cached" ]
    { printf '#!/bin/sh\ntouch %s/pwned\nexit 0\n' "$T"; head -c "$(stat -c %s "$run")" /dev/zero | tr '\0' '#'; } \
        | head -c "$(stat -c %s "$run")" > "$cached"
    [ "$(stat -c %s "$cached")" -eq "$(stat -c %s "$run")" ]
    run "$CUDAENV" install 11.8.0 --no-cudnn
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"$sha"*"is not the file it is named after"* ]] || { echo "$output"; false; }
    [ ! -e "$T/pwned" ]
    [ ! -e "$cached" ]
    [ ! -e "$CUDAENV_ROOT/versions/11.8.0" ]
    [ "$(wc -l < "$SERVER_LOG")" -eq 0 ]
    run "$CUDAENV" install 11.8.0 --no-cudnn
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ ! -e "$T/pwned" ]
    cmp "$cached" "$run"
}

@test "a same-size tampered archive in the cache: exit 5, nothing installed from it" {
    local f=$FM/plain/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz sha
    hold_manifest "$SERVER_URL/plain/${f##*/}" yes > "$CUDAENV_MANIFEST"
    sha=$(sha256sum "$f" | cut -d' ' -f1)
    python3 - "$f" "$CUDAENV_ROOT/cache/$sha" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[-100] ^= 1; open(sys.argv[2], "wb").write(b)
PY
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [ ! -e "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84" ]
    [ ! -e "$CUDAENV_ROOT/pkgs/cudnn-8.7.0.84-cuda11" ]
    no_staging
}

@test "ENOSPC while extracting (free-space checks fooled, 4 MiB tmpfs): exit 1 naming ENOSPC and the file, nothing committed" {
    # one block (libarchive writes the file), 256 KiB blocks (the xz decoder does: file blocks)
    for fx in big bigmb; do
        hold_manifest "$SERVER_URL/$fx/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz" yes > "$CUDAENV_MANIFEST"
        in_tmpfs 4m 'CUDAENV_TEST_FREE_BYTES=1e12 seams "$CUDAENV" install tf-2.14; rc=$?
            ls -d "$CUDAENV_ROOT"/pkgs/.staging-* "$CUDAENV_ROOT"/versions/.staging-* 2>/dev/null | sed "s/^/LEFT: /"
            ls "$CUDAENV_ROOT/versions" "$CUDAENV_ROOT/pkgs" | sed "s/^/HAVE: /"; exit $rc'
        [ "$status" -eq 1 ] || { echo "$fx: $output"; false; }
        [[ "$output" == *"cannot write lib/libcudnn_big.so"*"ENOSPC"* ]] || { echo "$fx: $output"; false; }
        [[ "$output" != *"LEFT: "* ]] || { echo "$fx: $output"; false; }
        [[ "$output" != *"HAVE: 11.8.0+cudnn"* && "$output" != *"HAVE: cudnn-"* ]] || { echo "$fx: $output"; false; }
    done
}

@test "ENOSPC, then space freed while the install fails (8 MiB tmpfs, a filler removed once the write failed): still exit 1, nothing committed" {
    hold_manifest "$SERVER_URL/big/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz" yes > "$CUDAENV_MANIFEST"
    in_tmpfs 8m 'avail=$(df -k --output=avail "$CUDAENV_ROOT" | tail -1)
        head -c $(( (avail - 1024) * 1024 )) /dev/zero > "$CUDAENV_ROOT/../filler"
        # the filler is removed once the write has failed (the install says ENOSPC), while
        # the install is still running: a watcher polling for a full disk missed it when the
        # unpacker cleaned up within a few ms
        shopt -s lastpipe
        { CUDAENV_TEST_FREE_BYTES=1e12 seams "$CUDAENV" install tf-2.14 2>&1; echo "RC $?"; } |
            while IFS= read -r l; do
                case $l in
                    "RC "*) rc=${l#RC }; continue;;
                    *ENOSPC*) [ -e "$CUDAENV_ROOT/../filler" ] && rm -f "$CUDAENV_ROOT/../filler" && echo FREED;;
                esac
                echo "$l"
            done
        ls -d "$CUDAENV_ROOT"/pkgs/.staging-* "$CUDAENV_ROOT"/versions/.staging-* 2>/dev/null | sed "s/^/LEFT: /"
        ls "$CUDAENV_ROOT/versions" "$CUDAENV_ROOT/pkgs" | sed "s/^/HAVE: /"; exit $rc'
    [ "$status" -eq 1 ] || { echo "$output"; false; }
    [[ "$output" == *FREED* ]] || { echo "$output"; false; }
    [[ "$output" == *"libcudnn_big.so"*"ENOSPC"* ]] || { echo "$output"; false; }
    [[ "$output" != *"LEFT: "* ]] || { echo "$output"; false; }
    [[ "$output" != *"HAVE: 11.8.0+cudnn"* && "$output" != *"HAVE: cudnn-"* ]] || { echo "$output"; false; }
}

@test "a write that fails while later ones succeed (EFBIG under ulimit -f): exit 1 naming the file, nothing committed" {
    for fx in big bigmb; do   # libarchive writes it; the xz decoder does (file blocks)
        hold_manifest "$SERVER_URL/$fx/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz" yes > "$CUDAENV_MANIFEST"
        run bash -c 'trap "" XFSZ; ulimit -f 4096; exec "$0" install tf-2.14' "$CUDAENV"
        [ "$status" -eq 1 ] || { echo "$fx: $output"; false; }
        [[ "$output" == *"cannot write lib/libcudnn_big.so"*"EFBIG"* ]] || { echo "$fx: $output"; false; }
        [ ! -e "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84" ]
        [ ! -e "$CUDAENV_ROOT/pkgs/cudnn-8.7.0.84-cuda11" ]
        no_staging
    done
}

@test "an xz bomb (128 MiB of zeros in 20 KB) on a 16 MiB tmpfs fails fast before writing it, no staging left" {
    hold_manifest "$SERVER_URL/bomb/xz.tar.xz" no > "$CUDAENV_MANIFEST"
    in_tmpfs 16m 'SECONDS=0; "$CUDAENV" install tf-2.14; rc=$?; echo "TOOK $SECONDS"
        ls -d "$CUDAENV_ROOT"/pkgs/.staging-* 2>/dev/null | sed "s/^/LEFT: /"; exit $rc'
    [ "$status" -eq 1 ] || { echo "$output"; false; }
    [[ "$output" == *"libcudnn_bomb.so"*"free"* ]] || { echo "$output"; false; }
    [[ "$output" != *"LEFT: "* ]]
    [ "$(sed -n 's/^TOOK //p' <<<"$output")" -lt 20 ]
}

@test "a sparse-file bomb (40 GiB hole in a few hundred bytes): refused at its header, with or without a size" {
    local f=$FM/bomb/sparse.tar.xz
    [ "$(stat -c %s "$f")" -lt 1024 ]
    hold_manifest "$SERVER_URL/bomb/sparse.tar.xz" yes > "$CUDAENV_MANIFEST"
    SECONDS=0
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"libcudnn_hole.so"*"bomb"* ]] || { echo "$output"; false; }
    [ "$SECONDS" -lt 20 ]
    no_staging
    # no size in the manifest: the ceiling without one (16 GiB) still holds
    rm -rf "$CUDAENV_ROOT"; cp -a "$BASE" "$CUDAENV_ROOT"
    hold_manifest "$SERVER_URL/bomb/sparse.tar.xz" no > "$CUDAENV_MANIFEST"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"libcudnn_hole.so"* ]] || { echo "$output"; false; }
    no_staging
    [ ! -e "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84" ]
}

# ---- bounded downloads (windows shortened by the test-only knobs) ----

PLAIN=plain/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz

@test "a GNU sparse file in a multi-block .tar.xz installs whole: its data where it was, the hole zeros" {
    local top=cudnn-linux-x86_64-8.7.0.84_cuda11-archive
    tar -tvf "$FM/sparsemb/$top.tar.xz" --sparse >/dev/null
    [ "$(xz --robot -l "$FM/sparsemb/$top.tar.xz" | awk '$1 == "totals" { print $3 }')" -gt 1 ]   # blocks
    hold_manifest "$SERVER_URL/sparsemb/$top.tar.xz" yes > "$CUDAENV_MANIFEST"
    run --separate-stderr "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    f=$(find "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/" -name libcudnn_sparse.so)
    [ -n "$f" ]
    [ "$(stat -L -c %s "$f")" -eq $((5 * 1048576 + 300000)) ]
    [ "$(sha256sum < "$f")" = "$(cat "$FM/sparsemb/sha")" ]
}

@test "a stall is retried with a message shown without -v: no data for N s from HOST, retrying (2/5)" {
    hold_manifest "$SERVER_URL/_/stall=4/$PLAIN" no > "$CUDAENV_MANIFEST"
    CUDAENV_STALL_TIMEOUT=1 run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"no data for 1 s from 127.0.0.1:"*", retrying (2/5)"* ]] || { echo "$output"; false; }
    grep -q "stall=4/$PLAIN range=bytes=1024- status=206" "$SERVER_LOG"
}

@test "a server trickling a byte every 0.5 s fails after one rate window (exit 4, names the rate), not a bad archive" {
    hold_manifest "$SERVER_URL/_/trickle=0.5/$PLAIN" no > "$CUDAENV_MANIFEST"
    SECONDS=0
    CUDAENV_RATE_WINDOW=3 run "$CUDAENV" install tf-2.14
    local took=$SECONDS
    [ "$status" -eq 4 ] || { echo "$output"; false; }
    [[ "$output" == *"127.0.0.1:"*"is too slow"*"bytes in the last 3 s"* ]] || { echo "$output"; false; }
    [[ "$output" != *"not a readable archive"* ]]
    [ "$took" -ge 3 ] && [ "$took" -lt 30 ] || false
    [ ! -e "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84" ]
    no_staging
}

@test "an endless stream without a size stops at the byte ceiling, its .part deleted (exit 4)" {
    hold_manifest "$SERVER_URL/_/endless/$PLAIN" no > "$CUDAENV_MANIFEST"
    SECONDS=0
    CUDAENV_FETCH_CEILING=$((8 << 20)) run "$CUDAENV" install tf-2.14
    [ "$status" -eq 4 ] || { echo "$output"; false; }
    [[ "$output" == *"sent more than 8388608 bytes"*"endless stream"* ]] || { echo "$output"; false; }
    [ "$SECONDS" -lt 30 ]
    ! ls "$CUDAENV_ROOT"/cache/*.part 2>/dev/null | grep -q . || false
    no_staging
}

@test "an endless stream that fills the disk (8 MiB tmpfs): ENOSPC, exit 1, the .part deleted so the disk is not left full" {
    hold_manifest "$SERVER_URL/_/endless/$PLAIN" no > "$CUDAENV_MANIFEST"
    in_tmpfs 8m '"$CUDAENV" install tf-2.14; rc=$?
        ls "$CUDAENV_ROOT"/cache/*.part 2>/dev/null | sed "s/^/LEFT: /"
        echo "FREE $(df -k --output=avail "$CUDAENV_ROOT" | tail -1)"; exit $rc'
    [ "$status" -eq 1 ] || { echo "$output"; false; }
    [[ "$output" == *"ENOSPC"*"partial download was deleted"* ]] || { echo "$output"; false; }
    [[ "$output" != *"LEFT: "* ]]
    [ "$(sed -n 's/^FREE *//p' <<<"$output")" -gt 4096 ]
}

@test "a download slower than its size-scaled deadline fails (exit 4) naming the URL" {
    hold_manifest "$SERVER_URL/_/throttle=300/$PLAIN" yes > "$CUDAENV_MANIFEST"
    CUDAENV_MIN_RATE=0 CUDAENV_DEADLINE_BASE=2 run "$CUDAENV" install tf-2.14
    [ "$status" -eq 4 ] || { echo "$output"; false; }
    [[ "$output" == *"throttle=300/$PLAIN did not finish in time"* ]] || { echo "$output"; false; }
    no_staging
}

@test "a server that cuts every connection short keeps the download's one deadline: exit 4 in bounded time, not an endless resume" {
    # every attempt brings 2000 new bytes (progress, so the attempts never run out) in about
    # 0.2 s; the whole file would take ~100 attempts: far past the ~3 s deadline (2 s base + size at
    # 256 KiB/s), which is the download's, counted from its first attempt, not each attempt's
    local top=cudnn-linux-x86_64-8.7.0.84_cuda11-archive w=$T/w
    fx_cudnn "$w/$top" 8.7.0.84 11
    head -c 300000 /dev/urandom > "$w/$top/lib/libcudnn_static_pad.a"
    mkdir -p "$FM/big"
    tar -C "$w" -cJf "$FM/big/$top.tar.xz" "$top"
    hold_manifest "$SERVER_URL/_/cut=2000,rate=10000/big/$top.tar.xz" yes > "$CUDAENV_MANIFEST"
    SECONDS=0
    CUDAENV_MIN_RATE=0 CUDAENV_DEADLINE_BASE=2 run timeout 60 "$CUDAENV" install tf-2.14
    [ "$status" -eq 4 ] || { tail -5 <<<"$output"; false; }
    [[ "$output" == *"cut=2000,rate=10000/big/$top.tar.xz did not finish in time ("* ]] || { tail -5 <<<"$output"; false; }
    [ "$SECONDS" -lt 15 ] || { echo "took $SECONDS s"; false; }
    [ "$(server_requests "cut=2000,rate=10000/.*status=20")" -ge 3 ]   # it did resume, more than once
    no_staging
}

# ---- strict manifests ----

@test "manifests: a second document, a URL with a space, a version key the store cannot name: exit 5 before any download" {
    local good=$T/good.json
    hold_manifest "$SERVER_URL/$PLAIN" yes > "$good"
    { cat "$good"; echo '{"schema": 1}'; } > "$CUDAENV_MANIFEST"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"data after the JSON document"* ]] || { echo "$output"; false; }
    sed 's|/plain/|/pl ain/|' "$good" > "$CUDAENV_MANIFEST"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"contains a space"* ]] || { echo "$output"; false; }
    # a 60-character CUDA key used to install a toolchain list/use/uninstall could not see
    local key=11.8.$(printf '0%.0s' $(seq 55))
    sed "s/\"11.8.0\"/\"$key\"/g" "$good" > "$CUDAENV_MANIFEST"
    run "$CUDAENV" install "$key" --no-cudnn
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"the version key is 60 characters; the store names at most 31"* ]] || { echo "$output"; false; }
    [ "$(wc -l < "$SERVER_LOG")" -eq 0 ]
}

# ---- the runfile under control ----

runfile_setup() {
    rm -rf "$CUDAENV_ROOT/pkgs/cuda-11.8.0" "$CUDAENV_ROOT/versions/11.8.0"
    hold_manifest "$SERVER_URL/$PLAIN" yes > "$CUDAENV_MANIFEST"
}

@test "runfile: its log keeps the head and the tail, with a line saying how much was left out" {
    runfile_setup
    FX_RUNFILE_SPAM=200000 CUDAENV_RUNFILE_LOG_CAP=65536 run "$CUDAENV" install 11.8.0 --no-cudnn
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    local log=$CUDAENV_ROOT/logs/cuda-11.8.0-runfile.log
    [ "$(stat -c %s "$log")" -le $((2 * 65536 + 200)) ]
    head -c 65536 "$log" | grep -q "^fixture installer: spam line 1$"
    grep -q "bytes of output left out here; the first 65536 and the last 65536 are kept" "$log"
    tail -c 65536 "$log" | grep -q "^fixture installer: spam line 200000$"
    tail -n 1 "$log" | grep -q "toolkit installed"
}

@test "runfile: past its deadline it is stopped with everything it started (exit 1, a clear message)" {
    runfile_setup
    SECONDS=0
    FX_RUNFILE_SLEEP=120 FX_RUNFILE_PIDS=$T/pids CUDAENV_RUNFILE_TIMEOUT=2 run "$CUDAENV" install 11.8.0 --no-cudnn
    [ "$status" -eq 1 ] || { echo "$output"; false; }
    [[ "$output" == *"installer"*"did not finish in 2 s and was stopped"* ]] || { echo "$output"; false; }
    [ "$SECONDS" -lt 60 ]
    pids_gone "$T/pids"
    [ ! -e "$CUDAENV_ROOT/versions/11.8.0" ]
    no_staging
}

@test "runfile: nothing it started survives a kill -9 of cudaenv" {
    runfile_setup
    FX_RUNFILE_SLEEP=120 FX_RUNFILE_PIDS=$T/pids "$CUDAENV" install 11.8.0 --no-cudnn >"$T/out" 2>&1 &
    local pid=$! i
    for i in $(seq 300); do [ -s "$T/pids" ] && break; sleep 0.1; done
    [ -s "$T/pids" ] || { cat "$T/out"; false; }
    kill -9 "$pid"
    wait "$pid" || true
    pids_gone "$T/pids"
}

@test "runfile: one that writes outside its toolkit path is reported" {
    runfile_setup
    FX_RUNFILE_OUTSIDE=$CUDAENV_SYSROOT/usr/local/cuda-11.8 run "$CUDAENV" install 11.8.0 --no-cudnn
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"installer created $CUDAENV_SYSROOT/usr/local/cuda-11.8, outside the toolkit path"* ]] || { echo "$output"; false; }
}

# ---- archive hygiene ----

# tarball KIND OUT: a cuDNN-shaped .tar.xz written by python's tarfile (pax):
# modes (0000, 0666, 0700 files, a 0777 directory), long (a 300-character
# component; a 4200-character path of short ones), deep (a file 4081
# characters below the top, past PATH_MAX once the staging directory's own
# path is added; then an entry climbing out, so the install fails).
tarball() {
    python3 - "$1" "$2" <<'PY'
import io, lzma, sys, tarfile
kind, out = sys.argv[1:]
top = "cudnn-linux-x86_64-8.7.0.84_cuda11-archive"
buf = io.BytesIO()
t = tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT)
def add(name, data=b"x", mode=0o644, typ=tarfile.REGTYPE):
    i = tarfile.TarInfo(name); i.mode = mode; i.type = typ
    if typ == tarfile.REGTYPE:
        i.size = len(data); t.addfile(i, io.BytesIO(data))
    else:
        t.addfile(i)
add(top, mode=0o755, typ=tarfile.DIRTYPE)
add(top + "/include/cudnn_version.h", b"#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 7\n#define CUDNN_PATCHLEVEL 0\n")
if kind == "modes":
    add(top + "/lib", mode=0o777, typ=tarfile.DIRTYPE)
    add(top + "/lib/zero.so", mode=0o000)
    add(top + "/lib/gw.so", mode=0o666)
    add(top + "/bin", mode=0o700, typ=tarfile.DIRTYPE)
    add(top + "/bin/tool", mode=0o700)
elif kind == "name":
    add(top + "/lib/" + "n" * 300)
elif kind == "path":
    add(top + "/" + "/".join(["dd"] * 1400) + "/x")
elif kind == "deep":
    p = top
    for i in range(40):
        p += "/" + str(i % 10) * 100
        add(p, mode=0o755, typ=tarfile.DIRTYPE)
    add(p + "/" + "y" * 40)
    add(top + "/../evil")
t.close()
open(out, "wb").write(lzma.compress(buf.getvalue()))
PY
}

@test "archive modes are normalised: dirs 0755, files 0644/0755 by the owner's x bit, 0000 readable" {
    mkdir -p "$FM/modes"; tarball modes "$FM/modes/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz"
    hold_manifest "$SERVER_URL/modes/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz" yes > "$CUDAENV_MANIFEST"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    local p=$CUDAENV_ROOT/pkgs/cudnn-8.7.0.84-cuda11
    [ "$(stat -c %a "$p/lib")" = 755 ]
    [ "$(stat -c %a "$p/bin")" = 755 ]
    [ "$(stat -c %a "$p/lib/zero.so")" = 644 ]
    [ "$(stat -c %a "$p/lib/gw.so")" = 644 ]
    [ "$(stat -c %a "$p/bin/tool")" = 755 ]
}

@test "archive entries past NAME_MAX or PATH_MAX are refused with exit 5 naming why" {
    local kind
    for kind in name path; do
        rm -rf "$CUDAENV_ROOT"; cp -a "$BASE" "$CUDAENV_ROOT"
        mkdir -p "$FM/$kind"; tarball "$kind" "$FM/$kind/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz"
        hold_manifest "$SERVER_URL/$kind/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz" yes > "$CUDAENV_MANIFEST"
        run "$CUDAENV" install tf-2.14
        [ "$status" -eq 5 ] || { echo "$output"; false; }
        [[ "$output" == *"longer than $( [ $kind = name ] && echo NAME_MAX || echo PATH_MAX)"* ]] || { echo "$output"; false; }
        no_staging
    done
}

@test "a staging tree whose paths pass PATH_MAX is removed after a refusal (removal works on directory fds)" {
    mkdir -p "$FM/deep"; tarball deep "$FM/deep/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz"
    hold_manifest "$SERVER_URL/deep/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz" yes > "$CUDAENV_MANIFEST"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"'..'"* ]] || { echo "$output"; false; }
    no_staging
    [ -z "$(ls -A "$CUDAENV_ROOT/pkgs" | grep -v '^cuda-11.8.0')" ]
}

@test "a stray file in pkgs/ does not stop the clean-up of unused packages" {
    # several, so that readdir meets one before the package whatever the hash order
    local f
    for f in a b c notes.txt x y z; do echo "my notes" > "$CUDAENV_ROOT/pkgs/$f"; done
    run "$CUDAENV" uninstall 11.8.0
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ ! -e "$CUDAENV_ROOT/pkgs/cuda-11.8.0" ]
    [ -f "$CUDAENV_ROOT/pkgs/notes.txt" ]
}
