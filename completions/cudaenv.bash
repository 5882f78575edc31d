# bash completion for cudaenv: commands, options, installed toolchains (read
# from $CUDAENV_ROOT/versions with a glob, no process) and remote specs (from
# `cudaenv list-remote`, only for install/info).
_cudaenv_installed() {
    local r=${CUDAENV_ROOT:-$HOME/.cudaenv} v
    for v in "$r"/versions/*/; do
        v=${v%/}; v=${v##*/}
        [[ $v == '*' || $v == .* ]] || printf '%s\n' "$v"
    done
}

_cudaenv_remote() {
    local bin=${__CUDAENV_BIN:-cudaenv} kind line
    for kind in tf cuda; do
        while read -r line _; do
            [[ $line == [0-9]* ]] || continue
            [[ $kind == tf ]] && line=tf-$line
            printf '%s\n' "$line"
        done < <("$bin" list-remote "$kind" 2>/dev/null)
    done
}

_cudaenv() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local cmds="install uninstall list ls list-remote ls-remote info prefix init use env local global current which exec verify doctor deactivate help"
    if [[ $COMP_CWORD -eq 1 ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--version --help --quiet --verbose" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
        fi
        return
    fi
    local sub=${COMP_WORDS[1]} opts="--help --quiet --verbose"
    case $sub in
        install) opts+=" --cudnn --no-cudnn --force --offline --insecure --manifest" ;;
        uninstall) opts+=" --force" ;;
        list|ls) opts+=" --json --names" ;;
        current) opts+=" --json" ;;
        list-remote|ls-remote|info) opts+=" --json --manifest" ;;
        env) opts+=" --shell --json" ;;
        use) opts+=" --unset" ;;
        local) opts+=" --unset --force" ;;
        global) opts+=" --system --force --dry-run --rollback --unset" ;;
        verify) opts+=" --json --all-devices --bench --deep" ;;
        doctor) opts+=" --json" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    case $prev in
        --shell) COMPREPLY=($(compgen -W "bash zsh fish json" -- "$cur")); return ;;
        --manifest) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    case $sub in
        use|env|prefix|local|global|uninstall|verify)
            [[ $COMP_CWORD -eq 2 || $prev == --* ]] || return
            COMPREPLY=($(compgen -W "$(_cudaenv_installed) system" -- "$cur")) ;;
        exec)
            if [[ $COMP_CWORD -eq 2 ]]; then
                COMPREPLY=($(compgen -W "$(_cudaenv_installed)" -- "$cur"))
            else
                COMPREPLY=($(compgen -c -- "$cur"))
            fi ;;
        install|info) COMPREPLY=($(compgen -W "$(_cudaenv_remote)" -- "$cur")) ;;
        list-remote|ls-remote) COMPREPLY=($(compgen -W "tf cuda cudnn" -- "$cur")) ;;
        init) COMPREPLY=($(compgen -W "bash zsh fish --static --output" -- "$cur")) ;;
        which) COMPREPLY=($(compgen -W "nvcc ptxas cuobjdump nvdisasm nvprof nsys ncu cuda-gdb compute-sanitizer" -- "$cur")) ;;
        help) COMPREPLY=($(compgen -W "$cmds" -- "$cur")) ;;
    esac
}
complete -F _cudaenv cudaenv
