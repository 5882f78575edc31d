/* The archives of an install and their one pipeline: planned by either
 * route (components.c: NVIDIA's component archives; install.c: a CUDA
 * runfile and a cuDNN archive per toolchain), checked against the free space,
 * fetched and committed (parts.c), unpacked by threads that follow their
 * downloads (unpackers.c).  Internal to src/install. */
#ifndef CE_PARTS_H
#define CE_PARTS_H

#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/types.h>

#include "core/ctx.h"
#include "core/status.h"
#include "fetch/fetch.h"
#include "manifest/manifest.h"
#include "redist.h"
#include "store/receipt.h"

#define MAX_PARTS 128  /* archives of one install */

/* One archive to have unpacked in pkgs/: a component, the cuDNN tarball, the
 * NCCL wheel, or a CUDA runfile (run in its silent toolkit mode once its
 * download verified: it cannot follow the download). */
typedef struct part {
    const char *name, *label, *version, *url, *sha256;
    long long size;
    bool cudnn, nccl;       /* a library archive: cuDNN's tarball, or NCCL's wheel (a zip) */
    bool runfile;           /* a CUDA runfile (runfile.h): version is its CUDA release */
    char pkg[200];          /* pkgs/<pkg> */
    char tree[CE_PATH_MAX];        /* $CUDAENV_ROOT/pkgs/<pkg> */
    char cache[CE_PATH_MAX];       /* cache/<sha256> */
    char staging[CE_PATH_MAX];     /* pkgs/.staging-* while unpacking, "" if none */
    bool have;              /* already in pkgs/ */
    int state;              /* 0 waiting, 1 unpacking, 2 done */
    bool follow;            /* the unpacker tails the download's .part */
    bool retry;             /* the overlapped pass lost: unpack the verified file */
    bool cached;            /* in the cache at the start: hashed by its unpacker, once */
    ce_fetch_watch *watch;  /* the download's (unpackers.c) */
    int id;                 /* its fetch item, watch and slot index */
    struct shared *sh;      /* what its unpacker shares with the install (unpackers.c) */
    pthread_t th;           /* its unpacker, while joinable */
    bool joinable;
    bool ended;             /* set by the unpacker as it ends (atomic) */
    int rc;                 /* the unpacker's result ... */
    ce_status st;           /* ... and its failure, for the thread that joins it */
} part;

typedef struct plan {
    ce_redist *red;
    const char *profile;    /* the profile asked for (tf, toolkit) */
    part parts[MAX_PARTS];
    size_t n;
    /* what the toolchain holds, for the receipt (components.c: describe) */
    const char *best;       /* the profile that describes its components with the fewest changes */
    const char *adjust[MAX_PARTS * 2];   /* against it: "+nsight_systems", "-libcufft" */
    size_t n_adjust;
    char adjust_buf[8192];
} plan;

static inline const char *ce_parts_url_base(const char *url)
{
    const char *s = strrchr(url, '/');
    return s && s[1] ? s + 1 : url;
}

/* Add p to pl (a pkg already there is not added twice): its tree, whether
 * pkgs/ has it already (unless ctx->force), its cache path. */
int ce_parts_add(ce_ctx *ctx, plan *pl, const char *pkgs, part p);
/* Have every part of pl in pkgs/: the free-space preflight (downloads not
 * cached plus the unpacked trees: CE_ERR_SPACE naming both), then
 * ce_parts_fetch_unpack, the after-unpack fault point, and the commit of each
 * staging tree to its pkgs/ name.  On failure nothing of it is left. */
int ce_parts_get(ce_ctx *ctx, const ce_manifest *m, plan *pl);
/* A toolchain composed in staging from the parts (rc: how that went) is
 * published as final: its receipt written, the tree synced, the
 * before-commit fault point, one rename (ce_store_commit).  On failure
 * (rc's, or one here) staging is removed and the first error returned. */
int ce_parts_publish(int rc, const char *staging, const char *final, const ce_receipt *rec);
/* Download what pl lacks and unpack every archive into its staging tree
 * (unpackers.c); on failure nothing of it is left (ce_parts_drop). */
int ce_parts_fetch_unpack(ce_ctx *ctx, const ce_manifest *m, plan *pl);
/* Stop the unpackers still running and remove every staging tree. */
void ce_parts_drop(plan *pl);

#endif
