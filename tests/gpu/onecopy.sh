#!/usr/bin/env bash
# Issue 37's device proof: one copy of each library in the framework's
# process.  On the device machine, with its PyTorch venv (TORCH_PY, default
# /opt/torch/.venv/bin/python: its own nvidia-* wheels) and a cudaenv
# toolchain of the same CUDA 13.0 + cuDNN pair (tests/gpu/run.sh packs this
# machine's CUDA and the venv's cuDNN wheel and installs them, as cppext.sh):
#   the issue's table: after a conv2d (fp32 + fp16) and a matmul, the
#   directory each library family was mapped from (/proc/self/maps), for
#   python plainly, exec NAME -- python, exec --for, env --for, use --for,
#   local --for (the cd hook's env) -- one directory per family each time --
#   and plain use, which current must warn about (framework.two-copies);
#   verify --framework torch and jax on the venv as it comes (exit 0, the
#   per-family report); a cpp_extension.load_inline kernel built under
#   exec --for with the toolchain's nvcc, exact on GPU 0.
# Usage (root): run(carry=[".devdeps/gpu"], command="tests/gpu/onecopy.sh")
# after tests/gpu/devdeps.sh; OUT=dir keeps the reports.
set -u
cd "$(dirname "$0")/../.." || exit 1
TORCH_PY=${TORCH_PY:-/opt/torch/.venv/bin/python}
T0=$(date +%s)
WHEEL_CUDNN=$("$TORCH_PY" -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))')
export CUDNN_SRC=$WHEEL_CUDNN GPU_INSTALL_ONLY=1 GPU_FULL_LIBS=${GPU_FULL_LIBS-1} GPU_KEEP_MIRROR=1
source tests/gpu/run.sh || { echo "the toolchain could not be packed and installed"; exit 1; }
trap 'server_stop >/dev/null 2>&1; rm -rf "$W"' EXIT
unset CUDAENV_VERSION CUDAENV_LIBS LD_LIBRARY_PATH LIBRARY_PATH CUDA_HOME CUDA_PATH CUDNN_PATH
# --for resolves through the loopback server's manifest (its one CUDA + cuDNN pair, NAME)
server_start "$M" >/dev/null || { bad "the loopback server did not start again"; echo "$pass passed, $fail failed"; exit 1; }
# a local manifest (its URLs relative to it): exec --for loads it in the full binary, which
# refuses a remote one over plain http without --insecure
export CUDAENV_MANIFEST=$M/manifest.json
P=$CUDAENV_ROOT/versions/$NAME
VBIN=$(dirname "$TORCH_PY")
cat > "$W/probe.py" <<'PY'
import os, sys, torch
x = torch.randn(8, 16, 32, 32, device="cuda"); w = torch.randn(32, 16, 3, 3, device="cuda")
torch.nn.functional.conv2d(x, w, padding=1); torch.nn.functional.conv2d(x.half(), w.half(), padding=1)
(torch.randn(256, 256, device="cuda") @ torch.randn(256, 256, device="cuda")).sum().item()
torch.cuda.synchronize()
fams = (("libcudart", "cudart"), ("libcublasLt", "cublas"), ("libcublas", "cublas"), ("libcudnn", "cudnn"),
        ("libnccl", "nccl"), ("libnvrtc", "nvrtc"), ("libnvJitLink", "nvjitlink"), ("libcufft", "cufft"),
        ("libcusparseLt", "cusparselt"), ("libcusparse", "cusparse"))
seen = {}
for line in open("/proc/self/maps"):
    p = line.split(None, 5)
    path = p[5].strip() if len(p) == 6 else ""
    b = os.path.basename(path)
    for pre, fam in fams:
        if b.startswith(pre) and ".so" in b:
            seen.setdefault(fam, set()).add(os.path.dirname(path))
            break
home = os.environ.get("CUDA_HOME", "")
def where(d):
    return "toolchain" if home and d.startswith(home) else "wheel" if "/nvidia/" in d else d
