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
    [ "$status" -eq 0 ] && [ "$(cat .cuda-version)" = "12.2+cudnn8.9" ]
    FAKE_FW_CUDA=12.2 FAKE_FW_CUDNN=8.9.7 run "$CUDAENV" local --for "$PY" --framework tf --force
    [ "$status" -eq 0 ] && [ "$(cat .cuda-version)" = "tf-2.14" ]
    # both built for 11.8: they agree, TensorFlow's row (its tested pair) decides
    FAKE_FW_CUDA=11.8 FAKE_FW_CUDNN=8.7.0 run "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 0 ] && [ "$(cat .cuda-version)" = "tf-2.14" ]
}

@test "a CPU-only build, no framework, an unknown --framework: nothing decided, nothing written" {
    torch_only
    FAKE_FW_CUDA=none run "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 3 ]
    [[ "$output" == *"CPU-only build"* ]] && [[ "$output" == *"only CPU-only frameworks"* ]]
    # a venv without frameworks (this machine's own python3 has Debian's CPU-only torch)
    /usr/bin/python3 -m venv --without-pip "$T/venv"
    PYTHONPATH= run "$CUDAENV" local --for "$T/venv/bin/python" --force
    [ "$status" -eq 3 ]
    [[ "$output" == *"imports no framework"* ]]
    run "$CUDAENV" local --for "$PY" --framework mxnet --force
    [ "$status" -eq 2 ] && [[ "$output" == *"'mxnet' is not tf, torch or jax"* ]]
    run "$CUDAENV" local --for "$T/nonexistent/python" --force
    [ "$status" -ne 0 ]
    [ ! -e .cuda-version ]
}

@test "what a framework reports is escaped before it is printed (a version carrying OSC 52)" {
    torch_only
    FAKE_FW_VERSION=$'2.5.1\e]52;c;cHduZWQ=\a' FAKE_FW_CUDA=12.2 FAKE_FW_CUDNN=8.9.7 \
        run --separate-stderr "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" != *$'\e'* ]] && [[ "$stderr" != *$'\a'* ]]
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
    [ "$status" -eq 3 ] && [ ! -e .cuda-version ]
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
    [ "$status" -eq 0 ] && [ "$(cat .cuda-version)" = "12.2+cudnn9.1" ]
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
    [ "$status" -eq 0 ] && [ "$(cat .cuda-version)" = "11.8+cudnn8.7" ]
    [[ "$stderr" == *"PyTorch's cuDNN 8.7 also runs JAX (built with cuDNN 8.6: an older minor release of the same major)"* ]]
    [[ "$stderr" == *"PyTorch decides: 11.8+cudnn8.7"* ]]
    FAKE_FW_CUDNN=8.6.0 FAKE_JAX_CUDNN=8.7.0 run --separate-stderr "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 0 ] && [ "$(cat .cuda-version)" = "11.8+cudnn8.7" ]
    [[ "$stderr" == *"JAX decides: 11.8+cudnn8.7"* ]]
    # JAX's own cuDNN is not in the manifest, PyTorch's newer one is: a note, not a warning
    FAKE_JAX_CUDNN=8.5.0 run --separate-stderr "$CUDAENV" local --for "$PY" --force
    [ "$status" -eq 0 ] && [ "$(cat .cuda-version)" = "11.8+cudnn8.7" ]
    [[ "$stderr" == *"JAX 0.4.30 in $PY was built for CUDA 11.8, cuDNN 8.5: PyTorch's toolchain (CUDA 11.8, cuDNN 8.7) runs it too"* ]]
    [[ "$stderr" != *"warning"* ]]
}
