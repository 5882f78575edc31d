#!/usr/bin/env bash
# Switching benchmarks (PERFORMANCE.md section 1), side by side in one run:
#   - the cd/prompt hook when nothing changed: processes started (counter and
#     strace) and time per call;
#   - `cudaenv env X` / `use X` as whole processes, median, with the ratio to
#     `bash -c true` (the floor of starting any process) and to `/bin/true`
#     (the floor of starting any binary: issue 13 holds env to 1.3x of it);
#   - `eval "$(cudaenv init bash)"` at shell start.
# Prints one markdown table.  BUILD=build-xyz selects the binaries.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export CUDAENV_TEST_BUILD=$PWD/$BUILD
source tests/lib/common.bash
HYPERFINE=$(command -v hyperfine) || { echo "bench/switch.sh: needs hyperfine" >&2; exit 1; }
STRACE=$(command -v strace || true)
common_setup
trap common_teardown EXIT
# no CUDA of this machine in PATH: the numbers are cudaenv's own work
export PATH=/usr/bin:/bin
fx_installed 11.8.0 8.7.0.84 >/dev/null
fx_installed 12.3.0 >/dev/null
mkdir -p "$T/proj/a/b/c/d" && echo 11.8 > "$T/proj/.cuda-version"
B=$CUDAENV
RUNS=${RUNS:-300}

median_ms() { # hyperfine json -> median in ms of command $2
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.3f" % (d["results"][int(sys.argv[2])]["median"]*1000))' "$1" "$2"
}

# the static init (sourced, no process) and Lmod's init/bash, the peer it is held to
STATIC=$T/static-init.bash
"$B" init bash --static -q -o "$STATIC" >/dev/null
LMOD_INIT=${LMOD_INIT:-/usr/share/lmod/lmod/init/bash}
[ -f "$LMOD_INIT" ] || LMOD_INIT=
"$HYPERFINE" -N --warmup 30 --runs "$RUNS" --export-json "$T/hf.json" \
    'bash -c true' \
    "$B env 11.8 --shell bash" \
    "$B use 11.8 --shell bash -q" \
    "$B current" \
    'bash --norc -c true' \
    "bash --norc -c 'eval \"\$($B init bash)\"'" \
    "bash --norc -c 'source $STATIC'" \
    ${LMOD_INIT:+"bash --norc -c 'source $LMOD_INIT'"} \
    /bin/true >/dev/null
