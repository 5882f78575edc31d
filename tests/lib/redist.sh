# Fixtures in NVIDIA's redistrib layout (issue 10), generated at test time.
# Source after fixtures.sh.
#
# fx_redist DIR VERSION: DIR/compute/cuda/redist/ gets
#   redistrib_VERSION.json   NVIDIA's shape: release_date/label/product,
#                            per component name, license, version and per
#                            platform {relative_path, sha256, md5, size (a string)};
#                            windows-x86_64 entries whose files do not exist;
#   <comp>/linux-x86_64/<comp>-linux-x86_64-<ver>-archive.tar.xz   one top
#                            directory, lib/ not lib64/, a LICENSE each;
#   the same for linux-sbsa (other bytes, so a wrong platform shows).
# The toolkit files come from fx_toolkit (the runfile fixture's tree), split
# the way NVIDIA splits them: cuda_cudart (include/cuda_runtime_api.h,
# lib/libcudart*), cuda_nvcc (bin/nvcc, bin/ptxas, nvvm/bin, include/crt/
# host_config.h), cuda_nvrtc (lib/libnvrtc*), cuda_crt (the same
# include/crt/host_config.h: identical content is no conflict), libcublas,
# libcufft, cuda_cccl, cuda_cupti (tf profile); libnpp, cuda_sanitizer_api
# (toolkit); nsight_systems, cuda_documentation (neither); nvidia_driver,
# cuda_compat, fabricmanager (driver-side: never fetched).
# FX_REDIST_EVIL=dotdot|conflict|linkconflict makes libcufft's relative_path
# climb, or libcufft ship include/cuda_runtime_api.h with other bytes, or
# libcufft ship lib/libcudart.so as a link to its own libcufft.so.N.
# FX_REDIST_BIG=N adds N random bytes to libcublas (lib/libcublasLt.so.11),
# an archive larger than the download's write buffer.
# FX_REDIST_XZ="ARGS": xz's arguments for every archive (default: one block);
# "-T2 --block-size=256KiB" gives them several blocks, as NVIDIA's have.
fx_redist() {
    local dir=$1 ver=$2
    local maj=${ver%%.*} r=${ver#*.}
    local min=${r%%.*}
    local cv="$maj.$min.89" out=$dir/compute/cuda/redist
    local w; w=$(mktemp -d "${TMPDIR:-/tmp}/fx-redist.XXXXXX")
    fx_toolkit "$w/tk" "$ver"
    mkdir -p "$out"
    local plat comp cver top
    for plat in linux-x86_64 linux-sbsa; do
        local s=$w/$plat
        mkdir -p "$s"
        for comp in cuda_cudart cuda_nvcc cuda_nvrtc cuda_crt libcublas libcufft cuda_cccl cuda_cupti libnpp \
                    cuda_sanitizer_api nsight_systems cuda_documentation nvidia_driver cuda_compat fabricmanager; do
            cver=$cv
            case $comp in libcublas) cver="$maj.11.3.6" ;; libcufft) cver="10.9.0.58" ;;
                nvidia_driver|fabricmanager) cver="520.61.05" ;; cuda_compat) cver="520.61.05" ;; esac
            top=$comp-$plat-$cver-archive
            mkdir -p "$s/$top"
            echo "$comp license ($plat)" > "$s/$top/LICENSE"
            case $comp in
                cuda_cudart) mkdir -p "$s/$top/include" "$s/$top/lib"
                    cp -a "$w/tk/include/cuda_runtime_api.h" "$s/$top/include/"
                    cp -a "$w/tk/lib64"/libcudart* "$s/$top/lib/" ;;
                cuda_nvcc) mkdir -p "$s/$top/bin" "$s/$top/nvvm/bin" "$s/$top/include/crt"
                    cp -a "$w/tk/bin/nvcc" "$w/tk/bin/ptxas" "$s/$top/bin/"
                    printf '#!/bin/sh\necho cicc fixture\n' > "$s/$top/nvvm/bin/cicc"; chmod 755 "$s/$top/nvvm/bin/cicc"
                    echo "/* host_config.h $ver */" > "$s/$top/include/crt/host_config.h" ;;
                cuda_crt) mkdir -p "$s/$top/include/crt"
                    echo "/* host_config.h $ver */" > "$s/$top/include/crt/host_config.h" ;;
                cuda_nvrtc) mkdir -p "$s/$top/lib"; cp -a "$w/tk/lib64"/libnvrtc* "$s/$top/lib/" ;;
                cuda_cccl) mkdir -p "$s/$top/include/cub"; echo "// cub" > "$s/$top/include/cub/cub.cuh" ;;
                nsight_systems) mkdir -p "$s/$top/bin"; printf '#!/bin/sh\necho nsys\n' > "$s/$top/bin/nsys"
                    chmod 755 "$s/$top/bin/nsys" ;;
                cuda_documentation) mkdir -p "$s/$top/doc"; echo docs > "$s/$top/doc/index.html" ;;
                *) mkdir -p "$s/$top/lib" "$s/$top/include"
                    head -c 4096 /dev/urandom > "$s/$top/lib/$comp.so.$maj"
                    echo "/* $comp $plat */" > "$s/$top/include/$comp.h"
                    if [ "$comp" = libcublas ] && [ -n "${FX_REDIST_BIG:-}" ]; then
                        head -c "$FX_REDIST_BIG" /dev/urandom > "$s/$top/lib/libcublasLt.so.$maj"
                    fi
                    if [ "$comp" = libcufft ] && [ "${FX_REDIST_EVIL:-}" = conflict ]; then
                        echo "/* not cudart's */" > "$s/$top/include/cuda_runtime_api.h"
                    fi
                    if [ "$comp" = libcufft ] && [ "${FX_REDIST_EVIL:-}" = linkconflict ]; then
                        ln -s "$comp.so.$maj" "$s/$top/lib/libcudart.so"
                    fi ;;
            esac
            mkdir -p "$out/$comp/$plat"
            # shellcheck disable=SC2086
            tar -C "$s" --owner=0 --group=0 --numeric-owner -cf - "$top" | xz -c ${FX_REDIST_XZ:-} > "$out/$comp/$plat/$top.tar.xz"
        done
    done
    rm -rf "$w"
    python3 - "$out" "$ver" "${FX_REDIST_EVIL:-}" <<'PY'
