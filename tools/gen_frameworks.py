"""The manifest's "torch" and "jax" sections (MANIFEST.md), for tools/gen-manifest.py:
data/frameworks.json (PyTorch's release compatibility matrix, JAX's CUDA plugin pins, every row
with its source; data/FRAMEWORKS-SOURCES.md) resolved against the generated cuda and cudnn
sections.  Each build names a CUDA and a cuDNN release the manifest installs on linux-x86_64, or
stays, marked "not_installable" with the reason, as TensorFlow rows do."""
import json
import sys

from gen_pick import pick   # tools/gen_pick.py: the rule for implicit cuDNN choices


def die(msg):   # as gen-manifest.py's
    sys.stderr.write("gen-manifest: %s\n" % msg)
    sys.exit(1)


def vkey(v):    # as gen-manifest.py's
    return tuple(int(x) for x in v.split("."))


def fw_cuda_ok(cuda, cv, plat="linux-x86_64"):
    """A CUDA release that installs on plat: a runfile or NVIDIA's components."""
    c = cuda.get(cv)
    return bool(c and (plat in c.get("runfile", {}) or c.get("redist")))


def fw_cudnn_ok(cudnn, dv, cv, plat="linux-x86_64"):
    d = cudnn.get(dv, {}).get("cuda%d" % vkey(cv)[0], {}).get(plat)
    return bool(d and (not d.get("for_cuda") or vkey(cv)[:2] == vkey(d["for_cuda"])))


def fw_cudnn_cands(cudnn, cv, pred, plat="linux-x86_64"):
    """[(cuDNN version, artifact)] newest first that pred accepts and that install with CUDA cv."""
    return [(k, cudnn[k]["cuda%d" % vkey(cv)[0]][plat]) for k in sorted(cudnn, key=vkey, reverse=True)
            if pred(k) and fw_cudnn_ok(cudnn, k, cv, plat)]


def fw_newest(keys, pred):
    for k in sorted(keys, key=vkey, reverse=True):
        if pred(k):
            return k
    return None


def fw_torch_build(cuda, cudnn, tag, b, row):
    """A PyTorch CUDA build (the wheel's CUDA X.Y + the cuDNN its wheels pin) -> the manifest's
    newest CUDA X.Y.* and the exact cuDNN, else the newest cuDNN of the pin's X.Y."""
    cx, dpin = b["cuda"], b["cudnn"]
    cv = fw_newest(cuda, lambda k: vkey(k)[:2] == vkey(cx)[:2] and fw_cuda_ok(cuda, k))
    how = []
    reason = None
    if not cv:
        reason = "no CUDA %s.* release that installs on linux-x86_64 in the manifest" % cx
        cv = cx + ".0"
    else:
        how.append("CUDA %s -> %s (newest %s.*)" % (cx, cv, cx))
    dv, passed, why = dpin, [], None
    if not fw_cudnn_ok(cudnn, dpin, cv):
        cands = fw_cudnn_cands(cudnn, cv, lambda k: vkey(k)[:2] == vkey(dpin)[:2])
        dv, passed, why = pick(cands, "%s %s (cuDNN %s.* for a pin the manifest lacks)" % (row, tag, ".".join(
            dpin.split(".")[:2]))) if cands else (None, [], None)
    if dv and dv != dpin:
        how.append("cuDNN %s is not in the manifest -> %s (newest %s.* on firm ground)" % (
            dpin, dv, ".".join(dpin.split(".")[:2])))
    if not dv and not reason:
        reason = "no cuDNN %s.* built for CUDA %d with a verified sha256 in the manifest (the wheels pin %s)" % (
            ".".join(dpin.split(".")[:2]), vkey(cv)[0], dpin)
    e = {"cuda": cv, "cudnn": dv or dpin, **fw_why(why, passed), "wheel": {"cuda": cx, "cudnn": dpin},
         "channel": b["channel"], "source": b["source"] + ("; " + ", ".join(how) if how else "")}
    if reason:
        e["not_installable"] = reason
    return e


