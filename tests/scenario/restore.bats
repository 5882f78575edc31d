#!/usr/bin/env bats
# Back to the machine's own CUDA (issue 11 item 2): the first system switch
# records what was there (a plain link, an update-alternatives selection, no
# link, a real directory; cudaenv.conf), `global system --system` restores
# exactly that through the switch transaction, and --rollback walks a
# history.  In a CUDAENV_SYSROOT image with the real `ldconfig -r` and
# update-alternatives --root, and on the real paths in a private mount
# namespace (tests/lib/sysns.sh).  This machine's /usr/local/cuda and ld.so
# files are checked untouched after every test.
load ../lib/common
load ../lib/sysroot
bats_require_minimum_version 1.5.0

setup() {
    sysroot_setup etc/alternatives var/lib/dpkg/alternatives
}

teardown() { sysroot_teardown; }

# The machine's own CUDA in the image, as NVIDIA's packages leave it: a
# versioned toolkit and a conf file of its own naming its lib64.
own_cuda() {
    fx_toolkit "$S/usr/local/cuda-$1" "$1.0" >/dev/null
    echo "/usr/local/cuda-$1/lib64" > "$S/etc/ld.so.conf.d/cuda-${1/./-}.conf"
}

# Everything a restore must put back, as text: the link, the alternatives
# group, every ld.so.conf.d file and the loader cache.
snapshot() {
    echo "link: $(readlink "$S/usr/local/cuda" || echo none) $([ -d "$S/usr/local/cuda" ] && [ ! -L "$S/usr/local/cuda" ] && echo dir)"
    update-alternatives --root "$S" --query cuda 2>/dev/null || echo "no alternatives"
    (cd "$S/etc/ld.so.conf.d" && for f in *.conf; do [ ! -e "$f" ] || echo "conf $f: $(cat "$f")"; done)
    ldconfig -r "$S" -p 2>/dev/null || echo "no cache"
}

hist() { python3 -c 'import json,sys; print(" ".join(h["link_target"] or "-" for h in json.load(open(sys.argv[1]))["history"]))' "$S/etc/cudaenv/system.json"; }
# where /usr/local/cuda points inside the image, through the alternatives link
sel() {
    local l
    l=$(readlink "$S/usr/local/cuda") || { echo none; return; }
    [ "$l" != /etc/alternatives/cuda ] || l=$(readlink "$S/etc/alternatives/cuda")
    echo "$l"
}

# switch A, B, A, A: the history has no duplicates; rollback walks B then A
walk() {
    "$CUDAENV" -q global 11.8 --system
    "$CUDAENV" -q global 11.7 --system
    "$CUDAENV" -q global 11.8 --system
    "$CUDAENV" -q global 11.8 --system
    [ "$(sel)" = "$I118" ]
    [ "$(cache_lib libcudart.so.11.0)" = "$I118/lib64/libcudart.so.11.0" ]
}

restore_exact() {
    local mid
    mid=$(snapshot)
    run --separate-stderr "$CUDAENV" global system --system --dry-run
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"plan: restore the machine's own CUDA as cudaenv found it: $1"* ]] || { echo "$stderr"; false; }
    [[ "$stderr" == *"plan: remove $S/etc/ld.so.conf.d/cudaenv.conf (there was none)"* ]]
    [ "$(snapshot)" = "$mid" ]
    run --separate-stderr "$CUDAENV" global system --system
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"the machine's own again"* ]]
    diff <(echo "$before") <(snapshot)
    [ ! -e "$S/etc/ld.so.conf.d/cudaenv.conf" ]
    [ -z "$(cache_lib libcudart.so.11.0)" ]
    run "$CUDAENV" global --system
    [ "$output" = system ]
}

# after the restore: rollback returns to A, then B, then A
rollback_walk() {
    "$CUDAENV" -q global --rollback
    [ "$(sel)" = "$I118" ]
    run "$CUDAENV" -q global --rollback
    [ "$output" = 11.7.0 ]
    [ "$(sel)" = "$I117" ]
    [ "$(cache_lib libcudart.so.11.0)" = "$I117/lib64/libcudart.so.11.0" ]
    run "$CUDAENV" -q global --rollback
    [ "$output" = 11.8.0+cudnn8.7.0.84 ]
    [ "$(sel)" = "$I118" ]
}

