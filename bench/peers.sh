#!/usr/bin/env bash
# cudaenv next to the peers installed here, each ratio from the same run
# (interleaved rounds, medians of the rounds):
#   - switching A<->B in one shell: `cudaenv use` (static init) vs Lmod's
#     `module swap` and Environment Modules' `module switch`;
#   - the prompt hook when nothing changed: __cudaenv_hook vs direnv's
#     `eval "$(direnv export bash)"`;
#   - the system switch in a sysroot (root only): `cudaenv global X --system`
#     vs `update-alternatives --set` + `ldconfig`, and both without ldconfig.
# A peer that is not installed is listed as such.  BUILD=build-xyz selects
# the binaries; ROUNDS (default 5) x N (default 20) switches per row.
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
ce=$(med "${ce_sw[@]}")
echo "## peers (medians of $ROUNDS rounds of $N; one run)"
echo
echo "| what | cudaenv | peer | cudaenv / peer |"
echo "|---|---|---|---|"
row() { # what ce_us peer_label peer_us|""
    if [ -n "$4" ]; then echo "| $1 | $(ms "$2") ms | $3: $(ms "$4") ms | $(ratio "$2" "$4") |"
    else echo "| $1 | $(ms "$2") ms | $3: not installed | |"; fi
}
row "switch A<->B in a shell (2 switches)" "$ce" "Lmod \`module swap\`" "$([ -n "$LMOD_INIT" ] && med "${lmod_sw[@]}" || true)"
row "switch A<->B in a shell (2 switches)" "$ce" "Environment Modules \`module switch\`" "$([ -n "$MODULES_INIT" ] && med "${em_sw[@]}" || true)"
row "prompt hook, nothing changed" "$(med "${ce_hook[@]}")" "direnv \`export bash\`" "$(command -v direnv >/dev/null && med "${direnv_hook[@]}" || true)"

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
sys_ce=() sys_ua=() sys_ce0=() sys_ua0=() sys_ceq=() sys_uaq=()
for r in $(seq "$ROUNDS"); do
    sys_ce+=("$(per_op "export CUDAENV_SYSROOT=$S1 CUDAENV_ROOT=$S1/opt/cudaenv" \
        "$B -q global 11.8 --system; $B -q global 12.3 --system")")
    sys_ua+=("$(per_op "" "update-alternatives --quiet --root $S2 --set cuda /usr/local/cuda-a; $LDC -r $S2; \
        update-alternatives --quiet --root $S2 --set cuda /usr/local/cuda-b; $LDC -r $S2")")
    sys_ce0+=("$(per_op "export CUDAENV_SYSROOT=$S1 CUDAENV_ROOT=$S1/opt/cudaenv CUDAENV_LDCONFIG=none" \
        "$B -q global 11.8 --system; $B -q global 12.3 --system")")
    sys_ua0+=("$(per_op "" "update-alternatives --quiet --root $S2 --set cuda /usr/local/cuda-a; \
        update-alternatives --quiet --root $S2 --set cuda /usr/local/cuda-b")")
    [ -n "$NOSYNC" ] || continue
    sys_ceq+=("$(per_op "export CUDAENV_SYSROOT=$S1 CUDAENV_ROOT=$S1/opt/cudaenv CUDAENV_LDCONFIG=none LD_PRELOAD=$NOSYNC" \
        "$B -q global 11.8 --system; $B -q global 12.3 --system")")
    sys_uaq+=("$(per_op "export LD_PRELOAD=$NOSYNC" "update-alternatives --quiet --root $S2 --set cuda /usr/local/cuda-a; \
        update-alternatives --quiet --root $S2 --set cuda /usr/local/cuda-b")")
done
[ "$(readlink "$S1/usr/local/cuda")" = /opt/cudaenv/versions/12.3.0 ] || { echo "bench/peers.sh: the cudaenv system switch did not happen" >&2; exit 1; }
row "system switch A<->B (2 switches) with ldconfig" "$(med "${sys_ce[@]}")" "\`update-alternatives --set\` + \`ldconfig\`" "$(med "${sys_ua[@]}")"
row "system switch A<->B (2 switches), no ldconfig" "$(med "${sys_ce0[@]}")" "\`update-alternatives --set\`" "$(med "${sys_ua0[@]}")"
[ -z "$NOSYNC" ] || row "system switch A<->B (2 switches), no ldconfig, equal durability (no fsync in either)" \
    "$(med "${sys_ceq[@]}")" "\`update-alternatives --set\`" "$(med "${sys_uaq[@]}")"
