/* The mirror directory's file operations (issue 21): everything mirror and
 * mirror --check open, create or rename under DIR goes through a directory
 * fd of DIR, one O_NOFOLLOW openat per path component, so a symlink planted
 * anywhere under DIR (compute -> /etc, .cudaenv-mirror/cache -> /root, a
 * <file>.tmp-<pid> -> /etc/shadow) is refused, never followed; files are
 * created O_CREAT|O_EXCL|O_NOFOLLOW under random names and renamed in place.
 *
 * As root (ce_trust_privileged), DIR and every directory above it must also
 * pass the store's rule (core/trust.h: root-owned, not group/other-writable;
 * a sticky /tmp-like parent is fine), and so must every directory opened
 * under it: CE_ERR_PERM (exit 6) naming the path.  The core's general
 * dirfd policy can replace the walk in md_walk() without changing callers. */
#ifndef CE_MIRROR_DIR_H
#define CE_MIRROR_DIR_H

#include <stdbool.h>
#include <sys/stat.h>

#include "core/ctx.h"

typedef struct ce_mdir {
    int fd;                 /* DIR, O_DIRECTORY */
    char path[CE_PATH_MAX];        /* DIR, resolved when run as root */
    bool strict;            /* root writing: every directory passes the rule */
} ce_mdir;

/* Open DIR: to write (create it, 0755, when missing) as root after the
 * chain rule; to read (!write) with no ownership rule, symlinks under DIR
 * still refused. */
int ce_mdir_open(const char *dir, bool write, ce_mdir *out);
void ce_mdir_close(ce_mdir *m);

/* A directory under DIR (rel: "a/b", "" for DIR itself), each component
 * opened O_NOFOLLOW (made 0755 when create), each checked when strict.  Returns
 * the fd, or a negative ce_err (CE_ERR_PERM for a symlink or an unsafe
 * directory, CE_ERR_NOTFOUND when missing and !create). */
int ce_mdir_subdir(const ce_mdir *m, const char *rel, bool create);

/* Open the regular file rel under DIR read-only, O_NOFOLLOW|O_NONBLOCK (a
 * FIFO or device never blocks), fstat'ed into st: CE_ERR_NOTFOUND, or
 * CE_ERR_PERM for a symlink or anything not a regular file. */
int ce_mdir_open_file(const ce_mdir *m, const char *rel, struct stat *st);

/* 1 when rel is a regular file of size bytes (size < 0: any, at most
 * 64 GiB) whose sha256 is sha256, 0 when it is not (or missing), or
 * CE_ERR_PERM (status set) when the path is refused (a symlink, or not a
 * regular file: a FIFO or device is never opened for reading). */
int ce_mdir_verified(const ce_mdir *m, const char *rel, long long size, const char *sha256);

/* Put the file from (an absolute path, e.g. a cache entry) at rel under DIR:
 * renamed when move and it is on the same filesystem, else hard-linked or
 * copied into an exclusive temporary beside rel and renamed over it. */
int ce_mdir_place(const ce_mdir *m, const char *rel, const char *from, bool move);

#endif
