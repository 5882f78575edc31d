# bash completion for cudaenv: commands (also after global options such as
# --manifest M), options, installed toolchains (read from
# $CUDAENV_ROOT/versions with a glob, no process), remote specs and components
# (from `cudaenv list-remote tf|torch|jax|cuda|cudnn --names`, only where a
# spec to download is expected: install, info, --cudnn, SPEC+cudnn,
# torch-2.5+cu121).
#
# No name is ever evaluated: compgen's word list expands each word
# ($(...), `...`, $var), so a directory under versions/ named
# '$(touch /tmp/pwned)' (or a manifest version) would run; COMPREPLY is built
# by _cudaenv_reply from arrays, matching the typed prefix literally, and a
# candidate with shell characters is offered quoted (printf %q), so
# accepting it does not run it either.

# _cudaenv_reply CUR WORD...: COMPREPLY = the WORDs that start with CUR.
_cudaenv_reply() {
    local cur=$1 w q
    shift
    COMPREPLY=()
    for w in "$@"; do
        [[ $w == "$cur"* ]] || continue
        if [[ $w == *[!A-Za-z0-9._+=,:/@%^-]* ]]; then printf -v q '%q' "$w"; COMPREPLY+=("$q")
        else COMPREPLY+=("$w"); fi
    done
}

# _cudaenv_lines CMD...: COMPREPLY = CMD's output lines, as they are
# (compgen -f/-d/-c: names from the file system, never split or globbed).
_cudaenv_lines() {
    local l
    COMPREPLY=()
    while IFS= read -r l; do COMPREPLY+=("$l"); done < <("$@")
}

# installed toolchains, appended to the array _ce_w
_cudaenv_installed() {
    local r=${CUDAENV_ROOT:-$HOME/.cudaenv} v
    for v in "$r"/versions/*/; do
        v=${v%/}; v=${v##*/}
        [[ $v == '*' || $v == .* ]] || _ce_w+=("$v")
    done
}

# _cudaenv_remote tf|torch|jax|cuda|cudnn: bare specs from the manifest in use,
# appended to the array _ce_w (one a line, never split or expanded).
_cudaenv_remote() {
    local l
    while IFS= read -r l; do [[ -n $l ]] && _ce_w+=("$l"); done < <(
        "${__CUDAENV_BIN:-cudaenv}" list-remote "$1" --names ${_cudaenv_manifest:+--manifest "$_cudaenv_manifest"} 2>/dev/null)
}

