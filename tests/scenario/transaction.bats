#!/usr/bin/env bats
# The system switch trusts only what root controls and is a transaction
# (issue 9 items 2, 3, 5), in a CUDAENV_SYSROOT image with the real
# `ldconfig -r`: user-writable parts anywhere in the toolchain, symlinks out
# of it and a user's symlink to the store are refused or resolved; kill -9 at
# every step and at random points is repaired by the next switch (doctor
# reports it first), also on the real paths in a mount namespace (sysns.sh);
# 40 uninstall/switch races never leave /usr/local/cuda dangling; uninstall
# in an image sees the image's system link.  This machine's /usr/local/cuda
# and ld.so files are checked untouched after every test.
load ../lib/common
load ../lib/sysroot
bats_require_minimum_version 1.5.0

setup() {
    sysroot_setup
}

teardown() { sysroot_teardown; }

# a string field of the record (cJSON_Print: one "key":<tab>"value" per line); no
# python per call, the campaign reads the record hundreds of times.  A switch
# under way is its intent, system.json.pending (the complete new record): its
# state is "pending" and its fields are the ones it will make true.  The
# pending file is an intent only when its "gen" is greater than system.json's
# (or neither has one: an older cudaenv's); else it is the record before
# system.json's, left there by the last switch's exchange
intent() {
    local f=$S/etc/cudaenv/system.json pg sg
    [ -e "$f.pending" ] || return 1
    pg=$(gen_of "$f.pending") sg=$(gen_of "$f")
    if [ -z "$pg" ]; then [ -z "$sg" ]; else [ "$pg" -gt "${sg:--1}" ]; fi
}
no_intent() { ! intent; }
rec() {
    local f=$S/etc/cudaenv/system.json
    if intent; then [ "$1" = state ] && { echo pending; return; }; f=$f.pending; fi
    sed -n 's/^[[:space:]]*"'"$1"'":[[:space:]]*"\(.*\)",\{0,1\}$/\1/p' "$f"
}

# link, conf, record and the loader cache name one toolchain, the record is done
consistent() {
    local t l
    [ "$(rec state)" = done ] || { echo "record: $(rec state)"; return 1; }
    t=$(rec target) l=$(rec lib)
    [ "$(readlink "$S/usr/local/cuda")" = "$t" ] || { echo "link $(readlink "$S/usr/local/cuda") != $t"; return 1; }
    [ "$(grep -v '^#' "$S/etc/ld.so.conf.d/cudaenv.conf")" = "$l" ] || { echo "conf != $l"; return 1; }
    [ "$(cache_lib libcudart.so.11.0)" = "$l/libcudart.so.11.0" ] || { echo "cache $(cache_lib libcudart.so.11.0) != $l"; return 1; }
    [ -d "$S$t" ] || { echo "dangling $t"; return 1; }
}

# an interrupted switch: `global --system` says so, the next switch to $1 completes it
completes_pending() {
    run --separate-stderr "$CUDAENV" global --system
    [[ "$stderr" == *"was interrupted"* ]]
    run --separate-stderr "$CUDAENV" global "$1" --system
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"was interrupted; completing it"* ]]
    consistent
}

# ---- item 2: only what root controls ----

@test "system trust: group/other-writable bin/, a user's nvcc or include/ anywhere in the tree: exit 6" {
    chmod o+w "$P118/bin"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$P118/bin is writable by group or others"* ]]
    chmod o-w "$P118/bin"
    chown 65534 "$P118/bin/nvcc"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$P118/bin/nvcc is owned by uid 65534"* ]]
    chown 0 "$P118/bin/nvcc"
    chown 65534 "$P118/include"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ]
    chown 0 "$P118/include"
    [ ! -e "$S/usr/local/cuda" ] && [ ! -e "$S/etc/ld.so.conf.d/cudaenv.conf" ] || false
    run "$CUDAENV" -q global 11.8 --system
    [ "$status" -eq 0 ]
}

@test "system trust: a library symlink out of the tree into a user's directory: exit 6" {
    mkdir -p "$T/userlib"
    mv "$P118/lib64/libcudart.so.11.8.89" "$T/userlib/"
    chown -R 65534 "$T/userlib"
    ln -s "$T/userlib/libcudart.so.11.8.89" "$P118/lib64/libcudart.so.11.8.89"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$T/userlib is owned by uid 65534"* ]]
    [ ! -e "$S/usr/local/cuda" ]
    # a lib64 that is itself a link to a user's directory
    rm "$P118/lib64/libcudart.so.11.8.89" && mv "$T/userlib/libcudart.so.11.8.89" "$P118/lib64/"
    mv "$P117/lib64" "$T/userlib/lib64" && ln -s "$T/userlib/lib64" "$P117/lib64"
    run --separate-stderr "$CUDAENV" global 11.7 --system
    [ "$status" -eq 6 ]
}

