#!/usr/bin/env bats
# NCCL in the toolchain (issue 26): TensorFlow's and-cuda extra installs
# NVIDIA's nvidia-nccl wheel and XLA dlopens libnccl.so.2 for every
# multi-GPU collective, so a tf-X install takes the wheel the manifest's row
# names (a zip: only nvidia/nccl/lib and include, no Python side), pinned by
# sha256 without a size as the real pins are; --components -nccl leaves it
# out, +nccl adds it to a CUDA spec; info lists it; verify loads it from the
# toolchain (tests/doubles/nccl.c), reports its version, names a copy on
# LD_LIBRARY_PATH; a wheel that climbs or links out is refused.
load ../lib/common
load ../lib/server
load ../lib/mirror

setup_file() {
    mirror_setup_file
    source "$BATS_TEST_DIRNAME/../lib/redist.sh"
    fx_redist "$MIRROR" 11.8.0
}

setup() {
    common_setup
    source "$TESTS_DIR/lib/redist.sh"
    source "$TESTS_DIR/lib/nccl.sh"
    redist_setup
    fx_nccl_manifest "$CUDAENV_MANIFEST" "$MIRROR" "$SERVER_URL" 2.21.5
}

teardown() { mirror_teardown; }

P=11.8.0+cudnn8.7.0.84

# the receipt's file list after a test changed files (the doubles), its sources kept
edit_receipt_drop_nccl() {
    rm -f "$(readlink -f "$1/lib64/libnccl.so.2")" "$1/lib64/libnccl.so.2"
    python3 - "$1" <<'PY'
import json, sys
p = sys.argv[1] + "/.cudaenv-receipt.json"
r = json.load(open(p))
r["files"] = [f for f in r["files"] if "libnccl" not in f["path"]]
r["sources"] = [s for s in r["sources"] if s["kind"] != "nccl"]
json.dump(r, open(p, "w"))
PY
}

rereceipt() {
    python3 - "$1" <<'PY'
import hashlib, json, os, sys
p = sys.argv[1]
r = json.load(open(p + "/.cudaenv-receipt.json"))
for f in r["files"]:
    fp = os.path.join(p, f["path"])
    if os.path.isfile(fp):
        f["size"] = os.path.getsize(fp)
        f["sha256"] = hashlib.sha256(open(fp, "rb").read()).hexdigest()
json.dump(r, open(p + "/.cudaenv-receipt.json", "w"))
PY
}
WHEEL=pypi/nvidia_nccl_cu11-2.21.5-py3-none-manylinux2014_x86_64.whl

