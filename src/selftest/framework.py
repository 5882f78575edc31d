# cudaenv verify --framework: run by the framework's own Python, in the
# toolchain's environment.  argv: FRAMEWORK (torch|tf|jax) OUT_JSON QUICK (0|1).
# Writes one JSON document to OUT_JSON: the framework's version and build
# information, the GPUs it sees, a matmul and a convolution on GPU 0 against
# a float64 reference computed here, and the CUDA library files the process
# mapped (/proc/self/maps), each with why the loader took it (LD_DEBUG).  QUICK=1 (doctor): no GPU work at all.
# Embedded into cudaenv at build time (src/selftest/framework.c).
import json, os, sys, traceback, warnings

FW, OUT, QUICK = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
R = {"framework": FW, "python": sys.executable, "python_version": "%d.%d.%d" % sys.version_info[:3],
     "env": {k: os.environ.get(k) for k in ("CUDA_VISIBLE_DEVICES", "LD_PRELOAD", "LD_LIBRARY_PATH")},
     "imported": False, "version": None, "cuda": None, "cudnn": None, "cudnn_runtime": None,
     "cuda_build": None, "gpus": None, "gpu_error": None, "checks": [], "compute_error": None,
     "import_error": None, "error": None}
N, C, H, W, K = 64, 4, 12, 12, 8   # matmul NxN; conv 1xCxHxW * KxCx3x3, padding 1


def data(n, seed):
    # k/64 with |k| <= 64: exact in float32 (and TF32), so any difference is a fault
    out, v = [], seed
    for _ in range(n):
        v = (v * 1103515245 + 12345) % 2147483648
        out.append(((v >> 8) % 129 - 64) / 64.0)
    return out


def ref_matmul(a, b):
    return [sum(a[i * N + k] * b[k * N + j] for k in range(N)) for i in range(N) for j in range(N)]


def ref_conv(x, w):  # NCHW input, KCRS filter, stride 1, padding 1
    out = []
    for k in range(K):
        for i in range(H):
            for j in range(W):
                s = 0.0
                for c in range(C):
                    for r in range(3):
                        for q in range(3):
                            y, z = i + r - 1, j + q - 1
                            if 0 <= y < H and 0 <= z < W:
                                s += x[(c * H + y) * W + z] * w[((k * C + c) * 3 + r) * 3 + q]
                out.append(s)
    return out


def check(name, shape, got, ref):
    scale = max(abs(v) for v in ref) or 1.0
    err = max(abs(float(g) - r) for g, r in zip(got, ref)) / scale if len(got) == len(ref) else None
    R["checks"].append({"name": name, "shape": shape, "max_rel_err": err,
                        "ok": err is not None and err <= 1e-3, "n": len(got)})


A, B, X, WK = data(N * N, 1), data(N * N, 2), data(C * H * W, 3), data(K * C * 9, 4)


def run_torch():
    import torch
    R["imported"] = True
    R["module"] = getattr(torch, "__file__", None)
    R["version"] = str(torch.__version__)
    R["cuda"] = torch.version.cuda
    R["cuda_build"] = torch.version.cuda is not None
    try:
        R["cudnn"] = "%d.%d.%d" % tuple(torch._C._cudnn.getCompileVersion())
    except Exception:
        pass
    try:
        R["cudnn_runtime"] = torch.backends.cudnn.version()
    except Exception as e:
        R["gpu_error"] = "cuDNN: %s" % e
    if QUICK or not R["cuda_build"]:
        return
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        avail = torch.cuda.is_available()
    n = torch.cuda.device_count() if avail else 0
    R["gpus"] = [torch.cuda.get_device_name(i) for i in range(n)]
    if not n:
        R["gpu_error"] = " ".join(str(w.message) for w in ws) or None
        return
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    f32 = torch.float32
    a = torch.tensor(A, dtype=f32).reshape(N, N).to("cuda")
    b = torch.tensor(B, dtype=f32).reshape(N, N).to("cuda")
    check("matmul", [N, N, N], torch.matmul(a, b).cpu().flatten().tolist(), ref_matmul(A, B))
    x = torch.tensor(X, dtype=f32).reshape(1, C, H, W).to("cuda")
    w = torch.tensor(WK, dtype=f32).reshape(K, C, 3, 3).to("cuda")
    got = torch.nn.functional.conv2d(x, w, padding=1).cpu().flatten().tolist()
    check("conv2d", [1, C, H, W, K, 3, 3], got, ref_conv(X, WK))


