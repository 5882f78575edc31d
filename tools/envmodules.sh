#!/usr/bin/env bash
# Environment Modules for the module-file tests (tests/scenario/modules.bats).
# Debian's environment-modules package conflicts with lmod, which tools/deps.txt
# installs, so this unpacks the .deb (apt-get download, no dpkg install) into
# DEST (default /var/cache/cudaenv-test/environment-modules); the tests run its
# modulecmd.tcl with tclsh8.6 (a dependency of lmod).  Nothing is installed
# system-wide.
set -euo pipefail
DEST=${1:-/var/cache/cudaenv-test/environment-modules}
if [ -f "$DEST/usr/lib/x86_64-linux-gnu/modulecmd.tcl" ]; then
    echo "environment-modules already unpacked in $DEST"; exit 0
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
chmod 755 "$work"   # apt's _apt user downloads into it
(cd "$work" && apt-get download environment-modules)
mkdir -p "$DEST"
dpkg-deb -x "$work"/environment-modules_*.deb "$DEST"
echo "environment-modules unpacked in $DEST"
