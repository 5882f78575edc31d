# NCCL as NVIDIA ships it to pip users (issue 26): a wheel, i.e. a zip with
# the library under nvidia/nccl/lib, headers under nvidia/nccl/include and a
# Python side (nvidia/__init__.py, nvidia/nccl/__init__.py, a dist-info) that
# cudaenv must leave out.  The library is tests/doubles/nccl.c.
#
# fx_nccl_wheel OUT.whl VERSION [EVIL]: the wheel with its RECORD (written
#   by tests/lib/wheel.py).  EVIL=dotdot adds nvidia/nccl/../../../escape.txt,
#   EVIL=symlink a lib/libnccl.so link to /etc/passwd; against RECORD:
#   tamper (a byte of lib/libnccl.so.2 changed after RECORD was written),
#   unlisted (a lib/libextra.so.2 RECORD leaves out), size (RECORD's size of
#   libnccl.so.2 one more), hashless (libnccl.so.2 listed without a hash),
#   ghost (RECORD names lib/libghost.so.1, the zip lacks it), norecord;
#   bomb: a lib/libbomb.so of FX_NCCL_BOMB zero bytes (8 MiB), in RECORD.
# FX_NCCL_SHAPE: the shape producers write, wheel.py's --shape (a comma list
#   of streamed, zip64, stored, record-hashed; "": deflated, sizes in the
#   local headers, RECORD's own line without a hash).
fx_nccl_wheel() {
    local out=$1 ver=$2 evil=${3:-}
    local w; w=$(mktemp -d "${TMPDIR:-/tmp}/fx-nccl.XXXXXX")
    local maj=${ver%%.*} r=${ver#*.}
    local min=${r%%.*} pat=${ver##*.}
    cc -shared -fPIC -Wl,-soname,libnccl.so.2 -DNCCL_CODE=$((maj * 10000 + min * 100 + pat)) \
        -o "$w/libnccl.so.2" "$TESTS_DIR/doubles/nccl.c"
    local n=nvidia/nccl lib=nvidia/nccl/lib/libnccl.so.2
    local -a a=(--text nvidia/__init__.py= --text $n/__init__.py= --text $n/include/__init__.py=
                --text "$n/include/nccl.h=#define NCCL_VERSION_CODE $ver"$'\n' --text $n/lib/__init__.py=
                --file "$lib=$w/libnccl.so.2")
    case $evil in
        dotdot) a+=(--text "$n/../../../escape.txt=escaped"$'\n') ;;
        symlink) a+=(--symlink $n/lib/libnccl.so=/etc/passwd) ;;
        tamper|size|hashless) a+=(--$evil "$lib") ;;
        unlisted) a+=(--text "$n/lib/libextra.so.2=not in RECORD" --unlisted $n/lib/libextra.so.2) ;;
        ghost) a+=(--ghost $n/lib/libghost.so.1) ;;
        norecord) a+=(--no-record) ;;
        bomb) a+=(--zeros "$n/lib/libbomb.so=${FX_NCCL_BOMB:-$((8 << 20))}") ;;
        '') ;;
        *) echo "fx_nccl_wheel: unknown EVIL $evil" >&2; return 1 ;;
    esac
    chmod 755 "$w/libnccl.so.2"
    python3 "$TESTS_DIR/lib/wheel.py" "$out" "nvidia_nccl_cu11-$ver.dist-info" --shape "${FX_NCCL_SHAPE:-}" "${a[@]}"
    local rc=$?
    rm -rf "$w"
    return $rc
}

# fx_nccl_member WHEEL MEMBER: the member's bytes, on stdout
fx_nccl_member() {
    python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' "$1" "$2"
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
