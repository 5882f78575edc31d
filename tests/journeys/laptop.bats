#!/usr/bin/env bats
# Journey: the laptop.  Its owner already has CUDA_HOME (and LIBRARY_PATH)
# from a profile script, installs a default toolchain and makes it global,
# pins another in a project (cudaenv local; cudaenv install with no spec
# installs the pin), moves in and out of the project in an interactive
# shell, switches by hand, deactivates, and finally uninstalls the global
# default, following the advice the refusal gives.  Every step runs in the
# same real bash (the cd hook, the shell function), so what one feature
# leaves in the environment is what the next one starts from.
bats_require_minimum_version 1.5.0
load ../lib/common
load ../lib/server
load ../lib/mirror

setup_file() { mirror_setup_file; }

setup() {
    common_setup
    mirror_serve
    export PATH=$BUILD/bin:/usr/bin:/bin
    unset LD_LIBRARY_PATH CUDA_PATH CUDNN_PATH CUDAENV_WARNED
    # what /etc/profile.d/cuda.sh set before cudaenv
    export CUDA_HOME=/usr/local/cuda LIBRARY_PATH=/usr/local/cuda/lib64/stubs
    mkdir -p "$T/proj/src" "$T/elsewhere"
    export T
}
teardown() { mirror_teardown; }

@test "laptop: install + global, a project pin (install with no spec), cd in/out, use, deactivate, CUDA_HOME restored, uninstall the global" {
    G=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    L=$CUDAENV_ROOT/versions/12.2.2+cudnn8.9.7.29
    # the default toolchain
    run --separate-stderr cudaenv install tf-2.14
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    cudaenv global tf-2.14
    # a cloned project comes with its pin; the plain `install` its README says to run installs it
    echo tf-2.15 > "$T/proj/.cuda-version"
    cd "$T/proj/src"
    run --separate-stderr cudaenv install
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"installing tf-2.15, pinned by $T/proj/.cuda-version"* ]]
    [ -f "$L/.cudaenv-receipt.json" ]
    cd "$T"
    # a day in one interactive shell
    run --separate-stderr bash --norc -i <<'EOS'
eval "$(cudaenv init bash)"
echo "start=$CUDA_HOME|$LIBRARY_PATH"
cd "$T/proj/src"
echo "project=$CUDA_HOME|$(command -v nvcc)|$LIBRARY_PATH"
cd "$T/elsewhere"
echo "left=$CUDA_HOME"
cudaenv use -q system
echo "system=$CUDA_HOME|$LIBRARY_PATH|${CUDA_PATH-unset}"
cudaenv deactivate
echo "deactivated=$CUDA_HOME"
cudaenv uninstall tf-2.14
echo "refused=$?"
cudaenv global --unset
echo "unset=$CUDA_HOME|$LIBRARY_PATH|${CUDA_PATH-unset}"
cudaenv uninstall tf-2.14
echo "uninstalled=$?"
EOS
    [ "$status" -eq 0 ]
    grep -qx "start=$G|$G/lib64:$G/lib64/stubs:/usr/local/cuda/lib64/stubs" <<<"$output" || { echo "$output"; false; }
    grep -qx "project=$L|$L/bin/nvcc|$L/lib64:$L/lib64/stubs:/usr/local/cuda/lib64/stubs" <<<"$output"
    grep -qx "left=$G" <<<"$output"
    grep -qx "system=/usr/local/cuda|/usr/local/cuda/lib64/stubs|unset" <<<"$output"
    grep -qx "deactivated=$G" <<<"$output"
    grep -qx "refused=1" <<<"$output"
    grep -qx "unset=/usr/local/cuda|/usr/local/cuda/lib64/stubs|unset" <<<"$output"
    grep -qx "uninstalled=0" <<<"$output"
    [[ "$stderr" == *"is the global default ($CUDAENV_ROOT/global): new shells would find it missing"*"cudaenv global --unset"* ]]
    # nothing in a new shell complains: no warning, no error, and the profile's CUDA_HOME stands
    [[ "$stderr" != *"warning"* ]] || { echo "$stderr"; false; }
    run --separate-stderr bash --norc -c 'eval "$(cudaenv init bash)"; echo "$CUDA_HOME"'
    [ "$output" = /usr/local/cuda ] && [ -z "$stderr" ] || false
    [ ! -e "$G" ] && [ -d "$L" ]
}
