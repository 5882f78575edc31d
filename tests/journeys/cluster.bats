#!/usr/bin/env bats
# Journey: the cluster admin (issue 22).  A lab's admin mirrors the default
# component path once from "NVIDIA" (a loopback server with CUDA 11.8.0's
# redistrib JSON pinned), checks the mirror, serves it over HTTP (a second
# loopback server; NVIDIA is gone from then on), and each node installs from
# it with module files, then a user on the node loads the module (Lmod, or
# Environment Modules as modules.bats finds it) and runs nvcc, and runs
# through cudaenv exec.  The row's NCCL comes as a wheel written by a
# streaming tool (data descriptors: no sizes in its local headers), checked
# against its RECORD.  Crosses: mirror (components, the wheel), mirror
# --check, the fetch over HTTP, install --modulefiles, module load, exec.
load ../lib/common
load ../lib/server
bats_require_minimum_version 1.5.0

LMOD_INIT=/usr/share/lmod/lmod/init/bash
P=11.8.0+cudnn8.7.0.84
WHEEL=pypi/nvidia_nccl_cu11-2.21.5-py3-none-manylinux2014_x86_64.whl

setup_file() {
    upstream_setup_file
    source "$BATS_TEST_DIRNAME/../lib/redist.sh"
    fx_redist "$UPSTREAM" 11.8.0
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

teardown() {
    server_stop
    common_teardown
}

# a clean login shell on a node: module (Lmod, else Environment Modules) + MODULEPATH
module_shell() {
    local mods=$1 script=$2 init
    if [ -f "$LMOD_INIT" ]; then
        init="source $LMOD_INIT"
    else
        local em
        for em in /usr/lib/x86_64-linux-gnu/modulecmd.tcl \
                  /var/cache/cudaenv-test/environment-modules/usr/lib/x86_64-linux-gnu/modulecmd.tcl; do
            [ -f "$em" ] && break
        done
        [ -f "$em" ] || skip "neither Lmod nor Environment Modules is installed"
        init="module() { eval \"\$(tclsh8.6 $em bash \"\$@\")\"; }"
    fi
    env -i HOME="$HOME" PATH=/usr/bin:/bin MODULEPATH="$mods" bash --norc --noprofile -c "$init; $script"
}

@test "cluster admin: mirror the default component path -> nodes install from it over HTTP -> module load -> exec" {
    SITE=$T/srv/cuda
    mkdir -p "$T/srv"
    # the site's key: the mirror signs its manifest, the nodes trust the public half
    # (root-owned /etc/cudaenv/keys, in the test's sysroot)
    openssl genpkey -algorithm ed25519 -out "$T/site.key" 2>/dev/null
    mkdir -p "$CUDAENV_SYSROOT/etc/cudaenv/keys"
    openssl pkey -in "$T/site.key" -pubout -out "$CUDAENV_SYSROOT/etc/cudaenv/keys/site.pem"
    run "$CUDAENV" mirror tf-2.14 --to "$SITE"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    run "$CUDAENV" mirror --check "$SITE"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"11 files in $SITE: all present"* ]] || { echo "$output"; false; }
    # NVIDIA and PyPI sent every file once: the JSON, the tf profile's 8 components, cuDNN, the NCCL wheel
    [ "$(server_requests "GET .*status=200")" -eq 11 ] || { cat "$SERVER_LOG"; false; }
    cmp "$UPSTREAM/$WHEEL" "$SITE/$WHEEL"
    zipinfo -v "$SITE/$WHEEL" nvidia/nccl/lib/libnccl.so.2 | grep -q 'extended local header: *yes'   # streamed
    server_stop

    server_start "$SITE"   # the lab's web server
    # signed for the URL the nodes use (its "source"): a second run, NVIDIA gone,
    # finds every file in place
    run "$CUDAENV" mirror tf-2.14 --to "$SITE" --sign-key "$T/site.key" --url "$SERVER_URL/cudaenv.json"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ "$(server_requests "GET")" -eq 0 ]
    for node in node1 node2; do
        CUDAENV_ROOT=$T/$node CUDAENV_MANIFEST=$SERVER_URL/cudaenv.json \
            run "$CUDAENV" install tf-2.14 --insecure --modulefiles "$T/$node/modulefiles"
        [ "$status" -eq 0 ] || { echo "$node: $output"; false; }
        [ -f "$T/$node/modulefiles/cuda/11.8.0-cudnn8.7.0.84.lua" ]
    done
    # a manifest changed on the web server after signing: no node takes it
    printf ' ' >> "$SITE/cudaenv.json"
    CUDAENV_ROOT=$T/node3 CUDAENV_MANIFEST=$SERVER_URL/cudaenv.json run "$CUDAENV" install tf-2.14 --insecure
    [ "$status" -eq 5 ] && [ ! -e "$T/node3/versions/11.8.0+cudnn8.7.0.84" ] || false
    # each node read everything from the mirror, once per node
    [ "$(server_requests "GET /compute/cuda/redist/redistrib_11.8.0.json .*status=200")" -eq 2 ]
    [ "$(server_requests "GET /compute/cuda/redist/.*\.tar\.xz .*status=200")" -eq 16 ]
    [ "$(server_requests "GET /$WHEEL .*status=200")" -eq 2 ]
    # every byte of the streamed wheel's library, on each node
    fx_nccl_member "$SITE/$WHEEL" nvidia/nccl/lib/libnccl.so.2 > "$T/libnccl.so.2"
    cmp "$T/node1/versions/$P/lib64/libnccl.so.2" "$T/libnccl.so.2"
    cmp "$T/node2/versions/$P/lib64/libnccl.so.2" "$T/libnccl.so.2"
    # planned on the login node (no GPU) for the compute nodes' driver: it runs there, and
    # for nodes still on an older driver the install stops before any download (exit 7)
    truncate -s -1 "$SITE/cudaenv.json"   # the signed manifest again
    CUDAENV_MANIFEST=$SERVER_URL/cudaenv.json run "$CUDAENV" --driver 520.61.05 info tf-2.14 --insecure
    [[ "$output" == *"runs there  yes: driver 520.61.05 >= 520.61.05"* ]] || { echo "$output"; false; }
    local before; before=$(server_requests "GET /compute/cuda/redist/.*\.tar\.xz")
    CUDAENV_ROOT=$T/oldnode CUDAENV_MANIFEST=$SERVER_URL/cudaenv.json run --separate-stderr \
        "$CUDAENV" install tf-2.14 --insecure --driver 440.33.01
    [ "$status" -eq 7 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"cannot run on the planned machine: CUDA 11.8.0 needs NVIDIA driver >= 520.61.05; the plan's --driver is 440.33.01"* ]] || { echo "$stderr"; false; }
    [ ! -e "$T/oldnode/versions/$P" ]
    [ "$(server_requests "GET /compute/cuda/redist/.*\.tar\.xz")" -eq "$before" ]

    # a user on node2: module load, then the compiler and the runtime of the toolchain
    run module_shell "$T/node2/modulefiles" '
        module load cuda/11.8.0-cudnn8.7.0.84 || exit 10
        echo "nvcc=$(command -v nvcc)"
        nvcc --version | tail -1
        echo "CUDA_HOME=$CUDA_HOME"
        ls "$CUDA_HOME/lib64/libcudart.so" "$CUDA_HOME/lib64/libcublas.so.11" "$CUDA_HOME/lib64/libnccl.so.2" >/dev/null && echo libs-ok'
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"nvcc=$T/node2/versions/$P/bin/nvcc"* ]] || { echo "$output"; false; }
    [[ "$output" == *"Cuda compilation tools, release 11.8, V11.8.89"* ]]
    [[ "$output" == *"CUDA_HOME=$T/node2/versions/$P"* ]]
    [[ "$output" == *"libs-ok"* ]]
    CUDAENV_ROOT=$T/node1 run "$CUDAENV" exec tf-2.14 -- nvcc --version
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = "Cuda compilation tools, release 11.8, V11.8.89" ]
    cmp "$T/node1/versions/$P/lib64/libcublas.so.11" "$T/node2/versions/$P/lib64/libcublas.so.11"
}
