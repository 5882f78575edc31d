#!/usr/bin/env bats
# Malicious cuDNN archives (built here with python3's tarfile), installed
# through the real pipeline with a manifest that pins their sha256: every
# one is refused with exit 5 naming the entry and the archive, nothing is
# written outside the staging directory (checked with find over all of $T),
# and no staging directory or package tree is left behind.
load ../lib/common

setup_file() {
    export RUNFILE=$BATS_FILE_TMPDIR/cuda_11.8.0_520.61.05_linux.run
    source "$BATS_TEST_DIRNAME/../lib/fixtures.sh"
    fx_runfile "$RUNFILE" 11.8.0
}

setup() {
    common_setup
    mkdir -p "$T/mirror" "$T/outside"
    cp "$RUNFILE" "$T/mirror/"
}

teardown() { common_teardown; }

# evil 'PYTHON' : an archive with a good cuDNN layout plus the entries the
# python snippet adds with add(name, type, **attrs); then the manifest.
evil() {
    python3 - "$T/mirror/evil.tar.xz" "$T" "$1" <<'PY'
import io, sys, tarfile
out, T, snippet = sys.argv[1], sys.argv[2], sys.argv[3]
top = "cudnn-linux-x86_64-8.7.0.84_cuda11-archive"
tf = tarfile.open(out, "w:xz", format=tarfile.GNU_FORMAT)
def add(name, kind=tarfile.REGTYPE, data=b"", **kw):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = kw.pop("mode", 0o644)
    for k, v in kw.items():
        setattr(ti, k, v)
    ti.size = len(data) if kind == tarfile.REGTYPE else 0
    tf.addfile(ti, io.BytesIO(data) if ti.size else None)
add(top + "/", tarfile.DIRTYPE, mode=0o755)
add(top + "/include/cudnn_version.h", data=b"#define CUDNN_MAJOR 8\n")
add(top + "/lib/libcudnn.so.8.7.0", data=b"\x7fELF fake")
exec(snippet)
tf.close()
PY
    local sha size
    sha=$(sha256sum "$T/mirror/evil.tar.xz" | cut -d' ' -f1)
    size=$(stat -c %s "$T/mirror/evil.tar.xz")
    local rsha rsize
    rsha=$(sha256sum "$T/mirror/cuda_11.8.0_520.61.05_linux.run" | cut -d' ' -f1)
    rsize=$(stat -c %s "$T/mirror/cuda_11.8.0_520.61.05_linux.run")
    cat > "$T/mirror/manifest.json" <<JSON
{ "schema": 1, "tensorflow": { "2.14": { "cuda": "11.8.0", "cudnn": "8.7.0.84" } },
  "cuda": { "11.8.0": { "runfile": { "linux-x86_64": {
      "url": "cuda_11.8.0_520.61.05_linux.run", "sha256": "$rsha", "size": $rsize } } } },
  "cudnn": { "8.7.0.84": { "cuda11": { "linux-x86_64": {
      "url": "evil.tar.xz", "sha256": "$sha", "size": $size } } } } }
JSON
    export CUDAENV_MANIFEST=$T/mirror/manifest.json
}

# install must fail with exit 5 naming $1, and leave nothing anywhere
refused() {
    local entry=$1
    find "$T" -path "$CUDAENV_ROOT" -prune -o -print | sort > "$T.before"
    run "$CUDAENV" install tf-2.14
    find "$T" -path "$CUDAENV_ROOT" -prune -o -print | sort > "$T.after"
    local diff; diff=$(diff "$T.before" "$T.after"); rm -f "$T.before" "$T.after"
    [ "$status" -eq 5 ] || { echo "status $status: $output"; return 1; }
    [[ "$output" == *"$entry"* ]] || { echo "entry $entry not named: $output"; return 1; }
    [[ "$output" == *"evil.tar.xz"* ]] || { echo "archive not named: $output"; return 1; }
    [ -z "$diff" ] || { echo "written outside the store: $diff"; return 1; }
    [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ] || return 1
    ! ls -d "$CUDAENV_ROOT"/pkgs/cudnn-* "$CUDAENV_ROOT"/pkgs/.staging-* "$CUDAENV_ROOT"/versions/.staging-* 2>/dev/null | grep -q . || return 1
    ! find "$CUDAENV_ROOT" -name 'evil*' -o -name passwd | grep -q . || { echo "evil file in the store"; return 1; }
}

@test "a good archive built the same way installs (the harness itself works)" {
    evil 'add(top + "/lib/libcudnn.so.8", tarfile.SYMTYPE, linkname="libcudnn.so.8.7.0", mode=0o777)'
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -L "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/lib64/libcudnn.so.8" ]
}

@test "../x is refused" {
    evil 'add(top + "/../../evil-dotdot", data=b"x")'
    refused "evil-dotdot"
}

@test "an entry outside the single top directory (../x) is refused" {
    evil 'add("../evil-up", data=b"x")'
    refused "evil-up"
}

@test "an absolute path is refused" {
    evil 'add(T + "/outside/evil-abs", data=b"x")'
    refused "evil-abs"
}

@test "a symlink to an absolute directory, then a file through it, is refused" {
    evil 'add(top + "/lib/etc", tarfile.SYMTYPE, linkname=T + "/outside", mode=0o777); add(top + "/lib/etc/evil-through", data=b"x")'
    refused "lib/etc"
    [ -z "$(ls -A "$T/outside")" ]
}

