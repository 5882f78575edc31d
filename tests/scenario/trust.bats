#!/usr/bin/env bats
# Trust boundaries (issue 9), played by an attacker with a second local
# account (useradd + runuser): root never writes, deletes or runs anything
# in a store a user can change (exit 6 with the fix), symlinks inside the
# store never redirect root, and a non-root user keeps their own store as is.
# Every test here fails on the code before core/trust.c.
load ../lib/common
load ../lib/mirror
bats_require_minimum_version 1.5.0

ATK=cudaenv-atk

setup_file() {
    [ "$(id -u)" -eq 0 ] || return 0
    id "$ATK" >/dev/null 2>&1 || useradd -M -s /bin/sh "$ATK" 2>/dev/null || true
    mirror_setup_file
}

setup() {
    common_setup
    [ "$(id -u)" -eq 0 ] || skip "the attacks are played as root against a second user"
    id "$ATK" >/dev/null 2>&1 || skip "useradd $ATK failed"
    command -v runuser >/dev/null || skip "no runuser"
    chmod 755 "$T"
    # the attacker's own store, as `sudo -E` or a kept HOME hands it to root
    U=$T/user-store
    mkdir -p "$U"
    chown "$ATK" "$U"
    VICTIM=$T/victim
}

teardown() {
    common_teardown
}

as_atk() { runuser -u "$ATK" -- "$@"; }

# an installed toolchain in the attacker's store, laid out by the attacker
atk_installed() {
    CUDAENV_ROOT=$U fx_installed "$1" >/dev/null
    chown -R "$ATK" "$U"
}

@test "trust: root refuses a user-owned store (exit 6 naming the owner and the fix)" {
    atk_installed 11.7.0
    run --separate-stderr env CUDAENV_ROOT="$U" "$CUDAENV" list
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$U is owned by uid $(id -u "$ATK"), not root"* ]]
    [[ "$stderr" == *"CUDAENV_ROOT=/opt/cudaenv"* ]]
    # the same through a kept HOME (sudo -E): the default ~/.cudaenv is the user's
    mkdir -p "$T/userhome" && ln -s "$U" "$T/userhome/.cudaenv"
    run --separate-stderr env -u CUDAENV_ROOT HOME="$T/userhome" "$CUDAENV" list
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$U is owned by uid"* ]]
    # the same store works for its owner, as before
    run as_atk env CUDAENV_ROOT="$U" "$CUDAENV" list --names
    [ "$status" -eq 0 ]
    [ "$output" = 11.7.0 ]
}

@test "trust: planted pkgs -> /victim: root's uninstall deletes nothing there" {
    atk_installed 11.7.0
    mkdir -p "$VICTIM/precious"
    echo data > "$VICTIM/precious/file"
    as_atk ln -s "$VICTIM" "$U/pkgs"
    run --separate-stderr env CUDAENV_ROOT="$U" "$CUDAENV" uninstall 11.7.0
    [ "$status" -eq 6 ]
    [ -f "$VICTIM/precious/file" ]
    [ -d "$U/versions/11.7.0" ]
}

@test "trust: planted .lock -> /anything: root creates no file there" {
    atk_installed 11.7.0
    as_atk ln -s "$VICTIM-created" "$U/.lock"
    run --separate-stderr env CUDAENV_ROOT="$U" "$CUDAENV" uninstall 11.7.0
    [ "$status" -eq 6 ]
    [ ! -e "$VICTIM-created" ]
}

@test "trust: a root-owned store with a user-owned or group-writable entry is refused" {
    R=$T/rootstore
    CUDAENV_ROOT=$R fx_installed 11.7.0 >/dev/null
    run env CUDAENV_ROOT="$R" "$CUDAENV" list --names
    [ "$status" -eq 0 ]
    mkdir -p "$R/cache"
    chown "$ATK" "$R/cache"
    run --separate-stderr env CUDAENV_ROOT="$R" "$CUDAENV" list --names
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$R/cache is owned by uid"* ]]
    chown root "$R/cache"
    chmod g+w "$R/versions/11.7.0"
    run --separate-stderr env CUDAENV_ROOT="$R" "$CUDAENV" list --names
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$R/versions/11.7.0 is writable by group or others"* ]]
    chmod g-w "$R/versions/11.7.0"
    # a parent directory a user can write (not sticky) is just as bad
    chmod o+w "$T"
    run --separate-stderr env CUDAENV_ROOT="$R" "$CUDAENV" list --names
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$T is writable by group or others"* ]]
    chmod o-w "$T"
}

@test "trust: a symlink inside a root store is never followed by root's writes (.lock)" {
    R=$T/rootstore
    mkdir -p "$R"
    ln -s "$VICTIM-created" "$R/.lock"
    run --separate-stderr env CUDAENV_ROOT="$R" "$CUDAENV" uninstall 11.7.0
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$R/.lock is a symlink"* ]]
    [ ! -e "$VICTIM-created" ]
}

@test "trust: a store not created yet is judged by its nearest existing parent, however deep the missing part" {
    # the attacker's directory with nothing under it yet: root would create the store there
    run --separate-stderr timeout 20 env CUDAENV_ROOT="$U/not/yet/store" "$CUDAENV" list
    [ "$status" -eq 6 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"$U is owned by uid $(id -u "$ATK"), not root"* ]]
    # root's directory: the store is created, nothing refused
    run --separate-stderr timeout 20 env CUDAENV_ROOT="$T/safe/a/b/store" "$CUDAENV" list
    [ "$status" -eq 0 ] || { echo "$status $stderr"; false; }
}