@test "CUDAENV_MIRROR serves the NCCL wheel too: NVIDIA's and PyPI's URLs both map to the mirror's paths (no request leaves it)" {
    # the manifest as shipped: NVIDIA URLs, the wheel on files.pythonhosted.org;
    # the mirror holds each file under its URL's path (the layout mirror --to writes)
    mkdir -p "$MIRROR/packages/c4/cb"
    cp "$MIRROR/$WHEEL" "$MIRROR/packages/c4/cb/${WHEEL#pypi/}"
    python3 - "$CUDAENV_MANIFEST" "$SERVER_URL" <<'PY'
import json, sys
p, base = sys.argv[1:3]
m = json.load(open(p))
def walk(o):
    if isinstance(o, dict):
        return {k: walk(v) for k, v in o.items()}
    if isinstance(o, list):
        return [walk(v) for v in o]
    if isinstance(o, str) and o.startswith(base + "/pypi/"):
        return "https://files.pythonhosted.org/packages/c4/cb/" + o[len(base + "/pypi/"):]
    if isinstance(o, str) and o.startswith(base + "/"):
        return "https://developer.download.nvidia.com/" + o[len(base + "/"):]
    return o
json.dump(walk(m), open(p, "w"), indent=1)
PY
    ! grep -q "$SERVER_URL" "$CUDAENV_MANIFEST" || false
    CUDAENV_MIRROR=$SERVER_URL run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -f "$CUDAENV_ROOT/versions/$P/lib64/libnccl.so.2" ]
    [ "$(server_requests "GET /packages/c4/cb/${WHEEL#pypi/}")" -eq 1 ]
    [[ "$output" != *"pythonhosted"* ]]
}

@test "tf-2.14 takes the row's NCCL wheel: libnccl.so.2 and nccl.h in the toolchain, no Python side, in the receipt" {
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    p=$CUDAENV_ROOT/versions/$P
    [ -f "$p/lib64/libnccl.so.2" ] && [ -f "$p/include/nccl.h" ] || false
    readelf -d "$(readlink -f "$p/lib64/libnccl.so.2")" | grep -q 'SONAME.*\[libnccl.so.2\]'
    ! find "$p/" -name '__init__.py' -o -name '*.dist-info' | grep -q . || false
    ! find "$p/" -path '*nvidia/nccl*' | grep -q . || false
    [ "$(server_requests "GET /$WHEEL")" -eq 1 ]
    python3 - "$p/.cudaenv-receipt.json" "$MIRROR/$WHEEL" <<'PY'
import hashlib, json, sys
r = json.load(open(sys.argv[1]))
n = [s for s in r["sources"] if s["kind"] == "nccl"]
assert len(n) == 1 and n[0]["url"].endswith("nvidia_nccl_cu11-2.21.5-py3-none-manylinux2014_x86_64.whl"), r["sources"]
assert n[0]["sha256"] == hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
assert any(f["path"] == "lib64/libnccl.so.2" for f in r["files"]), r["files"]
PY
    # what a framework's dlopen("libnccl.so.2") resolves in the toolchain's environment
    run "$CUDAENV" exec tf-2.14 -- python3 -c 'import ctypes, os; h = ctypes.CDLL("libnccl.so.2"); v = ctypes.c_int(); h.ncclGetVersion(ctypes.byref(v)); print(v.value)'
    [ "$status" -eq 0 ] && [ "${lines[-1]}" = 22105 ]
}

@test "--components -nccl leaves NCCL out and never fetches it; +nccl adds the newest for a CUDA spec" {
    run "$CUDAENV" install tf-2.14 --components -nccl
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ ! -e "$CUDAENV_ROOT/versions/$P/lib64/libnccl.so.2" ]
    [ "$(server_requests "GET /$WHEEL")" -eq 0 ]
    run "$CUDAENV" uninstall "$P"
    [ "$status" -eq 0 ]
    # a CUDA spec takes no NCCL unless asked
    run "$CUDAENV" install 11.8 --components +nccl
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -f "$CUDAENV_ROOT/versions/$P/lib64/libnccl.so.2" ]
    # a CUDA major without a build: a usage error naming it
    edit_manifest 'm["nccl"]["2.21.5"]["cuda12"] = m["nccl"]["2.21.5"].pop("cuda11")'
    edit_manifest 'del m["tensorflow"]["2.14"]["nccl"]'
    run "$CUDAENV" install 11.8 --components +nccl --force
    [ "$status" -eq 2 ]
    [[ "$output" == *"no NCCL built for CUDA 11 on linux-x86_64"* ]]
}

