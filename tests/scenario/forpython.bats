#!/usr/bin/env bats
# install --for PYTHON / local --for PYTHON (issue 27): the toolchain a
# Python's TensorFlow or PyTorch was built for, read by importing them in that
# interpreter (tests/lib/fakefw.sh: FAKE_FW_VERSION/CUDA/CUDNN), resolved
# through the manifest, with the framework that decided named; two that want
# different CUDA releases are a usage error unless --framework picks one; a
# CPU-only build or no framework decides nothing.
bats_require_minimum_version 1.5.0
load ../lib/common
load ../lib/server
load ../lib/mirror
source "$TESTS_DIR/lib/fakefw.sh"

PY=/usr/bin/python3

setup_file() { mirror_setup_file; }

setup() {
    common_setup
    unset FAKE_FW_VERSION FAKE_FW_CUDA FAKE_FW_CUDNN FAKE_FW_LIBS LD_LIBRARY_PATH
    fx_fakefw "$T/site"
    export PYTHONPATH=$T/site
    mirror_serve
    mkdir -p "$T/proj"
    cd "$T/proj"
}
teardown() { mirror_teardown; }

torch_only() { rm -rf "$T/site/tensorflow" "$T"/site/tensorflow-*.dist-info; }

@test "local --for: a PyTorch built for CUDA 12.2 + cuDNN 8.9.7 pins 12.2+cudnn8.9, and says PyTorch decided" {
    torch_only
    FAKE_FW_CUDA=12.2 FAKE_FW_CUDNN=8.9.7 run --separate-stderr "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$(cat .cuda-version)" = "12.2+cudnn8.9" ]
    [[ "$stderr" == *"PyTorch 2.5.1+cu118 in $PY was built for CUDA 12.2, cuDNN 8.9: 12.2+cudnn8.9 -> 12.2.2+cudnn8.9.7.29"* ]]
    [[ "$stderr" == *"PyTorch decides: 12.2+cudnn8.9"* ]]
    # without --force a pin of something not installed is refused, as local VERSION is
    rm .cuda-version
    FAKE_FW_CUDA=12.2 FAKE_FW_CUDNN=8.9.7 run "$CUDAENV" local --for "$PY"
    [ "$status" -eq 3 ] && [ ! -e .cuda-version ]
}

@test "install --for: TensorFlow 2.14.1 installs its row (11.8.0 + cuDNN 8.7.0.84), nothing else" {
    torch_only
    fx_fakefw "$T/site2"; rm -rf "$T/site2/torch" "$T"/site2/torch-*.dist-info
    PYTHONPATH=$T/site2 FAKE_FW_CUDA=11.8 FAKE_FW_CUDNN=8.7.0 run "$CUDAENV" install --for "$PY"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"TensorFlow decides: tf-2.14"* ]]
    [ -x "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/bin/nvcc" ]
    [ "$(ls "$CUDAENV_ROOT/versions")" = "11.8.0+cudnn8.7.0.84" ]
    # a SPEC and --for together, or --framework alone: usage errors
    run "$CUDAENV" install tf-2.14 --for "$PY"
    [ "$status" -eq 2 ]
    run "$CUDAENV" install tf-2.14 --framework torch
    [ "$status" -eq 2 ]
}

