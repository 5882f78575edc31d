/* The resolution index, $CUDAENV_ROOT/versions/.index: what the manifest
 * says each TensorFlow release needs (tf X.Y -> CUDA + cuDNN), for the
 * releases an installed toolchain satisfies.  use/env/exec/current and the
 * cd hook resolve `tf-2.14` through it without parsing the manifest (225 KB
 * built in, megabytes for a mirror's); the manifest is read only for specs
 * the index does not hold.  `11.8`-style specs never need the manifest.
 *
 * Text, one record a line:
 *   cudaenv-index 1
 *   manifest <dev>:<inode> <size> <mtime_s>.<mtime_ns> <path>
 *   tf <X.Y> <cuda> <cudnn|->
 * It is valid only for the manifest file it was built from (same device,
 * inode, size and mtime; the path is for people): a different CUDAENV_MANIFEST, an edited manifest, a URL manifest,
 * a missing or corrupt index all read as "not in the index" and resolution
 * goes through the manifest as before, so results never differ.
 * install rebuilds it (ce_index_rebuild), uninstall drops the releases no
 * installed toolchain satisfies any more (ce_index_prune); both under the
 * store lock, written atomically.  What is installed is the store's to say
 * (store.h: ce_store_index_*, the glue above this module, pass a ce_index_keep).  It is a cache: failing to write it
 * is reported (CE_EV_WARN) and is no error.  With no record left it is
 * removed. */
#ifndef CE_INDEX_H
#define CE_INDEX_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "manifest.h"

#define CE_INDEX_NAME ".index"

/* TensorFlow X.Y -> cuda, cudnn ("" when none): 1 found, 0 not in a valid index. */
int ce_index_tf(ce_ctx *ctx, const char *tf, char *cuda, size_t cudasz, char *cudnn, size_t cudnnsz);
/* Whether some installed toolchain is what the store picks for cuda + cudnn
 * ("" for none): the records the index keeps. */
typedef bool (*ce_index_keep)(void *arg, const char *cuda, const char *cudnn);
/* Rewrite from m (loaded from the manifest location of ctx): the releases keep takes. */
void ce_index_rebuild(ce_ctx *ctx, const ce_manifest *m, ce_index_keep keep, void *arg);
/* Keep only the releases keep still takes. */
void ce_index_prune(ce_ctx *ctx, ce_index_keep keep, void *arg);

#endif