@test "info lists the row's NCCL with its wheel, sha256 and no size; --json too; -nccl drops it" {
    run "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"NCCL          2.21.5 (multi-GPU collectives"* ]]
    [[ "$output" == *"$SERVER_URL/$WHEEL"* ]]
    "$CUDAENV" info tf-2.14 --json 2>/dev/null |
        python3 -c 'import json,sys; d=json.load(sys.stdin)["nccl"]; assert d["version"] == "2.21.5" and d["wheel"]["size"] is None and len(d["wheel"]["sha256"]) == 64, d'
    "$CUDAENV" info tf-2.14 --json --components -nccl 2>/dev/null |
        python3 -c 'import json,sys; assert json.load(sys.stdin)["nccl"] is None'
    # the built-in manifest: TensorFlow 2.14 takes 2.21.5 (CUDA 11), 2.15-2.21 take 2.25.1, older rows none
    unset CUDAENV_MANIFEST
    export CUDAENV_PLATFORM=linux-x86_64
    for t in 2.14:2.21.5 2.15:2.25.1 2.21:2.25.1; do
        "$CUDAENV" info "tf-${t%%:*}" --json 2>/dev/null |
            python3 -c 'import json,sys; d=json.load(sys.stdin)["nccl"]; assert d["version"] == sys.argv[1] and "nvidia_nccl_cu" in d["wheel"]["url"], d' "${t#*:}"
    done
    "$CUDAENV" info tf-2.13 --json 2>/dev/null | python3 -c 'import json,sys; assert json.load(sys.stdin)["nccl"] is None'
}

@test "a wheel whose sha256 differs or that climbs out of nvidia/nccl: exit 5, no toolchain; a symlink entry stays a file" {
    fx_nccl_manifest "$CUDAENV_MANIFEST" "$MIRROR" "$SERVER_URL" 2.21.5 dotdot
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"nvidia_nccl_cu11-2.21.5"* ]]
    [ ! -e "$CUDAENV_ROOT/versions/$P" ] && [ ! -e "$CUDAENV_ROOT/escape.txt" ] && [ ! -e "$T/escape.txt" ] || false
    # a zip entry marked as a symlink to /etc/passwd: the streaming zip reader writes its bytes, never a link
    fx_nccl_manifest "$CUDAENV_MANIFEST" "$MIRROR" "$SERVER_URL" 2.21.5 symlink
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ ! -L "$CUDAENV_ROOT/versions/$P/lib64/libnccl.so" ] && [ "$(cat "$CUDAENV_ROOT/versions/$P/lib64/libnccl.so")" = /etc/passwd ] || false
    run "$CUDAENV" uninstall "$P"
    fx_nccl_manifest "$CUDAENV_MANIFEST" "$MIRROR" "$SERVER_URL" 2.21.5
    edit_manifest 'a = m["nccl"]["2.21.5"]["cuda11"]["linux-x86_64"]; a["sha256"] = "0" * 64'
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ]
    [ ! -e "$CUDAENV_ROOT/versions/$P" ]
}

@test "verify: NCCL loads from the toolchain with its version; a copy on LD_LIBRARY_PATH is named; none is a skip with the fix" {
    "$CUDAENV" install tf-2.14 >/dev/null 2>&1
    p=$CUDAENV_ROOT/versions/$P
    fx_fake_gpu "$p" "$T/drv"
    rereceipt "$p"
    export CUDAENV_TEST_LIBCUDA=$T/drv/libcuda.so.1; seams_on
    run "$CUDAENV" verify "$P" --json
    python3 -c 'import json,sys; s={x["id"]: x for x in json.load(sys.stdin)["steps"]}["nccl"]; assert s["status"] == "passed" and "NCCL 2.21.5" in s["summary"] and "one-GPU communicator" in s["summary"], s' <<<"$output"
    # NCCL fails on the GPU
    FAKE_NCCL_INIT=fail run "$CUDAENV" verify "$P"
    [ "$status" -eq 7 ]
    [[ "$output" == *"ncclCommInitAll on GPU 0 failed: unhandled cuda error"* ]]
    # another libnccl.so.2 first on LD_LIBRARY_PATH
    mkdir -p "$T/other"
    cp "$p/lib64/libnccl.so.2" "$T/other/"
    LD_LIBRARY_PATH=$T/other run "$CUDAENV" verify "$P" --json
    python3 -c 'import json,sys; s={x["id"]: x for x in json.load(sys.stdin)["steps"]}["nccl"]; assert "shadowed" in s["summary"] and "'"$T"'/other/libnccl.so.2" in "\n".join(s["evidence"]), s' <<<"$output"
    # the toolchain's file replaced by another version: the receipt says otherwise
    cc -shared -fPIC -Wl,-soname,libnccl.so.2 -DNCCL_CODE=22704 -o "$T/l.so" "$TESTS_DIR/doubles/nccl.c"
    cp --remove-destination "$T/l.so" "$(readlink -f "$p/lib64/libnccl.so.2")"
    rereceipt "$p"
    run "$CUDAENV" verify "$P"
    [ "$status" -eq 7 ]
    [[ "$output" == *"is NCCL 2.27.4, but its receipt installed 2.21.5"* ]]
    # no NCCL: skipped, and says how to add it
    edit_receipt_drop_nccl "$p"
    run "$CUDAENV" verify "$P" --json
    python3 -c 'import json,sys; s={x["id"]: x for x in json.load(sys.stdin)["steps"]}["nccl"]; assert s["status"] == "skipped" and "--components +nccl" in s["summary"], s' <<<"$output"
}

