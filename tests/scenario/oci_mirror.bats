#!/usr/bin/env bats
# cudaenv mirror SPEC... --to oci://REGISTRY/REPO: a set of toolchains into a
# real registry (Debian's docker-registry on loopback): each installed here
# from the loopback "NVIDIA" server as install SPEC would, then pushed as
# REPO:<name> and REPO:<spec>; a node installs them by tag.
load ../lib/common
load ../lib/server
load ../lib/registry
bats_require_minimum_version 1.5.0

setup_file() {
    upstream_setup_file
}

setup() {
    common_setup
    export PATH=$BUILD/bin:/usr/bin:/bin
    registry_need
    upstream_serve
    export CUDAENV_MANIFEST=$T/manifest.json
}

teardown() {
    registry_stop
    server_stop
    common_teardown
}

@test "mirror tf-2.14 12.2 --to oci://REG/REPO: installed here, pushed under the toolchain name and the spec; a node installs by tag" {
    registry_start
    run --separate-stderr cudaenv mirror tf-2.14 12.2 --to "oci://$REG/site/cuda" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "${#lines[@]}" -eq 4 ] || { printf "%s\n" "${lines[@]}"; false; }
    [[ "${lines[0]}" == "oci://$REG/site/cuda:11.8.0-cudnn8.7.0.84@sha256:"* ]]
    [[ "${lines[1]}" == "oci://$REG/site/cuda:tf-2.14@${lines[0]##*@}" ]]
    [[ "${lines[2]}" == "oci://$REG/site/cuda:12.2.2-cudnn8.9.7.29@sha256:"* ]]
    [[ "${lines[3]}" == "oci://$REG/site/cuda:12.2@${lines[2]##*@}" ]]
    [[ "$stderr" == *"(0 blobs uploaded, 2 already there)"* ]]   # the spec's tag: the name's image again
    [ "$(registry_requests '"POST /v2/site/cuda/blobs/uploads/')" -eq 4 ]
    curl -s "http://$REG/v2/site/cuda/tags/list" | python3 -c 'import json,sys; t=sorted(json.load(sys.stdin)["tags"]); assert t == ["11.8.0-cudnn8.7.0.84", "12.2", "12.2.2-cudnn8.9.7.29", "tf-2.14"], t'
    # the two installers ran at once, each with its own HOME and TMPDIR: the --tmpdir it was given
    # (one static buffer gave the first the second's, which the second removed when it ended)
    for v in 11.8.0 12.2.2; do
        line=$(grep -m1 '^fixture installer: HOME=' "$CUDAENV_ROOT/logs/cuda-$v-runfile.log")
        [[ "$line" =~ HOME=([^ ]*)\ TMPDIR=([^ ]*)\ .*\ tmpdir=([^ ]*)\ defaultroot= ]] || { echo "$line"; false; }
        [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[3]}" ] && [ "${BASH_REMATCH[2]}" = "${BASH_REMATCH[3]}" ] \
            || { echo "$v: $line"; false; }
        echo "${BASH_REMATCH[3]}" >> "$T/tmpdirs"
    done
    [ "$(sort -u "$T/tmpdirs" | wc -l)" -eq 2 ] || { cat "$T/tmpdirs"; false; }
    export CUDAENV_ROOT=$T/node/root HOME=$T/node/home
    mkdir -p "$HOME"
    run --separate-stderr cudaenv install "oci://$REG/site/cuda:tf-2.14" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ -x "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/bin/nvcc" ]
}

@test "mirror --to oci:// takes specs alone, and no tag in the reference" {
    registry_start
    run cudaenv mirror --all --to "oci://$REG/site/cuda" --insecure
    [ "$status" -eq 2 ]
    [[ "$output" == *"takes SPECs alone"* ]]
    run cudaenv mirror 11.8 --to "oci://$REG/site/cuda:x" --insecure
    [ "$status" -eq 2 ]
    [[ "$output" == *"takes no tag or digest"* ]]
}
