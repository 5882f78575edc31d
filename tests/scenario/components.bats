#!/usr/bin/env bats
# Installs from NVIDIA's per-component archives (issue 10) against the
# loopback server: fixtures in NVIDIA's real redistrib layout (tests/lib/
# redist.sh: string sizes, md5, release_* keys, windows entries, driver
# components that must never be fetched), the tf and toolkit profiles,
# --components, --from runfile, integrity failures, a relative_path that
# climbs, conflicting files, shared component trees, sbsa, the runfile's
# layout, kill -9.
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
    redist_setup
}

teardown() { mirror_teardown; }

P=11.8.0+cudnn8.7.0.84

fetched() { server_requests "GET .*/$1/linux-x86_64/"; }

# a second mirror with an evil JSON (FX_REDIST_EVIL), pinned correctly by the manifest
evil_mirror() {
    local d=$T/evil
    mkdir -p "$d"
    FX_REDIST_EVIL=$1 fx_redist "$d" 11.8.0
    cp -a "$MIRROR/compute/cudnn" "$d/compute/"
    server_stop
    server_start "$d"
    fx_mirror_manifest "$MIRROR" "$SERVER_URL" > "$CUDAENV_MANIFEST"
    fx_redist_manifest "$CUDAENV_MANIFEST" "$d" 11.8.0 "$SERVER_URL"
}

@test "tf-2.14 installs the tf profile in the runfile's layout; no runfile, no driver, no windows, no nsight" {
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    p=$CUDAENV_ROOT/versions/$P
    [ -x "$p/bin/nvcc" ] && [ -x "$p/nvvm/bin/cicc" ] || false
    [[ "$("$p/bin/nvcc" --version)" == *"release 11.8, V11.8.89"* ]]
    [ "$(readlink "$p/include")" = targets/x86_64-linux/include ]
    [ "$(readlink "$p/lib64")" = targets/x86_64-linux/lib ]
    [ -f "$p/targets/x86_64-linux/lib/libcudart.so.11.8.89" ]
    readelf -d "$(readlink -f "$p/lib64/libcudart.so.11.0")" | grep -q 'SONAME.*\[libcudart.so.11.0\]'
    [ -f "$p/lib64/libcublas.so.11" ] && [ -f "$p/lib64/libcufft.so.11" ] && [ -f "$p/include/cub/cub.cuh" ] || false
    [ -f "$p/include/crt/host_config.h" ]         # from cuda_nvcc and cuda_crt, identical
    grep -q 'CUDNN_MINOR 7' "$p/include/cudnn_version.h"
    [ -e "$p/lib64/libcudnn.so.8" ]
    [ -f "$p/share/licenses/libcublas/LICENSE" ]
    [ ! -e "$p/bin/nsys" ] && [ ! -e "$p/lib64/libnpp.so.11" ] && [ ! -e "$p/doc" ] || false
    fx_probe "$T/probe" "$p"
    run env LD_LIBRARY_PATH="$p/lib64" "$T/probe"
    [ "${lines[0]}" = 11080 ]
    python3 - "$p" <<'PY'
import json, sys
p = sys.argv[1]
v = json.load(open(p + "/version.json"))
assert v["cuda"] == {"name": "CUDA SDK", "version": "11.8.0"}, v
assert v["cuda_cudart"]["version"] == "11.8.89" and v["libcublas"]["version"] == "11.11.3.6", v
assert "nvidia_driver" not in v and "nsight_systems" not in v
r = json.load(open(p + "/.cudaenv-receipt.json"))
assert r["profile"] == "tf", r
names = sorted(c["name"] for c in r["components"])
assert names == ["cuda_cccl", "cuda_crt", "cuda_cudart", "cuda_cupti", "cuda_nvcc", "cuda_nvrtc",
                 "libcublas", "libcufft"], names
kinds = {s["kind"] for s in r["sources"]}
assert kinds == {"redist", "cudnn"}, kinds
assert all(len(c["sha256"]) == 64 and c["size"] > 0 and c["pkg"] for c in r["components"])
files = {f["path"] for f in r["files"]}
assert "bin/nvcc" in files and "version.json" in files and "targets/x86_64-linux/lib/libcudart.so.11.8.89" in files
PY
    [ "$(server_requests 'linux.run')" -eq 0 ]
    for c in nvidia_driver cuda_compat fabricmanager nsight_systems cuda_documentation libnpp; do
        [ "$(server_requests "/$c/")" -eq 0 ] || { echo "fetched $c"; false; }
    done
    [ "$(server_requests windows)" -eq 0 ]
    [ "$(server_requests linux-sbsa)" -eq 0 ]
    [ "$(fetched libcublas)" -eq 1 ]
    no_staging
    # verify reads version.json and re-hashes every file against the receipt
    run "$CUDAENV" verify "$P" --deep --json
    python3 -c '
import json, sys
d = json.load(sys.stdin)
s = {x["id"]: x["status"] for x in d["steps"]}
assert s["files"] == "passed", s
v = [x for x in d["steps"] if x["id"] == "versions"]
assert not v or v[0]["status"] != "failed", v' <<<"$output"
}

