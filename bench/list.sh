#!/usr/bin/env bash
# list with realistic toolchains (issue 43): TOOLCHAINS (10) trees of FILES (4000)
# files each, pairs sharing half their files through hard links as composed
# toolchains do, each with the receipt (every file listed) and the usage record
# install writes (.cudaenv-receipt.json, .cudaenv-usage), each composed from a tree
# in pkgs/ (hard links, as install composes) beside one tree no toolchain uses,
# and cache/ with each receipt's download, two no receipt names and a partial one
# (each named in cache/.cudaenv-names, as the download notes it);
# medians of ROUNDS (10) runs of `cudaenv list`, `list --json`, `list --sizes` (the
# walk), `cache list` and `cache list --sizes` against `ls` of versions/ and
# `du -s` of the trees, as ratios.
set -eu
cd "$(dirname "$0")/.."
BIN=${BUILD:-build}/bin/cudaenv
N=${TOOLCHAINS:-10} F=${FILES:-4000} R=${ROUNDS:-10}
W=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-bench-list.XXXXXX")
trap 'rm -rf "$W"' EXIT
export CUDAENV_ROOT=$W/root HOME=$W/home CUDAENV_MANIFEST=$PWD/share/manifests/cudaenv.json
mkdir -p "$CUDAENV_ROOT/versions" "$CUDAENV_ROOT/pkgs" "$CUDAENV_ROOT/cache" "$HOME"
python3 - "$CUDAENV_ROOT/versions" "$N" "$F" <<'PY'
import json, os, struct, sys
vdir, n, f = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
root = os.path.dirname(vdir)
def download(name, size, fetched_as=None):   # and the line the download notes in cache/.cudaenv-names
    with open(os.path.join(root, "cache", name), "wb") as o: o.write(b"d" * size)
    with open(os.path.join(root, "cache", ".cudaenv-names"), "a") as o: o.write("%s %s\n" % (name[:64], fetched_as or "left-%s.tar.xz" % name[:8]))
