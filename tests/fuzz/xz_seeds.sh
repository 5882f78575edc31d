#!/bin/sh
# xz_seeds.sh DIR: seeds for fuzz_xz (make fuzz), written at fuzz time (no
# binaries in git): a small tar-like text in blocks with their sizes (xz -T2
# --block-size, the block decoder), in one block with them (xz -T0), in one
# block without (xz -T1, liblzma's stream decoder), each check type
# (none, crc32, sha256; crc64 above), a BCJ filter before LZMA2, streams one
# after another with and without padding (in fours or not, between
# streams and at the end), an empty stream, and each breakage
# of tests/lib/xzbreak.py of the first two.
set -e
d=$1
here=$(dirname "$0")
mkdir -p "$d"
w=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-xzseeds.XXXXXX")
trap 'rm -rf "$w"' EXIT
i=0
while [ $i -lt 300 ]; do echo "lib/libcudnn.so.8.$i $i $((i * i))"; i=$((i + 1)); done > "$w/plain"
xz -T2 --block-size=1KiB -c "$w/plain" > "$d/blocks.xz"
xz -T1 -c "$w/plain" > "$d/single.xz"
{ cat "$d/blocks.xz"; printf '\0\0\0\0'; cat "$d/single.xz"; } > "$d/two-streams.xz"
: | xz -c > "$d/empty.xz"
xz -T0 -c "$w/plain" > "$d/t0.xz"
for check in none crc32 sha256; do
    xz -T2 --block-size=2KiB --check=$check -c "$w/plain" > "$d/check-$check.xz"
done
xz -T2 --block-size=4KiB --x86 --lzma2=preset=1 -c "$w/plain" > "$d/x86.xz"
# stream padding, right (fours) and wrong, between streams and at the end
for pad in 1 2 3 4 5 8; do
    { cat "$d/blocks.xz"; head -c $pad /dev/zero; cat "$d/t0.xz"; } > "$d/pad-$pad.xz"
done
for pad in 3 4; do { cat "$d/t0.xz"; head -c $pad /dev/zero; } > "$d/trail-$pad.xz"; done
{ cat "$d/t0.xz" "$d/blocks.xz"; printf '\0\0\0\0\0\0\0\0'; cat "$d/empty.xz" "$d/check-none.xz"; } > "$d/streams.xz"
for how in record unpadded extra-block index-crc footer-crc backward flags garbage; do
    python3 "$here/../lib/xzbreak.py" "$d/blocks.xz" "$d/blocks-$how.xz" "$how"
    python3 "$here/../lib/xzbreak.py" "$d/single.xz" "$d/single-$how.xz" "$how"
done