@test "sysroot, plain link: A, B, A, A then global system --system is exactly the original; rollback walks B then A" {
    own_cuda 13.0
    ln -s /usr/local/cuda-13.0 "$S/usr/local/cuda"
    ldconfig -r "$S"
    before=$(snapshot)
    walk
    [ "$(hist)" = "$I117 $I118 /usr/local/cuda-13.0" ]
    restore_exact "/usr/local/cuda -> /usr/local/cuda-13.0"
    [ "$(cache_lib libcudart.so.13)" = /usr/local/cuda-13.0/lib64/libcudart.so.13 ]
    rollback_walk
    # more switches never overwrite the original
    "$CUDAENV" -q global 11.7 --system
    "$CUDAENV" -q global system --system
    diff <(echo "$before") <(snapshot)
}

@test "sysroot, no link at all: restore removes the link and cudaenv.conf; rollback history, then nothing left (exit 3)" {
    ldconfig -r "$S"
    before=$(snapshot)
    walk
    [ "$(hist)" = "$I117 $I118 -" ]
    restore_exact "no /usr/local/cuda"
    [ ! -e "$S/usr/local/cuda" ] && [ ! -L "$S/usr/local/cuda" ] || false
    rollback_walk
    # the rest of the history: the original "no link", then nothing
    "$CUDAENV" -q global --rollback
    [ ! -L "$S/usr/local/cuda" ] && [ ! -e "$S/etc/ld.so.conf.d/cudaenv.conf" ] || false
    run --separate-stderr "$CUDAENV" global --rollback
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"nothing left to roll back"* && "$stderr" == *"global system --system"* ]]
}

@test "sysroot, update-alternatives (manual selection): restore removes cudaenv's alternatives and selects the original" {
    command -v update-alternatives >/dev/null || skip "no update-alternatives"
    own_cuda 13.0
    own_cuda 12.4
    update-alternatives --quiet --root "$S" --install /usr/local/cuda cuda /usr/local/cuda-13.0 130
    update-alternatives --quiet --root "$S" --install /usr/local/cuda cuda /usr/local/cuda-12.4 124
    update-alternatives --quiet --root "$S" --set cuda /usr/local/cuda-12.4
    ldconfig -r "$S"
    before=$(snapshot)
    [[ "$before" == *"Status: manual"* ]]
    walk
    [ "$(readlink "$S/usr/local/cuda")" = /etc/alternatives/cuda ]
    [ "$(readlink "$S/etc/alternatives/cuda")" = "$I118" ]
    [ "$(hist)" = "$I117 $I118 /usr/local/cuda-12.4" ]
    run --separate-stderr "$CUDAENV" global system --system --dry-run
    [[ "$stderr" == *"plan: update-alternatives --remove cuda $I118 (registered by cudaenv)"* ]]
    [[ "$stderr" == *"plan: update-alternatives --remove cuda $I117 (registered by cudaenv)"* ]]
    [[ "$stderr" == *"plan: update-alternatives --set cuda /usr/local/cuda-12.4"* ]]
    restore_exact "update-alternatives cuda -> /usr/local/cuda-12.4 (manual)"
    [ "$(readlink "$S/etc/alternatives/cuda")" = /usr/local/cuda-12.4 ]
    rollback_walk
    "$CUDAENV" -q global system --system
    diff <(echo "$before") <(snapshot)
}

