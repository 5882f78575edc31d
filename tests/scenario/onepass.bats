#!/usr/bin/env bats
# One-pass install of a cuDNN archive: each file's sha256 is computed while
# it is unpacked (pkgs/<tree>.sha256.json written by the unpacker), so the
# tree is never read back to hash it, and the receipt's per-file sha256s
# are those of the files on disk.
load ../lib/common
load ../lib/mirror
bats_require_minimum_version 1.5.0

setup_file() { mirror_setup_file; }

setup() {
    common_setup
    mirror_manifest "file://$MIRROR"
}
teardown() { common_teardown; }

@test "install: the cuDNN tree is hashed while unpacked, not re-read; receipt sha256s match the files" {
    run --separate-stderr "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ]
    # the runfile's tree is hashed after the installer ran; cuDNN's never is
    [[ "$stderr" == *"computing sha256 of every file in $CUDAENV_ROOT/pkgs/cuda-11.8.0"* ]]
    [[ "$stderr" != *"computing sha256 of every file in $CUDAENV_ROOT/pkgs/cudnn"* ]]
    [ -f "$CUDAENV_ROOT/pkgs/cudnn-8.7.0.84-cuda11.sha256.json" ]
    P=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    python3 - "$P" <<'PY'
import hashlib, json, os, sys
p = sys.argv[1]
r = json.load(open(os.path.join(p, ".cudaenv-receipt.json")))
n = 0
for f in r["files"]:
    got = hashlib.sha256(open(os.path.join(p, f["path"]), "rb").read()).hexdigest()
    assert got == f["sha256"], (f["path"], got, f["sha256"])
    n += "cudnn" in f["path"]
assert n > 0, "no cuDNN file in the receipt"
PY
}
