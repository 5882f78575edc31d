#!/usr/bin/env bats
# Journey: the upgrade.  A store, a global default, a project pin and a
# system switch made by the previous release (built from git at
# $CUDAENV_PREV_COMMIT, default 7c7d50c, the last merge before issue 13
# changed system.json's record; cached in $CUDAENV_PREV_DIR) are used by this
# one: list, current, plain verify, a shell, install with no spec (the old
# pin), the system switch over the old record, rollback, restore, uninstall
# of the global default; then the previous release still reads the store.
# Runs in a sysroot as root (global --system); the real /usr/local/cuda is
# checked untouched in teardown.
bats_require_minimum_version 1.5.0
load ../lib/common
load ../lib/server
load ../lib/mirror
load ../lib/sysroot

PREV_COMMIT=${CUDAENV_PREV_COMMIT:-7c7d50c}

# The previous release's binaries in $PREV (built once, kept across runs).
prev_build() {
    PREV=${CUDAENV_PREV_DIR:-${TMPDIR:-/tmp}/cudaenv-prev-$PREV_COMMIT}
    [ -x "$PREV/build/bin/cudaenv" ] && [ -x "$PREV/build/libexec/cudaenv/cudaenv-full" ] && return 0
    git -C "$REPO" cat-file -e "$PREV_COMMIT^{commit}" 2>/dev/null || return 1
    # a build of its own (another run, e.g. make check-asan beside make check, may be
    # building the same one): the first to finish names it $PREV, the others use theirs
    local tmp
    tmp=$(mktemp -d "$PREV.tmp.XXXXXX") || return 1
    git -C "$REPO" archive "$PREV_COMMIT" | tar -x -C "$tmp" || { rm -rf "$tmp"; return 1; }
    # the old tree builds into its own build/: nothing of this run's make (BUILD, CFLAGS
    # through MAKEFLAGS, make check-asan's sanitizer flags) reaches it, or it would
    # compile into this checkout's build/ and delete the binary every later test runs
    env -u BUILD -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u CFLAGS -u CC -u WERROR \
        make -C "$tmp" -j2 BUILD=build WERROR=0 all >"$tmp/build.log" 2>&1 ||
        { tail -20 "$tmp/build.log" >&2; rm -rf "$tmp"; return 1; }
    [ -d "$PREV" ] && [ ! -x "$PREV/build/bin/cudaenv" ] && rm -rf "$PREV"   # a broken one from before
    if mv -T "$tmp" "$PREV" 2>/dev/null; then return 0; fi
    [ -x "$PREV/build/bin/cudaenv" ] && [ -x "$PREV/build/libexec/cudaenv/cudaenv-full" ] && { rm -rf "$tmp"; return 0; }
    PREV=$tmp
}

setup_file() {
    mirror_setup_file
    if [ "$(id -u)" -eq 0 ] && prev_build; then echo "$PREV" > "$BATS_FILE_TMPDIR/prev"; fi
}

setup() {
    common_setup
    sysguard_record
    [ "$(id -u)" -eq 0 ] || skip "the system switch needs root (it runs in a sysroot)"
    [ -s "$BATS_FILE_TMPDIR/prev" ] || skip "the previous release ($PREV_COMMIT) could not be built from git"
    PREV=$(cat "$BATS_FILE_TMPDIR/prev")
    S=$CUDAENV_SYSROOT
    export CUDAENV_ROOT=$S/opt/cudaenv
    export PATH=$BUILD/bin:/usr/bin:/bin
    unset LD_LIBRARY_PATH CUDA_HOME CUDA_PATH CUDNN_PATH CUDAENV_WARNED LIBRARY_PATH
    mkdir -p "$S/etc/ld.so.conf.d" "$S/usr/local" "$T/proj"
    echo 'include /etc/ld.so.conf.d/*.conf' > "$S/etc/ld.so.conf"
    mirror_serve
    chmod -R go-w "$T"
    export T
}

teardown() {
    server_stop
    sysroot_teardown
}

old() { CUDAENV_FULL=$PREV/build/libexec/cudaenv/cudaenv-full "$PREV/build/bin/cudaenv" "$@"; }

