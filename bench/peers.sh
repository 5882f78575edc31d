#!/usr/bin/env bash
# cudaenv next to the peers installed here, each ratio from the same run
# (interleaved rounds, medians of the rounds):
#   - switching A<->B in one shell: `cudaenv use` (static init) vs Lmod's
#     `module swap` and Environment Modules' `module switch`;
#   - the prompt hook when nothing changed: __cudaenv_hook vs direnv's
#     `eval "$(direnv export bash)"`;
#   - the system switch in a sysroot (root only): `cudaenv global X --system`
#     vs `update-alternatives --set` + `ldconfig`, and both without ldconfig:
#     paired rounds (below), SYS_ROUNDS (default 9, at least 7) x SYS_N
#     (default 10) iterations of two switches each side, the ratio the
#     median of the rounds' ratios with their range; BASE=path/to/cudaenv
#     times a second binary (the main before a change) in the same rounds;
#     then both again with toolchains of a real toolkit's size (REAL_FILES,
#     default 4000 entries a toolchain; 0 leaves these rows out).
# A peer that is not installed is listed as such.  BUILD=build-xyz selects
# the binaries; ROUNDS (default 5) x N (default 20) switches per row;
# ONLY=system runs the system rows alone.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export CUDAENV_TEST_BUILD=$PWD/$BUILD
source tests/lib/common.bash
common_setup
trap common_teardown EXIT
export PATH=/usr/bin:/bin:/usr/sbin:/sbin
ROUNDS=${ROUNDS:-5} N=${N:-20}
B=$CUDAENV
PA=$(fx_installed 11.8.0 8.7.0.84)
PB=$(fx_installed 12.3.0)
"$B" init bash --static -q -o "$T/init.bash" >/dev/null

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { python3 -c "print('%.2fx' % ($1 / $2))"; }
# us per iteration of BODY (N iterations, after SETUP) in one bash --norc
per_op() { # setup body -> microseconds
    bash --norc -c "$1"'
        s=$EPOCHREALTIME; for ((i = 0; i < '"$N"'; i++)); do '"$2"'; done; e=$EPOCHREALTIME
        echo $(( (${e/./} - ${s/./}) / '"$N"' ))' 2>/dev/null
}
ms() { python3 -c "print('%.3f' % ($1 / 1000))"; }

# ---- peers' setup ----
LMOD_INIT=${LMOD_INIT:-/usr/share/lmod/lmod/init/bash}
[ -f "$LMOD_INIT" ] || LMOD_INIT=
MODULES_INIT=${MODULES_INIT:-/usr/share/modules/init/bash}
[ -f "$MODULES_INIT" ] || MODULES_INIT=
mkdir -p "$T/lmod/cuda" "$T/tcl/cuda"
for v in A B; do
    p=$PA; [ $v = B ] && p=$PB
    cat > "$T/lmod/cuda/$v.lua" <<LUA
family("cuda")
setenv("CUDA_HOME", "$p")
prepend_path("PATH", "$p/bin")
prepend_path("LD_LIBRARY_PATH", "$p/lib64")
LUA
    cat > "$T/tcl/cuda/$v" <<TCL
#%Module1.0
conflict cuda
setenv CUDA_HOME $p
prepend-path PATH $p/bin
prepend-path LD_LIBRARY_PATH $p/lib64
TCL
done

ce_sw=() lmod_sw=() em_sw=() ce_hook=() direnv_hook=()
mkdir -p "$T/proj"
echo 11.8 > "$T/proj/.cuda-version"
command -v direnv >/dev/null && { echo 'export CUDA_HOME=/x' > "$T/proj/.envrc"; (cd "$T/proj" && direnv allow . 2>/dev/null); } || true
[ "${ONLY:-}" = system ] && ROUNDS=0
for r in $(seq "$ROUNDS"); do
    ce_sw+=("$(per_op "source $T/init.bash; cudaenv use -q 11.8" "cudaenv use -q 12.3; cudaenv use -q 11.8")")
    [ -n "$LMOD_INIT" ] && lmod_sw+=("$(per_op "source $LMOD_INIT; module use $T/lmod; module load cuda/A" \
        "module swap cuda/A cuda/B; module swap cuda/B cuda/A")")
    [ -n "$MODULES_INIT" ] && em_sw+=("$(per_op "source $MODULES_INIT; module use $T/tcl; module load cuda/A" \
        "module switch cuda/A cuda/B; module switch cuda/B cuda/A")")
    ce_hook+=("$(cd "$T/proj" && per_op "source $T/init.bash; __cudaenv_hook" "__cudaenv_hook")")
    command -v direnv >/dev/null && direnv_hook+=("$(cd "$T/proj" && per_op 'eval "$(direnv export bash)"' 'eval "$(direnv export bash)"')")
