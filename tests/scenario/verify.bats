#!/usr/bin/env bats
# cudaenv verify without a GPU: steps 1-3 on fixture toolchains (good and
# broken), and the GPU steps driven by the fake libcuda.so.1 of
# tests/doubles/libcuda.c.  The JSON document is parsed and checked field by
# field; exit codes 0, 7 and 8 are asserted.
bats_require_minimum_version 1.5.0
load ../lib/common

setup() {
    common_setup
    # The machine's own driver (if any) must not decide these tests.
    export CUDAENV_TEST_LIBCUDA=$T/no-driver/libcuda.so.1; seams_on
    unset LD_LIBRARY_PATH FAKE_CUDA_DRIVER_VERSION FAKE_CUDA_DEVICES FAKE_CUDA_LAUNCH FAKE_CUDA_MODULE_LOAD FAKE_CUDA_CC
}
teardown() { common_teardown; }

# j EXPR: evaluate a Python expression on the JSON document in $output (d),
# with st = the steps keyed by id.
j() {
    python3 -c 'import json, sys
d = json.loads(sys.stdin.read())
st = {s["id"]: s for s in d["steps"]}
v = eval(sys.argv[1])
print(v if not isinstance(v, bool) else str(v).lower())' "$1" <<<"$output"
}

# verify_json ARGS...: run verify --json, stdout only in $output
verify_json() {
    run --separate-stderr "$CUDAENV" verify "$@" --json
}

good_118() {
    P=$(fx_installed 11.8.0 8.7.0.84)
    fx_receipt "$P" 520.61.05 11 3.5 9.0
}

fake_gpu() {  # fake_gpu PREFIX [RELEASE]
    fx_fake_gpu "$1" "$T/drv" "${2:-580.65.06}"
    fx_receipt "$1" 520.61.05 11 3.5 9.0
    export CUDAENV_TEST_LIBCUDA=$T/drv/libcuda.so.1; seams_on
}

@test "no driver: steps 1-3 pass, the GPU steps are skipped with the reason, exit 8" {
    good_118
    verify_json 11.8.0+cudnn8.7.0.84
    [ "$status" -eq 8 ]
    [ "$(j 'd["exit_code"]')" = 8 ]
    [ "$(j 'sorted(d.keys())')" = "['devices', 'exit_code', 'host', 'hostname', 'libraries', 'steps', 'timings', 'toolchain', 'versions', 'warnings']" ]
    [ "$(j '[s["id"] for s in d["steps"]]')" = "['files', 'versions', 'loader', 'driver', 'device', 'kernel', 'nvcc', 'cudnn', 'nccl']" ]
    for s in files versions loader; do [ "$(j "st['$s']['status']")" = passed ]; done
    # a toolchain without NCCL: skipped (not for want of a GPU), with the way to add it
    [ "$(j "st['nccl']['status']")" = skipped ] && [ "$(j "st['nccl']['no_gpu']")" = false ] || false
    [[ "$(j "st['nccl']['summary']")" == *"--components +nccl"* ]]
    for s in driver device kernel nvcc cudnn; do
        [ "$(j "st['$s']['status']")" = skipped ]
        [ "$(j "st['$s']['no_gpu']")" = true ]
        [[ "$(j "st['$s']['summary']")" == "libcuda.so.1 not found: no NVIDIA driver on this machine"* ]]
    done
    [ "$(j 'd["versions"]["cuda"]["cudart_header"]')" = 11080 ]
    [ "$(j 'd["versions"]["cuda"]["cudart_runtime"]')" = 11080 ]
    [ "$(j 'd["versions"]["cuda"]["nvrtc"]')" = 11.8 ]
    [ "$(j 'd["versions"]["cuda"]["nvcc"]')" = 11.8 ]
    [ "$(j 'd["versions"]["cudnn"]["header"]')" = 8.7.0 ]
    [ "$(j 'd["versions"]["cudnn"]["library_file"]')" = 8.7.0 ]
    [ "$(j 'd["versions"]["cudnn"]["cudnnGetVersion"]')" = 8700 ]
    [ "$(j 'd["versions"]["cudnn"]["cudnnGetCudartVersion"]')" = 11080 ]
    [ "$(j 'd["devices"]')" = "[]" ]
    [ "$(j 'd["toolchain"]["min_driver"]')" = 520.61.05 ]
    [ "$(j 'all(k in d["timings"] for k in ("files", "versions", "loader", "total"))')" = true ]
    [ "$(j 'st["files"]["ms"] >= 0 and isinstance(st["files"]["evidence"], list)')" = true ]
}

