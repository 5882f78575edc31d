#!/usr/bin/env bats
# Switching without a shell function: env, exec, local/global/current,
# prefix, which, list; the loader picks the selected libcudart.
load ../lib/common
bats_require_minimum_version 1.5.0

setup() {
    switch_setup
}
teardown() { common_teardown; }

# eval the bash output of `env` in a clean subshell and print one variable
env_var() { bash -c "eval \"\$($CUDAENV env $1 --shell bash 2>/dev/null)\"; echo \"\${$2-UNSET}\""; }

@test "env 11.8 picks the newest 11.8.x with cuDNN and sets the documented variables" {
    run --separate-stderr "$CUDAENV" env 11.8 --shell bash
    [ "$status" -eq 0 ]
    [[ "$output" == *"export CUDA_HOME='$P118';"* ]]
    [[ "$output" == *"export CUDA_PATH='$P118';"* ]]
    [[ "$output" == *"export CUDNN_PATH='$P118';"* ]]
    [[ "$output" == *"export CUDAENV_VERSION='11.8.0+cudnn8.7.0.84';"* ]]
    [ "$(env_var 11.8 PATH)" = "$P118/bin:$PATH" ]
    [ "$(env_var 11.8 LD_LIBRARY_PATH)" = "$P118/lib64" ]
}

@test "a toolchain without cuDNN sets no CUDNN_PATH and unsets ours" {
    run bash -c "export CUDNN_PATH=$P118; eval \"\$($CUDAENV env 12.3 --shell bash)\"; echo \"\${CUDNN_PATH-UNSET} \$CUDA_HOME\""
    [ "$status" -eq 0 ]
    [ "$output" = "UNSET $P123" ]
}

@test "env strips exactly the entries of earlier switches, keeps foreign ones; only use warns, once, and never about PATH" {
    # $CUDAENV_ROOT/tools/bin is the user's, not a toolchain's: only versions/* entries are ours
    mkdir -p "$T/ulb"; printf '#!/bin/sh\n' > "$T/ulb/nvcc"; chmod +x "$T/ulb/nvcc"   # a /usr/local/bin with an nvcc
    export PATH="$P123/bin:$CUDAENV_ROOT/tools/bin:$T/ulb:/opt/x/bin:/usr/bin:/bin" LD_LIBRARY_PATH="$P123/lib64:/usr/local/cuda-12.1/lib64:/opt/lib"
    run --separate-stderr "$CUDAENV" env 11.8 --json
    [ "$status" -eq 0 ]
    p=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["env"]["PATH"])' "$output")
    l=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["env"]["LD_LIBRARY_PATH"])' "$output")
    [ "$p" = "$P118/bin:$CUDAENV_ROOT/tools/bin:$T/ulb:/opt/x/bin:/usr/bin:/bin" ]
    [ "$l" = "$P118/lib64:/usr/local/cuda-12.1/lib64:/opt/lib" ]
    # env serves the hook and scripts: it never warns
    [ -z "$stderr" ]
    # an explicit use warns about the other CUDA's libraries, not about PATH
    run --separate-stderr "$CUDAENV" use --shell bash 11.8
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"warning: LD_LIBRARY_PATH also has /usr/local/cuda-12.1/lib64"* ]]
    [[ "$stderr" != *"warning: PATH"* && "$stderr" != *"$T/ulb"* && "$stderr" != *remove* ]]
    # the shell remembers the warning: the same foreign entries are not reported again
    w=$(sed -n "s/^export CUDAENV_WARNED='\(.*\)';\$/\1/p" <<<"$output")
    [ -n "$w" ]
    CUDAENV_WARNED=$w run --separate-stderr "$CUDAENV" use --shell bash 12.3
    [ "$status" -eq 0 ]
    [[ "$stderr" != *warning* ]]
}

@test "env --shell json is one JSON document with env and unset" {
    export CUDA_HOME=$P123/x
    run --separate-stderr "$CUDAENV" env tf-2.14 --shell json --manifest "$REPO/share/manifests/cudaenv.json"
    # the built-in manifest maps tf-2.14 to CUDA 11.8 + cuDNN 8.7: a failure here is a regression, not a skip
    [ "$status" -eq 0 ] || { echo "status $status: $stderr"; false; }
    python3 - "$output" "$P118" <<'PY'
import json, sys
d = json.loads(sys.argv[1]); p = sys.argv[2]
assert d["name"] == "11.8.0+cudnn8.7.0.84" and d["prefix"] == p, d
assert d["env"]["CUDA_HOME"] == p and d["env"]["LD_LIBRARY_PATH"].split(":")[0] == p + "/lib64"
assert isinstance(d["unset"], list)
PY
}

