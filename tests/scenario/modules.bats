#!/usr/bin/env bats
# cudaenv modulefile: module files for the real Lmod and Environment Modules
# (Debian's lmod package; environment-modules conflicts with it in Debian, so
# tools/envmodules.sh unpacks that one under /var/cache/cudaenv-test), driven
# in a real bash: module avail, load -> nvcc and a -lcudart probe resolve to
# the toolchain, swap, purge restores PATH exactly; --all regenerates.
load ../lib/common
bats_require_minimum_version 1.5.0

LMOD_INIT=/usr/share/lmod/lmod/init/bash

setup() {
    switch_setup
    # the receipt names the TensorFlow releases the pair serves (whatis shows them)
    fx_receipt "$P118"
    python3 - "$P118/.cudaenv-receipt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); r["tensorflow"] = ["2.12", "2.14"]; json.dump(r, open(sys.argv[1], "w"))
PY
    export T P118 P117 P123 MODS=$T/modules
}
teardown() { common_teardown; }

# modulecmd.tcl of Environment Modules: installed, or unpacked by tools/envmodules.sh
envmodules_cmd() {
    local c
    for c in "${CUDAENV_TEST_ENVMODULES:-}/usr/lib/x86_64-linux-gnu/modulecmd.tcl" \
             /usr/lib/x86_64-linux-gnu/modulecmd.tcl \
             /var/cache/cudaenv-test/environment-modules/usr/lib/x86_64-linux-gnu/modulecmd.tcl; do
        [ -f "$c" ] && { echo "$c"; return 0; }
    done
    return 1
}

# The scenario every module system must pass, in a clean bash whose `module`
# function the caller defines in $1.  Prints one line per check.
MODULE_SCENARIO='
    export MODULEPATH=$MODS
    P0=$PATH
    module avail 2>&1 | tr -s " " "\n" | grep "^cuda/" | sort | tr "\n" " "; echo
    module load cuda/11.8.0-cudnn8.7.0.84 || exit 10
    echo "load|$(command -v nvcc)|$(nvcc --version | tail -1)|$CUDA_HOME|$CUDA_PATH|$CUDNN_PATH|$LD_LIBRARY_PATH|$LIBRARY_PATH"
    cc -o "$T/probe118" "$T/probe.c" -lcudart && "$T/probe118" | tr "\n" " "; echo
    module swap cuda cuda/12.3.0 >/dev/null 2>&1 || module switch cuda/11.8.0-cudnn8.7.0.84 cuda/12.3.0 || exit 11
    echo "swap|$(command -v nvcc)|$CUDA_HOME|${CUDNN_PATH-unset}|$LD_LIBRARY_PATH|$LIBRARY_PATH"
    cc -o "$T/probe122" "$T/probe.c" -lcudart && "$T/probe122" | tr "\n" " "; echo
    module purge >/dev/null 2>&1
    [ "$PATH" = "$P0" ] && echo "purge|PATH restored|${CUDA_HOME-unset}|${LD_LIBRARY_PATH-unset}|${LIBRARY_PATH-unset}" || echo "purge|PATH=$PATH"
'

probe_source() {
    fx_probe "$T/p" "$P118" && rm -f "$T/p"   # only to check cc works
    cat > "$T/probe.c" <<'C'
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <string.h>
int cudaRuntimeGetVersion(int *v);
static int cb(struct dl_phdr_info *i, size_t s, void *d) {
    (void)s; (void)d;
    if (strstr(i->dlpi_name, "libcudart")) printf("%s\n", i->dlpi_name);
    return 0;
}
int main(void) { int v = 0; cudaRuntimeGetVersion(&v); printf("%d\n", v); dl_iterate_phdr(cb, NULL); return 0; }
C
}