import hashlib, json, os, sys
out, ver, evil = sys.argv[1:4]
doc = {"release_date": "2022-10-03", "release_label": ver, "release_product": "cuda"}
for comp in sorted(os.listdir(out)):
    d = os.path.join(out, comp)
    if not os.path.isdir(d):
        continue
    e = {"name": "CUDA " + comp, "license": "CUDA Toolkit", "license_path": comp + "/LICENSE.txt"}
    for plat in ("linux-x86_64", "linux-sbsa"):
        (f,) = os.listdir(os.path.join(d, plat))
        rel = "%s/%s/%s" % (comp, plat, f)
        raw = open(os.path.join(out, rel), "rb").read()
        e["version"] = f[len(comp) + len(plat) + 2:-len("-archive.tar.xz")]
        if evil == "dotdot" and comp == "libcufft":
            rel = "../../../" + rel
        e[plat] = {"relative_path": rel, "sha256": hashlib.sha256(raw).hexdigest(),
                   "md5": hashlib.md5(raw).hexdigest(), "size": str(len(raw))}
    e["windows-x86_64"] = {"relative_path": "%s/windows-x86_64/%s-windows-x86_64-%s-archive.zip" % (comp, comp, e["version"]),
                           "sha256": "0" * 64, "md5": "0" * 32, "size": "1234"}
    doc[comp] = e
json.dump(doc, open(os.path.join(out, "redistrib_%s.json" % ver), "w"), indent=4)
PY
}

# fx_redist_manifest MANIFEST DIR VERSION URL_BASE: add cuda.VERSION.redist
# (sha256 + size of DIR's JSON) and the tf/toolkit profiles to MANIFEST;
# URL_BASE "" keeps the JSON's URL relative to the manifest.
fx_redist_manifest() {
    python3 - "$@" <<'PY'
import hashlib, json, sys
p, d, ver, base = sys.argv[1:5]
rel = "compute/cuda/redist/redistrib_%s.json" % ver
raw = open("%s/%s" % (d, rel), "rb").read()
m = json.load(open(p))
m["cuda"][ver]["redist"] = {"url": (base + "/" + rel) if base else rel,
                            "sha256": hashlib.sha256(raw).hexdigest(), "size": len(raw)}
m["profiles"] = {
    "tf": {"components": ["cuda_cudart", "libcublas", "libcufft", "libcurand", "libcusolver", "libcusparse",
                         "cuda_cupti", "cuda_nvcc", "cuda_nvrtc", "cuda_cccl", "cuda_nvtx", "cuda_nvml_dev",
                         "cuda_nvprune", "cuda_profiler_api", "cuda_nvdisasm", "libnvjitlink", "cuda_crt", "libnvvm"]},
    "toolkit": {"components": ["*"], "exclude": ["cuda_documentation", "cuda_demo_suite", "cuda_nsight", "cuda_nvvp",
                                                "nsight_compute", "nsight_systems", "nsight_vse", "nsight_nvtx"]}}
json.dump(m, open(p, "w"), indent=1)
PY
}

# seen_while_downloading PID SHA NAME: succeeds once a non-empty file NAME is
# in pkgs/.staging-* (unpacked) while cache/SHA.part is there both before and
# after the look (still downloading); polls while PID runs, at most 20 s.
seen_while_downloading() {
    local pid=$1 sha=$2 name=$3 _
    for _ in $(seq 400); do
        if [ -e "$CUDAENV_ROOT/cache/$sha.part" ] &&
           [ -n "$(find "$CUDAENV_ROOT"/pkgs/.staging-* -name "$name" -size +0 2>/dev/null)" ] &&
           [ -e "$CUDAENV_ROOT/cache/$sha.part" ]; then
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

# redist_setup: a test's setup against $MIRROR (fx_mirror + fx_redist): the
# loopback server on it and $T/manifest.json pinning its 11.8.0 JSON.
redist_setup() {
    source "$TESTS_DIR/lib/fixtures.sh"
    mirror_serve
    fx_redist_manifest "$T/manifest.json" "$MIRROR" 11.8.0 "$SERVER_URL"
}
