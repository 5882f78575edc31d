/* The store under $CUDAENV_ROOT:
 *   cache/<sha256>[.part]          pristine downloads (content addressed)
 *   pkgs/cuda-<X.Y.Z>/             pristine unpacked toolkit (one per release)
 *   pkgs/cudnn-<ver>-cuda<M>/      pristine unpacked cuDNN (one per release and CUDA major)
 *   versions/<name>/               toolchains, composed from pkgs/ with hardlinks
 *   versions/<name>/.cudaenv-receipt.json   what was installed (see below)
 *   versions/.staging-XXXXXX       work in progress; removed by the next run
 *   versions/.index                tf X.Y -> CUDA + cuDNN for what is installed (manifest/index.h)
 *   global                         the user's default toolchain (one line)
 *   .lock                          fcntl (OFD) lock held by install/uninstall
 * Receipt (JSON): {"schema":1,"name","cuda","cudnn"(or null),"platform",
 *   "installed_at","tensorflow":[..],"min_driver","max_gcc","sm":{"min","max"},
 *   "sources":[{"kind":"runfile"|"redist"|"cudnn"|"nccl","url","sha256","size","pkg"}],
 *   components installs: "profile","adjust":["+name","-name"],"components":[{"name",
 *   "version","url","sha256","size","pkg"}]; "nccl" (version or null),
 *   "files":[{"path","size","sha256"}]}   (paths relative to the prefix,
 *   regular files only, the receipt itself excluded; install fills sha256
 *   from pkgs/<tree>.sha256.json, computed once per pristine tree). */
#ifndef CE_STORE_H
#define CE_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "receipt.h"    /* CE_RECEIPT_NAME */

typedef struct ce_toolchain {
    char name[96];       /* "11.8.0+cudnn8.7.0.84" */
    char cuda[32];       /* "11.8.0" */
    char cudnn[32];      /* "8.7.0.84" or "" */
    char prefix[CE_PATH_MAX];   /* $CUDAENV_ROOT/versions/<name> */
} ce_toolchain;

/* $CUDAENV_ROOT/<sub> ("versions", "cache", "pkgs"). */
int ce_store_path(ce_ctx *ctx, const char *sub, char *out, size_t outsz);
/* Split a toolchain name into its CUDA and cuDNN versions (prefix ""); false if it is none. */
int ce_toolchain_parse_name(const char *name, ce_toolchain *out);
/* Installed toolchains, sorted by CUDA then cuDNN version (oldest first). */
int ce_store_list(ce_ctx *ctx, ce_toolchain **out, size_t *n);
/* The installed toolchain a spec names: an exact name, "11.8" / "11.8.0"
 * (newest installed match, preferring the newest cuDNN), "+cudnnX" narrows,
 * "tf-2.14" through the manifest.  CE_ERR_NOTFOUND names what is installed. */
int ce_store_find(ce_ctx *ctx, const char *spec, ce_toolchain *out);

/* The resolution index (manifest/index.h): ce_store_index_find resolves a
 * TensorFlow spec ("tf-2.14", "tf-2.14+cudnn8.6", "tf-latest"), or latest
 * (the index's cuda records and the driver), through it: its CUDA +
 * cuDNN as "<cuda>+cudnn<cudnn>" to ce_store_find (the same match the
 * manifest path makes).  A stale index is refreshed first when something is
 * installed and the store lock is free (ce_store_try_begin: never waits).
 * 1: *out is the toolchain; 0: not resolved here (no TF spec, not in the
 * index, nothing installed matches), the status untouched: call
 * ce_store_find, which reads the manifest.  refresh: after install, lock
 * held; prune: after uninstall, removes the index when nothing is left. */
int ce_store_index_find(ce_ctx *ctx, const char *spec, ce_toolchain *out);
/* doctor's facts of CUDA release cuda and TensorFlow row tf through the
 * index (ce_index_facts_of), refreshed as above: 1 *out holds them, 0 read
 * the manifest. */
struct ce_index_facts;
int ce_store_index_facts(ce_ctx *ctx, const char *cuda, const char *tf, struct ce_index_facts *out);
/* The index's "at" records for the manifest file open as fd (manifest/index.h
 * ce_index_at), the index refreshed as above: the text to free, *recs in
 * it; NULL when there are none to trust (read the manifest). */
char *ce_store_index_at(ce_ctx *ctx, int fd, const char **recs);
void ce_store_index_refresh(ce_ctx *ctx);
void ce_store_index_prune(ce_ctx *ctx);

/* ---- writing the store (install, uninstall) ----
 * Every writer holds the lock for its whole run, so any .staging-* found
 * while holding it belongs to a crashed run and is removed. */

/* Remove versions/.staging-* and pkgs/.staging-* left by crashed runs
 * (call with the lock held).  Returns how many were removed, or < 0. */
int ce_store_clean_staging(ce_ctx *ctx);
/* A store transaction, the one way to hold the store lock, what every
 * writer (install, uninstall, adopt, cache prune, mirror, the system switch)
 * opens first: ce_store_begin takes the exclusive fcntl lock (F_OFD_SETLKW:
 * works on NFS) on $CUDAENV_ROOT/.lock (creating the root), waiting for
 * another writer (a CE_EV_NOTE says so), and then removes the stale staging
 * directories, which only a lock holder may; ce_store_try_begin takes the
 * lock only if it is free this instant (CE_ERR_OTHER otherwise) and cleans
 * nothing; ce_store_end releases the lock (safe on a transaction that never
 * began: initialise with CE_STORE_TXN_INIT). */
typedef struct ce_store_txn { int lock; } ce_store_txn;
#define CE_STORE_TXN_INIT { .lock = -1 }
int ce_store_begin(ce_ctx *ctx, ce_store_txn *t);
int ce_store_try_begin(ce_ctx *ctx, ce_store_txn *t);
void ce_store_end(ce_store_txn *t);
/* Create $CUDAENV_ROOT/<sub>/.staging-XXXXXX (sub: "versions", "pkgs"). */
int ce_store_staging(ce_ctx *ctx, const char *sub, char *out, size_t outsz);
/* rename(2) staging to final in one step and fsync the parent.  An existing
 * final (a --force reinstall) is swapped out atomically (RENAME_EXCHANGE)
 * and then removed, so final is never missing or half-written. */
int ce_store_commit(const char *staging, const char *final);
/* Remove a directory of the store atomically: rename it to a .staging-
 * name (it vanishes in one step), then rm -rf. */
int ce_store_remove(const char *dir);
/* pkgs/ directory names a toolchain is composed from:
 * "cuda-11.8.0" and "cudnn-8.7.0.84-cuda11" ("" when no cuDNN). */
void ce_store_pkg_names(const char *cuda, const char *cudnn, char *cuda_pkg, size_t cn,
                        char *cudnn_pkg, size_t dn);
/* Remove pkgs/<tree> that no installed toolchain is composed from (the
 * downloads in cache/ stay, so a reinstall unpacks again without network).
 * Returns how many trees were removed, or < 0. */
int ce_store_gc_pkgs(ce_ctx *ctx);
/* Uninstall: refuses (CE_ERR_OTHER, exit 1) the toolchain that
 * $CUDAENV_SYSROOT/usr/local/cuda resolves into unless force; CE_ERR_NOTFOUND
 * when name is not installed. */
int ce_store_uninstall(ce_ctx *ctx, const char *name, bool force);

#endif
