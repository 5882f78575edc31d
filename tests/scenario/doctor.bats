#!/usr/bin/env bats
# cudaenv doctor: every finding in a fixture machine that produces exactly
# that finding, a healthy machine that produces none, the JSON field by
# field, and a real run on this CI machine.
#
# The fake machine lives under $CUDAENV_SYSROOT: sysfs PCI entries, a
# /proc/driver/nvidia/version, /dev nodes as plain files (the machine seam
# accepts any file as a node under a sysroot), and the driver libraries as
# test doubles (tests/doubles/nvml.c, tests/doubles/libcuda.c) built here
# and loaded through CUDAENV_TEST_LIBDIR.
load ../lib/common
bats_require_minimum_version 1.5.0

setup_file() {
    export DR_DOUBLES=$BATS_FILE_TMPDIR/doubles
    mkdir -p "$DR_DOUBLES"
    cc -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 -o "$DR_DOUBLES/libnvidia-ml.so" "$TESTS_DIR/doubles/nvml.c"
    cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$DR_DOUBLES/libcuda.so" "$TESTS_DIR/doubles/libcuda.c" -lm
    # one healthy toolchain, copied into each test's root (cc is the slow part)
    local keep_t=${T:-}
    T=$BATS_FILE_TMPDIR/tc; CUDAENV_ROOT=$T/root; mkdir -p "$T"
    fx_installed 12.4.0 9.1.0.70 >/dev/null
    fx_toolkit "$BATS_FILE_TMPDIR/cuda-12.3" 12.3.0
    fx_toolkit "$BATS_FILE_TMPDIR/cuda-11.8" 11.8.0
    fx_cudnn "$BATS_FILE_TMPDIR/cudnn-9.0" 9.0.0.312 12
    T=$keep_t
}

setup() {
    common_setup
    unset CUDA_VISIBLE_DEVICES CUDA_HOME CUDA_PATH NVCC_CCBIN KUBERNETES_SERVICE_HOST LD_LIBRARY_PATH \
          CUDAENV_TEST_LIBDIR FAKE_NVML_INIT FAKE_NVML_GPUS FAKE_CUDA_INIT FAKE_CUDA_DEVICES
    S=$CUDAENV_SYSROOT
}
teardown() { common_teardown; }

# dr_driver RELEASE CUDA_VERSION: the kernel module, NVML and libcuda of one driver release.
dr_driver() {
    local rel=$1 cv=$2 lib=$S/usr/lib/x86_64-linux-gnu
    mkdir -p "$S/proc/driver/nvidia" "$lib"
    echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  $rel  Thu Feb 22 01:44:30 UTC 2024" \
        > "$S/proc/driver/nvidia/version"
    rm -f "$lib"/libcuda.so* "$lib"/libnvidia-ml.so*
    cp "$DR_DOUBLES/libcuda.so" "$lib/libcuda.so.$rel"; ln -sf "libcuda.so.$rel" "$lib/libcuda.so.1"
    cp "$DR_DOUBLES/libnvidia-ml.so" "$lib/libnvidia-ml.so.$rel"; ln -sf "libnvidia-ml.so.$rel" "$lib/libnvidia-ml.so.1"
    export CUDAENV_TEST_LIBDIR=$lib FAKE_NVML_DRIVER=$rel FAKE_NVML_CUDA=$cv FAKE_CUDA_DRIVER_VERSION=$cv; seams_on
}

# dr_activate NAME [MIN_DRIVER MAX_GCC SM_MIN SM_MAX]: select an installed toolchain the way
# `cudaenv use` leaves a shell: CUDAENV_VERSION, bin first in PATH, lib64 in LD_LIBRARY_PATH, CUDA_HOME.
dr_activate() {
    local p=$CUDAENV_ROOT/versions/$1
    fx_receipt "$p" "${2:-550.54.14}" "${3:-13}" "${4:-5.0}" "${5:-9.0}"
    export CUDAENV_VERSION=$1 PATH="$p/bin:$T/bin:/usr/bin:/bin" LD_LIBRARY_PATH=$p/lib64 CUDA_HOME=$p
    P=$p
}

# A healthy machine: one H100 (sm_90) on a full x16 Gen5 link, driver 550.54.14 (CUDA 12.4),
# toolchain 12.4.0 + cuDNN 9.1 active, gcc 12.
dr_machine() {
    local pci=$S/sys/bus/pci/devices/0000:17:00.0
    mkdir -p "$pci" "$S/dev" "$S/proc/sys/kernel" "$S/proc/1" "$S/etc" "$T/bin" "$CUDAENV_ROOT/versions"
    echo 0x10de > "$pci/vendor"; echo 0x030200 > "$pci/class"
    echo 16 > "$pci/current_link_width"; echo 16 > "$pci/max_link_width"
    echo "32.0 GT/s PCIe" > "$pci/current_link_speed"; echo "32.0 GT/s PCIe" > "$pci/max_link_speed"
    touch "$S/dev/nvidiactl" "$S/dev/nvidia0" "$S/dev/nvidia-uvm"
    echo "6.8.0-31-generic" > "$S/proc/sys/kernel/osrelease"
    echo "0::/init.scope" > "$S/proc/1/cgroup"
    dr_driver 550.54.14 12040
    export FAKE_NVML_GPUS="NVIDIA H100 80GB HBM3,9.0,81559,512,0000:17:00.0,0,,0x1,0" FAKE_CUDA_CC=9.0
    printf '#!/bin/sh\necho 12.3.0\n' > "$T/bin/gcc"; chmod +x "$T/bin/gcc"
    cp -a "$BATS_FILE_TMPDIR/tc/root/versions/." "$CUDAENV_ROOT/versions/"
    dr_activate 12.4.0+cudnn9.1.0.70
}

# Run doctor --json; CODES gets the finding codes in order, space-separated.
dr_run() {
    status=0
    "$CUDAENV" doctor --json > "$T/out.json" 2> "$T/err" || status=$?
    output=$(cat "$T/out.json")
    CODES=$(python3 -c 'import json,sys; print(" ".join(f["code"] for f in json.load(open(sys.argv[1]))["findings"]))' "$T/out.json")
}

# expect_only CODE [EXIT]: doctor reports exactly CODE and exits EXIT (7 for errors).
expect_only() {
    dr_run
    [ "$CODES" = "$1" ] || { echo "want: $1"; echo "got:  $CODES"; cat "$T/out.json" "$T/err"; return 1; }
    [ "$status" -eq "${2:-7}" ] || { echo "exit $status, want ${2:-7}"; return 1; }
}

