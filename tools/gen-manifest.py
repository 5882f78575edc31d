#!/usr/bin/env python3
"""Generate cudaenv's built-in manifest (schema 1, MANIFEST.md) from the
research draft, the table of published sizes and NVIDIA's redistrib JSONs,
all kept in the repository under data/ (a clone rebuilds its manifest alone):

    python3 tools/gen-manifest.py > share/manifests/cudaenv.json    (make manifest)
    python3 tools/gen-manifest.py DRAFT.json SIZES.md [REDIST_DIR] > cudaenv.json

REDIST_DIR holds cuda/redistrib_<ver>.json and cudnn/redistrib_<ver>.json,
verified byte-exact copies of NVIDIA's files (data/redist/SOURCES.md: each
file's sha256 must be listed there as "verified"; unverified ones are never
pinned).

Rules this follows, because the manifest is the trust root:
  * values are copied from the draft, never invented: a file without a
    verified sha256 is left out; a TensorFlow row whose files are missing
    stays, marked "not_installable" with the reason;
  * a size is used only for the exact file sizes.md names (the runfile by
    version + bundled driver, the cuDNN archive by version + CUDA major);
    where the draft and sizes.md both give one they must agree;
  * every TF row's CUDA + cuDNN pair is checked against TensorFlow's own
    table (major.minor) before it is written, and the draft's digests for
    the row must equal the ones in the cuda / cudnn sections;
  * every value group keeps its "source";
  * cuda.<ver>.redist pins NVIDIA's redistrib JSON (url, sha256, size) for
    every release with a verified copy; cuDNN sizes the draft lacks come from
    the verified cuDNN redistrib JSONs, only where their sha256 equals the
    manifest's (a different sha256 is an error);
  * "profiles" name the component sets installed from a redistrib JSON.
The generator fails (exit 1, message on stderr) rather than write a manifest
that breaks one of these.  Output is deterministic (no clock, stable order).
"""
import hashlib
import json
import os
import re
import sys

sys.dont_write_bytecode = True   # importing gen_frameworks leaves no tools/__pycache__ in the tree
from gen_frameworks import frameworks_section   # noqa: E402  tools/gen_frameworks.py: the torch and jax sections
from gen_pick import firm, pick                  # noqa: E402  tools/gen_pick.py: the rule for implicit cuDNN choices

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
REDIST_BASE = "https://developer.download.nvidia.com/compute/cuda/redist/"
REDIST_SOURCE = ("NVIDIA's redistrib JSON, byte-exact copy in data/redist/cuda (provenance and the sha256 "
                 "TensorFlow/XLA's cuda_redist_versions.bzl pins for NVIDIA's URL: data/redist/SOURCES.md)")

# Component profiles (MANIFEST.md "profiles"): what `install` takes from a
# release's redistrib JSON.  Names a release lacks are skipped.
PROFILES = {
    "tf": {
        "components": ["cuda_cudart", "libcublas", "libcufft", "libcurand", "libcusolver", "libcusparse",
                       "cuda_cupti", "cuda_nvcc", "cuda_nvrtc", "cuda_cccl", "cccl", "cuda_nvtx", "cuda_nvml_dev",
                       "cuda_nvprune", "cuda_profiler_api", "cuda_nvdisasm", "libnvjitlink", "cuda_crt",
                       "libnvvm"],
        "source": ("TensorFlow/XLA hermetic CUDA: third_party/gpus/cuda/hermetic/cuda_redist_versions.bzl "
                   "(REDIST_VERSIONS_TO_BUILD_TEMPLATES) + cuda_crt/libnvvm split out in CUDA 13; "
                   "cccl: NVIDIA's name for cuda_cccl from 13.3.0 (google-ml-infra/rules_ml_toolchain@44a2499 maps it)"),
    },
    "toolkit": {
        "components": ["*"],
        "exclude": ["cuda_documentation", "cuda_demo_suite", "cuda_nsight", "cuda_nvvp", "nsight_compute",
                    "nsight_systems", "nsight_vse", "nsight_nvtx", "visual_studio_integration",
                    "libnvvm_samples"],
        "source": "what the runfile's --toolkit installs on Linux, less documentation, demo suite and the Nsight GUIs",
    },
}

UPDATED = "2026-12-04"   # the newest source used: issue 39 (the rebuilt 12.8.2-13.3.0 JSONs, JAX tags, rwgk sizes);
                         # never before an NVIDIA JSON's release_date (main checks; 9.27.0's is 2026-09-29)
SERIAL = int(UPDATED.replace("-", "")) * 100 + 0   # the signed "serial": grows with every publication (raise
                                                   # the + 0 for a second one on the same UPDATED)
PLATFORMS = ("linux-x86_64", "linux-sbsa")   # what cudaenv installs for
SHA = re.compile(r"^[0-9a-f]{64}$")

SM_SOURCE = ("nvidia-facts.md 7a: mesonbuild/meson modules/cuda.py@021bf59 (_MICROISA_RANGES_DEF), "
             "spack-packages build_systems/cuda.py@1e8cf05, NVIDIA cuFFT docs (SM30 dropped in 11.0, "
             "SM35/37 in 12.0), CUDA 13 release notes (pre-Turing removed)")