check_scenario() {
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "cuda/11.7.0 cuda/11.8.0-cudnn8.7.0.84 cuda/12.3.0 " ] \
        || [ "${lines[0]}" = "cuda/11.7.0 cuda/11.8.0-cudnn8.7.0.84 cuda/12.3.0(default) " ] \
        || [ "${lines[0]}" = "cuda/11.7.0 cuda/11.8.0-cudnn8.7.0.84 cuda/12.3.0(D) " ]
    # LIBRARY_PATH as cudaenv use sets it: the probe links with -lcudart and no -L
    [ "${lines[1]}" = "load|$P118/bin/nvcc|Cuda compilation tools, release 11.8, V11.8.89|$P118|$P118|$P118|$P118/lib64|$P118/lib64:$P118/lib64/stubs" ]
    [ "${lines[2]}" = "11080 $P118/lib64/libcudart.so.11.0 " ]
    [ "${lines[3]}" = "swap|$P123/bin/nvcc|$P123|unset|$P123/lib64|$P123/lib64:$P123/lib64/stubs" ]
    [ "${lines[4]}" = "12030 $P123/lib64/libcudart.so.12 " ]
    [ "${lines[5]}" = "purge|PATH restored|unset|unset|unset" ]
}

@test "modulefile: usage errors exit 2; one toolchain printed on stdout; unknown exits 3" {
    run --separate-stderr "$CUDAENV" modulefile
    [ "$status" -eq 2 ]
    run --separate-stderr "$CUDAENV" modulefile 11.8 --all --to "$MODS"
    [ "$status" -eq 2 ]
    run --separate-stderr "$CUDAENV" modulefile 11.8 --format csh
    [ "$status" -eq 2 ]; [[ "$stderr" == *"use lmod or tcl"* ]]
    run --separate-stderr "$CUDAENV" modulefile --all
    [ "$status" -eq 2 ]; [[ "$stderr" == *"--to DIR"* ]]
    run --separate-stderr "$CUDAENV" modulefile 10.2
    [ "$status" -eq 3 ]; [[ "$stderr" == *"cudaenv install 10.2"* ]]

    run "$CUDAENV" modulefile 11.8
    [ "$status" -eq 0 ]
    [[ "$output" == *'family("cuda")'* ]]
    [[ "$output" == *"local prefix = \"$P118\""* ]]
    [[ "$output" == *'prepend_path("PATH", prefix .. "/bin")'* ]]
    [[ "$output" == *'prepend_path("LD_LIBRARY_PATH", prefix .. "/lib64")'* ]]
    [[ "$output" == *'setenv("CUDNN_PATH", prefix)'* ]]
    [[ "$output" == *'whatis("TensorFlow: 2.12, 2.14")'* ]]
    [[ "$output" == *'whatis("Description: CUDA 11.8.0 + cuDNN 8.7.0.84 (TensorFlow 2.12, 2.14)")'* ]] || { echo "$output"; false; }
    [[ "$output" == *'help("CUDA 11.8.0 + cuDNN 8.7.0.84 (TensorFlow 2.12, 2.14), installed by cudaenv in\n'* ]]
    run "$CUDAENV" modulefile 12.3 --format tcl
    [ "$status" -eq 0 ]
    [[ "$output" == "#%Module1.0"* ]]
    [[ "$output" == *"conflict cuda"* ]]
    [[ "$output" == *"prepend-path LD_LIBRARY_PATH \$prefix/lib64"* ]]
    [[ "$output" != *CUDNN_PATH* ]]
    [[ "$output" == *"proc ModulesHelp"* ]]
    run "$CUDAENV" modulefile 11.8 --to "$MODS"
    [ "$output" = "$MODS/cuda/11.8.0-cudnn8.7.0.84.lua" ]
    [ -f "$output" ]
}

