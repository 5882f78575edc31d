/* sha256 of every file of a pristine tree in pkgs/, computed once and kept
 * beside it (pkgs/<name>.sha256.json, keyed by inode), so a toolchain's
 * receipt can carry a sha256 per file (what `verify --deep` re-hashes
 * against) without re-reading gigabytes each time a toolchain is composed
 * from the same tree: composition hardlinks, so the inode identifies the
 * bytes.  Full binary only (libcrypto). */
#ifndef CE_PKGINDEX_H
#define CE_PKGINDEX_H

#include "store/compose.h"
#include "core/ctx.h"

/* Fill files->v[i].sha256 for the composed prefix: look each file's inode up
 * in the indexes of the given trees (built on first use), hash directly what
 * is not there (a copy made across filesystems).  trees ends with NULL. */
int ce_pkgindex_hash_files(ce_ctx *ctx, const char *prefix, const char *const *trees, ce_filelist *files);

#endif