@test "a healthy machine has no findings (exit 0) and says so" {
    dr_machine
    expect_only "" 0
    run "$CUDAENV" doctor
    [ "$status" -eq 0 ]
    [[ "$output" == *"0 errors, 0 warnings, 0 info: nothing wrong found"* ]]
    [[ "$output" == *"GPU 0: NVIDIA H100 80GB HBM3, sm_90, 79.6 GiB (512.0 MiB in use)"* ]]
    [[ "$output" == *"driver 550.54.14 (CUDA 12.4)"* ]]
    [[ "$output" != *$'\033'* ]]
}

@test "JSON: findings and summary field by field" {
    dr_machine
    rm -f "$S/dev/nvidia-uvm"
    export CUDA_HOME=$T/nowhere
    dr_run
    [ "$status" -eq 7 ]
    python3 - "$T/out.json" "$P" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"findings", "summary"}, d.keys()
f = d["findings"]
assert [x["code"] for x in f] == ["driver.uvm-missing", "env.cuda-home-mismatch"], f
for x in f:
    assert set(x) == {"code", "layer", "severity", "summary", "evidence", "fix"}, x
    assert all(isinstance(x[k], str) and x[k] for k in x), x
u, h = f
assert u["layer"] == "driver" and u["severity"] == "error"
assert "/dev/nvidia-uvm does not exist" in u["evidence"] and "550.54.14" in u["evidence"]
assert u["fix"] == "sudo modprobe nvidia-uvm && sudo nvidia-modprobe -c=0 -u"
assert h["layer"] == "env" and h["severity"] == "warning"
assert "does not exist" in h["evidence"] and sys.argv[2] in h["fix"]
s = d["summary"]
assert s["errors"] == 1 and s["warnings"] == 1 and s["info"] == 0 and s["ok"] is False
assert s["driver"] == "550.54.14" and s["driver_cuda"] == "12.4" and s["pci_devices"] == 1
g = s["gpus"][0]
assert g == {"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-00000000-0000-0000-0000-000000000000",
             "compute_capability": "9.0", "memory_total_mib": 81559, "memory_used_mib": 512, "mig": False}, g
assert s["container"] is None and s["wsl"] is False
a = s["active"]
assert a["name"] == "12.4.0+cudnn9.1.0.70" and a["origin"] == "shell" and a["cuda"] == "12.4.0"
assert a["cudnn"] == "9.1.0.70" and a["prefix"] == sys.argv[2]
assert 0 <= s["elapsed_ms"] < 1000
PY
}

# ---- GPU and driver ----

@test "gpu.no-device: no NVIDIA PCI device, no module, no nodes" {
    dr_machine
    rm -rf "$S/sys/bus/pci/devices/0000:17:00.0" "$S/proc/driver" "$S"/dev/nvidia*
    export CUDAENV_TEST_LIBDIR=$T/empty; mkdir -p "$T/empty"; seams_on
    expect_only gpu.no-device
}

@test "driver.module-not-loaded: a GPU on the bus without /proc/driver/nvidia" {
    dr_machine
    rm -rf "$S/proc/driver" "$S"/dev/nvidia*
    export FAKE_NVML_INIT=9
    expect_only driver.module-not-loaded
    [[ "$output" == *"sudo modprobe nvidia"* ]]
}

@test "driver.device-nodes-missing: module loaded, /dev/nvidiactl and /dev/nvidia0 missing" {
    dr_machine
    rm -f "$S/dev/nvidiactl" "$S/dev/nvidia0"
    expect_only driver.device-nodes-missing
}

@test "driver.uvm-missing: /dev/nvidia-uvm missing" {
    dr_machine
    rm -f "$S/dev/nvidia-uvm"
    expect_only driver.uvm-missing
}

@test "driver.nvml-missing: libnvidia-ml.so.1 cannot be loaded" {
    dr_machine
    rm -f "$CUDAENV_TEST_LIBDIR"/libnvidia-ml.so*
    expect_only driver.nvml-missing
    [[ "$output" == *"libnvidia-compute-550"* ]]
}

@test "driver.libcuda-missing: libcuda.so.1 cannot be loaded" {
    dr_machine
    rm -f "$CUDAENV_TEST_LIBDIR"/libcuda.so*
    expect_only driver.libcuda-missing
}

@test "driver.version-mismatch: NVML reports a kernel module / library mismatch" {
    dr_machine
    export FAKE_NVML_INIT=18
    expect_only driver.version-mismatch
    [[ "$output" == *reboot* ]]
}

@test "driver.nvml-error: NVML fails for another reason" {
    dr_machine
    export FAKE_NVML_INIT=999
    expect_only driver.nvml-error
}

@test "driver.cuinit-failed: cuInit fails with the nodes in place" {
    dr_machine
    export FAKE_CUDA_INIT=999
    expect_only driver.cuinit-failed
}

@test "gpu.memory-busy: almost all GPU memory in use" {
    dr_machine
    export FAKE_NVML_GPUS="NVIDIA H100 80GB HBM3,9.0,81559,80000,0000:17:00.0,0,,0x1,0"
    expect_only gpu.memory-busy 0
}

# ---- driver vs toolkit ----

@test "driver.too-old: driver 470 (CUDA 11.4) for CUDA 12.4, named with the required driver" {
    dr_machine
    dr_driver 470.82.01 11040
    expect_only driver.too-old
    [[ "$output" == *">= 550.54.14"* ]]
    [[ "$output" == *"cuda-compat-12-4"* ]]   # H100 is a data-center GPU
}

@test "driver.minor-compat: driver 535 runs CUDA 12.4 in minor-version compatibility (warning)" {
    dr_machine
    dr_driver 535.104.05 12020
    expect_only driver.minor-compat 0
}

# ---- libraries the loader picks ----

@test "libs.cudart-shadowed: another toolkit's libcudart.so.12 first in LD_LIBRARY_PATH" {
    dr_machine
    export LD_LIBRARY_PATH=$BATS_FILE_TMPDIR/cuda-12.3/lib64:$P/lib64
    expect_only libs.cudart-shadowed
    [[ "$output" == *"cuda-12.3/lib64/libcudart.so.12 (version 12.3.89) via LD_LIBRARY_PATH"* ]] || { echo "$output"; false; }
}

@test "libs.cudart-not-found: the active toolchain's lib64 is not on the loader path" {
    dr_machine
    fx_installed 12.4.0 >/dev/null
    dr_activate 12.4.0
    unset LD_LIBRARY_PATH
    expect_only libs.cudart-not-found
}

@test "libs.cudnn-shadowed: another cuDNN 9 first in LD_LIBRARY_PATH" {
    dr_machine
    export LD_LIBRARY_PATH=$BATS_FILE_TMPDIR/cudnn-9.0/lib:$P/lib64
    expect_only libs.cudnn-shadowed
}

