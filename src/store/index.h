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
 * store lock, written atomically.  It is a cache: failing to write it
 * is reported (CE_EV_WARN) and is no error.  With no record left it is
 * removed. */
#ifndef CE_INDEX_H
#define CE_INDEX_H

#include <stddef.h>

#include "core/ctx.h"
#include "core/manifest.h"
#include "store.h"

#define CE_INDEX_NAME ".index"

/* TensorFlow X.Y -> cuda, cudnn ("" when none): 1 found, 0 not in a valid index. */
int ce_index_tf(ce_ctx *ctx, const char *tf, char *cuda, size_t cudasz, char *cudnn, size_t cudnnsz);
/* A TensorFlow spec ("tf-2.14", "tf-2.14+cudnn8.6") through the index: its
 * CUDA + cuDNN as "<cuda>+cudnn<cudnn>" to ce_store_find (the same match the
 * manifest path makes).  1: *out is the toolchain; 0: not resolved here
 * (no TF spec, not in the index, nothing installed matches), the status
 * untouched: call ce_store_find, which reads the manifest. */
int ce_index_find(ce_ctx *ctx, const char *spec, ce_toolchain *out);
/* Rewrite from m (loaded from the manifest location of ctx) and what is installed. */
void ce_index_rebuild(ce_ctx *ctx, const ce_manifest *m);
/* Keep only the releases an installed toolchain still satisfies. */
void ce_index_prune(ce_ctx *ctx);

#endif
