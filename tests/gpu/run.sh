#!/usr/bin/env bash
# `cudaenv verify` on a real GPU (TESTING.md, "The device machine"): builds
# NVIDIA-shaped artifacts from the CUDA toolkit and cuDNN installed on this
# machine (a makeself runfile honouring the silent toolkit flags, a cuDNN
# tar.xz, a manifest with their sha256 and size), serves them on 127.0.0.1
# with tests/server/httpd.py, installs them with `cudaenv install` into a
# fresh CUDAENV_ROOT, shows switching (env, exec of an nvcc-built program),
# runs verify --json and verify --bench --json and checks that every step
# passed, then breaks the installed toolchain on purpose and checks each
# break is reported as the right failure:
#   a cuDNN header from another release  -> versions failed, exit 7
#   a truncated libcudnn                 -> files + versions failed, exit 7
#   CUDA_VISIBLE_DEVICES=-1              -> GPU steps skipped, exit 8
#   another libcudart first in LD_LIBRARY_PATH -> loader failed, exit 7
# Without a GPU (the CI machine) it stops after install, switching and one
# verify (exit 8 expected).
# Usage: tests/gpu/run.sh   (OUT=dir for the reports; CUDA_SRC=/usr/local/cuda-13.0;
#   CUDNN_SRC=dir: the libcudnn.so.9* to pack (its ../include has the headers);
#   GPU_INSTALL_ONLY=1 when sourced: stop once the toolchain is installed;
#   GPU_FULL_LIBS=1: the toolkit with every shared library, not only what verify needs;
#   GPU_MODE=lay lays the toolchain into versions/ directly, as before, without install;
#   GPU_MODE=redist installs it from NVIDIA-style per-component archives (tests/gpu/components.sh);
#   GPU_CUDNN_FIXTURE=1 uses a fixture cuDNN 9 (fx_cudnn) when none is found)
# Binaries: GPU_BIN (a release's bin/cudaenv: tests/gpu/release.sh), else .devdeps/gpu (tests/gpu/devdeps.sh: light + full binary with their
# libraries, makeself) when present, else .devdeps/verify (light only: lay mode),
# else $BUILD (default build).
set -u
cd "$(dirname "$0")/../.."
REPO=$PWD
TESTS_DIR=$REPO/tests
source tests/lib/fixtures.sh
source tests/lib/server.bash
OUT=${OUT:-/tmp/cudaenv-gpu-out}
mkdir -p "$OUT"
DD=$REPO/.devdeps/gpu
if [ -n "${GPU_BIN:-}" ]; then
    # tests/gpu/release.sh: a release installed as a user installs it (install.sh), its own
    # libraries beside it; makeself from .devdeps for the runfile mode only
    BIN=$GPU_BIN
    [ -d "$DD/makeself" ] && export PATH=$DD/makeself:$PATH FX_MAKESELF_HEADER=$DD/makeself/makeself-header.sh
elif [ -x "$DD/bin/cudaenv" ]; then
    BIN=$DD/bin/cudaenv
    export PATH=$DD/makeself:$PATH
    [ -f /usr/share/makeself/makeself-header.sh ] || export FX_MAKESELF_HEADER=$DD/makeself/makeself-header.sh
elif [ -x "$REPO/.devdeps/verify/bin/cudaenv" ]; then
    BIN=$REPO/.devdeps/verify/bin/cudaenv
    export LD_LIBRARY_PATH=$REPO/.devdeps/verify/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
    BIN=$REPO/${BUILD:-build}/bin/cudaenv
fi
MODE=${GPU_MODE:-install}
if [ "$MODE" = redist ] && [ ! -x "$(dirname "$BIN")/../libexec/cudaenv/cudaenv-full" ]; then
    echo "GPU_MODE=redist needs the full binary (tests/gpu/devdeps.sh)"; exit 1