def run_tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    import tensorflow as tf
    R["imported"] = True
    R["module"] = getattr(tf, "__file__", None)
    R["version"] = str(tf.__version__)
    bi = dict(tf.sysconfig.get_build_info())
    R["cuda"] = bi.get("cuda_version")
    R["cudnn"] = bi.get("cudnn_version")
    R["cuda_build"] = bool(bi.get("is_cuda_build"))
    if QUICK or not R["cuda_build"]:
        return
    gpus = tf.config.list_physical_devices("GPU")
    names = []
    for g in gpus:
        try:
            names.append(tf.config.experimental.get_device_details(g).get("device_name") or g.name)
        except Exception:
            names.append(g.name)
    R["gpus"] = names
    if not gpus:
        return
    tf.config.experimental.enable_tensor_float_32_execution(False)
    f32 = tf.float32
    hwio = [WK[((k * C + c) * 3 + r) * 3 + q] for r in range(3) for q in range(3) for c in range(C) for k in range(K)]
    with tf.device("/GPU:0"):
        a = tf.reshape(tf.constant(A, dtype=f32), [N, N])
        b = tf.reshape(tf.constant(B, dtype=f32), [N, N])
        check("matmul", [N, N, N], tf.reshape(tf.matmul(a, b), [-1]).numpy().tolist(), ref_matmul(A, B))
        x = tf.reshape(tf.constant(X, dtype=f32), [1, C, H, W])
        w = tf.reshape(tf.constant(hwio, dtype=f32), [3, 3, C, K])
        y = tf.nn.conv2d(x, w, strides=1, padding="SAME", data_format="NCHW")
        check("conv2d", [1, C, H, W, K, 3, 3], tf.reshape(y, [-1]).numpy().tolist(), ref_conv(X, WK))


