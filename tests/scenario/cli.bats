#!/usr/bin/env bats
# The command-line contract: help, version, usage errors and their exit codes.
load ../lib/common
bats_require_minimum_version 1.5.0

setup() { common_setup; }
teardown() { common_teardown; }

@test "--version prints the version on stdout, then the manifest's source and date" {
    run "$CUDAENV" --version
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^cudaenv\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
    d=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["updated"])' "$REPO/share/manifests/cudaenv.json")
    [[ "${lines[1]}" == "manifest "*"/share/cudaenv/manifests/cudaenv.json (built-in), dated $d" ]]
    CUDAENV_MANIFEST=https://127.0.0.1:9/m.json run "$CUDAENV" --version
    [ "${lines[1]}" = "manifest https://127.0.0.1:9/m.json (no local copy yet: cudaenv update)" ]
    # the date is read from the manifest's top-level "updated", not by parsing all of it (issue 43:
    # --version at the cost of /bin/true): a nested "updated" first, a tail never read
    printf '{"schema": 1, "cuda": {"x": {"updated": "1999-01-01"}}, "updated": "2031-02-03", "tensorflow": {' > "$T/m.json"
    CUDAENV_MANIFEST=$T/m.json run "$CUDAENV" --version
    [ "$status" -eq 0 ]
    [ "${lines[1]}" = "manifest $T/m.json, dated 2031-02-03" ] || { echo "$output"; false; }
    # what decides still parses it whole: the same file is refused by info (exit 5)
    CUDAENV_MANIFEST=$T/m.json run "$CUDAENV" info 11.8
    [ "$status" -eq 5 ]
    # no top-level string "updated": the manifest is parsed for it, as before
    printf '{"schema": 1, "updated": 5}' > "$T/m.json"
    CUDAENV_MANIFEST=$T/m.json run "$CUDAENV" --version
    [ "$status" -eq 0 ]
    [ "${lines[1]}" = "manifest $T/m.json, dated ?" ] || { echo "$output"; false; }
}

@test "no command is a usage error (exit 2)" {
    run "$CUDAENV"
    [ "$status" -eq 2 ]
    [[ "$output" == *"usage: cudaenv"* ]]
}

@test "unknown command exits 2 and names it" {
    run "$CUDAENV" frobnicate
    [ "$status" -eq 2 ]
    [[ "$output" == *"unknown command 'frobnicate'"* ]]
}

