#!/usr/bin/env bash
# make mutate: break one check at a time and see the suite notice.
#
#   tools/mutate.sh [--check] [--keep] [NAME...]
#   tools/mutate.sh --generate [--seed N] [--sample K|all] [--budget S] FILE...
#
# Each mutant is one file tests/mutants/NAME.mut (format below): a source
# file, a text that must occur in it EXACTLY ONCE, its replacement, and the
# tests expected to kill it.  Mutants are applied one at a time to a scratch
# copy of this working tree in /tmp (never to the tree itself), built with
# WERROR=0, and only the named tests run.  The table printed at the end says,
# for each mutant, killed (a named test failed) or SURVIVED, and the seconds
# it took.  Exit status: 0 when every mutant was killed; 1 when one survived,
# did not build, or its search text no longer matches the code (so the list
# stays honest as the code moves: re-point the mutant's "--- search" block).
#
#   --check   only check that every search text matches exactly once (fast)
#   --keep    keep the scratch copy (its path is printed)
#   NAME...   run only these mutants (file names without .mut)
#   MUTATE_BASELINE=0  skip running the named tests once on the unmutated
#                      code first (they must pass there, or nothing is proved)
#   MUTATE_TIMEOUT=S   seconds per test command (default 600; a timeout kills)
#
# --generate: mutants made mechanically (tools/mutagen.py: flip a comparison,
# off-by-one on a bound, negate a condition, drop a checked call or a call
# statement, drop O_NOFOLLOW/O_EXCL, swap two adjacent durable steps) in the
# C FILEs, K per file (default 10) sampled with seed N (default 1; the same
# sample every run), or all of them.  Each runs only the tests that executed
# its line: a coverage map (a --coverage build of the scratch copy running
# the tests tools/mutants-tests.txt names for the file, once, per test),
# cached in build/mutate-cov.json while the file and its tests are unchanged.
# A mutant on a line no test executed is "not covered" (a survivor).  Ids
# listed in tools/mutants-equivalent.txt (with the reason) are reported as
# equivalent and not run (they are sampled like the others: listing one does
# not change the sample).
# Prints the kill rate per file and the survivors; exit 1 if one survived.
#   --budget S   start no mutant after S seconds (they are reported "not run")
#   MUTATE_ONLY="ID..."   of the sample, run only these ids (e.g. the survivors of a run)
#   MUTATE_GEN_TIMEOUT=S  seconds per test command of a generated mutant (120)
#
# Mutant file format (lines outside the blocks: "key: value" or # comments):
#   # what the mutant breaks, in words
#   file: src/fetch/fetch.c
#   test: tests/scenario/install.bats     (repeatable; a bats file)
#   filter: every response cut            (optional: bats -f REGEX for the tests above)
#   unit: test_fetch                      (repeatable; a cmocka binary in build/tests)
#   timeout: 120                          (optional: seconds per test command for this
#                                          mutant, e.g. one that makes a retry loop endless)
#   --- search
#   the exact text, one or more lines
#   --- replace
#   its replacement (may be empty)
#   --- end
set -u
cd "$(dirname "$0")/.."
REPO=$PWD
check_only=0 keep=0 names=() generate=0 seed=1 sample=10 budget=0
pending=
for a in "$@"; do
    if [ -n "$pending" ]; then printf -v "$pending" '%s' "$a"; pending=; continue; fi
    case $a in
        --check) check_only=1 ;;
        --keep) keep=1 ;;
        --generate) generate=1 ;;
        --seed=*) seed=${a#*=} ;;
        --sample=*) sample=${a#*=} ;;
        --budget=*) budget=${a#*=} ;;
        --seed|--sample|--budget) pending=${a#--} ;;
        -h|--help) sed -n '2,53p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "mutate: unknown option $a" >&2; exit 2 ;;
        *) names+=("$a") ;;
    esac
