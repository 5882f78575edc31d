/* Composing a toolchain prefix from the pristine trees in pkgs/ with
 * hardlinks (uv/Nix style: milliseconds for gigabytes, no second copy on
 * disk), symlinks recreated as symlinks, and a copy where a hardlink is
 * impossible (another filesystem: EXDEV; EMLINK; EPERM from
 * fs.protected_hardlinks).  Light: no libarchive/libcurl/libcrypto. */
#ifndef CE_COMPOSE_H
#define CE_COMPOSE_H

#include <stddef.h>

#include "core/ctx.h"

/* Regular files of a composed prefix, for the receipt. */
typedef struct ce_file_entry {
    char *path;          /* relative to the prefix: "lib64/libcudnn.so.8.7.0" */
    long long size;
    char sha256[65];     /* "" until pkgindex fills it (full binary) */
} ce_file_entry;

typedef struct ce_filelist {
    ce_file_entry *v;
    size_t n, cap;
    size_t linked, copied; /* how the files got there */
} ce_filelist;

void ce_filelist_free(ce_filelist *l);
/* Append a path (relative to the prefix); a NULL list is a no-op. */
int ce_filelist_add(ce_filelist *l, const char *path, long long size);

/* Link every entry under src into dst/<sub> ("" for dst itself), creating
 * directories.  Existing directories in dst are merged into; a symlinked
 * directory already in dst (the toolkit's include -> targets/x86_64-linux/
 * include) is followed when its target is relative and has no "..".  A file
 * that already exists is an error (two packages claim it).  Paths are added
 * to files (may be NULL).  Where a hard link is refused (EXDEV, EMLINK,
 * EPERM) the file is copied. */
int ce_compose_tree(ce_ctx *ctx, const char *src, const char *dst, const char *sub, ce_filelist *files);

/* ce_compose_tree for components of one release: a file or link that is
 * already there with the same content (same inode, or equal bytes; same link
 * target) is fine and listed once; different content is CE_ERR_INTEGRITY
 * naming the path. */
int ce_compose_merge(ce_ctx *ctx, const char *src, const char *dst, const char *sub, ce_filelist *files);

/* cuDNN's archive layout into a toolkit prefix: include/ -> include/,
 * lib/ (or lib64/) -> lib64/, anything else -> share/cudnn/<name>. */
int ce_compose_cudnn(ce_ctx *ctx, const char *cudnn_tree, const char *dst, ce_filelist *files);

#endif