@test "the table: one line per step, no colour when piped, the reason shown" {
    good_118
    run "$CUDAENV" verify 11.8
    [ "$status" -eq 8 ]
    [[ "$output" != *$'\033'* ]]
    [[ "$output" == *"1 files"*passed* ]]
    [[ "$output" == *"6 kernel"*skipped*"libcuda.so.1 not found: no NVIDIA driver on this machine"* ]]
    [[ "$output" == *"no usable GPU/driver"* ]]
}

@test "the active toolchain is the default; none active is exit 3" {
    run "$CUDAENV" verify
    [ "$status" -eq 3 ]
    good_118
    CUDAENV_VERSION=11.8 run --separate-stderr "$CUDAENV" verify --json
    [ "$status" -eq 8 ]
    [ "$(j 'd["toolchain"]["name"]')" = 11.8.0+cudnn8.7.0.84 ]
}

@test "a cuDNN header from another release: versions failed, both values and the file named, exit 7" {
    P=$(fx_installed 11.8.0)
    fx_cudnn "$T/dn" 8.7.0.84 11 8.6.0.163
    cp -a "$T/dn/include/." "$P/include/"; cp -a "$T/dn/lib/." "$P/lib64/"
    mv "$P" "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84"; P=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    fx_receipt "$P"
    verify_json 11.8.0+cudnn8.7.0.84
    [ "$status" -eq 7 ]
    [ "$(j 'st["versions"]["status"]')" = failed ]
    s=$(j 'st["versions"]["summary"]')
    [[ "$s" == *"$P/include/cudnn_version.h says cuDNN 8.6.0"* && "$s" == *"says 8.7.0"* ]]
    [ "$(j 'd["versions"]["cudnn"]["header"]')" = 8.6.0 ]
    [ "$(j 'st["files"]["status"]')" = passed ]
}

@test "a renamed cuDNN library: the file name disagrees, exit 7" {
    good_118
    mv "$P/lib64/libcudnn.so.8.7.0" "$P/lib64/libcudnn.so.8.6.0"
    ln -sfn libcudnn.so.8.6.0 "$P/lib64/libcudnn.so.8"
    fx_receipt "$P"
    verify_json 11.8.0+cudnn8.7.0.84
    [ "$status" -eq 7 ]
    s=$(j 'st["versions"]["summary"]')
    [[ "$s" == *"library file $P/lib64/libcudnn.so.8.6.0 says cuDNN 8.6.0"*"says 8.7.0"* ]]
}

@test "cudnnGetCudartVersion of another CUDA major: versions failed, exit 7" {
    P=$(fx_installed 11.8.0)
    fx_cudnn "$T/dn" 8.7.0.84 11 8.7.0.84 12
    cp -a "$T/dn/include/." "$P/include/"; cp -a "$T/dn/lib/." "$P/lib64/"
    mv "$P" "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84"; P=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    fx_receipt "$P"
    verify_json 11.8.0+cudnn8.7.0.84
    [ "$status" -eq 7 ]
    [[ "$(j 'st["versions"]["summary"]')" == *"was built for CUDA 12 (cudnnGetCudartVersion() = 12080"*"toolkit is CUDA 11.8.0"* ]]
    [ "$(j 'd["versions"]["cudnn"]["cudnnGetCudartVersion"]')" = 12080 ]
}

