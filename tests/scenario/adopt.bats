#!/usr/bin/env bats
# cudaenv adopt: a toolkit cudaenv did not install (a /usr/local/cuda-X.Y,
# a distribution's /usr/lib/cuda) becomes a toolchain that list marks as
# adopted and use/exec/env/verify treat like any other; uninstall forgets it
# and never touches the directory.  adopt --scan offers what the machine has.
load ../lib/common
bats_require_minimum_version 1.5.0

setup() {
    common_setup
    export PATH=$BUILD/bin:/usr/bin:/bin
    unset LD_LIBRARY_PATH CUDA_HOME CUDA_PATH CUDNN_PATH CUDAENV_WARNED
    # a toolkit with cuDNN inside, where NVIDIA's runfile would have put it
    TK=$CUDAENV_SYSROOT/usr/local/cuda-12.4
    fx_toolkit "$TK" 12.4.1 >/dev/null
    fx_cudnn "$T/cudnn" 9.1.0.70 12 >/dev/null
    cp -a "$T/cudnn/include/." "$TK/include/"
    cp -a "$T/cudnn/lib/." "$TK/lib64/"
    ( cd "$TK" && find . -type f -o -type l | sort ) > "$T/before"
}
teardown() { common_teardown; }

@test "adopt DIR: versions from version.json and cudnn_version.h; listed as adopted; usable by use/exec/env/verify" {
    run --separate-stderr cudaenv adopt "$TK"
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"adopted $TK as 12.4.1+cudnn9.1.0"* && "$stderr" == *"cudaenv use 12.4.1+cudnn9.1.0"* ]]
    run cudaenv list
    [[ "$output" == *"12.4.1+cudnn9.1.0  (adopted: $TK)"* ]]
    run cudaenv list --json
    [ "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["toolchains"][0]["adopted_from"])' <<<"$output")" = "$TK" ]
    # its bytes from the record adopt wrote are what a walk counts (the marker naming $TK too)
    [ "$output" = "$(cudaenv list --json --sizes)" ] || { echo "$output"; cudaenv list --json --sizes; false; }
    run cudaenv exec 12.4 -- sh -c 'command -v nvcc; echo "$CUDNN_PATH"'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "$CUDAENV_ROOT/versions/12.4.1+cudnn9.1.0/bin/nvcc" ]
    [ "$(readlink -f "${lines[0]}")" = "$TK/bin/nvcc" ]
    run bash --norc -c 'eval "$(cudaenv init bash)"; cudaenv use -q 12.4.1+cudnn9.1.0 && echo "$CUDA_HOME"'
    [ "$output" = "$CUDAENV_ROOT/versions/12.4.1+cudnn9.1.0" ]
    # the receipt written at adopt time: verify's file step passes, and sees a change
    run cudaenv verify 12.4.1+cudnn9.1.0 --json
    [[ "$output" == *'"name":"files","status":"passed"'* || "$output" == *'"files"'*'"passed"'* ]]
    echo '# changed after adopt' >> "$TK/bin/nvcc"
    run cudaenv verify 12.4.1+cudnn9.1.0
    [[ "$output" == *"1 wrong size"*"$TK changed since"*"cudaenv adopt $TK --name 12.4.1+cudnn9.1.0"* ]]
    [[ "$output" != *"cudaenv install 12.4.1+cudnn9.1.0 --force"* ]]
}

@test "verify of an adopted toolchain: the loader step compares files, not names (links into the tree), exit 8 without a driver" {
    cudaenv adopt -q "$TK"
    export CUDAENV_TEST_LIBCUDA=$T/no-driver/libcuda.so.1; seams_on
    run --separate-stderr cudaenv verify 12.4.1+cudnn9.1.0 --json
    [ "$status" -eq 8 ] || { echo "$output"; false; }
    python3 -c 'import json, sys
d = json.loads(sys.stdin.read()); st = {s["id"]: s for s in d["steps"]}
for k in ("files", "versions", "loader"): assert st[k]["status"] == "passed", (k, st[k])
assert "3 libraries mapped" in st["loader"]["summary"], st["loader"]' <<<"$output"
}

@test "adopt: --name with a label beside a toolchain of the same versions; a taken name gets @adopted" {
    mkdir -p "$CUDAENV_ROOT/versions"
    fx_installed 12.4.1 9.1.0 >/dev/null
    run --separate-stderr cudaenv adopt "$TK"
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"as 12.4.1+cudnn9.1.0@adopted"* ]]
    run --separate-stderr cudaenv adopt "$TK" --name 12.4.1@mine
    [[ "$stderr" == *"already adopted as 12.4.1+cudnn9.1.0@adopted"* ]]
    run --separate-stderr cudaenv uninstall 12.4.1+cudnn9.1.0@adopted
    [ "$status" -eq 0 ]
    run --separate-stderr cudaenv adopt "$TK" --name 12.4.1@mine
    [ "$status" -eq 0 ]
    run cudaenv prefix 12.4.1@mine
    [ "$output" = "$CUDAENV_ROOT/versions/12.4.1@mine" ]
    cp -a "$TK" "$T/tk2"
    run --separate-stderr cudaenv adopt "$T/tk2" --name 'bad name'
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"CUDA[+cudnnVER][@label]"* ]]
}

