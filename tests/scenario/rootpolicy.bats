#!/usr/bin/env bats
# Root acts only on what root owns, by construction (issue 21; core/priv.h).
# Played as root against a second local account (useradd + runuser), as
# trust.bats does.  First a table: every command run as root on a
# user-owned store, a user-owned CUDAENV_SYSROOT (or one whose etc/ is a
# symlink) exits 6 naming the path, runs nothing (the user's programs would
# leave a mark) and writes nothing.  Then each attack of the issue on its own.
load ../lib/common
bats_require_minimum_version 1.5.0

ATK=cudaenv-atk

setup_file() {
    [ "$(id -u)" -eq 0 ] || return 0
    id "$ATK" >/dev/null 2>&1 || useradd -M -s /bin/sh "$ATK" 2>/dev/null || true
}

setup() {
    common_setup
    [ "$(id -u)" -eq 0 ] || skip "the attacks are played as root against a second user"
    id "$ATK" >/dev/null 2>&1 || skip "useradd $ATK failed"
    RUNUSER=$(command -v runuser) || skip "no runuser"
    chmod 755 "$T"
    export PATH=$BUILD/bin:/usr/bin:/bin
    unset LD_LIBRARY_PATH CUDA_HOME CUDA_PATH CUDNN_PATH CUDAENV_WARNED
    MARK=$T/ran
    mkdir -p "$T/work"
}

teardown() { common_teardown; }

as_atk() { "$RUNUSER" -u "$ATK" -- "$@"; }