@test "a CUDA spec installs the toolkit profile: libnpp and the sanitizer too, not documentation or Nsight" {
    run "$CUDAENV" install 11.8 --no-cudnn
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    p=$CUDAENV_ROOT/versions/11.8.0
    [ -f "$p/lib64/libnpp.so.11" ] && [ -f "$p/lib64/cuda_sanitizer_api.so.11" ] && [ -f "$p/lib64/libcublas.so.11" ] || false
    [ ! -e "$p/bin/nsys" ] && [ ! -e "$p/doc/index.html" ] || false
    [ "$(server_requests '/nsight_systems/')" -eq 0 ] && [ "$(server_requests '/cuda_documentation/')" -eq 0 ] || false
    [ "$(server_requests '/nvidia_driver/')" -eq 0 ] && [ "$(server_requests '/cuda_compat/')" -eq 0 ] || false
    grep -q '"profile":[[:space:]]*"toolkit"' "$p/.cudaenv-receipt.json"
}

@test "--components adds and removes; a driver-side or unknown name is a usage error" {
    run "$CUDAENV" install tf-2.14 --components +nsight_systems,-libcufft
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    p=$CUDAENV_ROOT/versions/$P
    [ -x "$p/bin/nsys" ] && [ ! -e "$p/lib64/libcufft.so.11" ] && [ -f "$p/lib64/libcublas.so.11" ] || false
    [ "$(fetched libcufft)" -eq 0 ]
    run "$CUDAENV" install 11.8 --no-cudnn --components +nvidia_driver
    [ "$status" -eq 2 ] && [[ "$output" == *"driver-side"* ]] || false
    run "$CUDAENV" install 11.8 --no-cudnn --components +cuda_nope
    [ "$status" -eq 2 ] && [[ "$output" == *"'cuda_nope' is not a component"*"libcublas"* ]] || false
    [ "$(server_requests '/nvidia_driver/')" -eq 0 ]
}

@test "--from runfile installs the runfile; --from redist fails where the release has no JSON" {
    run "$CUDAENV" install tf-2.14 --from runfile
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ "$(server_requests 'linux.run')" -eq 1 ]
    [ "$(fetched libcublas)" -eq 0 ]
    [ -L "$CUDAENV_ROOT/versions/$P/lib64" ]
    ! grep -q '"components"' "$CUDAENV_ROOT/versions/$P/.cudaenv-receipt.json" || false
    python3 - "$CUDAENV_MANIFEST" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); del m["cuda"]["11.8.0"]["redist"]; json.dump(m, open(sys.argv[1], "w"))
PY
    run "$CUDAENV" install 11.8 --no-cudnn --from redist
    [ "$status" -eq 3 ] && [[ "$output" == *"no redistrib JSON"* ]] || false
    run "$CUDAENV" install 11.8 --from zip
    [ "$status" -eq 2 ]
}

@test "the JSON's sha256 off by one: exit 5 before any component is fetched" {
    python3 - "$CUDAENV_MANIFEST" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); r = m["cuda"]["11.8.0"]["redist"]
r["sha256"] = r["sha256"][:-1] + ("0" if r["sha256"][-1] != "0" else "1"); json.dump(m, open(sys.argv[1], "w"))
PY
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] && [[ "$output" == *"redistrib_11.8.0.json"* ]] || false
    [ "$(fetched cuda_cudart)" -eq 0 ]
    [ -z "$(ls "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    no_staging
}

