#!/usr/bin/env bats
# cudaenv verify --framework tf|torch with fake TensorFlow / PyTorch packages
# (tests/lib/fakefw.sh) on PYTHONPATH that report the build information each
# test chooses and load fixture libraries through ctypes; the driver is the
# fake libcuda.so.1 of tests/doubles.  One scenario per finding, and the
# passing cases; the JSON document is checked field by field.
bats_require_minimum_version 1.5.0
load ../lib/common
source "$TESTS_DIR/lib/fakefw.sh"

PY=/usr/bin/python3

# the driver double and the toolchain with its receipt, built once (cc is the
# slow part) and copied into each test's root
setup_file() {
    local keep_t=${T:-}
    T=$BATS_FILE_TMPDIR/tc; CUDAENV_ROOT=$T/root; mkdir -p "$T/drv"
    cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$T/drv/libcuda.so.1" "$TESTS_DIR/doubles/libcuda.c" -lm
    fx_receipt "$(fx_installed 11.8.0 8.7.0.84)"
    T=$keep_t
}

setup() {
    common_setup
    unset LD_LIBRARY_PATH LD_PRELOAD CUDA_VISIBLE_DEVICES FAKE_CUDA_DRIVER_VERSION FAKE_CUDA_DEVICES
    unset FAKE_FW_VERSION FAKE_FW_CUDA FAKE_FW_CUDNN FAKE_FW_GPUS FAKE_FW_WRONG FAKE_FW_RAISE
    fx_fakefw "$T/site"
    export PYTHONPATH=$T/site
    # a driver showing one GPU (tests/doubles/libcuda.c)
    cp -a "$BATS_FILE_TMPDIR/tc/drv" "$T/drv"
    export CUDAENV_TEST_LIBCUDA=$T/drv/libcuda.so.1; seams_on
    mkdir -p "$CUDAENV_ROOT/versions"
    cp -a "$BATS_FILE_TMPDIR/tc/root/versions/11.8.0+cudnn8.7.0.84" "$CUDAENV_ROOT/versions/"
    P=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    export FAKE_FW_LIBS="libcudart.so.11.0 libcudnn.so.8"
}
teardown() { common_teardown; }

# Debian's own Python refuses pip (PEP 668): fixes make a venv first there
managed() { [ "$("$PY" -c 'import os, sys, sysconfig; print(sys.prefix == sys.base_prefix and os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))')" = True ]; }
pipfix() {
    if managed; then echo "python3 -m venv ~/.venvs/cuda && ~/.venvs/cuda/bin/python -m pip install $1 ($PY is the system's Python, which refuses pip: PEP 668)"
    else echo "$PY -m pip install $1"; fi
}

# fw FRAMEWORK [ARGS...]: verify 11.8 --framework FRAMEWORK --json, stdout in $output
fw() {
    local f=$1; shift
    run --separate-stderr "$CUDAENV" verify 11.8 --framework "$f" --python "$PY" "$@" --json
}
# j EXPR: a Python expression on the document (d), fs = the findings by code
j() {
    "$PY" -c 'import json, sys
d = json.loads(sys.stdin.read())
fs = {f["code"]: f for f in d["findings"]}
v = eval(sys.argv[1])
print(v if not isinstance(v, bool) else str(v).lower())' "$1" <<<"$output"
}

@test "torch on the toolchain: build info, GPU, matmul and conv right, libraries from the toolchain, exit 0" {
    fw torch
    [ "$status" -eq 0 ]
    [ "$(j 'd["exit_code"]')" = 0 ]
    [ "$(j 'd["findings"]')" = "[]" ]
    [ "$(j 'd["framework"]["version"]')" = 2.5.1+cu118 ]
    [ "$(j 'd["framework"]["cuda"]')" = 11.8 ]
    [ "$(j 'd["framework"]["cudnn"]')" = 8.7.0 ]
    [ "$(j 'd["framework"]["cudnn_runtime"]')" = 8700 ]
    [ "$(j 'd["framework"]["gpus"]')" = "['Fake GPU 0']" ]
    [ "$(j '[(c["name"], c["ok"], c["max_rel_err"] == 0) for c in d["framework"]["checks"]]')" = "[('matmul', True, True), ('conv2d', True, True)]" ]
    [ "$(j 'sorted(m.rsplit("/", 1)[1] for m in d["framework"]["maps"])')" = "['libcudart.so.11.8.89', 'libcudnn.so.8.7.0']" ]
    [ "$(j 'all(m.startswith(d["toolchain"]["prefix"] + "/") for m in d["framework"]["maps"])')" = true ]
    # the toolchain's environment, as exec gives it
    [ "$(j 'd["framework"]["env"]["LD_LIBRARY_PATH"].split(":")[0]')" = "$P/lib64" ]
    [ "$(j 'd["driver"]')" = "{'gpus': 1, 'cuda': '13.0'}" ]
    [ "$(j 'd["python"]')" = "$PY" ]
}

