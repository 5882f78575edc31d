#!/usr/bin/env bats
# The system switch's guards, pinned from what a user sees (issues 21, 24):
# --rollback, the repair of an interrupted switch and the restore walk their
# target exactly as a direct switch walks its toolchain; the names cudaenv
# keeps (the lock, the intent, the spares, cudaenv.conf) are never written
# through when something else sits there, and say what to remove; a file
# hard-linked to one of them is never rewritten; system.json stays within
# what its reader takes; the order of the durable writes (strace).  In a
# CUDAENV_SYSROOT image; this machine's /usr/local/cuda and ld.so files are
# checked untouched after every test.
load ../lib/common
load ../lib/sysroot
bats_require_minimum_version 1.5.0

setup() {
    sysroot_setup
}

teardown() { sysroot_teardown; }

@test "the machine guard compares only what it recorded: a test skipped before recording reports no damage" {
    # what a test that skipped before sysguard_record leaves: nothing recorded
    run bash -c 'source "$1/tests/lib/sysroot.bash"; common_teardown() { :; }
        unset REAL_RECORDED REAL_CUDA REAL_CACHE; sysroot_teardown' _ "$REPO"
    [ "$status" -eq 0 ] && [ -z "$output" ] || { echo "$output"; false; }
    # recorded values that differ from the machine's: the guard fails and says what
    run bash -c 'source "$1/tests/lib/sysroot.bash"; common_teardown() { :; }
        sysguard_record; REAL_CUDA=/elsewhere REAL_CACHE=x; sysroot_teardown' _ "$REPO"
    [ "$status" -eq 1 ] && [[ "$output" == *"FATAL: /usr/local/cuda changed"* && "$output" == *"FATAL: ld.so.cache changed"* ]] || { echo "$output"; false; }
    # recorded just now: no damage, nothing said
    run bash -c 'source "$1/tests/lib/sysroot.bash"; common_teardown() { :; }
        sysguard_record; sysroot_teardown' _ "$REPO"
    [ "$status" -eq 0 ] && [ -z "$output" ] || { echo "$output"; false; }
}

link() { readlink "$S/usr/local/cuda"; }
conf() { grep -v '^#' "$S/etc/ld.so.conf.d/cudaenv.conf"; }
J=/etc/cudaenv/system.json
pending() { [ -f "$S$J.pending" ] && [ ! -L "$S$J.pending" ] && [ "$(gen_of "$S$J.pending")" -gt "$(gen_of "$S$J")" ]; }
# a history entry of system.json (0 = newest) re-pointed at target and lib
set_hist() {
    python3 - "$S$J" "$1" "$2" <<'PY'
import json, sys
p, t, l = sys.argv[1:]
d = json.load(open(p))
d["history"][0]["link_target"], d["history"][0]["lib_dir"] = t, l
json.dump(d, open(p, "w"), indent="\t")
PY
}

# ---- issue 21: one walk for the switch, the rollback, the repair, the restore

@test "rollback walks its target as a switch does: a user's bin/nvcc, bin/ o+w, libcudart 0666, lib64 o+w: exit 6 naming the path, nothing changed" {
    "$CUDAENV" -q global 11.8 --system
    "$CUDAENV" -q global 11.7 --system
    refused() {
        run --separate-stderr "$CUDAENV" global --rollback
        [ "$status" -eq 6 ] || { echo "status $status: $stderr"; return 1; }
        [[ "$stderr" == *"$1"* ]] || { echo "$stderr"; return 1; }
        [ "$(link)" = "$I117" ] && [ "$(conf)" = "$I117/lib64" ] && ! pending
    }
    chown 65534 "$P118/bin/nvcc"
    refused "$P118/bin/nvcc is owned by uid 65534"
    chown 0 "$P118/bin/nvcc" && chmod o+w "$P118/bin"
    refused "$P118/bin is writable by group or others"
    chmod o-w "$P118/bin" && chmod 0666 "$P118/lib64/libcudart.so.11.8.89"
    refused "$P118/lib64/libcudart.so.11.8.89 is writable by group or others"
    chmod 0644 "$P118/lib64/libcudart.so.11.8.89" && chmod o+w "$P118/lib64"
    refused "$P118/lib64 is writable by group or others"
    chmod o-w "$P118/lib64"
    run "$CUDAENV" -q global --rollback
    [ "$status" -eq 0 ] && [ "$(link)" = "$I118" ] && [ "$(conf)" = "$I118/lib64" ]
}