# plant DIR: every program of a toolchain tree leaves $MARK when run
plant() {
    local f
    for f in "$1"/bin/*; do
        printf '#!/bin/sh\necho "$0 $*" >> "%s"\nexit 0\n' "$MARK" > "$f"
        chmod 755 "$f"
    done
}

# everything under the paths given, with sizes and times (nothing written)
snap() { find "$@" -printf '%p %s %T@ %u %m\n' 2>/dev/null | sort; }

# The commands, each with arguments that would make it act (one per line).
COMMANDS=(
    "list" "list-remote" "info 11.7" "prefix 11.7.0" "current" "which nvcc" "env 11.7.0" "use 11.7.0"
    "local 11.7.0" "global 11.7.0" "global 11.7.0 --system" "global --rollback --system" "exec 11.7.0 -- nvcc"
    "verify 11.7.0" "doctor" "jupyter install 11.7.0 --python /usr/bin/python3" "modulefile 11.7.0"
    "adopt --scan" "cache list" "uninstall 11.7.0" "install 11.7.0" "mirror 11.7 --to $BATS_TEST_TMPDIR/m"
    "init bash --static"
)

@test "meta: every command as root on a user-owned store exits 6, naming it, and runs and writes nothing" {
    U=$T/user-store
    CUDAENV_ROOT=$U fx_installed 11.7.0 >/dev/null
    plant "$U/versions/11.7.0"
    chown -R "$ATK" "$U"
    snap "$U" "$T/work" "$CUDAENV_SYSROOT" > "$T/before"
    local c
    for c in "${COMMANDS[@]}"; do
        # shellcheck disable=SC2086
        run --separate-stderr bash -c 'cd "$1" && shift && exec "$@"' _ "$T/work" env CUDAENV_ROOT="$U" "$CUDAENV" $c
        [ "$status" -eq 6 ] || { echo "cudaenv $c: exit $status: $stderr"; false; }
        [[ "$stderr" == *"$U is owned by uid $(id -u "$ATK"), not root"* ]] || { echo "cudaenv $c: $stderr"; false; }
        [ ! -e "$MARK" ] || { echo "cudaenv $c ran: $(cat "$MARK")"; false; }
    done
    snap "$U" "$T/work" "$CUDAENV_SYSROOT" > "$T/after"
    diff "$T/before" "$T/after"
}

@test "meta: every command as root with a user-owned CUDAENV_SYSROOT, or one whose etc/ is a symlink, exits 6 and runs and writes nothing" {
    P=$(fx_installed 11.7.0)
    plant "$P"
    S=$T/user-sys
    mkdir -p "$S/usr/local" "$S/etc/ld.so.conf.d"
    chown -R "$ATK" "$S"
    L=$T/link-sys
    mkdir -p "$L/usr/local" "$T/host-etc/ld.so.conf.d"
    ln -s "$T/host-etc" "$L/etc"
    snap "$CUDAENV_ROOT" "$S" "$T/host-etc" "$T/work" > "$T/before"
    local c sys
    for sys in "$S" "$L"; do
        for c in "${COMMANDS[@]}"; do
            [ "$c" = "init bash --static" ] && continue   # the sysroot is no part of it
            # shellcheck disable=SC2086
            run --separate-stderr bash -c 'cd "$1" && shift && exec "$@"' _ "$T/work" env CUDAENV_SYSROOT="$sys" "$CUDAENV" $c
            [ "$status" -eq 6 ] || { echo "cudaenv $c (sysroot $sys): exit $status: $stderr"; false; }
            if [ "$sys" = "$S" ]; then
                [[ "$stderr" == *"$S is owned by uid $(id -u "$ATK"), not root"* ]] || { echo "cudaenv $c: $stderr"; false; }
            else
                [[ "$stderr" == *"$L/etc is a symlink"* ]] || { echo "cudaenv $c: $stderr"; false; }
            fi
            [ ! -e "$MARK" ] || { echo "cudaenv $c ran: $(cat "$MARK")"; false; }
        done
    done
    snap "$CUDAENV_ROOT" "$S" "$T/host-etc" "$T/work" > "$T/after"
    diff "$T/before" "$T/after"
}

@test "meta: adopt DIR as root of a user-owned tree, or one with a user's file inside, exits 6 naming it; nothing runs, nothing lands in the store" {
    D=$T/user-tk
    fx_toolkit "$D" 12.4.1 >/dev/null
    plant "$D"
    rm -f "$D/version.json"    # before: nvcc --version ran as root to learn the version
    chown -R "$ATK" "$D"
    run --separate-stderr "$CUDAENV" adopt "$D"
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"unsafe for adopt run as root: $D is owned by uid $(id -u "$ATK")"* ]]
    [ ! -e "$MARK" ]
    [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    # root's directory, one file inside the user's
    chown -R root "$D"
    chown "$ATK" "$D/bin/nvcc"
    run --separate-stderr "$CUDAENV" adopt "$D"
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$D/bin/nvcc is owned by uid"* ]]
    [ ! -e "$MARK" ]
    [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    # --scan names it, never offers it, runs nothing
    mkdir -p "$CUDAENV_SYSROOT/usr/local"
    fx_toolkit "$CUDAENV_SYSROOT/usr/local/cuda-12.4" 12.4.1 >/dev/null
    plant "$CUDAENV_SYSROOT/usr/local/cuda-12.4"
    chown -R "$ATK" "$CUDAENV_SYSROOT/usr/local/cuda-12.4"
    run --separate-stderr "$CUDAENV" adopt --scan
    [ "$status" -eq 0 ]
    [[ "$output" == *"cuda-12.4"*"not offered"*"owned by uid"* && "$output" != *"cudaenv adopt $CUDAENV_SYSROOT"* ]]
    [ ! -e "$MARK" ]
}

@test "meta: init --static as root refuses a symlinked or user-owned init/ and an --output in a user's directory" {
    mkdir -p "$CUDAENV_ROOT" "$T/elsewhere"
    ln -s "$T/elsewhere" "$CUDAENV_ROOT/init"
    run --separate-stderr "$CUDAENV" init bash --static
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$CUDAENV_ROOT/init is a symlink"* ]]
    [ -z "$(ls -A "$T/elsewhere")" ]
    rm "$CUDAENV_ROOT/init"
    mkdir "$CUDAENV_ROOT/init" && chown "$ATK" "$CUDAENV_ROOT/init"
    run --separate-stderr "$CUDAENV" init bash --static
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$CUDAENV_ROOT/init is owned by uid"* ]]
    [ -z "$(ls -A "$CUDAENV_ROOT/init")" ]
    chown "$ATK" "$T/elsewhere"
    run --separate-stderr "$CUDAENV" init bash --static -o "$T/elsewhere/cudaenv.bash"
    [ "$status" -eq 6 ]
    [ -z "$(ls -A "$T/elsewhere")" ]
    # root's own: written
    rmdir "$CUDAENV_ROOT/init"
    run --separate-stderr "$CUDAENV" init bash --static
    [ "$status" -eq 0 ]
    [ -s "$CUDAENV_ROOT/init/cudaenv.bash" ]
}

@test "meta: exec and verify as root refuse a toolchain whose bin/ (or a file in it) is a user's, before running anything" {
    P=$(fx_installed 11.7.0)
    plant "$P"
    chown "$ATK" "$P/bin"
    run --separate-stderr "$CUDAENV" exec 11.7.0 -- nvcc --version
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$P/bin is owned by uid"* ]]
    run --separate-stderr "$CUDAENV" verify 11.7.0
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$P/bin is owned by uid"* ]]
    [ ! -e "$MARK" ]
    chown root "$P/bin" && chown "$ATK" "$P/bin/nvcc"
    run --separate-stderr "$CUDAENV" exec 11.7.0 -- nvcc --version
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$P/bin/nvcc is owned by uid"* ]]
    [ ! -e "$MARK" ]
    # the user runs their own as before
    run as_atk env CUDAENV_ROOT="$CUDAENV_ROOT" "$CUDAENV" exec 11.7.0 -- /bin/true
    [ "$status" -eq 0 ]
}

@test "meta: exec, verify and adopt as root refuse a root-owned symlink in bin/ to a user's program; it never runs" {
    mkdir -p "$T/u/bin"
    printf '#!/bin/sh\necho "$0 $*" >> "%s"\nexit 0\n' "$MARK" > "$T/u/bin/nvcc"
    chmod 755 "$T/u/bin/nvcc"
    chown -R "$ATK" "$T/u"
    P=$(fx_installed 11.7.0)
    rm "$P/bin/nvcc" && ln -s "$T/u/bin/nvcc" "$P/bin/nvcc"   # the link is root's, its target the user's
    run --separate-stderr "$CUDAENV" exec 11.7.0 -- nvcc --version
    [ "$status" -eq 6 ] || { echo "$status $output $stderr"; false; }
    [[ "$stderr" == *"$P/bin/nvcc is a symlink to a path a user can change"* ]]
    run --separate-stderr "$CUDAENV" verify 11.7.0
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$P/bin/nvcc is a symlink to a path a user can change"* ]]
    [ ! -e "$MARK" ] || { cat "$MARK"; false; }
    # adopt: a root-owned tree with the same link
    D=$T/root-tk
    fx_toolkit "$D" 12.4.1 >/dev/null
    rm "$D/bin/nvcc" && ln -s "$T/u/bin/nvcc" "$D/bin/nvcc"
    run --separate-stderr "$CUDAENV" adopt "$D"
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"unsafe for adopt run as root: $D/bin/nvcc is a symlink to a path a user can change"* ]]
    [ ! -e "$MARK" ]
    [ ! -e "$CUDAENV_ROOT/versions/12.4.1" ]
    # the same link to root's own copy passes
    cp "$T/u/bin/nvcc" "$T/nvcc-root" && chmod 755 "$T/nvcc-root"
    ln -sfn "$T/nvcc-root" "$P/bin/nvcc"
    run --separate-stderr "$CUDAENV" exec 11.7.0 -- nvcc --version
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ -s "$MARK" ]
}

# ---- Python (issue 21, item 3) ----

# a caller's working directory with modules that would leave a mark
plant_py() {
    local d=$1
    mkdir -p "$d"
    for m in json ipykernel sitecustomize torch tensorflow; do
        printf 'open("%s", "a").write("%s ran\\n")\n' "$MARK" "$m" > "$d/$m.py"
    done
    chmod -R a+rX "$d"
}

@test "python: doctor's framework probe, verify --framework and jupyter install import nothing from the caller's cwd, as root" {
    fx_installed 11.8.0 >/dev/null
    plant_py "$T/repo"
    # the private directories go to a TMPDIR of this test's own (root's, so honoured):
    # other test files run cudaenv's Python at the same time in /tmp
    mkdir -m 700 "$T/tmp"; export TMPDIR=$T/tmp
    cd "$T/repo"
    CUDAENV_DOCTOR_PYTHON=/usr/bin/python3 run --separate-stderr "$CUDAENV" doctor --json
    [ ! -e "$MARK" ] || { cat "$MARK"; false; }
    run --separate-stderr "$CUDAENV" verify 11.8.0 --framework torch --python /usr/bin/python3 --json
    [ ! -e "$MARK" ] || { cat "$MARK"; false; }
    run --separate-stderr "$CUDAENV" jupyter install 11.8.0 --python /usr/bin/python3
    [ ! -e "$MARK" ] || { cat "$MARK"; false; }
    # and no private directory is left behind
    [ -z "$(ls -A "$T/tmp")" ] || { ls -la "$T/tmp"; false; }
}

@test "python: the same as a user in a cloned repository" {
    plant_py "$T/repo"
    chown -R "$ATK" "$T/repo"
    mkdir -p "$T/ustore" && chown "$ATK" "$T/ustore"
    CUDAENV_ROOT=$T/ustore fx_installed 11.8.0 >/dev/null
    chown -R "$ATK" "$T/ustore"
    touch "$MARK" && chown "$ATK" "$MARK"    # the user's own programs could write it
    run as_atk bash -c 'cd "$1" && export CUDAENV_ROOT="$2" HOME="$2" &&
        CUDAENV_DOCTOR_PYTHON=/usr/bin/python3 "$3" doctor --json >/dev/null 2>&1
        "$3" verify 11.8.0 --framework torch --python /usr/bin/python3 --json >/dev/null 2>&1
        "$3" jupyter install 11.8.0 --python /usr/bin/python3 2>&1
        ls "$2/.local/share/jupyter/kernels"' _ "$T/repo" "$T/ustore" "$CUDAENV"
    [[ "$output" == *cudaenv-11.8.0* ]] || { echo "$output"; false; }   # it ran, as the user
    [ ! -s "$MARK" ] || { cat "$MARK"; false; }
}

# ---- knobs (issue 21, item 4) ----

# An installed-like copy of the binaries outside the build tree.
inst_copy() {
    I=$T/inst
    mkdir -p "$I/bin" "$I/libexec/cudaenv" "$I/share/cudaenv"
    cp "$BUILD/bin/cudaenv" "$I/bin/"
    cp "$BUILD/libexec/cudaenv/cudaenv-full" "$I/libexec/cudaenv/"
    ln -s "$REPO/share/manifests" "$I/share/cudaenv/manifests"
    ln -s "$REPO/data/redist/cuda" "$I/share/cudaenv/redist"
}

@test "knobs: as root cudaenv ignores CUDAENV_FULL and reads no CUDAENV_TEST_*: a seam acts only through the preloaded double" {
    inst_copy
    printf '#!/bin/sh\necho full "$@" >> "%s"\nexit 0\n' "$MARK" > "$T/evil-full" && chmod 755 "$T/evil-full"
    # install's options are parsed by the full binary: the light one execs it first
    for b in "$I/bin/cudaenv" "$CUDAENV"; do
        CUDAENV_FULL=$T/evil-full run --separate-stderr "$b" install --bogus
        [ "$status" -eq 2 ] || { echo "$b: $status $stderr"; false; }
        [ ! -e "$MARK" ] || { cat "$MARK"; false; }
    done
    # the hash log through a symlink onto a root-only file
    fx_receipt "$(fx_installed 11.8.0)"
    echo secret > "$T/victim" && chmod 600 "$T/victim"
    ln -s "$T/victim" "$T/hash.log"
    CUDAENV_TEST_HASH_LOG=$T/hash.log run --separate-stderr "$I/bin/cudaenv" verify 11.8.0 --deep
    [ "$(cat "$T/victim")" = secret ]
    # not even to a plain file, installed or in the build tree: the product reads no seam
    for b in "$I/bin/cudaenv" "$CUDAENV"; do
        rm -f "$T/copy.log"
        CUDAENV_TEST_HASH_LOG=$T/copy.log run --separate-stderr "$b" verify 11.8.0 --deep
        [[ "$output" == *files* ]] || { echo "$output $stderr"; false; }   # it ran its deep file check
        [ ! -e "$T/copy.log" ]
    done
    # the fault-point double (tests/doubles/seams.c) preloaded: the seam acts, never through a link
    CUDAENV_TEST_HASH_LOG=$T/plain.log run --separate-stderr seams "$CUDAENV" verify 11.8.0 --deep
    [ -s "$T/plain.log" ]
    CUDAENV_TEST_HASH_LOG=$T/hash.log run --separate-stderr seams "$CUDAENV" verify 11.8.0 --deep
    [ "$(cat "$T/victim")" = secret ]
}

@test "knobs: as root a user-owned CUDAENV_DOCTOR_PYTHON or full binary does not run (the program rule)" {
    mkdir -p "$T/u" && chown "$ATK" "$T/u"
    printf '#!/bin/sh\necho ran >> "%s"\nexit 0\n' "$MARK" > "$T/u/python3"
    chmod 755 "$T/u/python3" && chown "$ATK" "$T/u/python3"
    CUDAENV_DOCTOR_PYTHON=$T/u/python3 run --separate-stderr "$CUDAENV" doctor --json
    [ ! -e "$MARK" ]
    inst_copy
    cp "$T/u/python3" "$I/libexec/cudaenv/cudaenv-full" && chown "$ATK" "$I/libexec/cudaenv/cudaenv-full"
    run --separate-stderr "$I/bin/cudaenv" install 11.8
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"cudaenv-full"*"is not root's to run"*"owned by uid"* ]] || { echo "$stderr"; false; }
    [ ! -e "$MARK" ]
}

@test "knobs: a relative HOME is never used: global as a user of a shared store does not write under the working directory" {
    fx_installed 11.8.0 >/dev/null
    chmod -R a+rX "$CUDAENV_ROOT"
    mkdir -p "$T/w" && chown "$ATK" "$T/w"
    run as_atk bash -c 'cd "$1" && HOME=. CUDAENV_ROOT="$2" "$3" global 11.8.0' _ "$T/w" "$CUDAENV_ROOT" "$CUDAENV"
    [ "$status" -ne 127 ]
    [ ! -e "$T/w/.config" ]
    # an absolute HOME is used as before
    mkdir -p "$T/uh" && chown "$ATK" "$T/uh"
    run as_atk env HOME="$T/uh" CUDAENV_ROOT="$CUDAENV_ROOT" "$CUDAENV" global 11.8.0
    [ "$status" -eq 0 ]
    [ -s "$T/uh/.config/cudaenv/global" ]
}

@test "knobs: CUDAENV_LDCONFIG naming a user's program: root's system switch does not run it (exit 6 naming it)" {
    load ../lib/sysroot
    sysroot_setup
    mkdir -p "$T/u" && chown "$ATK" "$T/u"
    printf '#!/bin/sh\necho "$0 $*" >> "%s"\nexit 0\n' "$MARK" > "$T/u/prog"
    chmod 755 "$T/u/prog" && chown "$ATK" "$T/u/prog"
    CUDAENV_LDCONFIG=$T/u/prog run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$T/u/prog is not root's to run: $T/u is owned by uid"* ]]
    [ ! -e "$MARK" ]
}

@test "install/use/local/env/exec --for a user's interpreter, as root: exit 6 naming it, the interpreter never runs" {
    # a venv's python the second user owns: run by root it would run their code as uid 0
    mkdir -p "$T/venv/bin"
    printf '#!/bin/sh\necho "$0 $*" >> "%s"\nexit 0\n' "$MARK" > "$T/venv/bin/python"
    chmod 755 "$T/venv/bin/python"
    chown -R "$ATK" "$T/venv"
    cd "$T/work"
    for c in "install --for" "use --shell bash --for" "local --for" "env --for" "exec --for"; do
        # shellcheck disable=SC2086
        run --separate-stderr "$CUDAENV" $c "$T/venv/bin/python"
        [ "$status" -eq 6 ] || { echo "cudaenv $c: exit $status: $stderr"; false; }
        [[ "$stderr" == *"$T/venv"*"owned by uid $(id -u "$ATK")"* ]] || { echo "cudaenv $c: $stderr"; false; }
    done
    [ ! -e "$MARK" ]
    [ ! -e "$T/work/.cuda-version" ]
    [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
}

# ---- a user's venv (issue 36, item 1) ----

# mkvenv DIR: a venv as `python3 -m venv` makes it (bin/python -> python3 ->
# /usr/bin/python3, pyvenv.cfg), with a .pth and a torch package that leave
# $MARK when Python starts or the probe imports torch
mkvenv() {
    /usr/bin/python3 -m venv --without-pip "$1"
    local sp
    sp=$(echo "$1"/lib/python3*/site-packages)
    printf 'import os; open("%s", "a").write("pth ran\\n")\n' "$MARK" > "$sp/cudaenv-evil.pth"
    mkdir -p "$sp/torch"
    printf 'open("%s", "a").write("torch ran\\n")\n__version__ = "2.5.1"\n' "$MARK" > "$sp/torch/__init__.py"
}

