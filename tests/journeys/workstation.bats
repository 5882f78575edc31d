#!/usr/bin/env bats
# Journey: the workstation that already has a CUDA.  Its owner finds the
# machine's CUDA 12.4 (adopt --scan), adopts it, verifies it, installs
# tf-2.14 beside it from the (loopback) mirror (NVIDIA's components, as the
# real manifest pins CUDA 11.8's redistrib JSON), uses it, checks TensorFlow
# on it (verify --framework), makes it the machine's CUDA (global --system),
# installs the full toolkit of the same name on it (11.8+cudnn8.7: the
# components tf-2.14 left out are added to the toolchain in use), verifies
# without naming anything, restores the machine's own CUDA and verifies
# again.  Every seam between those features is asserted: what one
# step leaves is what the next one must accept.  The machine is a
# CUDAENV_SYSROOT (its /usr/local, /etc/ld.so.conf.d, ldconfig -r), so the
# real /usr/local/cuda is never touched (checked in teardown); the GPU is the
# fake driver of tests/doubles, the framework tests/lib/fakefw.sh (a venv's PyTorch with its
# own cuDNN and cudart wheels: use --for, an extension built with the toolchain's nvcc).
# tests/gpu/journeys.sh runs the same sequence on a real GPU machine.
bats_require_minimum_version 1.5.0
load ../lib/common
load ../lib/server
load ../lib/mirror
load ../lib/sysroot
source "$TESTS_DIR/lib/fakefw.sh"

setup_file() {
    mirror_setup_file
    source "$BATS_TEST_DIRNAME/../lib/redist.sh"
    fx_redist "$MIRROR" 11.8.0
}

setup() {
    common_setup
    sysguard_record
    [ "$(id -u)" -eq 0 ] || skip "the system switch needs root (it runs in a sysroot)"
    S=$CUDAENV_SYSROOT
    export CUDAENV_ROOT=$S/opt/cudaenv   # root's store, inside the machine
    export PATH=$BUILD/bin:/usr/bin:/bin
    unset LD_LIBRARY_PATH CUDA_HOME CUDA_PATH CUDNN_PATH CUDAENV_WARNED LIBRARY_PATH
    mkdir -p "$S/etc/ld.so.conf.d" "$S/usr/local"
    echo 'include /etc/ld.so.conf.d/*.conf' > "$S/etc/ld.so.conf"
    mirror_serve
    source "$TESTS_DIR/lib/redist.sh"
    fx_redist_manifest "$CUDAENV_MANIFEST" "$MIRROR" 11.8.0 "$SERVER_URL"
    # the machine's own CUDA 12.4 (+ cuDNN 9.1), /usr/local/cuda -> cuda-12.4,
    # its runtime and NVRTC answering like the fake driver's GPU
    TK=$S/usr/local/cuda-12.4
    fx_toolkit "$TK" 12.4.1 >/dev/null
    fx_cudnn "$T/cudnn" 9.1.0.70 12 >/dev/null
    cp -a "$T/cudnn/include/." "$TK/include/"; cp -a "$T/cudnn/lib/." "$TK/lib64/"
    fx_fake_gpu "$TK" "$T/drv"
    mkdir -p "$T/drv535"; cp "$T/drv/libcuda.so.580.65.06" "$T/drv535/libcuda.so.535.104.05"
    ln -s libcuda.so.535.104.05 "$T/drv535/libcuda.so.1"
    ln -s /usr/local/cuda-12.4 "$S/usr/local/cuda"
    fx_fakefw "$T/site"
    chmod -R go-w "$T"
    export NODRV=$T/no-driver/libcuda.so.1 DRV=$T/drv/libcuda.so.1 DRV535=$T/drv535/libcuda.so.1
}

teardown() {
    server_stop
    sysroot_teardown
}

# vj JSON: "name adhoc files versions loader exit" and the selected_by line
vj() {
    python3 -c 'import json, sys
d = json.loads(sys.stdin.read()); st = {s["id"]: s for s in d["steps"]}
print(d["toolchain"]["name"], str(d["toolchain"]["adhoc"]).lower(), st["files"]["status"], st["versions"]["status"],
      st["loader"]["status"], d["exit_code"])
print(d["toolchain"]["selected_by"])
print(" ".join(s["id"] + "=" + s["status"] for s in d["steps"]))' <<<"$1"
}

