#!/usr/bin/env bats
# Journey: the cluster admin (issue 22).  A lab's admin mirrors the default
# component path once from "NVIDIA" (a loopback server with CUDA 11.8.0's
# redistrib JSON pinned), checks the mirror, serves it over HTTP (a second
# loopback server; NVIDIA is gone from then on), and each node installs from
# it with module files, then a user on the node loads the module (Lmod, or
# Environment Modules as modules.bats finds it) and runs nvcc, and runs
# through cudaenv exec.  The row's NCCL comes as a wheel written by a
# streaming tool (data descriptors: no sizes in its local headers), checked
# against its RECORD; then repacks it as zstd for the LAN and a new node
# installs the same tree from it.  Crosses: mirror (components, the wheel), mirror
# --check, mirror --repack zstd, the fetch over HTTP, install --modulefiles, module load, exec.
#
# The second journey (issue 41): the cluster at scale.  A build node installs
# the toolchain from "NVIDIA" and pushes it to the site's registry (Debian's
# docker-registry on loopback); skopeo, the independent client, reads its tree
# digest annotation; a second node installs it by `install oci://` (NVIDIA not
# asked; from then on it is gone); on both nodes a job's Slurm Prolog (contrib/slurm, run as
# slurmd runs it: root, SLURM_* set, each node with its own hostname in a UTS
# namespace) puts the job's toolchain in place and verifies it, the TaskProlog
# gives the job its environment, the Epilog keeps the `verify --report` line;
# a second user's job finds the toolchain in the node's shared, root-owned
# store through its index (written by root, read, never written, by the user);
# cudaenv-report merges the lines: both nodes, one tree digest, the image's;
# a node whose files drift fails its next prolog and the merge.
# Crosses: install, push, install oci://, contrib/slurm's scripts, the shared
# store's index, verify --report, cudaenv-report --digest.
load ../lib/common
load ../lib/server
load ../lib/registry
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
    registry_stop
    server_stop
    [ -n "${ADDED_USER:-}" ] && userdel "$ADDED_USER" 2>/dev/null
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

    # for the LAN: the admin repacks the mirror as zstd (each .tar.zst read back and decoded before
    # it is kept) and signs it again; a new node installs the very tree from the .tar.zst
    run "$CUDAENV" mirror tf-2.14 --to "$SITE" --repack zstd --sign-key "$T/site.key" --url "$SERVER_URL/cudaenv.json"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"repacked 9 archives as .tar.zst"* ]] || { echo "$output"; false; }
    CUDAENV_ROOT=$T/node4 CUDAENV_MANIFEST=$SERVER_URL/cudaenv.json run "$CUDAENV" install tf-2.14 --insecure
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ "$(server_requests "GET /compute/cuda/redist/.*\.tar\.zst .*status=200")" -eq 8 ]
    [ "$(server_requests "GET /compute/cudnn/.*\.tar\.zst .*status=200")" -eq 1 ]
    diff -r -x .cudaenv-receipt.json -x .cudaenv-usage "$T/node1/versions/$P" "$T/node4/versions/$P"
}

# node NAME CMD...: CMD as slurmd runs a node's scripts: root, that node's
# site file and name, and NAME.site as the hostname (a UTS namespace: verify
# --report names the node as Slurm does, with its hostname beside)
node() {
    local n=$1; shift
    SLURMD_NODENAME=$n CUDAENV_SLURM_CONF=$T/$n/slurm.conf unshare --uts sh -c 'hostname "$0.site" && exec "$@"' "$n" "$@"
}

# site_file NAME: the node's /etc/cudaenv/slurm.conf (root's, 644): its store,
# the site's manifest, where the state and the reports go; no GPU here
site_file() {
    mkdir -p "$T/$1"
    cat > "$T/$1/slurm.conf" <<EOF
export CUDAENV_ROOT=$T/$1/opt CUDAENV_SYSROOT=$CUDAENV_SYSROOT CUDAENV_MANIFEST=$CUDAENV_MANIFEST
export CUDAENV_TEST_LIBCUDA=$T/no-driver/libcuda.so.1 LD_PRELOAD=$SEAMS_SO ASAN_OPTIONS=$(fx_asan_preload_ok)
CUDAENV=$CUDAENV
CUDAENV_SLURM_STATE=$T/$1/state
CUDAENV_SLURM_REPORTS=$T/shared/reports
CUDAENV_SLURM_ALLOW_NO_GPU=1
EOF
    chmod 644 "$T/$1/slurm.conf"
}