done
files=()
if [ $generate = 1 ]; then
    [ ${#names[@]} -gt 0 ] || { echo "mutate: --generate needs source files (e.g. src/core/trust.c)" >&2; exit 2; }
    for n in "${names[@]}"; do [ -f "$n" ] || { echo "mutate: no source file $n" >&2; exit 2; }; done
elif [ ${#names[@]} -gt 0 ]; then
    for n in "${names[@]}"; do
        f=tests/mutants/${n%.mut}.mut
        [ -f "$f" ] || { echo "mutate: no mutant $f" >&2; exit 2; }
        files+=("$f")
    done
else
    files=(tests/mutants/*.mut)
fi
[ $generate = 1 ] || [ -e "${files[0]}" ] || { echo "mutate: no mutants in tests/mutants/" >&2; exit 2; }

# pyenv's python3 shim costs ~100 ms a call; the tests call python3 often.
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
    pybin=$(mktemp -d); ln -s /usr/bin/python3 "$pybin/python3"; export PATH=$pybin:$PATH
    trap 'rm -rf "$pybin"' EXIT
fi
PY=python3

# mut_field FILE KEY: the values of "KEY: value" lines, one per line
mut_field() {
    $PY - "$1" "$2" <<'PY'
import sys
for line in open(sys.argv[1]):
    if line.startswith("--- "): break
    if line.startswith("#"): continue
    k, sep, v = line.partition(":")
    if sep and k.strip() == sys.argv[2]: print(v.strip())
PY
}

# mut_apply MUTFILE TREE [--dry]: replace the search block in TREE/file;
# prints nothing and exits 0 when done, else one line saying why not.
mut_apply() {
    $PY - "$@" <<'PY'
import os, sys
mut, tree = sys.argv[1], sys.argv[2]
dry = len(sys.argv) > 3
fields, blocks, cur = {}, {}, None
for line in open(mut).read().split("\n"):
    if line.startswith("--- "):
        cur = line[4:].strip()
        if cur == "end": cur = None
        else: blocks[cur] = []
        continue
    if cur is not None:
        blocks[cur].append(line)
    elif ":" in line and not line.startswith("#"):
        k, _, v = line.partition(":")
        fields.setdefault(k.strip(), v.strip())
if "file" not in fields or "search" not in blocks or "replace" not in blocks:
    print("malformed: needs file:, --- search, --- replace, --- end"); sys.exit(1)
search, replace = "\n".join(blocks["search"]), "\n".join(blocks["replace"])
path = os.path.join(tree, fields["file"])
if not os.path.isfile(path):
    print(f"file not found: {fields['file']} (moved? re-point the mutant)"); sys.exit(1)
text = open(path).read()
n = text.count(search)
if n != 1:
    first = search.strip().split("\n")[0][:70]
    print(f"search text {'not found' if n == 0 else f'found {n} times'} in {fields['file']}: "
          f"\"{first}\" (the code moved: re-point the mutant's search block)")
    sys.exit(1)
if not dry:
    open(path, "w").write(text.replace(search, replace))
PY
}

declare -a rows=()
bad=0
row() { rows+=("| $1 | $2 | $3 | $4 |"); }
print_table() {
    echo
    echo "| mutant | result | seconds | killed by |"
    echo "|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
}

# every search text must match before anything is built (fail fast after a merge)
for f in "${files[@]:+${files[@]}}"; do
    name=$(basename "$f" .mut)
    if why=$(mut_apply "$f" "$REPO" --dry); then row "$name" matches - "$(echo $(mut_field "$f" test) $(mut_field "$f" unit))"
    else row "$name" "**NOT FOUND**" - "$why"; bad=1; fi
done
if [ $check_only = 1 ] || [ $bad = 1 ]; then
    print_table
    [ $bad = 1 ] && [ $check_only = 0 ] && echo "mutate: re-point the mutants above first; nothing was run"
    exit $bad
fi
rows=()

t_all=$(date +%s)
S=$(mktemp -d /tmp/cudaenv-mutate.XXXXXX)
chmod 755 "$S"   # tests that run cudaenv as a second user (trust, shared, hostile) must reach it
cleanup() { if [ $keep = 1 ]; then echo "scratch copy kept: $S"; else rm -rf "$S"; fi; [ -n "${pybin:-}" ] && rm -rf "$pybin"; }
trap cleanup EXIT
echo "mutate: scratch copy $S"
# the working tree as it is (tracked + untracked, not ignored), and the build to start from
git ls-files -z -co --exclude-standard | while IFS= read -r -d '' p; do [ -e "$p" ] && printf '%s\0' "$p"; done |
    tar --null -T - -cf - | tar -C "$S" -xf -
[ -d build/obj ] && cp -a build "$S/build"
rm -f "$S/build/share/cudaenv/manifests"
export CUDAENV_TEST_BUILD=$S/build

if [ $generate = 1 ]; then
    # the coverage map (cached), then the mutants, written into the scratch copy
    cache=$REPO/build/mutate-cov.json
    if ! $PY tools/mutagen.py covmap --fresh-only yes --tree "$S" --build build-cov \
            --table tools/mutants-tests.txt --cache "$cache" "${names[@]}"; then
        covunits=$($PY tools/mutagen.py units --table tools/mutants-tests.txt "${names[@]}")
        echo "mutate: building the coverage copy (build-cov, --coverage)"
        t_cov=$(date +%s)
        make -C "$S" -j2 WERROR=0 BUILD=build-cov CFLAGS="-O0 -g --coverage" all build-cov/doubles/seams.so \
            $(for u in $covunits; do echo "build-cov/tests/$u"; done) >"$S/.cov-build.log" 2>&1 \
            || { tail -20 "$S/.cov-build.log"; echo "mutate: the coverage build failed"; exit 1; }
        $PY tools/mutagen.py covmap --tree "$S" --build build-cov --table tools/mutants-tests.txt \
            --cache "$cache" "${names[@]}" || { echo "mutate: no coverage map"; exit 1; }
        echo "mutate: coverage map in $(( $(date +%s) - t_cov )) s"
    fi
    (cd "$S" && $PY "$REPO/tools/mutagen.py" gen --out "$S/.gen" --seed "$seed" --sample "$sample" \
        --equiv "$REPO/tools/mutants-equivalent.txt" --map "$cache" "${names[@]}") || exit 1
    files=("$S"/.gen/*.mut)
    [ -e "${files[0]}" ] || { echo "mutate: no mutants generated"; exit 1; }
    MUTATE_BASELINE=0   # the coverage run left out every test that failed on the unmutated code
    : >"$S/.results.tsv"
fi

build() { # build [UNIT...]
    local targets=(all build/doubles/seams.so) u   # the fault points' double, as make units makes it
    for u in "$@"; do targets+=("build/tests/$u"); done
    make -C "$S" -j2 WERROR=0 BUILD=build "${targets[@]}" >"$S/.build.log" 2>&1
}

# run_tests MUTFILE: 0 when every named test passed; sets timed_out=1 when one ran out of time
run_tests() {
    local f=$1 t u filter rc=0 to
    filter=$(mut_field "$f" filter)
    to=$(mut_field "$f" timeout)
    if [ $generate = 1 ]; then to=${to:-${MUTATE_GEN_TIMEOUT:-120}}; else to=${to:-${MUTATE_TIMEOUT:-600}}; fi
    timed_out=0
    while IFS= read -r t; do
        [ -n "$t" ] || continue
        if [ -n "$filter" ]; then
            (cd "$S" && timeout "$to" bats -f "$filter" "$t") >>"$S/.test.log" 2>&1 || rc=$?
        else
            (cd "$S" && timeout "$to" bats "$t") >>"$S/.test.log" 2>&1 || rc=$?
        fi
    done < <(mut_field "$f" test)
    while IFS= read -r u; do
        [ -n "$u" ] || continue
        (cd "$S" && timeout "$to" "build/tests/$u") >>"$S/.test.log" 2>&1 || rc=$?
    done < <(mut_field "$f" unit)
    [ $rc -ne 124 ] || timed_out=1
    return $rc
}

all_units=()
for f in "${files[@]}"; do while IFS= read -r u; do [ -n "$u" ] && all_units+=("$u"); done < <(mut_field "$f" unit); done
echo "mutate: building the unmutated copy"
if ! build "${all_units[@]}"; then
    tail -30 "$S/.build.log"; echo "mutate: the unmutated tree does not build"; exit 1
fi

if [ "${MUTATE_BASELINE:-1}" = 1 ]; then
    echo "mutate: baseline (the named tests on the unmutated code)"
    for f in "${files[@]}"; do
        : >"$S/.test.log"
        if ! run_tests "$f"; then
            grep -E '^not ok|FAILED' "$S/.test.log" | head -10
            echo "mutate: the tests of $(basename "$f" .mut) fail WITHOUT the mutant: fix them first"
            exit 1
        fi
    done
fi

for f in "${files[@]}"; do
    name=$(basename "$f" .mut)
    src=$(mut_field "$f" file)
    by=$(echo $(mut_field "$f" test) $(mut_field "$f" unit))
    fl=$(mut_field "$f" filter); [ -n "$fl" ] && by="$by -f '$fl'"
    t0=$(date +%s)
    if [ $generate = 1 ]; then
        if [ "$budget" -gt 0 ] && [ $(( t0 - t_all )) -ge "$budget" ]; then
            printf '%s\tnot run\t0\n' "$name" >>"$S/.results.tsv"; continue
        fi
        if [ -n "$(mut_field "$f" equivalent)" ]; then
            row "$name" equivalent 0 "-"
            printf '%s\tequivalent\t0\n' "$name" >>"$S/.results.tsv"; continue
        fi
        if [ "$(mut_field "$f" covered)" = no ]; then
            echo "$name: not covered"; row "$name" "not covered" 0 "-"
            printf '%s\tnot covered\t0\n' "$name" >>"$S/.results.tsv"; continue
        fi
    fi
    cp -p "$S/$src" "$S/.orig" 2>/dev/null
    if ! why=$(mut_apply "$f" "$S"); then
        row "$name" "**NOT FOUND**" 0 "$why"; bad=1; echo "$name: $why"; continue
    fi
    units=(); while IFS= read -r u; do [ -n "$u" ] && units+=("$u"); done < <(mut_field "$f" unit)
    : >"$S/.test.log"
    if ! build "${units[@]}"; then
        result="**BUILD FAILED**"; bad=1
        grep -m3 'error' "$S/.build.log"
    elif run_tests "$f"; then
        result="**SURVIVED**"; bad=1
    elif [ "$timed_out" = 1 ]; then
        result="killed (timeout)"
    else
        result=killed
    fi
    cp "$S/.orig" "$S/$src"; touch "$S/$src"   # newer than the mutant's objects: rebuilt next time
    dt=$(( $(date +%s) - t0 ))
    echo "$name: $result (${dt}s)"
    row "$name" "$result" "$dt" "$by"
    [ $generate = 1 ] && printf '%s\t%s\t%s\n' "$name" "${result//\*/}" "$dt" >>"$S/.results.tsv"
done
if [ $generate = 1 ]; then
    $PY tools/mutagen.py report --dir "$S/.gen" --results "$S/.results.tsv"; bad=$?
    echo
    echo "mutate: ${#files[@]} generated mutants (seed $seed, sample $sample) in $(( $(date +%s) - t_all )) s"
    exit $bad
fi
print_table
echo
echo "mutate: ${#files[@]} mutants in $(( $(date +%s) - t_all )) s"
exit $bad
