#!/usr/bin/env bats
# Completions through each shell's own machinery: bash (complete -p + the
# function with COMP_WORDS), zsh (an interactive zsh in a pty with compinit,
# tests/lib/zcomp.zsh), fish (complete -C).  Remote specs come from the
# manifest (tf-* rows, CUDA releases), components from its cuDNN releases;
# global options before the command do not hide it.  And env --shell dotenv.
load ../lib/common
bats_require_minimum_version 1.5.0

setup() {
    switch_setup
    export T P118 P117 P123
}
teardown() { common_teardown; }

# every word of $1 starts with $2 and $1 contains the word $3
all_start_with() { local w; for w in $1; do [[ $w == "$2"* ]] || return 1; done; [[ " $1 " == *" $3 "* ]]; }

@test "bash: tf-* specs, components, --cudnn, commands after global options" {
    run bash --norc -c '
        eval "$(cudaenv init bash)"
        complete -p cudaenv
        c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _cudaenv; echo "${COMPREPLY[*]}"; }
        c cudaenv install tf-2.1
        c cudaenv info 11.8.0+cudnn8.9
        c cudaenv install --cudnn 8.9
        c cudaenv --manifest /nonexistent.json -v ins
        c cudaenv -q use ""
        c cudaenv ""
        c cudaenv env 11.8 --shell d
        c cudaenv list-remote --n
        c cudaenv cache ""
        c cudaenv adopt --s'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "complete -F _cudaenv cudaenv" ]
    all_start_with "${lines[1]}" tf-2.1 tf-2.14
    all_start_with "${lines[2]}" 11.8.0+cudnn8.9 11.8.0+cudnn8.9.7.29
    all_start_with "${lines[3]}" 8.9 8.9.7.29
    [ "${lines[4]}" = "install" ]
    [ "${lines[5]}" = "11.7.0 11.8.0+cudnn8.7.0.84 12.3.0 system" ]
    for cmd in install uninstall list list-remote info prefix init use env local global current which exec verify doctor deactivate help; do
        [[ " ${lines[6]} " == *" $cmd "* ]] || { echo "missing $cmd"; false; }
    done
    [ "${lines[7]}" = "dotenv" ]
    [ "${lines[8]}" = "--names" ]
    [ "${lines[9]}" = "dir list clean prune" ]
    [ "${lines[10]}" = "--scan" ]
    for cmd in adopt cache; do [[ " ${lines[6]} " == *" $cmd "* ]]; done
}

@test "zsh: compinit + _cudaenv in an interactive pty: tf-* specs, components, commands" {
    export ZCOMP_FPATH=$REPO/completions __CUDAENV_BIN=$CUDAENV
    z() { timeout 60 zsh -f "$REPO/tests/lib/zcomp.zsh" "$1" | tr '\n' ' ' | sed 's/ $//'; }
    out=$(z 'cudaenv install tf-2.1')
    all_start_with "$out" tf-2.1 tf-2.14
    out=$(z 'cudaenv install 11.8.0+cudnn8.9')
    all_start_with "$out" 11.8.0+cudnn8.9 11.8.0+cudnn8.9.7.29
    out=$(z 'cudaenv -v --manifest share/manifests/cudaenv.json use ')
    [ "$out" = "11.7.0 11.8.0+cudnn8.7.0.84 12.3.0 system" ]
    out=$(z 'cudaenv verif')
    [ "$out" = "verify" ]
    out=$(z 'cudaenv env 11.8 --shell ')
    [ "$out" = "bash zsh fish json dotenv" ]
    out=$(z 'cudaenv cache ')
    [ "$out" = "dir list clean prune" ]
    out=$(z 'cudaenv ado')
    [ "$out" = "adopt" ]
}