@test "tensorflow on the toolchain: the table names version, GPUs, checks and mapped files" {
    export FAKE_FW_CUDNN=8
    run "$CUDAENV" verify 11.8 --framework tf --python "$PY"
    [ "$status" -eq 0 ]
    [[ "$output" == *"tensorflow 2.14.1: built for CUDA 11.8, cuDNN 8;"* ]]
    [[ "$output" == *"GPUs seen by tensorflow: 1 (Fake GPU); by the driver: 1"* ]]
    [[ "$output" == *"matmul  on GPU 0 vs float64 on the CPU: max relative error 0: passed"* ]]
    [[ "$output" == *"conv2d  on GPU 0"*passed* ]]
    [[ "$output" == *"libraries on 11.8.0+cudnn8.7.0.84's own:"*"cudnn      $P/lib64/libcudnn.so.8.7.0"* ]]
    [[ "$output" == *"toolchain; dlopen(\"libcudnn.so.8\") by _ctypes"*", found through LD_LIBRARY_PATH"* ]]
    [[ "$output" == *"the framework runs on the toolchain"* ]]
}

@test "framework.cuda-mismatch: TF 2.14 (CUDA 11.8) on a CUDA 12 toolchain, the fix is the TF table's tf-2.14" {
    P12=$(fx_installed 12.3.0 8.9.7.29)
    fx_receipt "$P12"
    export FAKE_FW_CUDNN=8 FAKE_FW_LIBS=
    run --separate-stderr "$CUDAENV" verify 12.3 --framework tf --python "$PY" --json
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.cuda-mismatch']" ]
    [ "$(j 'fs["framework.cuda-mismatch"]["severity"]')" = error ]
    [ "$(j 'fs["framework.cuda-mismatch"]["summary"]')" = "tensorflow 2.14.1 was built for CUDA 11.8 but toolchain 12.3.0+cudnn8.9.7.29 has CUDA 12.3.0" ]
    [ "$(j 'fs["framework.cuda-mismatch"]["fix"]')" = "cudaenv install tf-2.14 && cudaenv verify tf-2.14 --framework tf" ]
    [[ "$(j 'fs["framework.cuda-mismatch"]["evidence"]')" == *"cuda_version']: CUDA 11.8"* ]]
}

@test "framework.cudnn-mismatch: torch built for cuDNN 9.1 on a cuDNN 8 toolchain" {
    export FAKE_FW_CUDNN=9.1.0 FAKE_FW_LIBS=libcudart.so.11.0
    fw torch
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.cudnn-mismatch']" ]
    [ "$(j 'fs["framework.cudnn-mismatch"]["summary"]')" = "torch 2.5.1+cu118 was built for cuDNN 9.1.0 but toolchain 11.8.0+cudnn8.7.0.84 has cuDNN 8.7.0.84" ]
    [ "$(j 'fs["framework.cudnn-mismatch"]["fix"]')" = "cudaenv install 11.8+cudnn9.1 && cudaenv verify 11.8+cudnn9.1 --framework torch" ]
}

@test "framework.cudnn-mismatch: an older cuDNN minor is an error for torch, a warning for tf" {
    export FAKE_FW_CUDNN=8.9.2
    fw torch
    [ "$status" -eq 7 ]
    [ "$(j 'fs["framework.cudnn-mismatch"]["severity"]')" = error ]
    fw tf
    [ "$status" -eq 0 ]
    [ "$(j 'fs["framework.cudnn-mismatch"]["severity"]')" = warning ]
}

@test "framework.cudnn-missing: built with cuDNN, the toolchain has none" {
    P117=$(fx_installed 11.7.0)
    fx_receipt "$P117"
    export FAKE_FW_CUDA=11.7 FAKE_FW_LIBS=libcudart.so.11.0
    run --separate-stderr "$CUDAENV" verify 11.7 --framework torch --python "$PY" --json
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.cudnn-missing']" ]
    [ "$(j 'fs["framework.cudnn-missing"]["fix"]')" = "cudaenv install 11.7+cudnn8.7 && cudaenv verify 11.7+cudnn8.7 --framework torch" ]
}

