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

/* The same index gathered while an archive is unpacked (unpack.c hashes each
 * file's data blocks as it writes them), so the tree is never read back:
 * add (inode, size, sha256) per regular file, then save it as the index of
 * tree (its directory inode; a staging directory keeps it through the
 * rename into pkgs/) at path, pkgs/<name>.sha256.json. */
typedef struct ce_pkgindex_list ce_pkgindex_list;
ce_pkgindex_list *ce_pkgindex_list_new(void);
int ce_pkgindex_list_add(ce_pkgindex_list *l, unsigned long long ino, long long size, const char *sha);
/* a file the archive replaces (a path given twice) leaves the tree: its inode
 * is forgotten, whether or not the file system gives the number out again */
void ce_pkgindex_list_drop(ce_pkgindex_list *l, unsigned long long ino);
int ce_pkgindex_list_save(ce_pkgindex_list *l, const char *tree, const char *path);
void ce_pkgindex_list_free(ce_pkgindex_list *l);

#endif
