#!/usr/bin/env bats
# PyTorch and JAX specs beside tf-X.Y (issue 27 item 2): the generator's
# torch/jax sections from data/frameworks.json, install torch-X.Y from the
# loopback server (the default build and +cuNNN), use/env/exec/local,
# list-remote torch|jax, info, errors for unknown releases and builds, and the
# resolution index answering torch specs, also after the manifest changed.
load ../lib/common
load ../lib/server
load ../lib/mirror
bats_require_minimum_version 1.5.0

setup_file() { mirror_setup_file; }

# The fixture mirror has CUDA 11.8.0 + 12.2.2 and cuDNN 8.6.0.163 (cuda11),
# 8.7.0.84 (cuda11), 8.9.7.29 (cuda11, cuda12): PyTorch/JAX rows over them.
FW_ROWS='
m["torch"] = {
 "2.5": {"default": "cu122", "python": ">=3.9, <=3.12", "source": "test: RELEASE.md", "default_source": "test: PyPI",
         "builds": {"cu118": {"cuda": "11.8.0", "cudnn": "8.7.0.84", "wheel": {"cuda": "11.8", "cudnn": "8.7.0.84"},
                              "channel": "stable", "source": "test: cu118 row"},
                    "cu122": {"cuda": "12.2.2", "cudnn": "8.9.7.29", "wheel": {"cuda": "12.2", "cudnn": "8.9.2.26"},
                              "channel": "stable", "source": "test: cu122 row"}}},
 "2.6": {"default": "cu130", "source": "test",
         "builds": {"cu130": {"cuda": "13.0.2", "cudnn": "9.13.0.50", "not_installable": "no CUDA 13.0.* in this manifest"},
                    "cu118": {"cuda": "11.8.0", "cudnn": "8.6.0.163", "source": "test"}}}}
m["jax"] = {"0.4.30": {"default": "cuda12", "builds": {"cuda12": {"cuda": "12.2.2", "cudnn": "8.9.7.29", "source": "test: jax"}}}}
'

setup() {
    common_setup
    mirror_serve
    edit_manifest "$FW_ROWS"
    IDX=$CUDAENV_ROOT/versions/.index
}

teardown() { mirror_teardown; }

py() { python3 -c "import json,sys; d=json.load(sys.stdin); r=($1); sys.exit(0 if r else 1)" "${@:2}"; }

@test "the generator writes torch and jax sections from data/frameworks.json: documented defaults, sources, mapping, not_installable kept" {
    m="$REPO/share/manifests/cudaenv.json"
    # PyPI's default build per release (data/FRAMEWORKS-SOURCES.md)
    py 'd["torch"]["2.5"]["default"] == "cu124" and d["torch"]["2.11"]["default"] == "cu130" and d["torch"]["2.3"]["default"] == "cu121"' < "$m"
    py 'sorted(d["torch"]["2.5"]["builds"]) == ["cu118", "cu121", "cu124"]' < "$m"
    # the wheel's CUDA X.Y -> the newest X.Y.*, its cuDNN pin exactly or the newest of its X.Y, said in the source
    py '(b := d["torch"]["2.5"]["builds"]["cu124"])["cuda"] == "12.4.1" and b["cudnn"] == "9.1.1.17" and b["wheel"] == {"cuda": "12.4", "cudnn": "9.1.0.70"} and "9.1.0.70 is not in the manifest -> 9.1.1.17" in b["source"]' < "$m"
    py 'd["torch"]["2.3"]["builds"]["cu118"]["cudnn"] == "8.7.0.84"' < "$m"
    # every row and build carries its source; every default its own
    py 'all(r.get("default_source") and r["default"] in r["builds"] and all(b.get("source") for b in r["builds"].values()) for s in ("torch", "jax") for r in d[s].values())' < "$m"
    py 'len(d["torch"]) >= 14 and "2.1" in d["torch"] and "2.14" in d["torch"] and len(d["jax"]) >= 30 and "0.4.30" in d["jax"]' < "$m"
    py 'all("jax-ml/jax@" in b["source"] for r in d["jax"].values() for b in r["builds"].values())' < "$m"
    # a build whose cuDNN the manifest lacks stays, with the reason
    py '"9.24" in d["torch"]["2.14"]["builds"]["cu130"]["not_installable"]' < "$m"
    # the generator refuses data whose default is not one of its builds
    mkdir -p "$T/g/tools" && cp "$REPO/tools/gen-manifest.py" "$REPO/tools/gen_frameworks.py" "$REPO/tools/gen_pick.py" "$T/g/tools/" && cp -r "$REPO/data" "$T/g/data"
    python3 - "$T/g/data/frameworks.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["torch"]["2.5"]["default"] = "cu999"; json.dump(d, open(sys.argv[1], "w"))
PY
    run --separate-stderr python3 "$T/g/tools/gen-manifest.py"
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"torch 2.5: default build cu999 is not one of its builds"* ]]
}

