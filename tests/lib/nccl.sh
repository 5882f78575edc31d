# NCCL as NVIDIA ships it to pip users (issue 26): a wheel, i.e. a zip with
# the library under nvidia/nccl/lib, headers under nvidia/nccl/include and a
# Python side (nvidia/__init__.py, nvidia/nccl/__init__.py, a dist-info) that
# cudaenv must leave out.  The library is tests/doubles/nccl.c.
#
# fx_nccl_wheel OUT.whl VERSION [EVIL]: EVIL=dotdot adds nvidia/nccl/../../../
#   escape.txt, EVIL=symlink a lib/libnccl.so link to /etc/passwd.
fx_nccl_wheel() {
    local out=$1 ver=$2 evil=${3:-}
    local w; w=$(mktemp -d "${TMPDIR:-/tmp}/fx-nccl.XXXXXX")
    local maj=${ver%%.*} r=${ver#*.}
    local min=${r%%.*} pat=${ver##*.}
    cc -shared -fPIC -Wl,-soname,libnccl.so.2 -DNCCL_CODE=$((maj * 10000 + min * 100 + pat)) \
        -o "$w/libnccl.so.2" "$TESTS_DIR/doubles/nccl.c"
    python3 - "$w" "$out" "$ver" "$evil" <<'PY'
import sys, zipfile, stat
w, out, ver, evil = sys.argv[1:5]
dist = "nvidia_nccl_cu11-%s.dist-info" % ver
def add(z, name, data, mode=0o644):
    zi = zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0))
    zi.external_attr = (stat.S_IFREG | mode) << 16
    zi.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(zi, data)
with zipfile.ZipFile(out, "w") as z:
    add(z, "nvidia/__init__.py", b"")
    add(z, "nvidia/nccl/__init__.py", b"")
    add(z, "nvidia/nccl/include/__init__.py", b"")
    add(z, "nvidia/nccl/include/nccl.h", ("#define NCCL_VERSION_CODE %s\n" % ver).encode())
    add(z, "nvidia/nccl/lib/__init__.py", b"")
    add(z, "nvidia/nccl/lib/libnccl.so.2", open(w + "/libnccl.so.2", "rb").read(), 0o755)
    if evil == "dotdot":
        add(z, "nvidia/nccl/../../../escape.txt", b"escaped\n")
    if evil == "symlink":
        zi = zipfile.ZipInfo("nvidia/nccl/lib/libnccl.so", (2024, 1, 1, 0, 0, 0))
        zi.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(zi, "/etc/passwd")
    add(z, dist + "/METADATA", ("Metadata-Version: 2.1\nName: nvidia-nccl-cu11\nVersion: %s\n" % ver).encode())
    add(z, dist + "/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-manylinux2014_x86_64\n")
    add(z, dist + "/RECORD", b"")
PY
    rm -rf "$w"
}

# fx_nccl_manifest MANIFEST MIRROR URL_BASE VERSION [EVIL]: a wheel for CUDA 11 in
# MIRROR/pypi/, NVIDIA's wheel name, pinned by sha256 (no size, as the real
# pins) in MANIFEST's "nccl" section; the 2.14 row installs it.
fx_nccl_manifest() {
    local m=$1 mirror=$2 base=$3 ver=$4 evil=${5:-}
    local rel=pypi/nvidia_nccl_cu11-$ver-py3-none-manylinux2014_x86_64.whl
    mkdir -p "$mirror/pypi"
    fx_nccl_wheel "$mirror/$rel" "$ver" "$evil"
    python3 - "$m" "$mirror/$rel" "$base/$rel" "$ver" <<'PY'
import hashlib, json, sys
p, f, url, ver = sys.argv[1:5]
m = json.load(open(p))
m["nccl"] = {ver: {"cuda11": {"linux-x86_64": {"url": url, "sha256": hashlib.sha256(open(f, "rb").read()).hexdigest()}},
                   "source": "test fixture"}}
m["tensorflow"]["2.14"]["nccl"] = ver
json.dump(m, open(p, "w"), indent=1)
PY
}