@test "a component whose sha256 is off: exit 5 naming it, nothing installed" {
    d=$T/bad; mkdir -p "$d"; cp -a "$MIRROR/compute" "$d/"
    python3 - "$d/compute/cuda/redist/redistrib_11.8.0.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); a = j["libcublas"]["linux-x86_64"]
a["sha256"] = a["sha256"][:-1] + ("0" if a["sha256"][-1] != "0" else "1"); json.dump(j, open(sys.argv[1], "w"))
PY
    server_stop; server_start "$d"
    fx_mirror_manifest "$MIRROR" "$SERVER_URL" > "$CUDAENV_MANIFEST"
    fx_redist_manifest "$CUDAENV_MANIFEST" "$d" 11.8.0 "$SERVER_URL"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] && [[ "$output" == *libcublas* ]] || false
    [ -z "$(ls "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    ! ls "$CUDAENV_ROOT"/pkgs | grep -q libcublas || false
    no_staging
}

@test "a redistrib JSON with a second document after it, pinned by the manifest: exit 5 naming it, nothing fetched" {
    # read as strictly as a manifest (core/json.h): cJSON's lenient read took the first document
    d=$T/twice; mkdir -p "$d"; cp -a "$MIRROR/compute" "$d/"
    printf '\n{"libcublas": {"version": "99.0"}}\n' >> "$d/compute/cuda/redist/redistrib_11.8.0.json"
    server_stop; server_start "$d"
    fx_mirror_manifest "$MIRROR" "$SERVER_URL" > "$CUDAENV_MANIFEST"
    fx_redist_manifest "$CUDAENV_MANIFEST" "$d" 11.8.0 "$SERVER_URL"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"redistrib_11.8.0.json: data after the JSON document"* ]] || { echo "$output"; false; }
    [ "$(fetched cuda_cudart)" -eq 0 ]
    [ -z "$(ls "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    no_staging
}

@test "a relative_path with ..: exit 5, nothing outside the mirror is requested" {
    evil_mirror dotdot
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] && [[ "$output" == *"libcufft"*"relative_path"*"'..' segment"* ]] || false
    [ "$(server_requests 'GET /compute/cuda/redist/lib')" -eq 0 ]
    [ -z "$(ls "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    no_staging
}

