# fish completion for cudaenv: commands (also after global options such as
# --manifest M), options, installed toolchains (a glob of $CUDAENV_ROOT/versions),
# remote specs and components (`cudaenv list-remote tf|torch|jax|cuda|cudnn --names`).
function __cudaenv_installed
    set -l r $HOME/.cudaenv
    set -q CUDAENV_ROOT; and test -n "$CUDAENV_ROOT"; and set r $CUDAENV_ROOT
    for v in $r/versions/*/
        string replace -r '/$' '' -- $v | string replace -r '.*/' ''
    end
end

# __cudaenv_remote tf|torch|jax|cuda|cudnn: bare specs from the manifest in use
# (a --manifest M already typed on the line counts).
function __cudaenv_remote
    set -l bin cudaenv
    set -q __CUDAENV_BIN; and set bin $__CUDAENV_BIN
    set -l words (commandline -opc)
    set -l m
    if set -l i (contains -i -- --manifest $words); and test (count $words) -gt $i
        set m --manifest $words[(math $i + 1)]
    end
    $bin list-remote $argv[1] --names $m 2>/dev/null
end

# SPEC+cudnnVER for the token being typed, once it has a +
function __cudaenv_components
    set -l tok (commandline -ct)
    string match -q -- '*+*' $tok; or return
    set -l base (string replace -r '\+.*' '' -- $tok)
    for v in (__cudaenv_remote cudnn)
        echo "$base+cudnn$v"
    end
    # a PyTorch/JAX build: torch-2.5+cu121
    switch $base
        case 'torch-*'
            __cudaenv_remote torch | string match -- '*+*'
        case 'jax-*'
            __cudaenv_remote jax | string match -- '*+*'
    end
end

