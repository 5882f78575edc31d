#!/usr/bin/env bats
# Journey: the CI job (issue 22).  A repository pins its toolchain in
# .cuda-version; the job installs the pin (default component path, from a
# loopback "NVIDIA"), hands the environment to later steps as dotenv lines
# ($GITHUB_ENV style), prunes the cache before saving it, and the next run,
# on a fresh runner with only the saved cache and no network, reinstalls
# offline; the first runner's forced offline reinstall works too.  The
# archives have several xz blocks, as NVIDIA's do, and a 3 MiB library whose
# blocks decode straight into it (file blocks, issue 25); the row's NCCL
# comes as a wheel written by a streaming tool (data descriptors, no sizes in
# its local headers), checked against its RECORD.  Crosses: .cuda-version,
# install (components, file blocks, the wheel), env --shell dotenv, cache
# list (its kept sums against a walk, each download's name as fetched), cache
# prune, install --offline, exec.
load ../lib/common
load ../lib/server
bats_require_minimum_version 1.5.0

setup_file() {
    upstream_setup_file
    source "$BATS_TEST_DIRNAME/../lib/redist.sh"
    # NVIDIA's archives have several xz blocks; libcublasLt (3 MiB) spans many
    FX_REDIST_BIG=$((3 << 20)) FX_REDIST_XZ="-T2 --block-size=256KiB" fx_redist "$UPSTREAM" 11.8.0
}

setup() {
    common_setup
    upstream_serve
    export CUDAENV_MANIFEST=$T/manifest.json
    source "$TESTS_DIR/lib/redist.sh"
    fx_redist_manifest "$CUDAENV_MANIFEST" "$UPSTREAM" 11.8.0 "$SERVER_URL"
    source "$TESTS_DIR/lib/nccl.sh"
    FX_NCCL_SHAPE=streamed fx_nccl_manifest "$CUDAENV_MANIFEST" "$UPSTREAM" "$SERVER_URL" 2.21.5
}

WHEEL=pypi/nvidia_nccl_cu11-2.21.5-py3-none-manylinux2014_x86_64.whl

teardown() {
    server_stop
    common_teardown
}

@test "CI job: .cuda-version pin -> install it -> dotenv for later steps -> cache prune -> offline reinstall on a fresh runner" {
    mkdir -p "$T/repo"
    echo tf-2.14 > "$T/repo/.cuda-version"
    cd "$T/repo"
    spec=$(cat .cuda-version)
    # the job's step is a plain `cudaenv install`: the pin in effect (issue 22)
    CUDAENV_TEST_XZ_THREADS=$T/xzt run seams "$CUDAENV" install
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"installing tf-2.14, pinned by $T/repo/.cuda-version"* ]]
    # libcublasLt, byte for byte, its blocks decoded straight into it as it downloaded (issue 25)
    cmp "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/lib64/libcublasLt.so.11" \
        <(tar -xJOf "$UPSTREAM"/compute/cuda/redist/libcublas/linux-x86_64/*.tar.xz --wildcards '*/lib/libcublasLt.so.11')
    # NCCL's library, every byte of the streamed wheel's member
    fx_nccl_member "$UPSTREAM/$WHEEL" nvidia/nccl/lib/libnccl.so.2 > "$T/libnccl.so.2"
    cmp "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/lib64/libnccl.so.2" "$T/libnccl.so.2"
    if [ "$(nproc)" -ge 2 ]; then
        [ "$(awk '{n += $1} END {print n + 0}' "$T/xzt.files")" -ge 1 ] || { cat "$T/xzt.files"; false; }
    fi

    # a later step of the job gets the pin's environment as KEY=VALUE lines
    run --separate-stderr "$CUDAENV" env --shell dotenv
    [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
    printf '%s\n' "$output" > "$T/ci.env"
    run env -i $(grep -v '^#' "$T/ci.env") bash --norc --noprofile -c 'command -v nvcc; nvcc --version | tail -1; echo "$CUDA_HOME"'
    [ "$status" -eq 0 ] || { cat "$T/ci.env"; echo "$output"; false; }
    [ "${lines[0]}" = "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/bin/nvcc" ]
    [ "${lines[1]}" = "Cuda compilation tools, release 11.8, V11.8.89" ]

    # before the cache is saved: look at it (the trees' sums are kept), prune what no toolchain uses (here: nothing)
    run --separate-stderr "$CUDAENV" cache list --json
    [ "$status" -eq 0 ] && [ -s "$CUDAENV_ROOT/pkgs/.cudaenv-sizes" ] || { echo "$stderr"; false; }
    python3 -c 'import json, sys; items = json.loads(sys.argv[1])["items"]; assert items and all(i["used"] for i in items), items' "$output"
    # each download noted the name it was fetched as, the one its receipt gives (saved with the cache)
    python3 - "$output" "$CUDAENV_ROOT/cache/.cudaenv-names" <<'PY'
import json, sys
names = dict(l.split(" ", 1) for l in open(sys.argv[2]).read().splitlines())
for i in json.loads(sys.argv[1])["items"]:
    assert i["kind"] != "download" or names.get(i["name"]) == i["file"], (i, names)
PY
    before=$(ls "$CUDAENV_ROOT/cache" | sort)
    run --separate-stderr "$CUDAENV" cache prune
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$(ls "$CUDAENV_ROOT/cache" | sort)" = "$before" ] || { echo "$output"; false; }

    # the next run: a fresh runner restores only the cache; NVIDIA is unreachable
    server_stop
    mkdir -p "$T/runner2"
    cp -a "$CUDAENV_ROOT/cache" "$T/runner2/cache"
    CUDAENV_ROOT=$T/runner2 run "$CUDAENV" install --offline "$spec"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    CUDAENV_ROOT=$T/runner2 run "$CUDAENV" exec "$spec" -- nvcc --version
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = "Cuda compilation tools, release 11.8, V11.8.89" ]
    # and the first runner reinstalls offline too
    run "$CUDAENV" install --force --offline "$spec"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    cmp "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/lib64/libcublas.so.11" \
        "$T/runner2/versions/11.8.0+cudnn8.7.0.84/lib64/libcublas.so.11"
    cmp "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/lib64/libcublasLt.so.11" \
        "$T/runner2/versions/11.8.0+cudnn8.7.0.84/lib64/libcublasLt.so.11"
    cmp "$T/runner2/versions/11.8.0+cudnn8.7.0.84/lib64/libnccl.so.2" "$T/libnccl.so.2"
    cmp "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/lib64/libnccl.so.2" "$T/libnccl.so.2"
    # the reinstall linked the trees anew: cache list sums again, as a walk of every tree says
    cmp <("$CUDAENV" cache list --json) <("$CUDAENV" cache list --json --sizes) \
        || { diff <("$CUDAENV" cache list --json) <("$CUDAENV" cache list --json --sizes); false; }
}
