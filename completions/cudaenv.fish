# fish completion for cudaenv: commands, options, installed toolchains (a glob
# of $CUDAENV_ROOT/versions) and remote specs (`cudaenv list-remote`).
function __cudaenv_installed
    set -l r $HOME/.cudaenv
    set -q CUDAENV_ROOT; and test -n "$CUDAENV_ROOT"; and set r $CUDAENV_ROOT
    for v in $r/versions/*/
        string replace -r '/$' '' -- $v | string replace -r '.*/' ''
    end
end

function __cudaenv_remote
    set -l bin cudaenv
    set -q __CUDAENV_BIN; and set bin $__CUDAENV_BIN
    $bin list-remote tf 2>/dev/null | string match -r '^[0-9][^ \t]*' | string replace -r '^' 'tf-'
    $bin list-remote cuda 2>/dev/null | string match -r '^[0-9][^ \t]*'
end

set -l __cudaenv_cmds install uninstall list list-remote info prefix init use deactivate env local global current which exec verify doctor
complete -c cudaenv -f
complete -c cudaenv -n "not __fish_seen_subcommand_from $__cudaenv_cmds" -a "$__cudaenv_cmds"
complete -c cudaenv -s h -l help -d 'usage'
complete -c cudaenv -s q -l quiet
complete -c cudaenv -s v -l verbose
complete -c cudaenv -n '__fish_seen_subcommand_from use env prefix local global uninstall verify' -a '(__cudaenv_installed) system' -d toolchain
complete -c cudaenv -n '__fish_seen_subcommand_from exec' -a '(__cudaenv_installed)' -d toolchain
complete -c cudaenv -n '__fish_seen_subcommand_from install info' -a '(__cudaenv_remote)' -d spec
complete -c cudaenv -n '__fish_seen_subcommand_from list-remote ls-remote' -a 'tf cuda cudnn'
complete -c cudaenv -n '__fish_seen_subcommand_from init' -a 'bash zsh fish'
complete -c cudaenv -n '__fish_seen_subcommand_from init' -l static -d 'write a file to source (no process at shell start)'
complete -c cudaenv -n '__fish_seen_subcommand_from init' -s o -l output -r -d 'where --static writes'
complete -c cudaenv -n '__fish_seen_subcommand_from which' -a 'nvcc ptxas cuobjdump nvdisasm nsys ncu cuda-gdb compute-sanitizer'
complete -c cudaenv -n '__fish_seen_subcommand_from env' -l shell -xa 'bash zsh fish json'
complete -c cudaenv -n '__fish_seen_subcommand_from list ls current doctor env info list-remote verify' -l json
complete -c cudaenv -n '__fish_seen_subcommand_from list ls' -l names -d 'bare names, one per line'
complete -c cudaenv -n '__fish_seen_subcommand_from use local global' -l unset
complete -c cudaenv -n '__fish_seen_subcommand_from global' -l system -d 'root: /usr/local/cuda + ld.so.conf.d'
complete -c cudaenv -n '__fish_seen_subcommand_from global' -l dry-run -d 'print the plan'
complete -c cudaenv -n '__fish_seen_subcommand_from global' -l rollback -d 'previous system target'
complete -c cudaenv -n '__fish_seen_subcommand_from global local uninstall install' -l force
complete -c cudaenv -n '__fish_seen_subcommand_from install' -l cudnn -x
complete -c cudaenv -n '__fish_seen_subcommand_from install' -l no-cudnn
complete -c cudaenv -n '__fish_seen_subcommand_from install' -l offline
complete -c cudaenv -n '__fish_seen_subcommand_from verify' -l all-devices
complete -c cudaenv -n '__fish_seen_subcommand_from verify' -l bench
complete -c cudaenv -n '__fish_seen_subcommand_from verify' -l deep