@test "two components shipping one path with different bytes: exit 5, no toolchain" {
    evil_mirror conflict
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] && [[ "$output" == *"two components ship targets/x86_64-linux/include/cuda_runtime_api.h"* ]] || false
    # the message names the second copy's own file (which package tree it came from)
    [[ "$output" =~ "with different content (this one from $CUDAENV_ROOT/pkgs/"[^\ ]*"/include/cuda_runtime_api.h)" ]] || { echo "$output"; false; }
    [ -z "$(ls "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    no_staging
    # leaving one out installs
    run "$CUDAENV" install tf-2.14 --components -libcufft
    [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "two components shipping libcudart.so as links to different files: exit 5 naming it, no toolchain" {
    evil_mirror linkconflict
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"two components ship targets/x86_64-linux/lib/libcudart.so "* ]] || { echo "$output"; false; }
    [ -z "$(ls "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    no_staging
    # leaving libcufft out installs, and libcudart.so is cudart's
    run "$CUDAENV" install tf-2.14 --components -libcufft
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$(readlink -f "$CUDAENV_ROOT/versions/$P/lib64/libcudart.so")" == */libcudart.so.11.8.89 ]]
}

@test "two toolchains share the component trees: same inodes, each archive fetched once" {
    run "$CUDAENV" install tf-2.14 tf-2.12
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    a=$CUDAENV_ROOT/versions/$P b=$CUDAENV_ROOT/versions/11.8.0+cudnn8.6.0.163
    for f in bin/nvcc lib64/libcudart.so.11.8.89 lib64/libcublas.so.11 include/cuda_runtime_api.h; do
        [ "$(stat -c %i "$a/$f")" = "$(stat -c %i "$b/$f")" ] || { echo "not shared: $f"; false; }
    done
    [ "$(stat -c %i "$a/lib64/libcublas.so.11")" = "$(stat -c %i "$CUDAENV_ROOT"/pkgs/libcublas-11.11.3.6-*/lib/libcublas.so.11)" ]
    [ "$(fetched libcublas)" -eq 1 ] && [ "$(fetched cuda_cudart)" -eq 1 ] || false
    grep -q 'CUDNN_MINOR 6' "$b/include/cudnn_version.h"
    # uninstalling one keeps the trees the other uses
    "$CUDAENV" uninstall 11.8.0+cudnn8.6.0.163
    ls -d "$CUDAENV_ROOT"/pkgs/libcublas-11.11.3.6-*
    [ -f "$a/lib64/libcublas.so.11" ]
    "$CUDAENV" uninstall "$P"
    ! ls -d "$CUDAENV_ROOT"/pkgs/libcublas-* 2>/dev/null
}

@test "sbsa selects the linux-sbsa archives and lays out targets/sbsa-linux (no sbsa runfile needed)" {
    CUDAENV_PLATFORM=linux-sbsa run "$CUDAENV" install 11.8 --no-cudnn
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    p=$CUDAENV_ROOT/versions/11.8.0
    [ "$(readlink "$p/lib64")" = targets/sbsa-linux/lib ]
    [ -f "$p/targets/sbsa-linux/lib/libcublas.so.11" ]
    grep -q 'libcublas linux-sbsa' "$p/include/libcublas.h"
    [ "$(server_requests linux-x86_64)" -eq 0 ]
    [ "$(server_requests '/libcublas/linux-sbsa/')" -eq 1 ]
}

@test "the composed layout has every path of the runfile's layout for the same files" {
    "$CUDAENV" install 11.8 --no-cudnn --from runfile
    mv "$CUDAENV_ROOT/versions/11.8.0" "$T/runfile"
    rm -rf "$CUDAENV_ROOT/pkgs/cuda-11.8.0"
    "$CUDAENV" install 11.8 --no-cudnn
    python3 - "$T/runfile" "$CUDAENV_ROOT/versions/11.8.0" <<'PY'
import os, sys
a, b = sys.argv[1:3]
def walk(root):
    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            out[rel] = "link:" + os.readlink(p) if os.path.islink(p) else ("dir" if os.path.isdir(p) else "file")
    return out
ra, rb = walk(a), walk(b)
skip = {".cudaenv-receipt.json", "bin/cuda-uninstaller"}
missing = [p for p in ra if p not in skip and p not in rb]
assert not missing, missing
differ = [p for p in ra if p not in skip and ra[p] != rb[p]]
assert not differ, [(p, ra[p], rb[p]) for p in differ]
for p in ("bin/nvcc", "targets/x86_64-linux/include/cuda_runtime_api.h"):  # the fixture .so embed their build dir
    assert open(os.path.join(a, p), "rb").read() == open(os.path.join(b, p), "rb").read(), p
PY
}

@test "kill -9 during download, after unpack, before commit: nothing half-installed, the rerun completes" {
    for point in during-download after-unpack before-commit; do
        rm -rf "$CUDAENV_ROOT"
        base=$SERVER_URL
        [ $point = during-download ] && base=$SERVER_URL/_/rate=2000
        fx_mirror_manifest "$MIRROR" "$SERVER_URL" > "$CUDAENV_MANIFEST"
        fx_redist_manifest "$CUDAENV_MANIFEST" "$MIRROR" 11.8.0 "$base"
        CUDAENV_TEST_FAULT=$point run seams "$CUDAENV" install tf-2.14
        [ "$status" -eq 137 ] || { echo "$point: $status $output"; false; }
        [ -z "$(ls "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
        case $point in
            during-download) ls "$CUDAENV_ROOT"/cache/*.part ;;
            after-unpack) ls -d "$CUDAENV_ROOT"/pkgs/.staging-* ;;
            before-commit) ls -d "$CUDAENV_ROOT"/versions/.staging-* ;;
        esac
        run "$CUDAENV" install tf-2.14
        [ "$status" -eq 0 ] || { echo "rerun after $point: $output"; false; }
        [ -x "$CUDAENV_ROOT/versions/$P/bin/nvcc" ] && [ -f "$CUDAENV_ROOT/versions/$P/.cudaenv-receipt.json" ] || false
        no_staging
    done
}

@test "a verified archive deleted from the cache before its unpacker starts: exit 1 naming it, nothing half-installed, no hang" {
    # CUDAENV_TEST_FAULT=vanish-after-verify: every download verified, then
    # its file removed from the cache before the unpacker starts (another
    # process cleaning the cache); the install must fail at once, not wait
    # for the file forever (unpackers.c's "vanished" guard)
    fx_mirror_manifest "$MIRROR" "$SERVER_URL" > "$CUDAENV_MANIFEST"
    fx_redist_manifest "$CUDAENV_MANIFEST" "$MIRROR" 11.8.0 "$SERVER_URL"
    CUDAENV_TEST_FAULT=vanish-after-verify run seams timeout 60 "$CUDAENV" install tf-2.14
    [ "$status" -eq 1 ] || { echo "$status $output"; false; }
    [[ "$output" == *"a verified download vanished from the cache"* ]]
    [ -z "$(ls "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    no_staging
    ! ls "$CUDAENV_ROOT"/cache/*.part 2>/dev/null | grep -q . || false
    # it downloaded (so it was the guard, not a fetch error) and the rerun completes
    [ -n "$(fetched libcublas)" ]
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "rerun: $output"; false; }
    [ -x "$CUDAENV_ROOT/versions/$P/bin/nvcc" ] && [ -f "$CUDAENV_ROOT/versions/$P/.cudaenv-receipt.json" ] || false
    no_staging
}

@test "each component unpacks while it downloads: its files are in pkgs/ while its .part is still growing; the largest unpacks first" {
    local d=$T/big
    mkdir -p "$d"
    FX_REDIST_BIG=$((3 << 20)) fx_redist "$d" 11.8.0
    cp -a "$MIRROR/compute/cudnn" "$d/compute/"
    server_stop
    server_start "$d"
    fx_mirror_manifest "$MIRROR" "$SERVER_URL" > "$CUDAENV_MANIFEST"
    # every component: half its bytes, then 8 s of nothing, then the rest
    fx_redist_manifest "$CUDAENV_MANIFEST" "$d" 11.8.0 "$SERVER_URL/_/pause=8"
    local arc sha
    arc=$(echo "$d"/compute/cuda/redist/libcublas/linux-x86_64/*.tar.xz)
    sha=$(sha256sum "$arc" | cut -c1-64)
    CUDAENV_UNPACK_JOBS=16 "$CUDAENV" install tf-2.14 > "$T/out" 2>&1 &
    local pid=$! seen=
    # all along: the unpacker threads are named for ps, and the small archives'
    # yield the cores to the largest (slots.h: ce_slots_nice); sampled while the
    # install runs (one look after libcublasLt appeared missed the small ones
    # once, on a loaded machine under ASan, when that took past the pause)
    (while kill -0 "$pid" 2>/dev/null; do
         ps -L -p "$pid" -o comm=,ni= | awk '$1 == "cudaenv-unpack" { print $2 }' || :
         sleep 0.1
     done > "$T/nices") &
    local sampler=$!
    # libcublas' own download is unfinished before and after its file is seen
    seen_while_downloading "$pid" "$sha" 'libcublasLt.so.*' && seen=1
    wait "$pid" || { cat "$T/out"; false; }
    wait "$sampler" || true
    local nices
    nices=$(tr -d ' ' < "$T/nices" | sort -un | tr '\n' ' ')
    [ -n "$seen" ] || { echo "no libcublasLt in pkgs/.staging-* while a .part was there"; cat "$T/out"; false; }
    local base
    base=$(ps -o ni= -p $$ | tr -d ' ')   # relative to the install's own (the suite may run under nice)
    [[ " $nices" == *" $base "* && " $nices" == *" $((base + 8)) "* ]] || { echo "unpackers' nice values: '$nices' (base $base)"; false; }
    cmp "$CUDAENV_ROOT/versions/$P/lib64/libcublasLt.so.11" \
        <(tar -xJOf "$arc" --wildcards '*/lib/libcublasLt.so.11')
    no_staging
}

@test "a wrong .part and a server ignoring Range: the overlapped unpack loses, the verified archive is unpacked again" {
    fx_mirror_manifest "$MIRROR" "$SERVER_URL" > "$CUDAENV_MANIFEST"
    # answers after 1 s: the unpacker reads the wrong .part before the download starts over
    fx_redist_manifest "$CUDAENV_MANIFEST" "$MIRROR" 11.8.0 "$SERVER_URL/_/wait=1,norange"
    local arc sha
    arc=$(echo "$MIRROR"/compute/cuda/redist/libcublas/linux-x86_64/*.tar.xz)
    sha=$(sha256sum "$arc" | cut -c1-64)
    mkdir -p "$CUDAENV_ROOT/cache"
    head -c $(($(stat -c %s "$arc") / 2)) /dev/urandom > "$CUDAENV_ROOT/cache/$sha.part"
    run "$CUDAENV" -v install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; cat "$SERVER_LOG"; false; }
    grep -q "libcublas.* range=bytes=.*status=200" "$SERVER_LOG" || { cat "$SERVER_LOG"; false; }
    # not an error, but -v says the pass was lost, and why
    [[ "$output" == *"libcublas: the unpacking that followed the download was lost ("*"); it is unpacked again from the verified file"* ]] ||
        { echo "$output"; false; }
    cmp "$CUDAENV_ROOT/versions/$P/lib64/libcublas.so.11" <(tar -xJOf "$arc" --wildcards '*/lib/libcublas.so.11')
    no_staging
}

@test "info lists the components with sizes and the total; --json too; --components adjusts it" {
    run "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"components  tf profile: 8 of the 15 in $SERVER_URL/compute/cuda/redist/redistrib_11.8.0.json"* ]]
    [[ "$output" == *"libcublas              11.11.3.6"* ]]
    [[ "$output" == *"    total "* ]]
    [[ "$output" != *nvidia_driver* ]]
    "$CUDAENV" info tf-2.14 --json --components +nsight_systems 2>/dev/null > "$T/info.json"
    python3 - "$MIRROR/compute/cuda/redist/redistrib_11.8.0.json" "$T/info.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))
c = d["cuda"]["components"]
names = [x["name"] for x in c["list"]]
assert c["profile"] == "tf" and "nsight_systems" in names and "nvidia_driver" not in names, c
assert c["total"] == sum(int(j[n]["linux-x86_64"]["size"]) for n in names), c
PY
    # a CUDA release without a JSON: components null
    python3 - "$CUDAENV_MANIFEST" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); del m["cuda"]["11.8.0"]["redist"]; json.dump(m, open(sys.argv[1], "w"))
PY
    "$CUDAENV" info tf-2.14 --json 2>/dev/null | python3 -c 'import json,sys; assert json.load(sys.stdin)["cuda"]["components"] is None'
}

@test "the redistrib JSON cudaenv ships is never downloaded: info reads the bundled copy whose sha256 the manifest names, into the cache" {
    local j=$REPO/data/redist/cuda/redistrib_11.8.0.json
    python3 - "$CUDAENV_MANIFEST" "$j" "$SERVER_URL" <<'PY'
import hashlib, json, os, sys
p, j, base = sys.argv[1:4]
raw = open(j, "rb").read()
m = json.load(open(p))
m["cuda"]["11.8.0"]["redist"] = {"url": base + "/compute/cuda/redist/redistrib_11.8.0.json",
                                 "sha256": hashlib.sha256(raw).hexdigest(), "size": len(raw)}
json.dump(m, open(p, "w"), indent=1)
PY
    run "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"components  tf profile: "*"redistrib_11.8.0.json"* ]] || { echo "$output"; false; }
    [ "$(server_requests "GET .*/redistrib_11.8.0.json")" -eq 0 ]   # the server's is another file: never asked
    cmp "$j" "$CUDAENV_ROOT/cache/$(sha256sum < "$j" | cut -d' ' -f1)"
}

@test "not enough free space for the components: exit 1 before any archive, naming need and free" {
    CUDAENV_TEST_FREE_BYTES=10000 run seams "$CUDAENV" install tf-2.14
    [ "$status" -eq 1 ] && [[ "$output" == *"not enough free space"*"(downloads plus unpacked trees)"* ]] || false
    [ "$(fetched cuda_cudart)" -eq 0 ] && [ "$(server_requests cudnn-linux)" -eq 0 ] || false
    # the real sizes decide: enough for them installs
    CUDAENV_TEST_FREE_BYTES=100000000 run seams "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "tf-2.14, then 11.8+cudnn8.7: the second install adds the toolkit's components the toolchain lacks, says which, and its receipt lists them" {
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    p=$CUDAENV_ROOT/versions/$P
    [ ! -e "$p/lib64/libnpp.so.11" ]
    ino=$(stat -c %i "$p/lib64/libcublas.so.11")
    # info promises the toolkit profile, and says what install adds to the installed toolchain
    run --separate-stderr "$CUDAENV" info 11.8+cudnn8.7
    [[ "$output" == *"installed     yes, in $p: tf profile"* ]] || { echo "$output"; false; }
    [[ "$output" == *"install adds cuda_sanitizer_api, libnpp (what this spec selects and it lacks)"* ]] || { echo "$output"; false; }
    run --separate-stderr "$CUDAENV" install 11.8+cudnn8.7
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"$P is installed without cuda_sanitizer_api, libnpp, which this install selects: adding them"* ]] || { echo "$stderr"; false; }
    [[ "$stderr" == *"added cuda_sanitizer_api, libnpp to $P in $p (it holds: toolkit profile)"* ]] || { echo "$stderr"; false; }
    [[ "$stderr" != *"already installed"* ]]
    [ -f "$p/lib64/libnpp.so.11" ] && [ -f "$p/lib64/cuda_sanitizer_api.so.11" ] || false
    [ -x "$p/bin/nvcc" ] && [ -f "$p/lib64/libcufft.so.11" ] && grep -q 'CUDNN_MINOR 7' "$p/include/cudnn_version.h" || false
    # what it held stays as it was: the same unpacked tree, not fetched again
    [ "$(stat -c %i "$p/lib64/libcublas.so.11")" = "$ino" ]
    [ "$(fetched libcublas)" -eq 1 ] && [ "$(fetched libnpp)" -eq 1 ] && [ "$(server_requests cudnn-linux)" -eq 1 ] || false
    python3 - "$p" <<'PY'