@test "every command has --help (exit 0, usage on stdout)" {
    # every command of the table (cudaenv --help lists them), and the aliases
    local cmds
    cmds=$("$CUDAENV" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p')
    [ "$(wc -w <<<"$cmds")" -ge 28 ]
    for c in $cmds ls ls-remote; do
        for h in --help "-q -h" "help"; do
            if [ "$h" = help ]; then run "$CUDAENV" help "$c"; else run "$CUDAENV" "$c" $h; fi
            [ "$status" -eq 0 ] || { echo "$c $h: $status"; false; }
            # the first line is the usage line naming the command
            [[ "${lines[0]} " == "usage: cudaenv ${c/#ls/list} "* ]] || { echo "$c $h: $output"; false; }
        done
        # the full binary's entries are the light one's (the commands that need
        # it are compiled twice: src/cli/cli.h FULL_ONLY)
        [ "$("$CUDAENV_FULL" "$c" --help)" = "$("$CUDAENV" "$c" --help)" ] || { echo "$c: full differs"; false; }
    done
    [ "$("$CUDAENV_FULL" --help)" = "$("$CUDAENV" --help)" ]
}

@test "--help stays in the light binary: no cudaenv-full, no manifest, no libcurl (also for install, mirror, push, pull, self, update)" {
    command -v strace >/dev/null || skip "no strace"
    readelf -d "$CUDAENV" | grep -q libasan && skip "sanitizer build (make check-asan)"
    local cmds c h
    cmds=$("$CUDAENV" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p')
    for c in $cmds; do
        for h in "$c --help" "help $c"; do
            strace -f -qq -e trace=execve,open,openat -o "$T/st" "$CUDAENV" $h >/dev/null
            [ "$(grep -c 'execve(' "$T/st")" -eq 1 ] || { echo "$h:"; cat "$T/st"; false; }
            ! grep -E 'cudaenv-full|libcurl|libarchive|\.json' "$T/st" || { echo "$h opened them"; false; }
        done
    done
    # the check sees a re-exec: running install does need the full binary
    strace -f -qq -e trace=execve -o "$T/st" "$CUDAENV" install --bogus 2>/dev/null || true
    grep -q 'cudaenv-full' "$T/st"
}

# The commands the binary knows (cudaenv --help's list, their aliases, help)
# are the ones the completions offer and the man page describes: a command
# added, renamed or dropped in one of them alone fails here.
@test "help, completions (bash, zsh, fish) and the man page name the same commands" {
    local listed w src missing=
    listed=$("$CUDAENV" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p' | sort)
    [ "$(wc -l <<<"$listed")" -ge 28 ]
    sed -n 's/^ *local cmds="\(.*\)"$/\1/p' "$REPO/completions/cudaenv.bash" | tr ' ' '\n' | sort -u >"$T/bash"
    sed -n 's/^set -l __cudaenv_cmds //p' "$REPO/completions/cudaenv.fish" | tr ' ' '\n' | sort -u >"$T/fish"
    sed -n "/^    cmds=(\$/,/^    )\$/s/^ *'\([a-z-]*\):.*/\1/p" "$REPO/completions/_cudaenv" | sort -u >"$T/zsh"
    # man: the first word after each .TP of COMMANDS (.BR: every bold word)
    awk '/^\.SH COMMANDS/ { f = 1; next } /^\.SH/ { f = 0 }
         f && tp && $1 == ".B" { print $2 }
         f && tp && $1 == ".BR" { gsub(/"[^"]*"/, ""); for (i = 2; i <= NF; i++) print $i }
         { tp = $0 == ".TP" }' "$REPO/man/cudaenv.1" | sed 's/\\-/-/g' | sort -u >"$T/man"
    for src in bash fish zsh man; do
        [ "$(wc -l <"$T/$src")" -ge 28 ] || { echo "$src: extraction found $(wc -l <"$T/$src")"; false; }
        # every command the binary lists is offered / described ...
        for w in $listed; do grep -qx -- "$w" "$T/$src" || missing+=" $src lacks $w;"; done
        # ... and every word there is one the binary knows (help W: exit 0)
        for w in $(cat "$T/$src"); do
            "$CUDAENV" help "$w" >/dev/null 2>&1 || missing+=" $src names unknown $w;"
        done
    done
    # the completions also offer the aliases and help
    for src in bash fish zsh; do
        for w in ls ls-remote help; do grep -qx -- "$w" "$T/$src" || missing+=" $src lacks $w;"; done
    done
    [ -z "$missing" ] || { echo "drift:$missing"; false; }
}

@test "help COMMAND prints exactly what COMMAND --help prints; help of an unknown command is exit 2 with the nearest" {
    local cmds c
    cmds=$("$CUDAENV" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p')
    for c in $cmds ls ls-remote; do
        [ "$("$CUDAENV" help "$c")" = "$("$CUDAENV" "$c" --help)" ] || { echo "help $c differs"; false; }
    done
    run --separate-stderr "$CUDAENV" help instal
    [ "$status" -eq 2 ] && [ -z "$output" ] || false
    [[ "$stderr" == *"help: unknown command 'instal'; did you mean 'install'?"* ]] || { echo "$stderr"; false; }
    run --separate-stderr "$CUDAENV" help frobnicate
    [ "$status" -eq 2 ] && [ -z "$output" ] || false
    [[ "$stderr" == *"unknown command 'frobnicate'"* ]] || { echo "$stderr"; false; }
    # help alone (and help help): the overview, which says how to get a command's help
    run "$CUDAENV" help
    [ "$status" -eq 0 ] && [[ "$output" == *"cudaenv help COMMAND"* ]] || false
    [ "$("$CUDAENV" help help)" = "$output" ]
}

@test "every option a command's table declares is in its --help (global --unset included)" {
    local f cmd o missing=
    for f in "$REPO"/src/cli/cmd_*.c; do
        cmd=${f##*/cmd_}; cmd=${cmd%.c}; cmd=${cmd//_/-}
        for o in $(sed -n '/^static const cli_opt cmd_[a-z_]*_opts\[\] = {$/,/^};$/p' "$f" | grep -o '{ "[a-z-]*"' | tr -d '{" '); do
            # use --shell is the shell function's (cudaenv init passes it), not the user's
            [ "$cmd --$o" != "use --shell" ] || continue
            "$CUDAENV" "$cmd" --help | grep -q -- "--$o\b" || missing+=" $cmd --$o"
        done
    done
    [ -z "$missing" ] || { echo "not in --help:$missing"; false; }
    run "$CUDAENV" global --help
    [[ "${lines[0]}" == "usage: cudaenv global [VERSION|system | --unset]" ]] || { echo "$output"; false; }
}

@test "usage errors: what each command's table entry declares, from one parser, exit 2 (light and full binary)" {
    while IFS='|' read -r args msg; do
        run --separate-stderr "$CUDAENV" $args
        [ "$status" -eq 2 ] || { echo "$args: exit $status"; false; }
        local cmd=${args%% *}
        [ "$stderr" = "cudaenv $cmd: $msg"$'\n'"Try 'cudaenv $cmd --help'." ] || { echo "$args: $stderr"; false; }
        [ -z "$output" ]
    done <<'EOF'
uninstall a b|one toolchain at a time (got a and b)
info|which SPEC? e.g. cudaenv info tf-2.14
info a b|one SPEC at a time (got 'a' and 'b')
list x|unexpected argument 'x'
list --json=1|option --json takes no value
which a b|one CMD only
init bash -o|option -o needs a value
init bash --bogus|unknown option --bogus
env -x|unknown option -x
env --shell tcsh|unknown shell 'tcsh' (bash, zsh, fish, json, dotenv)
use|which toolchain? (cudaenv list shows the installed ones)
jupyter install a b|one VERSION only (got 'a' and 'b')
exec 11.8|usage: cudaenv exec [VERSION] -- CMD [ARG...]
install|which toolchain? nothing is pinned here (no .cuda-version in this directory or above, no global default); e.g. cudaenv install tf-2.14, or --for PYTHON, or pin one first: cudaenv local tf-2.14
install --bogus x|unknown option --bogus
mirror --to|option --to needs a value
EOF
}

@test "the light binary links none of libcurl, libarchive, libcrypto" {
    run ldd "$CUDAENV"
    [ "$status" -eq 0 ]
    [[ "$output" != *libcurl* && "$output" != *libarchive* && "$output" != *libcrypto* ]]
}

@test "env does no work at start-up it does not need: no readlink of /proc/self/exe, no uname, no CUDAENV_* read after start" {
    command -v strace >/dev/null || skip "no strace"
    # a sanitizer runtime reads /proc/self/exe itself and must come first in LD_PRELOAD
    readelf -d "$CUDAENV" | grep -q libasan && skip "sanitizer build (make check-asan)"
    fx_installed 11.8.0 >/dev/null
    # (as root a CUDAENV_SYSROOT is resolved and checked by every command,
    # core/trust.h: env's start-up is measured without one, as it runs)
    local sysroot=$CUDAENV_SYSROOT   # the system switch below must stay inside it (never the real /usr/local)
    unset CUDAENV_SYSROOT
    strace -f -qq -e trace=readlink,readlinkat,uname -o "$T/st" "$CUDAENV" env 11.8 --shell bash >/dev/null
    ! grep -q -e /proc/self/exe -e 'uname(' "$T/st" || { cat "$T/st"; false; }
    # settings and test seams come from the one pass of ce_ctx_init: no getenv of
    # CUDAENV_* afterwards (CUDAENV_VERSION, _LIBS and _WARNED are the shell's
    # state, read where the environment is computed)
    printf '%s\n' '#define _GNU_SOURCE' '#include <dlfcn.h>' '#include <stdio.h>' '#include <string.h>' \
        'char *getenv(const char *n) {' '    static char *(*real)(const char *);' \
        '    if (!real) real = (char *(*)(const char *))dlsym(RTLD_NEXT, "getenv");' \
        '    dprintf(2, "getenv %s\n", n);' '    return real(n);' '}' > "$T/genv.c"
    cc -shared -fPIC -o "$T/genv.so" "$T/genv.c" -ldl
    LD_PRELOAD=$T/genv.so "$CUDAENV" env 11.8 --shell bash 2>"$T/g1" >/dev/null
    LD_PRELOAD=$T/genv.so CUDAENV_DOCTOR_PYTHON=none "$CUDAENV" doctor 2>"$T/g2" >/dev/null || true
    [ -n "$sysroot" ] || { echo "no sysroot: refusing to switch the real machine"; false; }
    CUDAENV_SYSROOT=$sysroot LD_PRELOAD=$T/genv.so "$CUDAENV" -q global 11.8 --system 2>"$T/g3" >/dev/null || true
    grep -q -x 'getenv PATH' "$T/g1"   # the shim sees env's own reads
    cat "$T/g1" "$T/g2" "$T/g3" | grep '^getenv CUDAENV_' > "$T/g" || true
    [ -z "$(grep -v -x -e 'getenv CUDAENV_VERSION' -e 'getenv CUDAENV_LIBS' -e 'getenv CUDAENV_WARNED' "$T/g")" ] || { cat "$T/g"; false; }
}

@test "env makes the system calls a switch needs and no more (issue 13: each costs the start-up floor)" {
    command -v strace >/dev/null || skip "no strace"
    readelf -d "$CUDAENV" | grep -q libasan && skip "sanitizer build (make check-asan)"
    fx_installed 11.8.0 8.7.0.84 >/dev/null
    fx_installed 12.3.0 >/dev/null
    # main's own calls start at the store check's geteuid; the loader's come before it
    unset CUDAENV_SYSROOT   # checked as root when set (core/trust.h); env runs without one
    PATH=/usr/bin:/bin strace -f -qq -o "$T/st" "$CUDAENV" env 11.8 --shell bash >"$T/out"
    grep -q "^export CUDA_HOME=.*11.8.0+cudnn8.7.0.84" "$T/out"
    awk '/geteuid\(\)/ { f = 1 } f && !/exit_group/' "$T/st" | sed 's/^[0-9]* *//' > "$T/own"
    [ -s "$T/own" ]
    # a plain CUDAENV_ROOT is checked with one lstat per component, not realpath's
    # readlinks; no sort copy (glibc's qsort sizes one with sysinfo); the output is
    # one write(2), no stdio (fstat + ioctl of stdout), no look at stderr (env
    # prints nothing there); a toolchain directory is not stat'ed to be listed
    # (readdir's type says it), only lstat'ed by the root store check
    ! grep -E '^(readlink|sysinfo|ioctl)' "$T/own" || { cat "$T/own"; false; }
    ! grep -E '^(newfstatat|fstat)\(1,' "$T/own" || { cat "$T/own"; false; }
    [ "$(grep -c '^write(1,' "$T/own")" -eq 1 ]
    stats=$(grep -cE '^(newfstatat|stat|lstat|statx)\(.*(11\.8\.0\+cudnn8\.7\.0\.84|12\.3\.0)"' "$T/own" || true)
    if [ "$(id -u)" = 0 ]; then
        [ "$stats" -eq 2 ] || { cat "$T/own"; false; }
        # root: the store check (lstat per component of the store, its entries
        # and versions/'s) and the list; 27 when this test was written
        [ "$(wc -l < "$T/own")" -le 29 ] || { cat "$T/own"; false; }
    else
        [ "$stats" -eq 0 ] || { cat "$T/own"; false; }
        # geteuid, the list (open, getdents x2, close), malloc's start (getrandom,
        # brk x2), nvcc in PATH's two entries, the write: 11
        [ "$(wc -l < "$T/own")" -le 13 ] || { cat "$T/own"; false; }
    fi
}

@test "the light binary needs only libc and no big static TLS; libcjson is loaded on the first JSON use, never by env" {
    run readelf -d "$CUDAENV"
    [ "$status" -eq 0 ]
    # (a sanitizer build also needs its runtime: make check-asan)
    [ "$(grep NEEDED <<<"$output" | grep -Ev 'libc\.so|libasan\.so|libubsan\.so' || true)" = "" ]
    # no big static TLS either: ld.so zeroes it at every exec (64 KiB cost 16 page faults)
    tls=$(readelf -lW "$CUDAENV" | awk '$1 == "TLS" { print $6 }')
    [ $(( ${tls:-0} )) -lt 4096 ]
    command -v strace >/dev/null || skip "no strace"
    mkdir -p "$CUDAENV_ROOT/versions"
    # LeakSanitizer cannot run under ptrace (make check-asan)
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    strace -f -qq -e trace=openat -o "$T/st" "$CUDAENV" env system --shell bash >/dev/null
    ! grep -q libcjson "$T/st" || false
    strace -f -qq -e trace=openat -o "$T/st" "$CUDAENV" list --json >/dev/null
    grep -q libcjson "$T/st"
    run "$CUDAENV" list --json
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; json.load(sys.stdin)' <<<"$output"
}