@test "system trust: soname chains inside lib64 are followed to their end (dangling, a loop, out to a user's file): exit 6" {
    # the walk follows a link to a name in its own directory itself (no
    # realpath): each hop must still be checked to its very end
    L=$P118/lib64
    ln -s libnothere.so.1 "$L/libgone.so.1" && ln -s libgone.so.1 "$L/libgone.so"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"libgone.so"*"points to nothing"* ]]
    [ ! -e "$S/usr/local/cuda" ]
    rm "$L/libgone.so.1" "$L/libgone.so"
    ln -s libloop.b "$L/libloop.a" && ln -s libloop.a "$L/libloop.b"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"libloop."*"points to nothing"* ]]
    rm "$L/libloop.a" "$L/libloop.b"
    mkdir -p "$T/userlib" && echo evil > "$T/userlib/libevil.so.1" && chown -R 65534 "$T/userlib"
    ln -s "$T/userlib/libevil.so.1" "$L/libevil.so.1" && ln -s libevil.so.1 "$L/libevil.so"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$T/userlib"*"owned by uid 65534"* ]]
    [ ! -e "$S/usr/local/cuda" ] && [ ! -e "$S/etc/ld.so.conf.d/cudaenv.conf" ] || false
    rm "$L/libevil.so.1" "$L/libevil.so"
    # a chain that ends in lib64 itself (its end not walked from / again): the
    # walk checks that entry as it checks every file of the tree
    echo mine > "$L/libmine.so.1.0" && chown 65534 "$L/libmine.so.1.0"
    ln -s libmine.so.1.0 "$L/libmine.so.1" && ln -s libmine.so.1 "$L/libmine.so"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"libmine.so.1.0 is owned by uid 65534"* ]]
    [ ! -e "$S/usr/local/cuda" ] && no_intent
    # all gone: the chains that stay inside the tree pass, also one whose
    # names get shorter hop by hop (each hop's name ends where it ends)
    rm "$L/libmine.so.1.0" "$L/libmine.so.1" "$L/libmine.so"
    echo ok > "$L/libz.so" && chmod 644 "$L/libz.so"
    ln -s libzz.so "$L/libzzzz.so.1.2.3" && ln -s libz.so "$L/libzz.so"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$(readlink "$S/usr/local/cuda")" = "$I118" ]
}

@test "system trust: a soname chain is followed once: each link of lib64 read once (strace), also one more link into a chain others share; a loop through a name already followed is still refused" {
    command -v strace >/dev/null || skip "no strace"
    L=$P118/lib64
    ln -s libcudnn.so.8 "$L/libcudnn_alias.so"
    nl=$(find "$L" -maxdepth 1 -type l | wc -l)
    ASAN_OPTIONS=detect_leaks=0 run --separate-stderr strace -f -o "$T/st" -e trace=readlink "$CUDAENV" -q global 11.8 --system
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    n=$(grep -c "readlink(\"$L/" "$T/st")
    echo "# lib64: $nl links, $n readlinks" >&3
    [ "$n" -eq "$nl" ] || { grep readlink "$T/st"; false; }
    [ "$(readlink "$S/usr/local/cuda")" = "$I118" ]
    # names that end well, then a loop through one of them: the loop is
    # followed to its end and refused, whatever was remembered before
    ln -s libcudnn_alias.so "$L/libloop.a" && rm "$L/libcudnn_alias.so" && ln -s libloop.a "$L/libcudnn_alias.so"
    run --separate-stderr "$CUDAENV" global 11.7 --system
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ] && [[ "$stderr" == *"points to nothing"* ]] || { echo "$status $stderr"; false; }
    [ "$(readlink "$S/usr/local/cuda")" = /opt/cudaenv/versions/11.7.0 ]
}