import json, sys
r = json.load(open(sys.argv[1] + "/.cudaenv-receipt.json"))
assert r["profile"] == "toolkit" and r["adjust"] == [], (r["profile"], r["adjust"])
names = sorted(c["name"] for c in r["components"])
assert names == ["cuda_cccl", "cuda_crt", "cuda_cudart", "cuda_cupti", "cuda_nvcc", "cuda_nvrtc",
                 "cuda_sanitizer_api", "libcublas", "libcufft", "libnpp"], names
files = {f["path"] for f in r["files"]}
assert "targets/x86_64-linux/lib/libnpp.so.11" in files and "bin/nvcc" in files, sorted(files)
v = json.load(open(sys.argv[1] + "/version.json"))
assert v["libnpp"]["version"] == "11.8.89", v
PY
    run "$CUDAENV" verify "$P" --deep --json
    python3 -c 'import json, sys; s = {x["id"]: x["status"] for x in json.load(sys.stdin)["steps"]}; assert s["files"] == "passed", s' <<<"$output"
    # now nothing is missing: already installed, saying what it holds
    n=$(wc -l < "$SERVER_LOG")
    run --separate-stderr "$CUDAENV" install 11.8+cudnn8.7
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"$P is already installed in $p (holds: toolkit profile; --force reinstalls it)"* ]] || { echo "$stderr"; false; }
    # tf-2.14 asks for less: nothing is removed, and the note says what it keeps
    run --separate-stderr "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"already installed"*"it also holds cuda_sanitizer_api, libnpp, which this install leaves out (kept"* ]] || { echo "$stderr"; false; }
    [ -f "$p/lib64/libnpp.so.11" ]
    [ "$(wc -l < "$SERVER_LOG")" -eq "$n" ]
    run --separate-stderr "$CUDAENV" list
    [[ "$output" == *"$P  ["*" own, "*" shared]  (toolkit profile)"* ]] || { echo "$output"; false; }
    no_staging
}

