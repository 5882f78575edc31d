# Sourced by tests/gpu/run.sh (GPU_MODE=redist): packs the CUDA toolkit of
# this machine the way NVIDIA publishes it per component (redistrib JSON +
# <comp>/linux-x86_64/<comp>-linux-x86_64-<ver>-archive.tar.xz, one top
# directory, lib/ not lib64/), plus the cuDNN tarball, serves them on
# 127.0.0.1 and installs the tf profile + cuDNN 9 with `cudaenv install`
# (a manifest row tf-2.99 -> this CUDA + cuDNN, cuda.<ver>.redist pinned,
# no runfile at all).  Uses run.sh's W, BIN, NAME, cuda_ver, cudnn_ver,
# src_inc, src_lib, cudnn_lib, t/ok/bad, lay_cudnn; leaves P for verify.

M=$W/mirror
R=$M/compute/cuda/redist
CUDNN_TOP=cudnn-linux-x86_64-${cudnn_ver}_cuda${cuda_ver%%.*}-archive
CUDNN_REL=compute/cudnn/redist/cudnn/linux-x86_64/$CUDNN_TOP.tar.xz
mkdir -p "$R" "$M/$(dirname "$CUDNN_REL")" "$W/comp"
cudart_v=$cuda_ver
[ -f "$CUDA_SRC/version.json" ] && cudart_v=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cuda_cudart"]["version"])' "$CUDA_SRC/version.json" 2>/dev/null || echo "$cuda_ver")

# comp NAME: the tree W/comp/NAME-linux-x86_64-VER-archive (created empty)
comp_dir() { echo "$W/comp/$1-linux-x86_64-$cudart_v-archive"; }
split_toolkit() {
    local c d f b
    for c in cuda_cudart cuda_nvcc cuda_nvrtc libcublas libnvjitlink; do
        d=$(comp_dir $c); mkdir -p "$d/lib" "$d/include"
        echo "$c, packed from $CUDA_SRC by tests/gpu/components.sh" > "$d/LICENSE"
    done
    d=$(comp_dir cuda_nvcc); mkdir -p "$d/bin"
    for f in nvcc nvcc.profile ptxas fatbinary nvlink cudafe++ bin2c crt; do
        [ -e "$CUDA_SRC/bin/$f" ] && cp -a "$CUDA_SRC/bin/$f" "$d/bin/"
    done
    cp -a "$CUDA_SRC/nvvm" "$d/"
    for f in "$src_lib"/*; do
        b=$(basename "$f")
        case $b in
            libcudart*|libcudadevrt.a|libculibos.a) c=cuda_cudart ;;
            libnvrtc*) c=cuda_nvrtc ;;
            libcublas*) c=libcublas ;;
            libnvJitLink*) c=libnvjitlink ;;
            *) continue ;;
        esac
        cp -a "$f" "$(comp_dir $c)/lib/"
    done
    for f in "$src_inc"/*; do
        b=$(basename "$f")
        case $b in
            cudnn*) continue ;;
            nvrtc*) c=cuda_nvrtc ;;
            cublas*) c=libcublas ;;
            nvJitLink*) c=libnvjitlink ;;
            *) c=cuda_cudart ;;
        esac
        cp -a "$f" "$(comp_dir $c)/include/"
    done
}
pack_components() {
    local d c
    for d in "$W"/comp/*-archive; do
        c=$(basename "$d"); c=${c%%-linux-x86_64-*}
        mkdir -p "$R/$c/linux-x86_64"
        tar -C "$W/comp" --owner=0 --group=0 --numeric-owner -cf - "$(basename "$d")" \
            | xz ${GPU_XZ:--T0 -1} > "$R/$c/linux-x86_64/$(basename "$d").tar.xz" &
    done
    wait
}
echo "== pack: CUDA $cuda_ver from $CUDA_SRC as NVIDIA's per-component archives + cuDNN $cudnn_ver tarball"
t split_toolkit
t pack_components || { bad "packing the components failed"; return 1; }
rm -rf "$W/comp"
t lay_cudnn "$W/pack/$CUDNN_TOP"
pack_cudnn() { tar -C "$W/pack" --owner=0 --group=0 --numeric-owner -cf - "$CUDNN_TOP" | xz ${GPU_XZ:--T0 -1} > "$M/$CUDNN_REL"; }
t pack_cudnn || { bad "cuDNN tarball failed"; return 1; }
rm -rf "$W/pack"
# NCCL as NVIDIA ships it to pip users: the wheel of the machine's PyTorch venv
# (nvidia/nccl/{lib,include} + the Python side), re-zipped under NVIDIA's name
# as a streaming tool writes it (data descriptors: no sizes in the local
# headers) with a RECORD of every member's sha256 and size (tests/lib/wheel.py),
# so the install reads each entry to its end and checks it against RECORD
NCCL_SRC=${NCCL_SRC:-$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl /usr/local/lib/python3*/dist-packages/nvidia/nccl 2>/dev/null | head -1)}
NCCL_REL=
if [ -n "$NCCL_SRC" ] && [ -e "$NCCL_SRC/lib/libnccl.so.2" ]; then
    nccl_ver=$(sed -n 's/^#define NCCL_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' "$NCCL_SRC/include/nccl.h" | paste -sd.)
    NCCL_REL=pypi/nvidia_nccl_cu${cuda_ver%%.*}-$nccl_ver-py3-none-manylinux_2_18_x86_64.whl
    mkdir -p "$M/pypi"
    python3 "$TESTS_DIR/lib/wheel.py" "$M/$NCCL_REL" "nvidia_nccl_cu${cuda_ver%%.*}-$nccl_ver.dist-info" --shape streamed \
        --text nvidia/__init__.py= --tree "nvidia/nccl=$NCCL_SRC" \
        && python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); sys.exit(0 if z.getinfo("nvidia/nccl/lib/libnccl.so.2").flag_bits & 8 else 1)' "$M/$NCCL_REL" \
        && echo "  NCCL $nccl_ver wheel from $NCCL_SRC (streamed, with RECORD)" || NCCL_REL=