DRIVER_SOURCE = ("CUDA Toolkit Release Notes Table 3 'Toolkit Driver Version', Linux "
                 "(docs.nvidia.com/cuda/cuda-toolkit-release-notes; 13.2 copy + meson modules/cuda.py@021bf59)")
COMPAT_SOURCE = ("CUDA Release Notes Table 2 / docs.nvidia.com/deploy/cuda-compatibility "
                 "(minor-version compatibility floor)")


def die(msg):
    sys.stderr.write("gen-manifest: %s\n" % msg)
    sys.exit(1)


def vkey(v):
    return tuple(int(x) for x in v.split("."))


def sm_range(ver):
    """Compute capabilities per CUDA release (nvidia-facts.md 7a); None where the facts do not say."""
    major, minor = vkey(ver)[:2]
    if major == 9:
        return {"min": "3.0"}          # sm_30 supported through 10.2; the 9.x maximum is not in the facts
    if major == 10:
        return {"min": "3.0", "max": "7.5"}
    if major == 11:
        if minor == 0:
            return {"min": "3.5", "max": "8.0"}
        if minor <= 4:
            return {"min": "3.5", "max": "8.6"}
        if minor <= 7:
            return {"min": "3.5", "max": "8.7"}
        return {"min": "3.5", "max": "9.0"}
    if major == 12:
        if minor <= 6:
            return {"min": "5.0", "max": "9.0"}
        if minor == 8:
            return {"min": "5.0", "max": "12.0"}
        return {"min": "5.0", "max": "12.1"}
    if major == 13:
        return {"min": "7.5", "max": "12.1"}
    return None


def parse_sizes(path):
    """sizes.md -> (5.1's [(versions, files, sizes)] with 5.1b's {runfile file name: bytes} as its
    .byname, 5.2's {(cudnn, major): bytes})."""
    runfile_rows, cudnn = SizeRows(), {}
    section = None
    for line in open(path, encoding="utf-8"):
        if line.startswith("### 5.1b"):
            section = "byname"
        elif line.startswith("### 5.1"):
            section = "runfile"
        elif line.startswith("### 5.2"):
            section = "cudnn"
        if not line.startswith("|") or "---" in line:
            continue
        cells = [c.strip().replace("**", "") for c in line.strip().strip("|").split("|")]
        if section == "byname" and len(cells) == 2 and cells[0] != "File":
            if not re.match(r"^cuda_[\d.]+_[\w.]*linux(_sbsa)?\.run$", cells[0]) or not re.match(r"^\d+$", cells[1]):
                die("%s: 5.1b row '%s': expected a runfile name and a byte count" % (path, line.strip()))
            if cells[0] in runfile_rows.byname:
                die("%s: 5.1b lists %s twice" % (path, cells[0]))
            runfile_rows.byname[cells[0]] = int(cells[1])
        elif section == "runfile" and len(cells) == 3 and cells[0] != "Version":
            vers = [v.strip() for v in cells[0].split("/")]
            first = vers[0]
            vers = [(first.rsplit(".", 1)[0] + v) if v.startswith(".") else v for v in vers]
            files = [f.strip().lstrip("…") for f in cells[1].split("/") if f.strip()]
            sizes = [int(re.sub(r"\(.*\)|,", "", s).strip()) for s in cells[2].split("/")]
            if len(sizes) != len(vers):
                die("%s: row '%s' has %d versions but %d sizes" % (path, cells[0], len(vers), len(sizes)))
            runfile_rows.append((vers, files, sizes))
        elif section == "cudnn" and len(cells) == 4 and cells[0] != "cuDNN":
            ver = re.sub(r"\(.*\)", "", cells[0]).strip()      # "8.7.0.84 (TF 2.14)"
            for major, cell in zip((11, 12, 13), cells[1:]):
                if re.match(r"^[\d,]+$", cell):
                    cudnn[(ver, major)] = int(cell.replace(",", ""))
    return runfile_rows, cudnn


class SizeRows(list):
    """5.1's rows, and 5.1b's sizes by exact file name (byname)."""
    def __init__(self):
        super().__init__()
        self.byname = {}


def runfile_size(rows, version, fname):
    """The size sizes.md gives for exactly this runfile (5.1b by file name, any platform; 5.1's
    x86_64 rows by version + bundled driver), or None; where both give one they must agree."""
    old = runfile_size_51(rows, version, fname)
    new = getattr(rows, "byname", {}).get(fname)
    if old is not None and new is not None and old != new:
        die("sizes.md: %s is %d bytes in 5.1 but %d in 5.1b" % (fname, old, new))
    return new if new is not None else old


def runfile_size_51(rows, version, fname):
    """The size 5.1 gives for exactly this x86_64 runfile, or None."""
    for vers, files, sizes in rows:
        if version not in vers and not any(f == fname for f in files):
            continue
        i = vers.index(version) if version in vers else None
        full = [f for f in files if f.endswith(".run")]
        drivers = [f for f in files if not f.endswith(".run")]
        if full:
            if fname in full and len(full) == 1 and len(sizes) == 1:
                return sizes[0]
            continue
        if i is None or not drivers:
            continue        # no file named in that row: not usable
        cands = [drivers[i]] if len(drivers) == len(vers) else drivers
        if any("cuda_%s_%s_linux.run" % (version, d) == fname for d in cands):
            return sizes[i]
    return None