@test "cluster at scale: build node pushes the toolchain to the site registry -> a second node installs oci:// -> Slurm prolog on both -> cudaenv-report: both nodes, the image's tree digest" {
    [ "$(id -u)" -eq 0 ] || skip "the Slurm prolog runs as root, as slurmd runs it"
    command -v skopeo >/dev/null || skip "no skopeo: apt-get install skopeo (tools/deps-test.txt)"
    unshare --uts true 2>/dev/null || skip "no UTS namespace here: two nodes on one machine would report one hostname"
    registry_start   # skips with the reason without docker-registry
    SL=$REPO/contrib/slurm
    IMG=oci://$REG/site/cuda:tf-2.14
    site_file n1
    site_file n2
    # the build node (n1's store): the toolchain from NVIDIA, then into the registry
    CUDAENV_ROOT=$T/n1/opt run --separate-stderr "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    CUDAENV_ROOT=$T/n1/opt run --separate-stderr "$CUDAENV" push tf-2.14 "$IMG" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$output" == "$IMG@sha256:"* ]] || { echo "$output"; false; }
    DIGEST=${output##*@}
    [[ "$stderr" == *"2 blobs uploaded, 0 already there"* ]]
    local pushed=$stderr
    # skopeo's view: the image's toolchain and its tree digest
    run skopeo inspect --tls-verify=false "docker://$REG/site/cuda:tf-2.14"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    read -r TREE TC DG < <(python3 -c 'import json, sys; i = json.load(sys.stdin); l = i["Labels"]
print(l["io.cudaenv.tree_sha256"], l["io.cudaenv.toolchain"], i["Digest"])' <<<"$output")
    [ "$TC" = "$P" ] && [ "$DG" = "$DIGEST" ] && [[ "$TREE" =~ ^[0-9a-f]{64}$ ]] || { echo "$output"; false; }
    [[ "$pushed" == *"tree digest $TREE"* ]]
    LAYER=$(skopeo inspect --raw --tls-verify=false "docker://$REG/site/cuda:tf-2.14" \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["layers"][0]["digest"])')

    # the second node installs the image: every file from the registry, none from NVIDIA
    local nvidia; nvidia=$(server_requests "GET")
    [ "$(server_requests "GET .*\.tar\.xz")" -gt 0 ] && [ "$(server_requests "GET .*\.whl")" -gt 0 ] || false   # n1's from NVIDIA
    CUDAENV_ROOT=$T/n2/opt run --separate-stderr "$CUDAENV" install "$IMG" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"installed $P in $T/n2/opt/versions/$P from $IMG (image $DIGEST"* ]] || { echo "$stderr"; false; }
    [ "$(registry_requests "\"GET /v2/site/cuda/blobs/$LAYER ")" -eq 1 ] || { cat "$REG_LOG"; false; }
    cmp "$T/n1/opt/versions/$P/lib64/libcublas.so.11" "$T/n2/opt/versions/$P/lib64/libcublas.so.11"
    cmp "$T/n1/opt/versions/$P/lib64/libnccl.so.2" "$T/n2/opt/versions/$P/lib64/libnccl.so.2"
    [ "$(server_requests "GET")" -eq "$nvidia" ] || { tail -n +$((nvidia + 1)) "$SERVER_LOG"; false; }
    server_stop   # NVIDIA gone from here on: the nodes have their stores and the registry

    # a job on each node: .cuda-version in its directory, the prolog as slurmd runs it (the
    # toolchain in place: NVIDIA, gone, is not needed)
    mkdir -p "$T/job" && echo tf-2.14 > "$T/job/.cuda-version"
    export SLURM_JOB_USER=root SLURM_JOB_WORK_DIR=$T/job
    unset SLURM_JOB_COMMENT CUDAENV_SPEC
    for n in n1 n2; do
        SLURM_JOB_ID=4101 node "$n" "$SL/cudaenv-prolog" 2> "$T/$n/prolog.err" || { cat "$T/$n/prolog.err"; false; }
        grep -q "^status=ok$" "$T/$n/state/job-4101" || { cat "$T/$n/state/job-4101" "$T/$n/prolog.err"; false; }
        grep -qx "prefix=$T/$n/opt/versions/$P" "$T/$n/state/job-4101"
        grep -qF "cudaenv-prolog: job 4101 on $n: $P in place at $T/$n/opt/versions/$P, verified (exit 8)" "$T/$n/prolog.err" \
            || { cat "$T/$n/prolog.err"; false; }
        # the job's tasks get the toolchain's environment
        SLURM_JOB_ID=4101 run node "$n" "$SL/cudaenv-task-prolog"
        [ "$status" -eq 0 ] || { echo "$output"; false; }
        [[ "$output" == *"export CUDA_HOME=$T/$n/opt/versions/$P"* ]] || { echo "$output"; false; }
        SLURM_JOB_ID=4101 node "$n" "$SL/cudaenv-epilog"
        [ ! -e "$T/$n/state/job-4101" ] && [ -s "$T/shared/reports/$n.jsonl" ] || false
    done

    # a second user's job on n2 naming its toolchain only in CUDAENV_SPEC: the TaskProlog, as
    # that user, finds it in the site store (root's, shared by every job) through the store's index
    U=cudaenv-jrny41
    id "$U" >/dev/null 2>&1 || { useradd -M -N -s /bin/sh "$U" && ADDED_USER=$U; } || skip "useradd $U failed"
    mkdir -p "$T/uhome" && chown "$U" "$T/uhome"
    chmod 755 "$T" "$T/n2" && chmod -R a+rX "$T/n2/opt" "$T/n2/state" && chmod 644 "$CUDAENV_MANIFEST"
    local index; index=$(stat -c '%U %s %Y' "$T/n2/opt/versions/.index")
    [ "${index%% *}" = root ]
    run runuser -u "$U" -- env -i PATH=/usr/bin:/bin HOME="$T/uhome" SLURM_JOB_ID=4103 SLURMD_NODENAME=n2 \
        CUDAENV_SLURM_CONF="$T/n2/slurm.conf" CUDAENV_SPEC=tf-2.14 "$SL/cudaenv-task-prolog"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"export CUDA_HOME=$T/n2/opt/versions/$P"* ]] || { echo "$output"; false; }
    [[ "$output" == *"print cudaenv: $P (tf-2.14) on n2, from CUDAENV_SPEC, installed in the site store"* ]]
    [ "$(stat -c '%U %s %Y' "$T/n2/opt/versions/.index")" = "$index" ]
    [ -z "$(find "$T/n2/opt" -user "$U")" ]

    # the merge: both nodes, each on its own host, one tree digest: the image's annotation
    python3 - "$T/shared/reports" "$TREE" "$DIGEST" "$IMG" <<'PY'