def fw_why(why, passed):
    """A build's cudnn_why / cudnn_passed_over (MANIFEST.md): an implicit choice says why."""
    return {**({"cudnn_why": why} if why else {}), **({"cudnn_passed_over": ", ".join(passed)} if passed else {})}


def fw_jax_build(cuda, cudnn, tag, b, row):
    """A JAX CUDA plugin's pins are minimums (>=): the newest CUDA of the major and the newest
    cuDNN below the pin's bound that the manifest installs, as pip resolves them."""
    major = int(tag[4:])
    low = max(vkey(b["cuda_runtime_min"]), vkey(b["cuda_nvcc_min"] or "0"))
    cv = fw_newest(cuda, lambda k: vkey(k)[0] == major and vkey(k) >= low and fw_cuda_ok(cuda, k))
    reason = None if cv else "no CUDA %d.x >= %s that installs on linux-x86_64 in the manifest" % (
        major, ".".join(map(str, low)))
    cv = cv or ".".join(map(str, low))
    cands = fw_cudnn_cands(cudnn, cv, lambda k: vkey(b["cudnn_min"]) <= vkey(k) < vkey(b["cudnn_below"]))
    dv, passed, why = pick(cands, "%s %s (cuDNN >= %s, < %s)" % (row, tag, b["cudnn_min"], b["cudnn_below"])) \
        if cands else (None, [], None)
    if not dv and not reason:
        reason = "no cuDNN >= %s, < %s built for CUDA %d in the manifest" % (b["cudnn_min"], b["cudnn_below"], major)
    pins = "nvidia-cuda-runtime >= %s%s, nvidia-cudnn-cu%d >= %s, < %s" % (
        b["cuda_runtime_min"], ", nvidia-cuda-nvcc >= %s" % b["cuda_nvcc_min"] if b["cuda_nvcc_min"] else "",
        major, b["cudnn_min"], b["cudnn_below"])
    e = {"cuda": cv, "cudnn": dv or b["cudnn_min"], **fw_why(why, passed),
         "wheel": {"cuda": ".".join(map(str, low)), "cudnn": b["cudnn_min"]},
         "pins": pins, "source": b["source"] + ": " + pins + "; the newest the manifest installs on firm ground (tools/gen_pick.py)"}
    if reason:
        e["not_installable"] = reason
    return e


def frameworks_section(path, cuda, cudnn):
    """data/frameworks.json -> the manifest's "torch" and "jax" sections: per release its default
    build (what pip installs from PyPI) and every CUDA build, each resolved to a CUDA and a cuDNN
    release of the manifest, or kept and marked not_installable with the reason."""
    fw = json.load(open(path, encoding="utf-8"))
    out = {}
    for name, build in (("torch", fw_torch_build), ("jax", fw_jax_build)):
        sec = {}
        for v in sorted(fw[name], key=vkey, reverse=True):
            r = fw[name][v]
            if r["default"] not in r["builds"]:
                die("%s %s: default build %s is not one of its builds" % (name, v, r["default"]))
            e = {"default": r["default"], "default_source": r["default_source"],
                 "builds": {t: build(cuda, cudnn, t, b, "%s %s" % (name, v)) for t, b in sorted(r["builds"].items())}}
            if r.get("python"):
                e["python"] = r["python"]
            e["source"] = r.get("source") or r["builds"][r["default"]]["source"]
            sec[v] = e
        out[name] = sec
    n = sum(len(r["builds"]) for s in out.values() for r in s.values())
    bad = sum(1 for s in out.values() for r in s.values() for b in r["builds"].values() if "not_installable" in b)
    sys.stderr.write("gen-manifest: frameworks: %d PyTorch and %d JAX releases, %d CUDA builds (%d not installable)\n"
                     % (len(out["torch"]), len(out["jax"]), n, bad))
    return out