@test "fish: complete -C: tf-* specs, components, --cudnn, commands" {
    run fish --no-config -c '
        cudaenv init fish | source
        function c; complete -C "$argv" | string replace -r "\t.*" "" | string join " "; or echo; end
        c "cudaenv install tf-2.1"
        c "cudaenv install 11.8.0+cudnn8.9"
        c "cudaenv install --cudnn 8.9"
        c "cudaenv -v use "
        c "cudaenv verif"
        c "cudaenv env 11.8 --shell d"
        c "cudaenv cache "
        c "cudaenv ado"; true'
    [ "$status" -eq 0 ]
    all_start_with "${lines[0]}" tf-2.1 tf-2.14
    all_start_with "${lines[1]}" 11.8.0+cudnn8.9 11.8.0+cudnn8.9.7.29
    all_start_with "${lines[2]}" 8.9 8.9.7.29
    [ "${lines[3]}" = "11.7.0 11.8.0+cudnn8.7.0.84 12.3.0 system" ]
    [ "${lines[4]}" = "verify" ]
    [ "${lines[5]}" = "dotenv" ]
    [ "${lines[6]}" = "clean dir list prune" ]
    [ "${lines[7]}" = "adopt" ]
}

@test "list-remote --names: bare specs, installable TF rows only" {
    run cudaenv list-remote tf --names
    [ "$status" -eq 0 ]
    [[ " ${lines[*]} " == *" tf-2.14 "* ]]
    for l in "${lines[@]}"; do [[ $l == tf-[0-9]* && $l != *" "* ]]; done
    run cudaenv list-remote cudnn --names
    [[ " ${lines[*]} " == *" 8.9.7.29 "* ]]
}