@test "env --shell fish gives PATH as a list" {
    run fish --no-config -c "$CUDAENV env 11.8 --shell fish | source; echo \$PATH[1]; echo \$CUDA_HOME"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "$P118/bin" ]
    [ "${lines[1]}" = "$P118" ]
}

@test "env --shell fish: a store path with a backslash-quote runs no code in fish, and is set exactly" {
    command -v fish >/dev/null || skip "no fish"
    # \' ends a quoted string in fish unless the backslash itself is escaped
    export CUDAENV_ROOT="$T/x\\';echo INJECTED;'"
    P=$(fx_installed 11.8.0)
    run fish --no-config -c "$CUDAENV env 11.8 --shell fish | source; echo \$CUDA_HOME; echo \$PATH[1]"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    ! grep -qx INJECTED <<<"$output" || { echo "$output"; false; }
    [ "${#lines[@]}" -eq 2 ]
    [ "${lines[0]}" = "$P" ]
    [ "${lines[1]}" = "$P/bin" ]
}

@test "not installed: exit 3 with the install command, nothing on stdout" {
    run --separate-stderr "$CUDAENV" env 10.2
    [ "$status" -eq 3 ]
    [ -z "$output" ]
    [[ "$stderr" == *"run: cudaenv install 10.2"* ]]
    run --separate-stderr "$CUDAENV" use 10.2 --shell bash
    [ "$status" -eq 3 ]
    [ -z "$output" ]
}

@test "use without the shell function explains the integration (exit 1)" {
    run --separate-stderr "$CUDAENV" use 11.8
    [ "$status" -eq 1 ]
    [[ "$stderr" == *'eval "$(cudaenv init bash)"'* ]]
}

@test "deactivate (and use --unset) without the shell function explain cudaenv init (exit 2); the way it gives for this shell works" {
    local cmd
    for cmd in deactivate "use --unset"; do
        # shellcheck disable=SC2086
        run --separate-stderr "$CUDAENV" $cmd
        [ "$status" -eq 2 ] || { echo "$cmd: $status"; false; }
        [ -z "$output" ]
        [[ "$stderr" == *"$cmd drops this shell's selection and needs the shell integration"* ]] || { echo "$stderr"; false; }
        [[ "$stderr" == *'eval "$(cudaenv init bash)"'* ]] || { echo "$stderr"; false; }
    done
    run "$CUDAENV" deactivate --help
    [ "$status" -eq 0 ] && [[ "$output" == "usage: cudaenv deactivate"* ]] || false
    # "for this shell only: unset CUDAENV_VERSION; eval "$(cudaenv env)"" really drops it
    run bash --norc --noprofile -c 'eval "$("$0" env 11.8)"; unset CUDAENV_VERSION; eval "$("$0" env)"
        echo "${CUDAENV_VERSION-}|${CUDA_HOME-unset}|$PATH"' "$CUDAENV"
    [ "$status" -eq 0 ]
    [ "$output" = "|unset|$PATH" ] || { echo "$output"; false; }
    [[ "$output" != *"$P118"* ]] || { echo "$output"; false; }
}

@test "exec runs the command with the toolchain and returns its status; the loader picks its libcudart" {
    fx_probe "$T/probe" "$P118"
    run "$CUDAENV" exec 11.8 -- "$T/probe"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = 11080 ]
    [ "${lines[1]}" = "$P118/lib64/libcudart.so.11.0" ]
    run "$CUDAENV" exec 11.7 -- "$T/probe"
    [ "${lines[0]}" = 11070 ]
    [ "${lines[1]}" = "$P117/lib64/libcudart.so.11.0" ]
    run "$CUDAENV" exec 11.8 -- sh -c 'echo "$CUDA_HOME $(command -v nvcc)"; exit 7'
    [ "$status" -eq 7 ]
    [ "$output" = "$P118 $P118/bin/nvcc" ]
    run "$CUDAENV" exec 11.8 nvcc --version
    [ "$status" -eq 0 ]
    [[ "$output" == *"release 11.8"* ]]
}

