#!/usr/bin/env bats
# One root-owned store for the machine, every user picks their own default:
# a user who does not own $CUDAENV_ROOT keeps `global` in
# ${XDG_CONFIG_HOME:-~/.config}/cudaenv/global; the store's own global is the
# site default until they choose.  A real second user (useradd + runuser).
load ../lib/common
bats_require_minimum_version 1.5.0

U=cudaenv-test-user

setup_file() {
    [ "$(id -u)" -eq 0 ] || return 0
    command -v useradd >/dev/null && command -v runuser >/dev/null || return 0
    id "$U" >/dev/null 2>&1 || useradd -M -N -s /bin/bash "$U"
}

teardown_file() {
    [ "$(id -u)" -eq 0 ] && id "$U" >/dev/null 2>&1 && userdel "$U" 2>/dev/null || true
}

setup() {
    [ "$(id -u)" -eq 0 ] || skip "needs root (useradd, runuser)"
    id "$U" >/dev/null 2>&1 || skip "no second user (useradd/runuser missing)"
    common_setup
    chmod 755 "$T"
    export CUDAENV_ROOT=$T/opt/cudaenv
    P118=$(fx_installed 11.8.0)
    P123=$(fx_installed 12.3.0)
    chmod -R a+rX "$T/opt"
    UH=$T/home-user
    mkdir -p "$UH" && chown "$U" "$UH"
}
teardown() { [ -n "${T:-}" ] && common_teardown; }

# run cudaenv (or a shell line) as the second user, with their own HOME
as_user() { runuser -u "$U" -- env -i PATH="$BUILD/bin:/usr/bin:/bin" HOME="$UH" CUDAENV_ROOT="$CUDAENV_ROOT" NO_COLOR=1 "$@"; }

@test "a user's global beside a root-owned store goes to ~/.config/cudaenv, the store stays untouched" {
    "$CUDAENV" global 12.3.0          # root: the site default
    run --separate-stderr as_user cudaenv current
    [ "$status" -eq 0 ]
    [[ "$output" == "12.3.0"*"$CUDAENV_ROOT/global"* ]]
    run --separate-stderr as_user cudaenv global 11.8.0
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$(cat "$UH/.config/cudaenv/global")" = "11.8.0" ]
    [ "$(stat -c %U "$UH/.config/cudaenv/global")" = "$U" ]
    [ "$(cat "$CUDAENV_ROOT/global")" = "12.3.0" ]
    run --separate-stderr as_user cudaenv current
    [[ "$output" == "11.8.0"*"$UH/.config/cudaenv/global"* ]]
    run as_user cudaenv global
    [ "$output" = "11.8.0" ]
    # root still sees the site default
    run "$CUDAENV" current
    [[ "$output" == "12.3.0"* ]]
    # --unset drops the user's choice only: the site default applies again
    run --separate-stderr as_user cudaenv global --unset
    [ "$status" -eq 0 ]
    [ ! -e "$UH/.config/cudaenv/global" ] && [ -e "$CUDAENV_ROOT/global" ] || false
    run as_user cudaenv global
    [ "$output" = "12.3.0" ]
}

@test "XDG_CONFIG_HOME is honoured; the bash hook follows the user's own default" {
    run --separate-stderr as_user XDG_CONFIG_HOME="$UH/cfg" cudaenv global 11.8.0
    [ "$status" -eq 0 ]
    [ -f "$UH/cfg/cudaenv/global" ]
    run as_user XDG_CONFIG_HOME="$UH/cfg" bash --norc -c 'eval "$(cudaenv init bash)"; echo "$CUDA_HOME"'
    [ "$output" = "$P118" ]
}

@test "changing a shared store as another user: exit 6 naming its owner and both ways out" {
    run --separate-stderr as_user cudaenv uninstall 11.8.0
    [ "$status" -eq 6 ]
    [[ "$stderr" == *"the store $CUDAENV_ROOT belongs to root and is read-only to you"* ]]
    [[ "$stderr" == *"sudo CUDAENV_ROOT=$CUDAENV_ROOT cudaenv"*"CUDAENV_ROOT=~/.cudaenv"* ]]
    [ -d "$P118" ]
}

@test "the store's owner keeps global in the store" {
    "$CUDAENV" global 11.8.0
    [ "$(cat "$CUDAENV_ROOT/global")" = "11.8.0" ]
    [ ! -e "$HOME/.config/cudaenv/global" ]
}