@test "verify --all-devices on two GPUs: an exact all-reduce across them, peer access per pair, NCCL_P2P_DISABLE named; a wrong sum fails" {
    "$CUDAENV" install tf-2.14 >/dev/null 2>&1
    p=$CUDAENV_ROOT/versions/$P
    fx_fake_gpu "$p" "$T/drv"
    rereceipt "$p"
    export CUDAENV_TEST_LIBCUDA=$T/drv/libcuda.so.1 FAKE_CUDA_DEVICES=2; seams_on
    step() { python3 -c 'import json,sys; s={x["id"]: x for x in json.load(sys.stdin)["steps"]}["nccl"]; print(s["status"]); print(s["summary"]); print("\n".join(s["evidence"]))'; }
    # (this fixture's nvcc and cuDNN are not GPU doubles: those steps fail; the nccl step is what is read)
    run "$CUDAENV" verify "$P" --all-devices --json
    out=$(step <<<"$output")
    [[ "$out" == passed* ]] && [[ "$out" == *"all-reduce across 2 GPUs exact"* ]] || false
    [[ "$out" == *"peer access GPU 0 <-> GPU 1: yes"* ]]
    [[ "$out" == *"all-reduce (sum) of 4194304 floats across 2 GPUs: every element exact on every GPU"* ]]
    # without --all-devices: the one-GPU check only
    run "$CUDAENV" verify "$P" --json
    [[ "$(step <<<"$output")" != *"across 2 GPUs"* ]]
    # a sum off by one on one GPU: exit 7, naming GPU, element and values
    FAKE_NCCL_WRONG=1 run "$CUDAENV" verify "$P" --all-devices --json
    [ "$status" -eq 7 ]
    out=$(step <<<"$output")
    [[ "$out" == failed* ]] && [[ "$out" == *"the all-reduce is wrong on GPU 1: element 3 is 13, not 12 (the sum of 2 GPUs)"* ]] || false
    # P2P off and no peer access: named with the fix, the sum still right
    NCCL_P2P_DISABLE=1 FAKE_CUDA_PEER=0 run "$CUDAENV" verify "$P" --all-devices --json
    out=$(step <<<"$output")
    [[ "$out" == passed* ]]
    [[ "$out" == *"NCCL_P2P_DISABLE=1 is set"*"unset NCCL_P2P_DISABLE"* ]] && [[ "$out" == *"peer access GPU 0 <-> GPU 1: no"* ]] || false
    # --bench adds the all-reduce's bus bandwidth
    run "$CUDAENV" verify "$P" --all-devices --bench --json
    python3 -c 'import json,sys; b=json.load(sys.stdin)["bench"]; assert b["allreduce_gpus"] == 2 and b["allreduce_busbw_gbs"] > 0, b' <<<"$output"
    # one GPU visible: the collective is skipped with the reason
    FAKE_CUDA_DEVICES=1 CUDA_VISIBLE_DEVICES=0 run "$CUDAENV" verify "$P" --all-devices --json
    [[ "$(step <<<"$output")" == *"collective skipped: one GPU visible (CUDA_VISIBLE_DEVICES=0 hides the others)"* ]]
}

