#!/usr/bin/env bash
# sysns.sh TMPDIR SCRIPT [ARGS...]: run SCRIPT (bash) as root in a private
# mount namespace where /etc, /usr/local and /var/lib/dpkg/alternatives are
# overlays whose writes land under TMPDIR and vanish with the namespace, so
# a real system switch, the real ldconfig and update-alternatives can run
# without touching this machine (TESTING.md: a bind-mounted ld.so.cache
# fails with EBUSY when ldconfig renames over it; an overlay does not).
# Exit 77 when namespaces or overlays are unavailable (callers skip).
set -u
t=$1; shift
[ "$(id -u)" -eq 0 ] || exit 77
command -v unshare >/dev/null || exit 77
# a kernel (or container) that refuses a private mount namespace: skip, not fail
unshare -m --propagation private true 2>/dev/null || exit 77
for d in etc usrlocal alt; do mkdir -p "$t/ns/$d.u" "$t/ns/$d.w"; done
exec unshare -m --propagation private bash -c '
    t=$1; shift
    ov() { mount -t overlay overlay -o "lowerdir=$1,upperdir=$t/ns/$2.u,workdir=$t/ns/$2.w" "$1"; }
    ov /etc etc && ov /usr/local usrlocal || exit 77
    if [ -d /var/lib/dpkg/alternatives ]; then ov /var/lib/dpkg/alternatives alt || exit 77; fi
    # never run the script unless the writes are contained
    for m in /etc /usr/local; do
        awk -v m="$m" '\''$5 == m && $0 ~ / - overlay /'\'' /proc/self/mountinfo | grep -q . || { echo "sysns: $m is not an overlay" >&2; exit 77; }
    done
    exec bash "$@"' _ "$t" "$@"
