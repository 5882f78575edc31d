#!/usr/bin/env bats
# cudaenv mirror: a site mirror built from the loopback "NVIDIA" server
# (fx_mirror: CUDA 11.8.0 + 12.2.2 runfiles, cuDNN 8.6/8.7/8.9 tarballs), then
# served by a second loopback server (http, https) or used as a path; with a
# redistrib JSON pinned (fx_redist), the JSON and the profile's components
# instead of the runfile, as install fetches them; resume,
# integrity, incremental runs, the cache reused, --check, hostile paths (also
# under CUDAENV_MIRROR: a mapped path that would leave the mirror);
# install --modulefiles from it.
load ../lib/common
load ../lib/server
bats_require_minimum_version 1.5.0

setup_file() {
    upstream_setup_file
    source "$BATS_TEST_DIRNAME/../lib/redist.sh"
    fx_redist "$UPSTREAM" 11.8.0   # pinned only by the tests that call with_redist
}

# the manifest pins CUDA 11.8.0's redistrib JSON (and the tf/toolkit profiles)
with_redist() { source "$TESTS_DIR/lib/redist.sh"; fx_redist_manifest "$CUDAENV_MANIFEST" "$UPSTREAM" 11.8.0 "$UP_URL"; }
RD=compute/cuda/redist
TF_COMPS="cuda_cudart cuda_nvcc cuda_nvrtc cuda_crt libcublas libcufft cuda_cccl cuda_cupti"
comp_file() { (cd "$UPSTREAM" && echo $RD/$1/${2:-linux-x86_64}/*.tar.xz); }

setup() {
    common_setup
    upstream_serve
    UP_URL=$SERVER_URL UP_LOG=$SERVER_LOG
    export CUDAENV_MANIFEST=$T/manifest.json
    M=$T/site
}

teardown() {
    server_stop
    common_teardown
}

RUN118=compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run
CUDNN87=compute/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz
RUN122=compute/cuda/12.2.2/local_installers/cuda_12.2.2_535.104.05_linux.run

py() { python3 -c "import json,sys; m=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" "$2"; }

@test "mirror tf-2.14: NVIDIA's paths, a manifest of just those files with relative URLs, each file fetched once" {
    run "$CUDAENV" mirror tf-2.14 --to "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    cmp "$UPSTREAM/$RUN118" "$M/$RUN118"
    cmp "$UPSTREAM/$CUDNN87" "$M/$CUDNN87"
    [ "$(find "$M" -type f ! -path "*/.cudaenv-mirror/*" | wc -l)" -eq 3 ]
    py 'list(m["tensorflow"]) == ["2.14"] and list(m["cuda"]) == ["11.8.0"] and list(m["cudnn"]) == ["8.7.0.84"]' "$M/cudaenv.json"
    py 'm["cuda"]["11.8.0"]["runfile"]["linux-x86_64"]["url"] == "'$RUN118'"' "$M/cudaenv.json"
    py 'list(m["cudnn"]["8.7.0.84"]) == ["source", "cuda11"] and m["cudnn"]["8.7.0.84"]["cuda11"]["linux-x86_64"]["url"] == "'$CUDNN87'"' "$M/cudaenv.json"
    py 'm["cuda"]["11.8.0"]["min_driver"] == "520.61.05" and m["cuda"]["11.8.0"]["max_gcc"] == 11' "$M/cudaenv.json"
    [ "$(server_requests "GET /$RUN118")" -eq 1 ]
    [ "$(server_requests "GET /$CUDNN87")" -eq 1 ]
    [[ "$output" == *"2 files (2 added"* ]]
}

@test "the mirror serves installs: as a path, over https, and over http with --insecure" {
    run "$CUDAENV" mirror tf-2.14 --to "$M"
    [ "$status" -eq 0 ]
    server_stop   # the "NVIDIA" server is gone from here on
    CUDAENV_ROOT=$T/node1 CUDAENV_MANIFEST=$M/cudaenv.json run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -x "$T/node1/versions/11.8.0+cudnn8.7.0.84/bin/nvcc" ]

    server_start "$M" --tls
    export CUDAENV_MANIFEST_UNSIGNED=1   # the mirror's manifest is not signed here (remote.bats signs)
    CUDAENV_ROOT=$T/node2 CUDAENV_MANIFEST=$SERVER_TLS_URL/cudaenv.json run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -f "$T/node2/versions/11.8.0+cudnn8.7.0.84/.cudaenv-receipt.json" ]
    grep -q "\"url\":.*\"$SERVER_TLS_URL/$RUN118\"" "$T/node2/versions/11.8.0+cudnn8.7.0.84/.cudaenv-receipt.json"
    [ "$(server_requests "GET /$RUN118 .*tls=1")" -eq 1 ]

    # plain http: the manifest and its files only with --insecure
    CUDAENV_ROOT=$T/node3 CUDAENV_MANIFEST=$SERVER_URL/cudaenv.json run "$CUDAENV" install tf-2.14
    [ "$status" -eq 4 ]
    CUDAENV_ROOT=$T/node3 CUDAENV_MANIFEST=$SERVER_URL/cudaenv.json run "$CUDAENV" install tf-2.14 --insecure
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -x "$T/node3/versions/11.8.0+cudnn8.7.0.84/bin/nvcc" ]
    # what the mirror does not hold is not offered
    CUDAENV_MANIFEST=$M/cudaenv.json run --separate-stderr "$CUDAENV" install tf-2.15
    [ "$status" -eq 3 ]
}

@test "incremental: a second spec adds its files and rows; a rerun fetches nothing" {
    "$CUDAENV" -q mirror tf-2.14 --to "$M"
    run "$CUDAENV" mirror 12.2 --no-cudnn --to "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    # CUDA 12.2.2 alone: TensorFlow 2.15 also needs cuDNN 8.9, so no row yet
    py 'sorted(m["tensorflow"]) == ["2.14"] and sorted(m["cuda"]) == ["11.8.0", "12.2.2"]' "$M/cudaenv.json"
    run "$CUDAENV" mirror tf-2.15 --to "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"1 added"*"1 already there"* ]]
    [ -f "$M/$RUN122" ]
    py 'sorted(m["tensorflow"]) == ["2.14", "2.15"] and sorted(m["cuda"]) == ["11.8.0", "12.2.2"]' "$M/cudaenv.json"
    py 'sorted(m["cudnn"]) == ["8.7.0.84", "8.9.7.29"]' "$M/cudaenv.json"
    before=$(wc -l < "$UP_LOG")
    run "$CUDAENV" mirror tf-2.14 tf-2.15 --to "$M"
    [ "$status" -eq 0 ]
    [ "$(wc -l < "$UP_LOG")" -eq "$before" ]
    [[ "$output" == *"0 added, 0 bytes; 4 already there"* ]]
    run "$CUDAENV" mirror --check "$M"
    [ "$status" -eq 0 ]
    [[ "$output" == *"4 files"* ]]
}

@test "--all mirrors every file for the platform; a platform the manifest lacks exits 3" {
    run "$CUDAENV" mirror --all --platform linux-x86_64 --to "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ "$(find "$M/compute" -type f | wc -l)" -eq 5 ]
    py 'sorted(m["tensorflow"]) == ["2.12", "2.14", "2.15"]' "$M/cudaenv.json"
    run --separate-stderr "$CUDAENV" mirror tf-2.14 --platform linux-x86_64,linux-sbsa --to "$T/sbsa"
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"no runfile for linux-sbsa"* ]]
    [ ! -e "$T/sbsa/cudaenv.json" ]
    run --separate-stderr "$CUDAENV" mirror tf-2.14 --platform windows --to "$T/w"
    [ "$status" -eq 2 ]
}

@test "a dropped connection is resumed with Range; NVIDIA URLs through CUDAENV_MIRROR keep NVIDIA's paths" {
    CUDAENV_MANIFEST=$UPSTREAM/manifest-nvidia.json CUDAENV_MIRROR=$UP_URL/_/drop=5000 \
        run "$CUDAENV" mirror tf-2.14 --to "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    cmp "$UPSTREAM/$RUN118" "$M/$RUN118"
    [ "$(server_requests "GET /_/drop=5000/$RUN118 range=bytes=5000- status=206")" -eq 1 ]
    py 'm["cuda"]["11.8.0"]["runfile"]["linux-x86_64"]["url"] == "'$RUN118'"' "$M/cudaenv.json"
}

@test "a mirror run that died mid-download resumes from its .part on the next run" {
    # what a killed run leaves: the first 5000 bytes in .cudaenv-mirror/cache/<sha256>.part
    sha=$(sha256sum "$UPSTREAM/$RUN118" | cut -d" " -f1)
    mkdir -p "$M/.cudaenv-mirror/cache"
    head -c 5000 "$UPSTREAM/$RUN118" > "$M/.cudaenv-mirror/cache/$sha.part"
    run "$CUDAENV" -v mirror 11.8 --no-cudnn --to "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"resuming cuda_11.8.0_520.61.05_linux.run at byte 5000"* ]]
    [ "$(server_requests "GET /$RUN118 range=bytes=5000- status=206")" -eq 1 ]
    [ "$(server_requests "GET /$RUN118")" -eq 1 ]
    cmp "$UPSTREAM/$RUN118" "$M/$RUN118"
    [ -z "$(ls -A "$M/.cudaenv-mirror/cache")" ]
}

@test "a wrong sha256 upstream: exit 5, the file is not placed and no manifest names it" {
    python3 - "$CUDAENV_MANIFEST" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
a = m["cudnn"]["8.7.0.84"]["cuda11"]["linux-x86_64"]
a["sha256"] = "0" * 64
json.dump(m, open(sys.argv[1], "w"))
PY
    run "$CUDAENV" mirror tf-2.14 --to "$M"
    [ "$status" -eq 5 ]
    [[ "$output" == *"sha256 mismatch"* ]]
    [ ! -e "$M/$CUDNN87" ]
    [ ! -e "$M/cudaenv.json" ]
}

@test "files already in the download cache are copied, not downloaded again" {
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ]
    before=$(wc -l < "$UP_LOG")
    run "$CUDAENV" mirror tf-2.14 --to "$M"
    [ "$status" -eq 0 ]
    [ "$(wc -l < "$UP_LOG")" -eq "$before" ]
    cmp "$UPSTREAM/$RUN118" "$M/$RUN118"
}

@test "files in the download cache are copied across filesystems (no hard link): the same bytes, not downloaded again" {
    [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ] || skip "no tmpfs at /dev/shm"
    [ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$T")" ] || skip "/dev/shm is on the filesystem of the store"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ]
    before=$(wc -l < "$UP_LOG")
    SHM=$(mktemp -d /dev/shm/cudaenv-mirror.XXXXXX)
    run "$CUDAENV" mirror tf-2.14 --to "$SHM/site"
    local rc=$status out=$output
    local same=0
    cmp "$UPSTREAM/$RUN118" "$SHM/site/$RUN118" && cmp "$UPSTREAM/$CUDNN87" "$SHM/site/$CUDNN87" || same=1
    rm -rf "$SHM"
    [ "$rc" -eq 0 ] || { echo "$out"; false; }
    [ "$same" -eq 0 ]
    [ "$(wc -l < "$UP_LOG")" -eq "$before" ]
}

@test "11 cached files (the redistrib JSON, 10 components) copied into a mirror on another filesystem under ulimit -n 12: no descriptor kept per copy" {
    [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ] || skip "no tmpfs at /dev/shm"
    [ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$T")" ] || skip "/dev/shm is on the filesystem of the store"
    with_redist
    run "$CUDAENV" install 11.8 --no-cudnn
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    before=$(wc -l < "$UP_LOG")
    SHM=$(mktemp -d /dev/shm/cudaenv-mirror.XXXXXX)
    run bash -c 'ulimit -n 12; exec "$0" mirror 11.8 --no-cudnn --to "$1"' "$CUDAENV" "$SHM/site"
    local rc=$status out=$output n
    n=$(find "$SHM/site" -type f ! -path "*/.cudaenv-mirror/*" ! -name cudaenv.json | wc -l)
    local same=0
    cmp "$UPSTREAM/$(comp_file libcublas)" "$SHM/site/$(comp_file libcublas)" || same=1
    rm -rf "$SHM"
    [ "$rc" -eq 0 ] || { echo "$out"; false; }
    [ "$n" -eq 11 ] && [ "$same" -eq 0 ] || false   # what install fetched: the JSON and 10 components
    [ "$(wc -l < "$UP_LOG")" -eq "$before" ]
}

@test "mirror --check re-hashes: a same-size tamper and a missing file exit 5 naming them" {
    "$CUDAENV" -q mirror tf-2.14 --to "$M"
    run "$CUDAENV" mirror --check "$M"
    [ "$status" -eq 0 ]
    printf 'X' | dd of="$M/$RUN118" bs=1 seek=100 conv=notrunc 2>/dev/null
    rm "$M/$CUDNN87"
    run --separate-stderr "$CUDAENV" mirror --check "$M"
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"sha256 mismatch: $M/$RUN118"* ]]
    [[ "$stderr" == *"missing: $M/$CUDNN87"* ]]
    [[ "$stderr" == *"2 of 2 files"* ]]
    # the next mirror run repairs both: the tampered one has the right size, and is re-hashed
    run "$CUDAENV" mirror tf-2.14 --to "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"2 added"*"0 already there"* ]] || { echo "$output"; false; }
    cmp "$UPSTREAM/$CUDNN87" "$M/$CUDNN87"
    cmp "$UPSTREAM/$RUN118" "$M/$RUN118"
    run "$CUDAENV" mirror --check "$M"
    [ "$status" -eq 0 ]
    run "$CUDAENV" mirror --check "$T/nothing"
    [ "$status" -eq 3 ]
}

@test "a redistrib JSON pinned: the mirror holds exactly what install fetches (the JSON, the tf profile's components, cuDNN; no runfile); a node installs from it" {
    with_redist
    run "$CUDAENV" mirror tf-2.14 --to "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    cmp "$UPSTREAM/$RD/redistrib_11.8.0.json" "$M/$RD/redistrib_11.8.0.json"
    for c in $TF_COMPS; do cmp "$UPSTREAM/$(comp_file $c)" "$M/$(comp_file $c)"; done
    [ ! -e "$M/$RUN118" ]
    [ ! -e "$M/$RD/libnpp" ]                 # the toolkit profile's, not tf's
    [ ! -e "$M/$RD/nsight_systems" ]
    [ ! -e "$M/$RD/nvidia_driver" ]          # driver-side: never
    [ ! -e "$M/$RD/cuda_cudart/linux-sbsa" ]  # another platform
    cmp "$UPSTREAM/$CUDNN87" "$M/$CUDNN87"
    [ "$(find "$M" -type f ! -path "*/.cudaenv-mirror/*" ! -name cudaenv.json | wc -l)" -eq 10 ]
    py 'm["cuda"]["11.8.0"]["redist"]["url"] == "'$RD'/redistrib_11.8.0.json" and "runfile" not in m["cuda"]["11.8.0"]' "$M/cudaenv.json"
    py 'sorted(m["cuda"]["11.8.0"]["redist"]["mirror_components"]["linux-x86_64"]) == sorted("'"$TF_COMPS"'".split())' "$M/cudaenv.json"
    py 'sorted(m["profiles"]) == ["tf", "toolkit"] and list(m["tensorflow"]) == ["2.14"]' "$M/cudaenv.json"
    [[ "$output" == *"10 files (10 added"* ]] || { echo "$output"; false; }
    run "$CUDAENV" mirror --check "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"10 files"* ]]

    server_stop   # the "NVIDIA" server is gone: the node has only the mirror
    CUDAENV_ROOT=$T/node CUDAENV_MANIFEST=$M/cudaenv.json run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -x "$T/node/versions/11.8.0+cudnn8.7.0.84/bin/nvcc" ]
    py 'sorted(c["name"] for c in m["components"]) == sorted("'"$TF_COMPS"'".split())' \
        "$T/node/versions/11.8.0+cudnn8.7.0.84/.cudaenv-receipt.json"
    # a component the mirror was not made with: the node is told which file is missing
    CUDAENV_ROOT=$T/node2 CUDAENV_MANIFEST=$M/cudaenv.json run --separate-stderr "$CUDAENV" install tf-2.14 --components +libnpp
    [ "$status" -eq 4 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"libnpp-linux-x86_64"* ]] || { echo "$stderr"; false; }
    [ ! -e "$T/node2/versions/11.8.0+cudnn8.7.0.84" ]
    # a rerun fetches nothing and re-hashes what is there
    run "$CUDAENV" mirror tf-2.14 --to "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"0 added, 0 bytes; 10 already there"* ]] || { echo "$output"; false; }
}

@test "mirror with a redistrib JSON: --components and --from choose as install does; --check finds a tampered component, the rerun replaces it" {
    with_redist
    run "$CUDAENV" mirror 11.8 --no-cudnn --components +nsight_systems,-libnpp --to "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -f "$M/$(comp_file nsight_systems)" ]
    [ -f "$M/$(comp_file cuda_sanitizer_api)" ]   # toolkit profile
    [ ! -e "$M/$RD/libnpp" ]
    [ ! -e "$M/$RD/cuda_documentation" ]
    run --separate-stderr "$CUDAENV" mirror 11.8 --components +nonesuch --to "$T/m2"
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"nonesuch"* ]]
    run "$CUDAENV" mirror 11.8 --no-cudnn --from runfile --to "$T/m3"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -f "$T/m3/$RUN118" ]
    [ ! -e "$T/m3/$RD" ]
    run "$CUDAENV" mirror 11.8 --from runfile --components +x --to "$T/m4"
    [ "$status" -eq 2 ]

    # a same-size tampered component: --check names it; the next run replaces it
    f=$M/$(comp_file libcublas)
    printf 'X' | dd of="$f" bs=1 seek=100 conv=notrunc 2>/dev/null
    run --separate-stderr "$CUDAENV" mirror --check "$M"
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"sha256 mismatch: $f"* ]] || { echo "$stderr"; false; }
    [[ "$stderr" == *"1 of "* ]]
    rm "$M/$(comp_file cuda_nvcc)"
    run --separate-stderr "$CUDAENV" mirror --check "$M"
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"missing: $M/$(comp_file cuda_nvcc)"* ]] || { echo "$stderr"; false; }
    run "$CUDAENV" mirror 11.8 --no-cudnn --components +nsight_systems,-libnpp --to "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"2 added"* ]] || { echo "$output"; false; }
    cmp "$UPSTREAM/$(comp_file libcublas)" "$f"
    run "$CUDAENV" mirror --check "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "mirror --check and a rerun hold no descriptor per file (12 files under ulimit -n 12); the rerun leaves its work cache empty" {
    with_redist
    "$CUDAENV" -q mirror 11.8 --to "$M"
    [ "$(find "$M" -type f ! -path "*/.cudaenv-mirror/*" ! -name cudaenv.json | wc -l)" -eq 12 ]
    run bash -c 'ulimit -n 12; exec "$0" mirror --check "$1"' "$CUDAENV" "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"12 files"* ]] || { echo "$output"; false; }
    run bash -c 'ulimit -n 12; exec "$0" mirror 11.8 --to "$1"' "$CUDAENV" "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"0 added, 0 bytes; 12 already there"* ]] || { echo "$output"; false; }
    # the JSON the rerun read from the mirror's own copy is not left in its work cache
    [ -z "$(ls -A "$M/.cudaenv-mirror/cache")" ] || { ls -la "$M/.cudaenv-mirror/cache"; false; }
}

@test "a URL whose path would leave the mirror directory or clash with its own files is refused (exit 5)" {
    cp "$CUDAENV_MANIFEST" "$T/orig.json"
    for bad in "$UP_URL/compute/../../../etc/evil.run" "$UP_URL/a/./b.run" "../outside.run" "/etc/passwd" \
               "$UP_URL/cudaenv.json" ".cudaenv-mirror/cache/x" "$UP_URL/a//b.run" "$UP_URL/"; do
        python3 - "$T/orig.json" "$CUDAENV_MANIFEST" "$bad" <<'PY2'
import json, sys
m = json.load(open(sys.argv[1]))
m["cuda"]["11.8.0"]["runfile"]["linux-x86_64"]["url"] = sys.argv[3]
json.dump(m, open(sys.argv[2], "w"))
PY2
        run --separate-stderr "$CUDAENV" mirror tf-2.14 --to "$M"
        [ "$status" -eq 5 ] || { echo "not refused: $bad ($status) $stderr"; false; }
        [[ "$stderr" == *"cannot mirror"* ]] || { echo "$bad: $stderr"; false; }
    done
    [ ! -e "$T/etc" ]
    [ ! -e "$T/outside.run" ]
    [ ! -e "$M/cudaenv.json" ]
    [ "$(server_requests GET)" -eq 0 ]
}

@test "CUDAENV_MIRROR: an NVIDIA or PyPI URL whose path would leave the mirror ('..', '.', %2e%2e, .%2E, //) is refused, exit 5 naming it; nothing read outside it" {
    "$CUDAENV" -q mirror tf-2.14 --to "$M"
    server_stop
    # what a '..' would reach: the runfile's own bytes outside the mirror (its sha256 matches)
    mkdir -p "$T/outside"
    cp "$UPSTREAM/$RUN118" "$T/outside/x.run"
    local nv=https://developer.download.nvidia.com bad
    for bad in "$nv/compute/../../outside/x.run" "$nv/compute/./../../outside/x.run" \
               "$nv/compute/%2e%2e/%2E%2E/outside/x.run" "$nv/compute/.%2E/%2e./outside/x.run" \
               "$nv/compute//x.run" "https://files.pythonhosted.org/packages/../../outside/x.run" \
               "https://files.pythonhosted.org/%2e%2e/outside/x.run"; do
        python3 - "$UPSTREAM/manifest-nvidia.json" "$T/m.json" "$bad" <<'PY2'
import json, sys
m = json.load(open(sys.argv[1]))
m["cuda"]["11.8.0"]["runfile"]["linux-x86_64"]["url"] = sys.argv[3]
json.dump(m, open(sys.argv[2], "w"))
PY2
        CUDAENV_MANIFEST=$T/m.json CUDAENV_MIRROR=$M run --separate-stderr "$CUDAENV" install tf-2.14
        [ "$status" -eq 5 ] || { echo "not refused: $bad ($status) $stderr"; false; }
        [[ "$stderr" == *"URL '$bad' is refused under CUDAENV_MIRROR=$M"*"would leave the mirror"* ]] || { echo "$bad: $stderr"; false; }
        [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ] || { echo "$bad: installed"; false; }
    done
    # the same manifest with the mirror's own paths installs from it
    CUDAENV_MANIFEST=$UPSTREAM/manifest-nvidia.json CUDAENV_MIRROR=$M/ run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    grep -q "\"url\":.*\"file://$M/$RUN118\"" "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/.cudaenv-receipt.json" || { grep url "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/.cudaenv-receipt.json"; false; }
}

@test "mirror usage errors exit 2" {
    run "$CUDAENV" mirror tf-2.14
    [ "$status" -eq 2 ]
    run "$CUDAENV" mirror --to "$M"
    [ "$status" -eq 2 ]
    run "$CUDAENV" mirror tf-2.14 --all --to "$M"
    [ "$status" -eq 2 ]
    run "$CUDAENV" mirror --check "$M" tf-2.14
    [ "$status" -eq 2 ]
    run "$CUDAENV" mirror --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"--check DIR"* ]]
}

@test "install --modulefiles DIR writes the module files of every toolchain after installing" {
    run "$CUDAENV" install tf-2.14 --modulefiles "$T/mods"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -f "$T/mods/cuda/11.8.0-cudnn8.7.0.84.lua" ]
    run "$CUDAENV" install tf-2.15 --modulefiles "$T/mods" --module-format tcl
    [ "$status" -eq 0 ]
    [ -f "$T/mods/cuda/12.2.2-cudnn8.9.7.29" ]
    [ -f "$T/mods/cuda/11.8.0-cudnn8.7.0.84" ]
    [ ! -e "$T/mods/cuda/11.8.0-cudnn8.7.0.84.lua" ]
    grep -q "TensorFlow 2.14" "$T/mods/cuda/11.8.0-cudnn8.7.0.84"
    run "$CUDAENV" install tf-2.14 --modulefiles "$T/mods" --module-format csh
    [ "$status" -eq 2 ]
}

@test "a redistrib JSON pinned: two platforms share one JSON; --all takes the toolkit profile's components" {
    with_redist
    run "$CUDAENV" mirror 11.8 --no-cudnn --platform linux-x86_64,linux-sbsa --to "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    for plat in linux-x86_64 linux-sbsa; do
        cmp "$UPSTREAM/$(comp_file libnpp $plat)" "$M/$(comp_file libnpp $plat)"
    done
    py 'sorted(m["cuda"]["11.8.0"]["redist"]["mirror_components"]) == ["linux-sbsa", "linux-x86_64"]' "$M/cudaenv.json"
    [ -z "$(find "$M" -name '*.tmp-*')" ]
    run "$CUDAENV" mirror --check "$M"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    run "$CUDAENV" mirror --all --platform linux-x86_64 --to "$T/all"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -f "$T/all/$(comp_file libnpp)" ]
    [ -f "$T/all/$(comp_file cuda_sanitizer_api)" ]
    [ ! -e "$T/all/$RD/nsight_systems" ]
    [ -f "$T/all/$RUN118" ]   # --all: every runfile too
    run "$CUDAENV" mirror --check "$T/all"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
}
