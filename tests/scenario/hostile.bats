#!/usr/bin/env bats
# A cloned repository is hostile input (issue 9): .cuda-version as a FIFO, a
# symlink to /proc/self/pagemap or to a secret, 200 MB without a newline,
# terminal escapes; a planted .cuda-version.tmp symlink for `local`; a FIFO
# as $CUDAENV_ROOT/global or as a receipt; a working directory deeper than
# PATH_MAX; a binary path with a quote for `init fish`.  Run in real bash,
# zsh and fish: the prompt never hangs (every shell is bounded by timeout)
# and nothing from the file is echoed.
load ../lib/common
bats_require_minimum_version 1.5.0

setup() {
    switch_setup
    mkdir -p "$T/repo/sub" "$T/elsewhere"
    export T P118 P117 P123
}
teardown() { common_teardown; }

# the hook in shell $1, cd into $2, print CUDA_HOME; never longer than 20 s
hook_in() {
    local sh=$1 dir=$2
    case $sh in
    bash) timeout -s KILL 20 bash --norc -i 2>&1 <<EOS
eval "\$(cudaenv init bash)"
cd '$dir'
__cudaenv_hook
echo "home=\${CUDA_HOME-unset}"
EOS
    ;;
    zsh) timeout -s KILL 20 zsh -f -i 2>&1 <<EOS
eval "\$(cudaenv init zsh)"
cd '$dir'
__cudaenv_hook
echo "home=\${CUDA_HOME-unset}"
EOS
    ;;
    fish) timeout -s KILL 20 fish --no-config -c "cudaenv init fish | source; cd '$dir'; __cudaenv_hook; echo \"home=\$CUDA_HOME\"" 2>&1 ;;
    esac
}

shells() { local s; for s in bash zsh fish; do command -v "$s" >/dev/null && echo "$s"; done; }

@test "hostile .cuda-version: FIFO, /proc/self/pagemap, 200 MB without newline: the hook returns in every shell" {
    for kind in fifo pagemap big; do
        rm -f "$T/repo/.cuda-version"
        case $kind in
        fifo) mkfifo "$T/repo/.cuda-version" ;;
        pagemap) ln -s /proc/self/pagemap "$T/repo/.cuda-version" ;;
        big) head -c 200000000 /dev/zero | tr '\0' 'x' > "$T/repo/.cuda-version" ;;
        esac
        for sh in $(shells); do
            run hook_in "$sh" "$T/repo/sub"
            [ "$status" -ne 124 ] && [ "$status" -ne 137 ] || { echo "$sh hung on $kind"; false; }
            [[ "$output" == *"home="* ]] || { echo "$sh $kind: $output"; false; }
        done
        # the binary, promptly: a FIFO is not a pin (as for the hook's test -f),
        # the others are "not a version spec"
        cd "$T/repo/sub"
        run --separate-stderr timeout 20 cudaenv current
        [ "$status" -ne 124 ]
        case $kind in
        fifo) [ "$output" = "system (no toolchain selected: the machine's own CUDA)" ] ;;
        pagemap) [ "$status" -eq 1 ] && [[ "$stderr" == *"is a kernel interface (procfs or sysfs)"* ]] || false ;;
        big) [ "$status" -eq 3 ] && [[ "$stderr" == *"no such toolchain or spec (content not shown)"* ]] || false ;;
        esac
        cd "$T"
    done
}

@test "hostile .cuda-version -> a secret: 'no such toolchain or spec', the content is never printed" {
    echo 'https://user:ghp_SECRETTOKEN@github.com' > "$T/home/.git-credentials"
    ln -s "$T/home/.git-credentials" "$T/repo/.cuda-version"
    cd "$T/repo/sub"
    run --separate-stderr cudaenv current
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"$T/repo/.cuda-version: no such toolchain or spec (content not shown)"* ]]
    [[ "$stderr$output" != *SECRETTOKEN* ]]
    for sh in $(shells); do
        run hook_in "$sh" "$T/repo/sub"
        [[ "$output" != *SECRETTOKEN* ]] || { echo "$sh leaked: $output"; false; }
    done
}

@test "hostile .cuda-version -> ~/.vault-token: a secret in spec characters is printed by no command nor the hook (issue 21)" {
    ln -s "$T/home/.vault-token" "$T/repo/.cuda-version"
    cd "$T/repo/sub"
    for secret in hvs.SECRETTOKEN KEY=SECRET; do
        echo "$secret" > "$T/home/.vault-token"
        for cmd in current "current --json" "env --shell bash" "env --shell json" prefix "which nvcc" local \
                   "list --json" "verify --json" doctor "doctor --json"; do
            run --separate-stderr cudaenv $cmd
            [[ "$output$stderr" != *SECRET* ]] || { echo "$cmd leaked: $output $stderr"; false; }
            case $cmd in list*|doctor*) ;; *)
                [ "$status" -eq 3 ] || { echo "$cmd: $status"; false; }
                [[ "$stderr" == *"$T/repo/.cuda-version: no such toolchain or spec (content not shown)"* ]] ;;
            esac
        done
        for sh in $(shells); do
            run hook_in "$sh" "$T/repo/sub"
            [[ "$output" != *SECRET* ]] || { echo "$sh leaked: $output"; false; }
            [[ "$output" == *"no such toolchain or spec (content not shown)"* && "$output" == *"home=unset"* ]] ||
                [[ $sh == fish && "$output" == *"no such toolchain or spec (content not shown)"* ]] || { echo "$sh: $output"; false; }
        done
    done
    # a spec typed on the command line is still echoed
    run --separate-stderr cudaenv prefix 10.1
    [ "$status" -eq 3 ] && [[ "$stderr" == *10.1* ]] || false
    # a pin that names a release by its syntax is shown by `local`, even when not installed
    rm "$T/repo/.cuda-version" && echo 10.1 > "$T/repo/.cuda-version"
    run cudaenv local
    [ "$status" -eq 0 ] && [ "$output" = 10.1 ]
}