def cudnn_str(v):
    # CUDNN_VERSION: M*10000 + m*100 + p from 9.0 on, M*1000 + m*100 + p before
    v = int(v)
    return "%d.%d.%d" % ((v // 10000, v // 100 % 100, v % 100) if v >= 90000 else (v // 1000, v // 100 % 10, v % 100))


def jax_plugin():
    # The CUDA plugin JAX loads, in the order jax_plugins/cuda tries them,
    # and what it was built against: its _versions module
    # (cuda_runtime_build_version() 12080 = CUDA 12.8, cudnn_build_version()
    # 90800 = cuDNN 9.8.0).  Failing that, the plugin wheel's name says the
    # CUDA major and its Requires-Dist the cuDNN (nvidia-cudnn-cu12>=9.8).
    import importlib
    errs = []
    for pkg in ("jax_cuda13_plugin", "jax_cuda12_plugin", "jaxlib.cuda"):
        try:
            v = importlib.import_module(pkg + "._versions")
        except ImportError as e:
            try:
                present = importlib.util.find_spec(pkg) is not None
            except Exception:
                present = False
            if present:
                errs.append("%s._versions: %s" % (pkg, e))
            continue
        R["plugin"] = pkg
        rt = int(v.cuda_runtime_build_version())
        R["cuda"] = "%d.%d" % (rt // 1000, rt % 1000 // 10)
        try:
            R["cudnn"] = cudnn_str(v.cudnn_build_version())
        except Exception as e:
            errs.append("%s cudnn_build_version: %s" % (pkg, e))
        return errs
    import importlib.metadata as md, re
    for major in ("13", "12"):
        dist = "jax-cuda%s-plugin" % major
        try:
            reqs = md.requires(dist) or []
        except Exception:
            continue
        R["plugin"] = dist
        R["cuda"] = major
        for q in reqs:
            m = re.match(r"nvidia-cudnn-cu%s\s*\(?\s*([^;)]*)" % major, q)
            lo = m and re.search(r">=\s*([0-9]+(?:\.[0-9]+)*)", m.group(1))
            if lo:
                R["cudnn"] = lo.group(1)
        return errs
    return errs


def run_jax():
    import jax
    R["imported"] = True
    R["module"] = getattr(jax, "__file__", None)
    R["version"] = str(jax.__version__)
    errs = jax_plugin()
    if errs:
        R["plugin_error"] = "; ".join(errs)
    R["cuda_build"] = R.get("plugin") is not None
    if QUICK or not R["cuda_build"]:
        return
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as e:
        R["gpus"], R["gpu_error"] = [], str(e)
        return
    R["gpus"] = [getattr(d, "device_kind", str(d)) for d in gpus]
    if not gpus:
        return
    import jax.numpy as jnp
    from jax import lax
    f32 = jnp.float32
    with jax.default_matmul_precision("highest"):
        a = jax.device_put(jnp.asarray(A, dtype=f32).reshape(N, N), gpus[0])
        b = jax.device_put(jnp.asarray(B, dtype=f32).reshape(N, N), gpus[0])
        check("matmul", [N, N, N], [float(v) for v in jnp.matmul(a, b).ravel().tolist()], ref_matmul(A, B))
        x = jax.device_put(jnp.asarray(X, dtype=f32).reshape(1, C, H, W), gpus[0])
        w = jax.device_put(jnp.asarray(WK, dtype=f32).reshape(K, C, 3, 3), gpus[0])
        y = lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)), dimension_numbers=("NCHW", "OIHW", "NCHW"))
        check("conv2d", [1, C, H, W, K, 3, 3], [float(v) for v in y.ravel().tolist()], ref_conv(X, WK))


# the library families of verify's per-family report (core/pylibs.c has the same table)
FAMILIES = (("libcudart.so", "cudart"), ("libcublasLt.so", "cublas"), ("libcublas.so", "cublas"),
            ("libcudnn", "cudnn"), ("libnccl.so", "nccl"), ("libnvrtc", "nvrtc"), ("libnvJitLink.so", "nvjitlink"),
            ("libcufft", "cufft"), ("libcusparseLt", "cusparselt"), ("libcusparse", "cusparse"),
            ("libcurand.so", "curand"), ("libcusolver", "cusolver"), ("libcupti.so", "cupti"))


def family(base):
    if ".so" not in base:
        return None
    for pre, fam in FAMILIES:
        if base.startswith(pre):
            return fam
    return None


def mapped():
    seen = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split(None, 5)
                path = p[5].strip() if len(p) == 6 else ""
                if path.startswith("/") and family(os.path.basename(path)) and path not in seen:
                    seen.append(path)
    except OSError:
        pass
    return seen