fi
find "$M" -name '*.tar.xz' -printf '  %s %P\n' | awk '{printf "  %8.1f MiB  %s\n", $1 / 1048576, $2}'

mk_redist() {
    python3 - "$M" "$cuda_ver" "$cudnn_ver" "$CUDNN_REL" "cuda${cuda_ver%%.*}" "$NCCL_REL" "${nccl_ver:-}" <<'PY'
import hashlib, json, os, sys
m, cuda, cudnn, cudnn_rel, cmaj, nccl_rel, nccl_ver = sys.argv[1:]
red = os.path.join(m, "compute/cuda/redist")
def digest(p):
    h, md = hashlib.sha256(), hashlib.md5()
    with open(p, "rb") as f:
        for b in iter(lambda: f.read(1 << 22), b""):
            h.update(b); md.update(b)
    return h.hexdigest(), md.hexdigest(), os.path.getsize(p)
doc = {"release_date": "2026-11-30", "release_label": cuda, "release_product": "cuda"}
for c in sorted(os.listdir(red)):
    d = os.path.join(red, c, "linux-x86_64")
    if not os.path.isdir(d): continue
    (f,) = os.listdir(d)
    sha, md5, size = digest(os.path.join(d, f))
    ver = f[len(c) + len("-linux-x86_64-"):-len("-archive.tar.xz")]
    doc[c] = {"name": "CUDA " + c, "license": "CUDA Toolkit", "version": ver,
              "linux-x86_64": {"relative_path": "%s/linux-x86_64/%s" % (c, f), "sha256": sha, "md5": md5, "size": str(size)}}
jp = os.path.join(red, "redistrib_%s.json" % cuda)
json.dump(doc, open(jp, "w"), indent=4)
jsha, _, jsize = digest(jp)
dsha, _, dsize = digest(os.path.join(m, cudnn_rel))
src = "tests/gpu/components.sh: packed from this machine's toolkit"
man = {"schema": 1, "updated": "2026-11-30",
       "profiles": {"tf": {"components": ["cuda_cudart", "libcublas", "libcufft", "libcurand", "libcusolver",
                                         "libcusparse", "cuda_cupti", "cuda_nvcc", "cuda_nvrtc", "cuda_cccl", "cuda_nvtx",
                                         "cuda_nvml_dev", "cuda_nvprune", "cuda_profiler_api", "cuda_nvdisasm",
                                         "libnvjitlink", "cuda_crt", "libnvvm"]}},
       "tensorflow": {"2.99": {"cuda": cuda, "cudnn": cudnn, "source": src}},
       "cuda": {cuda: {"min_driver": "580.65.06", "max_gcc": 15, "sm": {"min": "7.5", "max": "12.1"}, "source": src,
                       "redist": {"url": "compute/cuda/redist/redistrib_%s.json" % cuda, "sha256": jsha, "size": jsize}}},
       "cudnn": {cudnn: {"source": src, cmaj: {"linux-x86_64": {"url": cudnn_rel, "sha256": dsha, "size": dsize}}}}}
if nccl_rel:
    nsha, _, _ = digest(os.path.join(m, nccl_rel))
    man["nccl"] = {nccl_ver: {"source": src, cmaj: {"linux-x86_64": {"url": nccl_rel, "sha256": nsha}}}}
    man["tensorflow"]["2.99"]["nccl"] = nccl_ver
json.dump(man, open(os.path.join(m, "manifest.json"), "w"), indent=1)
print("  redistrib_%s.json: %d components, %.1f MiB" % (cuda, len(doc) - 3,
      sum(int(v["linux-x86_64"]["size"]) for k, v in doc.items() if isinstance(v, dict)) / 1048576))
PY
}
t mk_redist || { bad "redistrib JSON / manifest"; return 1; }
server_start "$M" >/dev/null || { bad "loopback server did not start"; return 1; }
export CUDAENV_MANIFEST=$SERVER_URL/manifest.json CUDAENV_MANIFEST_UNSIGNED=1   # made here, served on loopback: nothing to sign
echo "serving $M on $SERVER_URL"

