#!/usr/bin/env bats
# The multi-stage container pattern of README ("Container images") without
# docker: a build stage installs tf-2.14 from a site mirror into its own
# CUDAENV_ROOT, the final stage gets one copied toolchain directory (what
# COPY --from=build does) and no cudaenv; the build stage is then deleted.
# The copied tree must be self-contained: no path into the build stage, no
# symlink leaving it, verify --json files/versions/loader pass on it, and
# nvcc + a -lcudart program resolve inside it.
load ../lib/common
load ../lib/server
bats_require_minimum_version 1.5.0

setup_file() { upstream_setup_file; }

setup() {
    common_setup
    upstream_serve
    export CUDAENV_TEST_LIBCUDA=$T/no-driver/libcuda.so.1; seams_on
    unset LD_LIBRARY_PATH
    # the site mirror the build stage installs from
    CUDAENV_MANIFEST=$T/manifest.json "$CUDAENV" -q mirror tf-2.14 --to "$T/site"
    server_stop
}

# server_stop too: a setup that failed after upstream_serve leaves the server
# running, holding bats' output open (the file never ends)
teardown() { server_stop; common_teardown; }

j() {
    python3 -c 'import json, sys
d = json.loads(sys.stdin.read())
st = {s["id"]: s for s in d["steps"]}
print(eval(sys.argv[1]))' "$1" <<<"$output"
}

# build stage -> final stage: prints the final tree
build_and_copy() {
    local build=$T/build/opt/cudaenv final=$T/final/usr/local/cuda
    CUDAENV_ROOT=$build CUDAENV_MANIFEST=$T/site/cudaenv.json "$CUDAENV" -q install tf-2.14 >&2 || return 1
    local p; p=$(CUDAENV_ROOT=$build CUDAENV_MANIFEST=$T/site/cudaenv.json "$CUDAENV" prefix tf-2.14) || return 1
    mkdir -p "$T/final/usr/local"
    cp -a "$p" "$final"
    rm -rf "$T/build"
    echo "$final"
}

@test "container pattern: the copied toolchain is self-contained and verify passes its files, versions and loader steps" {
    final=$(build_and_copy)
    [ -x "$final/bin/nvcc" ]
    [ ! -e "$T/build" ]
    # nothing points back into the build stage
    [ -z "$(grep -rlF "$T/build" "$final")" ]
    while IFS= read -r l; do
        r=$(readlink -f "$l"); [[ "$r" == "$final"/* ]] || { echo "symlink $l leaves the tree: $r"; false; }
    done < <(find "$final" -type l)
    # run time, no cudaenv: the image's ENV
    run env -i PATH="$final/bin:/usr/bin:/bin" LD_LIBRARY_PATH="$final/lib64" nvcc --version
    [[ "$output" == *"release 11.8, V11.8.89"* ]]
    fx_probe "$T/probe" "$final"
    run env -i LD_LIBRARY_PATH="$final/lib64" "$T/probe"
    [ "${lines[0]}" = 11080 ]
    [ "${lines[1]}" = "$final/lib64/libcudart.so.11.0" ]
    # verify the copy in a store of its own (versions/<name> is a copy of that tree)
    mkdir -p "$T/check/versions"
    # a real directory: as root a symlink inside the store is refused (trust rule)
    cp -a "$final" "$T/check/versions/11.8.0+cudnn8.7.0.84"
    CUDAENV_ROOT=$T/check run --separate-stderr "$CUDAENV" verify 11.8.0+cudnn8.7.0.84 --json
    [ "$status" -eq 8 ]   # no GPU here: the GPU steps are skipped
    [ "$(j 'st["files"]["status"]')" = passed ]
    [ "$(j 'st["versions"]["status"]')" = passed ]
    [ "$(j 'st["loader"]["status"]')" = passed ]
    [ "$(j 'd["versions"]["cudnn"]["header"]')" = 8.7.0 ]
    CUDAENV_ROOT=$T/check run --separate-stderr "$CUDAENV" verify 11.8.0+cudnn8.7.0.84 --json --deep
    [ "$(j 'st["files"]["status"]')" = passed ]
}

@test "container pattern: a copy that lost a file fails verify's files step (exit 7)" {
    final=$(build_and_copy)
    rm "$final/include/cudnn_version.h"
    mkdir -p "$T/check/versions"
    # a real directory: as root a symlink inside the store is refused (trust rule)
    cp -a "$final" "$T/check/versions/11.8.0+cudnn8.7.0.84"
    CUDAENV_ROOT=$T/check run --separate-stderr "$CUDAENV" verify 11.8.0+cudnn8.7.0.84 --json
    [ "$status" -eq 7 ]
    [ "$(j 'st["files"]["status"]')" = failed ]
    [[ "$(j 'st["files"]["summary"]')" == *"cudnn_version.h"* ]] || [[ "$(j 'st["files"]["evidence"]')" == *"cudnn_version.h"* ]]
}
