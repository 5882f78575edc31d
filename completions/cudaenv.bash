# bash completion for cudaenv: commands (also after global options such as
# --manifest M), options, installed toolchains (read from
# $CUDAENV_ROOT/versions with a glob, no process), remote specs and components
# (from `cudaenv list-remote tf|cuda|cudnn --names`, only where a spec to
# download is expected: install, info, --cudnn, SPEC+cudnn).
_cudaenv_installed() {
    local r=${CUDAENV_ROOT:-$HOME/.cudaenv} v
    for v in "$r"/versions/*/; do
        v=${v%/}; v=${v##*/}
        [[ $v == '*' || $v == .* ]] || printf '%s\n' "$v"
    done
}

# _cudaenv_remote tf|cuda|cudnn: bare specs from the manifest in use.
_cudaenv_remote() {
    "${__CUDAENV_BIN:-cudaenv}" list-remote "$1" --names ${_cudaenv_manifest:+--manifest "$_cudaenv_manifest"} 2>/dev/null
}

_cudaenv() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local cmds="install uninstall list ls list-remote ls-remote info prefix init use env local global current which exec verify jupyter doctor adopt cache modulefile mirror deactivate help"
    local globals="--help --quiet --verbose --manifest --insecure --version"
    local _cudaenv_manifest= sub= subi=0 i
    # the command is the first word that is not a global option (or its value)
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            --manifest) _cudaenv_manifest=${COMP_WORDS[i+1]}; ((i++)) ;;
            --manifest=*) _cudaenv_manifest=${COMP_WORDS[i]#--manifest=} ;;
            -*) ;;
            *) [[ -z $sub ]] && { sub=${COMP_WORDS[i]}; subi=$i; } ;;
        esac
    done
    case $prev in
        --shell) COMPREPLY=($(compgen -W "bash zsh fish json dotenv" -- "$cur")); return ;;
        --manifest) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --cudnn) COMPREPLY=($(compgen -W "$(_cudaenv_remote cudnn)" -- "$cur")); return ;;
        --name) return ;;
        --python|--for) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --format|--module-format) COMPREPLY=($(compgen -W "lmod tcl" -- "$cur")); return ;;
        --to|--modulefiles|--check) COMPREPLY=($(compgen -d -- "$cur")); return ;;
        --platform) COMPREPLY=($(compgen -W "linux-x86_64 linux-sbsa linux-x86_64,linux-sbsa" -- "$cur")); return ;;
        --framework) COMPREPLY=($(compgen -W "tf torch" -- "$cur")); return ;;
    esac
    if [[ -z $sub ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$globals" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
        fi
        return
    fi
    local opts="--help --quiet --verbose"
    case $sub in
        install) opts+=" --cudnn --no-cudnn --from --components --force --offline --insecure --manifest --modulefiles --module-format --for --framework" ;;
        modulefile) opts+=" --all --format --to" ;;
        mirror) opts+=" --all --to --platform --check --cudnn --no-cudnn --from --components --insecure --manifest" ;;
        uninstall) opts+=" --force" ;;
        list|ls) opts+=" --json --names" ;;
        current|doctor) opts+=" --json" ;;
        list-remote|ls-remote) opts+=" --json --names --manifest" ;;
        info) opts+=" --json --manifest --cudnn --no-cudnn --components" ;;
        env) opts+=" --shell --json" ;;
        use) opts+=" --unset" ;;
        local) opts+=" --unset --force --for --framework" ;;
        global) opts+=" --system --force --dry-run --rollback --unset" ;;
        verify) opts+=" --json --all-devices --bench --deep --framework --python" ;;
        jupyter) opts+=" --python --name" ;;
        adopt) opts+=" --name --scan" ;;
        cache) opts+=" --dry-run --json" ;;
        init) opts+=" --static --output" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    local n=$((COMP_CWORD - subi))   # 1 = the first word after the command
    case $sub in
        use|env|prefix|local|global|uninstall|verify|modulefile)
            [[ $n -eq 1 || $prev == --* ]] || return
            COMPREPLY=($(compgen -W "$(_cudaenv_installed) system" -- "$cur")) ;;
        exec)
            if [[ $n -eq 1 ]]; then
                COMPREPLY=($(compgen -W "$(_cudaenv_installed)" -- "$cur"))
            else
                COMPREPLY=($(compgen -c -- "$cur"))
            fi ;;
        install|info|mirror)
            if [[ $cur == *+* ]]; then
                # a component: SPEC+cudnnVER
                local base=${cur%%+*} v words=
                for v in $(_cudaenv_remote cudnn); do words+=" $base+cudnn$v"; done
                COMPREPLY=($(compgen -W "$words" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "$(_cudaenv_remote tf) $(_cudaenv_remote cuda)" -- "$cur"))
            fi ;;
        list-remote|ls-remote) COMPREPLY=($(compgen -W "tf cuda cudnn" -- "$cur")) ;;
        jupyter)
            if [[ $COMP_CWORD -eq 2 ]]; then COMPREPLY=($(compgen -W "install" -- "$cur"))
            else COMPREPLY=($(compgen -W "$(_cudaenv_installed)" -- "$cur")); fi ;;
        init) COMPREPLY=($(compgen -W "bash zsh fish --static --output" -- "$cur")) ;;
        which) COMPREPLY=($(compgen -W "nvcc ptxas cuobjdump nvdisasm nvprof nsys ncu cuda-gdb compute-sanitizer" -- "$cur")) ;;
        adopt) COMPREPLY=($(compgen -d -- "$cur")) ;;
        cache) [[ $n -eq 1 ]] && COMPREPLY=($(compgen -W "dir list clean prune" -- "$cur")) ;;
        help) COMPREPLY=($(compgen -W "$cmds" -- "$cur")) ;;
    esac
}
complete -F _cudaenv cudaenv
