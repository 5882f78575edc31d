#!/usr/bin/env bats
# The built-in manifest's real entry shapes install (issue 8, item 2): for a
# sample of its entries (one per cuDNN major x archive kind x size present or
# not, one per runfile file-name generation x size), a fixture is generated
# with the same file name and kind (.tgz with NVIDIA's old cuda/lib64
# layout, .tar.xz with the <name>/lib layout; runfiles named *.run, *_linux
# without an extension, *_linux-run), served at the same path on the
# loopback server, listed with or without its size as the real entry is,
# and installed.
load ../lib/common
load ../lib/server

setup_file() {
    source "$BATS_TEST_DIRNAME/../lib/fixtures.sh"
    source "$BATS_TEST_DIRNAME/../lib/server.bash"
    export SM=$BATS_FILE_TMPDIR/mirror PLAN=$BATS_FILE_TMPDIR/plan
    mkdir -p "$SM"
    python3 - "$REPO/share/manifests/cudaenv.json" > "$PLAN" <<'PY'
import json, re, sys, urllib.parse
m = json.load(open(sys.argv[1]))
P = "linux-x86_64"
def shape(url):
    b = url.rsplit("/", 1)[-1]
    return ".run" if b.endswith(".run") else "-run" if b.endswith("-run") else "noext"
def vkey(v):
    return tuple(int(x) for x in v.split("."))
cudas = sorted((v for v, c in m["cuda"].items() if c.get("runfile", {}).get(P)), key=vkey, reverse=True)
# cuDNN: the newest entry of each (major, archive kind, size present) group,
# with its newest cudaNN build
picks, groups = [], set()
for v in sorted(m["cudnn"], key=vkey, reverse=True):
    d = m["cudnn"][v]
    keys = sorted((k for k in d if k.startswith("cuda") and isinstance(d[k], dict) and d[k].get(P)),
                  key=lambda k: int(k[4:]), reverse=True)
    for k in keys:
        a = d[k][P]
        ext = ".tgz" if a["url"].endswith(".tgz") else ".tar.xz" if a["url"].endswith(".tar.xz") else None
        g = (v.split(".")[0], ext, "size" in a)
        if ext and g not in groups and any(c.split(".")[0] == k[4:] for c in cudas):
            groups.add(g)
            picks.append((v, k[4:], a, ext))
        break
# runfiles: the newest CUDA of each major a cuDNN pick needs, then the newest
# of each file-name shape x size present not yet covered
runs = {}
for _, cmaj, _, _ in picks:
    v = next(c for c in cudas if c.split(".")[0] == cmaj)
    runs[v] = m["cuda"][v]["runfile"][P]
covered = {(shape(a["url"]), "size" in a) for a in runs.values()}
for v in cudas:
    a = m["cuda"][v]["runfile"][P]
    if (shape(a["url"]), "size" in a) not in covered:
        covered.add((shape(a["url"]), "size" in a))
        runs[v] = a
for v, a in sorted(runs.items(), key=lambda x: vkey(x[0])):
    print("runfile", v, urllib.parse.urlsplit(a["url"]).path, "yes" if "size" in a else "no", shape(a["url"]))
for v, cmaj, a, ext in picks:
    cuda = next(c for c in cudas if c.split(".")[0] == cmaj)
    print("cudnn", v, urllib.parse.urlsplit(a["url"]).path, "yes" if "size" in a else "no", ext, cmaj, cuda)
PY
    local kind ver path sized ext cmaj cuda
    while read -r kind ver path sized ext cmaj cuda; do
        mkdir -p "$SM$(dirname "$path")"
        if [ "$kind" = runfile ]; then
            fx_runfile "$SM$path" "$ver" || return 1
        else
            shapes_cudnn "$SM$path" "$ver" "$cmaj" "$ext" || return 1
        fi
    done < "$PLAN"
}

# shapes_cudnn OUT VERSION CUDA_MAJOR EXT: NVIDIA's layout for that kind
shapes_cudnn() {
    local out=$1 ver=$2 cmaj=$3 ext=$4
    local w; w=$(mktemp -d "$BATS_FILE_TMPDIR/cudnn.XXXXXX")
    if [ "$ext" = .tgz ]; then
        fx_cudnn "$w/cuda" "$ver" "$cmaj"
        mv "$w/cuda/lib" "$w/cuda/lib64"
        if [ "${ver%%.*}" -le 7 ]; then # cuDNN 7: the version macros live in cudnn.h
            mv "$w/cuda/include/cudnn_version.h" "$w/cuda/include/cudnn.h"
        fi
        tar -C "$w" --owner=0 --group=0 --numeric-owner -czf "$out" cuda
    else
        local top; top=$(basename "$out" .tar.xz)
        fx_cudnn "$w/$top" "$ver" "$cmaj"
        tar -C "$w" --owner=0 --group=0 --numeric-owner -cJf "$out" "$top"
    fi
    rm -rf "$w"
}

