#!/usr/bin/env bats
# make install: binary, full binary, manifest, man pages and completions land
# under PREFIX, and the installed program finds its manifest and its full
# binary relative to itself (no build tree needed).
load ../lib/common
bats_require_minimum_version 1.5.0

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
    ! grep -q "$T/dest" "$d"/share/cudaenv/init/* || false
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

# the commands `cudaenv --help` lists, one per line
help_commands() {
    "$CUDAENV" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }'
}

@test "the man pages render and document every command and exit code" {
    command -v man >/dev/null || skip "man not installed"
    # every command the program lists has its own entry in the COMMANDS section:
    # a .TP tag naming it in bold (.B CMD ... or a bold word of .BR)
    cmds=$(help_commands)
    [ "$(wc -l <<<"$cmds")" -ge 16 ]
    tags=$(python3 - "$REPO/man/cudaenv.1" <<'PY'
import re, shlex, sys
lines = open(sys.argv[1]).read().split("\n")
s = lines.index(".SH COMMANDS")
e = next(i for i in range(s + 1, len(lines)) if lines[i].startswith(".SH "))
for i in range(s, e):
    if lines[i] != ".TP" or i + 1 >= e: continue
    tag = lines[i + 1]
    if tag.startswith(".B "):
        words = [tag[3:].split()[0]]
    elif tag.startswith(".BR "):
        words = shlex.split(tag[4:])[0::2]
    else:
        continue
    for w in words:
        print(re.sub(r"\\f.", "", w).replace("\\-", "-").split()[0])
PY
)
    for c in $cmds; do
        grep -qx -- "$c" <<<"$tags" || { echo "no COMMANDS entry for $c (tags: $(echo $tags))"; false; }
    done
    # troff's warnings go to stderr (kept apart: interleaved into the page they broke its sections)
    run --separate-stderr env MANWIDTH=100 man -l "$REPO/man/cudaenv.1"
    [ "$status" -eq 0 ]
    # and it renders without warnings (an unbreakable word wider than the line) at 80 and 100 columns
    for f in "$REPO"/man/*.[0-9]; do
        for w in 80 100; do
            warn=$(MANWIDTH=$w man -l "$f" 2>&1 >/dev/null)
            [ -z "$warn" ] || { echo "$f at $w columns: $warn"; false; }
        done
    done
    # and the rendered page shows them inside its COMMANDS section
    section=$(awk '/^COMMANDS/ { on = 1; next } /^[A-Z]/ { on = 0 } on' <<<"$output")
    for c in $cmds; do
        grep -qE "^ +$c( |$)|, $c( |$)" <<<"$section" || { echo "rendered COMMANDS lacks $c"; false; }
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
