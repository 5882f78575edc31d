#!/usr/bin/env bats
# The release as users get it (make dist, tools/install.sh, cudaenv self update):
# a relocatable tree that runs with no library of this machine's but glibc, its
# .deb and wheel, SHA256SUMS signed; install.sh from a loopback release server as
# a user without root, refusing a tampered tarball or a foreign signature; self
# update to the newest release in one rename, refusing what dpkg or pip owns.
# (The Debian 11 build root and bare Debian 11/13 roots: make distcheck.)
load ../lib/common
load ../lib/server
load ../lib/release

ATK=cudaenv-atk

setup_file() {
    release_build_file
    if [ "$(id -u)" -eq 0 ]; then id "$ATK" >/dev/null 2>&1 || useradd -M -s /bin/sh "$ATK" 2>/dev/null || true; fi
}

setup() {
    common_setup
    export RELEASE_SRV=$T/srv
    mkdir -p "$RELEASE_SRV"
    release_publish "$RELEASE_VER"
    server_start "$RELEASE_SRV"
    ARCH=$(uname -m)
    TARBALL=cudaenv-$RELEASE_VER-linux-$ARCH.tar.gz
}
teardown() { server_stop; common_teardown; }

# as_user CMD...: CMD as the second user, HOME in $T/home (theirs)
as_user() {
    runuser -u "$ATK" -- env -i PATH=/usr/bin:/bin HOME="$T/home" TMPDIR="$T/home/tmp" "$@"
}
user_home() {
    [ "$(id -u)" -eq 0 ] || skip "install.sh is played as a second user (runuser)"
    id "$ATK" >/dev/null 2>&1 || skip "useradd $ATK failed"
    chmod 755 "$T"
    mkdir -p "$T/home/tmp"
    chown -R "$ATK" "$T/home"
}

@test "make dist: the tarball, .deb, wheel and install.sh, every one in SHA256SUMS, signed; the tree runs on glibc alone" {
    d=$RELEASE_DIST/$RELEASE_VER
    [ "$(cat "$RELEASE_DIST/latest")" = "$RELEASE_VER" ]
    for f in "$TARBALL" "cudaenv_${RELEASE_VER}_$(dpkg --print-architecture).deb" \
             "cudaenv-$RELEASE_VER-py3-none-manylinux_2_31_$ARCH.whl" install.sh SHA256SUMS SHA256SUMS.sig; do
        [ -s "$d/$f" ] || { echo "missing: $f"; ls "$d"; false; }
    done
    (cd "$d" && sha256sum -c --quiet SHA256SUMS)
    [ "$(wc -l < "$d/SHA256SUMS")" -eq 4 ]
    base64 -d < "$d/SHA256SUMS.sig" > "$T/sig"
    openssl pkey -in "$RELEASE_KEY" -pubout -out "$T/pub.pem"
    openssl pkeyutl -verify -pubin -inkey "$T/pub.pem" -rawin -in "$d/SHA256SUMS" -sigfile "$T/sig"
    # the release key is the one install.sh carries, the base the one it was built for
    grep -q "$(sed -n 2p "$T/pub.pem")" "$d/install.sh"
    grep -q "RELEASE_BASE_DEFAULT='https://releases.invalid/cudaenv'" "$d/install.sh"
    tar -xzf "$d/$TARBALL" -C "$T"
    t=$T/cudaenv-$RELEASE_VER-linux-$ARCH
    for f in bin/cudaenv libexec/cudaenv/cudaenv-full lib/libcjson.so.1 share/cudaenv/manifests/cudaenv.json \
             share/cudaenv/redist share/man/man1/cudaenv.1 share/bash-completion/completions/cudaenv; do
        [ -e "$t/$f" ] || { echo "missing in the tarball: $f"; false; }
    done
    ls "$t"/lib/full/libarchive.so.* "$t"/lib/full/libcurl.so.* >/dev/null
    [ ! -e "$t/share/cudaenv/init" ] || false   # written for the real prefix by install.sh
    # with no library path and an empty environment, from anywhere: its own libraries, its own manifest
    cd /
    run env -i "$t/bin/cudaenv" --version
    [ "$status" -eq 0 ] && [[ "$output" == "cudaenv $RELEASE_VER"* ]] || false
    run env -i HOME="$T/h" CUDAENV_ROOT="$T/r" "$t/bin/cudaenv" info tf-2.14
    [ "$status" -eq 0 ] && [[ "$output" == *"11.8"* ]] || { echo "$output"; false; }
    LD_LIBRARY_PATH= ldd "$t/libexec/cudaenv/cudaenv-full" > "$T/ldd"
    grep -Eq "=> $t/libexec/cudaenv/../../lib/full/libcurl|=> $t/lib/full/libcurl" "$T/ldd" || { cat "$T/ldd"; false; }
    run grep -E 'not found|/usr/lib/.*lib(curl|archive|crypto|cjson)' "$T/ldd"
    [ "$status" -ne 0 ] || { cat "$T/ldd"; false; }
}