fi
if [ "$MODE" = install ] && { [ ! -x "$(dirname "$BIN")/../libexec/cudaenv/cudaenv-full" ] || ! command -v makeself >/dev/null; }; then
    echo "no full binary next to $BIN or no makeself: laying the toolchain into versions/ instead of installing it"
    MODE=lay
fi
GPU=1
[ -e /dev/nvidia0 ] || [ -e /dev/nvidiactl ] || GPU=0
CUDA_SRC=${CUDA_SRC:-/usr/local/cuda-13.0}
W=$(mktemp -d /tmp/cudaenv-gpu.XXXXXX)
trap 'server_stop >/dev/null 2>&1; rm -rf "$W"' EXIT
export HOME=$W/home NO_COLOR=1
mkdir -p "$HOME"
unset CUDAENV_VERSION CUDAENV_MANIFEST CUDAENV_MIRROR
pass=0 fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
t() { local s; s=$(date +%s%N); "$@"; local rc=$?; echo "  ($(( ($(date +%s%N) - s) / 1000000 )) ms: $*)"; return $rc; }

# ---- the toolchain, from what is installed here ----
src_inc=$(readlink -f "$CUDA_SRC/include")
src_lib=$(readlink -f "$CUDA_SRC/lib64")
cudnn_lib=
for d in ${CUDNN_SRC:-} /usr/lib/x86_64-linux-gnu "$src_lib" $(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__) + "/lib")' 2>/dev/null); do
    if ls "$d"/libcudnn.so.9* >/dev/null 2>&1; then cudnn_lib=$d; break; fi
done
cudnn_hdr=
for h in ${CUDNN_SRC:+$CUDNN_SRC/../include/cudnn_version.h} /usr/include/cudnn_version.h /usr/include/x86_64-linux-gnu/cudnn_version_v9.h \
         /usr/include/x86_64-linux-gnu/cudnn_version.h "$src_inc/cudnn_version.h" "$cudnn_lib/../include/cudnn_version.h"; do
    [ -e "$h" ] && { cudnn_hdr=$(readlink -f "$h"); break; }
done
if { [ -z "$cudnn_lib" ] || [ -z "$cudnn_hdr" ]; } && [ -n "${GPU_CUDNN_FIXTURE:-}" ]; then
    fx_cudnn "$W/fx-cudnn" 9.1.0 13
    cudnn_lib=$W/fx-cudnn/lib cudnn_hdr=$W/fx-cudnn/include/cudnn_version.h
    echo "no cuDNN 9 found: using the fixture cuDNN 9.1.0 (GPU_CUDNN_FIXTURE)"
fi
[ -n "$cudnn_lib" ] && [ -n "$cudnn_hdr" ] || { echo "no cuDNN 9 found (lib: '$cudnn_lib', header: '$cudnn_hdr')"; exit 1; }
cmaj=$(sed -n 's/^#define CUDNN_MAJOR *//p' "$cudnn_hdr"); cmin=$(sed -n 's/^#define CUDNN_MINOR *//p' "$cudnn_hdr")
cpat=$(sed -n 's/^#define CUDNN_PATCHLEVEL *//p' "$cudnn_hdr")
cudnn_ver=$cmaj.$cmin.$cpat
if [ -f "$CUDA_SRC/version.json" ]; then
    cuda_ver=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cuda"]["version"])' "$CUDA_SRC/version.json")
else
    cuda_ver=$("$CUDA_SRC/bin/nvcc" --version | sed -n 's/.*, V\([0-9.]*\).*/\1/p')
fi
cuda_ver=$(echo "$cuda_ver" | cut -d. -f1-3)
NAME=$cuda_ver+cudnn$cudnn_ver
echo "toolkit $CUDA_SRC (CUDA $cuda_ver), cuDNN $cudnn_ver from $cudnn_lib + $cudnn_hdr -> toolchain $NAME"