setup() {
    common_setup
    server_start "$SM"
    export CUDAENV_RETRY_DELAY_MS=10 CUDAENV_MANIFEST=$T/manifest.json
    python3 - "$REPO/share/manifests/cudaenv.json" "$PLAN" "$SM" "$SERVER_URL" > "$CUDAENV_MANIFEST" <<'PY'
import hashlib, json, os, sys
src, plan, sm, server = sys.argv[1:]
m = json.load(open(src))
out = {"schema": 1, "tensorflow": {}, "cuda": {}, "cudnn": {}}
def art(path, sized):
    f = sm + path
    a = {"url": server + path, "sha256": hashlib.sha256(open(f, "rb").read()).hexdigest()}
    if sized == "yes":
        a["size"] = os.path.getsize(f)
    return a
for line in open(plan):
    w = line.split()
    if w[0] == "runfile":
        c = dict(m["cuda"][w[1]])
        c["runfile"] = {"linux-x86_64": art(w[2], w[3])}
        out["cuda"][w[1]] = c
    else:
        out["cudnn"].setdefault(w[1], {})["cuda" + w[5]] = {"linux-x86_64": art(w[2], w[3])}
json.dump(out, sys.stdout, indent=1)
PY
}

teardown() {
    server_stop
    common_teardown
}

# shape_install KIND MATCH: install the plan's entries of KIND whose line matches MATCH
shape_install() {
    local kind ver path sized ext cmaj cuda n=0 spec
    while read -r kind ver path sized ext cmaj cuda; do
        [ "$kind" = "$1" ] && [[ "$kind $ver $path $sized $ext $cmaj" == *$2* ]] || continue
        if [ "$kind" = runfile ]; then spec="$ver --no-cudnn"; else spec="$cuda+cudnn$ver"; fi
        # shellcheck disable=SC2086
        run "$CUDAENV" install $spec --from runfile   # the runfile + cuDNN shapes (components: components.bats)
        [ "$status" -eq 0 ] || { echo "$kind $ver ($path, size: $sized): $output"; return 1; }
        local name=${spec%% *}
        [ -f "$CUDAENV_ROOT/versions/$name/.cudaenv-receipt.json" ] || { echo "no $name"; return 1; }
        [ "$(grep -c "GET $path " "$SERVER_LOG")" -eq 1 ] || { cat "$SERVER_LOG"; return 1; }
        n=$((n + 1))
    done < "$PLAN"
    [ "$n" -gt 0 ] || { echo "no $1 entry matches '$2' in the plan:"; cat "$PLAN"; return 1; }
}

@test "shapes: the sample covers every cuDNN major x kind x size and every runfile name shape" {
    [ "$(grep -c '^cudnn ' "$PLAN")" -ge 6 ]
    grep -q '^cudnn 7\..* no .tgz ' "$PLAN"
    grep -q '^cudnn 8\..* .tgz ' "$PLAN"
    grep -q '^cudnn 8\..* no .tar.xz ' "$PLAN"
    grep -q '^cudnn 9\..* no .tar.xz ' "$PLAN"
    grep -q '^cudnn 9\..* yes .tar.xz ' "$PLAN"
    grep -q '^runfile .* -run$' "$PLAN"
    grep -q '^runfile .* noext$' "$PLAN"
    grep -q '^runfile .* no .run$' "$PLAN"
    grep -q '^runfile .* yes .run$' "$PLAN"
}

@test "shapes: runfiles named *.run (with and without size), *_linux and *_linux-run install" {
    shape_install runfile ""
}

@test "shapes: cuDNN 7 .tgz (cuda/lib64 layout, no size) installs" { shape_install cudnn "7."; }
@test "shapes: cuDNN 8 .tgz installs" { shape_install cudnn "8.*.tgz"; }
@test "shapes: cuDNN 8 .tar.xz with and without size install" { shape_install cudnn "8.*.tar.xz"; }
@test "shapes: cuDNN 9 .tar.xz with and without size install" { shape_install cudnn "9.*.tar.xz"; }