@test "rollback to a history target in a user's directory, or through a user's symlink: exit 6 naming it" {
    "$CUDAENV" -q global 11.8 --system
    "$CUDAENV" -q global 11.7 --system
    mkdir -p "$T/u" && cp -a "$P118" "$T/u/tc" && chown 65534 "$T/u"
    set_hist "$T/u/tc" "$T/u/tc/lib64"
    run --separate-stderr "$CUDAENV" global --rollback
    [ "$status" -eq 6 ] && [[ "$stderr" == *"$T/u is owned by uid 65534"* ]] || { echo "$status $stderr"; false; }
    [ "$(link)" = "$I117" ]
    # a root-owned tree, reached through a symlink a user owns (re-pointable)
    ln -s "$P118" "$T/ulink" && chown -h 65534 "$T/ulink"
    set_hist "$T/ulink" "$T/ulink/lib64"
    run --separate-stderr "$CUDAENV" global --rollback
    [ "$status" -eq 6 ] && [[ "$stderr" == *"$T/ulink is a symlink not owned by root"* ]] || { echo "$status $stderr"; false; }
    [ "$(link)" = "$I117" ] && [ "$(conf)" = "$I117/lib64" ]
}

@test "repair: an interrupted switch whose target and what it replaced both became unsafe changes nothing (exit 6 naming the path)" {
    "$CUDAENV" -q global 11.8 --system
    run seams env CUDAENV_TEST_CRASH_AT=intent "$CUDAENV" -q global 11.7 --system
    [ "$status" -eq 137 ] && pending
    chown 65534 "$P117/bin/nvcc" "$P118/bin/nvcc"
    run --separate-stderr "$CUDAENV" global --rollback
    [ "$status" -eq 6 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"$P118/bin/nvcc is owned by uid 65534"* ]]
    [ "$(link)" = "$I118" ] && [ "$(conf)" = "$I118/lib64" ] && pending
    # fixed: the next run rolls the switch back to 11.8 (11.7 is still unsafe)
    chown 0 "$P118/bin/nvcc"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 0 ] && [[ "$stderr" == *"rolling back"* ]] && ! pending
}

# the machine's own CUDA 12.1 at /usr/local/cuda-12.1, /usr/local/cuda -> it
own_cuda() {
    fx_toolkit "$S/usr/local/cuda-12.1" 12.1.0 >/dev/null
    ln -s /usr/local/cuda-12.1 "$S/usr/local/cuda"
}

@test "restore walks the machine's own CUDA as a switch does: a user's file there is refused (exit 6), an interrupted restore rolled back" {
    own_cuda
    "$CUDAENV" -q global 11.8 --system
    chown 65534 "$S/usr/local/cuda-12.1/bin/nvcc"
    run --separate-stderr "$CUDAENV" global system --system
    [ "$status" -eq 6 ] && [[ "$stderr" == *"$S/usr/local/cuda-12.1/bin/nvcc is owned by uid 65534"* ]] || { echo "$status $stderr"; false; }
    [ "$(link)" = "$I118" ] && ! pending || false
    chown 0 "$S/usr/local/cuda-12.1/bin/nvcc"
    run seams env CUDAENV_TEST_CRASH_AT=intent "$CUDAENV" -q global system --system
    [ "$status" -eq 137 ] && pending
    chown 65534 "$S/usr/local/cuda-12.1/bin/nvcc"
    run --separate-stderr "$CUDAENV" global 11.7 --system
    [ "$status" -eq 0 ] && [[ "$stderr" == *"rolling back"* ]] || { echo "$status $stderr"; false; }
    [ "$(link)" = "$I117" ]
    chown 0 "$S/usr/local/cuda-12.1/bin/nvcc"
    "$CUDAENV" -q global system --system
    [ "$(link)" = /usr/local/cuda-12.1 ] && [ ! -e "$S/etc/ld.so.conf.d/cudaenv.conf" ]
}

# ---- issue 21: the names cudaenv keeps -------------------------------------