@test "libs.nccl-missing: two GPUs, and the active toolchain has no NCCL (warning naming a foreign one)" {
    dr_machine
    # one GPU: nothing to say about collectives
    expect_only "" 0
    export FAKE_NVML_GPUS="NVIDIA H100 80GB HBM3,9.0,81559,512,0000:17:00.0,0,,0x1,0;NVIDIA H100 80GB HBM3,9.0,81559,512,0000:18:00.0,0,,0x1,0"
    expect_only libs.nccl-missing 0
    [[ "$output" == *"--components +nccl"* ]]
    mkdir -p "$T/pipnccl"
    cc -shared -fPIC -Wl,-soname,libnccl.so.2 -o "$T/pipnccl/libnccl.so.2" "$TESTS_DIR/doubles/nccl.c"
    export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$T/pipnccl
    expect_only libs.nccl-missing 0
    [[ "$output" == *"the loader finds a foreign one: $T/pipnccl/libnccl.so.2"* ]]
}

@test "libs.nccl-shadowed: the toolchain's NCCL, and another libnccl.so.2 first in LD_LIBRARY_PATH" {
    dr_machine
    mkdir -p "$T/pipnccl"
    cc -shared -fPIC -Wl,-soname,libnccl.so.2 -o "$T/pipnccl/libnccl.so.2" "$TESTS_DIR/doubles/nccl.c"
    cp "$T/pipnccl/libnccl.so.2" "$P/lib64/libnccl.so.2.21.5"
    ln -s libnccl.so.2.21.5 "$P/lib64/libnccl.so.2"
    expect_only "" 0
    export LD_LIBRARY_PATH=$T/pipnccl:$LD_LIBRARY_PATH
    expect_only libs.nccl-shadowed
    [[ "$output" == *"$T/pipnccl/libnccl.so.2"* ]]
}

@test "libs.cudnn-not-found: cuDNN copied to lib/ while only lib64 is on the path" {
    dr_machine
    mkdir -p "$P/lib"; mv "$P"/lib64/libcudnn* "$P/lib/"
    expect_only libs.cudnn-not-found
}

@test "libs.cudart-header-mismatch: cuda_runtime_api.h says 12.3, the library is 12.4" {
    dr_machine
    sed -i 's/CUDART_VERSION 12040/CUDART_VERSION 12030/' "$P/include/cuda_runtime_api.h"
    expect_only libs.cudart-header-mismatch
}

@test "libs.cudnn-header-mismatch: cudnn_version.h says 9.0.0, the library is 9.1.0" {
    dr_machine
    sed -i 's/CUDNN_MINOR 1/CUDNN_MINOR 0/' "$P/include/cudnn_version.h"
    expect_only libs.cudnn-header-mismatch
}

@test "libs.cudnn-split-missing: cuDNN 9 without libcudnn_graph" {
    dr_machine
    rm -f "$P"/lib64/libcudnn_graph.so*
    expect_only libs.cudnn-split-missing
    [[ "$output" == *"libcudnn_graph.so.9 is missing"* ]]
}

@test "libs.cudnn-split-mixed: cuDNN 8's ops_infer comes from another copy" {
    dr_machine
    fx_installed 11.8.0 8.7.0.84 >/dev/null
    dr_activate 11.8.0+cudnn8.7.0.84 520.61.05 13 3.5 9.0
    fx_cudnn "$T/cudnn86" 8.6.0.163 11
    mkdir -p "$T/other8"; cp -a "$T"/cudnn86/lib/libcudnn_ops_infer.so* "$T/other8/"
    export LD_LIBRARY_PATH=$T/other8:$P/lib64
    expect_only libs.cudnn-split-mixed
}

@test "libs.libcuda-stub: the toolkit's stubs directory on LD_LIBRARY_PATH" {
    dr_machine
    mkdir -p "$P/lib64/stubs"; cp "$DR_DOUBLES/libcuda.so" "$P/lib64/stubs/libcuda.so"
    export LD_LIBRARY_PATH=$P/lib64:$P/lib64/stubs
    expect_only libs.libcuda-stub
}

@test "libs.libcuda-mismatch: a stray libcuda.so.1 of another driver first in LD_LIBRARY_PATH" {
    dr_machine
    mkdir -p "$T/stray"; cp "$DR_DOUBLES/libcuda.so" "$T/stray/libcuda.so.535.104.05"
    ln -s libcuda.so.535.104.05 "$T/stray/libcuda.so.1"
    export LD_LIBRARY_PATH=$T/stray:$P/lib64
    expect_only libs.libcuda-mismatch
}

@test "driver.forward-compat (info): libcuda from a cuda-compat directory" {
    dr_machine
    mkdir -p "$T/cuda-12.6/compat"; cp "$DR_DOUBLES/libcuda.so" "$T/cuda-12.6/compat/libcuda.so.560.28.03"
    ln -s libcuda.so.560.28.03 "$T/cuda-12.6/compat/libcuda.so.1"
    export LD_LIBRARY_PATH=$T/cuda-12.6/compat:$P/lib64
    expect_only driver.forward-compat 0
    python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["findings"][0]; assert f["severity"]=="info", f' "$T/out.json"
}

@test "the loader reads the sysroot's ld.so.cache (glibc-ld.so.cache1.1), not just ld.so.conf" {
    [ "$(id -u)" -eq 0 ] || skip "ldconfig -r needs root"
    dr_machine
    fx_installed 12.4.0 >/dev/null
    dr_activate 12.4.0
    unset LD_LIBRARY_PATH
    cp -a "$BATS_FILE_TMPDIR/cuda-12.3" "$S/opt-cuda-12.3"
    mkdir -p "$S/etc/ld.so.conf.d"
    echo /opt-cuda-12.3/lib64 > "$S/etc/ld.so.conf"
    /sbin/ldconfig -r "$S"
    [ -s "$S/etc/ld.so.cache" ]
    echo /nowhere > "$S/etc/ld.so.conf"     # stale conf: only the cache counts
    expect_only "libs.cudart-shadowed"
    [[ "$output" == *"/opt-cuda-12.3/lib64/libcudart.so.12 (version 12.3.89) via $S/etc/ld.so.cache"* ]] || { echo "$output"; false; }
}

# ---- environment ----

@test "env.nvcc-not-active: the nvcc on PATH belongs to another toolkit" {
    dr_machine
    export PATH="$BATS_FILE_TMPDIR/cuda-12.3/bin:$T/bin:/usr/bin:/bin"
    expect_only env.nvcc-not-active 0
}

@test "env.path-multiple-cuda: two toolkits on PATH" {
    dr_machine
    export PATH="$P/bin:$BATS_FILE_TMPDIR/cuda-12.3/bin:$T/bin:/usr/bin:/bin"
    expect_only env.path-multiple-cuda 0
}

