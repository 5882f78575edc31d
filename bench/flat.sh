#!/usr/bin/env bash
# Costs flat in the manifest's size (issue 43): instructions (valgrind
# callgrind: deterministic on a shared machine, where wall times are not)
# of --version, info, doctor and use with the built-in manifest and one ten
# times its size (bench/bigmanifest.py), against /bin/true and the exact
# name, as ratios.  Needs valgrind; the shared-store row needs root (useradd).
set -eu
cd "$(dirname "$0")/.."
BIN=$PWD/${BUILD:-build}/bin/cudaenv
command -v valgrind >/dev/null || { echo "bench/flat.sh: needs valgrind (apt-get install valgrind)"; exit 0; }
# a root-owned, not world-writable place (a store under /tmp is refused as root),
# that a second user can read through for the shared-store row
W=$(mktemp -d /var/cache/cudaenv-bench-flat.XXXXXX 2>/dev/null || mktemp -d)
chmod 755 "$W"
trap 'rm -rf "$W"; [ -n "${U:-}" ] && userdel "$U" 2>/dev/null || true' EXIT
export REPO=$PWD BUILD=$PWD/${BUILD:-build} TESTS_DIR=$PWD/tests T=$W
# shellcheck source=../tests/lib/common.bash
source tests/lib/common.bash
export CUDAENV_ROOT=$W/root HOME=$W/home CUDAENV=$BIN
mkdir -p "$HOME"
fx_installed_build 11.8.0 8.7.0.84 >/dev/null
cp share/manifests/cudaenv.json "$W/m1.json"
python3 bench/bigmanifest.py share/manifests/cudaenv.json 10 > "$W/m10.json"
# info re-execs cudaenv-full: its children counted; doctor's and use's not (doctor runs python3 --version)
ins() { valgrind --tool=callgrind --callgrind-out-file=/dev/null --trace-children="${KIDS:-no}" "$@" 2>&1 >/dev/null \
        | sed -n 's/.*Collected : //p' | paste -sd+ | bc; }
m() { python3 -c "print('%.2f M' % ($1 / 1e6))"; }
r() { python3 -c "print('%.2fx' % ($1 / $2))"; }
r3() { python3 -c "print('%.3fx' % ($1 / $2))"; }   # the use rows: their target is 1.05x
row() { echo "| $1 | $(m "$2") | $(m "$3") | $(r "$3" "$2") | $4 |"; }
true_i=$(ins /bin/true)
# the dynamic loader's part alone (_dl_start: mapping, relocation, symbol
# versions), before main runs: the floor of any command of this binary
ld_ins() { valgrind --tool=callgrind --callgrind-out-file=/dev/null --collect-atstart=no --toggle-collect=_dl_start "$@" 2>&1 >/dev/null \
        | sed -n 's/.*Collected : //p'; }
ld_cudaenv=$(ld_ins "$BIN" --version) ld_true=$(ld_ins /bin/true)
declare -A I
for s in 1 10; do
    export CUDAENV_MANIFEST=$W/m$s.json
    "$BIN" -q prefix tf-2.14 >/dev/null   # the index for this manifest
    I[ver$s]=$(ins "$BIN" --version)
    I[info$s]=$(KIDS=yes ins "$BIN" info tf-2.14)
    I[infoc$s]=$(KIDS=yes ins "$BIN" info 12.2)   # a CUDA release (one without a redist JSON: nothing fetched)
    I[infot$s]=$(KIDS=yes ins "$BIN" info torch-2.5)
    I[infoj$s]=$(KIDS=yes ins "$BIN" info jax-0.4.30)
    I[doc$s]=$(CUDAENV_VERSION=tf-2.14 ins "$BIN" doctor --no-framework)
    I[exact$s]=$(ins "$BIN" use 11.8.0+cudnn8.7.0.84 --shell bash -q)
    I[tf$s]=$(ins "$BIN" use tf-2.14 --shell bash -q)
done
# the built-in manifest, located by no CUDAENV_MANIFEST (config files looked for, the binary's directory)
unset CUDAENV_MANIFEST
"$BIN" -q prefix tf-2.14 >/dev/null
I[exactb]=$(ins "$BIN" use 11.8.0+cudnn8.7.0.84 --shell bash -q)
I[tfb]=$(ins "$BIN" use tf-2.14 --shell bash -q)
echo "## costs flat in the manifest's size (instructions, callgrind; 10x = bench/bigmanifest.py 10)"
echo
echo "| command | 1x | 10x | 10x / 1x | against |"
echo "|---|---|---|---|---|"
row "\`cudaenv --version\`" "${I[ver1]}" "${I[ver10]}" "$(r "${I[ver10]}" "$true_i") of \`/bin/true\` ($(m "$true_i")); target <= 1.1x"
row "the loader alone, before \`main\` (\`_dl_start\`)" "$ld_cudaenv" "$ld_cudaenv" "$(r "$ld_cudaenv" "$true_i") of \`/bin/true\`'s whole run; \`/bin/true\`'s loader $(m "$ld_true")"
row "\`info tf-2.14\`" "${I[info1]}" "${I[info10]}" "target <= 1.3x"
row "\`info 12.2\`" "${I[infoc1]}" "${I[infoc10]}" "target <= 1.3x"
row "\`info torch-2.5\`" "${I[infot1]}" "${I[infot10]}" "target <= 1.3x"
row "\`info jax-0.4.30\`" "${I[infoj1]}" "${I[infoj10]}" "target <= 1.3x"
row "\`doctor --no-framework\`, tf-2.14 selected" "${I[doc1]}" "${I[doc10]}" "target <= 1.3x"
row "\`use tf-2.14\`" "${I[tf1]}" "${I[tf10]}" "$(r3 "${I[tf1]}" "${I[exact1]}") / $(r3 "${I[tf10]}" "${I[exact10]}") of the exact name; target <= 1.05x"
echo "| \`use tf-2.14\`, the built-in manifest (no CUDAENV_MANIFEST) | $(m "${I[tfb]}") | - | - | $(r3 "${I[tfb]}" "${I[exactb]}") of the exact name ($(m "${I[exactb]}")); target <= 1.05x |"
if [ "$(id -u)" -eq 0 ] && command -v useradd >/dev/null && command -v runuser >/dev/null; then
    U=cudaenv-bench-flat
    id "$U" >/dev/null 2>&1 || useradd -M -N -s /bin/sh "$U"
    chmod -R a+rX "$W/root" "$W/m1.json" "$W/m10.json"
    mkdir -p "$W/uh" && chown "$U" "$W/uh"
    for s in 1 10; do
        export CUDAENV_MANIFEST=$W/m$s.json
        "$BIN" -q prefix tf-2.14 >/dev/null; printf '\n' >> "$CUDAENV_MANIFEST"   # the site updates it
        asu() { runuser -u "$U" -- env -i PATH=/usr/bin:/bin HOME="$W/uh" CUDAENV_ROOT="$CUDAENV_ROOT" CUDAENV_MANIFEST="$CUDAENV_MANIFEST" "$@"; }
        asu "$BIN" use tf-2.14 --shell bash -q >/dev/null
        I[sh$s]=$(asu valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BIN" use tf-2.14 --shell bash -q 2>&1 >/dev/null | sed -n 's/.*Collected : //p')
    done
    row "\`use tf-2.14\` as a user of a root-owned store, its index stale" "${I[sh1]}" "${I[sh10]}" "the user's own index copy"
fi
