#!/usr/bin/env bats
# The system-wide switch: in a CUDAENV_SYSROOT (ldconfig -r) and for real in
# a private mount namespace with overlays (tests/lib/sysns.sh).  Plain link,
# real directory (refused / --force), update-alternatives, unsafe trees,
# not root, rollback, dry-run, shadow warnings, and 200 switches racing with
# readers.  This machine's /usr/local/cuda and ld.so files are checked
# untouched at the end of every test.
load ../lib/common
load ../lib/sysroot
bats_require_minimum_version 1.5.0

setup() {
    sysroot_setup
    fx_probe "$T/probe" "$P118"
}

teardown() { sysroot_teardown; }

@test "sysroot: plain link, conf, ldconfig -r, record; the probe loads the toolchain's libcudart" {
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 0 ]
    [ "$(readlink "$S/usr/local/cuda")" = "$I118" ]
    [ "$(grep -v '^#' "$S/etc/ld.so.conf.d/cudaenv.conf")" = "$I118/lib64" ]
    [ "$(cache_lib libcudart.so.11.0)" = "$I118/lib64/libcudart.so.11.0" ]
    # the link names the path inside the image: resolve it there
    run env LD_LIBRARY_PATH="$S$(readlink "$S/usr/local/cuda")/lib64" "$T/probe"
    [ "${lines[0]}" = 11080 ]
    [ "${lines[1]}" = "$P118/lib64/libcudart.so.11.0" ]
    python3 - "$S/etc/cudaenv/system.json" "$I118" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["name"] == "11.8.0+cudnn8.7.0.84" and d["target"] == sys.argv[2] and d["prev_target"] == "", d
PY
    run "$CUDAENV" list
    [[ "$output" == *"11.8.0+cudnn8.7.0.84  (system: /usr/local/cuda)"* ]]
    run "$CUDAENV" global --system
    [ "$output" = "11.8.0+cudnn8.7.0.84" ]
    # no temp links left behind
    [ -z "$(find "$S/usr/local" -name '*cudaenv-tmp*')" ]
}

@test "sysroot: switch, rollback, rollback again walks further back (a history, not a toggle)" {
    "$CUDAENV" -q global 11.8 --system
    "$CUDAENV" -q global 11.7 --system
    [ "$(readlink "$S/usr/local/cuda")" = "$I117" ]
    [ "$(cache_lib libcudart.so.11.0)" = "$I117/lib64/libcudart.so.11.0" ]
    run "$CUDAENV" -q global --rollback
    [ "$status" -eq 0 ]
    [ "$output" = "11.8.0+cudnn8.7.0.84" ]
    [ "$(readlink "$S/usr/local/cuda")" = "$I118" ]
    [ "$(cache_lib libcudart.so.11.0)" = "$I118/lib64/libcudart.so.11.0" ]
    # issue 11: the second rollback goes to the state before 11.8, not back to 11.7
    "$CUDAENV" -q global --rollback
    [ ! -L "$S/usr/local/cuda" ]
}

@test "sysroot: rollback of the first switch restores 'no link, no conf'" {
    "$CUDAENV" -q global 11.8 --system
    "$CUDAENV" -q global --rollback
    [ ! -e "$S/usr/local/cuda" ] && [ ! -L "$S/usr/local/cuda" ] || false
    [ ! -e "$S/etc/ld.so.conf.d/cudaenv.conf" ]
    # the history is empty now: nothing further back (restore.bats has the rest)
    run --separate-stderr "$CUDAENV" global --rollback --dry-run
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"nothing left to roll back"* ]]
}

@test "rollback with nothing recorded: exit 3" {
    run "$CUDAENV" global --rollback
    [ "$status" -eq 3 ]
}