@test "install torch-2.5 from the loopback server: its default build's pair; +cu118 the other; the toolkit profile" {
    run "$CUDAENV" install torch-2.5
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    p=$CUDAENV_ROOT/versions/12.2.2+cudnn8.9.7.29
    [ -x "$p/bin/nvcc" ]
    grep -q 'CUDNN_MINOR 9' "$p/include/cudnn_version.h"
    run "$CUDAENV" install torch-2.5.1+cu118
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -x "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/bin/nvcc" ]
    grep -q 'CUDNN_MINOR 7' "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/include/cudnn_version.h"
    [ "$(ls "$CUDAENV_ROOT/versions" | grep -c .)" -eq 2 ]
    # jax
    run "$CUDAENV" -q install jax-0.4.30
    [ "$status" -eq 0 ]
    [ "$(ls "$CUDAENV_ROOT/versions" | grep -c .)" -eq 2 ]   # the same pair as torch-2.5: nothing new
}

@test "use/env/exec/local/prefix torch-2.5+cu118: the toolchain of that build" {
    "$CUDAENV" -q install torch-2.5+cu118
    p=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    [ "$("$CUDAENV" prefix torch-2.5+cu118)" = "$p" ]
    run "$CUDAENV" env torch-2.5+cu118 --shell json
    [ "$status" -eq 0 ]
    py 'sys.argv[1] in json.dumps(d) and "CUDA_HOME" in json.dumps(d)' "$p" <<<"$output" || { echo "$output"; false; }
    run "$CUDAENV" exec torch-2.5+cu118 -- nvcc --version
    [ "$status" -eq 0 ]
    [[ "$output" == *"release 11.8"* ]]
    run "$CUDAENV" use torch-2.5+cu118 --shell bash
    [ "$status" -eq 0 ]
    [[ "$output" == *"$p"* ]]
    mkdir "$T/proj" && cd "$T/proj"
    run "$CUDAENV" local torch-2.5+cu118
    [ "$status" -eq 0 ]
    [ "$(cat .cuda-version)" = "torch-2.5+cu118" ]
    [[ "$("$CUDAENV" current)" == *"11.8.0+cudnn8.7.0.84"* ]]
    # the default build is another toolchain, not installed here
    run --separate-stderr "$CUDAENV" prefix torch-2.5
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"torch-2.5 is not installed"* && "$stderr" == *"cudaenv install torch-2.5"* ]]
}

@test "list-remote torch and jax: one line per CUDA build, the default first; --json and --names" {
    run --separate-stderr "$CUDAENV" list-remote torch
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == SPEC*CUDA*cuDNN*WHEELS* ]]
    [[ "${lines[1]}" =~ ^torch-2.6\ +13.0.2\ +9.13.0.50\ .*not\ installable:\ no\ CUDA\ 13.0 ]]
    [[ "${lines[2]}" =~ ^torch-2.6\+cu118\ +11.8.0\ +8.6.0.163 ]]
    [[ "${lines[3]}" =~ ^torch-2.5\ +12.2.2\ +8.9.7.29\ +12.2,\ 8.9.2.26 ]]
    [[ "${lines[4]}" =~ ^torch-2.5\+cu118\ +11.8.0\ +8.7.0.84 ]]
    run "$CUDAENV" list-remote torch --names
    [ "$output" = "$(printf 'torch-2.6+cu118\ntorch-2.5+cu118\ntorch-2.5')" ]
    run "$CUDAENV" list-remote jax
    [[ "${lines[1]}" =~ ^jax-0.4.30\ +12.2.2\ +8.9.7.29 ]]
    run "$CUDAENV" list-remote torch --json
    [ "$status" -eq 0 ]
    py '(r := d["torch"][1])["version"] == "2.5" and r["default_build"] == "cu122" and [b["spec"] for b in r["builds"]] == ["torch-2.5+cu118", "torch-2.5"] and r["builds"][0]["wheel_cuda"] == "11.8" and r["builds"][0]["installable"]' <<<"$output"
    py 'd["torch"][0]["builds"][0]["installable"] is False' <<<"$output"
    run "$CUDAENV" list-remote jax --json
    py 'd["jax"][0]["version"] == "0.4.30"' <<<"$output"
}