def cuda_section(draft, rows):
    out = {}
    for ver in sorted(draft["cuda"], key=vkey, reverse=True):
        d = draft["cuda"][ver]
        runfiles, sha_src, size_src = {}, [], []
        for plat in PLATFORMS:
            r = d["runfiles"].get(plat)
            if not r or not SHA.match(r.get("sha256") or ""):
                continue
            art = {"url": r["url"], "sha256": r["sha256"]}
            if r["url"].rsplit("/", 1)[1] != r["file"]:
                die("draft cuda %s %s: file %s is not the URL's file name" % (ver, plat, r["file"]))
            size = runfile_size(rows, ver, r["file"])
            if size is not None:
                art["size"] = size
                size_src.append(r["file"])
            art["sha256_sources"] = r["sha256_sources"]
            runfiles[plat] = art
            sha_src.append("%s: %s" % (plat, "+".join(r["sha256_sources"])))
        if not runfiles:
            continue
        e = {}
        if d.get("min_driver_linux_toolkit"):
            e["min_driver"] = d["min_driver_linux_toolkit"]
        compat = re.match(r"^>=\s*([\d.]+)", d.get("min_driver_linux_minor_version_compat") or "")
        if compat:
            e["min_driver_compat"] = compat.group(1)
        if d.get("gcc_max_major"):
            e["max_gcc"] = d["gcc_max_major"]
        sm = sm_range(ver)
        if sm:
            e["sm"] = sm
        e["runfile"] = runfiles
        e["source"] = ("runfile sha256 %s (spack-packages@1e8cf05 cuda/package.py, "
                       "easybuild-easyconfigs@9ba1c10); min_driver: Release Notes Table 3; max_gcc: %s; "
                       "sm: nvidia-facts.md 7a" % ("; ".join(sha_src), d.get("gcc_max_sources", "?")))
        e["sources"] = {
            "runfile": draft["generated_from"]["spack_cuda"] + "; " + draft["generated_from"]["easybuild"],
            "min_driver": DRIVER_SOURCE,
            "min_driver_compat": COMPAT_SOURCE,
            "max_gcc": d.get("gcc_max_sources"),
            "sm": SM_SOURCE,
            "size": ("sizes.md 5.1/5.1b (NVIDIA catalog in rwgk/rwgk_config@6119ce8 ctk_download_installers.sh, "
                     "Gentoo dev-util/nvidia-cuda-toolkit Manifest) for " + ", ".join(size_src)) if size_src else None,
        }
        notes = [d[k] for k in ("min_driver_note", "gcc_note") if d.get(k)]
        if notes:
            e["notes"] = notes
        out[ver] = e
    return out


def cudnn_section(draft, cudnn_sizes):
    # The TF rows' choices decide which per-minor build of an old cuDNN is listed
    wanted = {(t["draft_resolution"]["cudnn_release"], t["draft_resolution"]["cudnn_built_for_cuda"])
              for t in draft["tensorflow"]}
    groups = {}
    for c in draft["cudnn"]:
        if c["platform"] not in PLATFORMS or not SHA.match(c.get("sha256") or ""):
            continue
        groups.setdefault((c["cudnn"], c["cuda_major"], c["platform"]), []).append(c)
    out = {}
    for ver in sorted({k[0] for k in groups}, key=vkey, reverse=True):
        entry, srcs = {}, set()
        for major in sorted({k[1] for k in groups if k[0] == ver}, reverse=True):
            build = {}
            for plat in PLATFORMS:
                cands = groups.get((ver, major, plat))
                if not cands:
                    continue
                pick = [c for c in cands if (ver, c["built_for_cuda"]) in wanted]
                c = pick[0] if pick else max(cands, key=lambda c: vkey(c["built_for_cuda"]))
                # NVIDIA's redistrib location when the draft knows it: the size below is for that file
                url = c.get("alt_url_redist") or c["url"]
                art = {"url": url, "sha256": c["sha256"]}
                fname = url.rsplit("/", 1)[1]
                per_major = fname.endswith("_cuda%d-archive.tar.xz" % major)
                size = c.get("size")
                table = cudnn_sizes.get((ver, major)) if plat == "linux-x86_64" and per_major else None
                if size is not None and table is not None and size != table:
                    die("cuDNN %s cuda%d %s: draft size %d != sizes.md %d" % (ver, major, plat, size, table))
                if size is None:
                    size = table
                if size is not None:
                    art["size"] = size
                if not per_major:
                    # Before 8.x NVIDIA built cuDNN per CUDA minor: that build needs that minor
                    art["for_cuda"] = c["built_for_cuda"]
                if c["url"] != url:
                    art["alt_url"] = c["url"]
                art["sha256_sources"] = c["sha256_sources"]
                others = sorted({o["built_for_cuda"] for o in cands} - {c["built_for_cuda"]}, key=vkey)
                if others:
                    art["other_builds_not_listed"] = others
                build[plat] = art
                srcs.update(c["sha256_sources"])
            if build:
                entry["cuda%d" % major] = build
        entry["source"] = ("sha256: %s (spack-packages@1e8cf05 cudnn/package.py; nixpkgs cuda-modules "
                           "redistrib copies + cudnn releases.nix; easybuild-easyconfigs@9ba1c10; full references "
                           "in the top-level \"sources\"); size: NVIDIA redistrib JSON (sizes.md 5.2)" % ", ".join(sorted(srcs)))
        out[ver] = entry
    return out