@test "upgrade: the previous release's store, pin and system switch, used by this one (and still read by the old one)" {
    G=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    N=$CUDAENV_ROOT/versions/12.2.2+cudnn8.9.7.29
    # --- the previous release
    run old install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    old global tf-2.14
    old -q global tf-2.14 --system
    echo 12.2 > "$T/proj/.cuda-version"        # a project pinned while on the old release
    [ "$(readlink "$S/usr/local/cuda")" = /opt/cudaenv/versions/11.8.0+cudnn8.7.0.84 ]
    ! grep -q '"gen"' "$S/etc/cudaenv/system.json" || false   # the old record: no generation
    # --- this release reads all of it
    run --separate-stderr cudaenv list
    [[ "$output" == *"11.8.0+cudnn8.7.0.84  (global: $CUDAENV_ROOT/global)  (system: /usr/local/cuda)"* ]] || { echo "$output"; false; }
    run --separate-stderr cudaenv global --system
    [ "$output" = 11.8.0+cudnn8.7.0.84 ]
    # plain verify: the global default, its old receipt proving the files
    CUDAENV_TEST_LIBCUDA=$T/nodrv run --separate-stderr seams cudaenv verify --json
    [ "$status" -eq 8 ] || { echo "$stderr $output"; false; }
    python3 -c 'import json, sys
d = json.loads(sys.stdin.read()); st = {s["id"]: s for s in d["steps"]}
assert d["toolchain"]["name"] == "11.8.0+cudnn8.7.0.84", d["toolchain"]
assert d["toolchain"]["selected_by"].startswith("selected by global"), d["toolchain"]
assert [st[k]["status"] for k in ("files", "versions", "loader")] == ["passed"] * 3, st' <<<"$output"
    # the old pin: a plain install in the project installs it
    cd "$T/proj"
    run --separate-stderr cudaenv install
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"installing 12.2, pinned by $T/proj/.cuda-version"* ]]
    [ -f "$N/.cudaenv-receipt.json" ]
    # a shell: the hook applies the pin and the global, and the new toolchain verifies
    # in its own environment while the shell holds the other's libraries
    run --separate-stderr bash --norc -c 'eval "$(cudaenv init bash)"; echo "$CUDA_HOME"; cd /; __cudaenv_hook; echo "$CUDA_HOME"
        CUDAENV_TEST_LIBCUDA=$T/nodrv seams cudaenv verify 12.2 >/dev/null; echo "verify=$?"'
    [ "${lines[0]}" = "$N" ] && [ "${lines[1]}" = "$G" ] && [ "${lines[2]}" = verify=8 ] || { echo "$output $stderr"; false; }
    cd "$T"
    # the system switch over the old record, rollback, restore
    run --separate-stderr cudaenv global 12.2 --system
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$(readlink "$S/usr/local/cuda")" = /opt/cudaenv/versions/12.2.2+cudnn8.9.7.29 ]
    grep -q '"gen"' "$S/etc/cudaenv/system.json"
    run --separate-stderr cudaenv global --rollback
    [ "$status" -eq 0 ] && [ "$(readlink "$S/usr/local/cuda")" = /opt/cudaenv/versions/11.8.0+cudnn8.7.0.84 ] || false
    run --separate-stderr cudaenv global system --system
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ ! -e "$S/usr/local/cuda" ] && [ ! -L "$S/usr/local/cuda" ] || false   # the old release recorded: none
    # the old global default is not uninstalled silently; the advice works
    run --separate-stderr cudaenv uninstall tf-2.14
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"is the global default"*"cudaenv global 12.2.2+cudnn8.9.7.29"* ]]
    cudaenv global 12.2.2+cudnn8.9.7.29
    run --separate-stderr cudaenv uninstall tf-2.14
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ ! -e "$G" ]
    # --- and the previous release still reads what this one left
    run old list
    [ "$status" -eq 0 ]
    [[ "$output" == *"12.2.2+cudnn8.9.7.29"* && "$output" != *"11.8.0+cudnn8.7.0.84"* ]] || { echo "$output"; false; }
    run old prefix tf-2.15
    [ "$output" = "$N" ]
}