@test "info torch-2.5: the framework, the pair chosen, the other builds, the sources; --json" {
    run --separate-stderr "$CUDAENV" info torch-2.5
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "torch-2.5 -> 12.2.2+cudnn8.9.7.29" ]]
    [[ "$output" == *"PyTorch       2.5 (build cu122: the default, what pip installs from PyPI)"* ]]
    [[ "$output" == *"wheels      CUDA 12.2 + cuDNN 8.9.2.26 (stable)"* ]]
    [[ "$output" == *"toolchain   CUDA 12.2.2 + cuDNN 8.9.7.29"* ]]
    [[ "$output" =~ cu118\ +CUDA\ 11.8.0\ \+\ cuDNN\ 8.7.0.84\ +torch-2.5\+cu118 ]]
    [[ "$output" == *"source      test: cu122 row"* && "$output" == *"default     test: PyPI"* ]]
    run "$CUDAENV" info torch-2.5+cu118 --json
    [ "$status" -eq 0 ]
    py 'd["toolchain"] == "11.8.0+cudnn8.7.0.84" and d["framework"]["name"] == "torch" and d["framework"]["build"] == "cu118" and d["framework"]["default_build"] == "cu122" and len(d["framework"]["builds"]) == 2 and d["installable"]' <<<"$output"
    # a build that cannot be installed is described, with its reason (exit 0, installable false)
    run --separate-stderr "$CUDAENV" info torch-2.6 --json
    [ "$status" -eq 0 ]
    py 'not d["installable"] and "no CUDA 13.0" in d["reason"]' <<<"$output"
}

@test "torch-9.9 and torch-2.5+cu999: exit 3 naming the spec and list-remote torch; nothing installed" {
    for cmd in "info torch-9.9" "install torch-9.9"; do
        run --separate-stderr "$CUDAENV" $cmd
        [ "$status" -eq 3 ] || { echo "$cmd: $status $stderr"; false; }
        [[ "$stderr" == *"no PyTorch release torch-9.9"* && "$stderr" == *"see: cudaenv list-remote torch"* ]]
        [[ "$stderr" == *"did you mean torch-2."* ]]
    done
    run --separate-stderr "$CUDAENV" install torch-2.5+cu999
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"PyTorch 2.5 has no CUDA build cu999"*"cu118, cu122"* ]]
    run --separate-stderr "$CUDAENV" install torch-2.6
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"PyTorch 2.6 (cu130: CUDA 13.0.2, cuDNN 9.13.0.50) cannot be installed"*"cudaenv info torch-2.6"* ]]
    run --separate-stderr "$CUDAENV" install jax-0.1.0
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"no JAX release jax-0.1.0"*"list-remote jax"* ]]
    run --separate-stderr "$CUDAENV" install torch-2.5+bogus
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"'torch-2.5+bogus' is not a version spec"* ]]
    [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
}

