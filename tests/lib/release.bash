# A release of this checkout for bats scenarios (release.bats), as make dist
# writes it (tools/dist.sh on this machine's glibc: DIST_ROOT=host), served
# from loopback as a release server lays it out (BASE/latest, BASE/VER/...).
#   release_build_file    (from setup_file) make dist once per file into
#                         $RELEASE_DIST, signed with a throwaway ed25519 key
#                         ($RELEASE_KEY); the build in $BATS_FILE_TMPDIR
#   release_publish VER   put a release VER on the server tree $RELEASE_SRV
#                         (VER other than the built one: the same tree with
#                         share/cudaenv/RELEASE-MARK saying VER), signed, and
#                         make it latest
#   release_tamper VER    replace VER's tarball with other bytes (SHA256SUMS kept)
release_build_file() {
    export RELEASE_DIST=$BATS_FILE_TMPDIR/dist RELEASE_KEY=$BATS_FILE_TMPDIR/release.key
    RELEASE_VER=$(sed -n 's/^VERSION *= *//p' "$REPO/Makefile")
    export RELEASE_VER
    openssl genpkey -algorithm ed25519 -out "$RELEASE_KEY" 2>/dev/null
    # the build of the running make (check, check-asan) must not leak into this one
    env -u BUILD -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u CFLAGS -u CC -u WERROR \
        DIST_ROOT=host DIST_BUILD="$BATS_FILE_TMPDIR/build" DIST_DIR="$RELEASE_DIST" SIGN_KEY="$RELEASE_KEY" \
        RELEASE_BASE=https://releases.invalid/cudaenv "$REPO/tools/dist.sh" > "$BATS_FILE_TMPDIR/dist.log" 2>&1 \
        || { cat "$BATS_FILE_TMPDIR/dist.log" >&2; return 1; }
}

release_publish() {
    local ver=$1 srv=$RELEASE_SRV arch
    arch=$(uname -m)
    mkdir -p "$srv/$ver"
    if [ "$ver" = "$RELEASE_VER" ]; then
        cp "$RELEASE_DIST/$ver/"* "$srv/$ver/"
    else
        local w
        w=$(mktemp -d "$T/repack.XXXXXX")
        tar -xzf "$RELEASE_DIST/$RELEASE_VER/cudaenv-$RELEASE_VER-linux-$arch.tar.gz" -C "$w"
        mv "$w/cudaenv-$RELEASE_VER-linux-$arch" "$w/cudaenv-$ver-linux-$arch"
        echo "$ver" > "$w/cudaenv-$ver-linux-$arch/share/cudaenv/RELEASE-MARK"
        tar -czf "$srv/$ver/cudaenv-$ver-linux-$arch.tar.gz" -C "$w" "cudaenv-$ver-linux-$arch"
        cp "$RELEASE_DIST/$RELEASE_VER/install.sh" "$srv/$ver/install.sh"
        rm -rf "$w"
    fi
    (cd "$srv/$ver" && sha256sum -- *.tar.gz install.sh > SHA256SUMS)
    openssl pkeyutl -sign -inkey "$RELEASE_KEY" -rawin -in "$srv/$ver/SHA256SUMS" | base64 -w0 > "$srv/$ver/SHA256SUMS.sig"
    echo "$ver" > "$srv/latest"
}

release_tamper() {
    local f
    f=$(echo "$RELEASE_SRV/$1/"cudaenv-*.tar.gz)
    printf 'not the release' > "$f"
}
