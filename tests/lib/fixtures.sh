# Fake toolchains that behave like real ones (TESTING.md), generated at test
# time: real shared objects with NVIDIA's SONAMEs and version entry points.
# Source this file; every function takes explicit paths.

# fx_soname_cudart 11.8.0 -> libcudart.so.11.0 ; 12.x -> libcudart.so.12
fx_soname_cudart() {
    local maj=${1%%.*}
    if [ "$maj" -le 11 ]; then echo "libcudart.so.$maj.0"; else echo "libcudart.so.$maj"; fi
}

# fx_toolkit DIR VERSION [NVCC_BUILD]: a CUDA toolkit tree like the runfile lays out:
# bin/nvcc, version.json, include/cuda_runtime_api.h, lib64/libcudart.so.* and
# lib64/libnvrtc.so.* (real shared objects answering the version).
fx_toolkit() {
    local dir=$1 ver=$2
    local maj=${ver%%.*} rest=${ver#*.}
    local min=${rest%%.*}
    local patch=89 num=$((maj * 1000 + min * 10))
    mkdir -p "$dir/bin" "$dir/include" "$dir/lib64" "$dir/nvvm/bin"
    cat > "$dir/bin/nvcc" <<NVCC
#!/bin/sh
case "\$1" in
  --version|-V) echo "nvcc: NVIDIA (R) Cuda compiler driver"
                echo "Cuda compilation tools, release $maj.$min, V$maj.$min.$patch"; exit 0;;
esac
echo "nvcc (cudaenv test fixture $ver): \$*" >&2
exit 0
NVCC
    chmod 755 "$dir/bin/nvcc"
    printf '#!/bin/sh\necho ptxas fixture\n' > "$dir/bin/ptxas"; chmod 755 "$dir/bin/ptxas"
    cat > "$dir/version.json" <<JSON
{
   "cuda" : { "name" : "CUDA SDK", "version" : "$ver" },
   "cuda_cudart" : { "name" : "CUDA Runtime (cudart)", "version" : "$maj.$min.$patch" },
   "cuda_nvcc" : { "name" : "CUDA NVCC", "version" : "$maj.$min.$patch" }
}
JSON
    cat > "$dir/include/cuda_runtime_api.h" <<H
/* cudaenv test fixture */
#define CUDART_VERSION $num
H
    local so; so=$(fx_soname_cudart "$ver")
    cat > "$dir/.cudart.c" <<C
int cudaRuntimeGetVersion(int *v) { *v = $num; return 0; }
int cudaDriverGetVersion(int *v) { *v = 0; return 0; }
const char *cudaenv_fixture_origin(void) { return "$dir"; }
C
    cc -shared -fPIC -Wl,-soname,"$so" -o "$dir/lib64/libcudart.so.$maj.$min.$patch" "$dir/.cudart.c"
    ln -sf "libcudart.so.$maj.$min.$patch" "$dir/lib64/$so"
    ln -sf "$so" "$dir/lib64/libcudart.so"
    local nvso="libnvrtc.so.$maj"
    [ "$maj" -le 11 ] && nvso="libnvrtc.so.$maj.2"
    cat > "$dir/.nvrtc.c" <<C
int nvrtcVersion(int *major, int *minor) { *major = $maj; *minor = $min; return 0; }
C
    cc -shared -fPIC -Wl,-soname,"$nvso" -o "$dir/lib64/libnvrtc.so.$maj.$min.$patch" "$dir/.nvrtc.c"
    ln -sf "libnvrtc.so.$maj.$min.$patch" "$dir/lib64/$nvso"
    ln -sf "$nvso" "$dir/lib64/libnvrtc.so"
    rm -f "$dir/.cudart.c" "$dir/.nvrtc.c"
}