@test "framework.library-missing: the framework needs libcudnn.so.7 the toolchain lacks" {
    export FAKE_FW_CUDNN=7.6.5 FAKE_FW_LIBS="libcudart.so.11.0 libcudnn.so.7"
    fw torch
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.library-missing']" ]
    [[ "$(j 'fs["framework.library-missing"]["summary"]')" == "torch cannot load libcudnn.so.7, which toolchain 11.8.0+cudnn8.7.0.84 does not provide" ]]
    [[ "$(j 'fs["framework.library-missing"]["evidence"]')" == *"cannot open shared object file"* ]]
    [ "$(j 'fs["framework.library-missing"]["fix"]')" = "cudaenv install 11.8+cudnn7 && cudaenv verify 11.8+cudnn7 --framework torch" ]
}

@test "framework.foreign-library: libcudnn mapped from the pip nvidia-cudnn wheel, named with the wheel" {
    fx_cudnn "$T/w" 8.7.0 11
    fx_fakewheel "$T/site" nvidia-cudnn-cu11 cudnn 8.7.0.84 "$T/w/lib"
    export FAKE_FW_LIBS="libcudart.so.11.0 $T/site/nvidia/cudnn/lib/libcudnn.so.8"
    fw torch --libs toolchain
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.foreign-library']" ]
    f='fs["framework.foreign-library"]'
    [ "$(j "$f[\"summary\"]")" = "torch mapped libcudnn.so.8.7.0 from the pip wheel nvidia-cudnn-cu11, not from toolchain 11.8.0+cudnn8.7.0.84" ]
    [[ "$(j "$f[\"evidence\"]")" == *"/proc/self/maps of $PY: $T/site/nvidia/cudnn/lib/libcudnn.so.8.7.0"* ]]
    # both ways out, as commands: the wheels alone, or the toolchain alone; Debian's own Python refuses
    # pip (PEP 668), so there the toolchain alone is a venv of one's own without the wheel
    local alone="either the wheels alone: cudaenv use --for $PY (or cudaenv exec --for $PY -- $PY ...: the toolchain's nvcc and CUDA_HOME, its libraries off LD_LIBRARY_PATH); or the toolchain alone: "
    if managed; then
        [ "$(j "$f[\"fix\"]")" = "${alone}python3 -m venv ~/.venvs/cuda && ~/.venvs/cuda/bin/python -m pip install torch && ~/.venvs/cuda/bin/python -m pip uninstall -y nvidia-cudnn-cu11 ($PY is the system's Python, which refuses pip: PEP 668), then cudaenv verify 11.8.0+cudnn8.7.0.84 --framework torch --python ~/.venvs/cuda/bin/python" ]
    else
        [ "$(j "$f[\"fix\"]")" = "$alone$PY -m pip uninstall -y nvidia-cudnn-cu11 (pip install --no-deps keeps them out), then cudaenv verify 11.8.0+cudnn8.7.0.84 --framework torch --python $PY" ]
    fi
}

@test "framework.foreign-library: two wheels shadow the toolchain (a venv's Python): one uninstall naming both, then verify" {
    "$PY" -m venv --without-pip "$T/venv"
    local VPY=$T/venv/bin/python
    fx_cudnn "$T/w" 8.7.0 11
    fx_fakewheel "$T/site" nvidia-cudnn-cu11 cudnn 8.7.0.84 "$T/w/lib"
    fx_toolkit "$T/tk" 11.8.0
    fx_fakewheel "$T/site" nvidia-cuda-runtime-cu11 cuda_runtime 11.8.89 "$T/tk/lib64"
    export FAKE_FW_LIBS="$T/site/nvidia/cuda_runtime/lib/libcudart.so.11.0 $T/site/nvidia/cudnn/lib/libcudnn.so.8"
    run --separate-stderr "$CUDAENV" verify 11.8 --framework torch --python "$VPY" --libs toolchain --json
    [ "$status" -eq 7 ]
    [ "$(j '[f["code"] for f in d["findings"]]')" = "['framework.foreign-library', 'framework.foreign-library']" ]
    [ "$(j 'len({f["fix"] for f in d["findings"]})')" = 1 ]
    [ "$(j 'd["findings"][0]["fix"]')" = "either the wheels alone: cudaenv use --for $VPY (or cudaenv exec --for $VPY -- $VPY ...: the toolchain's nvcc and CUDA_HOME, its libraries off LD_LIBRARY_PATH); or the toolchain alone: $VPY -m pip uninstall -y nvidia-cuda-runtime-cu11 nvidia-cudnn-cu11 (pip install --no-deps keeps them out), then cudaenv verify 11.8.0+cudnn8.7.0.84 --framework torch --python $VPY" ]
}

@test "framework.foreign-library: the owning wheel from pip's RECORD (CUDA 13's nvidia/cu13 layout)" {
    fx_toolkit "$T/tk" 11.8.0
    fx_fakewheel "$T/site" nvidia-cuda-runtime cu13 13.0.96 "$T/tk/lib64"
    export FAKE_FW_LIBS="$T/site/nvidia/cu13/lib/libcudart.so.11.0 libcudnn.so.8"
    fw torch --libs toolchain
    [ "$status" -eq 7 ]
    [ "$(j 'fs["framework.foreign-library"]["summary"]')" = "torch mapped libcudart.so.11.8.89 from the pip wheel nvidia-cuda-runtime, not from toolchain 11.8.0+cudnn8.7.0.84" ]
    [[ "$(j 'fs["framework.foreign-library"]["fix"]')" == *" -m pip uninstall -y nvidia-cuda-runtime "* ]]
}

@test "framework.cudnn-mixed: libcudnn from a wheel, its parts from the toolchain" {
    fx_cudnn "$T/w" 8.7.0 11
    fx_fakewheel "$T/site" nvidia-cudnn-cu11 cudnn 8.7.0.84 "$T/w/lib"
    export FAKE_FW_LIBS="libcudart.so.11.0 $T/site/nvidia/cudnn/lib/libcudnn.so.8 libcudnn_ops_infer.so.8"
    fw torch --libs toolchain
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.cudnn-mixed', 'framework.foreign-library']" ]
    [ "$(j 'fs["framework.cudnn-mixed"]["summary"]')" = "torch runs one cuDNN made of libraries from two directories" ]
    [ "$(j 'sorted(fs["framework.cudnn-mixed"]["evidence"].split("\n"))')" = "['$P/lib64/libcudnn_ops_infer.so.8.7.0', '$T/site/nvidia/cudnn/lib/libcudnn.so.8.7.0']" ]
}

@test "framework.foreign-library: LD_PRELOAD is named in the evidence and the fix" {
    fx_cudnn "$T/w" 8.7.0 11
    fx_fakewheel "$T/site" nvidia-cudnn-cu11 cudnn 8.7.0.84 "$T/w/lib"
    # (an ASan build of cudaenv would refuse a preload ahead of its runtime)
    ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=$T/site/nvidia/cudnn/lib/libcudnn.so.8.7.0 fw torch --libs toolchain
    [ "$status" -eq 7 ]
    [[ "$(j 'fs["framework.foreign-library"]["evidence"]')" == *"LD_PRELOAD=$T/site/nvidia/cudnn/lib/libcudnn.so.8.7.0"* ]]
    [[ "$(j 'fs["framework.foreign-library"]["fix"]')" == "remove it from LD_PRELOAD"* ]]
}

@test "framework.foreign-library: libcudart from a conda environment" {
    mkdir -p "$T/conda/envs/x/conda-meta"
    fx_toolkit "$T/conda/envs/x" 11.8.0
    mv "$T/conda/envs/x/lib64" "$T/conda/envs/x/lib"
    export FAKE_FW_LIBS="$T/conda/envs/x/lib/libcudart.so.11.0 libcudnn.so.8"
    fw tf
    [ "$status" -eq 7 ]
    [[ "$(j 'fs["framework.foreign-library"]["summary"]')" == "tensorflow mapped libcudart.so.11.8.89 from a conda package (cudatoolkit / cudnn) in $T/conda/envs/x/lib, not from"* ]]
    [[ "$(j 'fs["framework.foreign-library"]["fix"]')" == "conda remove cudatoolkit cudnn"* ]]
}

@test "framework.cpu-only-build: torch+cpu and tensorflow-cpu, with the wheel to install instead" {
    export FAKE_FW_CUDA=none FAKE_FW_VERSION=2.5.1+cpu FAKE_FW_LIBS=
    fw torch
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.cpu-only-build']" ]
    [ "$(j 'fs["framework.cpu-only-build"]["fix"]')" = "$(pipfix "--force-reinstall torch --index-url https://download.pytorch.org/whl/cu118")" ]
    mkdir -p "$T/site/tensorflow_cpu-2.14.1.dist-info"
    printf 'Metadata-Version: 2.1\nName: tensorflow-cpu\nVersion: 2.14.1\n' > "$T/site/tensorflow_cpu-2.14.1.dist-info/METADATA"
    export FAKE_FW_VERSION=2.14.1
    fw tf
    [ "$status" -eq 7 ]
    [[ "$(j 'fs["framework.cpu-only-build"]["evidence"]')" == *"the tensorflow-cpu wheel is installed, version 2.14.1"* ]]
    if managed; then
        [ "$(j 'fs["framework.cpu-only-build"]["fix"]')" = "$(pipfix "'tensorflow==2.14.*'")" ]
    else
        [ "$(j 'fs["framework.cpu-only-build"]["fix"]')" = "$PY -m pip uninstall -y tensorflow-cpu && $PY -m pip install 'tensorflow==2.14.*'" ]
    fi
}

@test "framework.no-gpu: CUDA_VISIBLE_DEVICES hides the GPU the driver shows" {
    CUDA_VISIBLE_DEVICES=-1 fw torch
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.no-gpu']" ]
    [ "$(j 'fs["framework.no-gpu"]["summary"]')" = "torch sees no GPU while the driver shows 1: CUDA_VISIBLE_DEVICES='-1' hides them" ]
    [[ "$(j 'fs["framework.no-gpu"]["fix"]')" == "unset CUDA_VISIBLE_DEVICES"* ]]
}

@test "framework.no-gpu: a driver too old for the framework's CUDA, with the driver it needs" {
    export FAKE_FW_GPUS=0 FAKE_CUDA_DRIVER_VERSION=11020
    fw tf
    [ "$status" -eq 7 ]
    [ "$(j 'fs["framework.no-gpu"]["summary"]')" = "tensorflow sees no GPU: the driver supports CUDA 11.2, tensorflow 2.14.1 was built for CUDA 11.8" ]
    [ "$(j 'fs["framework.no-gpu"]["fix"]')" = "upgrade the NVIDIA driver to 520.61.05, or install a tensorflow build for CUDA 11.2 or older" ]
}

@test "no driver and no GPU: the static checks still run, exit 8" {
    export CUDAENV_TEST_LIBCUDA=$T/none/libcuda.so.1 FAKE_FW_GPUS=0; seams_on
    fw torch
    [ "$status" -eq 8 ]
    [ "$(j 'sorted(fs)')" = "['framework.no-gpu']" ]
    [ "$(j 'fs["framework.no-gpu"]["severity"]')" = info ]
    [ "$(j 'd["driver"]["gpus"]')" = -1 ]
    export FAKE_FW_CUDNN=9.1.0 FAKE_FW_LIBS=libcudart.so.11.0
    fw torch
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.cudnn-mismatch', 'framework.no-gpu']" ]
}

@test "framework.wrong-result and framework.compute-failed" {
    FAKE_FW_WRONG=1 fw torch
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.wrong-result']" ]
    [[ "$(j 'fs["framework.wrong-result"]["evidence"]')" == *"relative to the float64 CPU reference"* ]]
    FAKE_FW_RAISE="CUDNN_STATUS_NOT_INITIALIZED" fw tf
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.compute-failed']" ]
    [[ "$(j 'fs["framework.compute-failed"]["evidence"]')" == "RuntimeError: CUDNN_STATUS_NOT_INITIALIZED"* ]]
}

# nosite: a Python without site-packages (python3-torch may be installed system-wide)
nosite() {
    printf '#!/bin/sh\nexec %s -S "$@"\n' "$PY" > "$T/nosite" && chmod +x "$T/nosite"
}

@test "framework.not-importable: the Python has no torch" {
    nosite
    PYTHONPATH=$T/empty run --separate-stderr "$CUDAENV" verify 11.8 --framework torch --python "$T/nosite" --json
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.not-importable']" ]
    [ "$(j 'fs["framework.not-importable"]["summary"]')" = "$T/nosite cannot import torch" ]
}

@test "usage: --python needs --framework, unknown framework, missing Python" {
    run "$CUDAENV" verify 11.8 --python "$PY"
    [ "$status" -eq 2 ]
    [[ "$output" == *"--python goes with --framework"* ]]
    run "$CUDAENV" verify 11.8 --framework caffe
    [ "$status" -eq 2 ]
    [[ "$output" == *"unknown framework 'caffe' (tf, torch or jax)"* ]]
    run "$CUDAENV" verify 11.8 --framework torch --python "$T/nope/python"
    [ "$status" -eq 3 ]
    [[ "$output" == *"$T/nope/python: no such executable"* ]]
    run "$CUDAENV" verify 11.8 --framework torch --bench
    [ "$status" -eq 2 ]
    [[ "$output" == *"--framework checks the framework only"* ]]
    run "$CUDAENV" verify --help
    [[ "$output" == *"--framework tf|torch|jax"* ]]
}

@test "doctor: the framework layer (quick, no GPU work) reports the build against the active toolchain" {
    export CUDAENV_VERSION=11.8.0+cudnn8.7.0.84 CUDAENV_DOCTOR_PYTHON=$PY FAKE_FW_LIBS=libcudart.so.11.0
    # selected, but not applied to this shell: the classic "Could not load dynamic library"
    run --separate-stderr "$CUDAENV" doctor --json
    [ "$(j '[f["summary"] for f in d["findings"] if f["code"] == "framework.library-missing"][0]')" = "torch cannot load libcudart.so.11.0: toolchain 11.8.0+cudnn8.7.0.84 has it, but it is not on the loader path" ]
    [[ "$(j 'fs["framework.library-missing"]["fix"]')" == "cudaenv use 11.8.0+cudnn8.7.0.84 "* ]]
    eval "$("$CUDAENV" env 11.8 --shell bash 2>/dev/null)"
    export FAKE_FW_CUDNN=9.1.0
    run --separate-stderr "$CUDAENV" doctor --json
    [ "$(j '[(f["code"], f["severity"], f["summary"].split()[0]) for f in d["findings"] if f["layer"] == "framework"]')" = "[('framework.cudnn-mismatch', 'error', 'torch'), ('framework.cudnn-mismatch', 'error', 'tensorflow')]" ]
    [ "$status" -eq 7 ]
    run "$CUDAENV" doctor
    [[ "$output" == *"Frameworks (TensorFlow, PyTorch)"*"framework.cudnn-mismatch"* ]]
}

@test "doctor: a CPU-only build is a warning; no framework installed, or CUDAENV_DOCTOR_PYTHON=none, says nothing" {
    export CUDAENV_VERSION=11.8.0+cudnn8.7.0.84 CUDAENV_DOCTOR_PYTHON=$PY FAKE_FW_CUDA=none FAKE_FW_LIBS=
    run --separate-stderr "$CUDAENV" doctor --json
    [ "$(j '[(f["code"], f["severity"]) for f in d["findings"] if f["layer"] == "framework"]')" = "[('framework.cpu-only-build', 'warning'), ('framework.cpu-only-build', 'warning')]" ]
    CUDAENV_DOCTOR_PYTHON=none run --separate-stderr "$CUDAENV" doctor --json
    [ "$(j '[f for f in d["findings"] if f["layer"] == "framework"]')" = "[]" ]
    nosite
    PYTHONPATH=$T/empty CUDAENV_DOCTOR_PYTHON=$T/nosite run --separate-stderr "$CUDAENV" doctor --json
    [ "$(j '[f for f in d["findings"] if f["layer"] == "framework"]')" = "[]" ]
}

@test "framework.import-failed and framework.script-failed" {
    mkdir -p "$T/bad/torch"
    echo 'raise RuntimeError("CUDA call failed lazily")' > "$T/bad/torch/__init__.py"
    PYTHONPATH=$T/bad fw torch
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.import-failed']" ]
    [[ "$(j 'fs["framework.import-failed"]["evidence"]')" == "RuntimeError: CUDA call failed lazily"* ]]
    printf '#!/bin/sh\necho broken python >&2\nexit 3\n' > "$T/py" && chmod +x "$T/py"
    run --separate-stderr "$CUDAENV" verify 11.8 --framework tf --python "$T/py" --json
    [ "$status" -eq 7 ]
    [ "$(j 'fs["framework.script-failed"]["summary"]')" = "the framework check did not report ($T/py exited with status 3)" ]
    [ "$(j 'fs["framework.script-failed"]["evidence"]')" = "broken python" ]
}

@test "a real PyTorch (Debian's CPU-only python3-torch): cpu-only-build from its own build info, in verify and doctor" {
    unset PYTHONPATH FAKE_FW_LIBS
    "$PY" -c 'import torch' 2>/dev/null || skip "python3-torch is not installed (tools/deps.txt)"
    fw torch
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.cpu-only-build']" ]
    [ "$(j 'd["framework"]["cuda"]')" = None ]
    [ "$(j 'd["framework"]["imported"]')" = true ]
    [[ "$(j 'd["framework"]["module"]')" == /usr/lib/python3/dist-packages/torch/__init__.py ]]
    [[ "$(j 'fs["framework.cpu-only-build"]["evidence"]')" == "torch "*": torch.version.cuda is None" ]]
    export CUDAENV_VERSION=11.8.0+cudnn8.7.0.84 CUDAENV_DOCTOR_PYTHON=$PY
    run --separate-stderr "$CUDAENV" doctor --json
    [ "$(j '[(f["code"], f["severity"]) for f in d["findings"] if f["layer"] == "framework"]')" = "[('framework.cpu-only-build', 'warning')]" ]
}

@test "what the framework reports (version, exception text, GPU names) reaches the terminal escaped: \\x1b, never ESC (issue 21)" {
    # OSC 52 (writes the clipboard), a title change, CSI clear screen, C1 CSI, a carriage return
    export FAKE_FW_VERSION=$'2.5.1\033]52;c;cHduZWQ=\007'
    export FAKE_FW_RAISE=$'boom\033[2J\r\xc2\x9b31mFAKE'
    run --separate-stderr "$CUDAENV" verify 11.8 --framework torch --python "$PY"
    [ "$status" -eq 7 ] || { echo "$status $output $stderr"; false; }
    [[ "$output$stderr" != *$'\033'* && "$output$stderr" != *$'\007'* && "$output$stderr" != *$'\r'* ]] || { printf '%q\n' "$output"; false; }
    [[ "$output$stderr" != *$'\xc2\x9b'* ]]
    [[ "$output" == *'2.5.1\x1b]52;c;cHduZWQ=\x07'* ]] || { echo "$output"; false; }
    [[ "$output" == *'boom\x1b[2J\x0d\xc2\x9b31mFAKE'* ]] || { echo "$output"; false; }
    # --json carries the text as JSON escapes (\u001b), which no terminal acts on
    run --separate-stderr "$CUDAENV" verify 11.8 --framework torch --python "$PY" --json
    [[ "$output" != *$'\033'* ]]
    python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); assert "\x1b" in d["framework"]["version"]' <<<"$output"
}

@test "framework.foreign-library: libcudnn from a directory beside the toolchain whose path starts with its prefix" {
    # $P.old/lib64 is not inside $P: a prefix comparison without the '/' boundary would take it for the toolchain's
    mkdir -p "$P.old/lib64"
    fx_cudnn "$T/w" 8.7.0 11
    cp -a "$T/w/lib/"libcudnn.so* "$P.old/lib64/"
    export FAKE_FW_LIBS="libcudart.so.11.0 $P.old/lib64/libcudnn.so.8"
    fw torch
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.foreign-library']" ]
    [ "$(j 'fs["framework.foreign-library"]["severity"]')" = error ]
    [ "$(j 'fs["framework.foreign-library"]["summary"]')" = "torch mapped libcudnn.so.8.7.0 from $P.old/lib64, not from toolchain 11.8.0+cudnn8.7.0.84" ]
    [ "$(j 'fs["framework.foreign-library"]["fix"]')" = "remove $P.old/lib64 from LD_LIBRARY_PATH, LD_PRELOAD or the framework's RPATH" ]
}

@test "framework.cuda-mismatch: a toolchain of an older CUDA minor is a warning (exit 0), a newer minor is no finding" {
    P117=$(fx_installed 11.7.0 8.7.0.84)
    fx_receipt "$P117"
    export FAKE_FW_LIBS=
    run --separate-stderr "$CUDAENV" verify 11.7 --framework torch --python "$PY" --json
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ "$(j 'sorted(fs)')" = "['framework.cuda-mismatch']" ]
    [ "$(j 'fs["framework.cuda-mismatch"]["severity"]')" = warning ]
    [ "$(j 'fs["framework.cuda-mismatch"]["summary"]')" = "torch 2.5.1+cu118 was built for CUDA 11.8 but toolchain 11.7.0+cudnn8.7.0.84 has CUDA 11.7.0" ]
    [[ "$(j 'fs["framework.cuda-mismatch"]["evidence"]')" == *"an older minor release than the framework was built with"* ]]
    # built for 11.7, run on 11.8: minor-version compatibility, nothing to say
    FAKE_FW_CUDA=11.7 fw torch
    [ "$status" -eq 0 ]
    [ "$(j 'd["findings"]')" = "[]" ]
}

@test "verify --framework jax: a jax without its CUDA plugin is a CPU-only build, fixed with the -local extra" {
    fx_fakejax "$T/site" none
    fw jax
    [ "$status" -eq 7 ]
    [ "$(j 'sorted(fs)')" = "['framework.cpu-only-build']" ]
    [ "$(j 'fs["framework.cpu-only-build"]["summary"]')" = "jax 0.4.30 is a CPU-only build: it cannot use any GPU" ]
    [[ "$(j 'fs["framework.cpu-only-build"]["evidence"]')" == "jax 0.4.30: no CUDA plugin (jax_cuda13_plugin, jax_cuda12_plugin, jaxlib.cuda) is importable"* ]]
    [ "$(j 'fs["framework.cpu-only-build"]["fix"]')" = "$(pipfix "'jax[cuda12-local]'") (the CUDA plugin for the toolchain's CUDA, without CUDA wheels)" ]
    run "$CUDAENV" verify 11.8 --framework mxnet --python "$PY"
    [ "$status" -eq 2 ] && [[ "$output" == *"unknown framework 'mxnet' (tf, torch or jax)"* ]]
}

# issue 37: the per-family account.  A Python that brings its own CUDA
# libraries (tests/lib/fakefw.sh fx_fakecudnn_wheel: libcudnn.so.9 preloaded
# by path, its libcudnn_graph.so.9 dlopen()ed by name through its RUNPATH)
# is checked the way exec --for runs it: on its own libraries.
@test "the wheels alone: exit 0, each family's file, where it lies and why the loader took it (text and --json)" {
    fx_fakecudnn_wheel "$T/site"
    W=$(readlink -f "$T/site/nvidia")
    export FAKE_FW_LIBS="$T/site/nvidia/cuda_runtime/lib/libcudart.so.12 $T/site/nvidia/cudnn/lib/libcudnn.so.9"
    fw torch
    [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
    [ "$(j 'd["findings"]')" = "[]" ]
    [[ "$stderr" == *"$PY brings its own cudart, cudnn"*"lib64 is kept off LD_LIBRARY_PATH"* ]]
    run -0 "$PY" -c 'import json, sys
for l in json.loads(sys.stdin.read())["libraries"]:
    print(l["family"], l["file"], l["source"], l["how"], l["why"])' <<<"$output"
    [[ "${lines[*]}" == *"cudart $W/cuda_runtime/lib/libcudart.so.12 framework (pip wheel) path preloaded by path by _ctypes"* ]] || { echo "$output"; false; }
    [[ "${lines[*]}" == *"cudnn $W/cudnn/lib/libcudnn.so.9 framework (pip wheel) path preloaded by path by _ctypes"* ]]
    [[ "${lines[*]}" == *"cudnn $W/cudnn/lib/libcudnn_graph.so.9 framework (pip wheel) dlopen dlopen(\"libcudnn_graph.so.9\") by libcudnn.so.9, found through the RUNPATH of libcudnn.so.9"* ]]
    run "$CUDAENV" verify 11.8 --framework torch --python "$PY"
    [ "$status" -eq 0 ]
    [[ "$output" == *"libraries on torch's own (the toolchain's lib64 is not on LD_LIBRARY_PATH):"* ]]
    [[ "$output" == *"cudnn      $W/cudnn/lib/libcudnn_graph.so.9"*"framework (pip wheel); dlopen(\"libcudnn_graph.so.9\") by libcudnn.so.9, found through the RUNPATH of libcudnn.so.9"* ]] || { echo "$output"; false; }
    # --libs toolchain: checked against the toolchain's alone, the wheels are foreign (exit 7)
    fw torch --libs toolchain
    [ "$status" -eq 7 ] && [ "$(j 'sorted(fs)')" = "['framework.foreign-library']" ]
}

@test "a real mix is exit 7: cuDNN's sub-library from another LD_LIBRARY_PATH entry; two copies of libcudart" {
    fx_fakecudnn_wheel "$T/site"
    mkdir -p "$T/other"
    cp "$T/site/nvidia/cudnn/lib/libcudnn_graph.so.9" "$T/site/nvidia/cuda_runtime/lib/libcudart.so.12" "$T/other/"
    export LD_LIBRARY_PATH=$T/other
    export FAKE_FW_LIBS="$T/site/nvidia/cuda_runtime/lib/libcudart.so.12 $T/site/nvidia/cudnn/lib/libcudnn.so.9"
    fw torch
    [ "$status" -eq 7 ]
    [[ "$(j 'sorted(fs)')" == *"'framework.cudnn-mixed'"* ]] || { echo "$output"; false; }
    [ "$(j '[l["why"] for l in d["libraries"] if l["file"].endswith("libcudnn_graph.so.9")]')" = "['dlopen(\"libcudnn_graph.so.9\") by libcudnn.so.9, found through LD_LIBRARY_PATH']" ]
    export FAKE_FW_LIBS="$T/site/nvidia/cuda_runtime/lib/libcudart.so.12 $T/other/libcudart.so.12"
    fw torch
    [ "$status" -eq 7 ]
    [ "$(j 'fs["framework.family-mixed"]["summary"]')" = "torch maps cudart from two directories: two copies of one library in one process" ]
}
