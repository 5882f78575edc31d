/* The store's glue to the resolution index (manifest/index.h): resolve a
 * spec through it, refresh it after an install, prune it after the last
 * uninstall, and doctor's facts; a user of a shared store falls back on
 * their own copy (store/userstate.h). */
#include "store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/priv.h"
#include "core/status.h"
#include "manifest/index.h"
#include "manifest/resolve.h"
#include "userstate.h"

/* Refresh a stale index, when something is installed and the store lock is
 * free this instant (a prompt never waits for an install); quiet: failing
 * leaves the specs to the manifest. */
static void index_refresh_now(ce_ctx *ctx)
{
    ce_quiet q;
    ce_quiet_begin(&q, true);
    ce_toolchain *v = NULL;
    size_t n = 0;
    ce_store_txn txn = CE_STORE_TXN_INIT;
    if (ce_store_list(ctx, &v, &n) == CE_OK && n > 0 && ce_store_try_begin(ctx, &txn) == CE_OK)
        ce_index_refresh(ctx, NULL);
    ce_store_end(&txn);
    free(v);
    ce_quiet_end(&q);
}

/* Before each of an index query's passes: 0 the store's index; 1 the same,
 * refreshed when stale (index_refresh_now); 2 a user of another's store who
 * cannot refresh it: their own copy (index.h); 3 that copy, refreshed at
 * once.  false: no pass 2 (root, or the user's own store). */
static bool index_pass(ce_ctx *ctx, int pass, char *own, size_t ownsz, const char **ipath)
{
    if (pass == 1) index_refresh_now(ctx);
    if (pass == 2) {
        if (ce_priv() || !ce_store_shared(ctx) || ce_user_index_path(ctx, own, ownsz)) return false;
        *ipath = own;
    }
    if (pass == 3) {
        ce_quiet q;
        ce_quiet_begin(&q, true);
        ce_index_refresh(ctx, *ipath);
        ce_quiet_end(&q);
    }
    return true;
}

int ce_store_index_facts(ce_ctx *ctx, const char *cuda, const char *tf, ce_index_facts *out)
{
    int r = -1;
    const char *ipath = NULL;
    char own[4200];
    ce_quiet q;
    ce_quiet_begin(&q, false);
    for (int pass = 0; pass < 4 && r < 0; pass++) {
        if (!index_pass(ctx, pass, own, sizeof own, &ipath)) break;
        r = ce_index_facts_of(ctx, ipath, cuda, tf, out);
    }
    ce_quiet_end(&q);
    return r == 1;
}

char *ce_store_index_at(ce_ctx *ctx, int fd, const char **recs)
{
    int r = -1;
    const char *ipath = NULL;
    char own[4200], *data = NULL;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    for (int pass = 0; pass < 4 && r < 0; pass++) {
        if (!index_pass(ctx, pass, own, sizeof own, &ipath)) break;
        r = ce_index_at(ctx, ipath, fd, &data, recs);
    }
    ce_quiet_end(&q);
    return data;
}

int ce_store_index_find(ce_ctx *ctx, const char *spec_text, ce_toolchain *out)
{
    char cuda[32], cudnn[32], name[128];
    int found = 0;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    ce_spec spec;
    char drv[64];
    const char *driver = NULL;
    bool latest = false;
    if (ce_spec_parse(spec_text, &spec) == CE_OK && spec.kind == CE_SPEC_CUDA &&
        !strcmp(spec.version, "latest")) {
        /* latest: the release install latest picks, through the index's cuda records */
        latest = true;
        driver = ce_driver_version(ctx, drv, sizeof drv) ? drv : NULL;
        cudnn[0] = '\0';
    }
    const char *fw = ce_spec_fw_name(spec.kind);
    if (latest || spec.kind == CE_SPEC_TF || fw) {
        int r = -1;
        const char *ipath = NULL;
        char own[4200];
        for (int pass = 0; pass < 4 && r < 0; pass++) {
            if (!index_pass(ctx, pass, own, sizeof own, &ipath)) break;
            r = latest ? ce_index_cuda_latest(ctx, ipath, ctx->platform, driver, cuda, sizeof cuda)
                : fw ? ce_index_fw(ctx, ipath, fw, spec.version, spec.build, cuda, sizeof cuda, cudnn, sizeof cudnn)
                     : ce_index_tf(ctx, ipath, spec.version, cuda, sizeof cuda, cudnn, sizeof cudnn);
        }
        /* the store's index answered the long way: give it this caller's where key (own store only) */
        if (r >= 0 && !ipath && ce_index_where_stale() && !ce_store_shared(ctx)) index_refresh_now(ctx);
        if (r == 1) {
            const char *d = spec.cudnn[0] ? spec.cudnn : cudnn;   /* +cudnnX wins, as in ce_store_find */
            /* "%s+cudnn%s" joined by hand (cuda and d are at most 31 bytes): every use/env of a framework spec */
            size_t cl = strlen(cuda), dl = strlen(d);
            memcpy(name, cuda, cl);
            if (dl) {
                memcpy(name + cl, "+cudnn", 6);
                memcpy(name + cl + 6, d, dl);
                cl += 6 + dl;
            }
            name[cl] = '\0';
            found = ce_store_find(ctx, name, out) == CE_OK;
        }
    }
    ce_quiet_end(&q);
    return found;
}

void ce_store_index_refresh(ce_ctx *ctx)
{
    ce_quiet q;
    ce_quiet_begin(&q, false);
    ce_index_refresh(ctx, NULL);   /* a failure is a warning of its own (index.h) or a stale index */
    ce_quiet_end(&q);
}

void ce_store_index_prune(ce_ctx *ctx)
{
    ce_toolchain *v = NULL;
    size_t n = 0;
    char path[4200];
    if (ce_store_list(ctx, &v, &n) == CE_OK && n == 0 &&
        ce_store_path(ctx, "versions/" CE_INDEX_NAME, path, sizeof path) == CE_OK && unlink(path) != 0 &&
        errno != ENOENT)
        ce_emit(ctx, CE_EV_WARN, NULL, "cannot remove %s: %s", path, strerror(errno));
    free(v);
}