@test "module files escape every field: receipt text with ] [exec] \$var quotes braces newlines is inert; tclsh and lua accept the files (issue 21, 24)" {
    command -v tclsh >/dev/null || skip "no tclsh"
    # what a receipt may say, as TensorFlow releases: each ends a naive quoting
    python3 - "$P118/.cudaenv-receipt.json" "$T" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = sys.argv[2]
r["tensorflow"] = ["2.14} ; exec touch %s/pwned1 ; puts {" % t, "[exec touch %s/pwned2]" % t,
                   "$env(HOME) $prefix \\", "q\"uote", "]] os.execute('touch %s/pwned3') --[[" % t,
                   "\"); os.execute('touch %s/pwned4'); (\"" % t, "nl\nsecond", "esc\u001b]52;c;eA==\u0007"]
json.dump(r, open(sys.argv[1], "w"))
PY
    want='2.14} ; exec touch '"$T"'/pwned1 ; puts {, [exec touch '"$T"'/pwned2], $env(HOME) $prefix \, q"uote'
    # Tcl: the file as Environment Modules reads it, with its commands stubbed; then ModulesHelp
    "$CUDAENV" modulefile 11.8 --format tcl > "$T/m.tcl"
    cat > "$T/run.tcl" <<'TCL'
proc module-whatis {s} { puts "WHATIS<$s>" }
proc conflict {args} {}
proc prepend-path {args} {}
proc setenv {k v} { puts "SETENV<$k=$v>" }
source [lindex $argv 0]
ModulesHelp
TCL
    run tclsh "$T/run.tcl" "$T/m.tcl"
    [ "$status" -eq 0 ] || { echo "tclsh rejected it: $output"; cat "$T/m.tcl"; false; }
    for i in 1 2 3 4; do [ ! -e "$T/pwned$i" ] || { echo "tcl ran pwned$i"; false; }; done
    [[ "$output" == *"WHATIS<CUDA 11.8.0 + cuDNN 8.7.0.84 (TensorFlow $want"* ]] || { echo "$output"; false; }
    [[ "$output" == *"SETENV<CUDA_HOME=$P118>"* ]]
    [[ "$output" == *$'nl\nsecond'* && "$output" != *$'\033'* && "$output" != *$'\007'* ]]
    # Lua: as Lmod evaluates it, with its functions stubbed
    "$CUDAENV" modulefile 11.8 > "$T/m.lua"
    if command -v lua >/dev/null; then
        run lua -e 'function help(s) print("HELP<" .. s .. ">") end
                    function whatis(s) print("WHATIS<" .. s .. ">") end
                    function family() end function prepend_path() end
                    function setenv(k, v) print("SETENV<" .. k .. "=" .. v .. ">") end
                    dofile(arg[1])' "$T/m.lua"
        [ "$status" -eq 0 ] || { echo "lua rejected it: $output"; cat "$T/m.lua"; false; }
        for i in 1 2 3 4; do [ ! -e "$T/pwned$i" ] || { echo "lua ran pwned$i"; false; }; done
        [[ "$output" == *"WHATIS<TensorFlow: $want"* ]] || { echo "$output"; false; }
        [[ "$output" == *"SETENV<CUDA_HOME=$P118>"* && "$output" != *$'\033'* ]]
    fi
    # the real module systems: module help runs nothing
    "$CUDAENV" modulefile --all --to "$MODS" >/dev/null
    if [ -f "$LMOD_INIT" ]; then
        run env -i HOME="$HOME" PATH=/usr/bin:/bin MODS="$MODS" LMOD_INIT="$LMOD_INIT" bash --norc --noprofile -c \
            'source "$LMOD_INIT"; export MODULEPATH=$MODS; module help cuda/11.8.0-cudnn8.7.0.84 2>&1; module load cuda/11.8.0-cudnn8.7.0.84 2>&1; echo "home=$CUDA_HOME"'
        for i in 1 2 3 4; do [ ! -e "$T/pwned$i" ] || { echo "lmod ran pwned$i"; false; }; done
        [[ "$output" == *"home=$P118"* && "$output" == *"q\"uote"* ]] || { echo "$output"; false; }
    fi
    local em
    if em=$(envmodules_cmd) && command -v tclsh8.6 >/dev/null; then
        "$CUDAENV" modulefile --all --format tcl --to "$MODS" >/dev/null
        run env -i HOME="$HOME" PATH=/usr/bin:/bin MODS="$MODS" EM="$em" bash --norc --noprofile -c '
            module() { eval "$(tclsh8.6 "$EM" bash "$@")"; }
            export MODULEPATH=$MODS; module help cuda/11.8.0-cudnn8.7.0.84 2>&1; module load cuda/11.8.0-cudnn8.7.0.84 2>&1; echo "home=$CUDA_HOME"'
        for i in 1 2 3 4; do [ ! -e "$T/pwned$i" ] || { echo "modules ran pwned$i"; false; }; done
        [[ "$output" == *"home=$P118"* && "$output" == *"q\"uote"* ]] || { echo "$output"; false; }
    fi
}

@test "modulefile: a prefix module files cannot quote is refused, naming it" {
    mkdir -p "$T/we\$ird"
    mv "$CUDAENV_ROOT" "$T/we\$ird/root"
    CUDAENV_ROOT="$T/we\$ird/root" run --separate-stderr "$CUDAENV" modulefile 11.7 --to "$MODS"
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"we\$ird/root/versions/11.7.0"* ]]
    [ ! -e "$MODS/cuda/11.7.0.lua" ]
}