@test "sysroot: --dry-run prints the plan and changes nothing" {
    ln -s /usr/local/cuda-13.0 "$S/usr/local/cuda"
    before=$(cd "$S" && find . -printf '%p %l %s\n' | sort)
    run --separate-stderr "$CUDAENV" global 11.8 --system --dry-run
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"plan: $S/usr/local/cuda -> $I118 (was /usr/local/cuda-13.0)"* ]]
    [[ "$stderr" == *"plan: write $S/etc/ld.so.conf.d/cudaenv.conf naming $I118/lib64"* ]]
    [[ "$stderr" == *"ldconfig -r $S"* ]]
    [ "$before" = "$(cd "$S" && find . -printf '%p %l %s\n' | sort)" ]
}

@test "sysroot: a real directory is refused, --force moves it aside (never deleted), rollback points back at it" {
    mkdir -p "$S/usr/local/cuda/bin" && echo keep > "$S/usr/local/cuda/bin/marker"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"real directory"* && "$stderr" == *"--force"* ]]
    [ -d "$S/usr/local/cuda" ] && [ ! -L "$S/usr/local/cuda" ] || false
    [ ! -e "$S/etc/ld.so.conf.d/cudaenv.conf" ]
    run "$CUDAENV" -q global 11.8 --system --force
    [ "$status" -eq 0 ]
    [ "$(readlink "$S/usr/local/cuda")" = "$I118" ]
    b=$(ls -d "$S"/usr/local/cuda.cudaenv-backup-*)
    [ "$(cat "$b/bin/marker")" = keep ]
    "$CUDAENV" -q global --rollback
    [ "$(readlink "$S/usr/local/cuda")" = "/usr/local/${b##*/}" ]
}

@test "sysroot: update-alternatives managed link: cooperate, --display stays consistent, rollback" {
    command -v update-alternatives >/dev/null || skip "no update-alternatives"
    mkdir -p "$S/usr/local/cuda-13.0/lib64" "$S/etc/alternatives" "$S/var/lib/dpkg/alternatives"
    update-alternatives --quiet --root "$S" --install /usr/local/cuda cuda /usr/local/cuda-13.0 130
    [ "$(readlink "$S/usr/local/cuda")" = /etc/alternatives/cuda ]
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 0 ]
    [ "$(readlink "$S/usr/local/cuda")" = /etc/alternatives/cuda ]
    [ "$(readlink "$S/etc/alternatives/cuda")" = "$I118" ]
    run update-alternatives --root "$S" --query cuda
    [[ "$output" == *"Value: $I118"* ]]
    [[ "$output" == *"Alternative: /usr/local/cuda-13.0"* ]]
    [ "$(cache_lib libcudart.so.11.0)" = "$I118/lib64/libcudart.so.11.0" ]
    "$CUDAENV" -q global --rollback
    run update-alternatives --root "$S" --query cuda
    [[ "$output" == *"Value: /usr/local/cuda-13.0"* ]]
    [ ! -e "$S/etc/ld.so.conf.d/cudaenv.conf" ]
}

@test "unsafe trees are refused with exit 6 and the fix; nothing changes" {
    chmod 0777 "$CUDAENV_ROOT/versions"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$CUDAENV_ROOT/versions is writable by group or others"* && "$stderr" == *"/opt/cudaenv"* ]]
    chmod 0755 "$CUDAENV_ROOT/versions"
    chown 65534 "$P118"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"$P118 is owned by uid 65534, not root"* ]]
    chown 0 "$P118"
    chmod g+w "$P118/lib64/libcudart.so.11.8.89"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ]
    [ ! -e "$S/usr/local/cuda" ] && [ ! -e "$S/etc/ld.so.conf.d/cudaenv.conf" ]
}

@test "not root: exit 6 saying to use sudo" {
    chmod 0755 "$T"
    run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups "$CUDAENV" global 11.8 --system
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"sudo cudaenv global 11.8 --system"* ]]
}

@test "other CUDA entries in ld.so.conf.d are reported, never edited" {
    echo /usr/local/cuda-12.1/lib64 > "$S/etc/ld.so.conf.d/cuda-12-1.conf"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"cuda-12-1.conf names /usr/local/cuda-12.1/lib64"* ]]
    [ "$(cat "$S/etc/ld.so.conf.d/cuda-12-1.conf")" = /usr/local/cuda-12.1/lib64 ]
}