@test "env.path-multiple-cuda: a general directory holding an nvcc link (/usr/local/bin) is never named for removal" {
    dr_machine
    mkdir -p "$T/ulb"; ln -s "$BATS_FILE_TMPDIR/cuda-12.3/bin/nvcc" "$T/ulb/nvcc"
    export PATH="$P/bin:$T/ulb:$BATS_FILE_TMPDIR/cuda-11.8/bin:$T/bin:/usr/bin:/bin"
    expect_only env.path-multiple-cuda 0
    fix=$(python3 -c 'import json,sys; print([f for f in json.load(open(sys.argv[1]))["findings"] if f["code"] == "env.path-multiple-cuda"][0]["fix"])' "$T/out.json")
    [[ "$fix" == "remove the other toolkits' bin directories ($BATS_FILE_TMPDIR/cuda-11.8/bin) from"*"leave $T/ulb in PATH: it holds other programs too"* ]] || { echo "$fix"; false; }
}

@test "env.ldpath-foreign-cuda: CUDA 11.8's lib64 in LD_LIBRARY_PATH next to the active 12.4" {
    dr_machine
    export LD_LIBRARY_PATH=$P/lib64:$BATS_FILE_TMPDIR/cuda-11.8/lib64
    expect_only env.ldpath-foreign-cuda 0
    [[ "$output" == *"cuda-11.8/lib64 (CUDA 11.8)"* ]]
}

@test "env.ldpath-multiple-cuda: nothing selected, two toolkits in LD_LIBRARY_PATH" {
    dr_machine
    unset CUDAENV_VERSION CUDA_HOME
    export PATH="$T/bin:/usr/bin:/bin"
    export LD_LIBRARY_PATH=$BATS_FILE_TMPDIR/cuda-12.3/lib64:$BATS_FILE_TMPDIR/cuda-11.8/lib64
    expect_only env.ldpath-multiple-cuda 0
}

@test "env.cuda-link-dangling: /usr/local/cuda points to a removed toolkit" {
    dr_machine
    mkdir -p "$S/usr/local"; ln -s /usr/local/cuda-99.9 "$S/usr/local/cuda"
    expect_only env.cuda-link-dangling
}

@test "env.cuda-link-directory: /usr/local/cuda is a real directory" {
    dr_machine
    mkdir -p "$S/usr/local/cuda/bin"
    expect_only env.cuda-link-directory 0
}

@test "env.cuda-link-moved: another installer moved the link cudaenv's system switch set" {
    dr_machine
    mkdir -p "$S/usr/local/cuda-12.4" "$S/usr/local/cuda-12.3" "$S/etc/cudaenv"
    ln -s /usr/local/cuda-12.3 "$S/usr/local/cuda"
    echo '{"mode":"link","name":"12.4.0+cudnn9.1.0.70","target":"/usr/local/cuda-12.4","lib":"/usr/local/cuda-12.4/lib64"}' \
        > "$S/etc/cudaenv/system.json"
    expect_only env.cuda-link-moved 0
    [[ "$output" == *"sudo cudaenv global 12.4.0+cudnn9.1.0.70 --system"* ]]
}

@test "env.ldconf-other-cuda: ld.so.conf.d names CUDA 11.8's libraries" {
    dr_machine
    mkdir -p "$S/etc/ld.so.conf.d" "$S/usr/local"
    cp -a "$BATS_FILE_TMPDIR/cuda-11.8" "$S/usr/local/cuda-11.8"
    echo 'include /etc/ld.so.conf.d/*.conf' > "$S/etc/ld.so.conf"
    echo /usr/local/cuda-11.8/lib64 > "$S/etc/ld.so.conf.d/cuda-11-8.conf"
    expect_only env.ldconf-other-cuda 0
    [[ "$output" == *"/usr/local/cuda-11.8/lib64 in $S/etc/ld.so.conf.d/cuda-11-8.conf (CUDA 11.8)"* ]]
}

@test "env.cuda-visible-devices-hidden: CUDA_VISIBLE_DEVICES=-1" {
    dr_machine
    export CUDA_VISIBLE_DEVICES=-1 FAKE_CUDA_DEVICES=0
    expect_only env.cuda-visible-devices-hidden
}

@test "env.cuda-visible-devices-hidden: CUDA_VISIBLE_DEVICES set but empty" {
    dr_machine
    export CUDA_VISIBLE_DEVICES= FAKE_CUDA_DEVICES=0
    expect_only env.cuda-visible-devices-hidden
}

@test "env.cuda-visible-devices-invalid: index 3 on a one-GPU machine" {
    dr_machine
    export CUDA_VISIBLE_DEVICES=3
    expect_only env.cuda-visible-devices-invalid
}

@test "env.cuda-home-mismatch: CUDA_HOME names another toolkit" {
    dr_machine
    export CUDA_HOME=$BATS_FILE_TMPDIR/cuda-12.3
    expect_only env.cuda-home-mismatch 0
}

@test "env.selection-not-installed: CUDAENV_VERSION names a toolchain that is not installed" {
    dr_machine
    export CUDAENV_VERSION=11.7.0
    expect_only env.selection-not-installed
    [[ "$output" == *"cudaenv install 11.7.0"* ]]
}

# ---- compatibility ----

@test "compat.sm-unsupported: a Tesla K80 (sm_37) under CUDA 12.4 (sm_50+)" {
    dr_machine
    export FAKE_NVML_GPUS="Tesla K80,3.7,11441,0,0000:17:00.0,0,,0x1,0"
    expect_only compat.sm-unsupported
    [[ "$output" == *"CUDA 11.8 or older"* ]]
}

@test "compat.sm-too-new: a B200 (sm_100) under a toolkit that stops at sm_90 (warning)" {
    dr_machine
    export FAKE_NVML_GPUS="NVIDIA B200,10.0,183359,0,0000:17:00.0,0,,0x1,0"
    expect_only compat.sm-too-new 0
}

@test "compat.gcc-too-new: gcc 14 with a toolkit that accepts gcc <= 13" {
    dr_machine
    printf '#!/bin/sh\necho 14.1.0\n' > "$T/bin/gcc"
    expect_only compat.gcc-too-new 0
    [[ "$output" == *"NVCC_CCBIN=g++-13"* ]]
}