@test "trust: CUDAENV_SYSROOT as root: missing is exit 3 naming it; a user's or a symlinked directory root writes under is exit 6 naming it" {
    run --separate-stderr env CUDAENV_SYSROOT="$T/nosuch" "$CUDAENV" list
    [ "$status" -eq 3 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"cannot resolve CUDAENV_SYSROOT $T/nosuch: No such file or directory"* ]]
    # a sysroot whose ld.so.conf.d a user can write, then one whose etc is the host's
    mkdir -p "$T/img/etc/ld.so.conf.d" "$T/img2"
    chown "$ATK" "$T/img/etc/ld.so.conf.d"
    run --separate-stderr env CUDAENV_SYSROOT="$T/img" "$CUDAENV" list
    [ "$status" -eq 6 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"$T/img/etc/ld.so.conf.d is owned by uid $(id -u "$ATK")"* ]] || { echo "$stderr"; false; }
    ln -s /etc "$T/img2/etc"
    run --separate-stderr env CUDAENV_SYSROOT="$T/img2" "$CUDAENV" list
    [ "$status" -eq 6 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"$T/img2/etc is "*symlink* ]] || { echo "$stderr"; false; }
    # fixed: root's again, and the image given through a link is used resolved
    chown root "$T/img/etc/ld.so.conf.d" && ln -s "$T/img" "$T/img-link"
    run --separate-stderr env CUDAENV_SYSROOT="$T/img-link" "$CUDAENV" list
    [ "$status" -eq 0 ] || { echo "$status $stderr"; false; }
}

@test "trust: a store its user cannot open is exit 6 (permission); a directory at .lock is exit 1 naming it, not called a symlink" {
    chmod 000 "$U"
    run --separate-stderr as_atk env CUDAENV_ROOT="$U" CUDAENV_SYSROOT= "$CUDAENV" uninstall 11.7.0
    [ "$status" -eq 6 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"cannot open the store $U: Permission denied"* ]]
    chmod 755 "$U"
    R=$T/rootstore
    mkdir -p "$R/.lock"
    run --separate-stderr env CUDAENV_ROOT="$R" "$CUDAENV" uninstall 11.7.0
    [ "$status" -eq 1 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"cannot open $R/.lock: Is a directory"* && "$stderr" != *symlink* ]] || { echo "$stderr"; false; }
}

@test "trust: CUDAENV_ROOT must be absolute; the quoted-tilde mistake is named" {
    mkdir -p "$T/repo/~/.cudaenv/versions"
    cd "$T/repo"
    run --separate-stderr env CUDAENV_ROOT='~/.cudaenv' "$CUDAENV" current
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"CUDAENV_ROOT='~/.cudaenv' is not an absolute path (a quoted ~ is not expanded by the shell)"* ]]
    run --separate-stderr env CUDAENV_ROOT='rel/store' "$CUDAENV" env --shell bash
    [ "$status" -eq 2 ]
    [ -z "$output" ]
}

# ---- the install path: a planted cache entry and a planted log symlink ----

install_fixture() {
    # readable by the attacker too: the mirror's manifest and runfile in $T
    cp "$MIRROR/manifest.json" "$T/manifest.json"
    export CUDAENV_MANIFEST=$T/manifest.json
    SHA=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cuda"]["11.8.0"]["runfile"]["linux-x86_64"]["sha256"])' "$CUDAENV_MANIFEST")
    RUN=$T/runfile.run
    cp "$MIRROR"/compute/cuda/11.8.0/local_installers/*.run "$RUN"
}

@test "trust: a same-size script planted as cache/<sha256> is never run as root" {
    install_fixture
    mkdir -p "$U/cache"
    size=$(stat -c %s "$RUN")
    { printf '#!/bin/sh\ntouch %s-pwned\nexit 1\n' "$VICTIM"; head -c "$size" /dev/zero | tr '\0' '#'; } | head -c "$size" > "$U/cache/$SHA"
    chown -R "$ATK" "$U"
    run --separate-stderr env CUDAENV_ROOT="$U" "$CUDAENV" install --offline --no-cudnn 11.8.0
    [ "$status" -eq 6 ]
    [ ! -e "$VICTIM-pwned" ]
}

@test "trust: logs/<file> -> /etc/shadow-like victim: root's install never writes through it" {
    install_fixture
    echo 'root:secret' > "$VICTIM"
    chmod 600 "$VICTIM"
    mkdir -p "$U/cache" "$U/logs"
    cp "$RUN" "$U/cache/$SHA"
    ln -s "$VICTIM" "$U/logs/cuda-11.8.0-runfile.log"
    chown -R -h "$ATK" "$U"
    run --separate-stderr env CUDAENV_ROOT="$U" "$CUDAENV" install --offline --no-cudnn 11.8.0
    [ "$status" -ne 0 ]
    [ "$(cat "$VICTIM")" = 'root:secret' ]
}

@test "trust: even in its own store, a planted log symlink is not written through (O_NOFOLLOW)" {
    install_fixture
    mkdir -p "$U/cache"
    cp "$RUN" "$U/cache/$SHA"
    echo 'mine' > "$VICTIM"
    chown "$ATK" "$VICTIM"
    mkdir -p "$U/logs"
    ln -s "$VICTIM" "$U/logs/cuda-11.8.0-runfile.log"
    chown -R -h "$ATK" "$U"
    run as_atk env CUDAENV_ROOT="$U" CUDAENV_MANIFEST="$CUDAENV_MANIFEST" "$CUDAENV" install --offline --no-cudnn 11.8.0
    [ "$status" -ne 0 ]
    [[ "$output" == *"runfile.log"* ]] || { echo "$output"; false; }
    [ "$(cat "$VICTIM")" = mine ]
}