done
med() { printf '%s\n' "$@" | median; }
echo "## peers (medians of $ROUNDS rounds of $N; one run)"
echo
echo "| what | cudaenv | peer | cudaenv / peer |"
echo "|---|---|---|---|"
row() { # what ce_us peer_label peer_us|""
    if [ -n "$4" ]; then echo "| $1 | $(ms "$2") ms | $3: $(ms "$4") ms | $(ratio "$2" "$4") |"
    else echo "| $1 | $(ms "$2") ms | $3: not installed | |"; fi
}
[ "${ONLY:-}" != system ] || { echo "| (shell rows skipped: ONLY=system) | | | |"; }
[ "${ONLY:-}" = system ] || {
ce=$(med "${ce_sw[@]}")
row "switch A<->B in a shell (2 switches)" "$ce" "Lmod \`module swap\`" "$([ -n "$LMOD_INIT" ] && med "${lmod_sw[@]}" || true)"
row "switch A<->B in a shell (2 switches)" "$ce" "Environment Modules \`module switch\`" "$([ -n "$MODULES_INIT" ] && med "${em_sw[@]}" || true)"
row "prompt hook, nothing changed" "$(med "${ce_hook[@]}")" "direnv \`export bash\`" "$(command -v direnv >/dev/null && med "${direnv_hook[@]}" || true)"
}

# ---- the system switch, in sysroots (no namespace needed) ----
if [ "$(id -u)" -ne 0 ] || ! command -v update-alternatives >/dev/null; then
    echo "| system switch | (needs root and update-alternatives) | | |"
    exit 0
fi
S1=$T/s1 S2=$T/s2
for S in "$S1" "$S2"; do
    mkdir -p "$S/etc/ld.so.conf.d" "$S/usr/local" "$S/etc/alternatives" "$S/var/lib/dpkg/alternatives"
    echo 'include /etc/ld.so.conf.d/*.conf' > "$S/etc/ld.so.conf"