# dr_manifest: a manifest with TF 2.16 -> CUDA 12.4.0 (driver >= 550.54.14, gcc <= 13, sm 5.0-9.0) + cuDNN 9.1.
dr_manifest() {
    python3 - "$T/manifest.json" ${DR_COMPAT:+"$DR_COMPAT"} <<'PY'
import json, sys
h = "0" * 64
json.dump({"schema": 1, "updated": "2026-01-01",
  "tensorflow": {"2.16": {"cuda": "12.4.0", "cudnn": "9.1.0.70", "python": "3.9-3.12", "source": "test"}},
  "cuda": {"12.4.0": dict({"min_driver": "550.54.14", "max_gcc": 13, "sm": {"min": "5.0", "max": "9.0"},
     "runfile": {"linux-x86_64": {"url": "https://developer.download.nvidia.com/x.run", "sha256": h, "size": 1}}},
     **({"min_driver_compat": sys.argv[2]} if len(sys.argv) > 2 else {}))},
  "cudnn": {"9.1.0.70": {"cuda12": {"linux-x86_64": {"url": "https://developer.download.nvidia.com/c.tar.xz",
     "sha256": h, "size": 1}}}}}, open(sys.argv[1], "w"))
PY
    export CUDAENV_MANIFEST=$T/manifest.json
}

@test "compat.python-out-of-range: tf-2.16 selected, python3 is 3.13" {
    dr_machine
    dr_manifest
    export CUDAENV_VERSION=tf-2.16
    printf '#!/bin/sh\necho Python 3.13.1\n' > "$T/bin/python3"; chmod +x "$T/bin/python3"
    expect_only compat.python-out-of-range 0
    [[ "$output" == *"3.9-3.12"* ]]
    printf '#!/bin/sh\necho Python 3.12.4\n' > "$T/bin/python3"
    expect_only "" 0
}

@test "doctor's manifest facts come from the resolution index once it is current (the manifest not opened), the same findings without it" {
    command -v strace >/dev/null || skip "no strace"
    dr_machine
    dr_manifest
    export CUDAENV_VERSION=tf-2.16
    printf '#!/bin/sh\necho Python 3.13.1\n' > "$T/bin/python3"; chmod +x "$T/bin/python3"
    expect_only compat.python-out-of-range 0            # writes the index
    grep -qx 'tfpy 2.16 3.9-3.12' "$CUDAENV_ROOT/versions/.index"
    grep -qx 'row 12.4.0 550.54.14 - 13 5.0 9.0' "$CUDAENV_ROOT/versions/.index"
    ! opens_manifest doctor --json || false
    [[ "$(cat "$T/st")" == *"versions/.index"* ]]
    # the facts themselves from the index: an edited row is what doctor reports
    sed -i 's/^tfpy 2.16 .*/tfpy 2.16 3.9-3.13/' "$CUDAENV_ROOT/versions/.index"
    expect_only "" 0
    # without the index (a directory there: neither read nor rebuilt): the manifest, the same finding
    rm "$CUDAENV_ROOT/versions/.index" && mkdir "$CUDAENV_ROOT/versions/.index"
    expect_only compat.python-out-of-range 0
    [[ "$output" == *"3.9-3.12"* ]]
    opens_manifest doctor --json
}

# ---- install preflight (runs before any download; --offline stops right after it) ----

dr_install() {
    rm -rf "$CUDAENV_ROOT/versions/12.4.0"
    run --separate-stderr "$CUDAENV" install --offline --no-cudnn 12.4.0 "$@"
}

@test "preflight: a driver too old for the target CUDA refuses the install (exit 7) unless --force" {
    dr_machine
    dr_manifest
    dr_driver 470.82.01 11040
    dr_install
    [ "$status" -eq 7 ]
    [[ "$stderr" == *"CUDA 12.4.0 cannot run on this machine: CUDA 12.4.0 needs NVIDIA driver >= 550.54.14; this machine has 470.82.01 (supports CUDA 11.4)"* ]]
    [[ "$stderr" == *"--force"* ]]
    dr_install --force
    [ "$status" -ne 7 ]
    [[ "$stderr" == *"(--force: installing anyway)"* ]]
}

@test "preflight: a GPU older than the target CUDA supports refuses the install" {
    dr_machine
    dr_manifest
    export FAKE_NVML_GPUS="Tesla K80,3.7,11441,0,0000:17:00.0,0,,0x1,0"
    dr_install
    [ "$status" -eq 7 ]
    [[ "$stderr" == *"GPU 0 (Tesla K80) is sm_37, CUDA 12.4.0 supports sm_50 and newer: use CUDA 11.8 or older"* ]]
}

@test "preflight: minor-version compatibility and a too-new gcc are warnings, not refusals" {
    dr_machine
    dr_manifest
    dr_driver 535.104.05 12020
    printf '#!/bin/sh\necho 14.1.0\n' > "$T/bin/gcc"
    dr_install
    [ "$status" -ne 7 ]
    [[ "$stderr" == *"minor-version compatibility"* ]]
    [[ "$stderr" == *"host gcc 14.1.0"*"export NVCC_CCBIN=g++-13"* ]]
}

@test "preflight: the release's own minor-version floor (min_driver_compat) decides, not the family table" {
    dr_machine
    # 535 is above CUDA 12's family floor (525.60.13): compatibility mode, a warning
    DR_COMPAT=545.23.06 dr_manifest
    dr_driver 535.104.05 12020
    dr_install
    [ "$status" -eq 7 ]
    [[ "$stderr" == *"CUDA 12.4.0 needs NVIDIA driver >= 550.54.14; this machine has 535.104.05"* ]]
    dr_manifest
    dr_install
    [ "$status" -ne 7 ]
    [[ "$stderr" == *"minor-version compatibility mode (CUDA 12.x minor-version compatibility needs >= 525.60.13)"* ]]
}

@test "driver.too-old: a receipt's min_driver_compat is the floor doctor uses" {
    dr_machine
    dr_driver 535.104.05 12020
    expect_only driver.minor-compat 0
    python3 - "$P/.cudaenv-receipt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); r["min_driver_compat"] = "545.23.06"; json.dump(r, open(sys.argv[1], "w"))
PY
    expect_only driver.too-old
}

@test "preflight: no driver at all is a note, and the install goes on" {
    dr_machine
    dr_manifest
    rm -rf "$S/sys/bus/pci/devices/0000:17:00.0" "$S/proc/driver" "$S"/dev/nvidia*
    export CUDAENV_TEST_LIBDIR=$T/empty; mkdir -p "$T/empty"; seams_on
    dr_install
    [ "$status" -ne 7 ]
    [[ "$stderr" == *"no NVIDIA driver found: installing CUDA 12.4.0 anyway"* ]]
}

# ---- planning: runs here / there (info, list-remote), --driver for the compute nodes ----