@test "a switch replaces the link and cudaenv.conf atomically: readers see the old or the new, never none or half" {
    export CUDAENV_LDCONFIG=none
    "$CUDAENV" -q global 11.8 --system
    conf=$S/etc/ld.so.conf.d/cudaenv.conf
    old=$(cat "$conf")
    exec 8< "$conf"    # a reader that opened the conf before the switch (fd 3 is bats')
    # each rename or symlink onto /usr/local/cuda waits 1.5 s: a reader looks meanwhile
    fx_slowpath "$T/slowpath.so"
    : > "$T/bad"
    ( n=0; while [ ! -e "$T/stop" ]; do
          [ -L "$S/usr/local/cuda" ] || echo "no link" >> "$T/bad"
          c=$(grep -v '^#' "$conf" 2>/dev/null)
          [ "$c" = "$I118/lib64" ] || [ "$c" = "$I117/lib64" ] || echo "conf: '$c'" >> "$T/bad"
          n=$((n + 1))
      done; echo "$n" > "$T/looks" ) & reader=$!
    LD_PRELOAD=$T/slowpath.so CUDAENV_TEST_SLOW_PATH=/usr/local/cuda ASAN_OPTIONS=$(fx_asan_preload_ok) \
        run "$CUDAENV" -q global 11.7 --system
    touch "$T/stop"; wait "$reader"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ ! -s "$T/bad" ] || { sort "$T/bad" | uniq -c | head; false; }
    [ "$(cat "$T/looks")" -gt 5 ]
    # the old file was replaced, not rewritten: the early reader still has it whole
    [ "$(cat <&8)" = "$old" ]
    exec 8<&-
    [ "$(readlink "$S/usr/local/cuda")" = "$I117" ]
    [ "$(grep -v '^#' "$conf")" = "$I117/lib64" ]
}

@test "a store outside the sysroot whose path starts with the sysroot's (\$S-store) is linked by its host path, never a dangling relative one" {
    export CUDAENV_LDCONFIG=none CUDAENV_ROOT=$S-store
    P=$(fx_installed 11.8.0 8.7.0.84)
    chmod -R go-w "$T"
    run --separate-stderr "$CUDAENV" -q global 11.8 --system
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$(readlink "$S/usr/local/cuda")" = "$P" ]
    [ "$(readlink -e "$S/usr/local/cuda")" = "$P" ]
    [ "$(grep -v '^#' "$S/etc/ld.so.conf.d/cudaenv.conf")" = "$P/lib64" ]
}

@test "200 switches racing with readers: the link always resolves and the probe always loads" {
    # toolchains outside the sysroot: the link names host paths the readers resolve
    export CUDAENV_LDCONFIG=none CUDAENV_ROOT=$T/root
    fx_installed 11.8.0 8.7.0.84 >/dev/null
    fx_installed 11.7.0 >/dev/null
    chmod -R go-w "$T"
    "$CUDAENV" -q global 11.8 --system
    : > "$T/bad"
    reader() {
        while [ ! -e "$T/stop" ]; do
            t=$(readlink -e "$S/usr/local/cuda") || { echo "dangling or missing" >> "$T/bad"; continue; }
            v=$(LD_LIBRARY_PATH="$S/usr/local/cuda/lib64" "$T/probe" | head -1)
            [ "$v" = 11080 ] || [ "$v" = 11070 ] || echo "probe: '$v'" >> "$T/bad"
        done
    }
    reader & r1=$!
    reader & r2=$!
    # two writers at once: the lock serialises them
    ( for i in $(seq 50); do "$CUDAENV" -q global 11.7 --system; "$CUDAENV" -q global 11.8 --system; done ) & w1=$!
    ( for i in $(seq 50); do "$CUDAENV" -q global 11.8 --system; "$CUDAENV" -q global 11.7 --system; done ) & w2=$!
    wait $w1; s1=$?
    wait $w2; s2=$?
    touch "$T/stop"; wait $r1 $r2
    [ "$s1" -eq 0 ] && [ "$s2" -eq 0 ] || false
    [ ! -s "$T/bad" ] || { cat "$T/bad"; false; }
    [ -z "$(find "$S/usr/local" "$S/etc" -name '*tmp*')" ]
}