@test "version.json of another release (date-stamped) and nvcc disagreeing are named" {
    good_118
    sed -i 's/"version" : "11.8.0"/"version" : "11.7.20220929"/' "$P/version.json"
    fx_receipt "$P"
    verify_json 11.8
    [ "$status" -eq 7 ]
    [[ "$(j 'st["versions"]["summary"]')" == *"version.json says CUDA 11.7 ($P/version.json) but the toolchain 11.8.0+cudnn8.7.0.84 says 11.8"* ]]
}

@test "a file missing from the tree, a file of another size: files failed with the paths, exit 7" {
    good_118
    rm "$P/bin/ptxas"
    echo "// edited" >> "$P/include/cuda_runtime_api.h"
    verify_json 11.8
    [ "$status" -eq 7 ]
    [ "$(j 'st["files"]["status"]')" = failed ]
    [[ "$(j 'st["files"]["summary"]')" == *"2 of "*"(1 missing, 1 wrong size)"* ]]
    [[ "$(j 'st["files"]["evidence"]')" == *"missing: bin/ptxas"* ]]
    [[ "$(j 'st["files"]["evidence"]')" == *"size differs: include/cuda_runtime_api.h"* ]]
}

@test "no receipt: files failed, with the fix" {
    P=$(fx_installed 11.8.0 8.7.0.84)
    verify_json 11.8
    [ "$status" -eq 7 ]
    [[ "$(j 'st["files"]["summary"]')" == *"no readable receipt"*"cudaenv install 11.8.0+cudnn8.7.0.84 --force"* ]]
}

@test "--deep re-hashes: same size, other bytes is caught only with --deep" {
    good_118
    sed -i 's/fixture/FIXTURE/' "$P/include/cuda_runtime_api.h"
    verify_json 11.8
    [ "$status" -eq 8 ]
    [ "$(j 'st["files"]["status"]')" = passed ]
    verify_json 11.8 --deep
    [ "$status" -eq 7 ]
    [[ "$(j 'st["files"]["evidence"]')" == *"sha256 differs: include/cuda_runtime_api.h"* ]]
}

