#!/usr/bin/env bash
# Runs every test that needs no GPU: the C unit tests (cmocka) and the bats
# scenarios (tests/scenario) and the journeys (tests/journeys).  Ends with one
# summary line: "N passed, N failed, N skipped (journeys: N passed, N failed)".
# TESTS=pattern limits the bats files (e.g. TESTS=install tests/run.sh).
# BATS_JOBS=N runs N test files at once (default: nproc + 1, as many tests
# wait on servers, sleeps and child processes); each file's lines are printed
# as one block when it ends, with its wall time; BATS_JOBS=1 runs one file at
# a time.  Every test keeps its own temp root, ports and users, so
# files never share state (docs/TESTING.md: "Running tests concurrently").
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export CUDAENV_TEST_BUILD=$PWD/$BUILD
work=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-run.XXXXXX")
cleanup() {
    local p
    for p in $(jobs -p); do kill "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# pyenv's python3 shim costs ~100 ms a call; the suite calls python3 often.
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
    mkdir "$work/py"; ln -s /usr/bin/python3 "$work/py/python3"; export PATH=$work/py:$PATH
fi
pass=0 fail=0 skip=0
failed=()

# No test writes into the checkout (docs/TESTING.md: a test owns only its temp
# directory): what git sees outside the build trees, and this build tree, are
# compared after the run (a journey once built another release into build/ and
# deleted the binary every later file runs; only a fresh machine showed it).
checkout_snap() {
    git status --porcelain --ignored --untracked-files=all 2>/dev/null | grep -vE '^.. "?build[^/]*/' || true
}
checkout_before=$(checkout_snap)
: > "$work/started"

# The house: includes only point down the layers, no two modules include
# each other, and private headers stay inside (a folder's *_int.h, a closed
# component's: tools/incgraph.py prints the graph).
if out=$(python3 tools/incgraph.py --check 2>&1); then
    pass=$((pass + 1)); echo "incgraph: no circles, no upward arrows, no private header from outside"
else
    fail=$((fail + 1)); failed+=("tools/incgraph.py --check"); echo "$out" | grep -E '^(circle|upward|outside):'
fi
# No assertion that can never fail: a mid-test `! cmd` or `[ a ] && [ b ]`
# (bats' set -e ignores both; tools/lint-bats.py names file and line).
if out=$(python3 tools/lint-bats.py --self-test 2>&1 && python3 tools/lint-bats.py 2>&1); then
    pass=$((pass + 1)); echo "lint-bats: no inert assertions"
else
    fail=$((fail + 1)); failed+=("tools/lint-bats.py"); echo "$out" | grep -v '^lint-bats self-test: .*, ok$' | head -40
fi

# What runs: the unit binaries, the scenarios (one feature each) and the
# journeys (a user's sequence of features: tests/journeys/, docs/TESTING.md).
pattern=${TESTS:-}
items=()
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] && items+=("$t")
done
for f in tests/scenario/*.bats tests/journeys/*.bats; do
    [ -e "$f" ] || continue
    if [ -n "$pattern" ] && [[ "$f" != *$pattern* ]]; then continue; fi
    items+=("$f")
done

jobs=${BATS_JOBS:-$(($(nproc 2>/dev/null || echo 1) + 1))}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || jobs=1
# Started longest first, so that no long file starts last: by the wall times
# of this build tree's last full run ($BUILD/test-times), else by those of a
# run on a loaded 2-core machine (tests/test-times: refresh it from a
# $BUILD/test-times now and then), else by size.  Only the order depends on them.
declare -A weight=()
for t in "$BUILD/test-times" tests/test-times; do
    [ -r "$t" ] || continue
    while read -r ms f; do weight[$f]=$ms; done < "$t"
    break
done
order=()
while read -r _ i; do order+=("$i"); done < <(
    for i in "${!items[@]}"; do
        f=${items[$i]}
        w=${weight[${f#"$BUILD"/}]:-}
        if [ -z "$w" ]; then
            case $f in *.bats) w=$(( $(stat -c %s "$f") / 2 ));; *) w=2000;; esac   # ~1 ms per 2 bytes
        fi
        echo "$w $i"
    done | sort -rn -k1,1)

# One file: its output and "rc ms" when it ends (the parent counts and prints).
run_item() {
    local i=$1 f=${items[$1]} t0=${EPOCHREALTIME/./} rc
    case $f in
        *.bats) bats --tap "$f" ;;
        *) "$f" ;;
    esac > "$work/$i.out" 2>&1 < /dev/null
    rc=$?
    echo "$rc $(( (${EPOCHREALTIME/./} - t0) / 1000 ))" > "$work/$i.rc.tmp"
    mv "$work/$i.rc.tmp" "$work/$i.rc"
}

jpass=0 jfail=0
report() {
    local i=$1 f=${items[$1]} out rc ms p s f2
    out=$(<"$work/$i.out"); read -r rc ms < "$work/$i.rc"
    echo "$ms ${f#"$BUILD"/}" >> "$work/times"
    local took="($((ms / 1000)).$((ms % 1000 / 100)) s)"
    if [[ $f != *.bats ]]; then
        p=$(grep -c '^\[       OK \]' <<<"$out")
        # cmocka prints the failed list once more in its summary
        f2=$(grep -E '^\[  FAILED  \] [^0-9]' <<<"$out" | sort -u | wc -l)
        pass=$((pass + p)); fail=$((fail + f2))
        if [ "$rc" -ne 0 ]; then
            [ "$f2" -eq 0 ] && fail=$((fail + 1))
            failed+=("$(basename "$f")"); echo "$out" | grep -E 'FAILED|ERROR|error' | head -20
        fi
        echo "unit $(basename "$f"): $p ok${f2:+, $f2 failed} $took"
        return
    fi
    p=$(grep -cE '^ok [0-9]+ ' <<<"$out")
    s=$(grep -cE '^ok [0-9]+ .*# skip' <<<"$out")
    f2=$(grep -cE '^not ok ' <<<"$out")
    pass=$((pass + p - s)); skip=$((skip + s)); fail=$((fail + f2))
    case $f in tests/journeys/*) jpass=$((jpass + p - s)); jfail=$((jfail + f2));; esac
    if [ "$rc" -ne 0 ]; then
        [ "$f2" -eq 0 ] && fail=$((fail + 1))
        failed+=("$f"); echo "$out" | grep -vE '^ok ' | head -60
    fi
    echo "bats ${f#tests/}: $((p - s)) ok, $s skipped, $f2 failed $took"
}

# Print every file that finished since the last look, in the order they finished.
declare -A shown=()
flush() {
    local rc i
    for rc in $(ls -tr "$work" | grep '^[0-9]*\.rc$'); do
        i=${rc%.rc}
        [ -n "${shown[$i]:-}" ] && continue
        shown[$i]=1; report "$i"
    done
}

for i in "${order[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; flush; done
    run_item "$i" &
done
while [ -n "$(jobs -rp)" ]; do wait -n; flush; done
wait; flush
# the next run starts the longest first (only a complete run says which)
[ -z "$pattern" ] && [ -s "$work/times" ] && sort -rn "$work/times" > "$BUILD/test-times" 2>/dev/null

if [ "$(checkout_snap)" != "$checkout_before" ]; then
    echo "FATAL: a test wrote into the checkout:"
    diff <(echo "$checkout_before") <(checkout_snap) | sed -n 's/^> /    /p' | head -20; fail=$((fail + 1))
fi
changed=$(find "$BUILD" -newer "$work/started" ! -name test-times ! -type d 2>/dev/null | head -20)
if [ -n "$changed" ]; then
    echo "FATAL: a test wrote into the build tree $BUILD:"; sed 's/^/    /' <<<"$changed"; fail=$((fail + 1))
fi

# The suite must never touch the machine's own CUDA selection.
if [ -e /usr/local/cuda-13.0 ] && [ "$(readlink -f /usr/local/cuda)" != /usr/local/cuda-13.0 ]; then
    echo "FATAL: /usr/local/cuda no longer points at /usr/local/cuda-13.0"; fail=$((fail + 1))
fi
if [ -e /etc/ld.so.conf.d/cudaenv.conf ]; then
    echo "FATAL: a test wrote /etc/ld.so.conf.d/cudaenv.conf"; fail=$((fail + 1))
fi

[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped (journeys: $jpass passed, $jfail failed)"
[ "$fail" -eq 0 ]