# a switch to $1 fails (exit 1) naming $2 as $3 and saying to remove it; nothing changed
wedged() {
    local before
    before=$(link || true)
    run --separate-stderr timeout 20 "$CUDAENV" global "$1" --system
    [ "$status" -eq 1 ] || { echo "status $status: $stderr"; return 1; }
    [[ "$stderr" == *"$2 is $3, not the file cudaenv keeps there"*"sudo rm -r '$2'"* ]] || { echo "$stderr"; return 1; }
    [ "$(link || true)" = "$before" ] || { echo "link changed: $(link)"; return 1; }
    ! pending || { echo "an intent left"; return 1; }
}

@test "a directory, FIFO or symlink at the intent's, a spare's, the lock's or cudaenv.conf's name: exit 1 naming what to remove, never written through" {
    "$CUDAENV" -q global 11.8 --system
    echo precious > "$T/victim"
    local p=$S$J.pending c=$S/etc/ld.so.conf.d/.cudaenv.conf.spare l=$S/usr/local/.cuda.cudaenv-spare
    local k=$S/etc/cudaenv/lock f=$S/etc/ld.so.conf.d/cudaenv.conf
    rm -f "$p" "$c" "$l"
    mkdir "$p"
    wedged 11.7 "$p" "a directory"
    rmdir "$p" && mkfifo "$p"
    wedged 11.7 "$p" "a FIFO"
    rm "$p" && ln -s "$T/victim" "$p"
    wedged 11.7 "$p" "a symlink"
    rm "$p"
    [ "$(cat "$T/victim")" = precious ]
    mkdir "$c"
    wedged 11.7 "$c" "a directory"
    rmdir "$c" && mkfifo "$c"
    wedged 11.7 "$c" "a FIFO"
    rm "$c" && ln -s "$T/victim" "$c"
    wedged 11.7 "$c" "a symlink"
    rm "$c"
    [ "$(cat "$T/victim")" = precious ]
    mkdir "$l"
    wedged 11.7 "$l" "a directory"
    rmdir "$l"
    rm "$k" && ln -s "$T/made-by-root" "$k"
    wedged 11.7 "$k" "a symlink"
    [ ! -e "$T/made-by-root" ] && [ ! -L "$T/made-by-root" ] || false
    rm "$k" && mkfifo "$k"
    wedged 11.7 "$k" "a FIFO"
    rm "$k" && mv "$f" "$T/conf.saved" && mkdir "$f"
    wedged 11.7 "$f" "a directory"
    rmdir "$f" && mv "$T/conf.saved" "$f"
    [ -z "$(ls "$S/etc/cudaenv" | grep -v -x -e lock -e system.json)" ]
    # all removed: the switch goes through
    run --separate-stderr "$CUDAENV" -q global 11.7 --system
    [ "$status" -eq 0 ] && [ "$(link)" = "$I117" ] && [ "$(conf)" = "$I117/lib64" ] || { echo "$status $stderr"; ls -la "$S/etc/cudaenv" "$S/etc/ld.so.conf.d"; false; }
}

@test "a symlink at the intent's name to a valid newer record is no interrupted switch: never completed, exit 1 naming it" {
    "$CUDAENV" -q global 11.8 --system
    local p=$S$J.pending g
    g=$(gen_of "$S$J")
    # the switch to 11.7, one generation ahead: an intent, were it a file of its own
    sed -e "s|\"gen\":[[:space:]]*$g|\"gen\": $((g + 1))|" -e "s|$I118|$I117|g" "$S$J" > "$T/intent.json"
    [ "$(gen_of "$T/intent.json")" -eq $((g + 1)) ]
    rm -f "$p" && ln -s "$T/intent.json" "$p"
    wedged 11.8 "$p" "a symlink"
    [[ "$stderr" != *interrupted* ]] || { echo "$stderr"; false; }
    [ "$(link)" = "$I118" ]
    run --separate-stderr "$CUDAENV" list
    [[ "$output$stderr" != *interrupted* ]] || { echo "$output$stderr"; false; }
}