done
# cudaenv: the store inside the sysroot; the peer: two toolkits + NVIDIA's static ld.so.conf.d line
mkdir -p "$S1/opt"; cp -a "$CUDAENV_ROOT" "$S1/opt/cudaenv"
cp -a "$PA" "$S2/usr/local/cuda-a"; cp -a "$PB" "$S2/usr/local/cuda-b"
echo /usr/local/cuda/lib64 > "$S2/etc/ld.so.conf.d/000_cuda.conf"
update-alternatives --quiet --root "$S2" --install /usr/local/cuda cuda /usr/local/cuda-a 10
update-alternatives --quiet --root "$S2" --install /usr/local/cuda cuda /usr/local/cuda-b 20
chmod -R go-w "$T"
LDC=$(command -v ldconfig)
# equal durability: update-alternatives --set syncs nothing (dpkg's admin
# file is left as it is once manual), cudaenv syncs its intent and the two
# directories it renames in; with every sync a no-op in both, the rows
# compare the same (no) durability
NOSYNC=$T/nosync.so
cc -shared -fPIC -O2 -o "$NOSYNC" bench/nosync.c 2>/dev/null || NOSYNC=
# Paired rounds: one bash per round runs SYS_N iterations, and each
# iteration times every body once (two switches, A->B->A), the order
# rotating by one each iteration, so each side meets the same moments of a
# busy machine (other builds, the device's flushes); a round's ratio is
# its cudaenv mean over its peer mean.  The row: the medians of the
# rounds' means and the median of their ratios, with its range: on the
# shared 2-core VM a single round of 20 moved by 0.5x-1.4x, the
# median-of-rounds of separate per-side loops (ROUNDS=5) by 0.93-1.13x
# between runs.
SYS_ROUNDS=${SYS_ROUNDS:-9} SYS_N=${SYS_N:-10}
[ "$SYS_ROUNDS" -ge 7 ] || { echo "bench/peers.sh: SYS_ROUNDS must be at least 7 (the median of the rounds)" >&2; exit 1; }
paired() { # body... -> one line per round: us per iteration of each body
    for r in $(seq "$SYS_ROUNDS"); do
        bash --norc -c '
            n=$1; shift; b=("$@"); k=$#; acc=()
            for ((j = 0; j < k; j++)); do acc[j]=0; done
            for ((i = 0; i < n; i++)); do
                for ((jj = 0; jj < k; jj++)); do
                    j=$(( (i + jj) % k )); s=$EPOCHREALTIME; eval "${b[j]}"; e=$EPOCHREALTIME
                    acc[j]=$(( acc[j] + ${e/./} - ${s/./} ))
                done
            done
            for ((j = 0; j < k; j++)); do printf "%d " $(( acc[j] / n )); done; echo' _ "$SYS_N" "$@" 2>/dev/null
    done
}
# "what" label, then the rounds (paired's lines): cudaenv is column 0, the
# peer column 1, BASE (when set) column 2
sys_row() { # what peer_label rounds
    python3 - "$1" "$2" "$3" "${BASE:+1}" <<'PY'
import statistics as st, sys
what, peer, rounds, base = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
rows = [list(map(float, l.split())) for l in rounds.splitlines() if l.strip()]
def col(j): return [r[j] for r in rows]
def rat(a, b):
    q = [x / y for x, y in zip(col(a), col(b))]
    return "%.2fx (rounds %.2f-%.2f)" % (st.median(q), min(q), max(q))
print("| %s | %.3f ms | %s: %.3f ms | %s |" % (what, st.median(col(0)) / 1000, peer, st.median(col(1)) / 1000, rat(0, 1)))
if base:
    print("| same, BASE binary | %.3f ms | %s: %.3f ms | %s; this / BASE %s |" % (
        st.median(col(2)) / 1000, peer, st.median(col(1)) / 1000, rat(2, 1), rat(0, 2)))
PY
}
CE_ENV="CUDAENV_SYSROOT=$S1 CUDAENV_ROOT=$S1/opt/cudaenv"
ce_body() { # env -> two switches of $B (and of BASE when set)
    local b
    for b in "$B" ${BASE:+"$BASE"}; do printf '%s\n' "$1 $b -q global 11.8 --system; $1 $b -q global 12.3 --system"; done
}
UA="update-alternatives --quiet --root $S2 --set cuda"
sys_run() { # ce_env peer_body peer_env -> rounds
    local ce base=
    ce=$(ce_body "$1" | sed -n 1p)
    [ -z "${BASE:-}" ] || base=$(ce_body "$1" | sed -n 2p)
    paired "$ce" "$3 ${2//;/; $3}" ${base:+"$base"}
}
# warm-up: the first switch of each creates what the later ones reuse
# (cudaenv's intent and spares, dpkg's admin file turning manual)
for v in 11.8 12.3; do env CUDAENV_SYSROOT="$S1" CUDAENV_ROOT="$S1/opt/cudaenv" "$B" -q global "$v" --system; done
$UA /usr/local/cuda-a; $UA /usr/local/cuda-b
sys_ld=$(sys_run "$CE_ENV" "$UA /usr/local/cuda-a; $LDC -r $S2; $UA /usr/local/cuda-b; $LDC -r $S2" "")
sys_0=$(sys_run "$CE_ENV CUDAENV_LDCONFIG=none" "$UA /usr/local/cuda-a; $UA /usr/local/cuda-b" "")
sys_q=
[ -z "$NOSYNC" ] || sys_q=$(sys_run "$CE_ENV CUDAENV_LDCONFIG=none LD_PRELOAD=$NOSYNC" \
    "$UA /usr/local/cuda-a; $UA /usr/local/cuda-b" "LD_PRELOAD=$NOSYNC")
