#!/usr/bin/zsh -f
# zsh completion harness: type "$*" + TAB into an interactive zsh in a pty
# with the real completion system (compinit, _main_complete, _describe ...),
# and print the matches one per line.  ZCOMP_FPATH names the directory of
# _cudaenv.  usage: zsh -f tests/lib/zcomp.zsh 'cudaenv install tf-2.1'
zmodload zsh/zpty
zpty z zsh -f -i
local line
zpty -w z "source ${0:A:h}/zcomp-init.zsh"
repeat 8; do
    zpty -r z line
    [[ $line == ok* ]] && break
done
zpty -w z "$*"$'\t'
integer tog=0
while zpty -r z; do :; done | while IFS= read -r line; do
    if [[ $line == *$'\0\r' ]]; then
        (( tog++ )) && exit 0 || continue
    fi
    (( tog )) && echo -E - "${line%$'\r'}"
done
zpty -d z