@test "system trust: a user's symlink to a good store: the resolved path is recorded and linked" {
    ln -s "$S/opt/cudaenv" "$S/opt/storelink"
    chown -h 65534 "$S/opt/storelink"
    run --separate-stderr env CUDAENV_ROOT="$S/opt/storelink" "$CUDAENV" global 11.8 --system
    [ "$status" -eq 0 ]
    [ "$(readlink "$S/usr/local/cuda")" = "$I118" ]
    [ "$(rec target)" = "$I118" ]
    [ "$(grep -v '^#' "$S/etc/ld.so.conf.d/cudaenv.conf")" = "$I118/lib64" ]
    # re-pointing the user's link changes nothing
    mkdir -p "$T/evil/versions/11.8.0+cudnn8.7.0.84"
    ln -sfn "$T/evil" "$S/opt/storelink"
    [ "$(readlink "$S/usr/local/cuda")" = "$I118" ]
    [ "$(grep -v '^#' "$S/etc/ld.so.conf.d/cudaenv.conf")" = "$I118/lib64" ]
}

# ---- item 3: a transaction that survives kill -9 ----

@test "kill -9 after each step: doctor reports it, the next switch completes it, ldconfig agrees" {
    "$CUDAENV" -q global 11.8 --system
    consistent
    for step in trust intent link conf ldconfig; do
        run seams env CUDAENV_TEST_CRASH_AT=$step "$CUDAENV" -q global 11.7 --system
        [ "$status" -eq 137 ]
        [ "$(rec state)" = pending ]
        run "$CUDAENV" doctor --json
        [[ "$output" == *'"env.system-switch-interrupted"'* ]] || { echo "$output"; false; }
        completes_pending 11.8
        [ "$(rec target)" = "$I118" ] && [ "$(rec prev_target)" = "$I117" ] || false
    done
    # a rollback killed half-way is completed by the next rollback
    run seams env CUDAENV_TEST_CRASH_AT=conf "$CUDAENV" -q global --rollback
    [ "$status" -eq 137 ]
    "$CUDAENV" -q global --rollback
    consistent
}

@test "a run killed between staging and renaming: the repair removes its temp files (NAME.tmp-XXXXXX), nobody else's" {
    "$CUDAENV" -q global 11.8 --system
    run seams env CUDAENV_TEST_CRASH_AT=intent "$CUDAENV" -q global 11.7 --system
    [ "$status" -eq 137 ]
    [ "$(rec state)" = pending ]
    # what a kill between mkstemp and rename leaves: one per staged file
    local e=$S/etc/cudaenv c=$S/etc/ld.so.conf.d
    echo stale > "$e/system.json.tmp-a1B2c3"
    echo stale > "$e/system.json.pending.tmp-Zz9yX8"
    echo stale > "$c/cudaenv.conf.tmp-Qw5eR6"
    # not of that shape: an admin's files, kept
    echo mine > "$c/cudaenv.conf.tmp-longer1" && echo mine > "$c/cudaenv.conf.tmp-short"
    echo mine > "$c/other.conf.tmp-Qw5eR6"
    completes_pending 11.8
    [ ! -e "$e/system.json.tmp-a1B2c3" ] && [ ! -e "$e/system.json.pending.tmp-Zz9yX8" ] || false
    [ ! -e "$c/cudaenv.conf.tmp-Qw5eR6" ]
    [ "$(cat "$c/cudaenv.conf.tmp-longer1" "$c/cudaenv.conf.tmp-short" "$c/other.conf.tmp-Qw5eR6")" = "$(printf 'mine\nmine\nmine')" ]
    [ -z "$(ls "$e" | grep tmp)" ]
}

@test "the record is written once: an intent cut short (not JSON) is ignored and written over; an older cudaenv's pending system.json is completed" {
    "$CUDAENV" -q global 11.8 --system
    consistent
    # a crash while the intent was being written (before it was durable): nothing changed
    printf '{"schema":1,"sta' > "$S/etc/cudaenv/system.json.pending"
    run --separate-stderr "$CUDAENV" global --system
    [ "$status" -eq 0 ] && [ "$output" = 11.8.0+cudnn8.7.0.84 ] || false
    [[ "$stderr" != *"interrupted"* ]]
    # the same cut short after its "gen" (the greater one): still no intent
    sed "s/^\([[:space:]]*\"gen\":[[:space:]]*\)[0-9]*/\1$(( $(gen_of "$S/etc/cudaenv/system.json") + 1 ))/" \
        "$S/etc/cudaenv/system.json" | head -c 200 > "$S/etc/cudaenv/system.json.pending"
    grep -q '"gen"' "$S/etc/cudaenv/system.json.pending"
    run --separate-stderr "$CUDAENV" global --system
    [ "$status" -eq 0 ] && [ "$output" = 11.8.0+cudnn8.7.0.84 ] || false
    [[ "$stderr" != *"interrupted"* ]]
    run "$CUDAENV" doctor --json
    [[ "$output" != *'"env.system-switch-interrupted"'* ]]
    run --separate-stderr "$CUDAENV" global 11.7 --system
    [ "$status" -eq 0 ] && [[ "$stderr" != *"interrupted"* ]] || false
    no_intent
    consistent
    [ "$(rec target)" = "$I117" ] && [ "$(rec prev_target)" = "$I118" ] || false
    # an intent in system.json itself ("state": "pending", as cudaenv wrote it before issue 13)
    sed -i 's/"state":\t"done"/"state":\t"pending"/' "$S/etc/cudaenv/system.json"
    grep -q '"state":.*"pending"' "$S/etc/cudaenv/system.json"
    completes_pending 11.8
    [ -z "$(ls "$S/etc/cudaenv" | grep -v -x -e lock -e system.json -e system.json.pending)" ]
    [ -z "$(for d in "$S/etc/ld.so.conf.d" "$S/usr/local"; do ls -A "$d"; done | grep -e tmp)" ]
}