floor=$(median_ms "$T/hf.json" 0)
envm=$(median_ms "$T/hf.json" 1)
usem=$(median_ms "$T/hf.json" 2)
curm=$(median_ms "$T/hf.json" 3)
shm=$(median_ms "$T/hf.json" 4)
initm=$(median_ms "$T/hf.json" 5)
ratio() { python3 -c "print('%.2fx' % ($1 / $2))"; }
initd=$(python3 -c "print('%.3f' % ($initm - $shm))")
staticd=$(python3 -c "print('%.3f' % ($(median_ms "$T/hf.json" 6) - $shm))")
ti=7; [ -n "$LMOD_INIT" ] && ti=8   # /bin/true is the last command, after Lmod's when there is one
truem=$(median_ms "$T/hf.json" "$ti")
lmodd=n/a
[ -n "$LMOD_INIT" ] && lmodd=$(python3 -c "print('%.3f' % ($(median_ms "$T/hf.json" 7) - $shm))")
# the same two sourced 300 times inside one shell, interleaved (no bash start-up in the number)
read -r static_in lmod_in < <(cd "$T" && bash --norc -c '
    t() { local s=$EPOCHREALTIME; for ((i = 0; i < 100; i++)); do source "$1"; done; local e=$EPOCHREALTIME; echo $(( ${e/./} - ${s/./} )); }
    a=0 b=0; for r in 1 2 3; do a=$((a + $(t "$1"))); [ -n "$2" ] && b=$((b + $(t "$2"))); done
    echo "$((a / 300)) $((b / 300))"' _ "$STATIC" "$LMOD_INIT")
static_in=$(python3 -c "print('%.3f' % ($static_in / 1000))")
lmod_in=$(python3 -c "print('%.3f' % ($lmod_in / 1000))")

# resolution: `use tf-2.14` through the index against `use <exact name>`, with the
# built-in manifest and a 10x one; then without the index (the manifest path)
EXACT=11.8.0+cudnn8.7.0.84
BIG=$T/manifest-10x.json
python3 bench/bigmanifest.py share/manifests/cudaenv.json 10 > "$BIG"
IDX=$CUDAENV_ROOT/versions/.index
res_run() { # label -> "exact tf" medians
    "$HYPERFINE" -N --warmup 20 --runs "$RUNS" --export-json "$T/hr.json" \
        "$B use $EXACT --shell bash -q" "$B use tf-2.14 --shell bash -q" >/dev/null
    echo "$(median_ms "$T/hr.json" 0) $(median_ms "$T/hr.json" 1)"
}
# "no index": .index made a directory, so it can be neither read nor rebuilt
noindex_run() { rm -f "$IDX"; mkdir "$IDX"; res_run; rmdir "$IDX"; }
# an upgrade: the manifest replaced by a copy (new inode, same bytes, as
# `make install` or a package upgrade does), then the first run alone (it
# finds the index stale: hashes the manifest, rewrites the key) and the
# runs after it (hyperfine's warm-up included)
upgrade() { cp "$CUDAENV_MANIFEST" "$CUDAENV_MANIFEST.new"; mv "$CUDAENV_MANIFEST.new" "$CUDAENV_MANIFEST"; }
first_ms() { python3 -c 'import subprocess,sys,time; t=time.perf_counter(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print("%.3f" % ((time.perf_counter()-t)*1000))' "$@"; }
"$B" -q install tf-2.14 --offline >/dev/null   # already installed: writes the index
read -r ex1 tf1 < <(res_run)
read -r ex1n tf1n < <(noindex_run)
export CUDAENV_MANIFEST=$T/builtin-copy.json
cp share/manifests/cudaenv.json "$CUDAENV_MANIFEST"
"$B" use tf-2.14 --shell bash -q >/dev/null; upgrade
up1f=$(first_ms "$B" use tf-2.14 --shell bash -q)
read -r ex1u tf1u < <(res_run)
export CUDAENV_MANIFEST=$BIG
"$B" -q install tf-2.14 --offline >/dev/null
read -r ex10 tf10 < <(res_run)
read -r ex10n tf10n < <(noindex_run)
upgrade
up10f=$(first_ms "$B" use tf-2.14 --shell bash -q)
read -r ex10u tf10u < <(res_run)
unset CUDAENV_MANIFEST
"$B" -q install tf-2.14 --offline >/dev/null

# the hook: time per call and processes started, in one real bash
read -r hook_us execs < <(cd "$T/proj/a/b/c/d" && bash --norc -c '
    eval "$('"$B"' init bash)"; __cudaenv_hook; n0=$__CUDAENV_HOOK_EXECS
    s=$EPOCHREALTIME; for ((i = 0; i < 10000; i++)); do __cudaenv_hook; done; e=$EPOCHREALTIME
    echo "$(( (${e/./} - ${s/./}) / 10000 )) $((__CUDAENV_HOOK_EXECS - n0))"')
# eval of init inside one shell (no bash start-up in the number), 200 times
init_in=$(cd "$T" && bash --norc -c '
    s=$EPOCHREALTIME; for ((i = 0; i < 200; i++)); do eval "$('"$B"' init bash)"; done; e=$EPOCHREALTIME
    s2=$EPOCHREALTIME; for ((i = 0; i < 200; i++)); do x=$(/bin/true); done; e2=$EPOCHREALTIME
    echo "$(( (${e/./} - ${s/./}) / 200 )) $(( (${e2/./} - ${s2/./}) / 200 ))"')
read -r init_in subst <<<"$init_in"
init_in=$(python3 -c "print('%.3f' % ($init_in / 1000))")
subst=$(python3 -c "print('%.3f' % ($subst / 1000))")
hook_ms=$(python3 -c "print('%.3f' % ($hook_us / 1000))")
strace_forks=n/a
if [ -n "$STRACE" ]; then
    "$B" init bash > "$T/init.bash"
    for n in 0 1000; do
        (cd "$T/proj/a/b/c/d" && "$STRACE" -f -qq -o "$T/st.$n" -e trace=fork,vfork,clone,clone3,execve \
            bash --norc -c 'source "$1"; for ((i = 0; i < $2; i++)); do __cudaenv_hook; done' _ "$T/init.bash" "$n")
    done
    strace_forks=$(( $(wc -l < "$T/st.1000") - $(wc -l < "$T/st.0") ))
fi

echo "## switching (median of $RUNS runs; ratios against bash -c true = $floor ms)"
echo
echo "| what | measured | ratio | target |"
echo "|---|---|---|---|"
echo "| cd hook, nothing changed (6 dirs deep, 10000 calls) | $hook_ms ms/call; processes started: $execs (counter), $strace_forks (strace fork/clone/execve over 1000 calls) | | no process started |"
echo "| \`cudaenv env 11.8\` | $envm ms | $(ratio "$envm" "$floor") | < 3 ms |"
echo "| same, against \`/bin/true\` ($truem ms) | | $(ratio "$envm" "$truem") | <= 1.3x |"
echo "| \`cudaenv use 11.8\` (binary part) | $usem ms | $(ratio "$usem" "$floor") | < 3 ms |"
echo "| \`cudaenv current\` | $curm ms | $(ratio "$curm" "$floor") | |"
echo "| \`eval \"\$(cudaenv init bash)\"\` (mean of 200 in one shell) | $init_in ms | $(ratio "$init_in" "$subst") of \`x=\$(/bin/true)\` ($subst ms) | < 5 ms |"
echo "| same, as shell start minus bare \`bash --norc -c true\` | $initd ms | | < 5 ms |"
if [ -n "$LMOD_INIT" ]; then
    echo "| \`source\` the static init (mean of 300 in one shell) | $static_in ms | $(ratio "$static_in" "$lmod_in") of Lmod \`source init/bash\` ($lmod_in ms) | <= 1.0x Lmod |"
    echo "| same, as shell start minus bare bash | $staticd ms | $(ratio "$staticd" "$lmodd") of Lmod ($lmodd ms) | <= 1.0x Lmod |"
else
    echo "| \`source\` the static init (mean of 300 in one shell) | $static_in ms | (Lmod not installed) | <= 1.0x Lmod |"
    echo "| same, as shell start minus bare bash | $staticd ms | | |"
fi
echo "| \`use tf-2.14\`, index, built-in manifest ($(( $(stat -c %s share/manifests/cudaenv.json) / 1024 )) KiB) | $tf1 ms | $(ratio "$tf1" "$ex1") of \`use $EXACT\` ($ex1 ms) | <= 1.3x |"
echo "| \`use tf-2.14\`, index, 10x manifest ($(( $(stat -c %s "$BIG") / 1024 )) KiB) | $tf10 ms | $(ratio "$tf10" "$ex10") of \`use $EXACT\` ($ex10 ms) | <= 1.3x |"
echo "| \`use tf-2.14\` after an upgrade (new inode), built-in, from the 2nd run | $tf1u ms | $(ratio "$tf1u" "$ex1u") of exact ($ex1u ms); 1st run $up1f ms | <= 1.3x |"
echo "| \`use tf-2.14\` after an upgrade (new inode), 10x, from the 2nd run | $tf10u ms | $(ratio "$tf10u" "$ex10u") of exact ($ex10u ms); 1st run $up10f ms | <= 1.3x |"
echo "| \`use tf-2.14\`, no index (manifest parse), built-in | $tf1n ms | $(ratio "$tf1n" "$ex1n") of exact ($ex1n ms) | (before) |"
echo "| \`use tf-2.14\`, no index (manifest parse), 10x | $tf10n ms | $(ratio "$tf10n" "$ex10n") of exact ($ex10n ms) | (before) |"
echo "| \`bash -c true\` (floor) | $floor ms | 1.00x | |"