@test "install.sh as a user without root: verified, into ~/.local, the line for ~/.bashrc; a second run upgrades in place" {
    user_home
    cp "$RELEASE_DIST/$RELEASE_VER/install.sh" "$T/install.sh"; chmod 755 "$T/install.sh"
    run as_user sh "$T/install.sh" --base "$SERVER_URL"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"SHA256SUMS signature ok"* ]] || false
    [[ "$output" == *"cudaenv $RELEASE_VER installed in $T/home/.local"* ]] || false
    [[ "$output" == *"export PATH=\"$T/home/.local/bin:\$PATH\"; . $T/home/.local/lib/cudaenv/current/share/cudaenv/init/cudaenv.bash"* ]] || false
    top=$T/home/.local/lib/cudaenv
    [ "$(readlink "$top/current")" = "releases/$RELEASE_VER" ]
    [ "$(stat -c %U "$top/releases/$RELEASE_VER/bin/cudaenv")" = "$ATK" ]
    [ "$(cat "$top/releases/$RELEASE_VER/share/cudaenv/INSTALLER")" = install.sh ]
    [ "$(cat "$top/release.conf")" = "base=$SERVER_URL" ]
    run as_user "$T/home/.local/bin/cudaenv" --version
    [ "$status" -eq 0 ] && [[ "$output" == "cudaenv $RELEASE_VER"* ]] || false
    # the static init file names the installed binary (no path of the unpacking left)
    grep -q "$top/releases/$RELEASE_VER/bin/cudaenv" "$top/current/share/cudaenv/init/cudaenv.bash"
    run grep -c '\.new-' "$top/current/share/cudaenv/init/cudaenv.bash"
    [ "$output" = 0 ] || false
    run as_user bash -c ". $top/current/share/cudaenv/init/cudaenv.bash && type cudaenv"
    [ "$status" -eq 0 ] && [[ "$output" == *function* ]] || { echo "$output"; false; }
    # the next release: in place, the previous one kept for a rollback
    release_publish 0.9.0
    run as_user sh "$T/install.sh" --base "$SERVER_URL"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"cudaenv $RELEASE_VER -> 0.9.0 in $T/home/.local"* ]] || false
    [ "$(readlink "$top/current")" = releases/0.9.0 ]
    [ "$(cat "$top/current/share/cudaenv/RELEASE-MARK")" = 0.9.0 ]
    [ -x "$top/releases/$RELEASE_VER/bin/cudaenv" ]
    [ "$(ls -A "$top/releases" | wc -l)" -eq 2 ]
}

@test "install.sh: a tampered tarball, a foreign signature or a missing architecture: exit 5 (or 1), nothing installed, the old release untouched" {
    user_home
    cp "$RELEASE_DIST/$RELEASE_VER/install.sh" "$T/install.sh"
    run as_user sh "$T/install.sh" --base "$SERVER_URL" -q
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    top=$T/home/.local/lib/cudaenv
    before=$(cd "$top" && find . | sort | sha256sum)
    release_publish 0.9.0
    release_tamper 0.9.0
    run as_user sh "$T/install.sh" --base "$SERVER_URL"
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"cudaenv-0.9.0-linux-$ARCH.tar.gz: sha256 "*"nothing installed"* ]] || false
    # a release signed by another key
    release_publish 0.9.1
    openssl genpkey -algorithm ed25519 -out "$T/other.key" 2>/dev/null
    openssl pkeyutl -sign -inkey "$T/other.key" -rawin -in "$RELEASE_SRV/0.9.1/SHA256SUMS" | base64 -w0 > "$RELEASE_SRV/0.9.1/SHA256SUMS.sig"
    run as_user sh "$T/install.sh" --base "$SERVER_URL"
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"does not match the release key: nothing installed"* ]] || false
    # SHA256SUMS without this machine's architecture
    release_publish 0.9.2
    sed -i "/linux-$ARCH/d" "$RELEASE_SRV/0.9.2/SHA256SUMS"
    openssl pkeyutl -sign -inkey "$RELEASE_KEY" -rawin -in "$RELEASE_SRV/0.9.2/SHA256SUMS" | base64 -w0 > "$RELEASE_SRV/0.9.2/SHA256SUMS.sig"
    run as_user sh "$T/install.sh" --base "$SERVER_URL"
    [ "$status" -eq 1 ] || { echo "$output"; false; }
    [[ "$output" == *"has no line for cudaenv-0.9.2-linux-$ARCH.tar.gz"* ]] || false
    [ "$(cd "$top" && find . | sort | sha256sum)" = "$before" ]
    [ "$(readlink "$top/current")" = "releases/$RELEASE_VER" ]
}