@test "modulefile: a prefix with { or } is refused too, naming it; nothing written" {
    for ch in '{' '}'; do
        mkdir -p "$T/a${ch}b"
        mv "$CUDAENV_ROOT" "$T/a${ch}b/root"
        CUDAENV_ROOT="$T/a${ch}b/root" run --separate-stderr "$CUDAENV" modulefile 11.7 --to "$MODS"
        [ "$status" -eq 2 ] || { echo "$ch: $status $stderr"; false; }
        [[ "$stderr" == *"a${ch}b/root/versions/11.7.0"*"use a plainer CUDAENV_ROOT"* ]]
        [ ! -e "$MODS/cuda/11.7.0.lua" ]
        CUDAENV_ROOT="$T/a${ch}b/root" run --separate-stderr "$CUDAENV" modulefile 11.7 --format tcl
        [ "$status" -eq 2 ]
        [ -z "$output" ]
        mv "$T/a${ch}b/root" "$CUDAENV_ROOT"
    done
}

@test "Lmod (lua): avail lists them, load -> nvcc and -lcudart resolve to the toolchain, swap, purge restores PATH" {
    [ -f "$LMOD_INIT" ] || skip "lmod not installed (apt-get install lmod)"
    run "$CUDAENV" modulefile --all --to "$MODS"
    [ "$status" -eq 0 ]
    probe_source
    run env -i HOME="$HOME" PATH=/usr/bin:/bin T="$T" MODS="$MODS" LMOD_INIT="$LMOD_INIT" \
        bash --norc --noprofile -c 'source "$LMOD_INIT"; '"$MODULE_SCENARIO"
    check_scenario
    # the LIBRARY_PATH the module set is the one cudaenv use sets
    run env -u LIBRARY_PATH "$CUDAENV" env 11.8 --shell dotenv
    [[ "$output" == *"LIBRARY_PATH=$P118/lib64:$P118/lib64/stubs"* ]] || { echo "$output"; false; }
    # whatis and help carry the versions
    run env -i HOME="$HOME" PATH=/usr/bin:/bin MODS="$MODS" LMOD_INIT="$LMOD_INIT" bash --norc --noprofile -c \
        'source "$LMOD_INIT"; export MODULEPATH=$MODS; module whatis cuda/11.8.0-cudnn8.7.0.84 2>&1; module help cuda/11.8.0-cudnn8.7.0.84 2>&1'
    [[ "$output" == *"CUDA: 11.8.0"* ]]
    [[ "$output" == *"cuDNN: 8.7.0.84"* ]]
    [[ "$output" == *"TensorFlow: 2.12, 2.14"* ]]
    [[ "$output" == *"installed by cudaenv in"* ]]
}

@test "Lmod reads the Tcl module files too" {
    [ -f "$LMOD_INIT" ] || skip "lmod not installed (apt-get install lmod)"
    run "$CUDAENV" modulefile --all --format tcl --to "$MODS"
    [ "$status" -eq 0 ]
    probe_source
    run env -i HOME="$HOME" PATH=/usr/bin:/bin T="$T" MODS="$MODS" LMOD_INIT="$LMOD_INIT" \
        bash --norc --noprofile -c 'source "$LMOD_INIT"; '"$MODULE_SCENARIO"
    check_scenario
}

@test "Environment Modules (tcl): avail, load, -lcudart probe, conflict, switch, purge restores PATH" {
    local em; em=$(envmodules_cmd) || skip "Environment Modules not found (tools/envmodules.sh unpacks it)"
    command -v tclsh8.6 >/dev/null || skip "tclsh8.6 not installed"
    run "$CUDAENV" modulefile --all --format tcl --to "$MODS"
    [ "$status" -eq 0 ]
    probe_source
    run env -i HOME="$HOME" PATH=/usr/bin:/bin T="$T" MODS="$MODS" EM="$em" bash --norc --noprofile -c '
        module() { eval "$(tclsh8.6 "$EM" bash "$@")"; }
        '"$MODULE_SCENARIO"
    check_scenario
    # conflict cuda: a second cuda module is refused while one is loaded
    run env -i HOME="$HOME" PATH=/usr/bin:/bin MODS="$MODS" EM="$em" bash --norc --noprofile -c '
        module() { eval "$(tclsh8.6 "$EM" bash "$@")"; }
        export MODULEPATH=$MODS; module load cuda/11.7.0; module load cuda/12.3.0 2>&1; echo "$CUDA_HOME"
        module whatis 2>&1'
    [[ "$output" == *"conflict"* ]]
    [[ "$output" == *"$P117"* ]]
    [[ "$output" == *"CUDA 11.8.0 + cuDNN 8.7.0.84 (TensorFlow 2.12, 2.14)"* ]]
}