@test "hostile .cuda-version -> /proc/kmsg: the binary and the bash/zsh/fish hooks return at once, no kernel line read" {
    [ -r /proc/kmsg ] || skip "/proc/kmsg not readable here"
    ln -s /proc/kmsg "$T/repo/.cuda-version"
    cd "$T/repo/sub"
    for cmd in current "env --shell bash" prefix local; do
        run --separate-stderr timeout 20 cudaenv $cmd
        [ "$status" -eq 1 ] || { echo "$cmd: $status $stderr"; false; }
        [[ "$stderr" == *"$T/repo/.cuda-version is a kernel interface (procfs or sysfs)"* ]]
        [[ "$output" != *"<"[0-9]">"* ]]
    done
    # the hooks: no read of a file of size 0 (/proc/kmsg blocks a reader as root)
    for sh in $(shells); do
        run hook_in "$sh" "$T/repo/sub"
        [ "$status" -ne 124 ] && [ "$status" -ne 137 ] || { echo "$sh hung on /proc/kmsg"; false; }
        [[ "$output" == *"home="* && "$output" == *"kernel interface"* ]] || { echo "$sh: $output"; false; }
    done
    # and the shell itself never opens it (a reader as root takes kernel log
    # lines, and blocks once they are drained): strace the shell, not its children
    if command -v strace >/dev/null; then
        for sh in bash zsh; do
            command -v $sh >/dev/null || continue
            strace -qq -e trace=open,openat -o "$T/st.$sh" $sh -c "cd '$T/repo/sub'; eval \"\$(cudaenv init $sh)\"" 2>/dev/null
            ! grep -F "$T/repo/.cuda-version" "$T/st.$sh" || { echo "$sh opened it"; false; }
        done
    fi
    # a sysfs file (size 4096, made up on reading) is refused the same way
    ln -sfn /sys/kernel/mm/transparent_hugepage/enabled "$T/repo/.cuda-version"
    if [ -e "$T/repo/.cuda-version" ]; then
        run --separate-stderr timeout 20 cudaenv current
        [ "$status" -eq 1 ] && [[ "$stderr" == *"kernel interface"* ]] || false
    fi
}

@test "a .cuda-version longer than the bytes read is not taken for the spec its first bytes spell (issue 24)" {
    cd "$T/repo"
    # 11.7 and blanks to the 256th byte, then more: the first line does not end within the read
    { printf '11.7%252s' ''; printf 'junk\n'; } > .cuda-version
    [ "$(head -c 256 .cuda-version | tr -d ' ')" = 11.7 ]
    run --separate-stderr cudaenv current
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"$T/repo/.cuda-version: no such toolchain or spec (content not shown)"* ]]
    run --separate-stderr bash --norc -c 'eval "$(cudaenv init bash)"; echo "home=${CUDA_HOME-unset}"'
    [[ "$output" == *"home=unset"* ]]
    # the same line within the bytes read is the pin
    { printf '11.7%200s\n' ''; printf '# more\n%.0s' $(seq 30); } > .cuda-version
    [ "$(stat -c %s .cuda-version)" -gt 256 ]
    run cudaenv current
    [ "$status" -eq 0 ] && [ "$output" = "11.7.0 (set by $T/repo/.cuda-version)" ]
}