@test "verify X runs in X's own environment (as exec): the shell's shadowing libcudart is a warning naming it, not a failure" {
    good_118
    fx_toolkit "$T/old" 11.2.0
    LD_LIBRARY_PATH=$T/old/lib64:$P/lib64 run --separate-stderr "$CUDAENV" verify 11.8 --json
    [ "$status" -eq 8 ]
    [ "$(j 'st["loader"]["status"]')" = passed ]
    [ "$(j 'len(d["warnings"]) >= 1')" = true ]
    [[ "$(j 'd["warnings"][0]')" == *"LD_LIBRARY_PATH puts $T/old/lib64 before 11.8.0+cudnn8.7.0.84"*"libcudart.so.11.0"*"$T/old/lib64/libcudart.so.11.2.89"*"cudaenv exec 11.8.0+cudnn8.7.0.84"* ]]
    LD_LIBRARY_PATH=$T/old/lib64:$P/lib64 run --separate-stderr "$CUDAENV" verify 11.8
    [ "$status" -eq 8 ]
    [[ "$output" == *"warning: this shell's LD_LIBRARY_PATH puts $T/old/lib64 before"* ]]
    # the check runs in a process started in the toolchain's environment, once: the
    # dynamic loader reads LD_LIBRARY_PATH at start, and what cuDNN or cuBLAS dlopen by
    # soname later follows that (seen on the H200: libcublasLt from the shell's toolchain)
    LD_LIBRARY_PATH=$T/old/lib64:$P/lib64 strace -f -qq -v -s 8192 -e trace=execve -o "$T/ex" \
        "$CUDAENV" verify 11.8 --json >/dev/null 2>&1 || true
    [ "$(grep -c 'execve("[^"]*/cudaenv-full"' "$T/ex")" -eq 1 ]
    grep 'execve("[^"]*/cudaenv-full"' "$T/ex" | grep -q "\"LD_LIBRARY_PATH=$P/lib64[:\"]"
    # the toolchain first: no shadow, no warning
    LD_LIBRARY_PATH=$P/lib64:$T/old/lib64 run --separate-stderr "$CUDAENV" verify 11.8 --json
    [ "$status" -eq 8 ]
    [ "$(j 'st["loader"]["status"]')" = passed ]
    [ "$(j 'd["warnings"]')" = "[]" ]
}

@test "verify each installed toolchain in turn while another is active in the shell: all pass" {
    good_118
    P117=$(fx_installed 11.7.0); fx_receipt "$P117"
    eval "$("$CUDAENV" env 11.7 --shell bash)"
    [ "$LD_LIBRARY_PATH" = "$P117/lib64" ]
    for v in 11.8 11.7; do
        verify_json "$v"
        [ "$status" -eq 8 ] || { echo "$v: $output"; false; }
        [ "$(j 'st["loader"]["status"]')" = passed ]
    done
}

@test "fake driver: everything passes on a toolchain without nvcc and cuDNN, exit 0" {
    P=$(fx_installed 12.3.0)
    rm "$P/bin/nvcc"
    fake_gpu "$P"
    verify_json 12.3
    [ "$status" -eq 0 ]
    for s in files versions loader driver device kernel; do [ "$(j "st['$s']['status']")" = passed ]; done
    [ "$(j 'st["nvcc"]["status"]')" = skipped ]
    [ "$(j 'st["nvcc"]["no_gpu"]')" = false ]
    [ "$(j 'st["cudnn"]["summary"]')" = "this toolchain has no cuDNN" ]
    [ "$(j 'd["devices"][0]["name"]')" = "cudaenv fake GPU" ]
    [ "$(j 'd["devices"][0]["compute_capability"]')" = 9.0 ]
    [ "$(j 'd["devices"][0]["supported"]')" = true ]
    [ "$(j 'd["versions"]["driver"]["release"]')" = 580.65.06 ]
    [ "$(j 'd["versions"]["driver"]["cuda"]')" = 13000 ]
    [[ "$(j 'st["kernel"]["evidence"]')" == *"PTX: loaded"*"all match the CPU reference"* ]]
    [[ "$(j 'st["kernel"]["evidence"]')" == *"cubin: loaded"* ]]
    [[ "$(j 'st["driver"]["evidence"]')" == *"$T/drv/libcuda.so.1 -> $T/drv/libcuda.so.580.65.06"* ]]
}

@test "fake driver: no device is exit 8 with the reason" {
    P=$(fx_installed 12.3.0)
    fake_gpu "$P"
    FAKE_CUDA_DEVICES=0 run --separate-stderr "$CUDAENV" verify 12.3 --json
    [ "$status" -eq 8 ]
    [ "$(j 'st["driver"]["status"]')" = passed ]
    [ "$(j 'st["device"]["status"]')" = skipped ]
    [[ "$(j 'st["device"]["summary"]')" == *"CUDA_ERROR_NO_DEVICE"* ]]
    [ "$(j 'st["kernel"]["no_gpu"]')" = true ]
}

@test "fake driver older than the runtime's major family: driver failed, says which driver is needed, exit 7" {
    # (a CUDA 11.4 driver, 470, would run 11.8 through minor-version compatibility: see below)
    good_118
    fake_gpu "$P" 440.33.01
    FAKE_CUDA_DRIVER_VERSION=10020 run --separate-stderr "$CUDAENV" verify 11.8 --json
    [ "$status" -eq 7 ]
    [ "$(j 'st["driver"]["status"]')" = failed ]
    s=$(j 'st["driver"]["summary"]')
    [[ "$s" == *"supports CUDA up to 10.2 but this toolkit's runtime is CUDA 11.8"*"too old"*"NVIDIA driver 520.61.05 or newer"* ]]
    [ "$(j 'st["kernel"]["status"]')" = skipped ]
    [ "$(j 'st["kernel"]["no_gpu"]')" = false ]
}

@test "fake driver below the toolkit's min_driver but above the family floor: minor-version compatibility, a warning" {
    good_118
    fake_gpu "$P" 515.43.04
    FAKE_CUDA_DRIVER_VERSION=11070 run --separate-stderr "$CUDAENV" verify 11.8 --json
    # (this fixture's nvcc and cuDNN are stand-ins that fail their own steps)
    [ "$(j 'st["driver"]["status"]')" = passed ]
    [[ "$(j 'st["driver"]["summary"]')" == *"runs runtime 11.8 in minor-version compatibility mode (520.61.05 for full support)"* ]]
    [ "$(j 'st["kernel"]["status"]')" = passed ]
    [[ "$(j 'st["driver"]["evidence"]')" == *"driver 515.43.04 is older than 520.61.05, the minimum for CUDA 11.8.0"*"minor-version compatibility mode (CUDA 11.x minor-version compatibility needs >= 450.80.02)"* ]]
    [[ "$(j '"\n".join(d["warnings"])')" == *"driver 515.43.04 runs CUDA 11.8.0 only in minor-version compatibility mode"*"NVIDIA driver 520.61.05 or newer"* ]]
    # PTX ISA 7.8 (CUDA 11.8) does not JIT on an 11.7 driver; the cubin needs no JIT
    [[ "$(j 'st["kernel"]["evidence"]')" == *"PTX: not loadable by this driver (CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)"* ]]
    [[ "$(j 'st["kernel"]["evidence"]')" == *"cubin: loaded"*"all match the CPU reference"* ]]
    [[ "$(j 'st["kernel"]["summary"]')" == *"(PTX not JIT-compiled: minor-version compatibility)"* ]]
}

@test "fake driver below the family's minor-version floor: driver failed, exit 7" {
    good_118
    fake_gpu "$P" 450.51.06
    FAKE_CUDA_DRIVER_VERSION=11000 run --separate-stderr "$CUDAENV" verify 11.8 --json
    [ "$status" -eq 7 ]
    [[ "$(j 'st["driver"]["summary"]')" == *"supports CUDA up to 11.0 but this toolkit's runtime is CUDA 11.8"*"too old"* ]]
}

@test "the release's own floor (receipt min_driver_compat) decides minor-version compatibility" {
    good_118
    fake_gpu "$P" 515.43.04
    python3 - "$P/.cudaenv-receipt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); r["min_driver_compat"] = "516.01"; json.dump(r, open(sys.argv[1], "w"))
PY
    FAKE_CUDA_DRIVER_VERSION=11070 run --separate-stderr "$CUDAENV" verify 11.8 --json
    [ "$status" -eq 7 ]
    [ "$(j 'st["driver"]["status"]')" = failed ]
}

@test "a 12.2 driver runs a 12.3 toolchain in minor-version compatibility: verify passes (exit 0) with the warning" {
    P=$(fx_installed 12.3.0)
    rm "$P/bin/nvcc"
    fake_gpu "$P" 535.104.05
    fx_receipt "$P" 545.23.06 12 5.0 9.0
    # an 12.2 driver: PTX 8.3 needs JIT it cannot do; the cubin runs
    FAKE_CUDA_DRIVER_VERSION=12020 run --separate-stderr "$CUDAENV" verify 12.3 --json
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ "$(j 'st["kernel"]["status"]')" = passed ]
    [[ "$(j 'st["kernel"]["evidence"]')" == *"PTX: not loadable"* ]]
    [ "$(j 'len(d["warnings"])')" = 1 ]
    # a 12.3 driver JITs PTX 8.3: the PTX runs too
    FAKE_CUDA_DRIVER_VERSION=12030 run --separate-stderr "$CUDAENV" verify 12.3 --json
    [ "$status" -eq 0 ]
    [[ "$(j 'st["kernel"]["evidence"]')" == *"PTX: loaded"* ]]
}

@test "fake driver: a launch failure is named, exit 7" {
    P=$(fx_installed 12.3.0)
    fake_gpu "$P"
    FAKE_CUDA_LAUNCH=fail run --separate-stderr "$CUDAENV" verify 12.3 --json
    [ "$status" -eq 7 ]
    [ "$(j 'st["kernel"]["status"]')" = failed ]
    [[ "$(j 'st["kernel"]["summary"]')" == *"launching the PTX kernel failed: CUDA_ERROR_LAUNCH_FAILED (719)"* ]]
}

@test "fake driver: a kernel that writes nothing fails on the poisoned output" {
    P=$(fx_installed 12.3.0)
    fake_gpu "$P"
    FAKE_CUDA_LAUNCH=noop run --separate-stderr "$CUDAENV" verify 12.3 --json
    [ "$status" -eq 7 ]
    [[ "$(j 'st["kernel"]["summary"]')" == *"1048583 of 1048583 outputs not written (still poisoned)"* ]]
}

@test "fake driver: a module load failure is named, exit 7" {
    P=$(fx_installed 12.3.0)
    fake_gpu "$P"
    FAKE_CUDA_MODULE_LOAD=fail run --separate-stderr "$CUDAENV" verify 12.3 --json
    [ "$status" -eq 7 ]
    [[ "$(j 'st["kernel"]["summary"]')" == *"loading the PTX failed: CUDA_ERROR_INVALID_PTX"* ]]
}

@test "fake driver: a GPU outside the toolkit's sm range fails the device step" {
    good_118
    fake_gpu "$P"
    FAKE_CUDA_CC=3.0 run --separate-stderr "$CUDAENV" verify 11.8 --json
    [ "$status" -eq 7 ]
    [[ "$(j 'st["device"]["summary"]')" == *"sm_30 is older than CUDA 11.8.0 supports (sm 3.5 to 9.0)"* ]]
    [ "$(j 'd["devices"][0]["supported"]')" = false ]
}

@test "--all-devices lists every GPU" {
    P=$(fx_installed 12.3.0)
    rm "$P/bin/nvcc"
    fake_gpu "$P"
    FAKE_CUDA_DEVICES=3 run --separate-stderr "$CUDAENV" verify 12.3 --json --all-devices
    [ "$status" -eq 0 ]
    [ "$(j 'len(d["devices"])')" = 3 ]
    FAKE_CUDA_DEVICES=3 run --separate-stderr "$CUDAENV" verify 12.3 --json
    [ "$(j 'len(d["devices"])')" = 1 ]
}

@test "NVCC_CCBIN: verify and doctor name the same host compiler (one function, core/hostcc.c)" {
    P=$(fx_installed 12.3.0)
    fake_gpu "$P"                       # receipt: max_gcc 11
    mkdir -p "$T/ccbin"
    printf '#!/bin/sh\necho 99.1.0\n' > "$T/ccbin/g++-99"; chmod +x "$T/ccbin/g++-99"
    printf '#!/bin/sh\necho 7\n' > "$T/ccbin/g++"; chmod +x "$T/ccbin/g++"   # g++ on PATH is not what nvcc uses
    export NVCC_CCBIN=$T/ccbin/g++-99 PATH=$T/ccbin:$PATH CUDAENV_VERSION=12.3.0
    verify_json 12.3
    [[ "$(j 'st["nvcc"]["evidence"]')" == *"host compiler: $T/ccbin/g++-99 (gcc 99); CUDA 12.3.0 accepts gcc up to 11"* ]]
    run --separate-stderr "$CUDAENV" doctor --json
    ev=$(python3 -c 'import json, sys
print([f["evidence"] for f in json.load(sys.stdin)["findings"] if f["code"] == "compat.gcc-too-new"][0])' <<<"$output")
    [[ "$ev" == "$T/ccbin/g++-99 -dumpfullversion: 99.1.0;"* ]]
}

@test "usage errors exit 2" {
    run "$CUDAENV" verify --frob
    [ "$status" -eq 2 ]
    run "$CUDAENV" verify 11.8 12.3
    [ "$status" -eq 2 ]
}