# ---- the real paths, in a private mount namespace --------------------------

@test "sysns.sh exits 77 (the namespace tests skip) where the kernel refuses a private mount namespace" {
    mkdir -p "$T/fakebin"
    printf '#!/bin/sh\necho "unshare: unshare failed: Operation not permitted" >&2\nexit 1\n' > "$T/fakebin/unshare"
    chmod +x "$T/fakebin/unshare"
    run env PATH="$T/fakebin:$PATH" "$REPO/tests/lib/sysns.sh" "$T" -c 'echo ran'
    [ "$status" -eq 77 ]
    [[ "$output" != *ran* ]]
}

@test "namespace: real /usr/local/cuda + ldconfig: ldconfig -p and the probe see the toolchain; rollback" {
    export CUDAENV_ROOT=$T/root
    unset CUDAENV_SYSROOT
    P=$(fx_installed 11.8.0 8.7.0.84)
    chmod -R go-w "$T"
    run --separate-stderr "$REPO/tests/lib/sysns.sh" "$T" -c '
        set -e
        before=$(readlink /usr/local/cuda || echo none)
        "$0" -q global 11.8 --system
        echo "link=$(readlink /usr/local/cuda)"
        echo "conf=$(grep -v "^#" /etc/ld.so.conf.d/cudaenv.conf)"
        echo "cache=$(ldconfig -p | awk "\$1 == \"libcudart.so.11.0\" { print \$NF; exit }")"
        env -u LD_LIBRARY_PATH "$1" | tr "\n" " "; echo
        "$0" -q global --rollback >/dev/null
        echo "back=$([ "$(readlink /usr/local/cuda || echo none)" = "$before" ] && echo yes)"
        echo "noconf=$([ ! -e /etc/ld.so.conf.d/cudaenv.conf ] && echo yes)"
        ' "$CUDAENV" "$T/probe"
    [ "$status" -ne 77 ] || skip "no mount namespace / overlayfs here"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "link=$P" ]
    [ "${lines[1]}" = "conf=$P/lib64" ]
    [ "${lines[2]}" = "cache=$P/lib64/libcudart.so.11.0" ]
    [ "${lines[3]}" = "11080 $P/lib64/libcudart.so.11.0 " ]
    [ "${lines[4]}" = "back=yes" ]
    [ "${lines[5]}" = "noconf=yes" ]
}

@test "namespace: real directory refused then --force; alternatives link; user-writable root refused" {
    export CUDAENV_ROOT=$T/root
    unset CUDAENV_SYSROOT
    P=$(fx_installed 11.8.0 8.7.0.84)
    chmod -R go-w "$T"
    mkdir -p "$T/userroot"
    run --separate-stderr "$REPO/tests/lib/sysns.sh" "$T" -c '
        rm -f /usr/local/cuda; mkdir -p /usr/local/cuda/bin
        "$0" -q global 11.8 --system; echo "dir=$?"
        "$0" -q global 11.8 --system --force; echo "force=$? $(readlink /usr/local/cuda) $(ls -d /usr/local/cuda.cudaenv-backup-* | wc -l)"
        rm -f /usr/local/cuda
        mkdir -p /usr/local/cuda-13.0
        update-alternatives --quiet --install /usr/local/cuda cuda /usr/local/cuda-13.0 130
        "$0" -q global 11.8 --system; echo "alt=$? $(readlink /usr/local/cuda) $(readlink /etc/alternatives/cuda)"
        update-alternatives --query cuda | grep "^Value:"
        chmod 0777 "$1"
        "$0" -q global 11.8 --system 2>/dev/null; echo "unsafe=$?"
        chmod 0755 "$1"
        ' "$CUDAENV" "$CUDAENV_ROOT"
    [ "$status" -ne 77 ] || skip "no mount namespace / overlayfs here"
    [ "${lines[0]}" = "dir=1" ]
    [ "${lines[1]}" = "force=0 $P 1" ]
    [ "${lines[2]}" = "alt=0 /etc/alternatives/cuda $P" ]
    [ "${lines[3]}" = "Value: $P" ]
    [ "${lines[4]}" = "unsafe=6" ]
}

