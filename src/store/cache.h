/* Disk use of the store: what each toolchain costs (bytes only it holds vs
 * bytes shared with another toolchain through hardlinks), and the cache:
 * downloads in cache/ and unpacked trees in pkgs/, each marked used when an
 * installed toolchain was made from it: its receipt names the download's
 * sha256 (sources: runfile, cuDNN, redistrib JSON, NCCL; components: each
 * archive) or the tree (components[].pkg and sources[].pkg; a tree named for
 * an archive it lists, ce_pkg_of_sha; the cuda-X/cudnn-X trees of its
 * releases). */
#ifndef CE_CACHE_H
#define CE_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "store.h"

typedef struct ce_tc_usage {
    long long unique;    /* bytes in files no other toolchain links */
    long long shared;    /* bytes in files another toolchain links too */
} ce_tc_usage;

/* usage[i] for v[i] (regular files; an adopted toolchain's symlinks cost 0),
 * from each toolchain's usage record (ce_usage_record) where it has a valid
 * one, else (fresh: always) by walking its tree. */
int ce_store_usage(const ce_toolchain *v, size_t n, ce_tc_usage *usage, bool fresh);



typedef enum { CE_CACHE_DOWNLOAD, CE_CACHE_PARTIAL, CE_CACHE_TREE } ce_cache_kind;

typedef struct ce_cache_item {
    ce_cache_kind kind;
    char name[256];      /* sha256[.part] or the pkgs/ tree name */
    char path[CE_PATH_MAX];
    char label[256];     /* the download's file name from a receipt, or "" */
    long long size;      /* bytes (a tree: its regular files) */
    long long freeable;  /* bytes removing it frees: blocks of files with no other hard link */
    bool used;           /* an installed toolchain came from it */
} ce_cache_item;

/* How ce_cache_scan sums: KEPT (cache list) a tree's sums from
 * pkgs/.cudaenv-sizes while its line and the toolchains' usage records are
 * the ones they were summed with (cache.c), the receipts read up to their
 * file lists; FRESH (--sizes, prune) every tree walked, nothing kept, the
 * receipts read whole (ce_receipt_read: they decide what prune keeps);
 * DOWNLOADS (clean) the downloads alone, no tree looked at. */
typedef enum { CE_SCAN_KEPT, CE_SCAN_FRESH, CE_SCAN_DOWNLOADS } ce_cache_scan_how;

/* Everything in cache/ and pkgs/ (DOWNLOADS: cache/ only), downloads first. */
int ce_cache_scan(ce_ctx *ctx, ce_cache_scan_how how, ce_cache_item **out, size_t *n);
/* Remove one item (a tree's .sha256.json index with it). */
int ce_cache_remove(const ce_cache_item *it);

#endif