# lay_toolkit TK: the subset of the toolkit verify needs, the way NVIDIA's
# runfile lays it out (include -> targets/x86_64-linux/include, lib64 ->
# targets/x86_64-linux/lib, version.json), plus what cuDNN links against
# from CUDA (cuBLAS, nvJitLink ...), as the full runfile would have it.
lay_toolkit() {
    local tk=$1 tl=$1/targets/x86_64-linux
    mkdir -p "$tk/bin" "$tl/lib" "$tl/include"
    local f
    for f in nvcc nvcc.profile ptxas fatbinary nvlink cudafe++ bin2c crt; do
        [ -e "$CUDA_SRC/bin/$f" ] && cp -a "$CUDA_SRC/bin/$f" "$tk/bin/"
    done
    cp -a "$CUDA_SRC/nvvm" "$tk/"
    cp -a "$src_inc/." "$tl/include/"
    rm -f "$tl"/include/cudnn*.h
    ln -s targets/x86_64-linux/include "$tk/include"
    ln -s targets/x86_64-linux/lib "$tk/lib64"
    if [ -f "$CUDA_SRC/version.json" ]; then
        cp "$CUDA_SRC/version.json" "$tk/"
    else  # wheel-built toolkits have none; the runfile always does
        local nv; nv=$("$CUDA_SRC/bin/nvcc" --version | sed -n 's/.*, V\([0-9.]*\).*/\1/p')
        printf '{\n "cuda" : { "name" : "CUDA SDK", "version" : "%s" },\n "cuda_cudart" : { "name" : "CUDA Runtime (cudart)", "version" : "%s" },\n "cuda_nvcc" : { "name" : "CUDA NVCC", "version" : "%s" }\n}\n' \
            "$cuda_ver" "$nv" "$nv" > "$tk/version.json"
    fi
    cp -a "$src_lib"/libcudart.so* "$src_lib"/libnvrtc.so* "$src_lib"/libnvrtc-builtins.so* "$tl/lib/"
    # GPU_FULL_LIBS=1: every shared library of the toolkit, as the real runfile lays it (what a framework links)
    [ -n "${GPU_FULL_LIBS:-}" ] && cp -an "$src_lib"/lib*.so* "$tl/lib/"
    for f in libcudart_static.a libcudadevrt.a libculibos.a; do
        [ -e "$src_lib/$f" ] && cp -a "$src_lib/$f" "$tl/lib/"
    done
    for f in "$cudnn_lib"/libcudnn*.so.9*; do
        ldd "$f" 2>/dev/null | awk '/=> \// {print $3}'
    done | sort -u | while read -r dep; do
        case "$(basename "$dep")" in
            libcublas*|libnvrtc*|libnvJitLink*|libcudart*) [ -e "$tl/lib/$(basename "$dep")" ] || cp -L "$dep" "$tl/lib/";;
        esac
    done
}

# lay_cudnn DIR: NVIDIA's archive tree {include,lib,LICENSE} (Debian-style
# *_v9.h header names lose the suffix)
lay_cudnn() {
    local d=$1 f b
    mkdir -p "$d/include" "$d/lib"
    cp -a "$cudnn_lib"/libcudnn*.so.9* "$d/lib/"
    for f in "$d"/lib/libcudnn*.so.9; do  # the link -lcudnn needs, as in NVIDIA's tarball
        b=$(basename "$f" .9); [ -e "$d/lib/$b" ] || ln -s "$(basename "$f")" "$d/lib/$b"
    done
    for f in "$(dirname "$cudnn_hdr")"/cudnn*.h; do
        b=$(basename "$f"); b=${b/_v9/}
        cp -L "$f" "$d/include/$b"
    done
    local lic
    for lic in "$cudnn_lib/../LICENSE" /usr/share/doc/libcudnn9*/copyright; do
        [ -f "$lic" ] && { cp -L "$lic" "$d/LICENSE"; break; }
    done
    [ -f "$d/LICENSE" ] || echo "cuDNN $cudnn_ver, packed from $cudnn_lib by tests/gpu/run.sh" > "$d/LICENSE"
}