@test "a file hard-linked to the conf's spare, the intent or the record before is never rewritten (a new file takes the name)" {
    "$CUDAENV" -q global 11.8 --system
    "$CUDAENV" -q global 11.7 --system
    local d=$S/etc/ld.so.conf.d
    echo /keep/me > "$d/zz-other.conf"
    rm "$d/.cudaenv.conf.spare" && ln "$d/zz-other.conf" "$d/.cudaenv.conf.spare"
    cp "$S$J.pending" "$T/pending.copy" && ln "$S$J.pending" "$S/etc/kept-pending.json"
    cp "$S$J" "$T/record.copy" && ln "$S$J" "$S/etc/kept-record.json"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$(cat "$d/zz-other.conf")" = /keep/me ]
    cmp "$T/pending.copy" "$S/etc/kept-pending.json"
    # the record before (now the pending file) is not marked in place either
    cmp "$T/record.copy" "$S/etc/kept-record.json"
    [ "$(link)" = "$I118" ] && [ "$(conf)" = "$I118/lib64" ] && ! pending || false
    [ "$(stat -c %h "$d/.cudaenv.conf.spare")" -eq 1 ]
    "$CUDAENV" -q global 11.7 --system
    [ "$(link)" = "$I117" ] && [ "$(cat "$d/zz-other.conf")" = /keep/me ]
}

@test "system.json stays within its reader's 64 KiB: a 4000-byte store path and 20 switches (the oldest history goes), rollback still works" {
    local long=$S/opt/c i
    while [ ${#long} -lt 4000 ]; do long=$long/$(printf 'd%.0s' $(seq 200)); done
    long=${long:0:4000}
    export CUDAENV_ROOT=$long CUDAENV_LDCONFIG=none
    mkdir -p "$long"
    A=$(fx_installed 11.8.0) B=$(fx_installed 11.7.0)
    chmod -R go-w "$S/opt"
    for i in $(seq 10); do
        run --separate-stderr "$CUDAENV" -q global 11.8.0 --system
        [ "$status" -eq 0 ] || { echo "switch $i: $stderr"; false; }
        run --separate-stderr "$CUDAENV" -q global 11.7 --system
        [ "$status" -eq 0 ] || { echo "switch $i: $stderr"; false; }
    done
    local size n
    size=$(stat -c %s "$S$J") n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["history"]))' "$S$J")
    echo "# system.json: $size bytes, $n history entries of ~8 KiB" >&3
    [ "$size" -le 65536 ] && [ "$n" -ge 2 ] && [ "$n" -lt 16 ] || false
    [ "$(link)" = "${B#"$S"}" ]
    run "$CUDAENV" global --system
    [ "$output" = 11.7.0 ]
    "$CUDAENV" -q global --rollback
    [ "$(link)" = "${A#"$S"}" ]
}

@test "global VERSION with a relative HOME (HOME=.) beside a shared store: exit 1 naming HOME, nothing written in the cwd" {
    chmod 0755 "$T"
    mkdir -p "$T/cwd" && chown 65534 "$T/cwd"
    # the build tree may be closed to other users (a 0700 scratch copy): a copy they can run
    cp "$CUDAENV" "$T/cudaenv" && CUDAENV=$T/cudaenv
    run --separate-stderr bash -c 'cd "$1" && exec setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_CONFIG_HOME HOME=. "$2" global 11.7' _ "$T/cwd" "$CUDAENV"
    [ "$status" -eq 1 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"HOME (.) is not an absolute path"* ]]
    [ -z "$(ls -A "$T/cwd")" ]
    # an absolute XDG_CONFIG_HOME still works
    run bash -c 'cd "$1" && exec setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=. XDG_CONFIG_HOME="$1/cfg" "$2" global 11.7' _ "$T/cwd" "$CUDAENV"
    [ "$status" -eq 0 ] && [ "$(cat "$T/cwd/cfg/cudaenv/global")" = 11.7.0 ]
}

# ---- issue 24: what the guards keep, seen from outside ---------------------

# the line number in strace log $1 of the first line matching the ERE $2 (0: none)
at() { grep -n -E "$2" "$1" | head -1 | cut -d: -f1 | grep . || echo 0; }
q() { printf '%s' "$1" | sed 's/[][\.*^$(){}+?|/]/\\&/g'; }

