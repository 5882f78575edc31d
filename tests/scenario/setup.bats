#!/usr/bin/env bats
# Living with the repository: tools/setup.sh waits for another apt holding the
# lock (first boot), make without the -dev packages says to run tools/setup.sh,
# make uninstall removes what make install put in place.
load ../lib/common

setup() {
    common_setup
    mkdir -p "$T/stub"
    # apt-get: "lock held" for the first $APT_BUSY calls, then success; every call logged
    cat > "$T/stub/apt-get" <<'SH'
#!/bin/sh
n=$(cat "$T/apt.count" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$T/apt.count"
echo "apt-get $*" >> "$T/apt.log"
if [ "$n" -le "${APT_BUSY:-0}" ]; then
    echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
    exit 100
fi
[ -n "${APT_BROKEN:-}" ] && { echo "E: Unable to locate package libfoo-dev" >&2; exit 100; }
exit 0
SH
    printf '#!/bin/sh\necho "make $*" >> "$T/apt.log"\n' > "$T/stub/make"
    printf '#!/bin/sh\nexec "$@"\n' > "$T/stub/sudo"
    chmod +x "$T/stub/"*
    export T
}
teardown() { common_teardown; }

@test "tools/setup.sh waits while another apt holds the lock, then installs and builds" {
    run env PATH="$T/stub:$PATH" APT_BUSY=2 SETUP_LOCK_POLL=0 "$REPO/tools/setup.sh"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"another apt/dpkg holds the lock"*"waiting"* ]]
    grep -q 'apt-get -o DPkg::Lock::Timeout=900 install -y --no-install-recommends .*libcjson-dev' "$T/apt.log"
    grep -q '^make -j' "$T/apt.log"
    [ "$(cat "$T/apt.count")" -eq 4 ]
}

@test "tools/setup.sh fails at once for anything but the lock, and gives up on a lock after SETUP_LOCK_WAIT" {
    run env PATH="$T/stub:$PATH" APT_BROKEN=1 SETUP_LOCK_POLL=0 "$REPO/tools/setup.sh"
    [ "$status" -ne 0 ]
    [[ "$output" != *"waiting"* ]]
    ! grep -q '^make' "$T/apt.log" || false
    rm -f "$T/apt.count" "$T/apt.log"
    run env PATH="$T/stub:$PATH" APT_BUSY=1000 SETUP_LOCK_WAIT=2 SETUP_LOCK_POLL=1 "$REPO/tools/setup.sh"
    [ "$status" -ne 0 ]
    [[ "$output" == *"waiting"* ]]
}

@test "make without the -dev packages: one line naming tools/setup.sh, not a page of pkg-config errors" {
    run make -C "$REPO" BUILD="$T/build" PKG_CONFIG=false
    [ "$status" -ne 0 ]
    [[ "$output" == *"build dependencies missing"*"Run tools/setup.sh"* ]]
    [ "$(grep -c 'Package .* was not found' <<<"$output")" -eq 0 ]
    [ "${#lines[@]}" -le 3 ]
    # clean needs no dependencies (in a copy: clean also removes build-asan, which
    # make check-asan may be running from at the same time)
    mkdir -p "$T/clone" && cp "$REPO/Makefile" "$T/clone/"
    run make -C "$T/clone" BUILD="$T/build" PKG_CONFIG=false clean
    [ "$status" -eq 0 ]
}

@test "make uninstall removes exactly what make install put in place" {
    unset CUDAENV_FULL
    run make -s -C "$REPO" BUILD="$BUILD" install DESTDIR="$T/dest" PREFIX=/opt/ce
    [ "$status" -eq 0 ]
    [ -n "$(find "$T/dest" -type f)" ]
    mkdir -p "$T/dest/opt/ce/bin" && echo keep > "$T/dest/opt/ce/bin/other-tool"
    run make -s -C "$REPO" BUILD="$BUILD" uninstall DESTDIR="$T/dest" PREFIX=/opt/ce
    [ "$status" -eq 0 ]
    [ "$(find "$T/dest" -type f)" = "$T/dest/opt/ce/bin/other-tool" ]
}

