#!/usr/bin/env bats
# The .xz container is checked to its end, as `xz -t` does (issue 36 item 4):
# after the tar's end marker the rest of the stream is decoded through the
# parser, so an index that disagrees with the blocks, a block the index does
# not name, a zeroed index CRC32, a wrong backward size, footer flags other
# than the header's, a broken footer CRC32 or bytes after the stream fail the
# install with exit 5 naming the archive, nothing installed, whether the
# archive is read while it downloads or from the cache (--offline), and
# whichever decoder reads it: one block without sizes (xz -T1: liblzma's
# stream decoder) or blocks with their sizes (xz -T2 --block-size: the block
# decoder, xzblk.c), with or without the decoding thread.  The fixtures are
# the mirror's cuDNN 8.7 tarball recompressed and broken by tests/lib/xzbreak.py
# after the data, so every block still decodes.
load ../lib/common
load ../lib/server
load ../lib/mirror
bats_require_minimum_version 1.5.0

CUDNN87_REL=compute/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz

setup_file() { mirror_setup_file; }

setup() {
    common_setup
    # the mirror as links, so a test replaces its cuDNN archive for itself alone
    cp -al "$MIRROR" "$T/mirror"
    server_start "$T/mirror"
    fx_mirror_manifest "$T/mirror" "$SERVER_URL" > "$T/manifest.json"
    export CUDAENV_MANIFEST=$T/manifest.json CUDAENV_RETRY_DELAY_MS=10
    xz -dc "$MIRROR/$CUDNN87_REL" > "$T/cudnn.tar"
}

teardown() { mirror_teardown; }

# archive LAYOUT [HOW]: the cuDNN 8.7 archive served and pinned in the manifest,
# compressed as LAYOUT (single: one block without sizes; blocks: 4 KiB blocks with
# their sizes) and, with HOW, broken by xzbreak.py (and then rejected by xz -t)
archive() {
    local layout=$1 how=${2:-} a=$T/mirror/$CUDNN87_REL
    rm -f "$a"
    case $layout in
    single) xz -T1 -c "$T/cudnn.tar" > "$T/good.xz" ;;
    blocks) xz -T2 --block-size=4KiB -c "$T/cudnn.tar" > "$T/good.xz" ;;
    esac
    if [ "$layout" = blocks ]; then
        [ "$(xz -lv "$T/good.xz" | awk '/^ *Blocks:/ {print $2; exit}')" -gt 3 ] || { echo "not several blocks"; return 1; }
    fi
    if [ -n "$how" ]; then
        python3 "$TESTS_DIR/lib/xzbreak.py" "$T/good.xz" "$a" "$how"
        run -1 xz -t "$a"   # the fixture is what xz -t rejects
    else
        cp "$T/good.xz" "$a"
    fi
    fx_mirror_manifest "$T/mirror" "$SERVER_URL" > "$T/manifest.json"
}

# install must fail with exit 5 naming the archive, leaving no toolchain and no package tree
refused() {
    run "$CUDAENV" install "$@" tf-2.14
    [ "$status" -eq 5 ] || { echo "status $status: $output"; return 1; }
    [[ "$output" == *"cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz"* ]] || { echo "archive not named: $output"; return 1; }
    [[ "$output" == *"Lzma library error"* ]] || { echo "not the xz error: $output"; return 1; }
    [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ] || { ls -la "$CUDAENV_ROOT/versions"; return 1; }
    run ! ls -d "$CUDAENV_ROOT"/pkgs/cudnn-* "$CUDAENV_ROOT"/pkgs/.staging-*
    no_staging
}

# HOW broken, each layout, downloaded (read while it arrives) and then from the cache
broken() {
    local layout
    for layout in single blocks; do
        rm -rf "$CUDAENV_ROOT"
        archive "$layout" "$1"
        refused || { echo "($layout, downloaded)"; return 1; }
        refused --offline || { echo "($layout, --offline)"; return 1; }
        CUDAENV_XZ_NO_PIPE=1 refused --offline || { echo "($layout, --offline, no decoding thread)"; return 1; }
    done
}

@test "xz: a good archive of one block and one of several blocks install (the harness works), decoded on several threads" {
    archive single
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    cmp "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/include/cudnn_version.h" \
        <(tar -xOf "$T/cudnn.tar" --wildcards '*/include/cudnn_version.h')
    rm -rf "$CUDAENV_ROOT"
    archive blocks
    CUDAENV_TEST_XZ_THREADS=$T/threads run seams "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ "$(sort -n "$T/threads" | tail -1)" -ge 2 ] || { cat "$T/threads"; false; }
    cmp "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/include/cudnn_version.h" \
        <(tar -xOf "$T/cudnn.tar" --wildcards '*/include/cudnn_version.h')
    CUDAENV_XZ_NO_PIPE=1 run "$CUDAENV" install --force --offline tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "xz: an index record that disagrees with its block (plain size, unpadded size): exit 5, nothing installed" {
    broken record
    broken unpadded
}

@test "xz: one block more than the index names: exit 5, nothing installed" {
    broken extra-block
}

@test "xz: the index's CRC32 zeroed: exit 5, nothing installed" {
    broken index-crc
}

@test "xz: a wrong backward size in the footer (its CRC32 right): exit 5, nothing installed" {
    broken backward
}

@test "xz: footer flags other than the header's, a broken footer CRC32, bytes after the stream: exit 5" {
    broken flags
    broken footer-crc
    broken garbage
}
