#!/usr/bin/env bash
# node.sh SHARED SCRIPT [ARGS...]: run SCRIPT (bash) as one "cluster node":
# a private mount namespace where /opt is an empty tmpfs and SHARED is bind
# mounted at /opt/cudaenv, the way compute nodes mount one NFS store.  Several
# nodes see the same directory at the same path; nothing of the real /opt is
# touched (the tmpfs vanishes with the namespace).  Exit 77 when namespaces are
# unavailable (callers skip).
set -u
shared=$1; shift
[ "$(id -u)" -eq 0 ] || exit 77
command -v unshare >/dev/null || exit 77
[ -d /opt ] || exit 77
exec unshare -m --propagation private bash -c '
    shared=$1; shift
    mount -t tmpfs -o size=64m node-opt /opt && mkdir /opt/cudaenv && mount --bind "$shared" /opt/cudaenv || exit 77
    awk '\''$5 == "/opt/cudaenv"'\'' /proc/self/mountinfo | grep -q . || { echo "node: /opt/cudaenv is not a mount" >&2; exit 77; }
    export CUDAENV_ROOT=/opt/cudaenv
    exec bash "$@"' _ "$shared" "$@"