lay_toolchain() {  # GPU_MODE=lay: toolkit + cuDNN straight into the prefix
    local tk=$1
    lay_toolkit "$tk"
    lay_cudnn "$W/cudnn-tree"
    cp -a "$W/cudnn-tree/lib/." "$tk/lib64/"
    cp -a "$W/cudnn-tree/include/." "$tk/include/"
    rm -rf "$W/cudnn-tree"
}

# check FILE RC WANT_RC step=status...: the JSON document, field by field
check() {
    local file=$1 rc=$2 want=$3 label=$4; shift 4
    if python3 - "$file" "$rc" "$want" "$@" <<'PY'
import json, sys
f, rc, want = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = json.load(open(f))
errs = []
if rc != want: errs.append(f"exit {rc}, want {want}")
if d["exit_code"] != rc: errs.append(f"exit_code field {d['exit_code']} != {rc}")
for k in ("toolchain", "steps", "versions", "devices", "timings"):
    if k not in d: errs.append(f"no key {k}")
st = {s["id"]: s for s in d["steps"]}
for spec in sys.argv[4:]:
    step, _, status = spec.partition("=")
    want_status, _, needle = status.partition(":")
    s = st[step]
    if s["status"] != want_status: errs.append(f"{step} is {s['status']}, want {want_status}: {s['summary']}")
    elif needle and needle not in s["summary"] + " ".join(s["evidence"]): errs.append(f"{step}: '{needle}' not in: {s['summary']}")
for s in d["steps"]:
    print(f"    {s['n']} {s['id']:9} {s['status']:8} {s['ms']:8.1f} ms  {s['summary'][:150]}")
if errs:
    print("    " + "\n    ".join(errs)); sys.exit(1)
PY
    then ok "$label"; else bad "$label"; fi
}

export CUDAENV_ROOT=$W/good
P=$CUDAENV_ROOT/versions/$NAME
if [ "$MODE" = lay ]; then
    t lay_toolchain "$P"
    t fx_receipt "$P" 580.65.06 15 7.5 12.1
    echo "laid $(find "$P" -type f | wc -l) files, $(du -sh "$P" | cut -f1) in $P"
elif [ "$MODE" = redist ]; then
    source tests/gpu/components.sh || { echo "$pass passed, $fail failed (component install)"; exit 1; }
else
    source tests/gpu/install.sh || { echo "$pass passed, $fail failed (install)"; exit 1; }
fi
# sourced by another GPU script (framework.sh) that only needs the toolchain
[ -n "${GPU_INSTALL_ONLY:-}" ] && return 0
if [ "$GPU" = 0 ]; then
    echo "== no GPU here: verify runs the host steps only"
    "$BIN" verify "$NAME" --json > "$OUT/verify.json"; rc=$?
    check "$OUT/verify.json" "$rc" 8 "verify without a GPU: host steps passed, exit 8" \
        files=passed versions=passed loader=passed driver=skipped
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]; exit
fi

all_passed="files=passed versions=passed loader=passed driver=passed device=passed kernel=passed nvcc=passed cudnn=passed"
# a component install from the machine's PyTorch venv carries its NCCL wheel: step 9 runs it on the GPU
[ -n "${NCCL_REL:-}" ] && all_passed="$all_passed nccl=passed"

echo "== verify (no --bench), three runs for the timing"
for i in 1 2 3; do
    s=$(date +%s%N); "$BIN" verify "$NAME" --json > "$OUT/verify.json"; rc=$?; e=$(date +%s%N)
    echo "  run $i: exit $rc, wall $(( (e - s) / 1000000 )) ms"
done
check "$OUT/verify.json" "$rc" 0 "verify: every step passed" $all_passed
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("  timings (ms):", d["timings"]); print("  devices:", d["devices"]); print("  versions:", json.dumps(d["versions"])); [print("  step %s: %s: %s" % (s["id"], s["status"], s["summary"])) for s in d["steps"] if s["id"] == "nccl"]' "$OUT/verify.json"
"$BIN" -v verify "$NAME" > "$OUT/table.txt" 2>&1
cat "$OUT/table.txt"

