#!/usr/bin/env bats
# Messages that end in a next step: the usage hint, did-you-mean for
# commands, global options before the command, "not installed" naming the
# store it looked in and suggesting only what the manifest can install,
# leaving TensorFlow's tested pair, uninstalling the active toolchain, and
# info without the maintainers' working notes.
load ../lib/common
bats_require_minimum_version 1.5.0

setup() { common_setup; }
teardown() { common_teardown; }

@test "usage errors end in Try 'cudaenv CMD --help' (with the space)" {
    run --separate-stderr "$CUDAENV" info
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"Try 'cudaenv info --help'."* ]]
    run --separate-stderr "$CUDAENV" --bogus
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"Try 'cudaenv --help'."* ]]
}

@test "a mistyped command gets the nearest one" {
    run --separate-stderr "$CUDAENV" instal tf-2.14
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"unknown command 'instal'; did you mean 'install'?"* ]]
    run --separate-stderr "$CUDAENV" verfy
    [[ "$stderr" == *"did you mean 'verify'?"* ]]
    run --separate-stderr "$CUDAENV" xyzzyq
    [[ "$stderr" != *"did you mean"* ]]
}

@test "global options before or after the command: --manifest, --insecure, -q" {
    cp "$REPO/share/manifests/cudaenv.json" "$T/m.json"
    run --separate-stderr "$CUDAENV" --manifest "$T/m.json" --insecure info tf-2.14
    [ "$status" -eq 0 ]
    [[ "$output" == *"manifest      $T/m.json"* ]]
    run --separate-stderr "$CUDAENV" info tf-2.14 --manifest="$T/m.json" --insecure
    [ "$status" -eq 0 ]
    [[ "$output" == *"manifest      $T/m.json"* ]]
    run --separate-stderr "$CUDAENV" --manifest "$T/none.json" list-remote
    [ "$status" -ne 0 ]
    [[ "$stderr" == *"$T/none.json"* ]]
    run --separate-stderr "$CUDAENV" --manifest
    [ "$status" -eq 2 ]
}

@test "not installed: names the store it looked in; suggests install only for installable specs" {
    fx_installed 12.3.0 >/dev/null
    run --separate-stderr "$CUDAENV" prefix 99.9
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"not installed in $CUDAENV_ROOT/versions"* ]]
    [[ "$stderr" == *"installed: 12.3.0"* ]]
    [[ "$stderr" != *"install 99.9"* ]]
    [[ "$stderr" == *"cudaenv list-remote"* ]]
    run --separate-stderr "$CUDAENV" prefix 11.8
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"run: cudaenv install 11.8"* ]]
}

@test "not installed under sudo: says the store is root's and how to reach the user's" {
    [ "$(id -u)" -eq 0 ] || skip "needs root (sudo sets SUDO_USER with euid 0)"
    run --separate-stderr env -u CUDAENV_ROOT HOME="$T/roothome" SUDO_USER=alice "$CUDAENV" prefix 11.8
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"not installed in $T/roothome/.cudaenv/versions"* ]]
    [[ "$stderr" == *"running under sudo"*"CUDAENV_ROOT=~alice/.cudaenv"* ]]
}

@test "leaving TensorFlow's tested pair warns; the tested pair does not" {
    run --separate-stderr "$CUDAENV" info tf-2.14+cudnn9
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"warning: TensorFlow 2.14 was tested with CUDA 11.8.0 + cuDNN 8.7.0.84"* ]]
    run --separate-stderr "$CUDAENV" info tf-2.14 --no-cudnn
    [[ "$stderr" == *"not that pair"* ]]
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ]
    [[ "$stderr" != *"warning"* ]]
}

@test "uninstalling the active toolchain needs --force" {
    p=$(fx_installed 12.3.0)
    "$CUDAENV" global 12.3.0
    run --separate-stderr "$CUDAENV" uninstall 12.3.0
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"12.3.0 is the global default ($CUDAENV_ROOT/global)"*"--force"* ]]
    [ -d "$p" ]
    "$CUDAENV" global --unset
    run --separate-stderr env CUDA_HOME="$p" "$CUDAENV" uninstall 12.3.0
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"this shell's CUDA_HOME"* ]]
    run --separate-stderr env CUDA_HOME="$p" "$CUDAENV" uninstall 12.3.0 --force
    [ "$status" -eq 0 ]
    [ ! -e "$p" ]
}

@test "the global default is not uninstalled silently: use system does not get round it; the advice works; --force clears it and says so" {
    p=$(fx_installed 12.3.0); q=$(fx_installed 11.7.0)
    "$CUDAENV" global 12.3.0
    # the refusal's old advice (use system) only changed this shell
    CUDAENV_VERSION=system run --separate-stderr "$CUDAENV" uninstall 12.3.0
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"12.3.0 is the global default ($CUDAENV_ROOT/global): new shells would find it missing"* ]]
    [[ "$stderr" == *"cudaenv global 11.7.0"*"cudaenv global --unset"*"--force, which also clears the global default"* ]]
    [ -d "$p" ]
    # the advice, followed, works
    "$CUDAENV" global 11.7.0
    run --separate-stderr "$CUDAENV" uninstall 12.3.0
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    # --force on the global default clears it, says so, and new shells have nothing to complain about
    run --separate-stderr "$CUDAENV" uninstall 11.7.0 --force
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"cleared the global default ($CUDAENV_ROOT/global named 11.7.0)"* ]]
    [ ! -e "$CUDAENV_ROOT/global" ] && [ ! -e "$q" ] || false
    run --separate-stderr env -u CUDA_HOME bash --norc -c 'eval "$("$1" init bash)"; echo "home=${CUDA_HOME-unset}"' _ "$CUDAENV"
    [ "$status" -eq 0 ]
    [ "$output" = "home=unset" ] && [ -z "$stderr" ]
}

@test "info: public sources only, and the manifest path normalised" {
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ]
    [[ "$output" != *"nvidia-facts"* && "$output" != *"draft"* && "$output" != *"sizes.md"* ]]
    [[ "$output" == *"tensorflow/docs"* ]]
    m=$(grep '^manifest ' <<<"$output" | awk '{print $2}')
    [ -f "$m" ] && [[ "$m" != *"/../"* ]] && [ "$m" = "$(realpath -s "$m")" ] || false
    run --separate-stderr "$CUDAENV" info tf-2.14 --json
    [[ "$output" != *"nvidia-facts"* && "$output" != *"draft"* ]]
}