@test "the intent is written over the record before in place, never truncated to 0 first (a freed block is a synchronous discard), and cut to its length when that record was longer" {
    command -v strace >/dev/null || skip "no strace"
    "$CUDAENV" -q global 11.8 --system
    "$CUDAENV" -q global 11.7 --system
    # the record before (system.json.pending, of a lower gen), longer than the next record
    local p=$S/etc/cudaenv/system.json.pending
    head -c 6000 /dev/zero | tr '\0' x >> "$p"
    # quiet, its status not the test's (under check-asan LeakSanitizer refuses ptrace): the trace and the files decide
    strace -f -qq -e trace=ftruncate,truncate,write,pwrite64 -o "$T/st" "$CUDAENV" -q global 11.8 --system >/dev/null 2>&1 || true
    [ "$(readlink "$S/usr/local/cuda")" = "$I118" ]
    run grep -E 'truncate\(.*, 0\)' "$T/st"
    [ "$status" -eq 1 ] || { echo "truncated to 0: $output"; false; }
    grep -qE 'ftruncate\([0-9]+, [1-9][0-9]*\)' "$T/st" || { cat "$T/st"; false; }
    # the intent, now system.json, is exactly the record: strict JSON, no byte of the longer one after it
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["gen"] > 0 and r["state"] == "done"' "$S/etc/cudaenv/system.json"
    consistent
    "$CUDAENV" -q global 11.7 --system
    consistent
}

