# Fake TensorFlow and PyTorch for verify --framework, generated at test time:
# pure-Python packages that answer the calls framework.py makes, report the
# build information the test chooses and load libraries through ctypes like
# the real ones do.  Knobs (environment of the Python that imports them):
#   FAKE_FW_VERSION  framework version (torch 2.5.1+cu118, tensorflow 2.14.1)
#   FAKE_FW_CUDA     CUDA it was built for (11.8); "none": a CPU-only build
#   FAKE_FW_CUDNN    cuDNN it was built for (8.7.0)
#   FAKE_FW_LIBS     sonames or paths to load at import (a failure is an ImportError)
#   FAKE_FW_GPUS     GPUs it lists (1); CUDA_VISIBLE_DEVICES "" or -1 hides them
#   FAKE_FW_WRONG    set: GPU results are off;  FAKE_FW_RAISE=MSG: GPU work raises MSG

# fx_fakefw DIR: the packages in DIR (put DIR on PYTHONPATH).
fx_fakefw() {
    local d=$1
    mkdir -p "$d/torch" "$d/tensorflow" "$d/torch-2.5.1+cu118.dist-info" "$d/tensorflow-2.14.1.dist-info"
    printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+cu118\n' > "$d/torch-2.5.1+cu118.dist-info/METADATA"
    printf 'Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.14.1\n' > "$d/tensorflow-2.14.1.dist-info/METADATA"
    cat > "$d/_cudaenv_fakefw.py" <<'PY'
import ctypes, os

def cuda():
    c = os.environ.get("FAKE_FW_CUDA", "11.8")
    return None if c == "none" else c

def cudnn():
    return os.environ.get("FAKE_FW_CUDNN", "8.7.0")

def gpus():
    if os.environ.get("CUDA_VISIBLE_DEVICES") in ("", "-1"):
        return 0
    return int(os.environ.get("FAKE_FW_GPUS", "1"))

def load():
    for name in os.environ.get("FAKE_FW_LIBS", "").split():
        try:
            ctypes.CDLL(name)
        except OSError as e:
            raise ImportError(str(e))

class T:
    def __init__(s, data, shape=None):
        s.data, s.shape = list(data), tuple(shape or (len(data),))
    def reshape(s, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else shape
        return T(s.data, (len(s.data),) if -1 in shape else shape)
    def to(s, dev): return s
    def cpu(s): return s
    def numpy(s): return s
    def flatten(s): return T(s.data)
    def tolist(s): return list(s.data)

def tensor(data, dtype=None):
    return T(data)

def out(vals):
    if os.environ.get("FAKE_FW_RAISE"):
        raise RuntimeError(os.environ["FAKE_FW_RAISE"])
    if os.environ.get("FAKE_FW_WRONG"):
        vals[0] += 1.0
    return T(vals)

def matmul(a, b):
    n, k = a.shape
    m = b.shape[1]
    return out([sum(a.data[i * k + p] * b.data[p * m + j] for p in range(k)) for i in range(n) for j in range(m)])

def conv(x, w, kcrs):  # NCHW input; filter KCRS (torch) or RSCK (tf); stride 1, padding 1
    _, C, H, W = x.shape
    K = w.shape[0] if kcrs else w.shape[3]
    wv = (lambda k, c, r, q: w.data[((k * C + c) * 3 + r) * 3 + q]) if kcrs else \
         (lambda k, c, r, q: w.data[((r * 3 + q) * C + c) * K + k])
    return out([sum(x.data[(c * H + i + r - 1) * W + j + q - 1] * wv(k, c, r, q)
                    for c in range(C) for r in range(3) for q in range(3)
                    if 0 <= i + r - 1 < H and 0 <= j + q - 1 < W)
                for k in range(K) for i in range(H) for j in range(W)])
PY
    cat > "$d/torch/__init__.py" <<'PY'
import os, _cudaenv_fakefw as F
F.load()
__version__ = os.environ.get("FAKE_FW_VERSION", "2.5.1+cu118")
float32 = "float32"
tensor, matmul = F.tensor, F.matmul
class version:
    cuda = F.cuda()
class _C:
    class _cudnn:
        @staticmethod
        def getCompileVersion():
            return tuple(int(x) for x in F.cudnn().split("."))
class backends:
    class cudnn:
        allow_tf32 = True
        @staticmethod
        def version():
            M, m, p = (int(x) for x in F.cudnn().split("."))
            return M * (10000 if M >= 9 else 1000) + m * 100 + p
    class cuda:
        class matmul:
            allow_tf32 = False
class cuda:
    is_available = staticmethod(lambda: F.gpus() > 0)
    device_count = staticmethod(F.gpus)
    get_device_name = staticmethod(lambda i: "Fake GPU %d" % i)
class nn:
    class functional:
        conv2d = staticmethod(lambda x, w, padding=1: F.conv(x, w, True))
PY
    cat > "$d/tensorflow/__init__.py" <<'PY'
import contextlib, os, _cudaenv_fakefw as F
F.load()
__version__ = os.environ.get("FAKE_FW_VERSION", "2.14.1")
float32 = "float32"
constant, matmul = F.tensor, F.matmul
reshape = lambda t, shape: t.reshape(shape)
device = lambda name: contextlib.nullcontext()
class sysconfig:
    @staticmethod
    def get_build_info():
        c = F.cuda()
        return {"cuda_version": c, "cudnn_version": F.cudnn() if c else None, "is_cuda_build": c is not None}
class _Dev:
    def __init__(s, i): s.name = "/physical_device:GPU:%d" % i
class config:
    list_physical_devices = staticmethod(lambda kind: [_Dev(i) for i in range(F.gpus())])
    class experimental:
        enable_tensor_float_32_execution = staticmethod(lambda on: None)
        get_device_details = staticmethod(lambda d: {"device_name": "Fake GPU"})
class nn:
    conv2d = staticmethod(lambda x, w, strides=1, padding="SAME", data_format="NCHW": F.conv(x, w, False))
PY
}

# fx_fakewheel SITE NAME COMPONENT VERSION [LIBDIR]: a pip nvidia-* wheel in SITE:
# nvidia/COMPONENT/lib with LIBDIR's files copied in, and its dist-info whose
# RECORD lists them (how pip knows which wheel owns a file).
fx_fakewheel() {
    local site=$1 name=$2 comp=$3 ver=$4 from=${5:-}
    local di=$site/${name//-/_}-$ver.dist-info
    mkdir -p "$site/nvidia/$comp/lib" "$di"
    [ -n "$from" ] && cp -a "$from/." "$site/nvidia/$comp/lib/"
    printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$name" "$ver" > "$di/METADATA"
    (cd "$site" && find "nvidia/$comp" -type f -o -type l | sed 's/$/,,/') > "$di/RECORD"
}

# fx_fakejax DIR [PLUGIN]: a fake JAX in DIR (put DIR on PYTHONPATH) with the
# CUDA plugin PLUGIN (cuda12 default, cuda13, or none: a CPU-only jax), which
# answers as the real ones do (jax_cuda12_plugin._versions: build versions as
# integers, 12030 = CUDA 12.3, 90100 = cuDNN 9.1.0), and its wheel's METADATA
# (Requires-Dist: nvidia-cudnn-cu12 <10.0,>=9.8).  Knobs:
#   FAKE_JAX_VERSION (0.4.30), FAKE_JAX_CUDA (12.3), FAKE_JAX_CUDNN (9.1.0)
#   FAKE_JAX_META  set: the plugin's _versions fails to import; the METADATA is left
fx_fakejax() {
    local d=$1 p=${2:-cuda12}
    mkdir -p "$d/jax" "$d/jax-0.4.30.dist-info"
    printf 'Metadata-Version: 2.1\nName: jax\nVersion: 0.4.30\n' > "$d/jax-0.4.30.dist-info/METADATA"
    printf 'import os\n__version__ = os.environ.get("FAKE_JAX_VERSION", "0.4.30")\n' > "$d/jax/__init__.py"
    [ "$p" = none ] && return 0
    local n=${p#cuda}
    mkdir -p "$d/jax_cuda${n}_plugin" "$d/jax_cuda${n}_plugin-0.4.30.dist-info"
    printf 'Metadata-Version: 2.1\nName: jax-cuda%s-plugin\nVersion: 0.4.30\nRequires-Dist: jax-cuda%s-pjrt ==0.4.30\nRequires-Dist: nvidia-cudnn-cu%s <10.0,>=9.8 ; extra == "with-cuda"\n' \
        "$n" "$n" "$n" > "$d/jax_cuda${n}_plugin-0.4.30.dist-info/METADATA"
    : > "$d/jax_cuda${n}_plugin/__init__.py"
    cat > "$d/jax_cuda${n}_plugin/_versions.py" <<'PY'
import os
if os.environ.get("FAKE_JAX_META"):
    raise ImportError("libcudart.so.12: cannot open shared object file (fake: FAKE_JAX_META)")
def cuda_runtime_build_version():
    M, m = (int(x) for x in os.environ.get("FAKE_JAX_CUDA", "12.3").split(".")[:2])
    return M * 1000 + m * 10
def cudnn_build_version():
    M, m, p = (int(x) for x in os.environ.get("FAKE_JAX_CUDNN", "9.1.0").split("."))
    return M * (10000 if M >= 9 else 1000) + m * 100 + p
PY
}

# fx_fakecudnn_wheel SITE [MAJOR [SUBLIB [CUDART]]]: the pip wheel
# nvidia-cudnn-cu12 in SITE as PyTorch's is made: nvidia/cudnn/lib/
# libcudnn.so.MAJOR (RUNPATH $ORIGIN) dlopen()s its sub-library
# SUBLIB.so.MAJOR (libcudnn_graph) by name when loaded, as cuDNN 9 does; a
# framework preloads libcudnn.so.MAJOR by path (FAKE_FW_LIBS).  Also
# nvidia/cuda_runtime/lib/CUDART (libcudart.so.12, nvidia-cuda-runtime-cu12),
# whose cudaRuntimeGetVersion answers 4242: a caller can tell it from a
# toolchain's.
fx_fakecudnn_wheel() {
    local site=$1 maj=${2:-9} sub=${3:-libcudnn_graph} rt=${4:-libcudart.so.12} src
    src=$(mktemp -d)
    cat > "$src/cudnn.c" <<C
#include <dlfcn.h>
#include <stdio.h>
__attribute__((constructor)) static void load_parts(void)
{
    if (!dlopen("$sub.so.$maj", RTLD_NOW | RTLD_GLOBAL))
        fprintf(stderr, "fake cuDNN: %s\n", dlerror());
}
unsigned long cudnnGetVersion(void) { return 90100; }
C
    printf 'int cudnn_graph_part(void) { return 1; }\n' > "$src/graph.c"
    printf 'int cudaRuntimeGetVersion(int *v) { *v = 4242; return 0; }\n' > "$src/cudart.c"
    mkdir -p "$src/cudnn" "$src/rt"
    cc -shared -fPIC -Wl,-soname,libcudnn.so.$maj -Wl,--enable-new-dtags,-rpath,'$ORIGIN' \
        -o "$src/cudnn/libcudnn.so.$maj" "$src/cudnn.c" -ldl
    cc -shared -fPIC -Wl,-soname,$sub.so.$maj -o "$src/cudnn/$sub.so.$maj" "$src/graph.c"
    cc -shared -fPIC -Wl,-soname,$rt -o "$src/rt/$rt" "$src/cudart.c"
    fx_fakewheel "$site" nvidia-cudnn-cu12 cudnn 9.1.0.70 "$src/cudnn"
    fx_fakewheel "$site" nvidia-cuda-runtime-cu12 cuda_runtime 12.2.140 "$src/rt"
    rm -rf "$src"
}

# maps_by_family: run by the framework's Python after `import torch`: one
# line "FAMILY DIR" for each directory a library family was mapped from, sorted
MAPS_BY_FAMILY='import os, torch
seen = set()
for line in open("/proc/self/maps"):
    p = line.split(None, 5)
    path = p[5].strip() if len(p) == 6 else ""
    b = os.path.basename(path)
    for fam in ("libcudart", "libcudnn", "libcublas", "libnccl"):
        if b.startswith(fam):
            seen.add(fam + " " + os.path.dirname(path))
print("\n".join(sorted(seen)))'