@test "sysroot, a real directory moved aside by --force: restore moves it back; a cudaenv.conf there before comes back as it was" {
    mkdir -p "$S/usr/local/cuda/bin" && echo keep > "$S/usr/local/cuda/bin/marker"
    printf '# kept\n/opt/old/lib64\n' > "$S/etc/ld.so.conf.d/cudaenv.conf"
    before=$(snapshot)
    "$CUDAENV" -q global 11.8 --system --force
    "$CUDAENV" -q global 11.7 --system
    [ -n "$(ls -d "$S"/usr/local/cuda.cudaenv-backup-*)" ]
    run --separate-stderr "$CUDAENV" global system --system --dry-run
    [[ "$stderr" == *"plan: write back $S/etc/ld.so.conf.d/cudaenv.conf as it was"* ]]
    "$CUDAENV" -q global system --system
    [ -d "$S/usr/local/cuda" ] && [ ! -L "$S/usr/local/cuda" ] || false
    [ "$(cat "$S/usr/local/cuda/bin/marker")" = keep ]
    [ -z "$(ls -d "$S"/usr/local/cuda.cudaenv-backup-* 2>/dev/null)" ]
    [ "$(cat "$S/etc/ld.so.conf.d/cudaenv.conf")" = "$(printf '# kept\n/opt/old/lib64')" ]
    [ "$(head -1 <<<"$before")" = "$(snapshot | head -1)" ]
}

@test "sysroot, a real directory moved aside by --force and the link since removed by hand: restore moves the directory back" {
    mkdir -p "$S/usr/local/cuda/bin" && echo keep > "$S/usr/local/cuda/bin/marker"
    "$CUDAENV" -q global 11.8 --system --force
    rm "$S/usr/local/cuda"
    run --separate-stderr "$CUDAENV" global system --system
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ -d "$S/usr/local/cuda" ] && [ ! -L "$S/usr/local/cuda" ] || false
    [ "$(cat "$S/usr/local/cuda/bin/marker")" = keep ]
    [ -z "$(ls -d "$S"/usr/local/cuda.cudaenv-backup-* 2>/dev/null)" ]
}

@test "sysroot, restore of a directory moved aside by --force walks it first: a user's file planted in it since is refused (exit 6 naming it), nothing moved" {
    mkdir -p "$S/usr/local/cuda/bin" && echo keep > "$S/usr/local/cuda/bin/marker"
    "$CUDAENV" -q global 11.8 --system --force
    b=$(ls -d "$S"/usr/local/cuda.cudaenv-backup-*)
    chown 65534 "$b/bin/marker"
    run --separate-stderr "$CUDAENV" global system --system
    [ "$status" -eq 6 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"$b/bin/marker is owned by uid 65534"* ]] || { echo "$stderr"; false; }
    [ "$(readlink "$S/usr/local/cuda")" = "$I118" ] && [ -d "$b" ] || false
    # root's again: the restore moves it back
    chown 0 "$b/bin/marker"
    "$CUDAENV" -q global system --system
    [ -d "$S/usr/local/cuda" ] && [ ! -L "$S/usr/local/cuda" ] && [ "$(cat "$S/usr/local/cuda/bin/marker")" = keep ]
}

@test "restore: nothing recorded (exit 3), an older record without the original (exit 3, the manual steps), not root (exit 6)" {
    run --separate-stderr "$CUDAENV" global system --system
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"never switched this machine"* ]]
    mkdir -p "$S/etc/cudaenv"
    printf '{"schema":1,"state":"done","mode":"link","name":"11.8.0+cudnn8.7.0.84","target":"%s","lib":"%s/lib64","prev_target":"","prev_lib":"","prev_name":"","when":1}' \
        "$I118" "$I118" > "$S/etc/cudaenv/system.json"
    run --separate-stderr "$CUDAENV" global system --system
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"restore by hand"* && "$stderr" == *"ldconfig"* ]]
    # the older record's one slot still rolls back
    ln -s "$I118" "$S/usr/local/cuda"
    "$CUDAENV" -q global --rollback
    [ ! -L "$S/usr/local/cuda" ]
    chmod 0755 "$T"
    run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups "$CUDAENV" global system --system
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"sudo cudaenv global system --system"* ]]
}

@test "kill -9 during a restore: the next run completes the restore, not a switch" {
    own_cuda 13.0
    ln -s /usr/local/cuda-13.0 "$S/usr/local/cuda"
    ldconfig -r "$S"
    before=$(snapshot)
    "$CUDAENV" -q global 11.8 --system
    for step in intent link conf ldconfig; do
        "$CUDAENV" -q global 11.7 --system
        run seams env CUDAENV_TEST_CRASH_AT=$step "$CUDAENV" -q global system --system
        [ "$status" -eq 137 ]
        run "$CUDAENV" doctor --json
        [[ "$output" == *'"env.system-switch-interrupted"'* ]]
        run --separate-stderr "$CUDAENV" global system --system
        [ "$status" -eq 0 ]
        [[ "$stderr" == *"was interrupted; completing it"* ]]
        diff <(echo "$before") <(snapshot)
    done
}