@test "mirror tf-2.14 holds the row's NCCL wheel too; --check hashes it; a node installs NCCL from the mirror; -nccl leaves it and the row's field out" {
    M=$T/site
    run "$CUDAENV" mirror tf-2.14 --to "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    cmp "$MIRROR/$WHEEL" "$M/$WHEEL"
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); a=m["nccl"]["2.21.5"]["cuda11"]["linux-x86_64"]; assert a["url"] == sys.argv[2] and m["tensorflow"]["2.14"]["nccl"] == "2.21.5", m' "$M/cudaenv.json" "$WHEEL"
    run "$CUDAENV" mirror --check "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    # a tampered wheel of the same size is found
    python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[100]^=1; open(p,"wb").write(b)' "$M/$WHEEL"
    run "$CUDAENV" mirror --check "$M"
    [ "$status" -eq 5 ] && [[ "$output" == *"nvidia_nccl_cu11-2.21.5"* ]] || false
    run "$CUDAENV" mirror tf-2.14 --to "$M"      # the rerun replaces it
    [ "$status" -eq 0 ] && cmp "$MIRROR/$WHEEL" "$M/$WHEEL" || false
    server_stop   # the node has only the mirror
    CUDAENV_ROOT=$T/node CUDAENV_MANIFEST=$M/cudaenv.json run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -f "$T/node/versions/$P/lib64/libnccl.so.2" ]
    # a mirror made without NCCL: no wheel, and its 2.14 row names none (the manifest stays valid)
    redist_setup
    fx_nccl_manifest "$CUDAENV_MANIFEST" "$MIRROR" "$SERVER_URL" 2.21.5
    run "$CUDAENV" mirror tf-2.14 --to "$T/site2" --components -nccl
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ ! -e "$T/site2/$WHEEL" ]
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert "nccl" not in m["tensorflow"]["2.14"] and not m.get("nccl"), m' "$T/site2/cudaenv.json"
    run "$CUDAENV" info tf-2.14 --manifest "$T/site2/cudaenv.json"
    [ "$status" -eq 0 ]
}

@test "a CUDA spec's toolchain, then the TF row of the same name: install adds NCCL to it, says so, and list/info/the receipt name it" {
    run "$CUDAENV" install 11.8+cudnn8.7
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    p=$CUDAENV_ROOT/versions/$P
    [ ! -e "$p/lib64/libnccl.so.2" ]
    run --separate-stderr "$CUDAENV" info tf-2.14
    [[ "$output" == *"installed     yes, in $p: toolkit profile"* ]] || { echo "$output"; false; }
    [[ "$output" == *"install adds NCCL 2.21.5 (what this spec selects and it lacks)"* ]] || { echo "$output"; false; }
    run --separate-stderr "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"$P is installed without NCCL 2.21.5, which this install selects: adding it"* ]] || { echo "$stderr"; false; }
    [[ "$stderr" == *"added NCCL 2.21.5 to $P in $p (it holds: toolkit profile, NCCL 2.21.5)"* ]] || { echo "$stderr"; false; }
    [ -f "$p/lib64/libnccl.so.2" ] && [ -f "$p/include/nccl.h" ] && [ -f "$p/lib64/libnpp.so.11" ] || false
    [ "$(server_requests "GET /$WHEEL")" -eq 1 ]
    python3 - "$p/.cudaenv-receipt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["nccl"] == "2.21.5" and r["profile"] == "toolkit", (r["nccl"], r["profile"])
n = [s for s in r["sources"] if s["kind"] == "nccl"]
assert len(n) == 1 and n[0]["pkg"].startswith("nccl-2.21.5-cuda11-"), r["sources"]
assert any(f["path"] == "lib64/libnccl.so.2" for f in r["files"])
PY
    run --separate-stderr "$CUDAENV" list
    [[ "$output" == *"(toolkit profile, NCCL 2.21.5)"* ]] || { echo "$output"; false; }
    run --separate-stderr "$CUDAENV" info 11.8+cudnn8.7 --json
    python3 -c '
import json, sys
i = json.load(sys.stdin)["installed"]
assert i["holds"]["nccl"] == "2.21.5" and i["adds"] == [], i' <<<"$output"
    # the CUDA spec asks for no NCCL: nothing is removed, and the note says it is kept
    run --separate-stderr "$CUDAENV" install 11.8+cudnn8.7
    [[ "$stderr" == *"already installed"*"it also holds NCCL, which this install leaves out (kept"* ]] || { echo "$stderr"; false; }
    [ -f "$p/lib64/libnccl.so.2" ]
}

