#!/usr/bin/env bash
# list with realistic toolchains (issue 43): TOOLCHAINS (10) trees of FILES (4000)
# files each, pairs sharing half their files through hard links as composed
# toolchains do, each with the receipt (every file listed) and the usage record
# install writes (.cudaenv-receipt.json, .cudaenv-usage);
# medians of ROUNDS (10) runs of `cudaenv list`, `list --json`, `list --sizes` (the
# walk) against `ls` of versions/ and `du -s` of the trees, as ratios.
set -eu
cd "$(dirname "$0")/.."
BIN=${BUILD:-build}/bin/cudaenv
N=${TOOLCHAINS:-10} F=${FILES:-4000} R=${ROUNDS:-10}
W=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-bench-list.XXXXXX")
trap 'rm -rf "$W"' EXIT
export CUDAENV_ROOT=$W/root HOME=$W/home CUDAENV_MANIFEST=$PWD/share/manifests/cudaenv.json
mkdir -p "$CUDAENV_ROOT/versions" "$HOME"
python3 - "$CUDAENV_ROOT/versions" "$N" "$F" <<'PY'
import json, os, struct, sys
vdir, n, f = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
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
    for dp, dns, fns in os.walk(p):
        for fn in fns:
            q = os.path.join(dp, fn)
            files.append({"path": os.path.relpath(q, p), "size": os.lstat(q).st_size, "sha256": "%064x" % len(files)})
    # the receipt install writes: what it holds, then every file with its size and sha256
    json.dump({"schema": 1, "name": "12.%d.0" % i, "cuda": "12.%d.0" % i, "cudnn": None, "platform": "linux-x86_64",
               "installed_at": "2026-12-04T00:00:00Z", "tensorflow": [], "min_driver": "525.60.13", "max_gcc": 12,
               "sources": [{"kind": "redist", "url": "https://x/redistrib.json", "sha256": "0" * 64, "size": 1}],
               "profile": "toolkit", "adjust": [], "components": [], "nccl": None, "files": files},
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
for args in "list" "list --json" "list --sizes"; do
    ms=$(med "$BIN" $args)
    printf '  %-34s %8s %7s\n' "cudaenv $args" "$ms" "$(awk -v a="$ms" -v b="$ls_ms" 'BEGIN {printf "%.2f", a / b}')"
done