@test "one switch: no new file when switching back (intent written in place, link and conf exchanged with their spares), 3 fsyncs with no ldconfig (the intent, then the two changed directories); an unchanged spare is not synced; restore removes the spares and the old record" {
    command -v strace >/dev/null || skip "no strace"
    "$CUDAENV" -q global 11.8 --system
    "$CUDAENV" -q global 11.7 --system
    # back to 11.8: the spares hold its link and its conf already, the pending
    # file the record before (11.8's, a lower gen)
    [ "$(gen_of "$S/etc/cudaenv/system.json.pending")" -lt "$(gen_of "$S/etc/cudaenv/system.json")" ]
    CUDAENV_LDCONFIG=none ASAN_OPTIONS=detect_leaks=0 strace -f -y -o "$T/st" \
        -e trace=openat,open,symlink,symlinkat,fsync,fdatasync,rename,renameat,renameat2 \
        "$CUDAENV" -q global 11.8 --system
    [ "$(readlink "$S/usr/local/cuda")" = "$(rec target)" ] && [ "$(rec state)" = done ] && [ "$(rec target)" = "$I118" ] || false
    [ "$(grep -v '^#' "$S/etc/ld.so.conf.d/cudaenv.conf")" = "$I118/lib64" ]
    # (a --coverage build's .gcda files and its error file /dev/null are the profiler's: tools/mutate.sh's coverage map)
    created=$(grep -E 'O_CREAT|symlink(at)?\(' "$T/st" | grep -v -e '/lock"' -e '\.lock"' -e 'cudaenv.conf.spare"' -e '\.gcda"' -e '"/dev/null"' | grep -c .) || true
    syncs=$(grep -c -E '(fsync|fdatasync)\(' "$T/st")
    renames=$(grep -c -E 'rename(at2?)?\(' "$T/st")
    echo "# switching back (no ldconfig): $created file created, $syncs fsyncs, $renames renames/exchanges" >&3
    [ "$created" -eq 0 ] || { cat "$T/st"; false; }
    [ "$syncs" -eq 3 ] && [ "$renames" -eq 3 ] || { grep -E 'fsync|rename' "$T/st"; false; }
    # what each fsync makes durable: the intent's bytes (its name was there),
    # then the two directories whose entries the exchanges changed; not the
    # conf's spare, which held 11.8's text already, nor /etc/cudaenv
    for f in "$S/etc/cudaenv/system.json.pending" "$S/usr/local" "$S/etc/ld.so.conf.d"; do
        grep -q -F "<$f>" <(grep -E "fsync\([0-9]+<" "$T/st") || { echo "no fsync of $f"; grep fsync "$T/st"; false; }
    done
    for f in "$S/etc/ld.so.conf.d/.cudaenv.conf.spare" "$S/etc/cudaenv"; do
        ! grep -q -F "<$f>" <(grep -E "fsync\([0-9]+<" "$T/st") || { echo "fsync of $f"; grep fsync "$T/st"; false; }
    done
    [ -z "$(for d in "$S/etc/cudaenv" "$S/etc/ld.so.conf.d" "$S/usr/local"; do ls -A "$d"; done | grep -e tmp)" ]
    no_intent
    # a switch to a third text rewrites the spare: then it is synced with the intent
    sed -i 's/^\//#&/' "$S/etc/ld.so.conf.d/.cudaenv.conf.spare"
    CUDAENV_LDCONFIG=none ASAN_OPTIONS=detect_leaks=0 strace -f -y -o "$T/st2" -e trace=fsync,fdatasync \
        "$CUDAENV" -q global 11.7 --system
    grep -q -F "<$S/etc/ld.so.conf.d/.cudaenv.conf.spare>" "$T/st2" || { cat "$T/st2"; false; }
    [ "$(grep -c -E '(fsync|fdatasync)\(' "$T/st2")" -eq 4 ]
    "$CUDAENV" -q global 11.8 --system
    # the spares: dot names, the other toolchain's link and conf, seen by no glob of ldconfig's
    [ "$(readlink "$S/usr/local/.cuda.cudaenv-spare")" = "$I117" ]
    [ "$(grep -v '^#' "$S/etc/ld.so.conf.d/.cudaenv.conf.spare")" = "$I117/lib64" ]
    ldconfig -r "$S"
    [ "$(cache_lib libcudart.so.11.0)" = "$I118/lib64/libcudart.so.11.0" ]
    [ -z "$(ldconfig -r "$S" -p | grep "$I117")" ]
    "$CUDAENV" -q global system --system
    [ ! -e "$S/usr/local/.cuda.cudaenv-spare" ] && [ ! -L "$S/usr/local/.cuda.cudaenv-spare" ] || false
    [ ! -e "$S/etc/ld.so.conf.d/.cudaenv.conf.spare" ]
    [ ! -e "$S/etc/cudaenv/system.json.pending" ]
}

@test "a disk whose fsync fails (EIO): the switch fails at once naming the intent, nothing changed, no intent left" {
    cc -o "$T/sysfail" "$TESTS_DIR/doubles/sysfail.c"
    "$CUDAENV" -q global 11.8 --system
    consistent
    run timeout 30 "$T/sysfail" fsync EIO "$CUDAENV" -q global 11.7 --system
    [ "$status" -eq 1 ] || { echo "$output"; false; }   # 124: it kept retrying
    [[ "$output" == *"system.json.pending: Input/output error"* ]] || { echo "$output"; false; }
    no_intent
    consistent
    [ "$(rec target)" = "$I118" ]
    run --separate-stderr "$CUDAENV" global --system
    [ "$status" -eq 0 ] && [ "$output" = 11.8.0+cudnn8.7.0.84 ] && [[ "$stderr" != *interrupted* ]]
}

# the pending file after a switch's exchange is the record before system.json's
stale_is_ignored() {
    run --separate-stderr "$CUDAENV" global --system
    [ "$status" -eq 0 ] && [[ "$stderr" != *"interrupted"* ]] && [ "$output" = "$1" ] || false
    run "$CUDAENV" doctor --json
    [[ "$output" != *'"env.system-switch-interrupted"'* ]]
}