@test "cache list counts the NCCL tree a toolchain uses; prune and uninstalling another toolchain keep it; the next toolchain links the same tree" {
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    tree=$(find "$CUDAENV_ROOT/pkgs" -maxdepth 1 -type d -name "nccl-2.21.5-cuda11-*")
    [ -n "$tree" ] && [ -d "$tree" ] || false
    run --separate-stderr "$CUDAENV" cache list
    [[ "$output" =~ unpacked\ +[0-9.]+\ [KMG]?i?B\ +yes\ +nccl-2.21.5-cuda11- ]] || { echo "$output"; false; }
    run --separate-stderr "$CUDAENV" cache list --json
    python3 -c '
import json, sys
t = [x for x in json.load(sys.stdin)["items"] if x["name"].startswith("nccl-")]
assert len(t) == 1 and t[0]["used"] is True, t' <<<"$output"
    run --separate-stderr "$CUDAENV" cache prune
    [ "$status" -eq 0 ]
    [[ "$output" != *nccl* ]] || { echo "$output"; false; }
    [ -d "$tree" ]
    # a receipt written before sources named their tree: the tree named for the wheel's sha256 is its
    python3 - "$CUDAENV_ROOT/versions/$P/.cudaenv-receipt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for s in r["sources"]:
    s.pop("pkg", None)
json.dump(r, open(sys.argv[1], "w"))
PY
    run --separate-stderr "$CUDAENV" cache prune
    [ -d "$tree" ]
    run --separate-stderr "$CUDAENV" install 11.8 --no-cudnn --components +nccl
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    a=$CUDAENV_ROOT/versions/$P/lib64/libnccl.so.2 b=$CUDAENV_ROOT/versions/11.8.0/lib64/libnccl.so.2
    [ "$(stat -c %i "$(readlink -f "$a")")" = "$(stat -c %i "$(readlink -f "$b")")" ]
    [ "$(find "$CUDAENV_ROOT/pkgs" -maxdepth 1 -type d -name "nccl-*" | wc -l)" -eq 1 ]
    [ "$(server_requests "GET /$WHEEL")" -eq 1 ]
    # uninstalling one keeps the tree the other uses
    "$CUDAENV" -q uninstall 11.8.0
    [ -d "$tree" ]
    "$CUDAENV" -q uninstall "$P"
    [ ! -e "$tree" ]
}

# ---- every byte the wheel promises (issue 35): entries of unknown size, RECORD ----

# the installed toolchain's file REL holds exactly MEMBER of the wheel, and the receipt says so
same_as_wheel() {
    local rel=$1 member=$2 p=$CUDAENV_ROOT/versions/$P
    fx_nccl_member "$MIRROR/$WHEEL" "$member" > "$T/member"
    [ -s "$T/member" ] && cmp "$p/$rel" "$T/member" || { ls -l "$p/$rel" "$T/member"; return 1; }
    python3 - "$p/.cudaenv-receipt.json" "$rel" "$T/member" <<'PY'
import hashlib, json, sys
r, rel, m = sys.argv[1:4]
b = open(m, "rb").read()
f = [f for f in json.load(open(r))["files"] if f["path"] == rel]
assert len(f) == 1 and f[0]["size"] == len(b) and f[0]["sha256"] == hashlib.sha256(b).hexdigest(), f
PY
}