@test "self update: the newest release, verified, switched in one rename; a tampered one refused with nothing changed" {
    user_home
    cp "$RELEASE_DIST/$RELEASE_VER/install.sh" "$T/install.sh"
    run as_user sh "$T/install.sh" --base "$SERVER_URL" -q
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    top=$T/home/.local/lib/cudaenv
    ce=$T/home/.local/bin/cudaenv
    run as_user "$ce" self update
    [ "$status" -eq 0 ] && [[ "$output" == *"cudaenv $RELEASE_VER is the newest release ($SERVER_URL/latest)"* ]] || { echo "$output"; false; }
    run as_user "$ce" self update --check
    [ "$status" -eq 0 ] || false
    release_publish 0.9.0
    run as_user "$ce" self update --check
    [ "$status" -eq 0 ] && [[ "$output" == *"$RELEASE_VER -> 0.9.0"* ]] || { echo "$output"; false; }
    [ "$(readlink "$top/current")" = "releases/$RELEASE_VER" ]
    # tampered: the tarball, then the signature of SHA256SUMS, then install.sh itself
    release_tamper 0.9.0
    run as_user "$ce" self update
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"nothing installed"* && "$output" == *"cudaenv $RELEASE_VER in $T/home/.local is unchanged"* ]] || false
    release_publish 0.9.0
    echo '# one more line' >> "$RELEASE_SRV/0.9.0/install.sh"
    run as_user "$ce" self update
    [ "$status" -eq 5 ] && [[ "$output" == *"0.9.0/install.sh: sha256 "*"refused, nothing changed"* ]] || { echo "$output"; false; }
    release_publish 0.9.0
    printf 'x' >> "$RELEASE_SRV/0.9.0/SHA256SUMS"
    run as_user "$ce" self update
    [ "$status" -eq 5 ] && [[ "$output" == *"does not match the key $top/release-key.pem"* ]] || { echo "$output"; false; }
    [ "$(readlink "$top/current")" = "releases/$RELEASE_VER" ]
    [ -z "$(ls -A "$top" | grep self-update)" ] || false
    # the real one
    release_publish 0.9.0
    run as_user "$ce" self update
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"cudaenv $RELEASE_VER -> 0.9.0 in $T/home/.local (from $SERVER_URL, SHA256SUMS signature ok)"* ]] || false
    [ "$(readlink "$top/current")" = releases/0.9.0 ]
    [ "$(cat "$top/current/share/cudaenv/RELEASE-MARK")" = 0.9.0 ]
    [ -x "$top/releases/$RELEASE_VER/bin/cudaenv" ]
}

@test "self update refuses what it did not install: a .deb (apt), a wheel (pipx), a build from source" {
    d=$RELEASE_DIST/$RELEASE_VER
    dpkg-deb -x "$d/cudaenv_${RELEASE_VER}_$(dpkg --print-architecture).deb" "$T/deb"
    [ "$(readlink "$T/deb/usr/bin/cudaenv")" = ../lib/cudaenv/bin/cudaenv ]
    [ -s "$T/deb/usr/share/man/man1/cudaenv.1.gz" ] && [ -s "$T/deb/usr/share/bash-completion/completions/cudaenv" ] || false
    dpkg-deb -f "$d/cudaenv_${RELEASE_VER}_$(dpkg --print-architecture).deb" Depends | grep -qx 'libc6 (>= 2.31)'
    run "$T/deb/usr/bin/cudaenv" self update
    [ "$status" -eq 2 ] && [[ "$output" == *"from a .deb"*"apt-get install --only-upgrade cudaenv"* ]] || { echo "$output"; false; }
    python3 -m venv "$T/venv"
    "$T/venv/bin/python" -m pip install -q --no-index --no-deps "$d/cudaenv-$RELEASE_VER-py3-none-manylinux_2_31_$ARCH.whl"
    run "$T/venv/bin/cudaenv" --version
    [ "$status" -eq 0 ] && [[ "$output" == "cudaenv $RELEASE_VER"* ]] || { echo "$output"; false; }
    run "$T/venv/bin/cudaenv" self update
    [ "$status" -eq 2 ] && [[ "$output" == *"a Python package"*"pipx upgrade cudaenv"* ]] || { echo "$output"; false; }
    run "$CUDAENV" self update
    [ "$status" -eq 2 ] && [[ "$output" == *"was not installed from a release"*"make install"* ]] || { echo "$output"; false; }
    run "$CUDAENV" self
    [ "$status" -eq 2 ] || false
}