@test "make manifest that fails (no generator data beside the clone) leaves the manifest as it was" {
    mkdir -p "$T/clone"
    cp -a "$REPO/Makefile" "$REPO/tools" "$REPO/share" "$T/clone/"
    before=$(sha256sum < "$T/clone/share/manifests/cudaenv.json")
    # a generator that fails half-way, after writing part of its output
    printf 'import sys\nprint("{\\"schema\\": 1,")\nsys.exit("generator failed")\n' > "$T/clone/tools/gen-manifest.py"
    run make -C "$T/clone" manifest
    [ "$status" -ne 0 ]
    [ "$(sha256sum < "$T/clone/share/manifests/cudaenv.json")" = "$before" ]
    [ "$(ls "$T/clone/share/manifests")" = "cudaenv.json" ]
}

@test "make check / make demo install what they lack first: setup.sh --deps runs apt only when a package is missing" {
    # a copy of tools/ whose deps.txt names one package dpkg does not have
    mkdir -p "$T/repo/tools"
    cp "$REPO"/tools/setup.sh "$REPO"/tools/envmodules.sh "$T/repo/tools/"
    printf '#!/bin/sh\necho "envmodules $*" >> "$T/apt.log"\n' > "$T/repo/tools/envmodules.sh"
    chmod +x "$T/repo/tools/envmodules.sh"
    echo "bash" > "$T/repo/tools/deps.txt"
    echo "coreutils" > "$T/repo/tools/deps-test.txt"
    if [ ! -f /var/cache/cudaenv-test/environment-modules/usr/lib/x86_64-linux-gnu/modulecmd.tcl ]; then
        skip "Environment Modules not unpacked here (tools/envmodules.sh)"
    fi
    run env PATH="$T/stub:$PATH" "$T/repo/tools/setup.sh" --check --test
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    run env PATH="$T/stub:$PATH" "$T/repo/tools/setup.sh" --deps --test
    [ "$status" -eq 0 ] && [ ! -e "$T/apt.log" ] || false          # nothing missing: no apt at all
    echo "bash cudaenv-no-such-package" > "$T/repo/tools/deps.txt"
    run env PATH="$T/stub:$PATH" "$T/repo/tools/setup.sh" --check
    [ "$status" -eq 1 ] && [[ "$output" == *"missing: cudaenv-no-such-package"* ]] || false
    run env PATH="$T/stub:$PATH" "$T/repo/tools/setup.sh" --deps
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    grep -q 'install -y --no-install-recommends bash cudaenv-no-such-package$' "$T/apt.log"
    run grep -E '^make|^envmodules' "$T/apt.log"             # --deps installs, the Makefile builds;
    [ "$status" -eq 1 ]                                      # the build's packages only
    # what only the tests need: with --test, and Environment Modules with it
    echo "bash" > "$T/repo/tools/deps.txt"
    echo "coreutils cudaenv-no-such-test-package" > "$T/repo/tools/deps-test.txt"
    run env PATH="$T/stub:$PATH" "$T/repo/tools/setup.sh" --check
    [ "$status" -eq 0 ] || { echo "$output"; false; }      # the build lacks nothing
    run env PATH="$T/stub:$PATH" "$T/repo/tools/setup.sh" --check --test
    [ "$status" -eq 1 ] && [[ "$output" == *"missing: cudaenv-no-such-test-package"* ]] || false
    : > "$T/apt.log"
    run env PATH="$T/stub:$PATH" "$T/repo/tools/setup.sh" --deps --test
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    grep -q 'install -y --no-install-recommends bash coreutils cudaenv-no-such-test-package$' "$T/apt.log"
    grep -q '^envmodules' "$T/apt.log"
    # and the Makefile calls it: check with --test, demo without
    grep -q 'tools/setup.sh --deps $(SETUP_TEST)' "$REPO/Makefile"
    grep -qE '^ifneq \(\$\(filter check check-asan demo' "$REPO/Makefile"
    grep -qE '^SETUP_TEST := \$\(if \$\(filter check check-asan ' "$REPO/Makefile"
    run grep -E '^SETUP_TEST := .*demo' "$REPO/Makefile"
    [ "$status" -eq 1 ]
}