@test "--components +nsight_systems,-libcufft, then a plain install of the same name adds libcufft back and keeps nsys; list and the receipt say so" {
    run "$CUDAENV" install 11.8 --no-cudnn --components +nsight_systems,-libcufft
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    p=$CUDAENV_ROOT/versions/11.8.0
    [ -x "$p/bin/nsys" ] && [ ! -e "$p/lib64/libcufft.so.11" ] || false
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["profile"] == "toolkit" and r["adjust"] == ["-libcufft", "+nsight_systems"], r["adjust"]' "$p/.cudaenv-receipt.json"
    run --separate-stderr "$CUDAENV" list
    [[ "$output" == *"11.8.0  ["*"]  (toolkit profile -libcufft +nsight_systems)"* ]] || { echo "$output"; false; }
    run --separate-stderr "$CUDAENV" install 11.8 --no-cudnn
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"11.8.0 is installed without libcufft, which this install selects: adding it"* ]] || { echo "$stderr"; false; }
    [ -f "$p/lib64/libcufft.so.11" ] && [ -x "$p/bin/nsys" ] || false
    [ "$(fetched libcufft)" -eq 1 ] && [ "$(fetched nsight_systems)" -eq 1 ] || false
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["adjust"] == ["+nsight_systems"], r["adjust"]; assert r["nccl"] is None' "$p/.cudaenv-receipt.json"
    run "$CUDAENV" list --json
    python3 -c '