@test "~/.config/cudaenv/global -> ~/.vault-token: the token is printed by no command nor the bash/zsh hook (issue 21)" {
    mkdir -p "$UH/.config/cudaenv" "$UH/w"
    ln -s "$UH/.vault-token" "$UH/.config/cudaenv/global"
    chown -R "$U" "$UH"
    g=$UH/.config/cudaenv/global
    for secret in hvs.SECRETTOKEN KEY=SECRET; do
        echo "$secret" > "$UH/.vault-token" && chown "$U" "$UH/.vault-token" && chmod 600 "$UH/.vault-token"
        for cmd in current "current --json" "env --shell bash" prefix "which nvcc" global "list --json" doctor; do
            run --separate-stderr as_user CUDAENV_DOCTOR_PYTHON=none sh -c "cd '$UH/w' && cudaenv $cmd"
            [[ "$output$stderr" != *SECRET* ]] || { echo "$cmd leaked: $output $stderr"; false; }
            case $cmd in list*|doctor) ;; *)
                [ "$status" -eq 3 ] || { echo "$cmd: $status $stderr"; false; }
                [[ "$stderr" == *"$g: no such toolchain or spec (content not shown)"* ]] ;;
            esac
        done
        for sh in bash zsh; do
            command -v $sh >/dev/null || continue
            run as_user timeout -s KILL 20 $sh -c "cd '$UH/w'; eval \"\$(cudaenv init $sh)\"; __cudaenv_hook; echo home=\${CUDA_HOME-unset}"
            [[ "$output" != *SECRET* ]] || { echo "$sh leaked: $output"; false; }
            [[ "$output" == *"content not shown"*"home=unset"* ]] || { echo "$sh: $output"; false; }
        done
    done
}

# issue 43: the store's resolution index is root's; once the manifest moves a
# user cannot refresh it, and kept their own copy instead of reparsing the
# manifest on every prompt
@test "a shared store's stale index: a user resolves tf-X through their own copy in ~/.cache/cudaenv (the manifest read once), root never reads it" {
    command -v strace >/dev/null || skip "no strace"
    P=$(fx_installed 11.8.0 8.7.0.84)
    chmod -R a+rX "$T/opt"
    cp "$REPO/share/manifests/cudaenv.json" "$T/manifest.json" && chmod 644 "$T/manifest.json"
    export CUDAENV_MANIFEST=$T/manifest.json
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P" ]          # root writes the store's index
    [ -f "$CUDAENV_ROOT/versions/.index" ]
    printf '\n' >> "$T/manifest.json"                   # the site updates the manifest: stale for the user
    user_opens() {   # does the user's `cudaenv prefix tf-2.14` open the manifest?
        # (LeakSanitizer cannot run under ptrace: off for check-asan, as the other strace tests have it)
        strace -f -qq -e trace=open,openat -o "$T/st" runuser -u "$U" -- env -i PATH="$BUILD/bin:/usr/bin:/bin" \
            HOME="$UH" CUDAENV_ROOT="$CUDAENV_ROOT" CUDAENV_MANIFEST="$CUDAENV_MANIFEST" ASAN_OPTIONS=detect_leaks=0 \
            cudaenv prefix tf-2.14 >"$T/out" 2>&1
        [ "$(cat "$T/out")" = "$P" ] || { cat "$T/out"; return 2; }
        grep -qF "\"$CUDAENV_MANIFEST\"" "$T/st"
    }
    run user_opens
    [ "$status" -eq 0 ]                                  # the first call reads it, once
    own=$(ls "$UH"/.cache/cudaenv/index-*)
    [ "$(stat -c '%U %a' "$own")" = "$U 600" ] && [ "$(stat -c '%U %a' "$UH/.cache/cudaenv")" = "$U 700" ] || false
    grep -q "^manifest $(sha256sum "$T/manifest.json" | cut -d' ' -f1) " "$own"
    [ "$(stat -c %U "$CUDAENV_ROOT/versions/.index")" = root ]
    run user_opens
    [ "$status" -eq 1 ]                                  # the next ones answer from the copy
    run user_opens
    [ "$status" -eq 1 ]
    # the manifest moves again: the copy follows it (same rules as the store's)
    printf '\n' >> "$T/manifest.json"
    run user_opens
    [ "$status" -eq 0 ]
    grep -q "^manifest $(sha256sum "$T/manifest.json" | cut -d' ' -f1) " "$own"
    # root, with the user's HOME (sudo -E), and the store's index stale: a
    # forged copy is not read (root refreshes the store's own)
    sed -i 's/^tf 2.14 .*/tf 2.14 12.3.0 -/' "$own"
    run env HOME="$UH" XDG_CACHE_HOME="$UH/.cache" "$CUDAENV" prefix tf-2.14
    [ "$status" -eq 0 ] && [ "$output" = "$P" ] || false
}