@test "exec: unknown command exits 127, unknown toolchain 3, no command 2" {
    run -127 "$CUDAENV" exec 11.8 -- no-such-command-xyz
    [ "$status" -eq 127 ]
    [[ "$output" == *"no-such-command-xyz: command not found"* ]]
    run "$CUDAENV" exec 9.0 -- true
    [ "$status" -eq 3 ]
    run "$CUDAENV" exec 11.8
    [ "$status" -eq 2 ]
}

@test "exec -- CMD without VERSION runs with the selection in effect (CUDAENV_VERSION > .cuda-version > global); none: exit 3" {
    fx_probe "$T/probe" "$P118"
    mkdir -p "$T/proj/sub" "$T/other"
    cd "$T/other"
    # nothing selected: exit 3 saying how to name one, the command never runs
    run --separate-stderr "$CUDAENV" exec -- sh -c 'echo ran'
    [ "$status" -eq 3 ]
    [ -z "$output" ]
    [[ "$stderr" == *"no toolchain selected here"*"cudaenv exec VERSION -- sh"* ]] || { echo "$stderr"; false; }
    "$CUDAENV" global 11.7
    run "$CUDAENV" exec -- "$T/probe"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = 11070 ] && [ "${lines[1]}" = "$P117/lib64/libcudart.so.11.0" ] || false
    echo 11.8 > "$T/proj/.cuda-version"
    cd "$T/proj/sub"
    run "$CUDAENV" exec -- "$T/probe"
    [ "${lines[0]}" = 11080 ] && [ "${lines[1]}" = "$P118/lib64/libcudart.so.11.0" ] || false
    run "$CUDAENV" exec -- sh -c 'echo "$CUDAENV_VERSION $CUDA_HOME"; exit 5'
    [ "$status" -eq 5 ]
    [ "$output" = "11.8.0+cudnn8.7.0.84 $P118" ]
    CUDAENV_VERSION=12.3 run "$CUDAENV" exec -- sh -c 'echo "$CUDA_HOME"'
    [ "$output" = "$P123" ]
    # a pin naming nothing installed: exit 3 naming its file, the command never runs
    echo 10.1 > "$T/proj/.cuda-version"
    run --separate-stderr "$CUDAENV" exec -- sh -c 'echo ran'
    [ "$status" -eq 3 ] && [ -z "$output" ] || false
    [[ "$stderr" == *"$T/proj/.cuda-version"* ]] || { echo "$stderr"; false; }
    # a global "system": the machine's own CUDA, chosen, so it runs
    cd "$T/other"
    "$CUDAENV" global system
    run "$CUDAENV" exec -- sh -c 'echo "ran ${CUDA_HOME-unset}"'
    [ "$status" -eq 0 ] && [ "$output" = "ran unset" ] || false
    # no command at all is still a usage error
    run "$CUDAENV" exec --
    [ "$status" -eq 2 ]
}

@test "precedence: CUDAENV_VERSION > .cuda-version (walked up) > global > system" {
    mkdir -p "$T/proj/a/b" "$T/other"
    run "$CUDAENV" current
    [ "$output" = "system (no toolchain selected: the machine's own CUDA)" ]
    run "$CUDAENV" global 12.3
    [ "$status" -eq 0 ]
    [ "$(cat "$CUDAENV_ROOT/global")" = "12.3.0" ]
    cd "$T/other"
    run "$CUDAENV" current
    [ "$output" = "12.3.0 (set by $CUDAENV_ROOT/global)" ]
    cd "$T/proj"
    run "$CUDAENV" local 11.7
    [ "$status" -eq 0 ]
    [ "$(cat "$T/proj/.cuda-version")" = "11.7" ]
    [ "$(wc -l < "$T/proj/.cuda-version")" -eq 1 ]
    cd "$T/proj/a/b"
    run "$CUDAENV" current
    [ "$output" = "11.7.0 (set by $T/proj/.cuda-version)" ]
    run "$CUDAENV" current --json
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["origin"]==".cuda-version" and d["source"].endswith("/proj/.cuda-version"), d' "$output"
    CUDAENV_VERSION=11.8 run "$CUDAENV" current
    [ "$output" = "11.8.0+cudnn8.7.0.84 (set by CUDAENV_VERSION, cudaenv use)" ]
    run "$CUDAENV" prefix
    [ "$output" = "$P117" ]
    run "$CUDAENV" which nvcc
    [ "$output" = "$P117/bin/nvcc" ]
    run "$CUDAENV" which cuobjdump
    [ "$status" -eq 3 ]
    run "$CUDAENV" list
    [[ "$output" == *"* 11.7.0  (.cuda-version: $T/proj/.cuda-version)"* ]]
    run "$CUDAENV" list --json
    python3 - "$output" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
act = [t["name"] for t in d["toolchains"] if t["active"]]
assert act == ["11.7.0"], d
assert d["active"]["origin"] == ".cuda-version"
PY
}