echo "== verify --bench"
"$BIN" verify "$NAME" --bench --json > "$OUT/bench.json"; rc=$?
check "$OUT/bench.json" "$rc" 0 "verify --bench: every step passed" $all_passed
python3 - "$OUT/bench.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["bench"]
t = b.get("torch") or {}
print("  bench:", json.dumps(b))
for k in ("h2d_gbs", "d2h_gbs", "d2d_gbs", "conv_tflops"):
    ours, theirs = b.get(k), t.get(k)
    r = f"{ours / theirs:.3f}" if ours and theirs else "-"
    print(f"  {k:12} cudaenv {ours}  torch {theirs}  ratio {r}")
PY

echo "== verify --deep: every file re-hashed against the receipt's sha256"
"$BIN" verify "$NAME" --deep --json > "$OUT/deep.json"; rc=$?
check "$OUT/deep.json" "$rc" 0 "verify --deep: files re-hashed against the receipt, every step passed" \
    "files=passed:sha256" $all_passed

echo "== broken: cuDNN header from another release"
export CUDAENV_ROOT=$W/hdr
mkdir -p "$CUDAENV_ROOT/versions"; cp -al "$P" "$CUDAENV_ROOT/versions/"
H=$CUDAENV_ROOT/versions/$NAME/include/cudnn_version.h
sed "s/^#define CUDNN_MINOR .*/#define CUDNN_MINOR $((cmin + 1))/" "$H" > "$H.new" && rm "$H" && mv "$H.new" "$H"
"$BIN" verify "$NAME" --json > "$OUT/broken-header.json"; rc=$?
check "$OUT/broken-header.json" "$rc" 7 "mismatched cuDNN header -> versions failed, exit 7" "versions=failed:cudnn_version.h"

echo "== broken: truncated libcudnn"
export CUDAENV_ROOT=$W/trunc
mkdir -p "$CUDAENV_ROOT/versions"; cp -al "$P" "$CUDAENV_ROOT/versions/"
L=$(readlink -f "$CUDAENV_ROOT/versions/$NAME/lib64/libcudnn.so.9")
head -c 65536 "$L" > "$L.new" && rm "$L" && mv "$L.new" "$L"
"$BIN" verify "$NAME" --json > "$OUT/broken-trunc.json"; rc=$?
check "$OUT/broken-trunc.json" "$rc" 7 "truncated libcudnn -> files and versions failed, exit 7" \
    "files=failed:size differs" "versions=failed:libcudnn" "cudnn=failed"

echo "== no device: CUDA_VISIBLE_DEVICES=-1"
export CUDAENV_ROOT=$W/good
CUDA_VISIBLE_DEVICES=-1 "$BIN" verify "$NAME" --json > "$OUT/no-device.json"; rc=$?
check "$OUT/no-device.json" "$rc" 8 "CUDA_VISIBLE_DEVICES=-1 -> GPU steps skipped, exit 8" \
    files=passed versions=passed loader=passed driver=passed "device=skipped:CUDA_VISIBLE_DEVICES" kernel=skipped cudnn=skipped

echo "== shadowed: the system's libcudart first in the shell's LD_LIBRARY_PATH"
# verify X runs in X's own environment, as exec X does (verify.bats): the shell's
# shadowing copy is a warning naming it, and every GPU step still passes
LD_LIBRARY_PATH=$src_lib:${LD_LIBRARY_PATH:-} "$BIN" verify "$NAME" --json > "$OUT/shadow.json"; rc=$?
check "$OUT/shadow.json" "$rc" 0 "the shell's shadowing libcudart -> a warning, verify X in X's environment passes" \
    loader=passed kernel=passed cudnn=passed

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