[ "$(readlink "$S1/usr/local/cuda")" = /opt/cudaenv/versions/12.3.0 ] || { echo "bench/peers.sh: the cudaenv system switch did not happen" >&2; exit 1; }
[ "$(readlink "$S2/etc/alternatives/cuda")" = /usr/local/cuda-b ] || { echo "bench/peers.sh: the peer's switch did not happen" >&2; exit 1; }
echo "| system switch rows: paired rounds, $SYS_ROUNDS x $SYS_N iterations of 2 switches; medians | | | median of the rounds' ratios |"
sys_row "system switch A<->B (2 switches) with ldconfig" "\`update-alternatives --set\` + \`ldconfig\`" "$sys_ld"
sys_row "system switch A<->B (2 switches), no ldconfig" "\`update-alternatives --set\`" "$sys_0"
[ -z "$sys_q" ] || sys_row "system switch A<->B (2 switches), no ldconfig, equal durability (no fsync in either)" \
    "\`update-alternatives --set\`" "$sys_q"

# ---- the same with toolchains of a real toolkit's size (REAL_FILES, default
# 4000 a toolchain, both sides): lib64 with real shared objects (each its own
# soname, a link to it: what ldconfig reads), include/ with the headers, the
# rest under nvvm/ and share/.  cudaenv's trust walk (issue 9) lstats every
# entry of the tree it switches to; the peer checks nothing.
[ "${REAL_FILES:-4000}" -gt 0 ] || exit 0
cc -shared -fPIC -O2 -Wl,-soname,libcompXXX.so.12 -o "$T/comp.so" -x c - <<<'int cudaenv_bench_comp(void) { return 0; }'
python3 - "${REAL_FILES:-4000}" "$T/comp.so" "$S1/opt/cudaenv/versions/$(basename "$PA")" "$S1/opt/cudaenv/versions/$(basename "$PB")" \
    "$S2/usr/local/cuda-a" "$S2/usr/local/cuda-b" <<'PY'
import os, sys
n, so, trees = int(sys.argv[1]), open(sys.argv[2], "rb").read(), sys.argv[3:]
for t in trees:
    for k in range(n):
        if k < 60:   # a shared object, its soname link and a static archive (x 60: ~180 in lib64)
            d = os.path.join(t, "lib64")
            real = os.path.join(d, "libcomp%03d.so.12.3.%d" % (k, k))
            with open(real, "wb") as o: o.write(so.replace(b"libcompXXX", b"libcomp%03d" % k))
            os.symlink(os.path.basename(real), os.path.join(d, "libcomp%03d.so.12" % k))
            with open(os.path.join(d, "libcomp%03d_static.a" % k), "wb") as o: o.write(b"!<arch>\n")
            continue
        sub = "include/d%d" % (k // 300) if k < 3200 else ("nvvm/libdevice" if k % 2 else "share/doc/d%d" % (k // 300))
        d = os.path.join(t, sub)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f%d.h" % k), "wb") as o: o.write(b"/* %d */\n" % k * (1 + k % 8))
PY
chmod -R go-w "$T"
for v in 11.8 12.3; do env CUDAENV_SYSROOT="$S1" CUDAENV_ROOT="$S1/opt/cudaenv" "$B" -q global "$v" --system; done
$UA /usr/local/cuda-a; $LDC -r "$S2"; $UA /usr/local/cuda-b; $LDC -r "$S2"
nf=$(find "$S1/opt/cudaenv/versions/$(basename "$PB")" | wc -l)
sys_ld=$(sys_run "$CE_ENV" "$UA /usr/local/cuda-a; $LDC -r $S2; $UA /usr/local/cuda-b; $LDC -r $S2" "")
sys_0=$(sys_run "$CE_ENV CUDAENV_LDCONFIG=none" "$UA /usr/local/cuda-a; $UA /usr/local/cuda-b" "")
sys_row "system switch A<->B (2 switches) with ldconfig, $nf-entry toolchains" "\`update-alternatives --set\` + \`ldconfig\`" "$sys_ld"
sys_row "system switch A<->B (2 switches), no ldconfig, $nf-entry toolchains" "\`update-alternatives --set\`" "$sys_0"
