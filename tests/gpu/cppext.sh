#!/usr/bin/env bash
# Issue 27's device proof: the toolchain a PyTorch venv needs, found by
# `cudaenv install --for PYTHON`, builds a CUDA extension for it.  On the
# device machine, with its PyTorch venv (TORCH_PY, default
# /opt/torch/.venv/bin/python) and its own CUDA (CUDA_SRC, default
# /usr/local/cuda-13.0), offline:
#   0 what the venv's frameworks say they were built for: torch.version.cuda and
#     its cuDNN; JAX's CUDA plugin (jax_cudaNN_plugin._versions build versions
#     and its wheel's Requires-Dist), read through framework.py as --for does
#   1 tests/gpu/run.sh packs this machine's CUDA + the venv's cuDNN wheel as
#     NVIDIA ships them and serves them on 127.0.0.1 (its manifest has that
#     one CUDA + cuDNN pair, NAME); then, in a fresh store,
#     install --for TORCH_PY    -> exit 0, "PyTorch decides: A.B+cudnnC.D", NAME
#     installed and nothing else (--framework torch when the venv's JAX
#     disagrees: that exit 2 is printed and counted as the documented answer)
#   2 verify NAME --framework torch, the venv's nvidia-cudnn / nvidia-cu13
#     wheels' lib folders moved aside (as tests/gpu/framework.sh): exit 0
#   3 a torch.utils.cpp_extension.load_inline CUDA kernel, built with
#     CUDA_HOME from `cudaenv env NAME` (its nvcc named in build.ninja), run on
#     GPU 0 against a CPU reference: exact
# Usage (root): run(carry=[".devdeps/gpu"], command="tests/gpu/cppext.sh")
# after tests/gpu/devdeps.sh; OUT=dir keeps the reports.
set -u
cd "$(dirname "$0")/../.." || exit 1
TORCH_PY=${TORCH_PY:-/opt/torch/.venv/bin/python}
T0=$(date +%s)
echo "== 0 $TORCH_PY: what its frameworks were built for"
"$TORCH_PY" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "cuDNN compiled", torch._C._cudnn.getCompileVersion(), "GPUs", torch.cuda.device_count())'
"$TORCH_PY" - <<'PY'
import importlib, importlib.metadata as md
for pkg in ("jax_cuda13_plugin", "jax_cuda12_plugin"):
    try:
        v = importlib.import_module(pkg + "._versions")
        print(pkg, "cuda_runtime_build_version", v.cuda_runtime_build_version(), "cudnn_build_version", v.cudnn_build_version())
    except Exception as e:
        print(pkg, "._versions:", type(e).__name__, e)
    try:
        print("  ", pkg.replace("_", "-"), md.version(pkg.replace("_", "-")), [q for q in md.requires(pkg.replace("_", "-")) or [] if "cudnn" in q or "runtime" in q])
    except Exception as e:
        print("  ", type(e).__name__, e)
PY
WHEEL_CUDNN=$("$TORCH_PY" -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))')
export CUDNN_SRC=$WHEEL_CUDNN GPU_INSTALL_ONLY=1 GPU_FULL_LIBS=${GPU_FULL_LIBS-1} GPU_KEEP_MIRROR=1
# packs, serves and installs NAME into $W/good (run.sh's W, BIN, NAME, OUT, M, ok/bad/t)
source tests/gpu/run.sh || { echo "the toolchain could not be packed and installed"; exit 1; }
unset CUDAENV_VERSION LD_LIBRARY_PATH LIBRARY_PATH CUDA_HOME CUDA_PATH CUDNN_PATH
for fw in torch jax; do   # the probe --for runs (framework.py, quick), as a document
    OUTJ=$OUT/probe-$fw.json
    (cd "$W" && "$TORCH_PY" -I "$OLDPWD/src/selftest/framework.py" "$fw" "$OUTJ" 1 >/dev/null 2>&1)
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print("    probe", d["framework"], d["version"], "cuda", d["cuda"], "cudnn", d["cudnn"], "plugin", d.get("plugin"), d.get("plugin_error") or "")' "$OUTJ"
done
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not (d["imported"] and d.get("plugin") and d["cuda"] and d["cudnn"]))' "$OUT/probe-jax.json" \
    && ok "framework.py reads JAX's CUDA plugin: its CUDA and cuDNN build versions" || bad "framework.py: no CUDA/cuDNN from JAX's plugin"

echo "== 1 install --for $TORCH_PY, in a fresh store, from the loopback server"
server_start "$M" >/dev/null || { bad "the loopback server did not start again"; echo "$pass passed, $fail failed"; exit 1; }
export CUDAENV_MANIFEST=$SERVER_URL/manifest.json CUDAENV_MANIFEST_UNSIGNED=1 CUDAENV_ROOT=$W/forpy
s=$(date +%s%N)
"$BIN" install --insecure --for "$TORCH_PY" > "$OUT/forpy-install.log" 2>&1; rc=$?
sed 's/^/  | /' "$OUT/forpy-install.log"
if [ "$rc" -eq 2 ] && grep -q "want different" "$OUT/forpy-install.log"; then
    ok "the venv's frameworks disagree: exit 2 naming both, as documented; choosing --framework torch"
    "$BIN" install --insecure --for "$TORCH_PY" --framework torch > "$OUT/forpy-install.log" 2>&1; rc=$?
    sed 's/^/  | /' "$OUT/forpy-install.log"
fi
echo "  install --for: $(( ($(date +%s%N) - s) / 1000000 )) ms, exit $rc"
got=$("$BIN" list --names 2>/dev/null | tr '\n' ' ')
if [ "$rc" -eq 0 ] && grep -q "PyTorch decides: 13.0+cudnn" "$OUT/forpy-install.log" && [ "$got" = "$NAME " ]; then
    ok "install --for: PyTorch decided the CUDA 13.0 pair; $NAME installed, nothing else"