@test "info and list-remote cuda judge each release against this machine's driver and GPUs" {
    dr_machine
    dr_manifest
    run --separate-stderr "$CUDAENV" info 12.4.0 --no-cudnn
    [ "$status" -eq 0 ]
    [[ "$output" == *"runs here   yes: driver 550.54.14 >= 550.54.14 (this machine's driver 550.54.14, GPU 0 NVIDIA H100 80GB HBM3 (sm_90))"* ]] || { echo "$output"; false; }
    run --separate-stderr "$CUDAENV" info 12.4.0 --no-cudnn --json
    python3 - "$output" <<'PY'
import json, sys
t = json.loads(sys.argv[1])["cuda"]["target"]
assert t["runs"] == "yes" and t["driver"] == "550.54.14" and t["driver_from"] == "this machine", t
assert t["gpus"] == [{"name": "NVIDIA H100 80GB HBM3", "sm": "9.0"}], t
PY
    # a GPU older than the release: the "no kernel image" class, named before any download
    export FAKE_NVML_GPUS="Tesla K80,3.7,11441,0,0000:17:00.0,0,,0x1,0"
    run --separate-stderr "$CUDAENV" info 12.4.0 --no-cudnn
    [[ "$output" == *"runs here   no, the GPU is too old: GPU 0 (Tesla K80) is sm_37; CUDA 12.4.0 supports sm_50 and newer"* ]] || { echo "$output"; false; }
    run --separate-stderr "$CUDAENV" list-remote cuda
    [[ "${lines[0]}" == "HERE: for this machine's driver 550.54.14, GPU 0 Tesla K80 (sm_37)" ]] || { echo "$output"; false; }
    [[ "$output" == *"12.4.0     550.54.14    13       5.0-9.0       gpu     "* ]] || { echo "$output"; false; }
    # a GPU newer than the release targets: PTX JIT only
    export FAKE_NVML_GPUS="NVIDIA B200,10.0,183359,512,0000:17:00.0,0,,0x1,0"
    run --separate-stderr "$CUDAENV" list-remote cuda --json
    python3 -c 'import json,sys; assert json.loads(sys.argv[1])["cuda"][0]["runs"] == "jit", sys.argv[1]' "$output"
    # an older driver: minor-version compatibility, then too old
    export FAKE_NVML_GPUS="NVIDIA H100 80GB HBM3,9.0,81559,512,0000:17:00.0,0,,0x1,0"
    dr_driver 535.104.05 12020
    run --separate-stderr "$CUDAENV" list-remote cuda
    [[ "$output" == *"5.0-9.0       compat  "* ]] || { echo "$output"; false; }
    dr_driver 470.82.01 11040
    run --separate-stderr "$CUDAENV" info 12.4.0 --no-cudnn
    [[ "$output" == *"runs here   no, the driver is too old: needs driver >= 550.54.14, not 470.82.01"* ]] || { echo "$output"; false; }
}

@test "--driver plans for the compute nodes from a login node without a GPU: info, list-remote and the install preflight" {
    dr_machine
    dr_manifest
    rm -rf "$S/sys/bus/pci/devices/0000:17:00.0" "$S/proc/driver" "$S"/dev/nvidia*
    export CUDAENV_TEST_LIBDIR=$T/empty; mkdir -p "$T/empty"; seams_on
    run --separate-stderr "$CUDAENV" info 12.4.0 --no-cudnn
    [[ "$output" == *"runs here   unknown (this machine (no NVIDIA driver; --driver VER plans for the compute nodes' one))"* ]] || { echo "$output"; false; }
    run --separate-stderr "$CUDAENV" --driver 470.82.01 info 12.4.0 --no-cudnn
    [[ "$output" == *"runs there  no, the driver is too old: needs driver >= 550.54.14, not 470.82.01 (the planned driver 470.82.01)"* ]] || { echo "$output"; false; }
    run --separate-stderr "$CUDAENV" list-remote cuda --driver 535.104.05
    [[ "${lines[0]}" == "THERE: for the planned driver 535.104.05" ]] || { echo "$output"; false; }
    [[ "$output" == *" compat  "* ]] || { echo "$output"; false; }
    # the preflight judges the planned driver, not "no driver found"
    dr_install --driver 470.82.01
    [ "$status" -eq 7 ]
    [[ "$stderr" == *"CUDA 12.4.0 cannot run on the planned machine: CUDA 12.4.0 needs NVIDIA driver >= 550.54.14; the plan's --driver is 470.82.01"* ]] || { echo "$stderr"; false; }
    [[ "$stderr" != *"no NVIDIA driver found"* ]] || false
    [ ! -e "$CUDAENV_ROOT/versions/12.4.0" ]
    CUDAENV_DRIVER_VERSION=560.28.03 dr_install
    [ "$status" -ne 7 ]
    [[ "$stderr" != *"cannot run"* ]] || false
    [[ "$stderr" != *"no NVIDIA driver found"* ]] || false
}

# ---- containers ----

@test "container.devices-not-mapped: docker without --gpus on a GPU host" {
    dr_machine
    touch "$S/.dockerenv"
    rm -f "$S"/dev/nvidia*
    expect_only container.devices-not-mapped
    [[ "$output" == *"--gpus all"* ]]
}

@test "container.libcuda-not-mapped: device nodes mapped, driver libraries not" {
    dr_machine
    echo "0::/kubepods/besteffort/pod1234" > "$S/proc/1/cgroup"
    export CUDAENV_TEST_LIBDIR=$T/empty; mkdir -p "$T/empty"; rm -f "$S"/usr/lib/x86_64-linux-gnu/libcuda.so*; seams_on
    expect_only container.libcuda-not-mapped
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["summary"]["container"]=="kubernetes"' "$T/out.json"
}

# ---- WSL2 ----

dr_wsl() {
    dr_machine
    rm -rf "$S/sys/bus/pci/devices/0000:17:00.0" "$S/proc/driver" "$S"/dev/nvidia* "$S"/usr/lib/x86_64-linux-gnu/libcuda.so*
    echo "5.15.153.1-microsoft-standard-WSL2" > "$S/proc/sys/kernel/osrelease"
    touch "$S/dev/dxg"
    mkdir -p "$S/usr/lib/wsl/lib"
    cp "$DR_DOUBLES/libcuda.so" "$S/usr/lib/wsl/lib/libcuda.so.1"
    cp "$DR_DOUBLES/libnvidia-ml.so" "$S/usr/lib/wsl/lib/libnvidia-ml.so.1"
    echo /usr/lib/wsl/lib > "$S/etc/ld.so.conf"
    export CUDAENV_TEST_LIBDIR=$S/usr/lib/wsl/lib; seams_on
}

@test "WSL2 with the Windows driver's libcuda: no findings" {
    dr_wsl
    expect_only "" 0
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["summary"]["wsl"] is True' "$T/out.json"
}

@test "wsl.libcuda-missing: no /usr/lib/wsl/lib/libcuda.so.1" {
    dr_wsl
    rm -rf "$S/usr/lib/wsl"
    expect_only wsl.libcuda-missing
}