echo "== install from the loopback server: cudaenv install --insecure tf-2.99 (tf profile + cuDNN $cudnn_ver)"
"$BIN" info --insecure tf-2.99 2>&1 | sed -n '/components/,/total/p' | sed 's/^/  | /'
s=$(date +%s%N)
"$BIN" install --insecure tf-2.99 > "$OUT/install.log" 2>&1; rc=$?
e=$(date +%s%N)
sed 's/^/  | /' "$OUT/install.log"
echo "  install wall time: $(( (e - s) / 1000000 )) ms (exit $rc)"
if [ "$rc" -eq 0 ]; then ok "install tf-2.99 ($NAME) from NVIDIA-style components on 127.0.0.1: exit 0"; else bad "install: exit $rc"; return 1; fi
[ "$(server_requests '/libcublas/linux-x86_64/')" -ge 1 ] && [ "$(server_requests 'linux.run')" -eq 0 ] \
    && ok "components came from the loopback server, no runfile" || bad "component requests"
[ "$(readlink "$P/lib64")" = targets/x86_64-linux/lib ] && [ -x "$P/bin/nvcc" ] && [ -d "$P/nvvm" ] \
    && ls "$P"/lib64/libcudnn.so.9* >/dev/null 2>&1 && ls "$P"/lib64/libcudart.so.* >/dev/null 2>&1 \
    && ok "runfile layout: bin/nvcc, nvvm/, lib64 -> targets/x86_64-linux/lib with libcudart + libcudnn" \
    || bad "composed prefix $P"
python3 - "$P" <<'PY' && ok "receipt: tf profile, every component with its sha256" || bad "receipt"
import json, os, sys
r = json.load(open(os.path.join(sys.argv[1], ".cudaenv-receipt.json")))
print("  receipt: profile %s, components %s, %d files" % (r.get("profile"), [c["name"] for c in r.get("components", [])], len(r["files"])))
assert r["profile"] == "tf" and len(r["components"]) >= 4 and all(len(c["sha256"]) == 64 for c in r["components"])
PY
if [ -n "$NCCL_REL" ]; then
    [ -e "$P/lib64/libnccl.so.2" ] && [ -f "$P/include/nccl.h" ] && ! find "$P/" -name '*.py' | grep -q . \
        && ok "NCCL $nccl_ver from its wheel: lib64/libnccl.so.2 and include/nccl.h, no Python files" \
        || bad "NCCL wheel not composed into $P"
    # byte-identical to the venv's files, every one the streamed wheel held
    nccl_diff=
    for f in "$NCCL_SRC"/lib/* "$NCCL_SRC"/include/*; do
        case $f in *.py) continue ;; esac
        [ -f "$f" ] && [ ! -L "$f" ] || continue
        d=lib64; case $f in */include/*) d=include ;; esac
        cmp -s "$f" "$P/$d/${f##*/}" || nccl_diff="$nccl_diff ${f#"$NCCL_SRC"/}"
    done
    [ -z "$nccl_diff" ] && ok "NCCL from the streamed wheel: every file byte-identical to $NCCL_SRC" \
        || bad "NCCL from the streamed wheel differs from $NCCL_SRC:$nccl_diff"
fi
"$BIN" list
server_stop >/dev/null 2>&1
unset CUDAENV_MANIFEST
rm -rf "$M"
return 0