else
    bad "install --for: exit $rc, installed '$got' (want $NAME)"; echo "$pass passed, $fail failed"; exit 1
fi
P=$CUDAENV_ROOT/versions/$NAME

SITE=${WHEEL_CUDNN%/nvidia/cudnn/lib}
HID=()
for d in "$SITE/nvidia/cudnn/lib" "$SITE/nvidia/cu13/lib"; do [ -d "$d" ] && HID+=("$d"); done
unhide() { local d; for d in "${HID[@]}"; do [ -d "$d.cudaenv-hidden" ] && mv "$d.cudaenv-hidden" "$d"; done; }
trap 'unhide; server_stop >/dev/null 2>&1; rm -rf "$W"' EXIT
for d in "${HID[@]}"; do mv "$d" "$d.cudaenv-hidden"; done   # as if uninstalled (the fix); put back on exit

echo "== 2 verify $NAME --framework torch, the wheels' lib folders moved aside"
"$BIN" verify "$NAME" --framework torch --python "$TORCH_PY" --json > "$OUT/forpy-verify.json"; rc=$?
python3 - "$OUT/forpy-verify.json" "$rc" <<'PY' && ok "verify --framework torch: exit 0, matmul + conv2d right, every libcudart/libcudnn from the toolchain" || bad "verify --framework torch: exit $rc"
import json, sys
d = json.load(open(sys.argv[1])); rc = int(sys.argv[2]); fw = d["framework"]
print("    findings:", [(f["code"], f["summary"]) for f in d["findings"]])
print("    checks:", [(c["name"], c["max_rel_err"]) for c in fw["checks"]], "maps:", fw["maps"])
sys.exit(not (rc == 0 and not d["findings"] and len(fw["checks"]) == 2 and all(c["ok"] for c in fw["checks"])))
PY

echo "== 2b (reported, not counted) verify $NAME --framework jax: the venv's JAX on the same toolchain"
"$BIN" verify "$NAME" --framework jax --python "$TORCH_PY" --json > "$OUT/forpy-verify-jax.json"; rc=$?
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); fw = d["framework"] or {}
print("    exit", sys.argv[2], "findings:", [(f["code"], f["summary"]) for f in d["findings"]])
print("    jax", fw.get("version"), "plugin", fw.get("plugin"), "cuda", fw.get("cuda"), "cudnn", fw.get("cudnn"), "gpus", fw.get("gpus"))
print("    checks:", [(c["name"], c["max_rel_err"]) for c in fw.get("checks") or []], "error:", fw.get("error") or fw.get("compute_error"))' "$OUT/forpy-verify-jax.json" "$rc"

echo "== 3 a CUDA extension (torch.utils.cpp_extension.load_inline) built with $NAME's nvcc, run on GPU 0"
cat > "$W/ext.py" <<'PY'
import os, re, sys, time, torch
from torch.utils import cpp_extension as ce
print("    CUDA_HOME", ce.CUDA_HOME)
cuda_src = r"""
#include <torch/extension.h>
__global__ void axpy2_k(const float *x, const float *y, float *out, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i] * y[i];
}
torch::Tensor axpy2(torch::Tensor x, torch::Tensor y, double a) {
    auto out = torch::empty_like(x);
    int n = x.numel();
    axpy2_k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), out.data_ptr<float>(), (float)a, n);
    return out;
}
"""
t = time.time()
m = ce.load_inline("cudaenv_axpy2", cpp_sources="torch::Tensor axpy2(torch::Tensor x, torch::Tensor y, double a);",
                   cuda_sources=cuda_src, functions=["axpy2"], build_directory=os.environ["EXT_DIR"], verbose=False)
print("    built in %.1f s" % (time.time() - t))
nvcc = re.search(r"^nvcc = (.*)$", open(os.path.join(os.environ["EXT_DIR"], "build.ninja")).read(), re.M).group(1)
print("    build.ninja nvcc =", nvcc)
n = 1 << 20
x = (torch.arange(n, dtype=torch.float32) % 129 - 64) / 64   # k/64: exact in float32
y = (torch.arange(n, dtype=torch.float32) % 61 - 30) / 32
got = m.axpy2(x.cuda(), y.cuda(), 0.5).cpu()
ref = (0.5 * x.double() + y.double() * y.double()).float()
err = (got - ref).abs().max().item()
print("    %d elements on %s: max |gpu - cpu| = %g" % (n, torch.cuda.get_device_name(0), err))
print("    libcudart mapped:", sorted({l.split()[-1] for l in open("/proc/self/maps") if "libcudart" in l}))
sys.exit(0 if err == 0 and nvcc.startswith(os.environ["CUDA_HOME"] + "/") else 1)
PY
mkdir -p "$W/ext"
out=$(bash --norc -c 'eval "$("$1" env "$2" --shell bash)" || exit 9; export PATH=$PATH:${3%/*} EXT_DIR=$4 TORCH_CUDA_ARCH_LIST=9.0
    echo "    CUDA_HOME=$CUDA_HOME"; "$3" "$5"' _ "$BIN" "$NAME" "$TORCH_PY" "$W/ext" "$W/ext.py" 2>&1); rc=$?
echo "$out" | tail -n 12
[ "$rc" -eq 0 ] && grep -q "CUDA_HOME=$P\$" <<<"$out" && ok "the extension built with $P/bin/nvcc and ran on the GPU: exact against the CPU" \
    || bad "the extension: exit $rc"

echo "  wall time: $(( $(date +%s) - T0 )) s"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