@test "records carry a gen: a pending file of a lower or equal gen is no intent (not reported, not completed); a greater gen, or none on either side (an older cudaenv's), is completed" {
    "$CUDAENV" -q global 11.8 --system
    "$CUDAENV" -q global 11.7 --system
    local f=$S/etc/cudaenv/system.json
    [ "$(gen_of "$f")" -eq 2 ] && [ "$(gen_of "$f.pending")" -eq 1 ] || false
    # one gen per switch also once the pending file holds the record before
    "$CUDAENV" -q global 11.8 --system
    [ "$(gen_of "$f")" -eq 3 ] && [ "$(gen_of "$f.pending")" -eq 2 ] || false
    "$CUDAENV" -q global 11.7 --system
    [ "$(gen_of "$f")" -eq 4 ] && [ "$(gen_of "$f.pending")" -eq 3 ] || false
    # ... and no JSON to an older cudaenv (which would take it for an intent
    # and re-apply 11.8): a '#' in place of its '{'; system.json is JSON
    [ "$(head -c 1 "$f.pending")" = '#' ] && [ "$(head -c 1 "$f")" = '{' ] || false
    ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$f.pending" 2>/dev/null || false
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$f"
    # the stale record before (11.8's, gen 1): neither reported nor completed
    stale_is_ignored 11.7.0
    "$CUDAENV" -q global 11.7 --system 2>"$T/err"
    ! grep -q interrupted "$T/err" || false
    consistent && [ "$(rec target)" = "$I117" ]
    # a copy of system.json itself (the same gen) is no intent either
    cp "$f" "$f.pending"
    stale_is_ignored 11.7.0
    # the record before, given a greater gen: an intent to 11.8, completed
    "$CUDAENV" -q global 11.8 --system && "$CUDAENV" -q global 11.7 --system
    sed -i -e '1s/^#/{/' -e "s/^\([[:space:]]*\"gen\":[[:space:]]*\)[0-9]*/\1$(( $(gen_of "$f") + 1 ))/" "$f.pending"
    [ "$(rec state)" = pending ] && [ "$(rec target)" = "$I118" ] || false
    run "$CUDAENV" doctor --json
    [[ "$output" == *'"env.system-switch-interrupted"'* ]]
    completes_pending 11.8
    [ "$(gen_of "$f.pending")" -lt "$(gen_of "$f")" ]
    # an older cudaenv's files (no gen anywhere): its pending file is its intent
    "$CUDAENV" -q global 11.7 --system
    sed -i -e '1s/^#/{/' -e '/"gen":/d' "$f" "$f.pending"
    [ "$(rec state)" = pending ] && [ "$(rec target)" = "$I118" ] || false
    completes_pending 11.8
    [ -n "$(gen_of "$f")" ]
    # an older cudaenv's record left as the pending file beside a system.json
    # with a gen (the first switch after an upgrade): no intent
    "$CUDAENV" -q global 11.7 --system
    sed -i '/"gen":/d' "$f.pending"
    stale_is_ignored 11.7.0
}

@test "a real directory put at /usr/local/cuda under an interrupted switch: the repair fails on it, never moves it to the spare's name" {
    "$CUDAENV" -q global 11.8 --system
    "$CUDAENV" -q global 11.7 --system
    run seams env CUDAENV_TEST_CRASH_AT=intent "$CUDAENV" -q global 11.8 --system
    [ "$status" -eq 137 ]
    rm "$S/usr/local/cuda" && mkdir -p "$S/usr/local/cuda/bin" && echo keep > "$S/usr/local/cuda/bin/marker"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -ne 0 ]
    [[ "$stderr" == *"$S/usr/local/cuda"* ]]
    [ "$(cat "$S/usr/local/cuda/bin/marker")" = keep ]
    [ -L "$S/usr/local/.cuda.cudaenv-spare" ] || [ ! -e "$S/usr/local/.cuda.cudaenv-spare" ]
}

@test "kill -9 during an uninstalled target's switch: rolled back to what it replaced" {
    "$CUDAENV" -q global 11.8 --system
    run seams env CUDAENV_TEST_CRASH_AT=link "$CUDAENV" -q global 11.7 --system
    [ "$status" -eq 137 ]
    rm -rf "$P117"     # the target is gone before the repair
    run --separate-stderr "$CUDAENV" global --rollback --dry-run
    "$CUDAENV" -q global 11.8 --system 2>"$T/err"
    grep -q "rolling back" "$T/err"
    consistent
    [ "$(rec target)" = "$I118" ]
}