@test "global --system begins a store transaction: the staging a crashed run left goes first" {
    mkdir -p "$CUDAENV_ROOT/versions/.staging-crashed" "$CUDAENV_ROOT/pkgs/.staging-crashed"
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$(readlink "$S/usr/local/cuda")" = "$I118" ]
    [ -z "$(ls -d "$CUDAENV_ROOT"/versions/.staging-* "$CUDAENV_ROOT"/pkgs/.staging-* 2>/dev/null)" ]
}

@test "plain verify checks what is in effect: the machine's own /usr/local/cuda (ad-hoc, no receipt), the switch's target, then the machine's again" {
    export CUDAENV_TEST_LIBCUDA=$T/no-driver/libcuda.so.1; seams_on
    unset LD_LIBRARY_PATH CUDAENV_VERSION
    fx_toolkit "$S/usr/local/cuda-12.4" 12.4.1 >/dev/null
    ln -s /usr/local/cuda-12.4 "$S/usr/local/cuda"
    fx_receipt "$P118"; fx_receipt "$P117"
    chmod -R go-w "$T"
    vj() { python3 -c 'import json, sys
d = json.loads(sys.stdin.read()); st = {s["id"]: s for s in d["steps"]}
print(d["toolchain"]["name"], d["toolchain"]["adhoc"], st["files"]["status"], st["loader"]["status"], d["exit_code"])
print(d["toolchain"]["selected_by"])' <<<"$1"; }
    run --separate-stderr "$CUDAENV" verify --json
    [ "$status" -eq 8 ] || { echo "$stderr $output"; false; }
    run vj "$output"
    [ "${lines[0]}" = "system True skipped passed 8" ]
    [[ "${lines[1]}" == "nothing selected: the machine's own CUDA 12.4.1 at /usr/local/cuda ($S/usr/local/cuda-12.4)"* ]]
    run --separate-stderr "$CUDAENV" verify
    [[ "$stderr" == *"verifying system: nothing selected: the machine's own CUDA 12.4.1"* ]]
    [[ "$output" == *"1 files     skipped"*"no receipt: cudaenv neither installed nor adopted"* ]]
    "$CUDAENV" -q global 11.8 --system
    run --separate-stderr "$CUDAENV" verify --json
    [ "$status" -eq 8 ] || { echo "$stderr $output"; false; }
    run vj "$output"
    [ "${lines[0]}" = "11.8.0+cudnn8.7.0.84 False passed passed 8" ]
    [ "${lines[1]}" = "nothing selected in this shell: the system switch's target (/usr/local/cuda)" ]
    # a shell selection still comes first
    CUDAENV_VERSION=11.7 run --separate-stderr "$CUDAENV" verify --json
    run vj "$output"
    [ "${lines[0]}" = "11.7.0 False passed passed 8" ]
    [[ "${lines[1]}" == "selected in this shell"* ]]
    "$CUDAENV" -q global system --system
    [ "$(readlink "$S/usr/local/cuda")" = /usr/local/cuda-12.4 ]
    run --separate-stderr "$CUDAENV" verify --json
    run vj "$output"
    [ "${lines[0]}" = "system True skipped passed 8" ]
}

@test "ldconfig is waited for: a slow one has finished when the switch returns; a failing one fails the switch (exit 1 naming it), which stays to be completed" {
    "$CUDAENV" -q global 11.8 --system
    cat > "$T/ldc" <<SH
#!/bin/sh
sleep 1
/sbin/ldconfig "\$@" && echo done > "$T/ldc.done"
SH
    chmod 0755 "$T/ldc"
    run --separate-stderr env CUDAENV_LDCONFIG="$T/ldc" "$CUDAENV" -q global 11.7 --system
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$(cat "$T/ldc.done")" = done ]
    [ "$(cache_lib libcudart.so.11.0)" = "$I117/lib64/libcudart.so.11.0" ]
    run --separate-stderr env CUDAENV_LDCONFIG=/bin/false "$CUDAENV" -q global 11.8 --system
    [ "$status" -eq 1 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"/bin/false failed (exit status 1)"* ]]
    # the loader cache still names 11.7: the switch is an intent, reported and completed by the next run
    [ "$(cache_lib libcudart.so.11.0)" = "$I117/lib64/libcudart.so.11.0" ]
    run --separate-stderr "$CUDAENV" global --system
    [[ "$stderr" == *"was interrupted"* ]]
    run --separate-stderr "$CUDAENV" global 11.8 --system
    [ "$status" -eq 0 ] && [[ "$stderr" == *"completing it"* ]] || false
    [ "$(cache_lib libcudart.so.11.0)" = "$I118/lib64/libcudart.so.11.0" ]
}

