#!/usr/bin/env bash
# `cudaenv verify --framework torch` on the device machine (issue 16): the
# toolchain is built and installed exactly as tests/gpu/run.sh does (from
# this machine's CUDA 13.0, with the cuDNN of the venv's nvidia-cudnn wheel,
# the release PyTorch was built against, through a loopback server), then:
#   verify --framework torch --python /opt/torch/.venv/bin/python  -> exit 0, no finding
#   the wheel's libcudnn mapped instead (LD_PRELOAD)               -> exit 7, framework.foreign-library naming the wheel
#   CUDA_VISIBLE_DEVICES=-1                                        -> exit 7, framework.no-gpu naming it
# Usage: run(carry=[".devdeps/gpu"], command="tests/gpu/framework.sh")  (tests/gpu/devdeps.sh first)
set -u
cd "$(dirname "$0")/../.."
TORCH_PY=${TORCH_PY:-/opt/torch/.venv/bin/python}
echo "== $TORCH_PY"
"$TORCH_PY" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "cuDNN compiled", torch._C._cudnn.getCompileVersion(), "GPUs", torch.cuda.device_count())'
WHEEL_CUDNN=$("$TORCH_PY" -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))')
"$TORCH_PY" -m pip list 2>/dev/null | grep -i -E '^(torch|nvidia-cudnn|nvidia-cuda-runtime) '
echo "wheel cuDNN: $WHEEL_CUDNN: $(cd "$WHEEL_CUDNN" && ls libcudnn.so*)"
export CUDNN_SRC=$WHEEL_CUDNN GPU_INSTALL_ONLY=1
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

echo "== verify $NAME --framework torch --python $TORCH_PY"
t "$BIN" verify "$NAME" --framework torch --python "$TORCH_PY"; echo "exit $?"
"$BIN" verify "$NAME" --framework torch --python "$TORCH_PY" --json > "$OUT/fw-pass.json"; rc=$?
fwcheck "$OUT/fw-pass.json" "$rc" 0 "torch runs on the toolchain: no finding, exit 0" \
    'not d["findings"] and all(c["ok"] for c in d["framework"]["checks"]) and len(d["framework"]["checks"]) == 2 and all(m.startswith(d["toolchain"]["prefix"]) for m in d["framework"]["maps"])'

echo "== the pip wheel's libcudnn mapped instead of the toolchain's (LD_PRELOAD=$WHEEL_CUDNN/libcudnn.so.9)"
LD_PRELOAD=$WHEEL_CUDNN/libcudnn.so.9 "$BIN" verify "$NAME" --framework torch --python "$TORCH_PY"; echo "exit $?"
LD_PRELOAD=$WHEEL_CUDNN/libcudnn.so.9 "$BIN" verify "$NAME" --framework torch --python "$TORCH_PY" --json > "$OUT/fw-wheel.json"; rc=$?
fwcheck "$OUT/fw-wheel.json" "$rc" 7 "the wheel's libcudnn -> framework.foreign-library naming nvidia-cudnn, exit 7" \
    '"nvidia-cudnn" in fs["framework.foreign-library"]["summary"] and "'"$WHEEL_CUDNN"'" in fs["framework.foreign-library"]["evidence"]'

echo "== CUDA_VISIBLE_DEVICES=-1"
CUDA_VISIBLE_DEVICES=-1 "$BIN" verify "$NAME" --framework torch --python "$TORCH_PY" --json > "$OUT/fw-cvd.json"; rc=$?
fwcheck "$OUT/fw-cvd.json" "$rc" 7 "CUDA_VISIBLE_DEVICES=-1 -> framework.no-gpu naming it, exit 7" \
    '"CUDA_VISIBLE_DEVICES" in fs["framework.no-gpu"]["summary"]'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