_cudaenv() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local cmds="install uninstall list ls list-remote ls-remote info prefix init use env local global current which exec verify jupyter doctor adopt cache modulefile mirror push pull update outdated self config deactivate help"
    local globals="--help --quiet --verbose --manifest --insecure --driver --version"
    local _cudaenv_manifest= sub= subi=0 i _ce_w=()
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
        --shell) _cudaenv_reply "$cur" bash zsh fish json dotenv; return ;;
        --manifest) _cudaenv_lines compgen -f -- "$cur"; return ;;
        --cudnn) _cudaenv_remote cudnn; _cudaenv_reply "$cur" "${_ce_w[@]}"; return ;;
        --name) return ;;
        --python|--for) _cudaenv_lines compgen -f -- "$cur"; return ;;
        --format|--module-format) _cudaenv_reply "$cur" lmod tcl; return ;;
        --to|--modulefiles|--check) _cudaenv_lines compgen -d -- "$cur"; return ;;
        --platform) _cudaenv_reply "$cur" linux-x86_64 linux-sbsa linux-x86_64,linux-sbsa; return ;;
        --repack) _cudaenv_reply "$cur" zstd tar; return ;;
        --framework) _cudaenv_reply "$cur" tf torch jax; return ;;
        --libs) _cudaenv_reply "$cur" framework toolchain; return ;;
    esac
    if [[ -z $sub ]]; then
        if [[ $cur == -* ]]; then
            _cudaenv_reply "$cur" $globals
        else
            _cudaenv_reply "$cur" $cmds
        fi
        return
    fi
    local opts="--help --quiet --verbose"
    case $sub in
        install) opts+=" --cudnn --no-cudnn --from --components --force --offline --insecure --manifest --modulefiles --module-format --for --framework" ;;
        modulefile) opts+=" --all --format --to" ;;
        mirror) opts+=" --all --to --platform --check --cudnn --no-cudnn --from --components --sign-key --url --repack --insecure --manifest" ;;
        uninstall) opts+=" --force" ;;
        push) opts+=" --insecure" ;;
        pull) opts+=" --force --insecure" ;;
        list|ls) opts+=" --json --names --sizes" ;;
        current|outdated) opts+=" --json" ;;
        doctor) opts+=" --json --framework --no-framework" ;;
        list-remote|ls-remote) opts+=" --json --names --manifest" ;;
        info) opts+=" --json --manifest --cudnn --no-cudnn --components" ;;
        env) opts+=" --shell --json --for --framework --libs" ;;
        use) opts+=" --unset --for --framework --libs" ;;
        exec) opts+=" --for --framework --libs" ;;
        local) opts+=" --unset --force --for --framework --libs" ;;
        global) opts+=" --system --force --dry-run --rollback --unset" ;;
        verify) opts+=" --json --report --all-devices --bench --deep --framework --python --libs" ;;
        jupyter) opts+=" --python --name" ;;
        adopt) opts+=" --name --scan" ;;
        cache) opts+=" --dry-run --json --sizes" ;;
        self) opts+=" --version --check" ;;
        config) opts+=" --system" ;;
        init) opts+=" --static --output" ;;
    esac
    if [[ $cur == -* ]]; then
        _cudaenv_reply "$cur" $opts
        return
    fi
    local n=$((COMP_CWORD - subi))   # 1 = the first word after the command
    case $sub in
        use|env|prefix|local|global|uninstall|verify|modulefile)
            [[ $n -eq 1 || $prev == --* ]] || return
            _cudaenv_installed; _cudaenv_reply "$cur" "${_ce_w[@]}" system ;;
        push)
            if [[ $n -eq 1 ]]; then _cudaenv_installed; _cudaenv_reply "$cur" "${_ce_w[@]}"
            elif [[ $n -eq 2 ]]; then _cudaenv_reply "$cur" oci://; compopt -o nospace 2>/dev/null; fi ;;
        pull) _cudaenv_reply "$cur" oci://; compopt -o nospace 2>/dev/null ;;
        exec)
            if [[ $n -eq 1 ]]; then
                _cudaenv_installed; _cudaenv_reply "$cur" "${_ce_w[@]}"
            else
                _cudaenv_lines compgen -c -- "$cur"
            fi ;;
        install|info|mirror)
            if [[ $cur == *+* ]]; then
                # a component: SPEC+cudnnVER; a PyTorch/JAX build: torch-2.5+cu121
                local base=${cur%%+*} v words=()
                _cudaenv_remote cudnn
                for v in "${_ce_w[@]}"; do words+=("$base+cudnn$v"); done
                _ce_w=()
                case $base in torch-*) _cudaenv_remote torch ;; jax-*) _cudaenv_remote jax ;; esac
                _cudaenv_reply "$cur" "${words[@]}" "${_ce_w[@]}"
            else
                _cudaenv_remote tf; _cudaenv_remote torch; _cudaenv_remote jax; _cudaenv_remote cuda
                _cudaenv_reply "$cur" "${_ce_w[@]}"
            fi ;;
        list-remote|ls-remote) _cudaenv_reply "$cur" tf torch jax cuda cudnn ;;
        jupyter)
            if [[ $COMP_CWORD -eq 2 ]]; then _cudaenv_reply "$cur" install
            else _cudaenv_installed; _cudaenv_reply "$cur" "${_ce_w[@]}"; fi ;;
        init) _cudaenv_reply "$cur" bash zsh fish --static --output ;;
        which) _cudaenv_reply "$cur" nvcc ptxas cuobjdump nvdisasm nvprof nsys ncu cuda-gdb compute-sanitizer ;;
        adopt) _cudaenv_lines compgen -d -- "$cur" ;;
        cache) [[ $n -eq 1 ]] && _cudaenv_reply "$cur" dir list clean prune ;;
        self) [[ $n -eq 1 ]] && _cudaenv_reply "$cur" update ;;
        config)
            if [[ $n -eq 1 ]]; then _cudaenv_reply "$cur" list get set unset
            elif [[ $n -eq 2 ]]; then _cudaenv_reply "$cur" manifest mirror update_interval manifest_unsigned cudnn keys; fi ;;
        help) _cudaenv_reply "$cur" $cmds ;;
    esac
}
complete -F _cudaenv cudaenv