@test "two frameworks that want different CUDA releases: exit 2 naming both; --framework chooses" {
    # TensorFlow 2.14.1's row is CUDA 11.8; this PyTorch was built for 12.2
    FAKE_FW_CUDA=12.2 FAKE_FW_CUDNN=8.9.7 run "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 2 ]
    [[ "$output" == *"want different CUDA releases: TensorFlow 2.14.1 tf-2.14 (CUDA 11.8), PyTorch 2.5.1+cu118 12.2+cudnn8.9 (CUDA 12.2)"* ]]
    [[ "$output" == *"--framework tf or --framework torch"* ]]
    [ ! -e .cuda-version ]
    FAKE_FW_CUDA=12.2 FAKE_FW_CUDNN=8.9.7 run "$CUDAENV" local --for "$PY" --framework torch --force
    [ "$status" -eq 0 ] && [ "$(cat .cuda-version)" = "12.2+cudnn8.9" ] || false
    FAKE_FW_CUDA=12.2 FAKE_FW_CUDNN=8.9.7 run "$CUDAENV" local --for "$PY" --framework tf --force
    [ "$status" -eq 0 ] && [ "$(cat .cuda-version)" = "tf-2.14" ] || false
    # both built for 11.8: they agree, TensorFlow's row (its tested pair) decides
    FAKE_FW_CUDA=11.8 FAKE_FW_CUDNN=8.7.0 run "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 0 ] && [ "$(cat .cuda-version)" = "tf-2.14" ]
}

@test "local --for: a CPU-only TensorFlow decides nothing (no tf-X.Y pinned), also with --framework tf" {
    rm -rf "$T/site/torch" "$T"/site/torch-*.dist-info
    FAKE_FW_CUDA=none run --separate-stderr "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 3 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"TensorFlow 2.14.1 in $PY is a CPU-only build"* ]] || { echo "$stderr"; false; }
    [ ! -e .cuda-version ]
    FAKE_FW_CUDA=none run --separate-stderr "$CUDAENV" local --for "$PY" --framework tf --force
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"does not import TensorFlow with CUDA"* ]] || { echo "$stderr"; false; }
    [ ! -e .cuda-version ]
}

@test "a CPU-only build, no framework, an unknown --framework: nothing decided, nothing written" {
    torch_only
    FAKE_FW_CUDA=none run "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 3 ]
    [[ "$output" == *"CPU-only build"* ]] && [[ "$output" == *"only CPU-only frameworks"* ]] || false
    # a venv without frameworks (this machine's own python3 has Debian's CPU-only torch)
    /usr/bin/python3 -m venv --without-pip "$T/venv"
    PYTHONPATH= run "$CUDAENV" local --for "$T/venv/bin/python" --force
    [ "$status" -eq 3 ]
    [[ "$output" == *"imports no framework"* ]]
    run "$CUDAENV" local --for "$PY" --framework mxnet --force
    [ "$status" -eq 2 ] && [[ "$output" == *"'mxnet' is not tf, torch or jax"* ]] || false
    run "$CUDAENV" local --for "$T/nonexistent/python" --force
    [ "$status" -ne 0 ]
    [ ! -e .cuda-version ]
}

@test "--for naming no Python: exit 3 and the fix names --for, not verify's --python, in every command that takes it" {
    local cmd rest
    for cmd in "install --for" "env --for" "local --force --for" "use --for" "exec --for"; do
        rest=(); [ "$cmd" != "exec --for" ] || rest=(-- true)
        # shellcheck disable=SC2086
        run --separate-stderr "$CUDAENV" $cmd "$T/nope/python" "${rest[@]}"
        [ "$status" -eq 3 ] || { echo "$cmd: $status $stderr"; false; }
        [[ "$stderr" == *"$T/nope/python: no such executable; name the Python with --for PATH"* ]] || { echo "$cmd: $stderr"; false; }
        [[ "$stderr" != *"--python"* ]] || { echo "$cmd: $stderr"; false; }
    done
    run --separate-stderr "$CUDAENV" env --for nosuchpython3x
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"nosuchpython3x: not found on PATH; name the Python with --for PATH"* ]] || { echo "$stderr"; false; }
    # verify --framework keeps its own option's name
    fx_installed 11.8.0 8.7.0.84 >/dev/null
    run --separate-stderr "$CUDAENV" verify 11.8 --framework torch --python "$T/nope/python"
    [[ "$stderr" == *"with --python PATH"* ]] || { echo "$stderr"; false; }
    [ ! -e .cuda-version ]
}