@test "uninstall of an adopted toolchain forgets it and leaves the directory as it was" {
    cudaenv adopt -q "$TK"
    run --separate-stderr cudaenv uninstall 12.4.1+cudnn9.1.0
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"forgot 12.4.1+cudnn9.1.0; $TK is left as it was"* ]]
    [ ! -e "$CUDAENV_ROOT/versions/12.4.1+cudnn9.1.0" ]
    ( cd "$TK" && find . -type f -o -type l | sort ) > "$T/after"
    diff "$T/before" "$T/after"
}

@test "adopt refuses what is no toolkit, and names what it looked for" {
    mkdir -p "$T/empty"
    run --separate-stderr cudaenv adopt "$T/empty"
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"not a CUDA toolkit"*"version.json"*"version.txt"*"cuda.h"* ]]
    run --separate-stderr cudaenv adopt "$T/nowhere"
    [ "$status" -eq 3 ]
}

@test "adopt: the header when there is no version.json, and the tree's nvcc never runs (issue 21)" {
    rm "$TK/version.json"
    # a planted nvcc that would leave a mark if cudaenv ran it to learn the version
    printf '#!/bin/sh\ntouch "%s"\necho "Cuda compilation tools, release 12.4, V12.4.1"\n' "$T/ran" > "$TK/bin/nvcc"
    run --separate-stderr cudaenv adopt "$TK" --name 12.4@hdr
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ ! -e "$T/ran" ]
    run cudaenv list
    [[ "$output" == *"12.4@hdr"* ]]
    run --separate-stderr cudaenv adopt --scan
    [ "$status" -eq 0 ]
    [ ! -e "$T/ran" ]
}

@test "adopt: nothing but bin/nvcc is no toolkit (exit 3); the nvcc is not run, even in a directory named with a quote and a space" {
    local q="$T/it's cuda"
    mkdir -p "$q"
    cp -a "$TK/." "$q/"
    rm -f "$q/version.json" "$q/version.txt" "$q/include/cuda.h" "$q/include/cuda_runtime_api.h"
    printf '#!/bin/sh\ntouch "%s"\necho "Cuda compilation tools, release 12.4, V12.4.1"\n' "$T/ran" > "$q/bin/nvcc"
    run --separate-stderr cudaenv adopt "$q" --name 12.4@quoted
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"$q is not a CUDA toolkit"* ]]
    [ ! -e "$T/ran" ]
    [ ! -e "$CUDAENV_ROOT/versions/12.4@quoted" ]
}

@test "adopt: a runfile's date-stamped version.json is named by its cuda_cudart release (12.2.2, not 12.2.0), else by major.minor" {
    local d="$T/cuda-12.2"
    fx_toolkit "$d" 12.2.2 >/dev/null
    cat > "$d/version.json" <<'JSON'
{ "cuda" : { "name" : "CUDA SDK", "version" : "12.2.20230823" },
  "cuda_cudart" : { "name" : "CUDA Runtime (cudart)", "version" : "12.2.140" } }
JSON
    run --separate-stderr cudaenv adopt "$d"
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"adopted $d as 12.2.2"* ]]
    local e="$T/cuda-12.9"
    fx_toolkit "$e" 12.9.1 >/dev/null
    cat > "$e/version.json" <<'JSON'
{ "cuda" : { "name" : "CUDA SDK", "version" : "12.9.20250531" },
  "cuda_cudart" : { "name" : "CUDA Runtime (cudart)", "version" : "12.9.999" } }
JSON
    run --separate-stderr cudaenv adopt "$e"
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"adopted $e as 12.9"* && "$stderr" != *"as 12.9.0"* ]]
}

@test "adopt --scan offers /usr/local/cuda-*, /opt/cuda* and /usr/lib/cuda, marking the adopted one" {
    fx_toolkit "$CUDAENV_SYSROOT/usr/lib/cuda" 11.5.2 >/dev/null
    ln -s cuda-12.4 "$CUDAENV_SYSROOT/usr/local/cuda"
    cudaenv adopt -q "$TK"
    run --separate-stderr cudaenv adopt --scan
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 2 ]
    [[ "${lines[0]}" == "$TK "*"CUDA 12.4.1 + cuDNN 9.1.0"*"adopted as 12.4.1+cudnn9.1.0"* ]]
    [[ "${lines[1]}" == "$CUDAENV_SYSROOT/usr/lib/cuda "*"CUDA 11.5.2"*"cudaenv adopt $CUDAENV_SYSROOT/usr/lib/cuda"* ]]
}
