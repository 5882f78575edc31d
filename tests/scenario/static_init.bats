#!/usr/bin/env bats
# The static shell integration (`cudaenv init SHELL --static`): sourcing the
# file behaves exactly as the eval of `cudaenv init SHELL` (same functions,
# use, the cd hook) in real bash, zsh and fish, starts no process, and
# regenerates itself when the binary is newer than it.
load ../lib/common
bats_require_minimum_version 1.5.0

setup() { shell_setup; }
teardown() { common_teardown; }

@test "init --static writes \$CUDAENV_ROOT/init/cudaenv.SHELL, prints its path, stamps the version" {
    run --separate-stderr cudaenv init bash --static
    [ "$status" -eq 0 ]
    [ "$output" = "$CUDAENV_ROOT/init/cudaenv.bash" ]
    [[ "$stderr" == *"source $CUDAENV_ROOT/init/cudaenv.bash"* ]]
    grep -q "^__CUDAENV_INIT_VERSION='$(cudaenv --version | head -1 | cut -d' ' -f2)'$" "$output"
    run cudaenv init zsh --static -q -o "$T/z.zsh"
    [ "$status" -eq 0 ] && [ "$output" = "$T/z.zsh" ] && [ -f "$T/z.zsh" ] || false
    run cudaenv init bash -o "$T/x"
    [ "$status" -eq 2 ]
}

@test "bash: the static file defines the same functions as eval of init, and use + cd hook work" {
    cudaenv init bash --static -q -o "$T/s.bash" >/dev/null
    a=$(bash --norc -c 'eval "$(cudaenv init bash)"; declare -f cudaenv __cudaenv_hook; complete -p cudaenv; echo "$PROMPT_COMMAND"')
    b=$(bash --norc -c 'source "$T/s.bash"; declare -f cudaenv __cudaenv_hook; complete -p cudaenv; echo "$PROMPT_COMMAND"')
    [ -n "$a" ] && [ "$a" = "$b" ] || false
    run bash --norc -i 2>/dev/null <<EOS
source "$T/s.bash"
cudaenv use -q 11.8; echo "use=\$CUDA_HOME|\$CUDAENV_VERSION"
cudaenv deactivate
cd $T/proj/a/b
echo "nested=\$CUDA_HOME"
cd $T/elsewhere
echo "left=\${CUDA_HOME-unset}"
COMP_WORDS=(cudaenv use 11); COMP_CWORD=2; _cudaenv; echo "comp=\${COMPREPLY[*]}"
EOS
    [[ "$output" == *"use=$P118|11.8.0+cudnn8.7.0.84"* ]]
    [[ "$output" == *"nested=$P117"* ]]
    [[ "$output" == *"left=unset"* ]]
    [[ "$output" == *"comp=11.7.0 11.8.0+cudnn8.7.0.84"* ]]
}

@test "bash: sourcing the static file starts no process (strace)" {
    command -v strace >/dev/null || skip "no strace"
    cudaenv init bash --static -q -o "$T/s.bash" >/dev/null
    cd "$T/elsewhere"
    strace -f -qq -o "$T/st.0" -e trace=fork,vfork,clone,clone3,execve bash --norc -c 'true'
    strace -f -qq -o "$T/st.1" -e trace=fork,vfork,clone,clone3,execve bash --norc -c 'source "$1"; __cudaenv_hook' _ "$T/s.bash"
    [ "$(wc -l < "$T/st.0")" -eq "$(wc -l < "$T/st.1")" ]
}

@test "zsh: the static file behaves as eval of init" {
    cudaenv init zsh --static -q -o "$T/s.zsh" >/dev/null
    a=$(zsh -f -c 'eval "$(cudaenv init zsh)"; functions cudaenv __cudaenv_hook')
    b=$(zsh -f -c 'source "$T/s.zsh"; functions cudaenv __cudaenv_hook')
    [ -n "$a" ] && [ "$a" = "$b" ] || false
    run zsh -f -c '
        source "$T/s.zsh"
        cudaenv use -q 11.8; echo "use=$CUDA_HOME"
        cudaenv deactivate
        cd "$T/proj/a/b"; echo "in=$CUDA_HOME"
        cd "$T/elsewhere"; echo "out=${CUDA_HOME-unset}"'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "use=$P118" ]
    [ "${lines[1]}" = "in=$P117" ]
    [ "${lines[2]}" = "out=unset" ]
}

@test "fish: the static file behaves as init | source" {
    cudaenv init fish --static -q -o "$T/s.fish" >/dev/null
    a=$(fish --no-config -c 'cudaenv init fish | source; functions cudaenv __cudaenv_hook' | grep -v '^# Defined')
    b=$(fish --no-config -c 'source $T/s.fish; functions cudaenv __cudaenv_hook' | grep -v '^# Defined')
    [ -n "$a" ] && [ "$a" = "$b" ] || false
    run fish --no-config -c '
        source $T/s.fish
        cudaenv use -q 11.8; echo "use=$CUDA_HOME"
        cudaenv deactivate
        cd $T/proj/a/b; echo "in=$CUDA_HOME"
        cd $T/elsewhere; set -q CUDA_HOME; and echo "out=$CUDA_HOME"; or echo out=unset'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "use=$P118" ]
    [ "${lines[1]}" = "in=$P117" ]
    [ "${lines[2]}" = "out=unset" ]
}

# A copy of the light binary, so its mtime can be moved without touching the build.
stale_setup() { # shell, what follows the variable's name ("=" or " ")
    mkdir -p "$T/bin"
    cp "$BUILD/bin/cudaenv" "$T/bin/cudaenv"
    "$T/bin/cudaenv" init "$1" --static -q -o "$T/s.$1" >/dev/null
    sed -i "s/__CUDAENV_INIT_VERSION[ =].*/__CUDAENV_INIT_VERSION${2}old/" "$T/s.$1"
    touch -d '2 hours ago' "$T/s.$1"
    grep -q "INIT_VERSION${2}old" "$T/s.$1"
}

@test "bash/zsh: a static file older than the binary is regenerated and still works" {
    v=$(cudaenv --version | head -1 | cut -d' ' -f2)
    for sh in bash zsh; do
        stale_setup $sh =
        run $sh -c 'source "$T/s.'$sh'"; cudaenv use -q 11.8; echo "$__CUDAENV_INIT_VERSION|$CUDA_HOME"'
        [ "$status" -eq 0 ]
        [ "$output" = "$v|$P118" ]
        grep -q "^__CUDAENV_INIT_VERSION='$v'" "$T/s.$sh"
        [ ! "$T/bin/cudaenv" -nt "$T/s.$sh" ]
    done
}

@test "fish: a static file older than the binary is regenerated and still works" {
    v=$(cudaenv --version | head -1 | cut -d' ' -f2)
    stale_setup fish ' '
    run fish --no-config -c 'source $T/s.fish; cudaenv use -q 11.8; echo "$__CUDAENV_INIT_VERSION|$CUDA_HOME"'
    [ "$status" -eq 0 ]
    [ "$output" = "$v|$P118" ]
    grep -q "^set -g __CUDAENV_INIT_VERSION '$v'" "$T/s.fish"
}
