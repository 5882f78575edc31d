#!/usr/bin/env bash
# cudaenv doctor on a real GPU machine (the H200 device): the clean case,
# then injected problems, each of which must add exactly its finding to the
# clean run's.  Needs python3 and cc there; the light binary and libcjson
# come in a carried folder:
#   mkdir -p .devdeps/doctor/bin .devdeps/doctor/lib .devdeps/doctor/share/cudaenv
#   cp build-doctor/bin/cudaenv .devdeps/doctor/bin/
#   cp -P /usr/lib/x86_64-linux-gnu/libcjson.so.1* .devdeps/doctor/lib/
#   cp -rL share/manifests .devdeps/doctor/share/cudaenv/
#   run: tests/gpu/doctor.sh   (carry .devdeps/doctor)
set -u
cd "$(dirname "$0")/../.."
DEPS=${DEPS:-$PWD/.devdeps/doctor}
export LD_LIBRARY_PATH_BASE=${LD_LIBRARY_PATH:-}
BIN=$DEPS/bin/cudaenv
W=$(mktemp -d /tmp/cudaenv-gpu-doctor.XXXXXX)
trap 'rm -rf "$W"' EXIT
export CUDAENV_ROOT=$W/root HOME=$W/home NO_COLOR=1
mkdir -p "$HOME" "$CUDAENV_ROOT/versions"
unset CUDAENV_VERSION CUDAENV_SYSROOT CUDAENV_TEST_LIBDIR CUDA_VISIBLE_DEVICES
# cudaenv's own libcjson must not count as the user's LD_LIBRARY_PATH: preload it instead
export LD_PRELOAD=$DEPS/lib/libcjson.so.1
unset LD_LIBRARY_PATH
fail=0

codes() { python3 -c 'import json,sys; print(" ".join(sorted(f["code"] for f in json.load(open(sys.argv[1]))["findings"])))' "$1"; }

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.used,memory.total --format=csv,noheader 2>&1 | head -4
readlink -f /usr/local/cuda; ls /etc/ld.so.conf.d/; echo "PATH=$PATH"

echo "== clean: cudaenv doctor"
"$BIN" doctor; echo "exit $?"
"$BIN" doctor --json > "$W/clean.json"; echo "json exit $?"
BASE=$(codes "$W/clean.json")
echo "clean codes: [${BASE}]"
python3 - "$W/clean.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print("summary:", json.dumps({k: s[k] for k in ("errors", "warnings", "driver", "driver_cuda", "pci_devices", "gpus", "active", "elapsed_ms")}))
PY
python3 - "$BIN" <<'PY'
import subprocess, sys, time
ts = []
for _ in range(10):
    t = time.perf_counter()
    subprocess.run([sys.argv[1], "doctor", "--json"], stdout=subprocess.DEVNULL)
    ts.append(time.perf_counter() - t)
ts.sort()
print("doctor wall time over 10 runs: min %.1f ms, median %.1f ms, max %.1f ms" % (ts[0] * 1e3, ts[5] * 1e3, ts[-1] * 1e3))
PY

# check NAME WANT CMD...: run doctor under the injected environment and
# require that it adds exactly WANT to the clean run's codes.
check() {
    local name=$1 want=$2; shift 2
    echo
    echo "== $name"
    env "$@" "$BIN" doctor > "$W/h.txt"; local hs=$?
    env "$@" "$BIN" doctor --json > "$W/j.json"; local js=$?
    sed -n '/^$/,$p' "$W/h.txt"
    local got added
    got=$(codes "$W/j.json")
    added=$(comm -13 <(tr ' ' '\n' <<<"$BASE" | sed '/^$/d') <(tr ' ' '\n' <<<"$got" | sed '/^$/d') | tr '\n' ' ' | sed 's/ $//')
    echo "exit $hs/$js; added findings: [$added]"
    if [ "$added" = "$want" ]; then echo "PASS $name"; else echo "FAIL $name: want [$want]"; fail=1; fi
}

check "CUDA_VISIBLE_DEVICES=-1" env.cuda-visible-devices-hidden CUDA_VISIBLE_DEVICES=-1

# a foreign CUDA 12.4 library directory (a real shared object with its SONAME)
F=$W/opt/cuda-12.4
mkdir -p "$F/lib64" "$F/include" "$F/bin"
echo '#define CUDART_VERSION 12040' > "$F/include/cuda_runtime_api.h"
echo 'int cudaRuntimeGetVersion(int *v) { *v = 12040; return 0; }' > "$W/rt.c"
cc -shared -fPIC -Wl,-soname,libcudart.so.12 -o "$F/lib64/libcudart.so.12.4.127" "$W/rt.c"
ln -s libcudart.so.12.4.127 "$F/lib64/libcudart.so.12"
check "foreign CUDA 12.4 in LD_LIBRARY_PATH" env.ldpath-foreign-cuda LD_LIBRARY_PATH="$F/lib64"

# toolchains over the machine's real CUDA 13.0 whose receipt asks for more
# than the installed driver: a tree of links to /usr/local/cuda-13.0
real=$(readlink -f /usr/local/cuda)
mk_toolchain() {
    local name=$1 min=$2 p=$CUDAENV_ROOT/versions/$1
    mkdir -p "$p"
    for d in bin include lib64 nvvm targets; do [ -e "$real/$d" ] && ln -s "$real/$d" "$p/$d"; done
    printf '{"schema":1,"name":"%s","cuda":"%s","cudnn":null,"platform":"linux-x86_64","tensorflow":[],"min_driver":"%s","max_gcc":15,"sm":{"min":"7.5","max":"12.1"},"sources":[],"files":[]}\n' \
        "$name" "$name" "$min" > "$p/.cudaenv-receipt.json"
    echo "$p"
}
P13=$(mk_toolchain 13.0.0 999.0)
check "toolchain 13.0.0 with min_driver 999.0 (inside the 13.x family: minor-version compatibility)" driver.minor-compat \
    CUDAENV_VERSION=13.0.0 PATH="$P13/bin:$PATH" LD_LIBRARY_PATH="$P13/lib64" CUDA_HOME="$P13"
P14=$(mk_toolchain 14.0.0 999.0)
check "toolchain 14.0.0 with min_driver 999.0 (a newer CUDA major than the driver supports)" driver.too-old \
    CUDAENV_VERSION=14.0.0 PATH="$P14/bin:$PATH" LD_LIBRARY_PATH="$P14/lib64" CUDA_HOME="$P14"

echo
[ $fail -eq 0 ] && echo "ALL PASS" || echo "SOME FAILED"
exit $fail