def loader_trace():
    # Why each library won, from the loader's own account (LD_DEBUG=libs,files
    # into LD_DEBUG_OUTPUT.<pid>, set by verify): the name asked for, who asked
    # (NEEDED or dlopen), and where the search found it (RUNPATH/RPATH of a
    # file, LD_LIBRARY_PATH, ld.so.cache, the system directories).
    out, base = {}, os.environ.get("LD_DEBUG_OUTPUT")
    if not base:
        return None
    try:
        lines = open("%s.%d" % (base, os.getpid()), errors="replace").read().splitlines()
    except OSError:
        return None
    import re
    asked, search, cur = {}, {}, None   # by the name asked for: who asked; how the search went
    for raw in lines:
        m = re.match(r"\s*\d+:\s?(.*)$", raw)
        t = (m.group(1) if m else raw).strip()
        if t.startswith("find library="):
            cur = search[t[len("find library="):].split(" [")[0]] = {}
        elif cur is not None and t.startswith("search path="):
            w = re.search(r"\((RUNPATH|RPATH) from file (.*)\)$", t)
            if w:
                cur["via"], cur["from"] = w.group(1), w.group(2)
            elif t.endswith("(LD_LIBRARY_PATH)"):
                cur["via"], cur["from"] = "LD_LIBRARY_PATH", None
            elif t.endswith("(system search path)"):
                cur["via"], cur["from"] = "system", None
        elif cur is not None and t.startswith("search cache="):
            cur["via"], cur["from"] = "ld.so.cache", None
        elif cur is not None and t.startswith("trying file="):
            cur["tried"] = t[len("trying file="):]
        elif t.startswith("file="):
            name = t[5:].split(" [")[0]
            for key, how in (("needed by ", "needed"), ("dynamically loaded by ", "dlopen")):
                if key in t:
                    asked[name] = {"how": how, "by": t.split(key, 1)[1].split(" [")[0]}
            if not t.endswith("generating link map"):
                continue
            rec = dict(asked.get(name, {}), name=name)
            if "/" in name:
                path, rec["how"] = name, "path"
            elif search.get(name, {}).get("tried"):
                sr = search[name]
                path = sr["tried"]
                rec.update(via=sr.get("via"), **({"from": sr["from"]} if sr.get("from") else {}))
            else:
                continue
            out.setdefault(os.path.realpath(path), rec)
    return out


def libraries(paths):
    trace = loader_trace()
    pre = {os.path.realpath(x) for x in (os.environ.get("LD_PRELOAD") or "").replace(":", " ").split() if x}
    res = []
    for p in paths:
        rec = {"file": p, "family": family(os.path.basename(p))}
        if trace is not None:
            rec.update(trace.get(os.path.realpath(p), {}))
        if os.path.realpath(p) in pre:
            rec["how"] = "LD_PRELOAD"
        res.append(rec)
    return res, trace is not None


DISTS = ("torch", "tensorflow", "jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda13-plugin", "tensorflow-cpu", "tensorflow-gpu", "tf-nightly", "nvidia-cudnn-cu11",
         "nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "nvidia-cuda-runtime", "nvidia-cuda-runtime-cu11",
         "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu13")
R["dists"] = {}
try:
    import importlib.metadata
    for d in DISTS:
        try:
            R["dists"][d] = importlib.metadata.version(d)
        except Exception:
            pass
except Exception:
    pass
try:
    import importlib.util
    mod = {"torch": "torch", "jax": "jax"}.get(FW, "tensorflow")
    if importlib.util.find_spec(mod) is None:
        R["import_error"] = "No module named '%s'" % mod
    else:
        try:
            {"torch": run_torch, "jax": run_jax}.get(FW, run_tf)()
        except ImportError as e:
            if R["imported"]:
                raise
            R["import_error"] = "%s: %s" % (type(e).__name__, e)
except BaseException as e:
    where = "compute_error" if R["gpus"] else "error"
    R[where] = "%s: %s" % (type(e).__name__, e)
    R["traceback"] = traceback.format_exc()[-3000:]
R["maps"] = mapped()
R["libs"], R["traced"] = libraries(R["maps"])


def owners(paths):
    # the pip distribution that installed each mapped file (nvidia-* wheels)
    out = {}
    want = {os.path.realpath(p): p for p in paths if "/nvidia/" in p}
    if not want:
        return out
    try:
        import importlib.metadata as md
        for dist in md.distributions():
            name = dist.metadata["Name"] or ""
            if not name.lower().startswith("nvidia"):
                continue
            for f in dist.files or []:
                real = os.path.realpath(str(dist.locate_file(f)))
                if real in want:
                    out[want[real]] = name
    except Exception:
        pass
    return out


R["owners"] = owners(R["maps"])
# where this Python imports from (doctor keeps this report until one of them changes:
# src/doctor/doctor_fwcache.c),
# less this script's private directory
HERE = os.path.dirname(os.path.abspath(__file__))
R["sys_path"] = [p for p in sys.path if p and os.path.abspath(p) != HERE]
with open(OUT, "w") as f:
    json.dump(R, f)