@test "wsl.libcuda-shadowed: a Linux driver's libcuda.so.1 wins over WSL's" {
    dr_wsl
    cp "$DR_DOUBLES/libcuda.so" "$S/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14"
    ln -s libcuda.so.550.54.14 "$S/usr/lib/x86_64-linux-gnu/libcuda.so.1"
    printf '/usr/lib/x86_64-linux-gnu\n/usr/lib/wsl/lib\n' > "$S/etc/ld.so.conf"
    expect_only wsl.libcuda-shadowed
}

@test "wsl.libcuda-not-in-loader: WSL's libcuda exists but no loader path leads to it" {
    dr_wsl
    rm -f "$S/etc/ld.so.conf"
    expect_only wsl.libcuda-not-in-loader
}

@test "wsl.dxg-missing: no /dev/dxg" {
    dr_wsl
    rm -f "$S/dev/dxg"
    expect_only wsl.dxg-missing
}

# ---- MIG ----

@test "mig.enabled: MIG mode with two instances and no selection (warning, names the UUID)" {
    dr_machine
    export FAKE_NVML_GPUS="NVIDIA H100 80GB HBM3,9.0,81559,512,0000:17:00.0,1,MIG-aaaa-1111 MIG-bbbb-2222,0x1,0"
    expect_only mig.enabled 0
    [[ "$output" == *"CUDA_VISIBLE_DEVICES=MIG-aaaa-1111"* ]]
    export CUDA_VISIBLE_DEVICES=MIG-bbbb-2222
    expect_only "" 0
}

@test "mig.no-instances: MIG mode without GPU instances" {
    dr_machine
    export FAKE_NVML_GPUS="NVIDIA H100 80GB HBM3,9.0,81559,512,0000:17:00.0,1,,0x1,0"
    expect_only mig.no-instances
}

@test "mig.unknown-instance: CUDA_VISIBLE_DEVICES names a MIG UUID that does not exist" {
    dr_machine
    export FAKE_NVML_GPUS="NVIDIA H100 80GB HBM3,9.0,81559,512,0000:17:00.0,1,MIG-aaaa-1111,0x1,0"
    export CUDA_VISIBLE_DEVICES=MIG-zzzz-9999
    expect_only mig.unknown-instance
}

# ---- performance ----

@test "perf.pcie-width-degraded: x8 link on an x16 card" {
    dr_machine
    echo 8 > "$S/sys/bus/pci/devices/0000:17:00.0/current_link_width"
    expect_only perf.pcie-width-degraded 0
}

@test "perf.pcie-speed-degraded: 2.5 GT/s while busy; idle it is power saving, not a finding" {
    dr_machine
    echo "2.5 GT/s PCIe" > "$S/sys/bus/pci/devices/0000:17:00.0/current_link_speed"
    expect_only "" 0
    export FAKE_NVML_GPUS="NVIDIA H100 80GB HBM3,9.0,81559,512,0000:17:00.0,0,,0x0,95"
    expect_only perf.pcie-speed-degraded 0
}

@test "perf.throttled: hardware thermal slowdown" {
    dr_machine
    export FAKE_NVML_GPUS="NVIDIA H100 80GB HBM3,9.0,81559,512,0000:17:00.0,0,,0x40,80"
    expect_only perf.throttled 0
    [[ "$output" == *"hardware thermal slowdown"* ]]
}

# ---- the real machine ----