@test "modulefile --all: regenerates, removes only its own files of toolchains gone, and switches format" {
    run "$CUDAENV" modulefile --all --to "$MODS"
    [ "$status" -eq 0 ]
    [ -f "$MODS/cuda/11.7.0.lua" ]
    echo 'whatis("site module")' > "$MODS/cuda/site.lua"
    rm -rf "$P117"
    run "$CUDAENV" modulefile --all --to "$MODS"
    [ "$status" -eq 0 ]
    [ ! -e "$MODS/cuda/11.7.0.lua" ]
    [ -f "$MODS/cuda/site.lua" ]
    [ -f "$MODS/cuda/12.3.0.lua" ]
    run "$CUDAENV" modulefile --all --format tcl --to "$MODS"
    [ ! -e "$MODS/cuda/12.3.0.lua" ]
    [ -f "$MODS/cuda/12.3.0" ]
    [ -f "$MODS/cuda/site.lua" ]
}

@test "modulefile --all says on stdout what changed: nothing on a second run (configuration management)" {
    run --separate-stderr "$CUDAENV" modulefile --all --to "$MODS"
    [ "$output" = "3 module files in $MODS/cuda: 3 changed, 0 removed" ]
    before=$(stat -c %Y.%i "$MODS/cuda/12.3.0.lua")
    run --separate-stderr "$CUDAENV" modulefile --all --to "$MODS"
    [ "$output" = "3 module files in $MODS/cuda: 0 changed, 0 removed" ]
    [ "$(stat -c %Y.%i "$MODS/cuda/12.3.0.lua")" = "$before" ]
    rm -rf "$P117"
    run --separate-stderr "$CUDAENV" modulefile --all --to "$MODS"
    [ "$output" = "2 module files in $MODS/cuda: 0 changed, 1 removed" ]
    run --separate-stderr "$CUDAENV" modulefile --all --format tcl --to "$MODS"
    [ "$output" = "2 module files in $MODS/cuda: 2 changed, 0 removed" ]
    # a store with nothing installed: nothing to write, no cuda/ directory made, exit 0
    CUDAENV_ROOT=$T/empty run --separate-stderr "$CUDAENV" modulefile --all --to "$T/none"
    [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
    [ "$output" = "0 module files in $T/none/cuda: 0 changed, 0 removed" ]
    [ ! -e "$T/none" ]
}

@test "as root, modulefile --to a user's directory, or one whose cuda/ is a user's link to root's directory: exit 6, nothing written or removed through it" {
    [ "$(id -u)" -eq 0 ] || skip "played as root against a second user"
    ATK=cudaenv-atk
    id "$ATK" >/dev/null 2>&1 || useradd -M -s /bin/sh "$ATK" 2>/dev/null || true
    id "$ATK" >/dev/null 2>&1 || skip "useradd $ATK failed"
    mkdir -p "$T/victim" "$T/umods"
    echo "-- generated by cudaenv" > "$T/victim/9.9.9.lua"   # CE_MODULEFILE_MARK: --all would remove it
    ln -s "$T/victim" "$T/umods/cuda"
    chown -R -h "$ATK" "$T/umods"
    for args in "11.7.0 --to $T/umods" "--all --to $T/umods"; do
        # shellcheck disable=SC2086
        run --separate-stderr "$CUDAENV" modulefile $args
        [ "$status" -eq 6 ] || { echo "modulefile $args: $status $stderr"; false; }
        [[ "$stderr" == *"$T/umods is owned by uid $(id -u "$ATK"), not root"* ]] || { echo "$stderr"; false; }
        [ "$(ls -A "$T/victim")" = 9.9.9.lua ] || { ls -la "$T/victim"; false; }
    done
    # root's own directory: written
    run --separate-stderr "$CUDAENV" modulefile 11.7.0 --to "$T/rmods"
    [ "$status" -eq 0 ]
    [ -f "$T/rmods/cuda/11.7.0.lua" ]
}
