#!/usr/bin/env bash
# Runs every test that needs no GPU: the C unit tests (cmocka) and the bats
# scenarios (tests/scenario) and the journeys (tests/journeys).  Ends with one
# summary line: "N passed, N failed, N skipped (journeys: N passed, N failed)".
# TESTS=pattern limits the bats files (e.g. TESTS=install tests/run.sh).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export CUDAENV_TEST_BUILD=$PWD/$BUILD
# as root, the test seams need the build tree's root-owned opt-in (core/priv.h)
if [ "$(id -u)" -eq 0 ] && [ -d "$BUILD" ]; then : > "$BUILD/cudaenv-test-knobs"; fi
# pyenv's python3 shim costs ~100 ms a call; the suite calls python3 often.
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
    pybin=$(mktemp -d); ln -s /usr/bin/python3 "$pybin/python3"; export PATH=$pybin:$PATH
    trap 'rm -rf "$pybin"' EXIT
fi
pass=0 fail=0 skip=0
failed=()

# The house: includes only point down the layers, and no two modules include
# each other (tools/incgraph.py prints the graph).
if out=$(python3 tools/incgraph.py --check 2>&1); then
    pass=$((pass + 1)); echo "incgraph: no circles, no upward arrows"
else
    fail=$((fail + 1)); failed+=("tools/incgraph.py --check"); echo "$out" | grep -E '^(circle|upward):'
fi

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    out=$("$t" 2>&1); rc=$?
    p=$(grep -c '^\[       OK \]' <<<"$out"); f=$(grep -c '^\[  FAILED  \]' <<<"$out")
    # cmocka prints the failed list once more in its summary
    f=$(grep -E '^\[  FAILED  \] [^0-9]' <<<"$out" | sort -u | wc -l)
    pass=$((pass + p)); fail=$((fail + f))
    if [ $rc -ne 0 ]; then
        [ "$f" -eq 0 ] && fail=$((fail + 1))
        failed+=("$(basename "$t")"); echo "$out" | grep -E 'FAILED|ERROR|error' | head -20
    fi
    echo "unit $(basename "$t"): $p ok${f:+, $f failed}"
done

pattern=${TESTS:-}
jobs=${BATS_JOBS:-1}
# the scenarios (one feature each), then the journeys (a user's sequence of
# features: tests/journeys/, docs/TESTING.md)
jpass=0 jfail=0
for f in tests/scenario/*.bats tests/journeys/*.bats; do
    [ -e "$f" ] || continue
    if [ -n "$pattern" ] && [[ "$f" != *$pattern* ]]; then continue; fi
    out=$(bats --tap "$f" 2>&1); rc=$?
    p=$(grep -cE '^ok [0-9]+ ' <<<"$out")
    s=$(grep -cE '^ok [0-9]+ .*# skip' <<<"$out")
    f2=$(grep -cE '^not ok ' <<<"$out")
    pass=$((pass + p - s)); skip=$((skip + s)); fail=$((fail + f2))
    case $f in tests/journeys/*) jpass=$((jpass + p - s)); jfail=$((jfail + f2));; esac
    if [ $rc -ne 0 ]; then
        [ "$f2" -eq 0 ] && fail=$((fail + 1))
        failed+=("$f"); echo "$out" | grep -vE '^ok ' | head -60
    fi
    echo "bats ${f#tests/}: $((p - s)) ok, $s skipped, $f2 failed"
done

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
