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

# fx_cudnn DIR VERSION CUDA_MAJOR [HEADER_VERSION]: a cuDNN archive tree
# (include/cudnn_version.h, lib/libcudnn.so.X.Y.Z + .so.X + .so, and the split
# libraries of 8.x / 9.x).  HEADER_VERSION makes a header that disagrees.
fx_cudnn() {
    local dir=$1 ver=$2 cmaj=$3 hver=${4:-$2}
    local maj=${ver%%.*} r=${ver#*.}
    local min=${r%%.*}; r=${r#*.}
    local pat=${r%%.*}
    local hmaj=${hver%%.*} hr=${hver#*.}
    local hmin=${hr%%.*}; hr=${hr#*.}
    local hpat=${hr%%.*}
    local num
    if [ "$maj" -ge 9 ]; then num=$((maj * 10000 + min * 100 + pat)); else num=$((maj * 1000 + min * 100 + pat)); fi
    local rt=$((cmaj * 1000 + 80))
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
