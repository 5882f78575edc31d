#!/usr/bin/env bats
# The shell integration in real bash, zsh and fish: use/switch/reset, the cd
# hook on .cuda-version in nested directories (and restore on leaving), PATH
# constant after 100 switches, the loader after use, completions.
load ../lib/common
bats_require_minimum_version 1.5.0

setup() { shell_setup; }
teardown() { common_teardown; }

@test "bash: use, switch, use system, deactivate; the loader follows" {
    fx_probe "$T/probe" "$P118"
    run bash --norc -c '
        eval "$(cudaenv init bash)"
        cudaenv use -q 11.8 || exit 10
        echo "$CUDA_HOME|$CUDAENV_VERSION|$(command -v nvcc)"
        "$T/probe" | tr "\n" " "; echo
        cudaenv use -q 11.7; "$T/probe" | tr "\n" " "; echo
        cudaenv use -q system; echo "${CUDA_HOME-unset}|$CUDAENV_VERSION|$PATH|${LD_LIBRARY_PATH-unset}"
        cudaenv use -q 11.8; cudaenv deactivate; echo "${CUDA_HOME-unset}|${CUDAENV_VERSION-unset}|$PATH"
    '
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "$P118|11.8.0+cudnn8.7.0.84|$P118/bin/nvcc" ]
    [ "${lines[1]}" = "11080 $P118/lib64/libcudart.so.11.0 " ]
    [ "${lines[2]}" = "11070 $P117/lib64/libcudart.so.11.0 " ]
    [ "${lines[3]}" = "unset|system|$PATH|unset" ]
    [ "${lines[4]}" = "unset|unset|$PATH" ]
}

@test "bash: not installed -> exit 3 and the shell is unchanged" {
    run --separate-stderr bash --norc -c 'eval "$(cudaenv init bash)"; cudaenv use -q 11.8; cudaenv use 10.2; echo "rc=$? $CUDA_HOME"'
    [ "$output" = "rc=3 $P118" ]
    [[ "$stderr" == *"cudaenv install 10.2"* ]]
}