@test "env --shell dotenv: KEY=VALUE lines that docker --env-file / GITHUB_ENV read" {
    run --separate-stderr cudaenv env 11.8 --shell dotenv
    [ "$status" -eq 0 ]
    for l in "${lines[@]}"; do [[ $l =~ ^[A-Z_]+=[^\']*$ ]] || { echo "bad line: $l"; false; }; done
    [[ " ${lines[*]} " == *" CUDA_HOME=$P118 "* ]]
    [[ "$output" != *export* && "$output" != *unset* ]]
    # read back the way a KEY=VALUE consumer does (split at the first =)
    while IFS='=' read -r k v; do [ "$k" = PATH ] && p=$v; done <<<"$output"
    [[ $p == "$P118/bin:"* ]]
}

@test "global offers system (the machine's own CUDA, also with --system) in bash, zsh and fish" {
    run bash --norc -c '
        eval "$(cudaenv init bash)"
        c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _cudaenv; echo "${COMPREPLY[*]}"; }
        c cudaenv global sy
        c cudaenv global --system sy'
    [ "${lines[0]}" = system ] && [ "${lines[1]}" = system ] || false
    export ZCOMP_FPATH=$REPO/completions __CUDAENV_BIN=$CUDAENV
    [ "$(timeout 60 zsh -f "$REPO/tests/lib/zcomp.zsh" 'cudaenv global sy' | tr '\n' ' ' | sed 's/ $//')" = system ]
    run fish --no-config -c '
        cudaenv init fish | source
        complete -C "cudaenv global sy" | string replace -r "\t.*" ""
        complete -C "cudaenv global --system sy" | string replace -r "\t.*" ""; true'
    [ "${lines[0]}" = system ] && [ "${lines[1]}" = system ]
}

# "CMD --opt" for every option the command table declares (commands as data:
# each src/cli/cmd_X.c holds `static const cli_opt cmd_X_opts[]`, which its
# table entry cli_cmd_X names), plus the global options every command takes.
table_opts() {
    local f cmd o
    for f in "$REPO"/src/cli/cmd_*.c; do
        cmd=${f##*/cmd_}; cmd=${cmd%.c}; cmd=${cmd//_/-}
        for o in $(sed -n '/^static const cli_opt cmd_[a-z_]*_opts\[\] = {$/,/^};$/p' "$f" | grep -o '{ "[a-z-]*"' | tr -d '{" '); do
            echo "$cmd --$o"
        done
        for o in help quiet verbose; do echo "$cmd --$o"; done
    done
}

@test "completions name every option the command table declares (bash, zsh, fish)" {
    table_opts >"$T/all"
    # the extraction finds every options table the entries name, and their entries
    local n_table n_found
    n_table=$(cat "$REPO"/src/cli/cmd_*.c | grep -o '\.opts = \(FULL_ONLY(\)\?cmd_[a-z_]*_opts' | wc -l)
    n_found=$(grep -v -- ' --\(help\|quiet\|verbose\)$' "$T/all" | cut -d' ' -f1 | sort -u | wc -l)
    [ "$n_table" -ge 18 ] && [ "$n_table" -eq "$n_found" ] || false
    grep -qx 'install --module-format' "$T/all" && grep -qx 'env --json' "$T/all" && grep -qx 'doctor --json' "$T/all" || false
    # use --shell is left out: the shell function from `cudaenv init` passes it
    grep -vx 'use --shell' "$T/all" >"$T/opts"
    local missing= cmd opt
    # bash and fish through their own machinery: what `cudaenv CMD --<TAB>` offers
    bash --norc -c '
        eval "$(cudaenv init bash)"
        for cmd in $(cut -d" " -f1 "$1" | sort -u); do
            COMP_WORDS=(cudaenv $cmd --); COMP_CWORD=2; COMPREPLY=(); _cudaenv
            echo "$cmd ${COMPREPLY[*]}"
        done' _ "$T/opts" >"$T/bash"
    fish --no-config -c '
        cudaenv init fish | source
        for cmd in (cut -d" " -f1 $argv[1] | sort -u)
            echo $cmd (complete -C "cudaenv $cmd --" | string replace -r "\t.*" "")
        end' "$T/opts" >"$T/fish"
    while read -r cmd opt; do
        [[ " $(grep "^$cmd " "$T/bash") " == *" $opt "* ]] || missing+=" bash:$cmd:$opt"
        [[ " $(grep "^$cmd " "$T/fish") " == *" $opt "* ]] || missing+=" fish:$cmd:$opt"
        # zsh: the command's line of `case $sub in ... opts+=(...)`, or the common opts
        grep -Eq "^ +opts=\(.*$opt( |\))|^ +([a-z|-]+\|)?$cmd(\|[a-z|-]+)?\) opts\+=\(.*$opt( |\))" \
            "$REPO/completions/_cudaenv" || missing+=" zsh:$cmd:$opt"
    done <"$T/opts"
    [ -z "$missing" ] || { echo "not completed:$missing"; false; }
}

@test "bash: names under versions/ are never evaluated: \$(...), backticks and \${...} do not run (issue 21)" {
    # (manifest versions cannot carry these: the manifest's keys are validated)
    mkdir -p "$CUDAENV_ROOT/versions/\$(touch pwned1)" "$CUDAENV_ROOT/versions/\`touch pwned2\`" \
             "$CUDAENV_ROOT/versions/\${PWNED:=x}" "$CUDAENV_ROOT/versions/a b" "$CUDAENV_ROOT/versions/*"
    cd "$T"
    run bash --norc -c '
        eval "$(cudaenv init bash)"
        c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _cudaenv; printf "%s\n" "${COMPREPLY[@]}"; echo ---; }
        c cudaenv use ""
        c cudaenv exec ""
        c cudaenv uninstall "\$"
        c cudaenv jupyter install ""
        echo "PWNED=${PWNED-unset}"'
    [ "$status" -eq 0 ]
    [ ! -e "$T/pwned1" ] && [ ! -e "$T/pwned2" ] || { echo "ran: $output"; false; }
    [[ "$output" == *"PWNED=unset"* ]]
    # offered quoted: accepting the completion inserts an inert word
    [ "${lines[0]}" = '\$\(touch\ pwned1\)' ] || { echo "$output"; false; }
    [[ " ${lines[*]} " == *' \`touch\ pwned2\` '* && " ${lines[*]} " == *' a\ b '* ]]
    [[ " ${lines[*]} " == *' 11.7.0 '* && " ${lines[*]} " == *' system '* ]]
    eval "set -- ${lines[0]}"
    [ "$1" = '$(touch pwned1)' ] && [ ! -e "$T/pwned1" ] || false
    # zsh (compadd) and fish (complete -C) neither
    export ZCOMP_FPATH=$REPO/completions __CUDAENV_BIN=$CUDAENV
    (cd "$T" && timeout 60 zsh -f "$REPO/tests/lib/zcomp.zsh" 'cudaenv use ' >/dev/null) || true
    if command -v fish >/dev/null; then
        (cd "$T" && fish --no-config -c 'cudaenv init fish | source; complete -C "cudaenv use "' >/dev/null) || true
    fi
    [ ! -e "$T/pwned1" ] && [ ! -e "$T/pwned2" ] && [ ! -e "$REPO/pwned1" ]
}