@test "what a framework reports is escaped before it is printed (a version carrying OSC 52)" {
    torch_only
    FAKE_FW_VERSION=$'2.5.1\e]52;c;cHduZWQ=\a' FAKE_FW_CUDA=12.2 FAKE_FW_CUDNN=8.9.7 \
        run --separate-stderr "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" != *$'\e'* ]] && [[ "$stderr" != *$'\a'* ]] || false
    [[ "$stderr" == *'PyTorch 2.5.1\x1b]52;c;cHduZWQ=\x07 in'* ]]
}

# JAX (tests/lib/fakefw.sh fx_fakejax): its CUDA plugin's build versions decide
@test "JAX alone: its CUDA plugin's build versions (CUDA 12.2, cuDNN 8.9.7) pin 12.2+cudnn8.9; JAX decided" {
    rm -rf "$T/site/torch" "$T"/site/torch-*.dist-info "$T/site/tensorflow" "$T"/site/tensorflow-*.dist-info
    fx_fakejax "$T/site"
    FAKE_JAX_CUDA=12.2 FAKE_JAX_CUDNN=8.9.7 run --separate-stderr "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$(cat .cuda-version)" = "12.2+cudnn8.9" ]
    [[ "$stderr" == *"JAX 0.4.30 in $PY was built for CUDA 12.2, cuDNN 8.9: 12.2+cudnn8.9 -> 12.2.2+cudnn8.9.7.29"* ]]
    [[ "$stderr" == *"JAX decides: 12.2+cudnn8.9"* ]]
    # the plugin's _versions cannot load: its wheel's Requires-Dist (nvidia-cudnn-cu12>=9.8) still tells
    rm .cuda-version
    FAKE_JAX_META=1 run --separate-stderr "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 3 ] && [ ! -e .cuda-version ] || false
    [[ "$stderr" == *"JAX 0.4.30 was built for CUDA 12, cuDNN 9.8, which this manifest cannot install"* ]]
    # a jax without a CUDA plugin is a CPU-only build; --framework jax then finds none
    rm -rf "$T/site/jax_cuda12_plugin" "$T"/site/jax_cuda12_plugin-*.dist-info
    run "$CUDAENV" local --for "$PY" --framework jax --force
    [ "$status" -eq 3 ]
    [[ "$output" == *"JAX 0.4.30 in $PY is a CPU-only build"* ]] && [[ "$output" == *"does not import JAX with CUDA"* ]]
}

@test "PyTorch and JAX in one venv: another cuDNN major -> exit 2 listing both; --framework chooses" {
    torch_only
    fx_fakejax "$T/site"
    # a cuDNN 9 for CUDA 12 beside the fixture's 8.9 (resolution only: nothing is downloaded)
    edit_manifest 'm["cudnn"]["9.1.0.70"] = m["cudnn"]["8.9.7.29"]'
    export FAKE_FW_CUDA=12.2 FAKE_FW_CUDNN=8.9.7 FAKE_JAX_CUDA=12.2 FAKE_JAX_CUDNN=9.1.0
    run "$CUDAENV" install --for "$PY"
    [ "$status" -eq 2 ] || { echo "$output"; false; }
    [[ "$output" == *"want different cuDNN releases: PyTorch 2.5.1+cu118 12.2+cudnn8.9 (CUDA 12.2, cuDNN 8.9), JAX 0.4.30 12.2+cudnn9.1 (CUDA 12.2, cuDNN 9.1)"* ]]
    [[ "$output" == *"choose one with --framework torch or --framework jax"* ]]
    [ ! -d "$CUDAENV_ROOT/versions" ] || [ -z "$(ls "$CUDAENV_ROOT/versions")" ]
    run --separate-stderr "$CUDAENV" local --for "$PY" --framework jax --force
    [ "$status" -eq 0 ] && [ "$(cat .cuda-version)" = "12.2+cudnn9.1" ] || false
    [[ "$stderr" == *"JAX decides: 12.2+cudnn9.1"* ]]
    # another CUDA release: the CUDA message, with both names
    FAKE_JAX_CUDA=11.8 FAKE_JAX_CUDNN=8.7.0 run "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 2 ] && [[ "$output" == *"want different CUDA releases"*"--framework torch or --framework jax"* ]]
}