@test "on this CI machine (no GPU, CUDA 13.0 in /usr/local/cuda-13.0) doctor tells the truth, fast" {
    unset CUDAENV_SYSROOT
    export PATH=/usr/local/cuda/bin:/usr/bin:/bin
    [ -e /sys/bus/pci/devices ] || skip "no sysfs"
    if grep -qs 0x10de /sys/bus/pci/devices/*/vendor; then skip "this machine has an NVIDIA GPU"; fi
    local t0 t1
    t0=$(date +%s%N)
    dr_run
    t1=$(date +%s%N)
    echo "doctor took $(((t1 - t0) / 1000000)) ms" >&3
    [ "$status" -eq 7 ]
    [[ " $CODES " == *" gpu.no-device "* ]]
    python3 - "$T/out.json" <<'PY'
import json, os, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["driver"] is None and s["gpus"] == [] and s["pci_devices"] == 0, s
# both ways: what the machine has is named, what it lacks is not invented
a = s["active"]
if os.path.isdir("/usr/local/cuda-13.0") and os.path.realpath("/usr/local/cuda") == "/usr/local/cuda-13.0":
    assert a["origin"] == "system" and a["cuda"] == "13.0" and a["prefix"] == "/usr/local/cuda-13.0", a
elif not os.path.isdir("/usr/local/cuda"):
    assert a is None, a
if os.path.exists("/.dockerenv"):
    assert s["container"] == "docker", s
elif not os.path.exists("/run/.containerenv"):
    assert s["container"] != "docker", s
PY
    [ $(((t1 - t0) / 1000000)) -lt 1000 ]
}

@test "the summary names the system CUDA and the container only when they are there (sysroot, both ways)" {
    export PATH=/usr/bin:/bin
    mkdir -p "$S/usr/local" "$S/proc/1"
    echo "0::/init.scope" > "$S/proc/1/cgroup"
    dr_run
    python3 - "$T/out.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["active"] is None and s["container"] is None, s
PY
    # the same sysroot with a CUDA 13.0 behind /usr/local/cuda, inside docker
    fx_toolkit "$S/usr/local/cuda-13.0" 13.0.0
    ln -s cuda-13.0 "$S/usr/local/cuda"
    touch "$S/.dockerenv"
    dr_run
    python3 - "$T/out.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
a = s["active"]
assert a["origin"] == "system" and a["cuda"] == "13.0" and a["prefix"].endswith("/usr/local/cuda-13.0"), a
assert s["container"] == "docker", s
PY
}

@test "doctor rejects arguments it does not know (exit 2)" {
    run "$CUDAENV" doctor --frobnicate
    [ "$status" -eq 2 ]
    run "$CUDAENV" doctor extra
    [ "$status" -eq 2 ]
}

# ---- the framework probe, kept between runs (issue 35) ----
# A torch in $T/fw whose import takes 0.3 s and writes a line to $T/imports
# (a heavy framework that counts its imports), found first on PYTHONPATH by
# the machine's own root-owned /usr/bin/python3; its bytecode written now,
# so the first probe changes nothing it imports from.
fw_fake() {
    [ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
    mkdir -p "$T/fw/torch"
    fw_version 2.5.1
    export PYTHONPATH=$T/fw FAKE_IMPORTS=$T/imports CUDAENV_DOCTOR_PYTHON=/usr/bin/python3
    : > "$T/imports"
}
fw_version() {
    cat > "$T/fw/torch/__init__.py" <<PY
import os, time
with open(os.environ["FAKE_IMPORTS"], "a") as f:
    f.write("torch\n")
time.sleep(0.3)
__version__ = "$1+cu118"
class version:
    cuda = None
PY
    /usr/bin/python3 -m compileall -q "$T/fw" >/dev/null
    sleep 0.1   # a change while a probe runs keeps nothing: this one is before
}
imports() { wc -l < "$T/imports"; }
fw_json() { python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["frameworks"][sys.argv[1]])' "$1" <<<"$output"; }

@test "framework probe: the second doctor imports nothing; a change where it imports from probes again" {
    fw_fake
    run "$CUDAENV" doctor
    [[ "$output" == *"frameworks: probed /usr/bin/python3 ("*" s); kept in $HOME/.cache/cudaenv until what it imports from changes"* ]] || { echo "$output"; false; }
    [[ "$output" == *"framework.cpu-only-build: torch 2.5.1+cu118 is a CPU-only build"* ]]
    [ "$(imports)" -eq 1 ]
    run "$CUDAENV" doctor
    [ "$(imports)" -eq 1 ]
    [[ "$output" == *"frameworks: the result /usr/bin/python3 gave at "*", kept while nothing it imports from changes (doctor --framework probes again)"* ]] || { echo "$output"; false; }
    [[ "$output" == *"framework.cpu-only-build: torch 2.5.1+cu118 is a CPU-only build"* ]]   # the same findings
    run --separate-stderr "$CUDAENV" doctor --json
    [ "$(imports)" -eq 1 ]
    [ "$(fw_json probe)" = cached ]
    [ "$(fw_json python)" = /usr/bin/python3 ]
    [[ "$(fw_json probed_at)" == 20*T*Z ]]
    # an upgrade in place: the package's module file changed
    fw_version 2.6.0
    run "$CUDAENV" doctor
    [ "$(imports)" -eq 2 ]
    [[ "$output" == *"torch 2.6.0+cu118 is a CPU-only build"* ]]
    run "$CUDAENV" doctor
    [ "$(imports)" -eq 2 ]
    # a package added to a directory on sys.path (an install: a new dist-info)
    mkdir "$T/fw/torch-2.6.0.dist-info"
    sleep 0.1
    run "$CUDAENV" doctor
    [ "$(imports)" -eq 3 ]
    # another environment (the loader's path) is another key
    LD_LIBRARY_PATH=$T/elsewhere run "$CUDAENV" doctor
    [ "$(imports)" -eq 4 ]
    run "$CUDAENV" doctor
    [ "$(imports)" -eq 4 ]
}

@test "framework probe: --framework probes in any case (old results go), --no-framework skips it, and the line says so" {
    fw_fake
    run "$CUDAENV" doctor
    [ "$(imports)" -eq 1 ]
    # results not written for 30 days go when a new one is kept
    touch -d '31 days ago' "$HOME/.cache/cudaenv/doctor-fw-0000000000000000.json"
    touch -d '29 days ago' "$HOME/.cache/cudaenv/doctor-fw-0000000000000001.json"
    run "$CUDAENV" doctor --framework
    [ "$(imports)" -eq 2 ]
    [[ "$output" == *"frameworks: probed /usr/bin/python3 ("*" s, as --framework asks); kept in "* ]] || { echo "$output"; false; }
    [ ! -e "$HOME/.cache/cudaenv/doctor-fw-0000000000000000.json" ]
    [ -e "$HOME/.cache/cudaenv/doctor-fw-0000000000000001.json" ]
    run "$CUDAENV" doctor --no-framework
    [ "$(imports)" -eq 2 ]
    [[ "$output" == *"frameworks: not checked (--no-framework)"* ]]
    [[ "$output" != *"framework.cpu-only-build"* ]]
    run --separate-stderr "$CUDAENV" doctor --no-framework --json
    [ "$(fw_json probe)" = skipped ]
    CUDAENV_DOCTOR_PYTHON=none run "$CUDAENV" doctor
    [[ "$output" == *"frameworks: not checked (CUDAENV_DOCTOR_PYTHON=none)"* ]]
    run "$CUDAENV" doctor --framework --no-framework
    [ "$status" -eq 2 ]
    [[ "$output" == *"--framework (probe the frameworks again) and --no-framework (skip them) exclude each other"* ]]
    run "$CUDAENV" doctor --help
    [[ "$output" == *"--no-framework"* && "$output" == *"XDG_CACHE_HOME"* ]]
}

@test "framework probe as root: a kept result that is not root's, a symlink, or in a directory not root's is never used" {
    [ "$(id -u)" -eq 0 ] || skip "root's cache against a second user"
    atk=cudaenv-atk
    id "$atk" >/dev/null 2>&1 || useradd -M -s /bin/sh "$atk" 2>/dev/null || true
    id "$atk" >/dev/null 2>&1 || skip "useradd $atk failed"
    fw_fake
    run "$CUDAENV" doctor
    [ "$(imports)" -eq 1 ]
    d=$HOME/.cache/cudaenv
    f=$(grep -l 'framework torch' "$d"/doctor-fw-*.json)
    [ -f "$f" ]
    # the same file, saying torch 6.6.6, handed to the user: root probes again and replaces it
    forge() { python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j["report"]["version"] = "6.6.6"; json.dump(j, open(sys.argv[2], "w"))' "$1" "$2"; }
    forge "$f" "$T/forged"
    cp "$T/forged" "$f"
    run "$CUDAENV" doctor
    [ "$(imports)" -eq 1 ]
    [[ "$output" == *"torch 6.6.6"* ]]   # root's own file: used as it is
    chown "$atk" "$f"
    run "$CUDAENV" doctor
    [ "$(imports)" -eq 2 ]
    [[ "$output" != *"6.6.6"* ]] || { echo "$output"; false; }
    [[ "$output" == *"not trusted, so not used: $f is owned by uid $(id -u "$atk"), not root; kept in $d"* ]] || { echo "$output"; false; }
    [ "$(stat -c %u "$f")" -eq 0 ]
    # a symlink to a forged root-owned file
    ln -sf "$T/forged" "$f"
    run "$CUDAENV" doctor
    [ "$(imports)" -eq 3 ]
    [[ "$output" != *"6.6.6"* ]]
    [[ "$output" == *"not trusted, so not used: $f is a symlink"* ]]
    [ ! -L "$f" ]
    # the directory is the user's: nothing read from it, nothing written to it
    rm -rf "$d" && mkdir -p "$d" && cp "$T/forged" "$f" && chown "$atk" "$d"
    run "$CUDAENV" doctor
    [ "$(imports)" -eq 4 ]
    [[ "$output" != *"6.6.6"* ]]
    [[ "$output" == *"not kept: $d is owned by uid $(id -u "$atk")"* ]] || { echo "$output"; false; }
    [ "$(ls "$d")" = "$(basename "$f")" ]
}
