#!/usr/bin/env bats
# make install: binary, full binary, manifest, man pages and completions land
# under PREFIX, and the installed program finds its manifest and its full
# binary relative to itself (no build tree needed).
load ../lib/common

setup() { common_setup; unset CUDAENV_FULL; }
teardown() { common_teardown; }

@test "make install DESTDIR PREFIX lays out a working installation" {
    run make -s -C "$REPO" BUILD="$BUILD" install DESTDIR="$T/dest" PREFIX=/opt/ce
    [ "$status" -eq 0 ]
    d=$T/dest/opt/ce
    for f in bin/cudaenv libexec/cudaenv/cudaenv-full share/cudaenv/manifests/cudaenv.json \
             share/man/man1/cudaenv.1 share/man/man5/cudaenv-manifest.5 \
             share/bash-completion/completions/cudaenv share/zsh/site-functions/_cudaenv \
             share/fish/vendor_completions.d/cudaenv.fish \
             share/cudaenv/init/cudaenv.bash share/cudaenv/init/cudaenv.zsh share/cudaenv/init/cudaenv.fish; do
        [ -f "$d/$f" ] || { echo "missing $f"; false; }
    done
    # the static init files name the installed paths, never DESTDIR
    grep -q "^__CUDAENV_BIN='/opt/ce/bin/cudaenv'$" "$d/share/cudaenv/init/cudaenv.bash"
    ! grep -q "$T/dest" "$d"/share/cudaenv/init/*
    [ ! "$d/bin/cudaenv" -nt "$d/share/cudaenv/init/cudaenv.bash" ]
    # the installed light binary reads the installed manifest ...
    run "$d/bin/cudaenv" info tf-2.14 --json
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["cuda"]["version"]=="11.8.0", d; assert d["cudnn"]["version"]=="8.7.0.84", d' <<<"$output"
    # ... and re-execs the installed full binary for install (offline: nothing cached -> exit 3)
    run "$d/bin/cudaenv" install tf-2.14 --offline
    [ "$status" -eq 3 ]
    [[ "$output" != *"cannot run"* ]]
}

@test "the man pages render and document every command and exit code" {
    command -v man >/dev/null || skip "man not installed"
    run env MANWIDTH=100 man -l "$REPO/man/cudaenv.1"
    [ "$status" -eq 0 ]
    for c in install uninstall list list-remote info prefix init use env local global current which exec verify doctor; do
        [[ "$output" == *"$c"* ]] || { echo "man page lacks $c"; false; }
    done
    for v in CUDAENV_ROOT CUDAENV_MANIFEST CUDAENV_MIRROR CUDAENV_SYSROOT CUDAENV_VERSION; do
        [[ "$output" == *"$v"* ]] || { echo "man page lacks $v"; false; }
    done
    for code in 0 1 2 3 4 5 6 7 8; do
        grep -q "^\.B $code$" "$REPO/man/cudaenv.1" || { echo "exit code $code undocumented"; false; }
    done
}

@test "make demo runs install -> use -> verify offline and exits 0" {
    run env BUILD="${BUILD#$REPO/}" "$REPO/tools/demo.sh"
    [ "$status" -eq 0 ]
    [[ "$output" == *"installed 11.8.0+cudnn8.7.0.84"* ]]
    [[ "$output" == *"Cuda compilation tools, release 11.8"* ]]
    [[ "$output" == *"3 loader    passed"* ]]
    [[ "$output" == *"demo done"* ]]
}