import json, os, sys
d, tree, digest, img = sys.argv[1:]
r = {n: json.loads(open(os.path.join(d, n + ".jsonl")).read().splitlines()[-1]) for n in ("n1", "n2")}
assert [(r[n]["host"], r[n]["hostname"]) for n in ("n1", "n2")] == [("n1", "n1.site"), ("n2", "n2.site")], r
assert all(x["tree_sha256"] == tree and x["exit_code"] == 8 and x["steps"]["files"] == "passed" for x in r.values()), r
assert "image" not in r["n1"] and r["n2"]["image"] == {"reference": img, "digest": digest}, r
PY
    run "$SL/cudaenv-report" --allow-no-gpu --digest "$TREE" "$T/shared/reports"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 4 ]
    [[ "${lines[0]}" =~ ^NODE\ +TOOLCHAIN\ +DIGEST\ +IMAGE\ +LIBS\ +GPU\ STEPS\ +RESULT$ ]]
    [[ "${lines[1]}" =~ ^n1\ +${P//+/\\+}\ +${TREE:0:12}\ +-\ +same\ +no\ GPU\ +ok$ ]]
    [[ "${lines[2]}" =~ ^n2\ +${P//+/\\+}\ +${TREE:0:12}\ +${DIGEST:0:19}\ +same\ +no\ GPU\ +ok$ ]]
    [ "${lines[3]}" = "$P: 2 nodes, 2 ok" ]
    # n2's files drift from the image: its next job's prolog fails (Slurm drains it), and its
    # report line, merged, is named against the image's digest
    echo tampered >> "$T/n2/opt/versions/$P/lib64/libcublas.so.11"
    local rc=0
    SLURM_JOB_ID=4102 node n2 "$SL/cudaenv-prolog" 2> "$T/n2/prolog.err" || rc=$?
    [ "$rc" -eq 1 ] || { cat "$T/n2/prolog.err"; false; }
    grep -qF "cudaenv verify $P failed (exit 7): files: 1 of" "$T/n2/prolog.err" || { cat "$T/n2/prolog.err"; false; }
    SLURM_JOB_ID=4102 node n2 "$SL/cudaenv-epilog"
    run "$SL/cudaenv-report" --allow-no-gpu --digest "$TREE" "$T/shared/reports"
    [ "$status" -eq 1 ]
    [[ "${lines[2]}" == "n2 "*"FAIL: files: "* ]] || { echo "$output"; false; }
}