set -l __cudaenv_cmds install uninstall list ls list-remote ls-remote info prefix init use deactivate env local global current which exec verify jupyter doctor adopt cache modulefile mirror push pull update outdated self config help
complete -c cudaenv -f
complete -c cudaenv -n "not __fish_seen_subcommand_from $__cudaenv_cmds" -a "$__cudaenv_cmds"
complete -c cudaenv -s h -l help -d 'usage'
complete -c cudaenv -s q -l quiet
complete -c cudaenv -s v -l verbose
complete -c cudaenv -l manifest -r -F -d 'manifest file or URL'
complete -c cudaenv -l insecure -d 'allow http:// URLs'
complete -c cudaenv -l driver -x -d 'plan for this NVIDIA driver (the compute nodes\')'
complete -c cudaenv -n "not __fish_seen_subcommand_from $__cudaenv_cmds" -l version
complete -c cudaenv -n '__fish_seen_subcommand_from use env prefix local global uninstall verify' -a '(__cudaenv_installed) system' -d toolchain
complete -c cudaenv -n '__fish_seen_subcommand_from modulefile' -a '(__cudaenv_installed)' -d toolchain
complete -c cudaenv -n '__fish_seen_subcommand_from modulefile' -l all -d 'every installed toolchain'
complete -c cudaenv -n '__fish_seen_subcommand_from modulefile' -l format -xa 'lmod tcl'
complete -c cudaenv -n '__fish_seen_subcommand_from modulefile' -l to -xa '(__fish_complete_directories)'
complete -c cudaenv -n '__fish_seen_subcommand_from install' -l modulefiles -xa '(__fish_complete_directories)' -d 'regenerate module files'
complete -c cudaenv -n '__fish_seen_subcommand_from install' -l module-format -xa 'lmod tcl'
complete -c cudaenv -n '__fish_seen_subcommand_from exec' -a '(__cudaenv_installed)' -d toolchain
complete -c cudaenv -n '__fish_seen_subcommand_from install info mirror; and not string match -q -- "*+*" (commandline -ct)' -a '(__cudaenv_remote tf) (__cudaenv_remote torch) (__cudaenv_remote jax) (__cudaenv_remote cuda)' -d spec
complete -c cudaenv -n '__fish_seen_subcommand_from install info mirror' -a '(__cudaenv_components)' -d component
complete -c cudaenv -n '__fish_seen_subcommand_from mirror' -l to -xa '(__fish_complete_directories)' -d 'mirror directory'
complete -c cudaenv -n '__fish_seen_subcommand_from mirror' -l check -xa '(__fish_complete_directories)' -d 're-hash a mirror'
complete -c cudaenv -n '__fish_seen_subcommand_from mirror' -l all -d 'every file of the manifest'
complete -c cudaenv -n '__fish_seen_subcommand_from mirror' -l sign-key -r -F -d 'ed25519 key signing cudaenv.json'
complete -c cudaenv -n '__fish_seen_subcommand_from mirror' -l url -x -d 'URL nodes fetch cudaenv.json from (its signed source)'
complete -c cudaenv -n '__fish_seen_subcommand_from mirror' -l platform -xa 'linux-x86_64 linux-sbsa'
complete -c cudaenv -n '__fish_seen_subcommand_from mirror' -l repack -xa 'zstd tar' -d 'store archives again as .tar.zst or .tar'
complete -c cudaenv -n '__fish_seen_subcommand_from push; and test (count (commandline -opc)) -eq 2' -a '(__cudaenv_installed)' -d toolchain
complete -c cudaenv -n '__fish_seen_subcommand_from push pull' -a 'oci://' -d 'oci://REGISTRY/REPO:TAG'
complete -c cudaenv -n '__fish_seen_subcommand_from pull' -s f -l force -d 'replace a toolchain of the same name'
complete -c cudaenv -n '__fish_seen_subcommand_from list-remote ls-remote' -a 'tf torch jax cuda cudnn'
complete -c cudaenv -n '__fish_seen_subcommand_from list-remote ls-remote' -l names -d 'bare specs'
complete -c cudaenv -n '__fish_seen_subcommand_from init' -a 'bash zsh fish'
complete -c cudaenv -n '__fish_seen_subcommand_from init' -l static -d 'write a file to source (no process at shell start)'
complete -c cudaenv -n '__fish_seen_subcommand_from init' -s o -l output -r -d 'where --static writes'
complete -c cudaenv -n '__fish_seen_subcommand_from which' -a 'nvcc ptxas cuobjdump nvdisasm nsys ncu cuda-gdb compute-sanitizer'
complete -c cudaenv -n '__fish_seen_subcommand_from help' -a "$__cudaenv_cmds"
complete -c cudaenv -n '__fish_seen_subcommand_from env' -l shell -xa 'bash zsh fish json dotenv'
complete -c cudaenv -n '__fish_seen_subcommand_from list ls current doctor env info list-remote ls-remote verify cache outdated' -l json
complete -c cudaenv -n '__fish_seen_subcommand_from list ls' -l names -d 'bare names, one per line'
complete -c cudaenv -n '__fish_seen_subcommand_from list ls cache' -l sizes -d 'walk the trees for sizes afresh'
complete -c cudaenv -n '__fish_seen_subcommand_from doctor' -l framework -d 'probe the frameworks again'
complete -c cudaenv -n '__fish_seen_subcommand_from doctor' -l no-framework -d 'skip the framework layer'
complete -c cudaenv -n '__fish_seen_subcommand_from use local global' -l unset
complete -c cudaenv -n '__fish_seen_subcommand_from global' -l system -d 'root: /usr/local/cuda + ld.so.conf.d'
complete -c cudaenv -n '__fish_seen_subcommand_from global cache' -l dry-run -d 'print the plan'
complete -c cudaenv -n '__fish_seen_subcommand_from global' -l rollback -d 'previous system target'
complete -c cudaenv -n '__fish_seen_subcommand_from global local uninstall install' -l force
complete -c cudaenv -n '__fish_seen_subcommand_from install info mirror' -l cudnn -xa '(__cudaenv_remote cudnn)'
complete -c cudaenv -n '__fish_seen_subcommand_from install info mirror' -l no-cudnn
complete -c cudaenv -n '__fish_seen_subcommand_from install' -l offline
complete -c cudaenv -n '__fish_seen_subcommand_from install mirror' -l from -xa 'runfile redist' -d 'runfile or NVIDIA components'
complete -c cudaenv -n '__fish_seen_subcommand_from install info mirror' -l components -x -d '+name,-name: adjust the profile'
complete -c cudaenv -n '__fish_seen_subcommand_from verify' -l report -d 'one JSON line for this node (cudaenv-report merges them)'
complete -c cudaenv -n '__fish_seen_subcommand_from verify' -l all-devices
complete -c cudaenv -n '__fish_seen_subcommand_from verify' -l bench
complete -c cudaenv -n '__fish_seen_subcommand_from verify' -l deep
complete -c cudaenv -n '__fish_seen_subcommand_from verify' -l framework -xa 'tf torch jax' -d 'check TensorFlow / PyTorch / JAX on the toolchain'
complete -c cudaenv -n '__fish_seen_subcommand_from verify jupyter' -l python -r -d 'the Python with the framework'
complete -c cudaenv -n '__fish_seen_subcommand_from jupyter' -a 'install (__cudaenv_installed)'
complete -c cudaenv -n '__fish_seen_subcommand_from jupyter' -l name -x -d 'kernel name'
complete -c cudaenv -n '__fish_seen_subcommand_from adopt' -l name -x -d 'toolchain name'
complete -c cudaenv -n '__fish_seen_subcommand_from adopt' -l scan -d 'offer /usr/local/cuda-*, /opt/cuda*, /usr/lib/cuda'
complete -c cudaenv -n '__fish_seen_subcommand_from adopt' -a '(__fish_complete_directories)'
complete -c cudaenv -n '__fish_seen_subcommand_from cache; and not __fish_seen_subcommand_from dir list clean prune' -a 'dir list clean prune'
complete -c cudaenv -n '__fish_seen_subcommand_from self; and not __fish_seen_subcommand_from update' -a 'update'
complete -c cudaenv -n '__fish_seen_subcommand_from self' -l version -r -d 'that release instead of the newest'
complete -c cudaenv -n '__fish_seen_subcommand_from self' -l check -d 'say whether a newer release exists'
complete -c cudaenv -n '__fish_seen_subcommand_from install local use env exec' -l for -rF -d "the toolchain this Python's TensorFlow/PyTorch/JAX was built for"
complete -c cudaenv -n '__fish_seen_subcommand_from install local use env exec' -l framework -xa 'tf torch jax' -d 'which framework decides'
complete -c cudaenv -n '__fish_seen_subcommand_from local use env exec verify' -l libs -xa 'framework toolchain' -d 'runtime libraries: the framework'"'"'s own or the toolchain'"'"'s'
complete -c cudaenv -n '__fish_seen_subcommand_from config; and not __fish_seen_subcommand_from list get set unset' -a 'list get set unset'
complete -c cudaenv -n '__fish_seen_subcommand_from config; and __fish_seen_subcommand_from get set unset' -a 'manifest mirror update_interval manifest_unsigned cudnn keys'
complete -c cudaenv -n '__fish_seen_subcommand_from config' -l system -d "the site's config file"