# Facts about a TF row that its pair does not show, each with its source (AUDIT-2026-12.md section 3)
TF_NOTES = {
    "2.15": ("pip `and-cuda` pinned cuDNN 8.9.4.25; 8.9.7.29 chosen (same 8.9 minor, compatible, digest verified). "
             "TensorFlow 2.15 was built with cuDNN 8.9.4 and its extra pinned nvidia-cudnn-cu12==8.9.4.25 "
             "(tensorflow/docs PR #2291 quoting tensorflow@0b15fdfc setup.py; the runtime log 'source was compiled with: "
             "8.9.4'); its run-time check wants the same major and a minor not older (8.9), which 8.9.7.29 is; "
             "8.9.7.29's sha256 is confirmed by spack, EasyBuild, nixpkgs' releases.nix and a copy of NVIDIA's JSON, "
             "while 8.9.4.25 has no independently pinned sha256"),
}


def installable(cuda, cudnn, cv, dv, plat="linux-x86_64"):
    """None when the pair installs on plat, else the reason."""
    c = cuda.get(cv)
    if not c or plat not in c.get("runfile", {}):
        return "no runfile with a verified sha256 for CUDA %s on %s" % (cv, plat)
    d = cudnn.get(dv, {}).get("cuda%d" % vkey(cv)[0], {}).get(plat)
    if not d:
        return "no cuDNN %s tarball for CUDA %d with a verified sha256 on %s" % (dv, vkey(cv)[0], plat)
    if d.get("for_cuda") and vkey(cv)[:2] != vkey(d["for_cuda"]):
        return "the listed cuDNN %s build is for CUDA %s, not %s" % (dv, d["for_cuda"], cv)
    return None


def tf_section(draft, cuda, cudnn):
    out = {}
    for t in sorted(draft["tensorflow"], key=lambda t: vkey(t["tensorflow"]), reverse=True):
        r = t["draft_resolution"]
        key = ".".join(t["tensorflow"].split(".")[:2])
        cv, dv = r["cuda_release"], r["cudnn_release"]
        # the pairing must be TensorFlow's own (its table gives major.minor)
        if vkey(cv)[:len(vkey(t["cuda"]))] != vkey(t["cuda"]) or vkey(dv)[:len(vkey(t["cudnn"]))] != vkey(t["cudnn"]):
            die("TF %s: draft resolution %s + %s does not match TF's table (%s + %s)"
                % (key, cv, dv, t["cuda"], t["cudnn"]))
        if key in out:
            die("TF %s listed twice" % key)
        reason = installable(cuda, cudnn, cv, dv)
        if not reason:
            if cuda[cv]["runfile"]["linux-x86_64"]["sha256"] != r["cuda_runfile_sha256"]:
                die("TF %s: runfile sha256 differs from the cuda section" % key)
            if cudnn[dv]["cuda%d" % vkey(cv)[0]]["linux-x86_64"]["sha256"] != r["cudnn_sha256"]:
                die("TF %s: cuDNN sha256 differs from the cudnn section" % key)
        e = {"cuda": cv, "cudnn": dv, "python": t["python"],
             "source": "%s: tensorflow %s -> CUDA %s, cuDNN %s; patch level: %s"
                       % (t["source"], t["tensorflow"], t["cuda"], t["cudnn"], r["note"]),
             "tf_table": {"release": t["tensorflow"], "pip_package": t["pip_package"],
                          "cuda": t["cuda"], "cudnn": t["cudnn"], "compiler": t["compiler"], "bazel": t["bazel"]}}
        if reason:
            e["not_installable"] = reason
        notes = [TF_NOTES[key]] if key in TF_NOTES else []
        for plat in (PLATFORMS[1:] if not reason else ()):     # not_installable speaks for linux-x86_64
            other = installable(cuda, cudnn, cv, dv, plat)
            if other:
                notes.append("not installable on %s (%s): %s" % (plat, {"linux-sbsa": "aarch64"}.get(plat, plat), other))
        if notes:
            e["notes"] = notes
        out[key] = e
    return out