@test "rollback to a toolchain removed since: exit 3 naming the missing path exactly, nothing changed" {
    "$CUDAENV" -q global 11.7 --system
    "$CUDAENV" -q global 11.8 --system
    rm -rf "$P117"
    run --separate-stderr "$CUDAENV" global --rollback
    [ "$status" -eq 3 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"$I117 does not exist any more ($I117 is missing)"* ]] || { echo "$stderr"; false; }
    [ "$(readlink "$S/usr/local/cuda")" = "$I118" ]
    [ "$(cache_lib libcudart.so.11.0)" = "$I118/lib64/libcudart.so.11.0" ]
}

@test "after global X --system, list and current name X as the system toolchain; after the restore, the machine's own again" {
    "$CUDAENV" -q global 11.8 --system
    run --separate-stderr "$CUDAENV" list
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"none selected: the system toolchain 11.8.0+cudnn8.7.0.84 is used (/usr/local/cuda"* ]] || { echo "$stderr"; false; }
    [[ "$stderr" != *"the machine's own CUDA"* ]] || { echo "$stderr"; false; }
    run --separate-stderr "$CUDAENV" current
    [ "$status" -eq 0 ]
    [ "$output" = "system: 11.8.0+cudnn8.7.0.84 (no toolchain selected: the system switch's, at /usr/local/cuda)" ]
    run --separate-stderr "$CUDAENV" current --json
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["name"] == "system" and d["system_toolchain"] == "11.8.0+cudnn8.7.0.84", d' "$output"
    run --separate-stderr "$CUDAENV" list --json
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["active"]["system_toolchain"] == "11.8.0+cudnn8.7.0.84", d' "$output"
    # a global default of "system" says the same, with the file that chose it
    "$CUDAENV" global system
    run --separate-stderr "$CUDAENV" current
    [ "$output" = "system: 11.8.0+cudnn8.7.0.84 (set by $CUDAENV_ROOT/global)" ]
    # another installer moved the link: no longer the switch's toolchain
    ln -sfn "$I117" "$S/usr/local/cuda"
    run --separate-stderr "$CUDAENV" current
    [ "$output" = "system (set by $CUDAENV_ROOT/global)" ]
    ln -sfn "$I118" "$S/usr/local/cuda"
    "$CUDAENV" -q global system --system
    "$CUDAENV" global --unset
    run --separate-stderr "$CUDAENV" current
    [ "$output" = "system (no toolchain selected: the machine's own CUDA)" ]
    run --separate-stderr "$CUDAENV" list
    [[ "$stderr" == *"none active: the machine's own CUDA is used"* ]] || { echo "$stderr"; false; }
    run --separate-stderr "$CUDAENV" current --json
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["system_toolchain"] is None, d' "$output"
}