@test "bash: 100 switches leave PATH and LD_LIBRARY_PATH the same length" {
    run bash --norc -c '
        export LD_LIBRARY_PATH=/opt/other/lib
        eval "$(cudaenv init bash)"
        cudaenv use -q 11.8 2>/dev/null; a=${#PATH}; b=${#LD_LIBRARY_PATH}
        for i in $(seq 50); do cudaenv use -q 12.3; cudaenv use -q 11.8; done 2>/dev/null
        echo "$a $b ${#PATH} ${#LD_LIBRARY_PATH} $LD_LIBRARY_PATH"'
    [ "$status" -eq 0 ]
    set -- $output
    [ "$1" = "$3" ] && [ "$2" = "$4" ] || false
    [ "$5" = "$P118/lib64:/opt/other/lib" ]
}

@test "bash: foreign CUDA entries are warned about once per shell" {
    run --separate-stderr bash --norc -c '
        export LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64
        eval "$(cudaenv init bash)"
        for i in 1 2 3; do cudaenv use -q 11.8; cudaenv use -q 12.3; done'
    [ "$status" -eq 0 ]
    [ "$(grep -c 'cuda-12.1/lib64' <<<"$stderr")" -eq 1 ]
}

@test "bash: leaving a project or deactivate gives CUDA_HOME, CUDA_PATH and LIBRARY_PATH back their values from before" {
    run bash --norc -c '
        export CUDA_HOME=/usr/local/cuda LIBRARY_PATH=/opt/mylibs; unset CUDA_PATH
        eval "$(cudaenv init bash)"
        cd "$T/proj/a"; __cudaenv_hook
        echo "in=$CUDA_HOME|$CUDA_PATH|$LIBRARY_PATH"
        cudaenv use -q 11.8; cudaenv use -q 12.3
        echo "switched=$CUDA_HOME|$LIBRARY_PATH"
        cd "$T/elsewhere"; __cudaenv_hook
        echo "in-use=$CUDA_HOME"
        cudaenv deactivate
        echo "out=$CUDA_HOME|${CUDA_PATH-unset}|$LIBRARY_PATH|$(env | grep -c __CUDAENV_OLD)"
        cd "$T/proj"; __cudaenv_hook; cd "$T/elsewhere"; __cudaenv_hook
        echo "again=$CUDA_HOME|${CUDA_PATH-unset}|$LIBRARY_PATH"
        unset CUDA_HOME LIBRARY_PATH; cd "$T/proj"; __cudaenv_hook; cd /; __cudaenv_hook
        echo "none=${CUDA_HOME-unset}|${LIBRARY_PATH-unset}"'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "in=$P117|$P117|$P117/lib64:$P117/lib64/stubs:/opt/mylibs" ]
    [ "${lines[1]}" = "switched=$P123|$P123/lib64:$P123/lib64/stubs:/opt/mylibs" ]
    [ "${lines[2]}" = "in-use=$P123" ]
    [ "${lines[3]}" = "out=/usr/local/cuda|unset|/opt/mylibs|0" ]
    [ "${lines[4]}" = "again=/usr/local/cuda|unset|/opt/mylibs" ]
    [ "${lines[5]}" = "none=unset|unset" ]
}

@test "fish: leaving a project restores a CUDA_HOME set before" {
    command -v fish >/dev/null || skip "no fish"
    run fish --no-config -c '
        set -gx CUDA_HOME /usr/local/cuda
        cudaenv init fish | source
        cd $T/proj/a; __cudaenv_hook
        echo "in=$CUDA_HOME"
        cd $T/elsewhere; __cudaenv_hook
        echo "out=$CUDA_HOME"'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "in=$P117" ]
    [ "${lines[1]}" = "out=/usr/local/cuda" ]
}

@test "bash -i: the prompt hook applies .cuda-version in nested dirs and restores on leaving" {
    cudaenv global 12.3
    run bash --norc -i 2>/dev/null <<EOS
eval "\$(cudaenv init bash)"
echo "start=\$CUDA_HOME"
cd $T/proj/a/b
echo "nested=\$CUDA_HOME"
cd $T/elsewhere
echo "left=\$CUDA_HOME"
cd $T/proj
cudaenv use -q 11.8
cd $T/proj/a
echo "use-wins=\$CUDA_HOME"
cudaenv deactivate
echo "after-deactivate=\$CUDA_HOME"
EOS
    [[ "$output" == *"start=$P123"* ]]
    [[ "$output" == *"nested=$P117"* ]]
    [[ "$output" == *"left=$P123"* ]]
    [[ "$output" == *"use-wins=$P118"* ]]
    [[ "$output" == *"after-deactivate=$P117"* ]]
}

@test "bash: cudaenv local in the shell applies at once; editing .cuda-version is noticed" {
    run bash --norc -c '
        eval "$(cudaenv init bash)"
        cd "$T/elsewhere"; cudaenv local 11.8; echo "$CUDA_HOME"
        echo 12.3 > .cuda-version; __cudaenv_hook; echo "$CUDA_HOME"
        rm .cuda-version; __cudaenv_hook; echo "${CUDA_HOME-unset}"'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "$P118" ]
    [ "${lines[1]}" = "$P123" ]
    [ "${lines[2]}" = "unset" ]
}

@test "bash: the hook starts no process when nothing changed" {
    # every child the shell forks (a command substitution too) fires the CHLD trap
    run bash --norc -c '
        eval "$(cudaenv init bash)"
        cd "$T/proj/a/b"; __cudaenv_hook; n=$__CUDAENV_HOOK_EXECS
        forks=0; trap "forks=\$((forks + 1))" CHLD
        for ((i = 0; i < 200; i++)); do __cudaenv_hook; cd ..; cd b; __cudaenv_hook; done
        quiet=$forks
        echo 12.3 > .cuda-version; __cudaenv_hook; rm .cuda-version
        echo "$n $__CUDAENV_HOOK_EXECS forks=$quiet seen=$((forks > quiet))"'
    [ "$status" -eq 0 ]
    # no fork in 400 quiet calls; the counter does see the one that runs cudaenv env
    [ "$output" = "1 2 forks=0 seen=1" ]
    # strace agrees: the same number of process syscalls with 0 and with 200 hook calls
    command -v strace >/dev/null || skip "no strace"
    strace -f -qq -o /dev/null true 2>/dev/null || skip "strace cannot trace here (ptrace refused)"
    cudaenv init bash > "$T/init.bash"
    for n in 0 200; do
        (cd "$T/proj/a/b" && strace -f -qq -o "$T/st.$n" -e trace=fork,vfork,clone,clone3,execve \
            bash --norc -c 'source "$1"; for ((i = 0; i < $2; i++)); do __cudaenv_hook; done' _ "$T/init.bash" "$n")
    done
    [ "$(wc -l < "$T/st.0")" -eq "$(wc -l < "$T/st.200")" ]
}

@test "zsh: use, hook on cd (chpwd), restore, 100 switches" {
    run zsh -f -c '
        eval "$(cudaenv init zsh)"
        cudaenv use -q 11.8; a=${#PATH}
        for i in {1..50}; do cudaenv use -q 12.3; cudaenv use -q 11.8; done
        echo "$a ${#PATH} $CUDA_HOME"
        cudaenv deactivate
        cd "$T/proj/a/b"; echo "in=$CUDA_HOME"
        cd "$T/elsewhere"; echo "out=${CUDA_HOME-unset}"
        cd "$T/proj/a"; cd "$T/proj/a/b"; echo "execs=$__CUDAENV_HOOK_EXECS"'
    [ "$status" -eq 0 ]
    set -- ${lines[0]}
    [ "$1" = "$2" ] && [ "$3" = "$P118" ] || false
    [ "${lines[1]}" = "in=$P117" ]
    [ "${lines[2]}" = "out=unset" ]
    [ "${lines[3]}" = "execs=4" ]
}

@test "zsh -i: completion function loads after compinit" {
    run zsh -f -i -c 'autoload -Uz compinit; compinit -u -D; eval "$(cudaenv init zsh)"
        print -r -- "comp=$_comps[cudaenv]"; autoload +X _cudaenv && functions _cudaenv | grep -c _cudaenv_installed'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "comp=_cudaenv" ]
    [ "${lines[1]}" -ge 1 ]
}

@test "zsh -i: init eval'd before compinit (.zshrc order): a later compinit still binds the completion" {
    run zsh -f -i -c 'eval "$(cudaenv init zsh)"; autoload -Uz compinit; compinit -u -D
        print -r -- "comp=${_comps[cudaenv]-none}"'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "comp=_cudaenv" ]
}

@test "zsh -i: TAB produces commands, installed toolchains and options (zpty)" {
    comp() { rm -f "$T/comp"; timeout 60 zsh -f "$TESTS_DIR/lib/zsh-complete.zsh" "$T/comp" "$1"; sort "$T/comp" | tr '\n' ' '; }
    [ "$(comp 'cudaenv us')" = "use " ]
    [ "$(comp 'cudaenv use ')" = "11.7.0 11.8.0+cudnn8.7.0.84 12.3.0 system " ]
    [ "$(comp 'cudaenv global --r')" = "--rollback " ]
    [ "$(comp 'cudaenv env 11.8 --shell ')" = "bash dotenv fish json zsh " ]
    [ "$(comp 'cudaenv list-remote ')" = "cuda cudnn jax tf torch " ]
}

@test "fish: use, hook on cd, restore, 100 switches, completions" {
    run fish --no-config -c '
        cudaenv init fish | source
        cudaenv use -q 11.8; set a (string length "$PATH")
        for i in (seq 50); cudaenv use -q 12.3; cudaenv use -q 11.8; end
        echo $a (string length "$PATH") $CUDA_HOME
        cudaenv deactivate
        cd $T/proj/a/b; echo "in=$CUDA_HOME"
        cd $T/elsewhere; set -q CUDA_HOME; and echo "out=$CUDA_HOME"; or echo out=unset
        cudaenv exec 12.3 -- sh -c "echo exec=\$CUDA_HOME"
        complete -C "cudaenv use " | string replace -r "\t.*" "" | string join " "'
    [ "$status" -eq 0 ]
    set -- ${lines[0]}
    [ "$1" = "$2" ] && [ "$3" = "$P118" ] || false
    [ "${lines[1]}" = "in=$P117" ]
    [ "${lines[2]}" = "out=unset" ]
    [ "${lines[3]}" = "exec=$P123" ]
    [ "${lines[4]}" = "11.7.0 11.8.0+cudnn8.7.0.84 12.3.0 system" ]
}

@test "bash completion offers commands, options and installed versions" {
    run bash --norc -c '
        eval "$(cudaenv init bash)"
        complete -p cudaenv
        COMP_WORDS=(cudaenv us); COMP_CWORD=1; _cudaenv; echo "${COMPREPLY[*]}"
        COMP_WORDS=(cudaenv use ""); COMP_CWORD=2; _cudaenv; echo "${COMPREPLY[*]}"
        COMP_WORDS=(cudaenv use 11); COMP_CWORD=2; _cudaenv; echo "${COMPREPLY[*]}"
        COMP_WORDS=(cudaenv global --); COMP_CWORD=2; _cudaenv; echo "${COMPREPLY[*]}"
        COMP_WORDS=(cudaenv env 11.8 --shell ""); COMP_CWORD=4; _cudaenv; echo "${COMPREPLY[*]}"'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "complete -F _cudaenv cudaenv" ]
    [ "${lines[1]}" = "use" ]
    [ "${lines[2]}" = "11.7.0 11.8.0+cudnn8.7.0.84 12.3.0 system" ]
    [ "${lines[3]}" = "11.7.0 11.8.0+cudnn8.7.0.84" ]
    [[ "${lines[4]}" == *"--system"* && "${lines[4]}" == *"--rollback"* && "${lines[4]}" == *"--dry-run"* ]]
    [ "${lines[5]}" = "bash zsh fish json dotenv" ]
}

@test "init: unknown shell is a usage error; output names the light binary" {
    run cudaenv init tcsh
    [ "$status" -eq 2 ]
    run cudaenv init bash
    [[ "$output" == *"__CUDAENV_BIN='$BUILD/bin/cudaenv'"* ]]
}

# use --for PYTHON (issue 27) through the shell functions: the framework that
# Python imports (tests/lib/fakefw.sh: a PyTorch built for CUDA 11.8 + cuDNN
# 8.7) decides, the shell evals the toolchain's environment; one not installed
# leaves the shell as it was, exit 3 with the install --for command.
fakepy_setup() {
    source "$TESTS_DIR/lib/fakefw.sh"
    fx_fakefw "$T/site"
    rm -rf "$T/site/tensorflow" "$T"/site/tensorflow-*.dist-info
    export PYTHONPATH=$T/site FAKE_FW_CUDA=11.8 FAKE_FW_CUDNN=8.7.0
}

@test "bash -i: use --for PYTHON switches to what its PyTorch was built for; env --for prints it, exec --for runs with it" {
    fakepy_setup
    run --separate-stderr bash --norc -i <<EOS
eval "\$(cudaenv init bash)"
cudaenv use --for /usr/bin/python3 || echo "use-failed=\$?"
echo "for=\$CUDA_HOME|\$CUDAENV_VERSION|\$(command -v nvcc)"
cudaenv use -q 12.3
FAKE_FW_CUDA=12.2 FAKE_FW_CUDNN=8.9.7 cudaenv use --for /usr/bin/python3; echo "rc=\$? \$CUDA_HOME"
EOS
    [[ "$output" == *"for=$P118|11.8.0+cudnn8.7.0.84|$P118/bin/nvcc"* ]] || { echo "$output"; echo "$stderr"; false; }
    [[ "$output" == *"rc=3 $P123"* ]]
    [[ "$stderr" == *"PyTorch decides: 11.8+cudnn8.7"* ]]
    [[ "$stderr" == *"install it first: cudaenv install --for /usr/bin/python3"* ]]
    # env --for: the same environment, for scripts; a VERSION beside --for is a usage error
    run --separate-stderr cudaenv env --for /usr/bin/python3 --shell dotenv
    [ "$status" -eq 0 ] && [[ "$output" == *"CUDA_HOME=$P118"* ]] || false
    run cudaenv env 11.8 --for /usr/bin/python3
    [ "$status" -eq 2 ]
    # exec --for PYTHON -- CMD: the same toolchain for one command; a first word would be VERSION
    run --separate-stderr cudaenv exec --for /usr/bin/python3 -- sh -c 'echo "$CUDA_HOME|$CUDAENV_VERSION"'
    [ "$status" -eq 0 ] && [ "$output" = "$P118|11.8.0+cudnn8.7.0.84" ] || false
    run cudaenv exec --for /usr/bin/python3 sh -c true
    [ "$status" -eq 2 ] && [[ "$output" == *"cudaenv exec --for PYTHON -- CMD"* ]] || false
    run cudaenv use --framework torch
    [ "$status" -eq 2 ]
}

@test "zsh and fish: use --for PYTHON through their shell functions" {
    fakepy_setup
    run zsh -f -c 'eval "$(cudaenv init zsh)"; cudaenv use -q --for /usr/bin/python3; echo "$CUDA_HOME|$CUDAENV_VERSION"'
    [ "$status" -eq 0 ] && [ "${lines[-1]}" = "$P118|11.8.0+cudnn8.7.0.84" ] || false
    command -v fish >/dev/null || skip "no fish"
    run fish --no-config -c 'cudaenv init fish | source; cudaenv use -q --for /usr/bin/python3; echo "$CUDA_HOME|$CUDAENV_VERSION"'
    [ "$status" -eq 0 ] && [ "${lines[-1]}" = "$P118|11.8.0+cudnn8.7.0.84" ]
}
