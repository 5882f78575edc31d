/* The archives of an install (parts.h): planned, checked against the free
 * space, fetched and unpacked (unpackers.c), committed into pkgs/.  Both
 * routes use it: a components install (components.c) and a runfile install
 * (install.c: the runfile and the cuDNN archive of each toolchain). */
#include "parts.h"

#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "core/bytes.h"
#include "core/fault.h"
#include "core/file.h"
#include "core/rmtree.h"
#include "preflight.h"
#include "store/store.h"

int ce_parts_add(ce_ctx *ctx, plan *pl, const char *pkgs, part p)
{
    for (size_t i = 0; i < pl->n; i++)
        if (strcmp(pl->parts[i].pkg, p.pkg) == 0) return CE_OK;   /* one tree, shared by toolchains */
    if (pl->n == MAX_PARTS)
        return ce_fail(CE_ERR_USAGE, "more than %d archives in one install; split the command", MAX_PARTS);
    int rc = ce_join(p.tree, sizeof p.tree, pkgs, p.pkg);
    if (rc) return rc;
    p.have = ce_is_dir(p.tree) && !ctx->force;
    rc = ce_cache_path(ctx, p.sha256, p.cache, sizeof p.cache);
    if (rc == CE_OK) pl->parts[pl->n++] = p;
    return rc;
}

/* ---- free space: downloads not yet cached + the unpacked trees ---- */

static int space(ce_ctx *ctx, const plan *pl)
{
    double want = 0;
    for (size_t i = 0; i < pl->n; i++) {
        const part *p = &pl->parts[i];
        if (p->have || p->size < 0) continue;   /* the manifest gives no size: nothing to add */
        struct stat st;
        char partf[CE_PATH_MAX + 8];
        snprintf(partf, sizeof partf, "%s.part", p->cache);
        if (stat(p->cache, &st) != 0)
            want += (double)p->size - (stat(partf, &st) == 0 && st.st_size <= p->size ? (double)st.st_size : 0);
        want += (double)p->size * (p->runfile ? CE_RUNFILE_UNPACK_FACTOR : CE_TARBALL_UNPACK_FACTOR);
    }
    if (want <= 0) return CE_OK;
    struct statvfs vs;
    if (statvfs(ctx->root, &vs) != 0) return CE_OK;   /* cannot tell: let the writes speak */
    double avail = (double)vs.f_bavail * (double)vs.f_frsize;
    if (avail >= want) return CE_OK;
    char w[32], a[32];
    ce_bytes_text(w, sizeof w, want);
    ce_bytes_text(a, sizeof a, avail);
    return ce_fail(CE_ERR_SPACE, "not enough free space in %s: this install needs about %s "
                   "(downloads plus unpacked trees) and %s is free; free some space, or set "
                   "CUDAENV_ROOT to a larger filesystem", ctx->root, w, a);
}

static int commit(plan *pl)
{
    int rc = CE_OK;
    for (size_t i = 0; rc == CE_OK && i < pl->n; i++) {
        part *p = &pl->parts[i];
        if (!p->staging[0]) continue;
        if ((rc = ce_store_commit(p->staging, p->tree)) == CE_OK) p->staging[0] = '\0';
    }
    if (rc != CE_OK) ce_parts_drop(pl);
    return rc;
}

int ce_parts_publish(int rc, const char *staging, const char *final, const ce_receipt *rec)
{
    if (rc == CE_OK) rc = ce_receipt_write(staging, rec);
    if (rc == CE_OK) {
        ce_fsync_dir(staging);
        ce_fault_point("before-commit", NULL);
        rc = ce_store_commit(staging, final);   /* an existing toolchain: swapped in one step */
    }
    if (rc != CE_OK) {
        ce_quiet q;   /* cleanup must not overwrite the error being reported */
        ce_quiet_begin(&q, false);
        ce_rm_tree(staging);   /* through directory fds: deep trees cannot wedge it */
        ce_quiet_end(&q);
    }
    return rc;
}

int ce_parts_get(ce_ctx *ctx, const ce_manifest *m, plan *pl)
{
    int rc = space(ctx, pl);
    if (rc == CE_OK) rc = ce_parts_fetch_unpack(ctx, m, pl);
    if (rc == CE_OK) ce_fault_point("after-unpack", NULL);
    if (rc == CE_OK) rc = commit(pl);
    return rc;
}