@test "PyTorch and JAX: one cuDNN major, other minors -> the newer serves both and decides (as torch 2.11 cuDNN 9.19 + JAX 0.11.2 cuDNN 9.12 on the H200)" {
    torch_only
    fx_fakejax "$T/site"
    export FAKE_FW_CUDA=11.8 FAKE_FW_CUDNN=8.7.0 FAKE_JAX_CUDA=11.8
    FAKE_JAX_CUDNN=8.6.0 run --separate-stderr "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 0 ] && [ "$(cat .cuda-version)" = "11.8+cudnn8.7" ] || false
    [[ "$stderr" == *"PyTorch's cuDNN 8.7 also runs JAX (built with cuDNN 8.6: an older minor release of the same major)"* ]]
    [[ "$stderr" == *"PyTorch decides: 11.8+cudnn8.7"* ]]
    FAKE_FW_CUDNN=8.6.0 FAKE_JAX_CUDNN=8.7.0 run --separate-stderr "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 0 ] && [ "$(cat .cuda-version)" = "11.8+cudnn8.7" ] || false
    [[ "$stderr" == *"JAX decides: 11.8+cudnn8.7"* ]]
    # JAX's own cuDNN is not in the manifest, PyTorch's newer one is: a note, not a warning
    FAKE_JAX_CUDNN=8.5.0 run --separate-stderr "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 0 ] && [ "$(cat .cuda-version)" = "11.8+cudnn8.7" ] || false
    [[ "$stderr" == *"JAX 0.4.30 in $PY was built for CUDA 11.8, cuDNN 8.5: PyTorch's toolchain (CUDA 11.8, cuDNN 8.7) runs it too"* ]]
    [[ "$stderr" != *"warning"* ]]
}

# issue 37: a Python whose framework brings its own CUDA libraries (a
# cuDNN wheel whose libcudnn.so.9 the framework preloads by path and which
# dlopen()s libcudnn_graph.so.9 by name) beside a toolchain that has its own
# libcudnn_graph.so.9: every activation gives the toolchain's compiler side
# and keeps its lib64 off LD_LIBRARY_PATH, so each family maps from one place.
onecopy_setup() {
    torch_only
    fx_fakecudnn_wheel "$T/site"
    edit_manifest 'm["cudnn"]["9.1.0.70"] = m["cudnn"]["8.9.7.29"]'
    P=$(fx_installed 12.2.2 9.1.0.70)
    export FAKE_FW_CUDA=12.2 FAKE_FW_CUDNN=9.1.0 CUDAENV_VERSION= PATH=$BUILD/bin:/usr/bin:/bin
    export FAKE_FW_LIBS="$T/site/nvidia/cuda_runtime/lib/libcudart.so.12 $T/site/nvidia/cudnn/lib/libcudnn.so.9"
    W=$(readlink -f "$T/site/nvidia")
    WANT="libcudart $W/cuda_runtime/lib
libcudnn $W/cudnn/lib"
    # what the process maps, then the toolchain's compiler side
    PROBE="python3 -c '$MAPS_BY_FAMILY'; echo \"nvcc=\$(command -v nvcc) home=\$CUDA_HOME lib=\${LIBRARY_PATH%%:*}\""
}