@test "the first switch makes its new /etc/cudaenv durable: the intent's directory and /etc fsync'ed before /usr/local/cuda changes (strace)" {
    command -v strace >/dev/null || skip "no strace"
    CUDAENV_LDCONFIG=none ASAN_OPTIONS=detect_leaks=0 strace -f -y -o "$T/st" \
        -e trace=fsync,fdatasync,rename,renameat,renameat2,mkdir,mkdirat "$CUDAENV" -q global 11.8 --system
    [ "$(link)" = "$I118" ]
    local mk ed e ln
    mk=$(at "$T/st" "mkdir(at)?\(.*\"$(q "$S/etc/cudaenv")\"")
    ed=$(at "$T/st" "fsync\([0-9]+<$(q "$S/etc/cudaenv")>")
    e=$(at "$T/st" "fsync\([0-9]+<$(q "$S/etc")>")
    ln=$(at "$T/st" "rename.*\"$(q "$S/usr/local/cuda")\"")
    echo "# first switch: mkdir at line $mk, fsync /etc at $e, /etc/cudaenv at $ed, the link at $ln" >&3
    [ "$mk" -gt 0 ] && [ "$ln" -gt 0 ] || { cat "$T/st"; false; }
    [ "$ed" -gt 0 ] && [ "$ed" -lt "$ln" ] || { echo "no fsync of $S/etc/cudaenv before the link"; cat "$T/st"; false; }
    [ "$e" -gt "$mk" ] && [ "$e" -lt "$ln" ] || { echo "no fsync of $S/etc before the link"; cat "$T/st"; false; }
}

@test "the directories of the link and the conf are fsync'ed after their exchanges and before the intent becomes system.json (strace)" {
    command -v strace >/dev/null || skip "no strace"
    "$CUDAENV" -q global 11.8 --system
    CUDAENV_LDCONFIG=none ASAN_OPTIONS=detect_leaks=0 strace -f -y -o "$T/st" \
        -e trace=fsync,fdatasync,rename,renameat,renameat2 "$CUDAENV" -q global 11.7 --system
    [ "$(link)" = "$I117" ] && [ "$(conf)" = "$I117/lib64" ] || false
    local l c dl dc done
    l=$(at "$T/st" "rename.*\"$(q "$S/usr/local/cuda")\"")
    c=$(at "$T/st" "rename.*\"$(q "$S/etc/ld.so.conf.d/cudaenv.conf")\"")
    dl=$(at "$T/st" "fsync\([0-9]+<$(q "$S/usr/local")>")
    dc=$(at "$T/st" "fsync\([0-9]+<$(q "$S/etc/ld.so.conf.d")>")
    done=$(at "$T/st" "rename.*\"$(q "$S$J.pending")\".*\"$(q "$S$J")\"")
    echo "# link exchanged at line $l, conf $c; fsync /usr/local $dl, ld.so.conf.d $dc; intent -> system.json $done" >&3
    [ "$l" -gt 0 ] && [ "$c" -gt 0 ] && [ "$done" -gt 0 ] || { cat "$T/st"; false; }
    [ "$dl" -gt "$l" ] && [ "$dl" -lt "$done" ] || { cat "$T/st"; false; }
    [ "$dc" -gt "$c" ] && [ "$dc" -lt "$done" ] || { cat "$T/st"; false; }
}

@test "a repair that rolls an interrupted switch back leaves the history right: the next --rollback goes further back" {
    "$CUDAENV" -q global 11.8 --system
    run seams env CUDAENV_TEST_CRASH_AT=link "$CUDAENV" -q global 11.7 --system
    [ "$status" -eq 137 ] && [ "$(link)" = "$I117" ] || false
    rm -rf "$P117"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 0 ] && [[ "$stderr" == *"rolling back"* ]] && [ "$(link)" = "$I118" ] || false
    # before 11.8 there was nothing: that is where the rollback goes
    run --separate-stderr "$CUDAENV" global --rollback
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ ! -L "$S/usr/local/cuda" ] && [ ! -e "$S/etc/ld.so.conf.d/cudaenv.conf" ]
}

@test "a symlink in the toolchain owned by a user (even to a file of the tree): exit 6 naming it, nothing changed" {
    ln -s libcudart.so.11.8.89 "$P118/lib64/libextra.so"
    chown -h 65534 "$P118/lib64/libextra.so"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ] && [[ "$stderr" == *"$P118/lib64/libextra.so is a symlink not owned by root"* ]] || { echo "$status $stderr"; false; }
    [ ! -L "$S/usr/local/cuda" ] && [ ! -e "$S/etc/ld.so.conf.d/cudaenv.conf" ]
}

