/* The resolution index, $CUDAENV_ROOT/versions/.index: what the manifest
 * says each TensorFlow, PyTorch and JAX release needs (-> CUDA + cuDNN).
 * use/env/exec/current and the cd hook resolve `tf-2.14`, `torch-2.5+cu121` through it without
 * parsing the manifest (225 KB built in, megabytes for a mirror's); the
 * manifest is read only for specs the index does not hold.  `11.8`-style
 * specs never need the manifest.
 *
 * Text, one record a line:
 *   cudaenv-index 6
 *   manifest <sha256> <dev>:<inode> <size> <mtime> <ctime> <path>
 *   where <16 hex digits>              (what located that path: --manifest/CUDAENV_MANIFEST,
 *                                       else the config files' identities and the binary's
 *                                       directory, hashed: index.c where_key)
 *   tf <X.Y> <cuda> <cudnn|->          (every installable row of the manifest)
 *   fw <torch|jax> <version> <build> <cuda> <cudnn|-> <default|->   (every installable
 *                                       PyTorch/JAX CUDA build; "default": what pip installs)
 *   cuda <X.Y.Z> <min_driver|-> <platform,...|->   (every CUDA release, for `latest`:
 *                                       the platforms it has files for, + when it
 *                                       installs from components)
 *   row <X.Y.Z> <min_driver|-> <min_driver_compat|-> <max_gcc|0> <sm_min|-> <sm_max|->
 *   tfpy <X.Y> <python|->              (a space as %20, % as %25; doctor's facts: every CUDA release, every
 *                                       TensorFlow row, installable or not; a line
 *                                       "nofacts" when one could not be written)
 *   at - <name> <at> <end>             (last: where each piece of the manifest file is,
 *   at <section> <key> <at> <end> <builds|->   byte offsets for info's slices: manifest/slice.h)
 * It follows the manifest's content: <sha256> is the manifest file's (the
 * file source.h names: the built-in one, a path, or a remote manifest's
 * local copy), the stat key after it the fast check.  A reader whose where
 * key is the index's stats the recorded path: the same key, the index is
 * current (two lstats of the config files, one stat, one small read; no
 * config file parsed, no ownership walk: issue 43's use tf-X at the exact
 * name's cost).  Another where key (another CUDAENV_MANIFEST, a config file
 * written, another binary) locates the manifest as source.h says and stats
 * that: the same key, the index answers and the store's own is given the
 * caller's where key (ce_index_where_stale);
 * another key (an upgrade, `make install`, `cudaenv update`, an in-place edit:
 * the ctime moves even when size and mtime are put back) makes the index
 * stale, and the first command that finds it so refreshes it
 * (ce_index_refresh, under the store lock: the store's glue, store.h): it
 * hashes the manifest once; the same content only gets the new stat key,
 * other content is parsed and the index rewritten.  A missing or corrupt
 * index is stale too.  Resolution through a stale index never happens: when
 * it cannot be refreshed (lock busy, store read-only to the user) specs
 * resolve through the manifest as before, so results never differ.  It is a
 * cache: failing to write it is reported (CE_EV_WARN) and is no error.
 *
 * A user of a shared store (another user's, typically root's /opt/cudaenv)
 * cannot refresh its index after the manifest changed; they keep their own
 * copy, the same text under the same rules, at ipath (the store's glue
 * picks ${XDG_CACHE_HOME:-~/.cache}/cudaenv/index-<hash of the store path>,
 * never as root: nothing a user owns decides for root).  ipath NULL: the
 * store's versions/.index. */
#ifndef CE_INDEX_H
#define CE_INDEX_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "manifest.h"

#define CE_INDEX_NAME ".index"

/* Whether this thread's last lookup found the index current only by
 * locating the manifest (config files read, as root the ownership walk):
 * its where key is another's (another config file, CUDAENV_MANIFEST, binary);
 * ce_index_refresh rewrites it, so the next lookup is a stat. */
bool ce_index_where_stale(void);

/* TensorFlow X.Y -> cuda, cudnn ("" when none): 1 found, 0 not in the
 * (current) index, -1 the index is stale, missing or corrupt: refresh it or
 * read the manifest. */
int ce_index_tf(ce_ctx *ctx, const char *ipath, const char *tf, char *cuda, size_t cudasz, char *cudnn, size_t cudnnsz);
/* A PyTorch/JAX release (name "torch"/"jax"; version as the spec has it:
 * "2.5", "2", "latest", "0.4.30", "0.4") and build tag ("" for the default) ->
 * cuda, cudnn: 1 found, 0 not in the index, -1 stale (as ce_index_tf). */
int ce_index_fw(ce_ctx *ctx, const char *ipath, const char *name, const char *version, const char *tag, char *cuda, size_t cudasz,
                char *cudnn, size_t cudnnsz);
/* `latest` through the index: the newest CUDA release with files for
 * platform whose min_driver driver meets (driver NULL: any), as
 * ce_manifest_cuda_latest picks it.  1 found (*cuda), 0 none, -1 stale. */
int ce_index_cuda_latest(ce_ctx *ctx, const char *ipath, const char *platform, const char *driver, char *cuda, size_t cudasz);
/* What doctor reads of a release: the CUDA row's driver, compiler and GPU
 * limits, the TensorFlow row's Python range ("" / 0 where the manifest has
 * none). */
typedef struct ce_index_facts {
    char min_driver[32], min_driver_compat[32], sm_min[16], sm_max[16], python[32];
    int max_gcc;
} ce_index_facts;
/* The facts of CUDA release cuda ("" none: only the Python; exact, else the
 * first X.Y.* row, as a release known only as X.Y) and TensorFlow row tf
 * ("" none): 1 (fields empty where the manifest has no such row), -1 stale
 * (as ce_index_tf) or without the facts ("nofacts"): read the manifest. */
int ce_index_facts_of(ce_ctx *ctx, const char *ipath, const char *cuda, const char *tf, ce_index_facts *out);
/* The index's "at" records (manifest/slice.h) when it is current for the
 * manifest file open as fd (its stat key, from fstat: the bytes the
 * offsets name are the ones fd reads): 1, *recs in *data (the caller frees
 * it); 0 current but without them; -1 stale, missing or corrupt (as
 * ce_index_tf). */
int ce_index_at(ce_ctx *ctx, const char *ipath, int fd, char **data, const char **recs);
/* Bring the index at ipath up to date with the manifest (the store's: the
 * caller holds the store lock; a user's copy is written atomically, no lock,
 * its directory made 0700): nothing when current, the new stat key when only that moved, else
 * parse and rewrite.  CE_OK, or the error (the index is then left stale). */
int ce_index_refresh(ce_ctx *ctx, const char *ipath);
/* sha256 of len bytes as 64 lowercase hex digits (libcrypto; the light
 * binary loads it on first use: cli/crypto_lazy.c). */
void ce_sha256_hex(const void *data, size_t len, char out[65]);

#endif
