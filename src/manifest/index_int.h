/* The resolution index's own parts shared by its two files (index.h is the
 * interface): index_key.c says whether the index is current, index.c
 * answers from it and writes it.  Internal to src/manifest/index*.c. */
#ifndef CE_INDEX_INT_H
#define CE_INDEX_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "core/ctx.h"
#include "index.h"
#include "source.h"

#define INDEX_MAGIC "cudaenv-index 6"
#define INDEX_MAX (1u << 20)

/* The index file: ipath (a user's own copy, index.h), NULL: the store's. */
int ce_index_path(ce_ctx *ctx, const char *ipath, char *out, size_t n);
/* The stat key "<dev>:<inode> <size> <mtime> <ctime>" of st into key (n >= 128). */
bool ce_index_stat_key(const struct stat *st, char *key, size_t n);
/* What located the manifest ctx reads, as 16 hex digits (index_key.c). */
void ce_index_where_key(ce_ctx *ctx, char out[17]);
/* The manifest file ctx resolves with (*src) and its stat key; false when
 * there is none to stat. */
bool ce_index_manifest_key(ce_ctx *ctx, ce_msource *src, char *key, size_t n);
/* The index text split in place: *sha and *key point into the manifest line
 * (the key followed by the manifest's path), *where at the where key, *rest
 * at the records; NULL when absent or not ours.  The caller frees it. */
char *ce_index_read(ce_ctx *ctx, const char *ipath, char **sha, char **key, char **where, char **rest);
/* The index's key line names the same file state as key. */
bool ce_index_same_key(const char *line, const char *key);
/* The index's records (*rest) when it is current for the manifest ctx
 * locates; NULL (nothing to answer from) otherwise.  The caller frees it. */
char *ce_index_current(ce_ctx *ctx, const char *ipath, char **rest);

#endif