@test "the index holds every installable PyTorch/JAX build; env/prefix torch-X resolve through it, also after the manifest changed" {
    command -v strace >/dev/null || skip "no strace"
    "$CUDAENV" -q install torch-2.5+cu118
    [ "$(head -1 "$IDX")" = "cudaenv-index 6" ]
    [ "$(grep '^fw ' "$IDX" | sort | tr '\n' ';')" = "fw jax 0.4.30 cuda12 12.2.2 8.9.7.29 default;fw torch 2.5 cu118 11.8.0 8.7.0.84 -;fw torch 2.5 cu122 12.2.2 8.9.7.29 default;fw torch 2.6 cu118 11.8.0 8.6.0.163 -;" ]
    p=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    ! opens_manifest env torch-2.5+cu118 --shell bash || false
    ! opens_manifest prefix torch-2.5.1+cu118 || false
    [ "$("$CUDAENV" prefix torch-2.5+cu118)" = "$p" ]
    # an upgrade: a new manifest moves torch 2.7's cu118 build onto this toolchain
    edit_manifest 'm["torch"]["2.7"] = {"default": "cu118", "builds": {"cu118": {"cuda": "11.8.0", "cudnn": "8.7.0.84"}}}'
    opens_manifest prefix torch-2.7              # the stale index is refreshed here ...
    grep -qx 'fw torch 2.7 cu118 11.8.0 8.7.0.84 default' "$IDX"
    ! opens_manifest prefix torch-2.7 || false            # ... and answers from then on
    [ "$("$CUDAENV" prefix torch-2.7)" = "$p" ]
    [ "$("$CUDAENV" prefix torch-latest)" = "$p" ]
    # same answers without the index
    for q in "prefix torch-2.5+cu118" "env torch-2.7 --shell json" "prefix torch-latest"; do
        a=$("$CUDAENV" $q 2>&1); mv "$IDX" "$T/idx"
        b=$("$CUDAENV" $q 2>&1); mv "$T/idx" "$IDX"
        [ "$a" = "$b" ] || { echo "$q: '$a' vs '$b'"; false; }
    done
}

@test "torch-2.6 (its default build not installable) never resolves to the installed +cu118 toolchain, with the index or without" {
    p=$(fx_installed 11.8.0 8.6.0.163)
    [ "$("$CUDAENV" prefix torch-2.6+cu118)" = "$p" ]
    grep -qx 'fw torch 2.6 cu118 11.8.0 8.6.0.163 -' "$IDX"
    for pass in index manifest; do
        run --separate-stderr "$CUDAENV" prefix torch-2.6
        [ "$status" -eq 3 ] || { echo "$pass: $status $output $stderr"; false; }
        [ -z "$output" ]
        run --separate-stderr "$CUDAENV" env torch-2.6 --shell bash
        [ "$status" -eq 3 ] || { echo "$pass: $status $output $stderr"; false; }
        rm -f "$IDX"
    done
}

@test "completions: torch-* and jax-* specs, their +cuNNN builds beside +cudnn, list-remote torch|jax (bash, zsh, fish)" {
    PATH=$(dirname "$CUDAENV"):$PATH
    run bash --norc -c '
        eval "$(cudaenv init bash)"
        c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _cudaenv; echo "${COMPREPLY[*]}"; }
        c cudaenv install torch-2.5
        c cudaenv info torch-2.5+cu
        c cudaenv install ja
        c cudaenv list-remote ""'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "torch-2.5+cu118 torch-2.5" ] || { printf "%s\n" "${lines[@]}"; false; }
    [[ " ${lines[1]} " == *" torch-2.5+cu118 "* && " ${lines[1]} " == *" torch-2.5+cudnn8.9.7.29 "* ]]
    [[ " ${lines[1]} " != *" torch-2.6+cu118 "* ]]
    [ "${lines[2]}" = "jax-0.4.30" ]
    [ "${lines[3]}" = "tf torch jax cuda cudnn" ]
    if command -v zsh >/dev/null; then
        export ZCOMP_FPATH=$REPO/completions __CUDAENV_BIN=$CUDAENV
        out=$(timeout 60 zsh -f "$REPO/tests/lib/zcomp.zsh" 'cudaenv install torch-2.5+cu1' | tr '\n' ' ')
        [ "$out" = "torch-2.5+cu118 " ]
        out=$(timeout 60 zsh -f "$REPO/tests/lib/zcomp.zsh" 'cudaenv install jax-' | tr '\n' ' ')
        [ "$out" = "jax-0.4.30 " ]
    fi
    if command -v fish >/dev/null; then
        run fish --no-config -c '
            cudaenv init fish | source
            function c; complete -C "$argv" | string replace -r "\t.*" "" | string join " "; or echo; end
            c "cudaenv install torch-2.5+cu1"
            c "cudaenv list-remote j"; true'
        [ "${lines[0]}" = "torch-2.5+cu118" ]
        [ "${lines[1]}" = "jax" ]
    fi
}
