# Sourced inside the zpty shell of tests/lib/zcomp.zsh: load the real
# completion system and cudaenv's _cudaenv, and make compadd also print each
# match it is given (after zsh's own matching), framed by NUL lines.
PROMPT=
fpath=($ZCOMP_FPATH $fpath)
autoload -Uz compinit
compinit -u -D
bindkey '^M' undefined
bindkey '^J' undefined
bindkey '^I' complete-word
null-line() { echo -E - $'\0' }
compprefuncs=(null-line)
comppostfuncs=(null-line exit)
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
compadd() {
    if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
        builtin compadd "$@"
        return $?
    fi
    typeset -a __hits
    builtin compadd -A __hits "$@"
    local h
    for h in $__hits; do echo -E - "$h"; done
}
echo ok