@test "workstation: adopt --scan -> adopt -> verify -> install tf-2.14 -> use -> verify --framework -> use --for + an extension -> global --system -> verify -> restore -> verify" {
    # 1. what the machine has
    run --separate-stderr cudaenv adopt --scan
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "$TK "*"CUDA 12.4.1 + cuDNN 9.1.0"*"cudaenv adopt $TK"* ]]
    # 2. adopt it
    run --separate-stderr cudaenv adopt "$TK"
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    A=12.4.1+cudnn9.1.0
    [[ "$stderr" == *"adopted $TK as $A"* ]]
    # 3. verify it: the loader step compares files (the adopted prefix is links into $TK);
    #    with the fake GPU the driver, device and kernel steps run too
    CUDAENV_TEST_LIBCUDA=$DRV run --separate-stderr seams cudaenv verify "$A" --json
    run vj "$output"
    [[ "${lines[2]}" == "files=passed versions=passed loader=passed driver=passed device=passed kernel=passed"* ]] || { echo "$output"; false; }
    CUDAENV_TEST_LIBCUDA=$NODRV run --separate-stderr seams cudaenv verify "$A"
    [ "$status" -eq 8 ] || { echo "$output"; false; }
    [ "$(grep -c 'also:' <<<"$output")" -eq 0 ]
    #    on an R535 driver (CUDA 12.2) the 12.4 toolkit runs through minor-version compatibility:
    #    a warning (as doctor and the install preflight say), the cubin runs, the PTX (ISA 8.4) does not JIT
    CUDAENV_TEST_LIBCUDA=$DRV535 FAKE_CUDA_DRIVER_VERSION=12020 run --separate-stderr seams cudaenv verify "$A" --json
    run vj "$output"
    [[ "${lines[2]}" == "files=passed versions=passed loader=passed driver=passed device=passed kernel=passed"* ]] || { echo "$output"; false; }
    CUDAENV_TEST_LIBCUDA=$DRV535 FAKE_CUDA_DRIVER_VERSION=12020 run --separate-stderr seams cudaenv verify "$A"
    [[ "$output" == *"driver 535.104.05 runs CUDA 12.4.1 only in minor-version compatibility mode"* ]] || { echo "$output"; false; }
    # 4. install tf-2.14 beside it, from the mirror
    run --separate-stderr cudaenv install tf-2.14
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    P=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    [ -f "$P/.cudaenv-receipt.json" ]
    [ "$(server_requests 'linux.run')" -eq 0 ] && [ ! -e "$P/lib64/libnpp.so.11" ] || false
    # 5. use it in a shell: the toolchain's nvcc and libraries, the machine's CUDA_HOME back after
    run bash --norc -c 'export CUDA_HOME=/usr/local/cuda; eval "$(cudaenv init bash)"
        cudaenv use -q tf-2.14 || exit 9
        echo "$CUDA_HOME|$(command -v nvcc)|${LD_LIBRARY_PATH%%:*}"
        cudaenv use -q system; echo "$CUDA_HOME"'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "$P|$P/bin/nvcc|$P/lib64" ]
    [ "${lines[1]}" = /usr/local/cuda ]
    # ... and verify it while the shell still carries the adopted toolchain's libraries
    LD_LIBRARY_PATH=$CUDAENV_ROOT/versions/$A/lib64 CUDAENV_TEST_LIBCUDA=$NODRV \
        run --separate-stderr seams cudaenv verify tf-2.14 --json
    run vj "$output"
    [ "${lines[0]}" = "11.8.0+cudnn8.7.0.84 false passed passed passed 8" ] || { echo "$output"; false; }
    # 6. TensorFlow on it
    PYTHONPATH=$T/site FAKE_FW_LIBS="libcudart.so.11.0 libcudnn.so.8" CUDAENV_TEST_LIBCUDA=$DRV \
        run --separate-stderr seams cudaenv verify tf-2.14 --framework tf --python /usr/bin/python3 --json
    [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
    python3 -c 'import json, sys
d = json.loads(sys.stdin.read())
assert d["findings"] == [], d["findings"]
assert all(m.startswith(d["toolchain"]["prefix"] + "/") for m in d["framework"]["maps"]), d["framework"]["maps"]' <<<"$output"
    # 6b. a venv whose PyTorch brings its own cuDNN and cudart wheels, as PyTorch's do: its
    #     libcudnn.so.8, preloaded by path, dlopen()s libcudnn_ops_infer.so.8 by name, which
    #     the toolchain has too.  use --for gives the toolchain's nvcc and CUDA_HOME and one copy
    #     of each library; an extension built with that nvcc and linked against the toolchain's
    #     -lcudart runs in the framework's process on the framework's libcudart (4242)
    fx_fakefw "$T/vsite"; rm -rf "$T"/vsite/tensorflow*
    fx_fakecudnn_wheel "$T/vsite" 8 libcudnn_ops_infer libcudart.so.11.0
    W=$(readlink -f "$T/vsite/nvidia")
    printf 'int cudaRuntimeGetVersion(int *);\nint ext_runtime(void) { int v = 0; cudaRuntimeGetVersion(&v); return v; }\n' > "$T/ext.c"
    printf 'import ctypes, sys, torch\nprint(ctypes.CDLL(sys.argv[1]).ext_runtime())\n%s\n' "$MAPS_BY_FAMILY" > "$T/probe.py"
    cat > "$T/build-ext.sh" <<'SH'
eval "$(cudaenv init bash)"
cudaenv use -q --for python3 || exit 9
cd "$T" || exit 9
"$CUDA_HOME/bin/nvcc" -c ext.c -o ext.o 2> nvcc.log || exit 8
echo "nvcc=$(command -v nvcc) home=$CUDA_HOME ld=${LD_LIBRARY_PATH:-unset}"
cc -shared -fPIC ext.c -o ext.so -lcudart || exit 7
python3 probe.py "$T/ext.so"
SH
    PYTHONPATH=$T/vsite FAKE_FW_CUDA=11.8 FAKE_FW_CUDNN=8.7.0 \
        FAKE_FW_LIBS="$T/vsite/nvidia/cuda_runtime/lib/libcudart.so.11.0 $T/vsite/nvidia/cudnn/lib/libcudnn.so.8" \
        T=$T run --separate-stderr bash --norc "$T/build-ext.sh"
    [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
    [ "$output" = "nvcc=$P/bin/nvcc home=$P ld=unset
4242
libcudart $W/cuda_runtime/lib
libcudnn $W/cudnn/lib" ] || { echo "$output"; false; }
    grep -q "cudaenv test fixture" "$T/nvcc.log"
    #     a plain use in that shell: current names the hazard and the fix
    PYTHONPATH=$T/vsite run --separate-stderr bash --norc -c 'eval "$(cudaenv init bash)"; cudaenv use -q tf-2.14; cudaenv current'
    [[ "$stderr" == *"warning: python3 brings its own cudart, cudnn"*"fix: cudaenv use --for python3"* ]] || { echo "$stderr"; false; }
    # 7. make it the machine's CUDA
    run --separate-stderr cudaenv global tf-2.14 --system
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$(readlink "$S/usr/local/cuda")" = /opt/cudaenv/versions/11.8.0+cudnn8.7.0.84 ]
    # 7b. the full toolkit under the same name, on the toolchain the machine uses: what
    #     tf-2.14 left out is added (said), the rest stays the same files, the switch still points at it
    ino=$(stat -c %i "$P/lib64/libcublas.so.11")
    cudaenv list >/dev/null && [ -s "$CUDAENV_ROOT/versions/.cudaenv-sizes" ] || false   # list's sums kept
    run --separate-stderr cudaenv install 11.8+cudnn8.7
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"is installed without cuda_sanitizer_api, libnpp, which this install selects: adding them"* ]] || { echo "$stderr"; false; }
    [ -f "$S$(readlink "$S/usr/local/cuda")/lib64/libnpp.so.11" ] && [ -f "$P/lib64/cuda_sanitizer_api.so.11" ] || false
    [ "$(stat -c %i "$P/lib64/libcublas.so.11")" = "$ino" ]
    run --separate-stderr cudaenv list
    [[ "$output" == *"11.8.0+cudnn8.7.0.84  (system: /usr/local/cuda)"*"(toolkit profile)"* ]] || { echo "$output"; false; }
    #     the toolchain grew: list's sums counted again (the same as with none kept), its
    #     bytes what a fresh walk counts
    kept=$(cudaenv list --json) && rm "$CUDAENV_ROOT/versions/.cudaenv-sizes" && [ "$kept" = "$(cudaenv list --json)" ] || false
    sz() { python3 -c 'import json, sys
t = {x["name"]: x for x in json.load(sys.stdin)["toolchains"]}["11.8.0+cudnn8.7.0.84"]
print(t["unique_bytes"], t["shared_bytes"])'; }
    [ "$(cudaenv list --json | sz)" = "$(cudaenv list --json --sizes | sz)" ] || false
    # 8. plain verify: what the machine now uses
    CUDAENV_TEST_LIBCUDA=$NODRV run --separate-stderr seams cudaenv verify --json
    [ "$status" -eq 8 ] || { echo "$stderr $output"; false; }
    run vj "$output"
    [ "${lines[0]}" = "11.8.0+cudnn8.7.0.84 false passed passed passed 8" ]
    [ "${lines[1]}" = "nothing selected in this shell: the system switch's target (/usr/local/cuda)" ]
    # 9. back to the machine's own CUDA, exactly
    run --separate-stderr cudaenv global system --system
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$(readlink "$S/usr/local/cuda")" = /usr/local/cuda-12.4 ]
    # 10. plain verify: the machine's own CUDA again, with the fake GPU
    CUDAENV_TEST_LIBCUDA=$DRV run --separate-stderr seams cudaenv verify --json
    J=$output
    run vj "$output"
    [ "${lines[0]%% *}" = system ]
    #     NCCL: the machine's own tree is not cudaenv's to reinstall; a 12.4 toolchain beside it is
    python3 -c 'import json, sys
s = {x["id"]: x for x in json.load(sys.stdin)["steps"]}["nccl"]
assert s["status"] == "skipped" and "not installed by cudaenv" in s["summary"], s
assert s["summary"].endswith("beside this one: cudaenv install 12.4 --components +nccl"), s' <<<"$J"
    [[ "${lines[1]}" == "nothing selected: the machine's own CUDA 12.4.1 at /usr/local/cuda ($S/usr/local/cuda-12.4)"* ]]
    [[ "${lines[2]}" == "files=skipped versions=passed loader=passed driver=passed device=passed kernel=passed"* ]] || { echo "$output"; false; }
}
