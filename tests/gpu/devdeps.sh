#!/usr/bin/env bash
# Populate .devdeps/gpu/ for the device machine (tests/gpu/run.sh): the light
# and the full binary in the installed layout, every shared library of this
# machine the full binary needs (the device lacks libarchive's libxml2 and
# ICU 72, among others), and makeself for the runfile fixture.
#
#   .devdeps/gpu/bin/cudaenv                      light binary, rpath $ORIGIN/../lib
#   .devdeps/gpu/lib/libcjson.so.1                all the light binary needs
#   .devdeps/gpu/libexec/cudaenv/cudaenv-full     full binary, rpath $ORIGIN/../../lib/full
#   .devdeps/gpu/lib/full/*.so*                   its libraries (not glibc's, libstdc++, libgcc_s)
#   .devdeps/gpu/share/cudaenv/manifests/         the built-in manifest
#   .devdeps/gpu/share/cudaenv/redist/            the redistrib JSONs it pins
#   .devdeps/gpu/makeself/{makeself,makeself-header.sh}
#
# The binaries are relinked with a DT_RPATH (not RUNPATH: it also applies to
# libarchive's own dependencies), so no LD_LIBRARY_PATH leaks into what
# cudaenv runs (the runfile, nvcc, python3 -c 'import torch').  The light
# binary sees only libcjson: verify's loader check stays about the toolchain.
# DEVDEPS_LIBLZMA=1: also libexec/cudaenv/cudaenv-full-liblzma (make XZ=liblzma,
# BUILD-liblzma), DEVDEPS_BEFORE=COMMIT: cudaenv-full-before built from that
# commit (a worktree in $BUILD-before): tests/gpu/linerate.sh runs their rows.
# Usage: tests/gpu/devdeps.sh   (BUILD=build-gpu; DEST=.devdeps/gpu)
# Then: run(carry=[".devdeps/gpu"], command="tests/gpu/run.sh")
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-gpu}
DEST=${DEST:-.devdeps/gpu}
rm -f "$BUILD/bin/cudaenv" "$BUILD/libexec/cudaenv/cudaenv-full"
make BUILD="$BUILD" -j"$(nproc)" \
    LDFLAGS="-Wl,--disable-new-dtags,-rpath,'\$\$ORIGIN/../lib:\$\$ORIGIN/../../lib/full'" \
    "$BUILD/bin/cudaenv" "$BUILD/libexec/cudaenv/cudaenv-full" "$BUILD/share/cudaenv/manifests" \
    "$BUILD/share/cudaenv/redist" >/dev/null
rm -rf "$DEST"
mkdir -p "$DEST/bin" "$DEST/lib/full" "$DEST/libexec/cudaenv" "$DEST/share/cudaenv" "$DEST/makeself"
strip --strip-debug -o "$DEST/bin/cudaenv" "$BUILD/bin/cudaenv"
strip --strip-debug -o "$DEST/libexec/cudaenv/cudaenv-full" "$BUILD/libexec/cudaenv/cudaenv-full"
cp -rL "$BUILD/share/cudaenv/manifests" "$BUILD/share/cudaenv/redist" "$DEST/share/cudaenv/"
readelf -d "$DEST/bin/cudaenv" | grep -q '(RPATH).*ORIGIN' || { echo "devdeps: no RPATH in the light binary" >&2; exit 1; }

RP="-Wl,--disable-new-dtags,-rpath,'\$\$ORIGIN/../../lib/full'"
if [ "${DEVDEPS_LIBLZMA:-0}" = 1 ]; then
    make BUILD="$BUILD-liblzma" XZ=liblzma -j"$(nproc)" LDFLAGS="$RP" "$BUILD-liblzma/libexec/cudaenv/cudaenv-full" >/dev/null
    strip --strip-debug -o "$DEST/libexec/cudaenv/cudaenv-full-liblzma" "$BUILD-liblzma/libexec/cudaenv/cudaenv-full"
fi
if [ -n "${DEVDEPS_BEFORE:-}" ]; then
    rm -rf "$BUILD-before"; git worktree prune
    git worktree add -q --detach "$BUILD-before" "$DEVDEPS_BEFORE"
    make -C "$BUILD-before" -j"$(nproc)" LDFLAGS="$RP" build/libexec/cudaenv/cudaenv-full >/dev/null
    strip --strip-debug -o "$DEST/libexec/cudaenv/cudaenv-full-before" "$BUILD-before/build/libexec/cudaenv/cudaenv-full"
    git worktree remove --force "$BUILD-before"
fi

# every library but glibc's beside the binaries, where their RPATH finds them (tools/bundle.sh: make dist's too)
tools/bundle.sh "$DEST"

cp /usr/bin/makeself "$DEST/makeself/makeself"
cp /usr/share/makeself/makeself-header.sh "$DEST/makeself/"

echo "$DEST: $(find "$DEST" -type f | wc -l) files, $(du -sh "$DEST" | cut -f1)"