print(" ".join("%s=%s" % (f, "+".join(sorted(where(d) for d in ds))) for f, ds in sorted(seen.items())))
print("ONE" if all(len(ds) == 1 for ds in seen.values()) else "MIXED")
PY
row() {   # row LABEL OUTPUT: the table's row, counted
    local fams one; fams=$(sed -n 1p <<<"$2"); one=$(sed -n 2p <<<"$2")
    printf '  | %-34s | %s\n' "$1" "$fams"
    [ "$one" = ONE ] && ok "$1: one directory per family" || bad "$1: a family from two directories ($fams)"
}
echo "== the issue's table: where each family was mapped from (after conv2d fp32 + fp16, a matmul)"
row "python plainly" "$("$TORCH_PY" "$W/probe.py" 2>/dev/null)"
row "cudaenv exec NAME -- python" "$("$BIN" exec "$NAME" -- "$TORCH_PY" "$W/probe.py" 2>/dev/null)"
row "cudaenv exec --for PY -- python" "$("$BIN" exec --for "$TORCH_PY" -- "$TORCH_PY" "$W/probe.py" 2>/dev/null)"
row 'eval "$(cudaenv env --for PY)"' "$(bash --norc -c 'eval "$("$1" env --for "$2" 2>/dev/null)"; "$2" "$3"' _ "$BIN" "$TORCH_PY" "$W/probe.py")"
row "cudaenv use --for PY" "$(PATH=$(dirname "$BIN"):$PATH bash --norc -c 'eval "$(cudaenv init bash)"; cudaenv use -q --for "$1" 2>/dev/null; "$1" "$2"' _ "$TORCH_PY" "$W/probe.py")"
mkdir -p "$W/proj"
(cd "$W/proj" && "$BIN" local --for "$TORCH_PY" 2>/dev/null)
row "local --for PY (the cd hook's env)" "$(cd "$W/proj" && bash --norc -c 'eval "$("$1" env)"; "$2" "$3"' _ "$BIN" "$TORCH_PY" "$W/probe.py")"
plain=$(PATH=$(dirname "$BIN"):$VBIN:$PATH bash --norc -c 'eval "$(cudaenv init bash)"; cudaenv use -q "$1"; python "$2"; cudaenv current 2>&1 >/dev/null' _ "$NAME" "$W/probe.py")
printf '  | %-34s | %s\n' "plain use NAME (the hazard)" "$(sed -n 1p <<<"$plain")"
grep -q "framework.two-copies\|brings its own" <<<"$plain" && ok "plain use: current names the hazard and the fix (use --for)" \
    || bad "plain use: current said nothing"
grep "warning" <<<"$plain" | cut -c1-300

echo "== verify $NAME --framework torch / jax on the venv as it comes"
for fw in torch jax; do
    "$BIN" verify "$NAME" --framework "$fw" --python "$TORCH_PY" --json > "$OUT/onecopy-verify-$fw.json" 2>"$OUT/onecopy-verify-$fw.err"; rc=$?
    python3 - "$OUT/onecopy-verify-$fw.json" "$rc" "$fw" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); rc = int(sys.argv[2])
print("    %s exit %d findings %s" % (sys.argv[3], rc, [(f["code"], f["summary"][:120]) for f in d["findings"]]))
for l in d.get("libraries", []):
    print("      %-9s %-60s %-22s %s" % (l["family"], l["file"][-60:], l["source"], l["why"][:110]))
PY
    if [ "$fw" = torch ]; then [ "$rc" -eq 0 ] && ok "verify --framework torch: exit 0 on the wheels alone" || bad "verify --framework torch: exit $rc"; fi
done
"$BIN" verify "$NAME" --framework torch --python "$TORCH_PY" | sed -n '/libraries on/,/^  [a-z]*:/p' | head -40

echo "== a cpp_extension kernel built under exec --for with $NAME's nvcc"
cat > "$W/ext.py" <<'PY'
import os, sys, torch
from torch.utils import cpp_extension as ce
src = r"""
#include <torch/extension.h>
__global__ void sq_k(const float *x, float *o, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) o[i] = x[i] * x[i]; }
torch::Tensor sq(torch::Tensor x) { auto o = torch::empty_like(x); int n = x.numel(); sq_k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), o.data_ptr<float>(), n); return o; }
"""
m = ce.load_inline("cudaenv_sq", cpp_sources="torch::Tensor sq(torch::Tensor x);", cuda_sources=src, functions=["sq"],
                   build_directory=os.environ["EXT_DIR"])
x = (torch.arange(1 << 16, dtype=torch.float32) % 129 - 64) / 64
err = (m.sq(x.cuda()).cpu() - x * x).abs().max().item()
print("    CUDA_HOME", ce.CUDA_HOME, "max err", err)
print("    cudnn dirs", sorted({os.path.dirname(l.split()[-1]) for l in open("/proc/self/maps") if "libcudnn" in l}))
sys.exit(0 if err == 0 and ce.CUDA_HOME == os.environ["CUDA_HOME"] else 1)
PY
mkdir -p "$W/ext"
EXT_DIR=$W/ext TORCH_CUDA_ARCH_LIST=9.0 PATH=$PATH:$VBIN "$BIN" exec --for "$TORCH_PY" -- "$TORCH_PY" "$W/ext.py" 2>&1 | tail -4
[ "${PIPESTATUS[0]}" -eq 0 ] && ok "the extension built with $P/bin/nvcc ran exact under exec --for" || bad "the extension failed"
echo "  wall time: $(( $(date +%s) - T0 )) s"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