@test "hostile escapes: .cuda-version, CUDAENV_VERSION and manifest strings are printed escaped" {
    printf '\033]52;c;cHduZWQ=\007\n' > "$T/repo/.cuda-version"
    cd "$T/repo"
    run --separate-stderr cudaenv current
    [ "$status" -ne 0 ]
    [[ "$stderr$output" != *$'\033'* && "$stderr$output" != *$'\007'* ]]
    cd "$T"
    run --separate-stderr env CUDAENV_VERSION=$'11.9\033[2J' cudaenv current
    [ "$status" -eq 3 ]
    [[ "$output$stderr" != *$'\033'* ]]
    [[ "$output$stderr" == *'\x1b[2J'* ]]
    run --separate-stderr env CUDAENV_VERSION=$'11.9\033[2J' cudaenv doctor
    [[ "$output$stderr" != *$'\033'* ]]
    [[ "$output" == *'\x1b[2J'* ]]
    # a manifest whose strings carry escapes (python, source)
    python3 - "$REPO/share/manifests/cudaenv.json" "$T/m.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for tf in m["tensorflow"].values():
    tf["python"] = "3.9\u001b]52;c;cHduZWQ=\u0007"
    tf["source"] = "x\u009b31m"
json.dump(m, open(sys.argv[2], "w"))
PY
    run --separate-stderr env CUDAENV_MANIFEST="$T/m.json" cudaenv info tf-2.14
    [ "$status" -eq 0 ]
    [[ "$output$stderr" != *$'\033'* && "$output$stderr" != *$'\007'* && "$output$stderr" != *$'\xc2\x9b'* ]]
    [[ "$output" == *'\x1b]52'* ]]
    run --separate-stderr env CUDAENV_MANIFEST="$T/m.json" cudaenv list-remote tf
    [ "$status" -eq 0 ]
    [[ "$output$stderr" != *$'\033'* && "$output$stderr" != *$'\007'* && "$output$stderr" != *$'\xc2\x9b'* ]]
    [[ "$output" == *'\x1b]52'* ]]
}

@test "hostile escapes: every C1 control (U+0080 to U+009F) is printed escaped; UTF-8 text around them byte for byte" {
    # U+0080 and U+009F: the ends of the C1 range; then text whose second
    # byte falls in 0x80-0x9F (’ is e2 80 99, Ā is c4 80, … e2 80 a6), kept
    run --separate-stderr cudaenv prefix $'a\xc2\x80b\xc2\x9fc \xe2\x80\x99\xc4\x80\xe2\x80\xa6 \xc2\xa0d'
    [ "$status" -eq 3 ]
    [[ "$stderr" == *$'\'a\\xc2\\x80b\\xc2\\x9fc \xe2\x80\x99\xc4\x80\xe2\x80\xa6 \xc2\xa0d\''* ]] || { printf '%s' "$stderr" | od -c; false; }
    [[ "$stderr" != *$'\xc2\x80'* && "$stderr" != *$'\xc2\x9f'* ]]
}

@test "local: a planted .cuda-version.tmp-* symlink never redirects the write" {
    echo 'export KEEP=1' > "$T/home/.bashrc"
    cd "$T/repo"
    # the names the old code used: .cuda-version.tmp-<pid>, for the next pids
    python3 - "$T/home/.bashrc" <<'PY'
import os, sys
last = int(open("/proc/sys/kernel/ns_last_pid").read())
for p in range(last + 1, last + 5000):
    os.symlink(sys.argv[1], ".cuda-version.tmp-%d" % p)
PY
    for i in 1 2 3 4 5; do cudaenv local 11.8; done
    [ "$(cat "$T/home/.bashrc")" = 'export KEEP=1' ]
    [ "$(cat .cuda-version)" = 11.8 ]
    [ ! -L .cuda-version ]
}

@test "FIFOs as \$CUDAENV_ROOT/global and as a receipt are refused, never opened blocking" {
    mkfifo "$CUDAENV_ROOT/global"
    cd "$T/elsewhere"
    run --separate-stderr timeout 20 cudaenv current
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"$CUDAENV_ROOT/global is not a regular file"* ]]
    run timeout 20 cudaenv env --shell bash
    [ "$status" -eq 1 ]
    rm "$CUDAENV_ROOT/global"
    rm -f "$P117/.cudaenv-receipt.json"
    mkfifo "$P117/.cudaenv-receipt.json"
    run timeout 20 cudaenv verify 11.7 --json
    [ "$status" -ne 124 ]
    run timeout 20 cudaenv info 11.7
    [ "$status" -ne 124 ]
}

@test "a working directory deeper than PATH_MAX: the pin applies (binary and hook)" {
    echo 11.7 > "$T/repo/.cuda-version"
    cd "$T/repo"
    # 60 levels of 100 characters: about 6000 bytes
    seg=$(printf 'd%.0s' $(seq 100))
    for i in $(seq 60); do mkdir "$seg" && cd "$seg"; done
    [ "${#PWD}" -gt 4096 ]
    run --separate-stderr cudaenv current
    [ "$status" -eq 0 ]
    [[ "$output" == "11.7.0 (set by $T/repo/.cuda-version)" ]]
    run bash --norc -c 'eval "$(cudaenv init bash)"; echo "home=$CUDA_HOME"'
    [[ "$output" == *"home=$P117"* ]]
}

@test "init fish: a binary path with a backslash-quote cannot inject code into fish" {
    command -v fish >/dev/null || skip "no fish"
    # a directory name that ends a POSIX-quoted string in fish and runs code
    d="$T/x\\';echo INJECTED;'"
    mkdir -p "$d/bin"
    cp "$CUDAENV" "$d/bin/cudaenv"
    "$d/bin/cudaenv" init fish > "$T/init.fish"
    run fish --no-config -c "source '$T/init.fish'; echo \"bin=\$__CUDAENV_BIN\""
    ! grep -qx INJECTED <<<"$output" || false
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = "bin=$d/bin/cudaenv" ]
}