import json, sys
t = json.load(sys.stdin)["toolchains"][0]["holds"]
assert t["from"] == "components" and t["profile"] == "toolkit" and t["adjust"] == ["+nsight_systems"], t
assert "libcufft" in t["components"] and t["nccl"] is None, t' <<<"$output"
    run --separate-stderr "$CUDAENV" install 11.8 --no-cudnn --components -nsight_systems
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"11.8.0 is already installed"*"it also holds nsight_systems, which this install leaves out"* ]] || { echo "$stderr"; false; }
    [ -x "$p/bin/nsys" ]
    no_staging
}

@test "kill -9 while components are added to an installed toolchain: it stays as it was, the rerun adds them" {
    "$CUDAENV" -q install tf-2.14
    p=$CUDAENV_ROOT/versions/$P
    for point in after-unpack before-commit; do
        CUDAENV_TEST_FAULT=$point run seams "$CUDAENV" install 11.8+cudnn8.7
        [ "$status" -eq 137 ] || { echo "$point: $status $output"; false; }
        [ -x "$p/bin/nvcc" ] && [ ! -e "$p/lib64/libnpp.so.11" ] || false
        grep -q '"profile":[[:space:]]*"tf"' "$p/.cudaenv-receipt.json"
    done
    run "$CUDAENV" install 11.8+cudnn8.7
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -f "$p/lib64/libnpp.so.11" ] && grep -q '"profile":[[:space:]]*"toolkit"' "$p/.cudaenv-receipt.json" || false
    no_staging
}

