# zsh -f tests/lib/zsh-complete.zsh OUT LINE: types LINE and TAB into an
# interactive zsh (zpty) with compinit and `cudaenv init zsh`, and writes the
# completions zsh produced to OUT, one per line: compadd is wrapped so every
# match the completion system adds is recorded (compadd -O), then added.
zmodload zsh/zpty || exit 77
out=$1 line=$2
zpty z zsh -f -i
zpty -w z 'PS1="> "; autoload -Uz compinit; compinit -u -D; eval "$(cudaenv init zsh)"'
zpty -w z "compadd() { builtin compadd -O __m \"\$@\"; print -rl -- \$__m >> ${(q)out}; builtin compadd \"\$@\"; }"
zpty -w z "zstyle ':completion:*' list-prompt ''"
zpty -w -n z "$line"$'\t'
for i in {1..200}; do [[ -s $out ]] && break; sleep 0.05; done
sleep 0.2
zpty -d z
