#!/usr/bin/env bash
# The workstation journey (tests/journeys/workstation.bats) on a real GPU
# machine, against the machine's own CUDA (CUDA_SYS, default
# /usr/local/cuda-13.0) and its PyTorch venv (TORCH_PY, default
# /opt/torch/.venv/bin/python).  The same sequence, step for step:
#   1 adopt --scan       finds CUDA_SYS on the real machine (read only)
#   2 adopt CUDA_SYS     into a fresh store
#   3 verify ADOPTED     every step on the GPU (the loader compares files: the
#                        adopted prefix is links into CUDA_SYS), exit 0
#   4 install NAME       the toolchain tests/gpu/run.sh packs from this machine's
#                        CUDA + the venv's cuDNN wheel, from the loopback server
#   5 use NAME           in bash: its nvcc and lib64 first, CUDA_HOME from before
#                        restored by use system; then verify NAME while the shell
#                        holds the adopted toolchain's lib64: exit 0
#   6 verify NAME --framework torch --python TORCH_PY: torch runs on it (exit 0,
#                        or 7 with only framework.foreign-library (+ cudnn-mixed): the venv's own
#                        nvidia-* wheels, which tests/gpu/framework.sh covers)
#   7 global NAME --system   in a sysroot whose /usr/local/cuda is (a link to)
#                        CUDA_SYS: the real /usr/local and ld.so.cache are never
#                        touched (ldconfig -r SYSROOT)
#   8 verify             no version: the system switch's target, exit 0
#   9 global system --system   restores the link to CUDA_SYS
#  10 verify             no version: the machine's own CUDA as an ad-hoc adopted
#                        tree (files skipped, the rest passed), exit 0
# Usage (root): run(carry=[".devdeps/gpu"], command="tests/gpu/journeys.sh")
# after tests/gpu/devdeps.sh; OUT=dir keeps the JSON reports.
set -u
pass=0 fail=0
cd "$(dirname "$0")/../.." || exit 1
TORCH_PY=${TORCH_PY:-/opt/torch/.venv/bin/python}
CUDA_SYS=${CUDA_SYS:-/usr/local/cuda-13.0}
[ "$(id -u)" -eq 0 ] || { echo "tests/gpu/journeys.sh runs as root (global --system in a sysroot)"; exit 1; }
REAL_CUDA=$(readlink /usr/local/cuda || true)
REAL_CACHE=$(sha256sum /etc/ld.so.cache 2>/dev/null || true)
WHEEL_CUDNN=$("$TORCH_PY" -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$WHEEL_CUDNN" ] && export CUDNN_SRC=$WHEEL_CUDNN
export CUDA_SRC=$CUDA_SYS GPU_INSTALL_ONLY=1 GPU_KEEP_MIRROR=1 GPU_FULL_LIBS=${GPU_FULL_LIBS-1}
# packs, serves and installs NAME into $W/good (run.sh's W, BIN, NAME, OUT, ok/bad/check)
source tests/gpu/run.sh || { echo "the toolchain could not be packed and installed"; exit 1; }
unset CUDAENV_VERSION LD_LIBRARY_PATH LIBRARY_PATH CUDA_PATH CUDNN_PATH CUDAENV_WARNED
export CUDA_HOME=/usr/local/cuda   # what a profile script set before cudaenv
all="files=passed versions=passed loader=passed driver=passed device=passed kernel=passed nvcc=passed"

# the machine: a sysroot whose /usr/local/cuda links (relatively, out of it) to CUDA_SYS
S=$W/sys
mkdir -p "$S/etc/ld.so.conf.d" "$S/usr/local" "$S/opt"
echo 'include /etc/ld.so.conf.d/*.conf' > "$S/etc/ld.so.conf"
ln -s "$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$CUDA_SYS" "$S/usr/local")" "$S/usr/local/cuda"
chmod -R go-w "$W"
export CUDAENV_ROOT=$S/opt/cudaenv

echo "== 1 adopt --scan (the real machine, read only)"
scan=$(env -u CUDAENV_SYSROOT "$BIN" adopt --scan 2>&1); echo "$scan" | sed 's/^/  | /'
grep -q "^$CUDA_SYS " <<<"$scan" && ok "adopt --scan offers $CUDA_SYS" || bad "adopt --scan does not offer $CUDA_SYS"

echo "== 2 adopt $CUDA_SYS"
msg=$("$BIN" adopt "$CUDA_SYS" 2>&1); rc=$?; echo "  | $msg"
A=$(sed -n "s|.*adopted $CUDA_SYS as \([^ ;:]*\).*|\1|p" <<<"$msg" | head -1)
[ "$rc" -eq 0 ] && [ -n "$A" ] && ok "adopted as $A" || { bad "adopt: exit $rc"; echo "$pass passed, $fail failed"; exit 1; }

echo "== 3 verify $A"
"$BIN" verify "$A" --json > "$OUT/j-adopted.json"; rc=$?
check "$OUT/j-adopted.json" "$rc" 0 "verify of the adopted $CUDA_SYS: every step passed, exit 0" $all
"$BIN" verify "$A" > "$OUT/j-adopted.txt" 2>&1
[ "$(grep -c 'also:' "$OUT/j-adopted.txt")" -eq 0 ] && ok "no repeated 'also:' lines" || bad "'also:' lines in $OUT/j-adopted.txt"