@test "a .cuda-version naming something not installed: current exits 3 naming the file, never what it says" {
    mkdir -p "$T/p" && echo "10.1" > "$T/p/.cuda-version"
    cd "$T/p"
    run --separate-stderr "$CUDAENV" current
    [ "$status" -eq 3 ]
    [ -z "$output" ]
    [[ "$stderr" == *"$T/p/.cuda-version: no such toolchain or spec (content not shown)"* ]]
    [[ "$stderr" == *"cat $T/p/.cuda-version"*"cudaenv install VERSION"* && "$stderr" != *10.1* ]]
    # env without VERSION still returns the shell to the machine's CUDA
    run --separate-stderr bash -c "export PATH=$P118/bin:/usr/bin; eval \"\$($CUDAENV env --shell bash)\"; echo \$PATH"
    [ "$output" = "/usr/bin" ]
}

@test "local refuses an uninstalled version unless --force; --unset removes the pin" {
    cd "$T"
    run "$CUDAENV" local 10.0
    [ "$status" -eq 3 ]
    [ ! -e "$T/.cuda-version" ]
    run "$CUDAENV" local 10.0 --force
    [ "$status" -eq 0 ]
    [ "$(cat "$T/.cuda-version")" = "10.0" ]
    run "$CUDAENV" local --unset
    [ ! -e "$T/.cuda-version" ]
}

@test "global system / --unset return to the machine's CUDA" {
    "$CUDAENV" global 11.8
    run "$CUDAENV" global
    [ "$output" = "11.8.0+cudnn8.7.0.84" ]
    cd "$T"
    [ "$(env_var "" CUDA_HOME)" = "$P118" ]
    # global system: back to the machine's CUDA, the toolchain's entries gone
    run "$CUDAENV" global system
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    run "$CUDAENV" global
    [ "$output" = "system" ]
    run "$CUDAENV" current
    [ "$output" = "system (set by $CUDAENV_ROOT/global)" ]
    [ "$(env_var "" CUDA_HOME)" = UNSET ]
    # --unset after another global: the same
    "$CUDAENV" global 12.3
    [ "$(env_var "" CUDA_HOME)" = "$P123" ]
    "$CUDAENV" global --unset
    run "$CUDAENV" global
    [ "$output" = "system" ]
    [ ! -e "$CUDAENV_ROOT/global" ] || [ "$(cat "$CUDAENV_ROOT/global")" = system ]
    run "$CUDAENV" global --system
    [ "$status" -eq 3 ]
}

@test "list --names prints the installed names only, one per line, oldest first" {
    run --separate-stderr "$CUDAENV" list --names
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf '11.7.0\n11.8.0+cudnn8.7.0.84\n12.3.0')" ]
    run "$CUDAENV" list --names --bogus
    [ "$status" -eq 2 ]
}

@test "env to a full standard output: exit 1 naming it, not a silently lost environment" {
    [ -w /dev/full ] || skip "no /dev/full"
    run bash -c '"$0" env 11.8 > /dev/full' "$CUDAENV"
    [ "$status" -eq 1 ] || { echo "$output"; false; }
    [[ "$output" == *"cannot write the environment to standard output: No space left on device"* ]] || { echo "$output"; false; }
    run bash -c '"$0" use 11.8 --shell bash > /dev/full' "$CUDAENV"
    [ "$status" -eq 1 ] || { echo "$output"; false; }
}