# fx_cudnn DIR VERSION CUDA_MAJOR [HEADER_VERSION] [CUDART_MAJOR]: a cuDNN archive tree
# (include/cudnn_version.h, lib/libcudnn.so.X.Y.Z + .so.X + .so, and the split
# libraries of 8.x / 9.x).  HEADER_VERSION makes a header that disagrees;
# CUDART_MAJOR a library whose cudnnGetCudartVersion names another CUDA major.
fx_cudnn() {
    local dir=$1 ver=$2 cmaj=$3 hver=${4:-$2} rtmaj=${5:-$3}
    local maj=${ver%%.*} r=${ver#*.}
    local min=${r%%.*}; r=${r#*.}
    local pat=${r%%.*}
    local hmaj=${hver%%.*} hr=${hver#*.}
    local hmin=${hr%%.*}; hr=${hr#*.}
    local hpat=${hr%%.*}
    local num
    if [ "$maj" -ge 9 ]; then num=$((maj * 10000 + min * 100 + pat)); else num=$((maj * 1000 + min * 100 + pat)); fi
    local rt=$((rtmaj * 1000 + 80))
    mkdir -p "$dir/include" "$dir/lib"
    cat > "$dir/include/cudnn_version.h" <<H
/* cudaenv test fixture */
#define CUDNN_MAJOR $hmaj
#define CUDNN_MINOR $hmin
#define CUDNN_PATCHLEVEL $hpat
H
    printf '#include "cudnn_version.h"\n' > "$dir/include/cudnn.h"
    cat > "$dir/.cudnn.c" <<C
#include <stddef.h>
size_t cudnnGetVersion(void) { return $num; }
size_t cudnnGetCudartVersion(void) { return $rt; }
const char *cudnnGetErrorString(int s) { (void)s; return "fixture"; }
C
    local libs="libcudnn"
    if [ "$maj" -eq 8 ]; then
        libs="$libs libcudnn_ops_infer libcudnn_ops_train libcudnn_cnn_infer libcudnn_cnn_train libcudnn_adv_infer libcudnn_adv_train"
    elif [ "$maj" -ge 9 ]; then
        libs="$libs libcudnn_graph libcudnn_ops libcudnn_cnn libcudnn_adv libcudnn_heuristic libcudnn_engines_precompiled libcudnn_engines_runtime_compiled"
    fi
    local l
    for l in $libs; do
        cc -shared -fPIC -Wl,-soname,"$l.so.$maj" -o "$dir/lib/$l.so.$maj.$min.$pat" "$dir/.cudnn.c"
        ln -sf "$l.so.$maj.$min.$pat" "$dir/lib/$l.so.$maj"
        ln -sf "$l.so.$maj" "$dir/lib/$l.so"
    done
    echo "cuDNN fixture license" > "$dir/LICENSE"
    rm -f "$dir/.cudnn.c"
}

# fx_probe OUT TOOLKIT_DIR: a program linked with -lcudart that prints the
# runtime version and the file the loader picked, to prove what resolves.
fx_probe() {
    local out=$1 tk=$2
    cat > "$out.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
int cudaRuntimeGetVersion(int *v);
static int cb(struct dl_phdr_info *i, size_t s, void *d) {
    (void)s; (void)d;
    if (strstr(i->dlpi_name, "libcudart")) printf("%s\n", i->dlpi_name);
    return 0;
}
int main(void) {
    int v = 0;
    cudaRuntimeGetVersion(&v);
    printf("%d\n", v);
    dl_iterate_phdr(cb, NULL);
    return 0;
}
C
    cc -o "$out" "$out.c" -L"$tk/lib64" -lcudart
    rm -f "$out.c"
}

# ---- install fixtures: runfiles, cuDNN tarballs, a mirror with a manifest ----

# fx_runfile OUT VERSION [LAYOUT]: a makeself runfile that behaves like
# NVIDIA's in silent toolkit mode: accepts exactly --silent --toolkit
# --toolkitpath=DIR --defaultroot=DIR --no-opengl-libs --no-man-page --no-drm
# --override --tmpdir=DIR, refuses anything else, and lays out fx_toolkit
# the way the real one does (include -> targets/x86_64-linux/include,
# lib64 -> targets/x86_64-linux/lib; version.json with a date-stamped
# cuda.version).  LAYOUT: the CUDA version it really installs (a lying
# runfile), "empty" (installs no toolkit at all), or "nocudart" (the toolkit
# without lib64/libcudart.so.*).
# At install time FX_RUNFILE_FAIL, FX_RUNFILE_SPAM=N, FX_RUNFILE_OUTSIDE=DIR and
# FX_RUNFILE_SLEEP=S [+ FX_RUNFILE_PIDS=FILE] change what it does (see install.sh).
# FX_RUNFILE_TREE=DIR packs that toolkit tree as it is instead (tests/gpu:
# a real one); FX_RUNFILE_COMP=--nocomp|--gzip|... the makeself compression
# (default --xz); FX_MAKESELF_HEADER the stock header to start from.
fx_runfile() {
    local out=$1 ver=$2 layout=${3:-$2}
    local w; w=$(mktemp -d "${TMPDIR:-/tmp}/fx-runfile.XXXXXX")
    mkdir -p "$w/payload/tree"
    if [ -n "${FX_RUNFILE_TREE:-}" ]; then
        cp -al "$FX_RUNFILE_TREE/." "$w/payload/tree/" 2>/dev/null \
            || { rm -rf "$w/payload/tree" && cp -a "$FX_RUNFILE_TREE" "$w/payload/tree"; } || { rm -rf "$w"; return 1; }
    elif [ "$layout" != empty ]; then
        local nocudart=
        [ "$layout" = nocudart ] && { nocudart=1; layout=$ver; }
        local maj=${layout%%.*} r=${layout#*.}
        local min=${r%%.*}
        fx_toolkit "$w/tk" "$layout"
        [ -n "$nocudart" ] && rm -f "$w/tk/lib64"/libcudart.so*
        mkdir -p "$w/tk/targets/x86_64-linux"
        mv "$w/tk/include" "$w/tk/targets/x86_64-linux/include"
        mv "$w/tk/lib64" "$w/tk/targets/x86_64-linux/lib"
        ln -s targets/x86_64-linux/include "$w/tk/include"
        ln -s targets/x86_64-linux/lib "$w/tk/lib64"
        sed -i "s/\"CUDA SDK\", \"version\" : \"$layout\"/\"CUDA SDK\", \"version\" : \"$maj.$min.20220929\"/" "$w/tk/version.json"
        printf '#!/bin/sh\necho cuda-uninstaller fixture\n' > "$w/tk/bin/cuda-uninstaller"
        chmod 755 "$w/tk/bin/cuda-uninstaller"
        cp -a "$w/tk/." "$w/payload/tree/"
    fi
    cat > "$w/payload/install.sh" <<'SH'
#!/bin/sh
# cudaenv test fixture of cuda-installer's silent mode
silent= toolkit= tkpath= defroot= tmpdir=
for a in "$@"; do
    case "$a" in
        --silent) silent=1 ;;
        --toolkit) toolkit=1 ;;
        --toolkitpath=*) tkpath=${a#--toolkitpath=} ;;
        --defaultroot=*) defroot=${a#--defaultroot=} ;;
        --tmpdir=*) tmpdir=${a#--tmpdir=} ;;
        --no-opengl-libs|--no-man-page|--no-drm|--override) ;;
        *) echo "ERROR: unknown option: $a" >&2; exit 1 ;;
    esac
done
[ -n "$silent" ] && [ -n "$toolkit" ] || { echo "ERROR: this fixture only does --silent --toolkit" >&2; exit 1; }
[ -n "$tkpath" ] || { echo "ERROR: --toolkitpath is required" >&2; exit 1; }
echo "fixture installer: HOME=$HOME TMPDIR=$TMPDIR LANG=$LANG DISPLAY=${DISPLAY-<unset>} SUDO_USER=${SUDO_USER-<unset>} tmpdir=$tmpdir defaultroot=$defroot"
[ -n "${FX_RUNFILE_FAIL:-}" ] && { echo "ERROR: fixture told to fail" >&2; exit 3; }
# test knobs: print N lines; create a directory outside the toolkit path;
# start a background child and sleep (both pids in FX_RUNFILE_PIDS)
[ -n "${FX_RUNFILE_SPAM:-}" ] && seq "$FX_RUNFILE_SPAM" | sed 's/^/fixture installer: spam line /'
[ -n "${FX_RUNFILE_OUTSIDE:-}" ] && mkdir -p "$FX_RUNFILE_OUTSIDE"
if [ -n "${FX_RUNFILE_SLEEP:-}" ] && [ -z "${FX_RUNFILE_PIDS:-}" ]; then
    sleep "$FX_RUNFILE_SLEEP"
elif [ -n "${FX_RUNFILE_SLEEP:-}" ]; then
    sleep "$FX_RUNFILE_SLEEP" & echo $! > "$FX_RUNFILE_PIDS.tmp"; echo $$ >> "$FX_RUNFILE_PIDS.tmp"
    mv "$FX_RUNFILE_PIDS.tmp" "$FX_RUNFILE_PIDS"; sleep "$FX_RUNFILE_SLEEP"
fi
mkdir -p "$tkpath" && cp -a tree/. "$tkpath/" || exit 1
echo "fixture installer: toolkit installed in $tkpath"
SH
    chmod 755 "$w/payload/install.sh"
    # NVIDIA's makeself header hands unknown options to the installer; the
    # stock one refuses them, so ours does the same as NVIDIA's.
    sed 's/^\techo Unrecognized flag : .*$/\tbreak/' "${FX_MAKESELF_HEADER:-/usr/share/makeself/makeself-header.sh}" > "$w/header.sh"
    makeself --header "$w/header.sh" --nox11 --noprogress --quiet "${FX_RUNFILE_COMP:---xz}" \
        "$w/payload" "$out" "CUDA $ver cudaenv fixture" ./install.sh >/dev/null 2>&1 \
        || { rm -rf "$w"; echo "fx_runfile: makeself failed" >&2; return 1; }
    rm -rf "$w"
}

# fx_cudnn_tarball OUT VERSION CUDA_MAJOR [XZ_ARGS...]: NVIDIA's archive layout,
# cudnn-linux-x86_64-<ver>_cuda<M>-archive/{include,lib,LICENSE}, as .tar.xz
# (one xz block; with XZ_ARGS, e.g. -T2 --block-size=4KiB, compressed by xz
# with them: several blocks).
fx_cudnn_tarball() {
    local out=$1 ver=$2 cmaj=$3
    shift 3
    local top="cudnn-linux-x86_64-${ver}_cuda${cmaj}-archive"
    local w; w=$(mktemp -d "${TMPDIR:-/tmp}/fx-cudnn.XXXXXX")
    fx_cudnn "$w/$top" "$ver" "$cmaj"
    if [ $# -gt 0 ]; then
        tar -C "$w" --owner=0 --group=0 --numeric-owner -cf - "$top" | xz "$@" > "$out"
    else
        tar -C "$w" --owner=0 --group=0 --numeric-owner -cJf "$out" "$top"
    fi
    rm -rf "$w"
}

# fx_mirror DIR: a mirror with NVIDIA's paths under DIR/compute/...:
#   CUDA 11.8.0 and 12.2.2 runfiles, cuDNN 8.6.0.163 + 8.7.0.84 (cuda11) and
#   8.9.7.29 (cuda12) tarballs, and manifests with their real sha256/size:
#   DIR/manifest.json          relative URLs (resolve against its location)
#   DIR/manifest-nvidia.json   https://developer.download.nvidia.com/ URLs
#   TF rows: 2.12 -> 11.8.0 + 8.6.0.163, 2.14 -> 11.8.0 + 8.7.0.84,
#            2.15 -> 12.2.2 + 8.9.7.29.
# fx_mirror_manifest DIR BASE > FILE writes one with absolute URLs BASE/compute/...
FX_MIRROR_RUNFILES="11.8.0:520.61.05 12.2.2:535.104.05"
FX_MIRROR_CUDNN="8.6.0.163:11 8.7.0.84:11 8.9.7.29:12"
fx_mirror() {
    local dir=$1 c ver drv maj
    for c in $FX_MIRROR_RUNFILES; do
        ver=${c%%:*} drv=${c#*:}
        mkdir -p "$dir/compute/cuda/$ver/local_installers"
        fx_runfile "$dir/compute/cuda/$ver/local_installers/cuda_${ver}_${drv}_linux.run" "$ver" || return 1
    done
    mkdir -p "$dir/compute/cudnn/redist/cudnn/linux-x86_64"
    for c in $FX_MIRROR_CUDNN; do
        ver=${c%%:*} maj=${c#*:}
        fx_cudnn_tarball "$dir/compute/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-${ver}_cuda${maj}-archive.tar.xz" "$ver" "$maj"
    done
    fx_mirror_manifest "$dir" "" > "$dir/manifest.json"
    fx_mirror_manifest "$dir" "https://developer.download.nvidia.com" > "$dir/manifest-nvidia.json"
}

# FX_MIRROR_PLATFORMS="linux-x86_64 linux-sbsa": each file listed for those platforms
# (the fixtures are shell scripts and tarballs: make distcheck installs them with the
# aarch64 binary too)
fx_mirror_manifest() {
    python3 - "$1" "$2" "$FX_MIRROR_RUNFILES" "$FX_MIRROR_CUDNN" "${FX_MIRROR_PLATFORMS:-linux-x86_64}" <<'PY'
import hashlib, json, os, sys
d, base, runfiles, cudnns = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
plats = sys.argv[5].split()
def art(rel):
    p = os.path.join(d, rel)
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return {"url": (base + "/" + rel) if base else rel, "sha256": h.hexdigest(), "size": os.path.getsize(p)}
drivers = {"11": ("520.61.05", 11, "3.5", "9.0"), "12": ("535.104.05", 12, "5.0", "9.0")}
compat = {"11": "450.80.02", "12": "525.60.13"}     # the real manifest's min_driver_compat
m = {"schema": 1, "updated": "2026-11-29", "tensorflow": {}, "cuda": {}, "cudnn": {}}
for c in runfiles:
    ver, drv = c.split(":")
    maj = ver.split(".")[0]
    md, gcc, smin, smax = drivers[maj]
    m["cuda"][ver] = {"min_driver": md, "min_driver_compat": compat[maj], "max_gcc": gcc,
                      "sm": {"min": smin, "max": smax}, "source": "cudaenv test fixture",
                      "runfile": {p: art(f"compute/cuda/{ver}/local_installers/cuda_{ver}_{drv}_linux.run") for p in plats}}
for c in cudnns:
    ver, maj = c.split(":")
    m["cudnn"].setdefault(ver, {"source": "cudaenv test fixture"})[f"cuda{maj}"] = {
        p: art(f"compute/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-{ver}_cuda{maj}-archive.tar.xz") for p in plats}
for tf, cu, dn in (("2.12", "11.8.0", "8.6.0.163"), ("2.14", "11.8.0", "8.7.0.84"), ("2.15", "12.2.2", "8.9.7.29")):
    m["tensorflow"][tf] = {"cuda": cu, "cudnn": dn, "python": "3.9-3.11", "source": "cudaenv test fixture"}
json.dump(m, sys.stdout, indent=1)
PY
}

# fx_receipt PREFIX [MIN_DRIVER] [MAX_GCC] [SM_MIN] [SM_MAX]: the receipt
# install writes (store.h format) for a tree laid out by fx_installed: every
# regular file with its size and sha256.
fx_receipt() {
    python3 - "$@" <<'PY'
import hashlib, json, os, sys
prefix = sys.argv[1]
a = sys.argv[2:] + [None] * 4
name = os.path.basename(prefix)
cuda, _, cudnn = name.partition("+cudnn")
files = []
for root, dirs, names in os.walk(prefix):
    for n in names:
        p = os.path.join(root, n)
        rel = os.path.relpath(p, prefix)
        if rel == ".cudaenv-receipt.json" or os.path.islink(p) or not os.path.isfile(p):
            continue
        files.append({"path": rel, "size": os.path.getsize(p),
                      "sha256": hashlib.sha256(open(p, "rb").read()).hexdigest()})
files.sort(key=lambda f: f["path"])
r = {"schema": 1, "name": name, "cuda": cuda, "cudnn": cudnn or None, "platform": "linux-x86_64",
     "installed_at": "2024-01-01T00:00:00Z", "tensorflow": [], "min_driver": a[0] or "520.61.05",
     "max_gcc": int(a[1] or 11), "sm": {"min": a[2] or "3.5", "max": a[3] or "9.0"}, "sources": [],
     "files": files}
json.dump(r, open(os.path.join(prefix, ".cudaenv-receipt.json"), "w"), indent=1)
PY
}

# fx_fake_gpu PREFIX OUTDIR [DRIVER_RELEASE]: the test doubles of
# tests/doubles/libcuda.c: OUTDIR/libcuda.so.1 (-> libcuda.so.RELEASE, the
# file name the driver release is read from), and the toolkit's libcudart and
# libnvrtc rebuilt with memory and a compiler (same SONAMEs and versions).
# Point verify at the driver with CUDAENV_TEST_LIBCUDA=OUTDIR/libcuda.so.1 (acts through the seams double: `seams`, `seams_on`).
fx_fake_gpu() {
    local prefix=$1 out=$2 rel=${3:-580.65.06}
    local src=$TESTS_DIR/doubles/libcuda.c
    mkdir -p "$out"
    cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$out/libcuda.so.$rel" "$src" -lm
    ln -sf "libcuda.so.$rel" "$out/libcuda.so.1"
    local num maj min rt nv
    num=$(sed -n 's/^#define CUDART_VERSION *//p' "$prefix/include/cuda_runtime_api.h")
    maj=$((num / 1000)); min=$(((num % 1000) / 10))
    rt=$(fx_soname_cudart "$maj.$min")
    nv=libnvrtc.so.$maj; [ "$maj" -le 11 ] && nv=libnvrtc.so.$maj.2
    cc -shared -fPIC -DCE_DOUBLE_CUDART -DCUDART_VER="$num" -Wl,-soname,"$rt" \
        -o "$(readlink -f "$prefix/lib64/$rt")" "$src" -lm
    cc -shared -fPIC -DCE_DOUBLE_NVRTC -DNVRTC_MAJ="$maj" -DNVRTC_MIN="$min" -Wl,-soname,"$nv" \
        -o "$(readlink -f "$prefix/lib64/$nv")" "$src" -lm
}

# fx_slowpath OUT.so: tests/doubles/slowpath.c, an LD_PRELOAD that delays
# rename/symlink onto paths ending with $CUDAENV_TEST_SLOW_PATH by
# $CUDAENV_TEST_SLOW_PATH_MS ms (default 1500): a replacement in flight can be watched;
# and opens of paths ending with $CUDAENV_TEST_SLOW_OPEN by $CUDAENV_TEST_SLOW_OPEN_MS
# (only O_CREAT ones with CUDAENV_TEST_SLOW_OPEN_FLAGS=create, only read-only ones
# with =read; CUDAENV_TEST_SLOW_OPEN_LOG=FILE logs each): a race lost on purpose.
fx_slowpath() {
    cc -shared -fPIC -o "$1" "$TESTS_DIR/doubles/slowpath.c" -ldl
}

# fx_writeback SO: build tests/doubles/writeback.c, an LD_PRELOAD that logs
# sync_file_range and fdatasync calls (offsets, lengths, paths) to
# $CUDAENV_TEST_WRITEBACK_LOG.
fx_writeback() {
    cc -shared -fPIC -o "$1" "$TESTS_DIR/doubles/writeback.c" -ldl
}

# ASAN_OPTIONS for a run with LD_PRELOAD: an -fsanitize=address build (make
# check-asan) otherwise refuses a preload loaded before its runtime.
fx_asan_preload_ok() {
    echo "${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
}
