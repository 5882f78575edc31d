#!/usr/bin/env bats
# A shared cluster store: "nodes" are private mount namespaces that bind
# mount one directory at /opt/cudaenv (tests/lib/node.sh), the way compute
# nodes mount one NFS store.  Concurrent installs from two nodes, readers on
# a third running exec in a loop, and the store lock being an fcntl lock
# (what NFS carries between machines; flock would not see a POSIX lock).
load ../lib/common
load ../lib/server
bats_require_minimum_version 1.5.0

setup_file() {
    upstream_setup_file
    source "$BATS_TEST_DIRNAME/../lib/redist.sh"
    fx_redist "$UPSTREAM" 11.8.0   # pinned by the site mirror test only
}

setup() {
    common_setup
    upstream_serve
    export CUDAENV_MANIFEST=$T/manifest.json
    export SHARED=$T/shared NODE=$TESTS_DIR/lib/node.sh CUDAENV T
    mkdir -p "$SHARED"
    "$NODE" "$SHARED" -c true || skip "no mount namespaces here (node.sh needs root + unshare)"
}

teardown() {
    touch "$T/stop" "$T/release" 2>/dev/null || true
    server_stop
    common_teardown
}

# wait_for FILE PATTERN: up to 60 s for PATTERN to appear in FILE
wait_for() {
    local i
    for i in $(seq 600); do
        grep -q -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "timed out waiting for '$2' in $1"; cat "$1" 2>/dev/null; return 1
}