for k in range(f):   # the tree no toolchain uses
    d = os.path.join(root, "pkgs", "cuda-11.0.0", "lib64", "d%d" % (k // 200))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%d" % k), "wb") as o: o.write(b"y" * (64 + k % 4096))
download("%064x" % 1000, 1024); download("%064x" % 1001, 2048); download("%064x.part" % 1002, 512)
for i in range(n):
    p = os.path.join(vdir, "12.%d.0" % i)
    for k in range(f):
        d = os.path.join(p, "lib64" if k % 3 else "include", "d%d" % (k // 200))
        os.makedirs(d, exist_ok=True)
        q = os.path.join(d, "f%d" % k)
        if i % 2 and k % 2:   # the odd toolchain links half of its even neighbour's files
            os.link(os.path.join(vdir, "12.%d.0" % (i - 1), os.path.relpath(q, p)), q)
        else:
            with open(q, "wb") as o: o.write(b"x" * (64 + k % 4096))
    files = []
    tree = os.path.join(root, "pkgs", "cuda-12.%d.0" % i)   # the pkgs tree it was composed from
    for dp, dns, fns in os.walk(p):
        for fn in fns:
            q = os.path.join(dp, fn)
            os.makedirs(os.path.join(tree, os.path.relpath(dp, p)), exist_ok=True)
            os.link(q, os.path.join(tree, os.path.relpath(q, p)))
    sha = "%064x" % (i + 1)
    download(sha, 4096, "cuda-12.%d.0.tar.xz" % i)
    for dp, dns, fns in os.walk(p):
        for fn in fns:
            q = os.path.join(dp, fn)
            files.append({"path": os.path.relpath(q, p), "size": os.lstat(q).st_size, "sha256": "%064x" % len(files)})
    # the receipt install writes: what it holds, then every file with its size and sha256
    json.dump({"schema": 1, "name": "12.%d.0" % i, "cuda": "12.%d.0" % i, "cudnn": None, "platform": "linux-x86_64",
               "installed_at": "2026-12-04T00:00:00Z", "tensorflow": [], "min_driver": "525.60.13", "max_gcc": 12,
               "sources": [{"kind": "redist", "url": "https://x/redistrib.json", "sha256": "0" * 64, "size": 1}],
               "profile": "toolkit", "adjust": [],
               "components": [{"name": "cuda_cudart", "version": "12.%d.0" % i, "url": "https://x/cuda-12.%d.0.tar.xz" % i,
                               "sha256": sha, "size": 4096, "pkg": "cuda-12.%d.0" % i}],
               "nccl": None, "files": files},
              open(os.path.join(p, ".cudaenv-receipt.json"), "w"), indent="\t")
    recs = []   # written after the receipt, as ce_receipt_write does: the receipt is one of the files
    for dp, dns, fns in os.walk(p):
        for fn in fns:
            st = os.lstat(os.path.join(dp, fn))
            recs.append(struct.pack("<QQq", st.st_dev, st.st_ino, st.st_size))
    top = os.lstat(p)
    with open(os.path.join(p, ".cudaenv-usage"), "wb") as o:
        o.write(b"CEUSE1\n\0" + struct.pack("<QQQ", top.st_dev, top.st_ino, len(recs)) + b"".join(recs))
PY
"$BIN" list --json > "$W/rec.json"; "$BIN" list --json --sizes > "$W/walk.json"
cmp -s "$W/rec.json" "$W/walk.json" || { echo "bench/list: the records and the walk disagree" >&2; diff "$W/rec.json" "$W/walk.json" >&2; exit 1; }
"$BIN" cache list | grep -q "^unpacked .* no  *cuda-11\.0\.0$" && [ "$("$BIN" cache list | grep -c '^unpacked .* yes ')" -eq "$N" ] \
    || { echo "bench/list: cache list does not mark the toolchains' trees used" >&2; "$BIN" cache list >&2; exit 1; }
if "$BIN" cache list --help 2>&1 | grep -q -- --sizes; then CACHE_ARGS=("cache list" "cache list --sizes"); else CACHE_ARGS=("cache list"); fi
"$BIN" cache list --json > "$W/crec.json"
[ "${#CACHE_ARGS[@]}" -eq 1 ] || "$BIN" cache list --json --sizes > "$W/cwalk.json"
[ "${#CACHE_ARGS[@]}" -eq 1 ] || cmp -s "$W/crec.json" "$W/cwalk.json" || { echo "bench/list: cache list's kept sums and the walk disagree" >&2; diff "$W/crec.json" "$W/cwalk.json" >&2; exit 1; }
med() {   # med CMD...: median wall ms of R runs
    local i t0 ts=()
    for ((i = 0; i < R; i++)); do
        t0=$(date +%s%N); "$@" >/dev/null 2>&1; ts+=($(( ($(date +%s%N) - t0) / 1000 )))
    done
    printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR] = $1} END {printf "%.2f", a[int((NR + 1) / 2)] / 1000}'
}
ls_ms=$(med ls "$CUDAENV_ROOT/versions")
du_ms=$(med du -s "$CUDAENV_ROOT/versions")
printf '\nlist: %d toolchains of %d files (median of %d, ms; ratio to ls of versions/)\n' "$N" "$F" "$R"
printf '  %-34s %8s %7s\n' command ms "x ls"
for c in "ls versions/:$ls_ms" "du -s versions/:$du_ms"; do
    printf '  %-34s %8s %7s\n' "${c%%:*}" "${c#*:}" "$(awk -v a="${c#*:}" -v b="$ls_ms" 'BEGIN {printf "%.2f", a / b}')"
done
for args in "list" "list --json" "list --sizes" "${CACHE_ARGS[@]}"; do
    ms=$(med "$BIN" $args)
    printf '  %-34s %8s %7s\n' "cudaenv $args" "$ms" "$(awk -v a="$ms" -v b="$ls_ms" 'BEGIN {printf "%.2f", a / b}')"
done
