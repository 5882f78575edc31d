#!/usr/bin/env bash
# `cudaenv verify --framework torch` on the device machine (issue 16): the
# toolchain is built and installed exactly as tests/gpu/run.sh does (from
# this machine's CUDA 13.0, with the cuDNN of the venv's nvidia-cudnn wheel,
# the release PyTorch was built against, through a loopback server), then:
#   verify --framework torch --python /opt/torch/.venv/bin/python, as the venv
#     comes: torch maps the nvidia-cudnn wheel's libcudnn (and nvidia-cuda-runtime's
#     libcudart) whatever LD_LIBRARY_PATH says    -> exit 7, framework.foreign-library naming the wheel
#   the wheels' lib folders moved aside (as if uninstalled, the fix; put back
#     on exit)                                    -> exit 0, no finding
#   CUDA_VISIBLE_DEVICES=-1                       -> exit 7, framework.no-gpu naming it
# Usage: run(carry=[".devdeps/gpu"], command="tests/gpu/framework.sh")  (tests/gpu/devdeps.sh first)
set -u
cd "$(dirname "$0")/../.."
TORCH_PY=${TORCH_PY:-/opt/torch/.venv/bin/python}
echo "== $TORCH_PY"
"$TORCH_PY" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "cuDNN compiled", torch._C._cudnn.getCompileVersion(), "GPUs", torch.cuda.device_count())'
WHEEL_CUDNN=$("$TORCH_PY" -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))')
"$TORCH_PY" -m pip list 2>/dev/null | grep -i -E '^(torch|nvidia-cudnn|nvidia-cuda-runtime) '
echo "wheel cuDNN: $WHEEL_CUDNN: $(cd "$WHEEL_CUDNN" && ls libcudnn.so*)"
export CUDNN_SRC=$WHEEL_CUDNN GPU_INSTALL_ONLY=1 GPU_FULL_LIBS=1
source tests/gpu/run.sh || { echo "toolchain install failed"; exit 1; }

# fwcheck FILE RC WANT_RC LABEL PYTHON-EXPR: the JSON document (d, fs = findings by code)
fwcheck() {
    local file=$1 rc=$2 want=$3 label=$4 expr=$5
    if python3 - "$file" "$rc" "$want" "$expr" <<'PY'
import json, sys
f, rc, want, expr = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
d = json.load(open(f))
fs = {x["code"]: x for x in d["findings"]}
print("    findings:", [(x["code"], x["severity"], x["summary"]) for x in d["findings"]])
ok = rc == want and d["exit_code"] == rc and eval(expr)
if not ok: print(f"    exit {rc} (want {want}), check {expr!r} failed"); sys.exit(1)
PY
    then ok "$label"; else bad "$label"; fi
}

V=("$BIN" verify "$NAME" --framework torch --python "$TORCH_PY")
echo "== as the venv comes: PyTorch's wheel loads its own nvidia-* wheels (RPATH / preload) ahead of LD_LIBRARY_PATH"
t "${V[@]}"; echo "exit $?"
"${V[@]}" --json > "$OUT/fw-wheel.json"; rc=$?
fwcheck "$OUT/fw-wheel.json" "$rc" 7 "the wheel's libcudnn mapped instead -> framework.foreign-library naming nvidia-cudnn and the file, exit 7" \
    'any("nvidia-cudnn" in f["summary"] and "'"$WHEEL_CUDNN"'/libcudnn.so.9" in f["evidence"] for f in d["findings"] if f["code"] == "framework.foreign-library")'

# As if the wheels were uninstalled (the fix): their lib folders moved aside
# for the run and put back on exit.  Only on the device machine, which is
# handed back bare after the session.
SITE=${WHEEL_CUDNN%/nvidia/cudnn/lib}
HID=()
for d in "$SITE/nvidia/cudnn/lib" "$SITE/nvidia/cu13/lib"; do [ -d "$d" ] && HID+=("$d"); done
unhide() { local d; for d in "${HID[@]}"; do [ -d "$d.cudaenv-hidden" ] && mv "$d.cudaenv-hidden" "$d"; done; }
trap 'unhide; server_stop >/dev/null 2>&1; rm -rf "$W"' EXIT
hidden() {  # hidden CMD...: run CMD with the wheels' lib folders gone
    local d rc
    for d in "${HID[@]}"; do mv "$d" "$d.cudaenv-hidden"; done
    "$@"; rc=$?
    unhide
    return $rc
}
echo "== the nvidia-cudnn and nvidia-cu13 wheels' lib folders moved aside (as if uninstalled): the toolchain's are used"
hidden "${V[@]}"; echo "exit $?"
hidden "${V[@]}" --json > "$OUT/fw-pass.json"; rc=$?
fwcheck "$OUT/fw-pass.json" "$rc" 0 "torch runs on the toolchain: matmul + conv right, every libcudart/libcudnn from the toolchain, exit 0" \
    'not d["findings"] and len(d["framework"]["checks"]) == 2 and all(c["ok"] for c in d["framework"]["checks"]) and d["framework"]["maps"] and all(m.startswith(d["toolchain"]["prefix"] + "/") for m in d["framework"]["maps"])'

echo "== CUDA_VISIBLE_DEVICES=-1 (wheels hidden)"
CUDA_VISIBLE_DEVICES=-1 hidden "${V[@]}" --json > "$OUT/fw-cvd.json"; rc=$?
fwcheck "$OUT/fw-cvd.json" "$rc" 7 "CUDA_VISIBLE_DEVICES=-1 -> only framework.no-gpu, naming it, exit 7" \
    'list(fs) == ["framework.no-gpu"] and "CUDA_VISIBLE_DEVICES" in fs["framework.no-gpu"]["summary"]'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
