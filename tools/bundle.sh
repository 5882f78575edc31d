#!/usr/bin/env bash
# Make an installed cudaenv tree relocatable and self-contained: every shared
# library its two binaries need, other than glibc's own (and libstdc++/libgcc_s,
# which every glibc system has), copied beside them under its SONAME, where the
# binaries' DT_RPATH ($ORIGIN/../lib, $ORIGIN/../../lib/full: see LDFLAGS_RELOC
# in the Makefile) finds them.  The light binary sees only libcjson (it dlopens
# it on first JSON use), so verify's loader check stays about the toolchain;
# the full binary gets libcurl, libarchive, libcrypto and what they pull in.
#   tools/bundle.sh TREE     (TREE/bin/cudaenv, TREE/libexec/cudaenv/cudaenv-full)
# Used by make dist (tools/dist.sh, inside the build root) and tests/gpu/devdeps.sh.
set -eu
tree=$1
light=$tree/bin/cudaenv full=$tree/libexec/cudaenv/cudaenv-full
for b in "$light" "$full"; do
    readelf -d "$b" | grep -q '(RPATH).*ORIGIN' || { echo "bundle: $b has no \$ORIGIN RPATH (build with LDFLAGS_RELOC)" >&2; exit 1; }
done
mkdir -p "$tree/lib/full"
skip='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s)[.-]'
copy_deps() {  # copy_deps BINARY DIR: each library ldd resolves, under its SONAME
    local name path
    ldd "$1" | awk '/=> \//{print $1, $3}' | while read -r name path; do
        [[ $name =~ $skip ]] && continue
        cp -L "$path" "$2/$name"
        chmod 644 "$2/$name"
    done
}
copy_deps "$light" "$tree/lib"
cj=$(ldconfig -p | awk '$1 == "libcjson.so.1" { print $NF; exit }')
[ -n "$cj" ] || { echo "bundle: no libcjson.so.1 on this system" >&2; exit 1; }
cp -L "$cj" "$tree/lib/libcjson.so.1"; chmod 644 "$tree/lib/libcjson.so.1"
copy_deps "$full" "$tree/lib/full"
# the binaries must find their libraries here with an empty cache path too
LD_LIBRARY_PATH= ldd "$full" | grep -q "lib/full/libarchive" \
    || { echo "bundle: cudaenv-full does not resolve libarchive from $tree/lib/full" >&2; exit 1; }
if ldd "$full" | grep -q 'not found'; then ldd "$full" | grep 'not found' >&2; exit 1; fi
"$light" --version >/dev/null
LD_LIBRARY_PATH= "$light" list --json >/dev/null \
    || { echo "bundle: the light binary cannot load libcjson from $tree/lib" >&2; exit 1; }