@test "venv: as root a user's venv (bin/python a link to root's /usr/bin/python3) never starts: --for, verify --framework, jupyter, doctor; exit 6 naming it" {
    [ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
    fx_installed 11.8.0 >/dev/null
    V=$T/uvenv
    mkvenv "$V"
    chown -R "$ATK" "$V"
    [ "$(readlink -f "$V/bin/python")" = "$(readlink -f /usr/bin/python3)" ]   # the interpreter itself is root's
    mkdir -m 700 "$T/tmp"; export TMPDIR=$T/tmp
    cd "$T/work"
    local c
    for c in "install --for" "use --shell bash --for" "local --for" "env --for" "exec --for" \
             "verify 11.8.0 --framework torch --python" "jupyter install 11.8.0 --python"; do
        # shellcheck disable=SC2086
        run --separate-stderr "$CUDAENV" $c "$V/bin/python"
        [ "$status" -eq 6 ] || { echo "cudaenv $c: exit $status: $stderr"; false; }
        [[ "$stderr" == *"the Python $V/bin/python is not root's to run: $V is owned by uid $(id -u "$ATK"), not root"* ]] ||
            { echo "cudaenv $c: $stderr"; false; }
        [[ "$stderr" == *"run the same command as the owner of that Python"* ]]
        [ ! -e "$MARK" ] || { echo "cudaenv $c: $(cat "$MARK")"; false; }
    done
    # doctor: the venv first on PATH, or named by CUDAENV_DOCTOR_PYTHON
    PATH=$V/bin:$PATH CUDAENV_DOCTOR_PYTHON= run --separate-stderr "$CUDAENV" doctor --json
    [ "$status" -eq 6 ] || { echo "doctor: exit $status: $stderr"; false; }
    [[ "$stderr" == *"the Python $V/bin/python3 is not root's to run: $V is owned by"* ]] || { echo "$stderr"; false; }
    CUDAENV_DOCTOR_PYTHON=$V/bin/python run --separate-stderr "$CUDAENV" doctor
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$V is owned by uid"* ]] || { echo "$stderr"; false; }
    [ ! -e "$MARK" ] || { cat "$MARK"; false; }
    [ ! -e "$T/work/.cuda-version" ]
    [ ! -e "$HOME/.local/share/jupyter/kernels/cudaenv-11.8.0" ]
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "venv: as root a root-owned venv with one user-owned file inside (its torch package, a .pth) is refused naming that file; the root-owned one runs" {
    [ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
    fx_installed 11.8.0 >/dev/null
    V=$T/rvenv
    mkvenv "$V"
    sp=$(echo "$V"/lib/python3*/site-packages)
    chown "$ATK" "$sp/torch/__init__.py"
    run --separate-stderr "$CUDAENV" verify 11.8.0 --framework torch --python "$V/bin/python"
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$sp/torch/__init__.py is owned by uid $(id -u "$ATK"), not root"* ]] || { echo "$stderr"; false; }
    [ ! -e "$MARK" ]
    chown root "$sp/torch/__init__.py" && chmod o+w "$sp/cudaenv-evil.pth"
    run --separate-stderr "$CUDAENV" verify 11.8.0 --framework torch --python "$V/bin/python"
    [ "$status" -eq 6 ] || { echo "exit $status: $stderr"; ls -la "$sp"; false; }
    [[ "$stderr" == *"$sp/cudaenv-evil.pth is writable by group or others"* ]] || { echo "$stderr"; false; }
    [ ! -e "$MARK" ]
    # a .pth naming a user's directory: that directory is imported from
    chmod o-w "$sp/cudaenv-evil.pth"
    mkdir -p "$T/usrc" && chown "$ATK" "$T/usrc"
    echo "$T/usrc" > "$sp/editable.pth"
    run --separate-stderr "$CUDAENV" verify 11.8.0 --framework torch --python "$V/bin/python"
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$T/usrc is owned by uid"* ]] || { echo "$stderr"; false; }
    [ ! -e "$MARK" ]
    # root's own venv, all root's: it runs (the planted package is root's now)
    rm "$sp/editable.pth"
    run --separate-stderr "$CUDAENV" verify 11.8.0 --framework torch --python "$V/bin/python"
    [ "$status" -ne 6 ] || { echo "$stderr"; false; }
    grep -q "torch ran" "$MARK"
}

@test "venv: the venv's owner runs the same commands on their own venv (no root needed)" {
    [ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
    mkdir -p "$T/ustore"
    CUDAENV_ROOT=$T/ustore fx_installed 11.8.0 >/dev/null
    V=$T/uvenv
    mkvenv "$V"
    touch "$MARK"
    chown -R "$ATK" "$V" "$MARK" "$T/ustore"
    run as_atk env CUDAENV_ROOT="$T/ustore" HOME="$T/ustore" "$CUDAENV" verify 11.8.0 --framework torch --python "$V/bin/python"
    [ "$status" -ne 6 ] || { echo "$output"; false; }
    grep -q "torch ran" "$MARK"    # as the user: their own code, their own uid
}

# ---- trust anchors: manifest files, config, keys (issue 36, item 2) ----

# The commands that load the manifest, each with arguments that would act on it.
MCOMMANDS=("info 11.8" "list-remote" "install 11.8" "outdated" "update" "mirror 11.8 --to $BATS_TEST_TMPDIR/m")

@test "meta: as root a manifest file a user can change (theirs, in their directory, a link to it, file://, or named by the config) is never read: exit 6 naming it" {
    mkdir -p "$T/u"
    cp "$REPO/share/manifests/cudaenv.json" "$T/u/m.json"
    chown -R "$ATK" "$T/u"
    ln -s "$T/u/m.json" "$T/link.json"
    mkdir -p "$CUDAENV_SYSROOT/etc/cudaenv"
    local c how
    for how in "env:$T/u/m.json" "env:file://$T/u/m.json" "env:$T/link.json" "root-file:$T/u/m.json" "config:$T/u/m.json"; do
        local kind=${how%%:*} m=${how#*:}
        [ "$kind" = root-file ] && chown root "$T/u/m.json"   # root's file in the user's directory
        rm -f "$CUDAENV_SYSROOT/etc/cudaenv/config.json"
        [ "$kind" = config ] && printf '{"manifest": "%s"}\n' "$m" > "$CUDAENV_SYSROOT/etc/cudaenv/config.json"
        for c in "${MCOMMANDS[@]}"; do
            local envm=$m
            [ "$kind" = config ] && envm=
            # shellcheck disable=SC2086
            run --separate-stderr env ${envm:+CUDAENV_MANIFEST=$envm} "$CUDAENV" $c
            [ "$status" -eq 6 ] || { echo "cudaenv $c ($how): exit $status: $stderr"; false; }
            [[ "$stderr" == *"unsafe for cudaenv run as root: the manifest $m: $T/u is owned by uid $(id -u "$ATK"), not root"* ]] ||
                { echo "cudaenv $c ($how): $stderr"; false; }
            [[ "$stderr" == *"Use a manifest only root can change"* ]]
        done
        # a spec resolved from the store alone: the hint does not pretend the manifest was asked
        run --separate-stderr env ${envm:+CUDAENV_MANIFEST=$envm} "$CUDAENV" env 11.8
        [ "$status" -eq 3 ]
        [[ "$stderr" == *"the manifest is not consulted: it is not root's"* ]] || { echo "env ($how): $stderr"; false; }
        chown "$ATK" "$T/u/m.json"
    done
    [ ! -e "$BATS_TEST_TMPDIR/m" ]
    [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    # root's own copy: read
    rm -f "$CUDAENV_SYSROOT/etc/cudaenv/config.json"
    cp "$REPO/share/manifests/cudaenv.json" "$T/mine.json"
    CUDAENV_MANIFEST=$T/mine.json run --separate-stderr "$CUDAENV" info 11.8
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    # the user reads their own as before
    run as_atk env CUDAENV_ROOT="$T/u/store" CUDAENV_MANIFEST="$T/u/m.json" "$CUDAENV" info 11.8
    [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "meta: as root a user's config (HOME, XDG_CONFIG_HOME; theirs, or root's file in their directory) decides nothing: ignored with a warning by every command that reads it" {
    cp "$REPO/share/manifests/cudaenv.json" "$T/m.json"
    mkdir -p "$T/uh/.config/cudaenv"
    printf '{"manifest": "%s", "mirror": "https://evil.example/m"}\n' "$T/m.json" > "$T/uh/.config/cudaenv/config.json"
    chown -R "$ATK" "$T/uh"
    local c v owner
    # the user's file, then root's file in the user's directory (the user can swap it)
    for owner in "$ATK" root; do
        chown "$owner" "$T/uh/.config/cudaenv/config.json"
    for v in "HOME=$T/uh" "XDG_CONFIG_HOME=$T/uh/.config"; do
        for c in "info 11.8 --json" "list-remote" "outdated" "config list"; do
            # shellcheck disable=SC2086
            run --separate-stderr env "$v" "$CUDAENV" $c
            [[ "$stderr" == *"ignoring the config file $T/uh/.config/cudaenv/config.json: $T/uh is owned by uid $(id -u "$ATK"), not root"* ]] ||
                { echo "cudaenv $c ($v): $stderr"; false; }
            [[ "$output" != *evil.example* && "$output" != *"$T/m.json"* ]] || { echo "cudaenv $c ($v, $owner): $output"; false; }
        done
    done
    done
}

@test "meta: as root only root's keys verify a manifest: a user's key directory via XDG_CONFIG_HOME or HOME is never consulted (exit 5); the site's verifies" {
    load ../lib/server
    mkdir -p "$T/srv"
    server_start "$T/srv" --tls
    export CUDAENV_MANIFEST=$SERVER_TLS_URL/cudaenv.json
    # a signed remote manifest names where it is served and its serial (MANIFEST.md: signed claims)
    python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); m["source"] = sys.argv[3]; m["serial"] = 1; json.dump(m, open(sys.argv[2], "w"))' \
        "$REPO/share/manifests/cudaenv.json" "$T/srv/cudaenv.json" "$CUDAENV_MANIFEST"
    openssl genpkey -algorithm ed25519 -out "$T/k.key" 2>/dev/null
    openssl pkeyutl -sign -rawin -inkey "$T/k.key" -in "$T/srv/cudaenv.json" | base64 -w0 > "$T/srv/cudaenv.json.sig"
    mkdir -p "$T/ux/cudaenv/keys"
    openssl pkey -in "$T/k.key" -pubout -out "$T/ux/cudaenv/keys/k.pem"
    chown -R "$ATK" "$T/ux"
    local c v
    for v in "XDG_CONFIG_HOME=$T/ux" "HOME=$T/ux/h"; do
        [ "$v" = "HOME=$T/ux/h" ] && { mkdir -p "$T/ux/h/.config"; cp -a "$T/ux/cudaenv" "$T/ux/h/.config/"; chown -R "$ATK" "$T/ux/h"; }
        for c in "info 11.8" "list-remote" "update" "install 11.8"; do
            # shellcheck disable=SC2086
            run --separate-stderr env "$v" "$CUDAENV" $c
            [ "$status" -eq 5 ] || { echo "cudaenv $c ($v): exit $status: $stderr"; server_stop; false; }
            [[ "$stderr" == *"as root a user's keys"*"are never trusted"* ]] || { echo "cudaenv $c ($v): $stderr"; server_stop; false; }
        done
    done
    run ls "$CUDAENV_ROOT"/manifests/*.json
    [ "$status" -ne 0 ] || { server_stop; false; }
    mkdir -p "$CUDAENV_SYSROOT/etc/cudaenv/keys"
    cp "$T/ux/cudaenv/keys/k.pem" "$CUDAENV_SYSROOT/etc/cudaenv/keys/"
    chown root "$CUDAENV_SYSROOT/etc/cudaenv/keys/k.pem"
    run --separate-stderr "$CUDAENV" info 11.8
    server_stop
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
}