READER='
    ok=0 miss=0 bad=0
    while [ ! -e "$T/stop" ]; do
        out=$("$CUDAENV" exec 11.8.0+cudnn8.7.0.84 -- nvcc --version 2>&1); rc=$?
        case $rc in
            0) if [[ $out == *"release 11.8, V11.8.89"* ]]; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "BAD rc=0 $out"; fi ;;
            3) miss=$((miss + 1)) ;;
            *) bad=$((bad + 1)); echo "BAD rc=$rc $out" ;;
        esac
        for d in /opt/cudaenv/versions/*; do
            [ -e "$d" ] || continue
            [ -f "$d/.cudaenv-receipt.json" ] && [ -x "$d/bin/nvcc" ] && [ -e "$d/lib64/libcudart.so" ] \
                || { [ -e "$d" ] && { bad=$((bad + 1)); echo "HALF $d"; }; }
        done
        echo "ok=$ok miss=$miss bad=$bad" > "$T/reader.count.tmp"; mv "$T/reader.count.tmp" "$T/reader.count"
    done
    echo "reader: ok=$ok miss=$miss bad=$bad"'

@test "two nodes install into one shared store at once; a third node running exec in a loop never sees a half-made toolchain" {
    "$NODE" "$SHARED" -c "$READER" > "$T/reader.out" 2>&1 &
    local reader=$!
    wait_for "$T/reader.count" "miss="
    "$NODE" "$SHARED" -c '"$CUDAENV" install tf-2.14 tf-2.15' > "$T/a.out" 2>&1 &
    local a=$!
    "$NODE" "$SHARED" -c '"$CUDAENV" install tf-2.12 tf-2.14 && "$CUDAENV" install --force tf-2.14' > "$T/b.out" 2>&1 &
    local b=$!
    wait "$a" || { cat "$T/a.out"; false; }
    wait "$b" || { cat "$T/b.out"; false; }
    # the reader keeps going until it has seen the toolchain a few times
    for i in $(seq 600); do
        n=$(sed -n 's/^ok=\([0-9]*\) .*/\1/p' "$T/reader.count"); [ "${n:-0}" -ge 3 ] && break; sleep 0.1
    done
    touch "$T/stop"
    wait "$reader"
    cat "$T/reader.out"
    [ -z "$(grep "BAD\|HALF" "$T/reader.out")" ]
    grep -q "reader: ok=[1-9]" "$T/reader.out"
    [ "$(ls "$SHARED/versions")" = "$(printf '%s\n' 11.8.0+cudnn8.6.0.163 11.8.0+cudnn8.7.0.84 12.2.2+cudnn8.9.7.29)" ]
    for d in "$SHARED"/versions/*; do [ -f "$d/.cudaenv-receipt.json" ]; done
    [ -z "$(ls -d "$SHARED"/versions/.staging-* "$SHARED"/pkgs/.staging-* 2>/dev/null)" ]
    # one shared cache: every file came from the server once
    [ "$(server_requests 'cuda_11.8.0_520.61.05_linux.run')" -eq 1 ]
    [ "$(server_requests 'cudnn-linux-x86_64-8.7.0.84')" -eq 1 ]
}

@test "a site mirror of the default component path: nodes install from it over HTTP into the shared store, NVIDIA sent each file once" {
    source "$TESTS_DIR/lib/redist.sh"
    fx_redist_manifest "$CUDAENV_MANIFEST" "$UPSTREAM" 11.8.0 "$SERVER_URL"
    "$CUDAENV" -q mirror tf-2.14 --to "$T/site"
    [ "$(server_requests "GET .*redistrib_11.8.0.json")" -eq 1 ]
    [ "$(server_requests "GET .*libcublas-linux-x86_64")" -eq 1 ]
    [ "$(server_requests "GET .*\.run")" -eq 0 ]
    server_stop
    server_start "$T/site"
    # the site's manifest unsigned here (remote.bats signs mirrors): opted out
    SITE=$SERVER_URL "$NODE" "$SHARED" -c 'CUDAENV_MANIFEST_UNSIGNED=1 CUDAENV_MANIFEST=$SITE/cudaenv.json "$CUDAENV" -q install tf-2.14 --insecure'
    [ -x "$SHARED/versions/11.8.0+cudnn8.7.0.84/bin/nvcc" ]
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert len(r["components"]) == 8, r' \
        "$SHARED/versions/11.8.0+cudnn8.7.0.84/.cudaenv-receipt.json"
    [ "$(server_requests "GET /compute/cuda/redist/libcublas/linux-x86_64/.* status=200")" -eq 1 ]
    run --separate-stderr "$NODE" "$SHARED" -c '"$CUDAENV" exec tf-2.14 -- nvcc --version | tail -1'
    [ "$output" = "Cuda compilation tools, release 11.8, V11.8.89" ]
}

@test "the store lock is an fcntl lock: a POSIX lock held on one node makes install on another wait" {
    "$NODE" "$SHARED" -c 'python3 -c "
import fcntl, os, sys, time
f = open(\"/opt/cudaenv/.lock\", \"a+\")
fcntl.lockf(f, fcntl.LOCK_EX)
open(sys.argv[1] + \"/held\", \"w\").close()
while not os.path.exists(sys.argv[1] + \"/release\"): time.sleep(0.05)
" "$T"' &
    local holder=$!
    for i in $(seq 600); do [ -e "$T/held" ] && break; sleep 0.1; done
    [ -e "$T/held" ]
    "$NODE" "$SHARED" -c '"$CUDAENV" install tf-2.14' > "$T/b.out" 2>&1 &
    local b=$!
    wait_for "$T/b.out" "waiting for another cudaenv install/uninstall (/opt/cudaenv/.lock)"
    [ ! -e "$SHARED/versions/11.8.0+cudnn8.7.0.84" ]
    kill -0 "$b"
    touch "$T/release"
    wait "$holder"
    wait "$b" || { cat "$T/b.out"; false; }
    [ -x "$SHARED/versions/11.8.0+cudnn8.7.0.84/bin/nvcc" ]
}

@test "module files on the shared store name the path every node sees" {
    "$NODE" "$SHARED" -c '"$CUDAENV" -q install tf-2.14 --modulefiles /opt/cudaenv/modulefiles'
    grep -q 'local prefix = "/opt/cudaenv/versions/11.8.0+cudnn8.7.0.84"' "$SHARED/modulefiles/cuda/11.8.0-cudnn8.7.0.84.lua"
}

@test "compute nodes mount the store read-only: exec, list, env, modulefile work; install says why it cannot" {
    "$NODE" "$SHARED" -c '"$CUDAENV" -q install tf-2.14'
    run --separate-stderr "$NODE" "$SHARED" -c '
        mount -o remount,bind,ro /opt/cudaenv || exit 77
        touch /opt/cudaenv/x 2>/dev/null && { echo "not read-only"; exit 1; }
        "$CUDAENV" exec tf-2.14 -- nvcc --version | tail -1
        "$CUDAENV" list --names
        "$CUDAENV" env 11.8 --shell bash | grep "^export CUDA_HOME="
        "$CUDAENV" modulefile 11.8 --to "$T/mods"
        "$CUDAENV" install 12.2 2>&1; echo "install=$?"'
    [ "$status" -ne 77 ] || skip "cannot remount read-only here"
    [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
    [ "${lines[0]}" = "Cuda compilation tools, release 11.8, V11.8.89" ]
    [ "${lines[1]}" = "11.8.0+cudnn8.7.0.84" ]
    [[ "${lines[2]}" == "export CUDA_HOME="*"/opt/cudaenv/versions/11.8.0+cudnn8.7.0.84"* ]]
    [ "${lines[3]}" = "$T/mods/cuda/11.8.0-cudnn8.7.0.84.lua" ]
    [[ "$output" == *"cannot open /opt/cudaenv/.lock: Read-only file system"* ]]
    [[ "$output" == *"install=1"* ]]
}
