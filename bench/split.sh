#!/bin/sh
# Issue 41's split of one archive's unpack over threads: one big .tar.zst
# unpacked by ce_unpack (bench/unpack1.c: sha256 of the archive checked,
# the per-file index written) against the floor `zstd -dc X | tar -x` and
# plain `tar -x` of the .tar, in interleaved rounds; medians.
#   bench/split.sh ARCHIVE.tar.zst ARCHIVE.tar ROUNDS DRIVER...
# Each DRIVER is an unpack1 binary (linked against one build's objects:
#   cc -iquote src bench/unpack1.c BUILD/obj/src/<all but cli>/*.o + the libraries).
# Prints one line per run and the medians.  Every run starts after sync with
# the previous tree removed, so writeback of one does not land in the next;
# TMPDIR=/dev/shm unpacks into tmpfs (no disk: the CPU's part alone).
set -eu
Z=$1; TAR=$2; ROUNDS=$3; shift 3
W=$(mktemp -d "${TMPDIR:-/tmp}/split-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
SHA=$(sha256sum "$Z" | cut -d" " -f1)
run() {   # name command...: wall seconds (and the CPU seconds, user + system)
    name=$1; shift
    rm -rf "$W/d" "$W/d.idx"; mkdir "$W/d"; sync
    /usr/bin/time -f "%e %U %S" -o "$W/t" "$@" >/dev/null
    read -r e u s < "$W/t"
    printf '%s %s cpu %.2f\n' "$name" "$e" "$(echo "$u + $s" | bc -l)" | tee -a "$W/times"
}
for r in $(seq "$ROUNDS"); do
    for d in "$@"; do run "$(basename "$d")" "$d" "$Z" "$W/d" "$W/d.idx" "$SHA"; done
    run zstd-dc-tar sh -c "zstd -dc '$Z' | tar -x -C '$W/d'"
    run tar-x tar -xf "$TAR" -C "$W/d"
done
echo "medians of $ROUNDS:"
for n in $(cut -d" " -f1 "$W/times" | sort -u); do
    printf '%s %s\n' "$n" "$(grep "^$n " "$W/times" | cut -d" " -f2 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done