@test "11.8.0 -> 11.7.0 -> 11.8.0+cudnn (one target's path a prefix of the other's): link, conf and record name one toolchain each time" {
    P1180=$(fx_installed 11.8.0)
    chmod -R go-w "$T"
    local v t
    for v in 11.8.0 11.7.0 11.8.0+cudnn8.7.0.84 11.8.0 11.8.0+cudnn8.7.0.84; do
        run --separate-stderr "$CUDAENV" global "$v" --system
        [ "$status" -eq 0 ] || { echo "$v: $stderr"; false; }
        t=/opt/cudaenv/versions/$v
        [ "$(link)" = "$t" ] && [ "$(conf)" = "$t/lib64" ] || { echo "$v: link $(link), conf $(conf)"; false; }
        [ "$(ldconfig -r "$S" -p | awk '$1 == "libcudart.so.11.0" { print $NF; exit }')" = "$t/lib64/libcudart.so.11.0" ]
        python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); assert d["target"] == sys.argv[2] and d["name"] == sys.argv[3], d' \
            "$S$J" "$t" "$v"
    done
}

@test "a store of mode 1777 owned by root (any user can add versions/X): exit 6 naming the store, nothing changed" {
    chmod 1777 "$CUDAENV_ROOT"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ] && [[ "$stderr" == *"$CUDAENV_ROOT is writable by group or others"* ]] || { echo "$status $stderr"; false; }
    [ ! -L "$S/usr/local/cuda" ] && [ ! -e "$S$J" ]
}

@test "a switch killed while its ldconfig runs: the next switch waits for that ldconfig (it holds the lock), never runs its own beside it" {
    cat > "$T/ldc" <<SH
#!/bin/sh
echo "start \$\$" >> "$T/ldc.log"
if [ -e "$T/slow" ]; then rm -f "$T/slow"; sleep 2; fi
echo "end \$\$" >> "$T/ldc.log"
SH
    chmod 0755 "$T/ldc"
    export CUDAENV_LDCONFIG=$T/ldc
    "$CUDAENV" -q global 11.8 --system
    : > "$T/ldc.log" && touch "$T/slow"
    "$CUDAENV" -q global 11.7 --system & p=$!
    local i
    for i in $(seq 200); do grep -q start "$T/ldc.log" && break; sleep 0.05; done
    kill -9 $p; wait $p || true
    run --separate-stderr "$CUDAENV" global 11.7 --system
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    # the orphaned ldconfig ended before the next one started
    [ "$(awk '{ print $1 }' "$T/ldc.log" | head -2 | tr '\n' ' ')" = "start end " ] || { cat "$T/ldc.log"; false; }
    [ "$(link)" = "$I117" ] && ! pending
}

@test "resolved paths taken as such only where the rules proved them: a sysroot given through a root-owned link is switched inside its real directory; a versions/ entry that is a link (to a root-owned toolchain) is refused, nothing changed" {
    # the sysroot through a link: resolved once, the link and the record inside the real directory
    ln -s "$S" "$T/img-link"
    run --separate-stderr env CUDAENV_SYSROOT="$T/img-link" CUDAENV_ROOT="$T/img-link/opt/cudaenv" "$CUDAENV" -q global 11.8 --system
    [ "$status" -eq 0 ] || { echo "$status $stderr"; false; }
    [ "$(link)" = "$I118" ] && [ "$(conf)" = "$I118/lib64" ] || { echo "$(link) $(conf)"; false; }
    grep -q "\"target\":[[:space:]]*\"$I118\"" "$S$J" || { cat "$S$J"; false; }
    # a toolchain entry that is a link to a root-owned tree outside the store:
    # refused by the store's rule before anything is read through it
    mkdir -p "$T/elsewhere" && mv "$P117" "$T/elsewhere/11.7.0" && ln -s "$T/elsewhere/11.7.0" "$P117"
    run --separate-stderr "$CUDAENV" global 11.7 --system
    [ "$status" -eq 6 ] && [[ "$stderr" == *"$CUDAENV_ROOT/versions/11.7.0 is a symlink"* ]] || { echo "$status $stderr"; false; }
    [ "$(link)" = "$I118" ] && [ "$(conf)" = "$I118/lib64" ]
}
