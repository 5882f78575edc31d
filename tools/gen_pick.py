"""The resolution rule for implicit cuDNN choices (issue 39), for tools/gen-manifest.py and
tools/gen_frameworks.py: where the user names no cuDNN (a bare CUDA spec; a framework build
whose wheels give a cuDNN range, or a pin the manifest lacks), the manifest takes the NEWEST
candidate whose sha256 rests on firm ground: NVIDIA's redistrib JSON pinned by XLA
("nvidia-redist-json"), or at least two independent sources.  A newer candidate resting on one
source is passed over, and the row says which and why (cudaenv info prints it).  A row whose
candidates all rest on one source is an error: make manifest names it."""
import sys

JSON_SOURCE = "nvidia-redist-json"


def die(msg):   # as gen-manifest.py's
    sys.stderr.write("gen-manifest: %s\n" % msg)
    sys.exit(1)


def origin(label):
    """The project a sha256 source label stands for: copies of NVIDIA's JSON kept in nixpkgs or in
    nixos-cuda/cuda-legacy, and nixpkgs' releases.nix, are one source (the nixpkgs CUDA team)."""
    if label == JSON_SOURCE:
        return "xla-pinned NVIDIA JSON"
    if label.startswith(("nixpkgs", "nvidia-redistrib-json", "nvidia-redist-json-copy")):
        return "nixpkgs"
    if label.startswith("spack"):
        return "spack"
    return label.split("(")[0].strip()


def firm(art):
    """Whether art's sha256 is pinned (XLA-pinned JSON) or has two independent sources."""
    srcs = art.get("sha256_sources") or []
    return JSON_SOURCE in srcs or len({origin(s) for s in srcs}) >= 2


def ground(art):
    """Why art's sha256 is (or is not) firm, in words."""
    srcs = art.get("sha256_sources") or []
    if JSON_SOURCE in srcs:
        return "sha256 in NVIDIA's redistrib JSON, which XLA pins"
    names = sorted({origin(s) for s in srcs})
    if len(names) >= 2:
        return "sha256 from %d independent sources: %s" % (len(names), ", ".join(names))
    return "one sha256 source: %s" % (", ".join(srcs) or "none")


def pick(cands, row, accept_none=None):
    """cands: [(cuDNN version, artifact)] newest first, all usable.  Returns (version, passed over
    [versions], why); version None with accept_none (the reason a row takes no implicit cuDNN).
    Dies naming row when every candidate rests on one source and accept_none is not given."""
    passed = []
    for v, art in cands:
        if firm(art):
            why = "the newest cuDNN on firm ground (%s)" % ground(art)
            if passed:
                why += "; passed over %s" % ", ".join("%s (%s)" % (pv, ground(a)) for pv, a in cands if pv in passed)
            return v, passed, why
        passed.append(v)
    if accept_none:
        return None, passed, accept_none
    die("%s: every cuDNN candidate (%s) rests on one sha256 source; an implicit choice needs XLA's pinned "
        "JSON or two independent sources (tools/gen_pick.py). Add a second source to the data, or name the "
        "row in NO_IMPLICIT_CUDNN with the reason" % (row, ", ".join("%s: %s" % (v, ground(a)) for v, a in cands)))