@test "an older cudaenv's pending system.json to a refused target: its rollback, killed part-way, is what the next run completes (gen raised by one)" {
    "$CUDAENV" -q global 11.8 --system
    "$CUDAENV" -q global 11.7 --system
    local f=$S/etc/cudaenv/system.json g
    g=$(gen_of "$f")
    # 11.7's record as an older cudaenv left it: the intent in system.json
    # itself ("state": "pending"); the pending file is the stale record before
    sed -i 's/"state":\t"done"/"state":\t"pending"/' "$f"
    no_intent && [ "$(rec state)" = pending ] && [ "$(rec target)" = "$I117" ]
    chmod o+w "$P117/bin"     # its target refused: the repair rolls back to 11.8
    run seams env CUDAENV_TEST_CRASH_AT=link "$CUDAENV" -q global 11.8 --system
    [ "$status" -eq 137 ]
    # killed after the link: the repair's own intent (back to 11.8, one gen
    # above system.json's) is what is pending, not the older record's
    [ "$(readlink "$S/usr/local/cuda")" = "$I118" ]
    intent || { echo "no intent: pending gen $(gen_of "$f.pending"), system.json $(gen_of "$f")"; false; }
    [ "$(gen_of "$f.pending")" -eq $((g + 1)) ] && [ "$(rec target)" = "$I118" ] || false
    # 11.7 acceptable again: the rollback begun is still the one completed
    chmod o-w "$P117/bin"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 0 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"switch to $I118 was interrupted; completing it"* ]] || { echo "$stderr"; false; }
    consistent
    [ "$(rec target)" = "$I118" ] && [ "$(rec prev_target)" = "$I118" ] && [ "$(gen_of "$f")" -eq $((g + 2)) ] || false
    [ "$(head -c 1 "$f.pending")" = '#' ]
}

@test "the walk runs while the intent's writeback is under way: a tree it refuses leaves no intent and nothing changed; killed before the walk, the next run rolls back" {
    "$CUDAENV" -q global 11.8 --system
    consistent
    chmod o+w "$P117/bin"
    run --separate-stderr "$CUDAENV" global 11.7 --system
    [ "$status" -eq 6 ] && [[ "$stderr" == *"$P117/bin is writable by group or others"* ]] || false
    no_intent
    run "$CUDAENV" doctor --json
    [[ "$output" != *'"env.system-switch-interrupted"'* ]]
    consistent
    [ "$(rec target)" = "$I118" ]
    # killed after the intent was written, before the walk: an intent to a tree
    # the walk refuses; the next run walks it, refuses, and rolls back
    run seams env CUDAENV_TEST_CRASH_AT=trust "$CUDAENV" -q global 11.7 --system
    [ "$status" -eq 137 ]
    [ "$(rec state)" = pending ] && [ "$(rec target)" = "$I117" ] || false
    "$CUDAENV" -q global 11.8 --system 2>"$T/err"
    grep -q "rolling back" "$T/err"
    consistent
    [ "$(rec target)" = "$I118" ] && no_intent
    [ "$(readlink "$S/usr/local/cuda")" = "$I118" ]
    chmod o-w "$P117/bin"
    "$CUDAENV" -q global 11.7 --system
    consistent
    [ "$(rec target)" = "$I117" ]
}

@test "kill -9 campaign: 30 runs at random points, every one consistent or repaired by the next run" {
    "$CUDAENV" -q global 11.8 --system
    local i direct=0 repaired=0 steps=(trust intent link conf ldconfig) v
    for i in $(seq 30); do
        v=$([ $((RANDOM % 2)) -eq 0 ] && echo 11.7 || echo 11.8)
        if [ $((i % 2)) -eq 0 ]; then
            seams env CUDAENV_TEST_CRASH_AT=${steps[RANDOM % 5]} "$CUDAENV" -q global $v --system 2>/dev/null || true
        else
            "$CUDAENV" -q global $v --system 2>/dev/null &
            sleep "$(printf "0.%03d" $((RANDOM % 40)))"   # 0 to 39 ms: a switch takes ~20-40
            kill -9 $! 2>/dev/null || true
            wait $! 2>/dev/null || true
        fi
        if [ "$(rec state)" = done ] && consistent >/dev/null; then
            direct=$((direct + 1))
        else
            [ "$(rec state)" = pending ] || { echo "run $i: inconsistent and not pending"; consistent; false; }
            "$CUDAENV" -q global $v --system 2>/dev/null
            consistent || { echo "run $i: not repaired"; false; }
            repaired=$((repaired + 1))
        fi
    done
    echo "# kill -9 campaign: 30 runs, $direct consistent as left, $repaired repaired by the next run, 0 broken" >&3
    [ $((direct + repaired)) -eq 30 ]
}