def verified_files(redist_dir):
    """{file name: sha256} of the rows SOURCES.md marks verified."""
    out = {}
    for line in open(os.path.join(redist_dir, "SOURCES.md"), encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[6] == "verified" and SHA.match(cells[4]):
            out[cells[0]] = cells[4]
    return out


def xla_pins(redist_dir):
    """xla-pins.json: {kind: {file name: sha256}} of the redistrib JSONs TensorFlow/XLA pin."""
    doc = json.load(open(os.path.join(redist_dir, "xla-pins.json"), encoding="utf-8"))
    return {kind: {name: pin[0] for name, pin in doc[kind].items()} for kind in ("cuda", "cudnn")}


def read_redist(redist_dir, kind):
    """[(version label, file name, bytes, sha256, parsed)] of the verified JSONs in redist_dir/kind:
    each listed as verified in SOURCES.md and byte for byte the file XLA pins (xla-pins.json)."""
    ok = verified_files(redist_dir)
    pins = xla_pins(redist_dir)[kind]
    d = os.path.join(redist_dir, kind)
    out = []
    for name in sorted(os.listdir(d)):
        if not re.match(r"^redistrib_[\d.]+\.json$", name):
            continue
        raw = open(os.path.join(d, name), "rb").read()
        sha = hashlib.sha256(raw).hexdigest()
        if name not in pins:
            die("%s/%s: XLA pins no sha256 for NVIDIA's %s (%s/xla-pins.json); an unpinned copy is never "
                "NVIDIA's file here" % (d, name, name, redist_dir))
        if pins[name] != sha:
            die("%s/%s: sha256 %s differs from XLA's pin %s for NVIDIA's %s: the copy is not NVIDIA's file "
                "byte for byte (whitespace, key order, the trailing newline)" % (d, name, sha, pins[name], name))
        if ok.get(name) != sha:
            die("%s/%s: sha256 %s is not listed as verified in SOURCES.md; only verified copies are pinned"
                % (d, name, sha))
        out.append((name[len("redistrib_"):-len(".json")], name, len(raw), sha, json.loads(raw)))
    return out


def redist_only(draft, ver, doc, name):
    """The entry of a release NVIDIA ships as components but whose runfile has no verified sha256
    (12.8.2, 12.9.2, 13.0.3): its facts from NVIDIA's pinned JSON and the per-major rules."""
    major = vkey(ver)[0]
    compat = {re.match(r"^>=\s*([\d.]+)", d.get("min_driver_linux_minor_version_compat") or "").group(1)
              for v, d in draft["cuda"].items() if vkey(v)[0] == major
              and re.match(r"^>=\s*([\d.]+)", d.get("min_driver_linux_minor_version_compat") or "")}
    drv = (doc.get("nvidia_driver") or {}).get("version")
    e = {}
    if drv:
        e["min_driver"] = drv
    if len(compat) == 1:
        e["min_driver_compat"] = compat.pop()
    sm = sm_range(ver)
    if sm:
        e["sm"] = sm
    e["source"] = ("redist only: NVIDIA's components (%s, pinned by XLA); no runfile sha256 in spack-packages@1e8cf05 "
                   "or GCP's installer; min_driver: the driver NVIDIA's JSON bundles (nvidia_driver), no Release "
                   "Notes Table 3 row seen; max_gcc: no source for this patch release; sm: nvidia-facts.md 7a" % name)
    e["sources"] = {"min_driver": "nvidia_driver.version in NVIDIA's " + name, "min_driver_compat": COMPAT_SOURCE,
                    "sm": SM_SOURCE}
    return e


def add_redist(cuda, redist_dir, draft):
    for ver, name, size, sha, doc in read_redist(redist_dir, "cuda"):
        if doc.get("release_label", ver) != ver:
            die("%s: release_label %s does not match the file name" % (name, doc.get("release_label")))
        if ver not in cuda:
            cuda[ver] = redist_only(draft, ver, doc, name)
        e = cuda[ver]
        e["redist"] = {"url": REDIST_BASE + name, "sha256": sha, "size": size}
        e["sources"]["redist"] = REDIST_SOURCE
    ordered = {k: cuda[k] for k in sorted(cuda, key=vkey, reverse=True)}
    cuda.clear()
    cuda.update(ordered)


CUDNN_BASE = "https://developer.download.nvidia.com/compute/cudnn/redist/"
CUDNN_FILE = re.compile(r"-(\d+\.\d+\.\d+\.\d+)_cuda(\d+)-archive\.tar\.xz$")
JSON_SOURCE = "nvidia-redist-json"


def merge_cudnn_json(cudnn, redist_dir):
    """NVIDIA's verified cuDNN JSONs into the cudnn section, matched by FILE NAME
    (a JSON's builds may carry other versions than its top-level one: 9.15.0's
    cuda13 build is 9.15.0.58).  A build the draft has must have the JSON's
    sha256 (else an error); it gains the JSON's size and the JSON as a second
    source.  A build only the JSON has is added: NVIDIA's own file list, pinned
    by the JSON's verified sha256.  Returns (sizes filled, builds added)."""
    filled = added = 0
    for _, name, _, _, doc in read_redist(redist_dir, "cudnn"):
        c = doc.get("cudnn") or {}
        for plat in PLATFORMS:
            for variant, art in sorted((c.get(plat) or {}).items()):
                if not isinstance(art, dict) or not re.match(r"^cuda\d+$", variant):
                    continue
                m = CUDNN_FILE.search(art["relative_path"])
                if not m or "cuda" + m.group(2) != variant:
                    die("%s: %s %s: unexpected file name %s" % (name, plat, variant, art["relative_path"]))
                full, fname = m.group(1), art["relative_path"].rsplit("/", 1)[1]
                size = int(art["size"])
                entry = cudnn.setdefault(full, {})
                cur = entry.get(variant, {}).get(plat)
                if cur is None:
                    entry.setdefault(variant, {})[plat] = {
                        "url": CUDNN_BASE + art["relative_path"], "sha256": art["sha256"], "size": size,
                        "sha256_sources": [JSON_SOURCE]}
                    entry.setdefault("source", "NVIDIA's %s (data/redist/cudnn, verified: SOURCES.md)" % name)
                    added += 1
                    continue
                if cur["url"].rsplit("/", 1)[1] != fname:
                    continue
                if cur["sha256"] != art["sha256"]:
                    die("cuDNN %s %s %s: manifest sha256 %s != %s in %s"
                        % (full, variant, plat, cur["sha256"], art["sha256"], name))
                if "size" in cur and cur["size"] != size:
                    die("cuDNN %s %s %s: size %d != %d in %s" % (full, variant, plat, cur["size"], size, name))
                if "size" not in cur:
                    cur["size"] = size
                    filled += 1
                if JSON_SOURCE not in cur["sha256_sources"]:
                    cur["sha256_sources"] = cur["sha256_sources"] + [JSON_SOURCE]
                if name not in entry.get("source", ""):
                    entry["source"] = entry.get("source", "") + "; sizes also from NVIDIA's %s (data/redist/cudnn)" % name
    # stable order: newest release first, as cudnn_section writes it
    ordered = {k: cudnn[k] for k in sorted(cudnn, key=vkey, reverse=True)}
    cudnn.clear()
    cudnn.update(ordered)
    return filled, added


def complete_from_copy(cudnn, redist_dir):
    """The Linux builds of a cuDNN release that the draft took from an unverified copy of NVIDIA's
    JSON (data/redist/cudnn/unverified, its sha256 listed in SOURCES.md) but left out: added only
    where every build the manifest has of that release equals the copy's (sha256, size) and names
    the copy among its sha256 sources; an added build carries those same sources (the copy has no
    independent pin: the standard of the release's other builds, no higher).  Returns builds added."""
    listed = {}
    for line in open(os.path.join(redist_dir, "SOURCES.md"), encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[6] == "unverified" and SHA.match(cells[4]):
            listed[cells[0]] = cells[4]
    d = os.path.join(redist_dir, "cudnn", "unverified")
    added = 0
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else ():
        if not re.match(r"^redistrib_[\d.]+\.json$", name):
            continue
        raw = open(os.path.join(d, name), "rb").read()
        if listed.get("unverified/" + name) != hashlib.sha256(raw).hexdigest():
            die("%s/%s: sha256 %s is not the one SOURCES.md lists for unverified/%s"
                % (d, name, hashlib.sha256(raw).hexdigest(), name))
        files, doc = {}, json.loads(raw)
        for plat in PLATFORMS:
            for variant, art in sorted((doc.get("cudnn", {}).get(plat) or {}).items()):
                m = CUDNN_FILE.search(art.get("relative_path", "")) if isinstance(art, dict) else None
                if m and "cuda" + m.group(2) == variant and SHA.match(art.get("sha256", "")):
                    files[(m.group(1), variant, plat)] = art
        for full in sorted({k[0] for k in files}, key=vkey):
            have = [(v, p, a) for v, b in cudnn.get(full, {}).items() if v.startswith("cuda") for p, a in b.items()]
            srcs = sorted({s for _, _, a in have for s in a["sha256_sources"] if name in s})
            if not srcs:
                continue        # the draft did not take this release from this copy
            for v, p, a in have:
                f = files.get((full, v, p))
                if not f or f["sha256"] != a["sha256"] or a.get("size", int(f["size"])) != int(f["size"]):
                    die("cuDNN %s %s %s: the manifest's build differs from unverified/%s" % (full, v, p, name))
            for (f_full, v, p), art in sorted(files.items()):
                if f_full == full and p not in cudnn[full].get(v, {}):
                    cudnn[full].setdefault(v, {})[p] = {"url": CUDNN_BASE + art["relative_path"], "sha256": art["sha256"],
                                                        "size": int(art["size"]), "sha256_sources": srcs}
                    added += 1
                    note = "builds the draft lacks from the same copy (data/redist/cudnn/unverified/%s)" % name
                    if note not in cudnn[full]["source"]:
                        cudnn[full]["source"] += "; " + note
    return added


def newest_release_date(redist_dir):
    """The newest release_date of the NVIDIA JSONs (and copies) the generator reads."""
    dates = []
    for sub in ("cuda", "cudnn", os.path.join("cudnn", "unverified")):
        d = os.path.join(redist_dir, sub)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else ():
            if re.match(r"^redistrib_[\d.]+\.json$", name):
                dates.append(json.load(open(os.path.join(d, name), encoding="utf-8")).get("release_date", ""))
    return max(dates, default="")


def coverage(cuda, cudnn, nccl=None):
    """(artifacts, with a size, on firm ground, [single-source labels]) over every pinned file: firm is
    tools/gen_pick.py's rule (an XLA-pinned JSON, or two independent sha256 sources); a release's
    redistrib JSON is XLA's pin of NVIDIA's file, checked against our copy."""
    n = sized = two = 0
    single = []
    for ver, e in cuda.items():
        for plat, art in e.get("runfile", {}).items():
            n += 1
            sized += "size" in art
            ok = firm(art)
            two += ok
            if not ok:
                single.append(("runfile", ver, plat))
        if "redist" in e:
            n += 1
            sized += 1
            two += 1
    for kind, sec in (("cuDNN", cudnn), ("NCCL", nccl or {})):
        for ver, e in sec.items():
            for variant, builds in e.items():
                if not variant.startswith("cuda"):
                    continue
                for plat, art in builds.items():
                    n += 1
                    sized += "size" in art
                    ok = firm(art)
                    two += ok
                    if not ok:
                        single.append((kind, "%s %s" % (ver, variant), plat))
    return n, sized, two, single


COPY_SOURCE = "nvidia-redist-json-copy"
COPY_SOURCE_TEXT = ("copies of NVIDIA's cuDNN redistrib JSONs that no one pins: NixOS/nixpkgs "
                    "pkgs/development/cuda-modules/_cuda/manifests/cudnn and nixos-cuda/cuda-legacy (the entry's "
                    "source names the file; data/redist/SOURCES.md lists them as unverified)")


def relabel(cuda, cudnn, keys):
    """sha256_sources labels -> keys of the top-level "sources" (spack_cuda / spack_cudnn, nixpkgs,
    nvidia-redist-json-copy, ...); a label that maps to no key is an error."""
    def key(label, kind):
        if label == "spack":
            return "spack_cuda" if kind == "runfile" else "spack_cudnn"
        if label.startswith("nixpkgs-releases.nix"):
            return "nixpkgs"
        if label.startswith("nvidia-redistrib-json"):
            return COPY_SOURCE
        return label
    arts = [("runfile", a) for e in cuda.values() for a in e.get("runfile", {}).values()]
    arts += [("cudnn", a) for e in cudnn.values() for v, b in e.items() if v.startswith("cuda") for a in b.values()]
    for kind, a in arts:
        out = []
        for label in a["sha256_sources"]:
            k = key(label, kind)
            if k not in keys:
                die("sha256 source '%s' (%s %s) is no key of the manifest's \"sources\"" % (label, kind, a["url"]))
            if k not in out:
                out.append(k)
        a["sha256_sources"] = out


def single_source_line(single):
    """The single-source list make manifest prints: per kind, each file as VERSION[ cudaNN] PLATFORM."""
    short = {"linux-x86_64": "x86_64", "linux-sbsa": "sbsa"}
    parts = []
    for kind in ("runfile", "cuDNN", "NCCL"):
        items = ["%s %s" % (what, short.get(plat, plat)) for k, what, plat in single if k == kind]
        if items:
            parts.append("%s (%d): %s" % (kind, len(items), ", ".join(items)))
    return "gen-manifest: single-source sha256 (%d files; a cuDNN among them is never an implicit choice): %s\n" % (
        len(single), "; ".join(parts) or "none")


# Rows whose cuDNN candidates all rest on one sha256 source: a bare spec takes no cuDNN (the user
# names one with --cudnn or +cudnnX), instead of make manifest failing (tools/gen_pick.py)
NO_IMPLICIT_CUDNN = {
    "9.0.176": ("no implicit cuDNN: the cuDNN 7.6 builds for CUDA 9 rest on one sha256 source (spack; "
                "AUDIT-2026-12b.md section 4: per-minor tgz builds from before NVIDIA's redistrib JSONs); name one "
                "with --cudnn"),
    "9.2.88": ("no implicit cuDNN: the cuDNN 7.6 builds for CUDA 9 rest on one sha256 source (spack; "
               "AUDIT-2026-12b.md section 4: per-minor tgz builds from before NVIDIA's redistrib JSONs); name one "
               "with --cudnn"),
}


def usable_cudnn(cudnn, cv, plat):
    """[(cuDNN version, artifact)] newest first that install with CUDA cv on plat (cudaenv's
    resolve.c usable_archive: built for the major; an old per-minor build only for its X.Y)."""
    out = []
    for dv in sorted(cudnn, key=vkey, reverse=True):
        a = cudnn[dv].get("cuda%d" % vkey(cv)[0], {}).get(plat)
        if a and (not a.get("for_cuda") or vkey(a["for_cuda"]) == vkey(cv)[:2]):
            out.append((dv, a))
    return out


def add_cudnn_defaults(cuda, cudnn):
    """cuda.<ver>.cudnn_default.<platform>: the cuDNN a bare CUDA spec takes (the resolution rule,
    tools/gen_pick.py), the newer ones passed over and why.  Returns the rows that passed one over."""
    passed_rows = 0
    for cv, e in cuda.items():
        plats = PLATFORMS if e.get("redist") else [p for p in PLATFORMS if p in e.get("runfile", {})]
        out = {}
        for plat in plats:
            cands = usable_cudnn(cudnn, cv, plat)
            if not cands:
                continue
            v, passed, why = pick(cands, "cuda %s %s (a bare CUDA spec's cuDNN)" % (cv, plat), NO_IMPLICIT_CUDNN.get(cv))
            out[plat] = {"cudnn": v, **({"passed_over": ", ".join(passed)} if passed else {}), "why": why}
            passed_rows += bool(passed)
        if out:
            e["cudnn_default"] = out
    return passed_rows


def nccl_section(path):
    """data/nccl.json -> (the manifest's "nccl" section, {CUDA major: NCCL for TF rows}, first TF row).
    Same shape as cudnn (release -> cudaNN -> platform -> file); every file needs a sha256 and its sources."""
    d = json.load(open(path, encoding="utf-8"))
    known = set(d["sources"])
    out = {}
    for ver in sorted(d["nccl"], key=vkey, reverse=True):
        e = {}
        for variant, builds in sorted(d["nccl"][ver].items(), reverse=True):
            if not re.match(r"^cuda\d+$", variant):
                die("%s: nccl %s: unexpected key %s" % (path, ver, variant))
            for plat, art in builds.items():
                if plat not in PLATFORMS or not SHA.match(art.get("sha256", "")) or not art["url"].startswith("https://"):
                    die("%s: nccl %s %s %s: needs an https url and a sha256" % (path, ver, variant, plat))
                if not art.get("sha256_sources") or not set(art["sha256_sources"]) <= known:
                    die("%s: nccl %s %s %s: sha256_sources must name entries of \"sources\"" % (path, ver, variant, plat))
                if not art["url"].endswith(".whl") or ("nvidia_nccl_%s-%s-" % (variant.replace("cuda", "cu"), ver)) not in art["url"]:
                    die("%s: nccl %s %s %s: the url is not that NCCL wheel" % (path, ver, variant, plat))
            e[variant] = builds
        e["source"] = "sha256: " + "; ".join(d["sources"][s] for s in sorted(
            {s for b in d["nccl"][ver].values() for a in b.values() for s in a["sha256_sources"]}))
        out[ver] = e
    rows = {int(k[4:]): v for k, v in d["tensorflow"].items() if k.startswith("cuda")}
    for v in rows.values():
        if v not in out:
            die("%s: tensorflow names NCCL %s, which has no entry" % (path, v))
    return out, rows, d["tensorflow"]["min"], d["sources"]


def add_tf_nccl(tf, cuda, nccl, rows, first):
    for key, e in tf.items():
        if vkey(key) < vkey(first) or e.get("not_installable"):
            continue
        v = rows.get(vkey(e["cuda"])[0])
        if v and "cuda%d" % vkey(e["cuda"])[0] in nccl[v]:
            e["nccl"] = v


def main(argv):
    if len(argv) not in (1, 3, 4):
        die("usage: gen-manifest.py [manifest-draft.json sizes.md [redist-dir]] > cudaenv.json")
    draft_p = argv[1] if len(argv) > 1 else os.path.join(DATA, "manifest-draft.json")
    sizes_p = argv[2] if len(argv) > 2 else os.path.join(DATA, "sizes.md")
    redist_p = argv[3] if len(argv) > 3 else os.path.join(DATA, "redist")
    draft = json.load(open(draft_p, encoding="utf-8"))
    rows, cudnn_sizes = parse_sizes(sizes_p)
    cuda = cuda_section(draft, rows)
    cudnn = cudnn_section(draft, cudnn_sizes)
    add_redist(cuda, redist_p, draft)
    filled, added = merge_cudnn_json(cudnn, redist_p)
    copied = complete_from_copy(cudnn, redist_p)
    if newest_release_date(redist_p) > UPDATED:
        die("\"updated\" %s is before %s, the release_date of a JSON used: raise UPDATED"
            % (UPDATED, newest_release_date(redist_p)))
    passed_rows = add_cudnn_defaults(cuda, cudnn)
    tf = tf_section(draft, cuda, cudnn)
    nccl, nccl_rows, nccl_first, nccl_sources = nccl_section(os.path.join(DATA, "nccl.json"))
    add_tf_nccl(tf, cuda, nccl, nccl_rows, nccl_first)
    sources = dict(draft["generated_from"], **nccl_sources, **{JSON_SOURCE: (
        "NVIDIA's cuDNN redistrib JSONs in data/redist/cudnn: byte-exact copies whose sha256 equals the pin "
        "TensorFlow/XLA (cuda_redist_versions.bzl CUDNN_REDIST_JSON_DICT) keeps for NVIDIA's URL; "
        "data/redist/SOURCES.md and xla-pins.json")}, **{COPY_SOURCE: COPY_SOURCE_TEXT})
    fws = frameworks_section(os.path.join(DATA, "frameworks.json"), cuda, cudnn)
    relabel(cuda, cudnn, sources)     # after every pick: their reasons quote the draft's own labels
    n, sized, two, single = coverage(cuda, cudnn, nccl)
    tarballs = [a for e in cudnn.values() for v, b in e.items() if v.startswith("cuda") for a in b.values()]
    sys.stderr.write("gen-manifest: %d pinned files: %d with a size, %d with two sha256 sources or NVIDIA's JSON "
                     "(cuDNN from NVIDIA's JSONs: %d sizes filled, %d builds added, %d from the copy a release came from; "
                     "cuDNN tarballs: %d of %d with a size; %d bare CUDA spec x platform pairs pass over a single-source cuDNN)\n"
                     % (n, sized, two, filled, added, copied, sum("size" in a for a in tarballs), len(tarballs),
                        passed_rows))
    sys.stderr.write(single_source_line(single))
    doc = {
        "schema": 1,
        "updated": UPDATED,
        "serial": SERIAL,
        **({"source": os.environ["MANIFEST_SOURCE"]} if os.environ.get("MANIFEST_SOURCE") else {}),
        "generated_by": ("tools/gen-manifest.py from data/manifest-draft.json, data/sizes.md and "
                         "data/redist/ and data/nccl.json (make manifest); do not edit"),
        "sources": sources,
        "profiles": PROFILES,
        "tensorflow": tf,
        "torch": fws["torch"],
        "jax": fws["jax"],
        "cuda": cuda,
        "cudnn": cudnn,
        "nccl": nccl,
    }
    json.dump(doc, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
