#!/usr/bin/env python3
"""The built-in manifest made N times bigger (a mirror's manifest can be that
big): N-1 shifted copies of every TensorFlow, CUDA and cuDNN entry (major
versions + 100*k), the originals unchanged.  bench/bigmanifest.py IN N > OUT"""
import copy, json, re, sys

src, n = sys.argv[1], int(sys.argv[2])
m = json.load(open(src))

def shift(v, k):
    head, _, rest = v.partition(".")
    return f"{int(head) + 100 * k}.{rest}" if rest else str(int(head) + 100 * k)

def shift_build_key(key, k):
    mm = re.fullmatch(r"cuda(\d+)", key)
    return f"cuda{int(mm.group(1)) + 100 * k}" if mm else key

out = copy.deepcopy(m)
for k in range(1, n):
    for v, e in m.get("cuda", {}).items():
        out["cuda"][shift(v, k)] = copy.deepcopy(e)
    for v, e in m.get("cudnn", {}).items():
        ne = {}
        for key, val in e.items():
            val = copy.deepcopy(val)
            if isinstance(val, dict):
                for plat in val.values():
                    if isinstance(plat, dict) and plat.get("for_cuda"):
                        plat["for_cuda"] = shift(plat["for_cuda"], k)
            ne[shift_build_key(key, k)] = val
        out["cudnn"][shift(v, k)] = ne
    for v, e in m.get("tensorflow", {}).items():
        ne = copy.deepcopy(e)
        if ne.get("cuda"):
            ne["cuda"] = shift(ne["cuda"], k)
        if ne.get("cudnn"):
            ne["cudnn"] = shift(ne["cudnn"], k)
        ne.pop("nccl", None)   # NCCL's builds are per real CUDA major: the shifted copies name none
        out["tensorflow"][shift(v, k)] = ne
json.dump(out, sys.stdout, indent=1)