# ---- the real paths, in a private mount namespace --------------------------

# In the namespace: the original state is set up, ldconfig run, snapshot
# taken; A, B, A; restore; the snapshot again; rollback B then A.
NS_SCRIPT='
    B=$0 P118=$1 P117=$2 kind=$3
    set -e
    snap() {
        echo "link: $(readlink /usr/local/cuda || echo none)"
        update-alternatives --query cuda 2>/dev/null || echo "no alternatives"
        for f in /etc/ld.so.conf.d/*; do echo "conf $f: $(cat "$f")"; done
        ldconfig -p
    }
    case $kind in
        none) rm -f /usr/local/cuda ;;
        link) ;;   # the machine'"'"'s own link, as it is
        alternatives)
            rm -f /usr/local/cuda; mkdir -p /usr/local/cuda-13.0 /usr/local/cuda-12.4
            update-alternatives --quiet --install /usr/local/cuda cuda /usr/local/cuda-13.0 130
            update-alternatives --quiet --install /usr/local/cuda cuda /usr/local/cuda-12.4 124 ;;
    esac
    rm -rf /etc/cudaenv /etc/ld.so.conf.d/cudaenv.conf
    ldconfig
    before=$(snap)
    "$B" -q global 11.8 --system; "$B" -q global 11.7 --system; "$B" -q global 11.8 --system
    echo "switched=$(readlink -f /usr/local/cuda) $(ldconfig -p | awk "\$1 == \"libcudart.so.11.0\" { print \$NF; exit }")"
    "$B" -q global system --system
    after=$(snap)
    [ "$before" = "$after" ] && echo restored=yes || diff <(echo "$before") <(echo "$after") >&2
    echo "cudart11=$(ldconfig -p | grep -c "libcudart.so.11.0" || true)"
    "$B" -q global --rollback >/dev/null; "$B" -q global --rollback >/dev/null
    echo "rollback2=$(readlink -f /usr/local/cuda)"
    "$B" -q global --rollback >/dev/null
    echo "rollback3=$(readlink -f /usr/local/cuda)"
'

ns_walk() {
    export CUDAENV_ROOT=$T/root
    unset CUDAENV_SYSROOT
    P118=$(fx_installed 11.8.0 8.7.0.84)
    P117=$(fx_installed 11.7.0)
    chmod -R go-w "$T"
    run --separate-stderr "$REPO/tests/lib/sysns.sh" "$T/ns-$1" -c "$NS_SCRIPT" "$CUDAENV" "$P118" "$P117" "$1"
    [ "$status" -ne 77 ] || skip "no mount namespace / overlayfs here"
    [ "$status" -eq 0 ] || { echo "$output"; echo "$stderr"; false; }
    [ "${lines[0]}" = "switched=$P118 $P118/lib64/libcudart.so.11.0" ]
    [ "${lines[1]}" = "restored=yes" ] || { echo "$stderr"; false; }
    [ "${lines[2]}" = "cudart11=0" ]
    # restore pushed A: rollback gives A, then B ... the second is B
    [ "${lines[3]}" = "rollback2=$P117" ]
    [ "${lines[4]}" = "rollback3=$P118" ]
}

@test "namespace: the machine's own plain link: switch A, B, A, restore is exact (ldconfig -p agrees), rollback walks B then A" {
    [ -L /usr/local/cuda ] || skip "this machine has no /usr/local/cuda link"
    ns_walk link
}

@test "namespace: no /usr/local/cuda: restore leaves none, ldconfig -p as before" {
    ns_walk none
}

@test "namespace: update-alternatives (auto): cudaenv's alternatives removed, auto mode and its choice back" {
    command -v update-alternatives >/dev/null || skip "no update-alternatives"
    ns_walk alternatives
}