echo "== 4 install $NAME from the loopback server"
server_start "$M" >/dev/null || { bad "the loopback server did not start again"; exit 1; }   # install.sh stopped it
export CUDAENV_MANIFEST=$SERVER_URL/manifest.json CUDAENV_MANIFEST_UNSIGNED=1   # made here, served on loopback: nothing to sign
"$BIN" install --insecure "$NAME" > "$OUT/j-install.log" 2>&1; rc=$?
sed 's/^/  | /' "$OUT/j-install.log"
P=$CUDAENV_ROOT/versions/$NAME
[ "$rc" -eq 0 ] && [ -f "$P/.cudaenv-receipt.json" ] && ok "install $NAME: exit 0" || { bad "install: exit $rc"; echo "$pass passed, $fail failed"; exit 1; }

echo "== 5 use $NAME in bash; verify it from a shell that holds $A"
out=$(bash --norc -c 'eval "$("$1" init bash)"; cudaenv use -q "$2" || exit 9
    echo "$CUDA_HOME|$(command -v nvcc)|${LD_LIBRARY_PATH%%:*}"; cudaenv use -q system; echo "$CUDA_HOME"' _ "$BIN" "$NAME" 2>&1)
echo "$out" | sed 's/^/  | /'
[ "$out" = "$P|$P/bin/nvcc|$P/lib64"$'\n'/usr/local/cuda ] && ok "use: the toolchain's nvcc and lib64 first; CUDA_HOME restored by use system" \
    || bad "use: $out"
LD_LIBRARY_PATH=$CUDAENV_ROOT/versions/$A/lib64 "$BIN" verify "$NAME" --json > "$OUT/j-installed.json"; rc=$?
check "$OUT/j-installed.json" "$rc" 0 "verify $NAME in its own environment while the shell holds $A: exit 0" $all cudnn=passed

echo "== 6 verify $NAME --framework torch --python $TORCH_PY"
"$BIN" verify "$NAME" --framework torch --python "$TORCH_PY" --json > "$OUT/j-framework.json"; rc=$?
if python3 - "$OUT/j-framework.json" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); rc = int(sys.argv[2])
codes = [f["code"] for f in d["findings"]]
print("    torch", d["framework"].get("version"), "findings:", codes)
# the venv's own nvidia-* wheels (foreign-library) and, through them, a cuDNN whose parts come from the
# wheel and the toolchain (cudnn-mixed): what torch does in a toolchain's environment (seen on the H200)
sys.exit(0 if (rc == 0 and not codes) or (rc == 7 and set(codes) <= {"framework.foreign-library", "framework.cudnn-mixed"}
                                          and "framework.foreign-library" in codes) else 1)
PY
then ok "torch on $NAME: exit $rc (7 only for the venv's own nvidia-* wheels)"; else bad "verify --framework torch: exit $rc"; fi

echo "== 7 global $NAME --system (sysroot $S)"
CUDAENV_SYSROOT=$S "$BIN" global "$NAME" --system > "$OUT/j-switch.log" 2>&1; rc=$?
sed 's/^/  | /' "$OUT/j-switch.log"
[ "$rc" -eq 0 ] && [ "$(readlink "$S/usr/local/cuda")" = "${P#"$S"}" ] && ok "the sysroot's /usr/local/cuda -> $NAME" \
    || bad "global --system: exit $rc, link $(readlink "$S/usr/local/cuda")"

echo "== 8 verify (no version): the system switch's target"
CUDAENV_SYSROOT=$S "$BIN" verify --json > "$OUT/j-plain-switch.json"; rc=$?
check "$OUT/j-plain-switch.json" "$rc" 0 "plain verify after the switch: $NAME, every step passed" $all
python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["toolchain"]; print("    ", t["name"], "|", t["selected_by"]); sys.exit(t["name"] != sys.argv[2])' \
    "$OUT/j-plain-switch.json" "$NAME" && ok "it names the switch's target" || bad "plain verify checked another toolchain"

echo "== 9 global system --system: the machine's own CUDA back"
CUDAENV_SYSROOT=$S "$BIN" global system --system > "$OUT/j-restore.log" 2>&1; rc=$?
[ "$rc" -eq 0 ] && [ "$(readlink -f "$S/usr/local/cuda")" = "$(readlink -f "$CUDA_SYS")" ] && ok "restored: /usr/local/cuda -> $CUDA_SYS" \
    || bad "restore: exit $rc"

echo "== 10 verify (no version): the machine's own CUDA, ad hoc"
CUDAENV_SYSROOT=$S "$BIN" verify --json > "$OUT/j-plain-own.json"; rc=$?
check "$OUT/j-plain-own.json" "$rc" 0 "plain verify after the restore: the machine's own CUDA, files skipped, the rest passed" \
    files=skipped versions=passed loader=passed driver=passed device=passed kernel=passed nvcc=passed
python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["toolchain"]; print("    ", t["name"], t["adhoc"], "|", t["selected_by"]); sys.exit(not t["adhoc"])' \
    "$OUT/j-plain-own.json" && ok "it says it checked the machine's own CUDA" || bad "plain verify: not the machine's own"

[ "$(readlink /usr/local/cuda || true)" = "$REAL_CUDA" ] && [ "$(sha256sum /etc/ld.so.cache 2>/dev/null || true)" = "$REAL_CACHE" ] \
    && ok "the real /usr/local/cuda and ld.so.cache are untouched" || bad "the real /usr/local/cuda or ld.so.cache changed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