@test "a wheel in every shape producers write (streamed with data descriptors, zip64, stored, deflated, RECORD hashing its own line) installs byte-identical" {
    local shape
    for shape in streamed streamed,stored streamed,zip64 streamed,stored,zip64 zip64 stored "" record-hashed; do
        FX_NCCL_SHAPE=$shape fx_nccl_manifest "$CUDAENV_MANIFEST" "$MIRROR" "$SERVER_URL" 2.21.5
        run "$CUDAENV" install tf-2.14 --force
        [ "$status" -eq 0 ] || { echo "$shape: $output"; false; }
        same_as_wheel lib64/libnccl.so.2 nvidia/nccl/lib/libnccl.so.2 || { echo "shape '$shape'"; false; }
        same_as_wheel include/nccl.h nvidia/nccl/include/nccl.h || { echo "shape '$shape'"; false; }
        run "$CUDAENV" exec tf-2.14 -- python3 -c 'import ctypes; h = ctypes.CDLL("libnccl.so.2"); v = ctypes.c_int(); h.ncclGetVersion(ctypes.byref(v)); print(v.value)'
        [ "$status" -eq 0 ] && [ "${lines[-1]}" = 22105 ] || { echo "$shape: $output"; false; }
    done
    # the streamed shape really is one: bit 3 and no sizes in its local headers
    FX_NCCL_SHAPE=streamed fx_nccl_wheel "$T/s.whl" 2.21.5
    zipinfo -v "$T/s.whl" nvidia/nccl/lib/libnccl.so.2 | grep -q 'extended local header: *yes'
}

@test "a wheel member RECORD does not vouch for (bytes or size differ, left out, listed without a hash; no RECORD; RECORD names a file the zip lacks): exit 5 naming wheel and member, nothing installed" {
    local evil shape want c
    # every fault in a streamed wheel; two in one with sizes in its local headers
    for c in streamed/tamper streamed/size streamed/unlisted streamed/hashless streamed/ghost streamed/norecord \
               /tamper /unlisted; do
        shape=${c%/*} evil=${c#*/}
        case $evil in
            tamper) want="member 'nvidia/nccl/lib/libnccl.so.2' has sha256 * its RECORD says " ;;
            size) want="member 'nvidia/nccl/lib/libnccl.so.2' holds * bytes, its RECORD says " ;;
            unlisted) want="member 'nvidia/nccl/lib/libextra.so.2' is not in the wheel's RECORD" ;;
            hashless) want="member 'nvidia/nccl/lib/libnccl.so.2' is in RECORD without a hash" ;;
            ghost) want="its RECORD lists 'nvidia/nccl/lib/libghost.so.1', which the wheel does not hold" ;;
            norecord) want="has no *.dist-info/RECORD" ;;
        esac
        FX_NCCL_SHAPE=$shape fx_nccl_manifest "$CUDAENV_MANIFEST" "$MIRROR" "$SERVER_URL" 2.21.5 $evil
        run "$CUDAENV" install tf-2.14
        [ "$status" -eq 5 ] || { echo "$evil/$shape: $output"; false; }
        [[ "$output" == *"$WHEEL"* ]] && [[ "$output" == *$want* ]] || { echo "$evil/$shape: $output"; false; }
        [ ! -e "$CUDAENV_ROOT/versions/$P" ] || { echo "$evil/$shape: installed"; false; }
        [ -z "$(find "$CUDAENV_ROOT/pkgs" -maxdepth 1 -name 'nccl-*')" ] || { echo "$evil/$shape: an NCCL tree"; false; }
        no_staging || { echo "$evil/$shape: staging left"; false; }
    done
}

@test "a streamed wheel member of unknown size is counted as it is read: past the free space it stops (exit 1, naming it), nothing installed" {
    FX_NCCL_SHAPE=streamed fx_nccl_manifest "$CUDAENV_MANIFEST" "$MIRROR" "$SERVER_URL" 2.21.5 bomb
    [ "$(stat -c %s "$MIRROR/$WHEEL")" -lt 100000 ]   # 8 MiB of zeros in a few KB
    CUDAENV_TEST_FREE_BYTES=$((6 << 20)) run seams "$CUDAENV" install tf-2.14
    [ "$status" -eq 1 ] || { echo "$output"; false; }
    [[ "$output" == *"$WHEEL expands to more than"*"(at 'lib/libbomb.so') and only 6291456 are free"* ]] || { echo "$output"; false; }
    [ ! -e "$CUDAENV_ROOT/versions/$P" ]
    no_staging
    # with the room it needs, it installs, every byte of it
    CUDAENV_TEST_FREE_BYTES=$((10 << 20)) run seams "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ "$(stat -c %s "$CUDAENV_ROOT/versions/$P/lib64/libbomb.so")" -eq $((8 << 20)) ]
}