@test "one copy of each library: exec TC, exec --for, env --for, use --for, local --for map every family from the wheels; nvcc and CUDA_HOME are the toolchain's" {
    onecopy_setup
    unset CUDAENV_VERSION
    tc="nvcc=$P/bin/nvcc home=$P lib=$P/lib64"
    # exec TOOLCHAIN -- python3: the command is a Python that brings them
    run --separate-stderr "$CUDAENV" exec 12.2 -- python3 -c "$MAPS_BY_FAMILY"
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$output" = "$WANT" ] || { echo "exec TC: $output"; false; }
    [[ "$stderr" == *"python3 brings its own cudart, cudnn ($W/"*"): 12.2.2+cudnn9.1.0.70's lib64 is kept off LD_LIBRARY_PATH"* ]] || { echo "$stderr"; false; }
    # (a command that is not a Python keeps the toolchain's libraries: sh here)
    run --separate-stderr "$CUDAENV" exec 12.2 -- sh -c 'echo "$CUDA_HOME|$(command -v nvcc)|${LD_LIBRARY_PATH%%:*}"'
    [ "$output" = "$P|$P/bin/nvcc|$P/lib64" ]
    # exec --for PYTHON -- CMD
    run --separate-stderr "$CUDAENV" exec --for python3 -- sh -c "$PROBE"
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$output" = "$WANT
$tc" ] || { echo "exec --for: $output"; false; }
    # eval "$(cudaenv env --for PYTHON)"
    run --separate-stderr bash --norc -c "eval \"\$(cudaenv env --for python3)\" && $PROBE && echo \"libs=\$CUDAENV_LIBS ld=\${LD_LIBRARY_PATH:-unset}\""
    [ "$output" = "$WANT
$tc
libs=framework ld=unset" ] || { echo "env --for: $output"; false; }
    # use --for PYTHON in a shell with the integration; the hook's next env keeps the mode; plain use drops it
    run --separate-stderr bash --norc -c "eval \"\$(cudaenv init bash)\"; cudaenv use -q --for python3 || exit 9; $PROBE
        eval \"\$(cudaenv env)\"; echo \"again=\${LD_LIBRARY_PATH:-unset}\"
        cudaenv use -q 12.2; echo \"plain=\${LD_LIBRARY_PATH%%:*} libs=\${CUDAENV_LIBS:-unset}\""
    [ "$output" = "$WANT
$tc
again=unset
plain=$P/lib64 libs=unset" ] || { echo "use --for: $output"; false; }
    # local --for PYTHON: the pin carries the mode to what the cd hook applies (env)
    run --separate-stderr "$CUDAENV" local --for python3
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$(cat .cuda-version)" = "12.2+cudnn9.1
libs=framework" ]
    run "$CUDAENV" local
    [ "$output" = "12.2+cudnn9.1" ]
    run --separate-stderr bash --norc -c "eval \"\$(cudaenv env)\" && $PROBE"
    [ "$output" = "$WANT
$tc" ] || { echo "local --for: $output"; false; }
}

@test "--libs toolchain is refused while the Python's own copies would still load; --libs framework and a bad value" {
    onecopy_setup
    unset CUDAENV_VERSION
    run --separate-stderr "$CUDAENV" exec --for python3 --libs toolchain -- true
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"--libs toolchain: python3 brings its own cudart, cudnn ($W/"*"which its framework loads by path"*"python3 -m pip uninstall -y nvidia-cuda-runtime-cu12 nvidia-cudnn-cu12"* ]] || { echo "$stderr"; false; }
    run --separate-stderr "$CUDAENV" env --for python3 --libs toolchain
    [ "$status" -eq 2 ] && [ -z "$output" ] || false
    run --separate-stderr "$CUDAENV" exec --libs bogus 12.2 -- true
    [ "$status" -eq 2 ] && [[ "$stderr" == *"--libs: 'bogus' is not framework or toolchain"* ]] || false
    # without the wheels the toolchain's libraries serve the framework completely
    rm -rf "$T/site/nvidia"
    export FAKE_FW_LIBS="libcudart.so.12 libcudnn.so.9"
    run --separate-stderr "$CUDAENV" exec --libs toolchain 12.2 -- python3 -c "$MAPS_BY_FAMILY"
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$output" = "libcudart $P/lib64
libcudnn $P/lib64" ] || { echo "$output"; false; }
    # --libs framework on any command: the toolchain's lib64 off the loader path
    run "$CUDAENV" exec --libs framework 12.2 -- sh -c 'echo "${LD_LIBRARY_PATH:-unset} $CUDAENV_LIBS"'
    [ "$output" = "unset framework" ]
}

@test "a plain use beside a Python that brings its own libraries: current and doctor name the hazard and the fix (use --for); after use --for none" {
    onecopy_setup
    eval "$("$CUDAENV" env 12.2)"
    [ "${LD_LIBRARY_PATH%%:*}" = "$P/lib64" ]
    # (the mix it leads to, the issue's table: libcudnn.so.9 from the wheel, libcudnn_graph from the toolchain)
    run python3 -c "$MAPS_BY_FAMILY"
    [[ "$output" == *"libcudnn $P/lib64"* ]] && [[ "$output" == *"libcudnn $W/cudnn/lib"* ]] || false
    run --separate-stderr "$CUDAENV" current
    [ "$status" -eq 0 ] && [ "$output" = "12.2.2+cudnn9.1.0.70 (set by CUDAENV_VERSION, cudaenv use)" ] || false
    [[ "$stderr" == *"warning: python3 brings its own cudart, cudnn ($W/"*"and 12.2.2+cudnn9.1.0.70's lib64 is on LD_LIBRARY_PATH: a framework's process can load two copies of one library"*"fix: cudaenv use --for python3"* ]] || { echo "$stderr"; false; }
    run --separate-stderr "$CUDAENV" current --json
    [ "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["libs"], d["warning"]["code"], d["warning"]["fix"][:31])' <<<"$output")" = "toolchain framework.two-copies cudaenv use --for python3 (nvcc" ]
    CUDAENV_DOCTOR_PYTHON=python3 run --separate-stderr "$CUDAENV" doctor --json
    python3 -c 'import json,sys
fs = {f["code"]: f for f in json.load(sys.stdin)["findings"]}
f = fs["framework.two-copies"]
assert f["severity"] == "warning", f
assert f["fix"].startswith("cudaenv use --for python3 "), f
assert "LD_LIBRARY_PATH has '"$P"'/lib64" in f["evidence"], f' <<<"$output"
    # the fix applied: nothing to say
    eval "$("$CUDAENV" env --for python3 2>/dev/null)"
    [ "$CUDAENV_LIBS" = framework ]
    run --separate-stderr "$CUDAENV" current
    [ "$status" -eq 0 ] && [ -z "$stderr" ] || false
    CUDAENV_DOCTOR_PYTHON=python3 run --separate-stderr "$CUDAENV" doctor --json
    [[ "$output" != *framework.two-copies* ]]
}

@test "a conda environment's lib/ counts as the framework's own: exec TOOLCHAIN -- its python keeps the toolchain's lib64 off LD_LIBRARY_PATH" {
    onecopy_setup
    unset CUDAENV_VERSION FAKE_FW_LIBS
    rm -rf "$T/site/nvidia"
    mkdir -p "$T/conda/bin" "$T/conda/conda-meta" "$T/conda/lib"
    ln -s "$(readlink -f /usr/bin/python3)" "$T/conda/bin/python3"
    cp -a "$P"/lib64/libcudnn.so* "$T/conda/lib/"
    run --separate-stderr "$CUDAENV" exec 12.2 -- "$T/conda/bin/python3" -c 'import os; print(os.environ.get("LD_LIBRARY_PATH", "unset"))'
    [ "$status" -eq 0 ] && [ "$output" = unset ] || { echo "$output $stderr"; false; }
    [[ "$stderr" == *"$T/conda/bin/python3 brings its own cudnn ($(readlink -f "$T/conda/lib"))"* ]] || { echo "$stderr"; false; }
    # --libs toolchain: refused, the fix is conda's
    run --separate-stderr "$CUDAENV" exec --libs toolchain 12.2 -- "$T/conda/bin/python3" -c ''
    [ "$status" -eq 2 ] && [[ "$stderr" == *"conda remove the CUDA packages of that environment"* ]]
}