@test "uninstall racing global --system, 40 runs: /usr/local/cuda never dangles" {
    "$CUDAENV" -q global 11.8 --system
    cp -a "$P117" "$T/tpl117"
    local i switched=0 removed=0
    for i in $(seq 40); do
        [ -d "$P117" ] || cp -a "$T/tpl117" "$P117"
        "$CUDAENV" -q global 11.8 --system 2>/dev/null
        "$CUDAENV" -q global 11.7 --system 2>/dev/null &
        a=$!
        "$CUDAENV" -q uninstall 11.7 2>/dev/null &
        b=$!
        wait $a || true
        wait $b || true
        consistent || { echo "run $i"; false; }
        if [ -d "$P117" ]; then switched=$((switched + 1)); else removed=$((removed + 1)); fi
    done
    echo "# uninstall/switch race: 40 runs, $switched switch first (uninstall refused), $removed uninstall first (switch refused), 0 dangling" >&3
}

# ---- item 5 ----

@test "uninstall in a CUDAENV_SYSROOT image refuses the image's system toolchain without --force" {
    "$CUDAENV" -q global 11.7 --system
    run --separate-stderr "$CUDAENV" uninstall 11.7
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"is the system-wide toolchain"* ]]
    [ -d "$P117" ]
    run "$CUDAENV" -q uninstall 11.7 --force
    [ "$status" -eq 0 ]
    [ ! -d "$P117" ]
}

@test "namespace: kill -9 campaign on the real /usr/local/cuda and ld.so.cache (overlays), 12 runs" {
    export CUDAENV_ROOT=$T/root
    unset CUDAENV_SYSROOT
    fx_installed 11.8.0 8.7.0.84 >/dev/null
    fx_installed 11.7.0 >/dev/null
    chmod -R go-w "$T"
    run --separate-stderr "$REPO/tests/lib/sysns.sh" "$T" -c '
        B=$0
        gen_of() { sed -n "s/^[[:space:]]*\"gen\":[[:space:]]*\([0-9]*\),\{0,1\}\$/\1/p" "$1" 2>/dev/null; }
        intent() {
            local f=/etc/cudaenv/system.json pg sg
            [ -e "$f.pending" ] || return 1
            pg=$(gen_of "$f.pending") sg=$(gen_of "$f")
            if [ -z "$pg" ]; then [ -z "$sg" ]; else [ "$pg" -gt "${sg:--1}" ]; fi
        }
        rec() {
            intent && [ "$1" = state ] && { echo pending; return; }
            sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\"\\(.*\\)\",\\{0,1\\}\$/\\1/p" /etc/cudaenv/system.json
        }
        ok() {
            [ "$(rec state)" = done ] && [ "$(readlink /usr/local/cuda)" = "$(rec target)" ] &&
            [ "$(grep -v "^#" /etc/ld.so.conf.d/cudaenv.conf)" = "$(rec lib)" ] &&
            [ "$(ldconfig -p | awk "\$1 == \"libcudart.so.11.0\" { print \$NF; exit }")" = "$(rec lib)/libcudart.so.11.0" ]
        }
        "$B" -q global 11.8 --system || exit 10
        steps=(trust intent link conf ldconfig) direct=0 repaired=0
        for i in $(seq 12); do
            v=$([ $((RANDOM % 2)) -eq 0 ] && echo 11.7 || echo 11.8)
            if [ $((i % 2)) -eq 0 ]; then
                CUDAENV_TEST_CRASH_AT=${steps[RANDOM % 5]} seams "$B" -q global $v --system 2>/dev/null
            else
                "$B" -q global $v --system 2>/dev/null & p=$!
                sleep "$(printf "0.%03d" $((RANDOM % 40)))"; kill -9 $p 2>/dev/null; wait $p 2>/dev/null
            fi
            if ok; then direct=$((direct + 1)); continue; fi
            [ "$(rec state)" = pending ] || { echo "run $i: broken and not pending"; exit 11; }
            "$B" -q global $v --system 2>/dev/null && ok || { echo "run $i: not repaired"; exit 12; }
            repaired=$((repaired + 1))
        done
        echo "12 runs: $direct consistent as left, $repaired repaired by the next run"
        ' "$CUDAENV"
    [ "$status" -ne 77 ] || skip "no mount namespace / overlayfs here"
    [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
    echo "# namespace kill -9 campaign: $output" >&3
}
