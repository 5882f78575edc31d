#!/usr/bin/env bats
# The command-line contract: help, version, usage errors and their exit codes.
load ../lib/common

setup() { common_setup; }
teardown() { common_teardown; }

@test "--version prints the version on stdout" {
    run "$CUDAENV" --version
    [ "$status" -eq 0 ]
    [[ "$output" =~ ^cudaenv\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
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
    for c in install uninstall list list-remote ls-remote info prefix init use env local global current which exec verify doctor adopt cache; do
        run "$CUDAENV" "$c" --help
        [ "$status" -eq 0 ] || { echo "$c --help: $status"; false; }
        [[ "$output" == *"usage: cudaenv ${c/ls-remote/list-remote}"* ]] || { echo "$c: $output"; false; }
    done
}

@test "the light binary links none of libcurl, libarchive, libcrypto" {
    run ldd "$CUDAENV"
    [ "$status" -eq 0 ]
    [[ "$output" != *libcurl* && "$output" != *libarchive* && "$output" != *libcrypto* ]]
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
    ! grep -q libcjson "$T/st"
    strace -f -qq -e trace=openat -o "$T/st" "$CUDAENV" list --json >/dev/null
    grep -q libcjson "$T/st"
    run "$CUDAENV" list --json
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; json.load(sys.stdin)' <<<"$output"
}