# Every size a person reads, in one style (core/bytes.h): "512 B", "1.5 KiB",
# "845.4 MiB": a whole number of bytes under 1 KiB, else one decimal of the
# largest binary unit that keeps it >= 1; an exact count only as "(N bytes)"
# right after one of those.
sizes_one_style() {
    python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
bad = []
tok = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(B|KiB|MiB|GiB|TiB|kB|KB|MB|GB|TB|bytes|[KMGT])(?![\w/])")
for m in tok.finditer(text):
    num, unit = m.group(1), m.group(2)
    ctx = text[max(0, m.start() - 40):m.end() + 10].replace("\n", " | ")
    if unit == "bytes":
        # only as the exact count beside a human size: "845.4 MiB (886432 bytes)"
        if not re.search(r"\d(?: B|\.\d (?:KiB|MiB|GiB|TiB)) \($", text[:m.start()]):
            bad.append(ctx)
        continue
    if unit == "B":
        ok = re.fullmatch(r"\d+", num) and int(num) < 1024
    elif unit in ("KiB", "MiB", "GiB", "TiB"):
        ok = re.fullmatch(r"\d+\.\d", num) and 1 <= float(num) < 1024 or unit == "TiB" and re.fullmatch(r"\d+\.\d", num)
    else:
        ok = False
    if not ok:
        bad.append(ctx)
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

@test "sizes are printed in one style: install's messages, list, info, cache list" {
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    {
        echo "$output"
        "$CUDAENV" list 2>&1
        "$CUDAENV" info tf-2.14 2>&1
        "$CUDAENV" cache list 2>&1
    } > "$T/all"
    # the outputs do carry sizes (the check is not vacuous)
    [ "$(grep -cE '[0-9] (B|KiB|MiB|GiB)\b' "$T/all")" -ge 8 ] || { cat "$T/all"; false; }
    grep -q 'from NVIDIA.s components: .* profile), [0-9.]* [KMG]i\?B' "$T/all" || { cat "$T/all"; false; }
    run sizes_one_style "$T/all"
    [ "$status" -eq 0 ] || { echo "other styles:"; echo "$output"; false; }
}