@test "a symlink ../../.. then a file through it is refused" {
    evil 'add(top + "/lib/up", tarfile.SYMTYPE, linkname="../../..", mode=0o777); add(top + "/lib/up/evil-up3", data=b"x")'
    refused "lib/up"
}

@test "a symlink into the tree, then a file written through it, is refused" {
    evil 'add(top + "/lib/inc", tarfile.SYMTYPE, linkname="../include", mode=0o777); add(top + "/lib/inc/evil-via", data=b"x")'
    refused "lib/inc/evil-via"
}

@test "a chain of links that each look harmless but resolve outside is refused" {
    evil 'add(top + "/r", tarfile.SYMTYPE, linkname=".", mode=0o777); add(top + "/evil-chain", tarfile.SYMTYPE, linkname="r/..", mode=0o777)'
    refused "evil-chain"
}

@test "a hardlink to a file outside the tree is refused" {
    evil 'add(top + "/lib/evil-hard", tarfile.LNKTYPE, linkname="/etc/passwd")'
    refused "evil-hard"
    evil 'add(top + "/lib/evil-hard2", tarfile.LNKTYPE, linkname=top + "/../../../etc/passwd")'
    refused "evil-hard2"
}

@test "a device node is refused" {
    evil 'add(top + "/lib/evil-dev", tarfile.CHRTYPE, devmajor=1, devminor=3)'
    refused "evil-dev"
    # by the entry policy, before anything reaches the disk (not by a failing mknod)
    [[ "$output" == *"evil-dev"*": device node"* ]]
}

@test "a FIFO is refused" {
    evil 'add(top + "/lib/evil-fifo", tarfile.FIFOTYPE)'
    refused "evil-fifo"
    [[ "$output" == *"evil-fifo"*": FIFO"* ]]
}

@test "a setuid file is refused, not silently stripped" {
    evil 'add(top + "/bin/evil-suid", data=b"#!/bin/sh\n", mode=0o4755)'
    refused "evil-suid"
    [[ "$output" == *setuid* ]]
}

@test "a corrupt archive (right sha256, broken xz) is refused with exit 5" {
    head -c 5000 /dev/urandom > "$T/mirror/evil.tar.xz.tmp"
    evil 'pass'
    mv "$T/mirror/evil.tar.xz.tmp" "$T/mirror/evil.tar.xz"
    sha=$(sha256sum "$T/mirror/evil.tar.xz" | cut -d' ' -f1)
    python3 - "$CUDAENV_MANIFEST" "$sha" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
a = m["cudnn"]["8.7.0.84"]["cuda11"]["linux-x86_64"]
a["sha256"], a["size"] = sys.argv[2], 5000
json.dump(m, open(sys.argv[1], "w"))
PY
    refused "evil.tar.xz"
}

# (re)pin the manifest's cuDNN entry to whatever evil.tar.xz now holds
repin() {
    python3 - "$CUDAENV_MANIFEST" "$T/mirror/evil.tar.xz" <<'PY'
import hashlib, json, os, sys
m = json.load(open(sys.argv[1]))
a = m["cudnn"]["8.7.0.84"]["cuda11"]["linux-x86_64"]
a["sha256"] = hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
a["size"] = os.path.getsize(sys.argv[2])
json.dump(m, open(sys.argv[1], "w"))
PY
}

@test "a valid .xz of two streams (cat a.xz b.xz), split inside a library: installed, the library whole" {
    evil 'add(top + "/lib/libcudnn_big.so.8.7.0", data=bytes(range(256)) * 4096)'
    # the same tar, cut in the middle of the 1 MiB library and compressed as two streams
    xz -dc "$T/mirror/evil.tar.xz" > "$T/a.tar"
    local half=$(($(stat -c %s "$T/a.tar") / 2))
    { head -c "$half" "$T/a.tar" | xz -c; tail -c +$((half + 1)) "$T/a.tar" | xz -c; } > "$T/mirror/evil.tar.xz"
    [ "$(xz -lv "$T/mirror/evil.tar.xz" | awk '/^ *Streams:/ {print $2; exit}')" -eq 2 ]
    repin
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    cmp "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/lib64/libcudnn_big.so.8.7.0" \
        <(tar -xOf "$T/a.tar" --wildcards '*/lib/libcudnn_big.so.8.7.0')
}

@test "many medium entries that each fit but together do not: refused before they fill the disk (exit 1, nothing installed)" {
    # 40 entries of 1 MiB (zeros: a tiny archive, so the install's own estimate fits), 20 MiB free
    evil 'for i in range(40): add(top + "/lib/libcudnn_part%02d.so" % i, data=bytes(1 << 20))'
    CUDAENV_TEST_FREE_BYTES=20971520 run seams "$CUDAENV" install tf-2.14
    [ "$status" -eq 1 ] || { echo "$output"; false; }
    [[ "$output" == *"evil.tar.xz expands to more than"*"and only 20971520 are free"* ]] || { echo "$output"; false; }
    [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    ! ls -d "$CUDAENV_ROOT"/pkgs/cudnn-* "$CUDAENV_ROOT"/pkgs/.staging-* 2>/dev/null | grep -q .
}
