#!/usr/bin/env bats
# A pin's content is printed by no command (issues 35 point 4, 36): a
# .cuda-version or global default holding a token in spec characters
# (hunter2-secret-token, hvs.SECRETTOKEN: a symlink to ~/.vault-token
# reads as one line) is named by its file only, with and without -q, on
# stdout and stderr alike.  One test per command that reads the pin in
# effect; a valid pin that resolves is still named (install.bats).
load ../lib/common
load ../lib/mirror
bats_require_minimum_version 1.5.0

setup_file() { mirror_setup_file; }

setup() {
    switch_setup
    mirror_manifest "file://$MIRROR"
    mkdir -p "$T/repo/sub"
    export T P118 P117 P123
}
teardown() { common_teardown; }

# no_leak CMD [ARG...]: CMD run as given, with -q before and after it
# (after only when it has no "--"), under each secret as .cuda-version and
# then as the global default; the secret is in no output, and a pin that
# fails names its file
no_leak() {
    local secret where q args
    for secret in hunter2-secret-token hvs.SECRETTOKEN; do
        for where in file global; do
            rm -f "$T/repo/.cuda-version" "$CUDAENV_ROOT/global"
            echo "$secret" > "$T/home/.vault-token"
            if [ $where = file ]; then ln -s "$T/home/.vault-token" "$T/repo/.cuda-version"
            else cp "$T/home/.vault-token" "$CUDAENV_ROOT/global"; fi
            for q in none pre post; do
                args=("$@")
                case $q in
                pre) args=(-q "$@") ;;
                post) [[ " $* " == *" -- "* ]] && continue; args=("$@" -q) ;;
                esac
                cd "$T/repo/sub"
                run --separate-stderr "$CUDAENV" "${args[@]}"
                cd "$T"
                [[ "$output$stderr" != *SECRET* && "$output$stderr" != *secret* && "$output$stderr" != *hunter2* ]] ||
                    { echo "$where $secret: ${args[*]} leaked: $output $stderr"; false; }
                if [ "$status" -ne 0 ] && [[ "$stderr" == *"content not shown"* ]]; then
                    [[ "$stderr" == *"$T/repo/.cuda-version: "* || "$stderr" == *"$CUDAENV_ROOT/global: "* ]] ||
                        { echo "names no file: $stderr"; false; }
                fi
            done
        done
    done
}

@test "pin secret: install with no SPEC names the pin's file, never its content (also --offline, -q)" {
    no_leak install
    no_leak install --offline
    # and it fails as a pin that names nothing: exit 3, before any lock or download
    echo hunter2-secret-token > "$T/repo/.cuda-version"
    cd "$T/repo/sub"
    run --separate-stderr "$CUDAENV" -q install
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"$T/repo/.cuda-version: no release of the manifest by that name, or not a spec (content not shown)"* ]]
    # a pin by its syntax that the manifest lacks is not echoed either
    echo 10.1 > "$T/repo/.cuda-version"
    run --separate-stderr "$CUDAENV" install
    [ "$status" -eq 3 ] && [[ "$stderr" == *"(content not shown)"* && "$stderr" != *10.1* ]]
}
@test "pin secret: current" { no_leak current; no_leak current --json; }
@test "pin secret: prefix" { no_leak prefix; }
@test "pin secret: which" { no_leak which nvcc; }
@test "pin secret: env" { no_leak env --shell bash; no_leak env --shell fish; no_leak env --shell json; }
@test "pin secret: local" { no_leak local; }
@test "pin secret: global" { no_leak global; }
@test "pin secret: list" { no_leak list; no_leak list --json; }
@test "pin secret: verify" { no_leak verify; no_leak verify --json; }
@test "pin secret: doctor" { no_leak doctor; no_leak doctor --json; }
@test "pin secret: exec and use without VERSION" { no_leak exec -- true; no_leak use; }
@test "pin secret: uninstall (checks the active selection)" { no_leak uninstall 12.3.0; }
