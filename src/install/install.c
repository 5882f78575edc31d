#include "install.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/pkgindex.h"
#include "components.h"
#include "core/clock.h"
#include "core/file.h"
#include "parts.h"
#include "preflight.h"
#include "store/compose.h"
#include "store/receipt.h"
#include "store/store.h"

/* ---- composing one toolchain ---- */

static int compose_one(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r)
{
    char vdir[4200], pkgs[4200], final[4400], staging[4200];
    char cpkg[160], dpkg[160], ctree[4400], dtree[4400];
    int rc;
    if ((rc = ce_store_path(ctx, "versions", vdir, sizeof vdir)) ||
        (rc = ce_store_path(ctx, "pkgs", pkgs, sizeof pkgs)))
        return rc;
    ce_store_pkg_names(r->cuda->version, r->cudnn ? r->cudnn->version : NULL, cpkg, sizeof cpkg, dpkg, sizeof dpkg);
    if ((rc = ce_join(final, sizeof final, vdir, r->name)) || (rc = ce_join(ctree, sizeof ctree, pkgs, cpkg)) ||
        (rc = ce_join(dtree, sizeof dtree, pkgs, dpkg)))
        return rc;
    if ((rc = ce_store_staging(ctx, "versions", staging, sizeof staging))) return rc;

    double t0 = ce_mono_ms();
    ce_filelist files = { 0 };
    rc = ce_compose_tree(ctx, ctree, staging, "", &files);
    if (rc == CE_OK && r->cudnn) rc = ce_compose_cudnn(ctx, dtree, staging, &files);
    double t_compose = ce_mono_ms() - t0;
    const char *trees[] = { ctree, r->cudnn ? dtree : NULL, NULL };
    if (rc == CE_OK) rc = ce_pkgindex_hash_files(ctx, staging, trees, &files);

    const char *tf[64];
    ce_receipt rec;
    ce_receipt_init(&rec, m, r, ctx->platform, &files, tf, 64);
    rec.sources[rec.n_sources++] = (ce_receipt_source){ "runfile", r->runfile->url, r->runfile->sha256,
                                                       r->runfile->size, cpkg };
    if (r->cudnn && r->cudnn_archive)
        rec.sources[rec.n_sources++] = (ce_receipt_source){ "cudnn", r->cudnn_archive->url,
                                                           r->cudnn_archive->sha256, r->cudnn_archive->size, dpkg };
    rc = ce_parts_publish(rc, staging, final, &rec);
    if (rc == CE_OK) {
        ce_emit(ctx, CE_EV_INFO, r->name, "composed %zu files (%zu hardlinked, %zu copied) in %.1f ms",
                files.n, files.linked, files.copied, t_compose);
        ce_emit(ctx, CE_EV_NOTE, r->name, "installed %s in %s", r->name, final);
    }
    ce_filelist_free(&files);
    return rc;
}

/* ---- the plan ---- */

/* The runfile of r and its cuDNN archive, as parts of pl (parts.h). */
static int add_parts(ce_ctx *ctx, plan *pl, const char *pkgs, const ce_resolved *r)
{
    part rp = { .name = ce_parts_url_base(r->runfile->url), .label = "CUDA", .version = r->cuda->version,
                .url = r->runfile->url, .sha256 = r->runfile->sha256, .size = r->runfile->size, .runfile = true };
    part dp = { 0 };
    if (r->cudnn && r->cudnn_archive)
        dp = (part){ .name = ce_parts_url_base(r->cudnn_archive->url), .label = "cuDNN", .version = r->cudnn->version,
                     .url = r->cudnn_archive->url, .sha256 = r->cudnn_archive->sha256,
                     .size = r->cudnn_archive->size, .cudnn = true };
    ce_store_pkg_names(r->cuda->version, r->cudnn ? r->cudnn->version : NULL, rp.pkg, sizeof rp.pkg, dp.pkg,
                       sizeof dp.pkg);
    int rc = ce_parts_add(ctx, pl, pkgs, rp);
    if (rc == CE_OK && dp.url) rc = ce_parts_add(ctx, pl, pkgs, dp);
    return rc;
}

/* Which toolchains to install, and how: each from NVIDIA's components where
 * the release has them (components.c), the others from their runfiles, all of
 * whose archives go through one ce_parts_get before they are composed. */
int ce_install(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r, size_t n)
{
    bool todo[64] = { false };
    size_t ntodo = 0;
    char vdir[4200], pkgs[4200];
    /* the unpackers chdir while the download thread writes: every store
     * path must be absolute */
    char abs[4096];
    if (ctx->root[0] != '/' && realpath(ctx->root, abs)) snprintf(ctx->root, sizeof ctx->root, "%s", abs);
    int rc = ce_store_path(ctx, "versions", vdir, sizeof vdir);
    if (rc == CE_OK) rc = ce_store_path(ctx, "pkgs", pkgs, sizeof pkgs);
    if (rc) return rc;
    if (n > 64) return ce_fail(CE_ERR_USAGE, "too many toolchains in one install; split the command");
    plan *pl = calloc(1, sizeof *pl);
    if (!pl) return ce_fail(CE_ERR_NOMEM, "out of memory");

    for (size_t i = 0; rc == CE_OK && i < n; i++) {
        char final[CE_PATH_MAX];
        if ((rc = ce_join(final, sizeof final, vdir, r[i].name))) break;
        bool dup = false;
        for (size_t j = 0; j < i; j++) dup = dup || (todo[j] && strcmp(r[j].name, r[i].name) == 0);
        if (dup) continue;
        int crc; /* NVIDIA's component archives where the release has them (components.c) */
        bool comps = ce_components_apply(ctx, &r[i], &crc);
        if (ce_is_dir(final) && !ctx->force) {
            /* what this spec selects and the toolchain lacks is added (components.h) */
            if (comps) rc = ce_components_complete(ctx, m, &r[i], final);
            else ce_components_note_installed(ctx, r[i].name, final, NULL);
            continue;
        }
        if (comps) {
            if ((rc = ce_preflight_install(ctx, r[i].cuda)) == CE_OK) rc = ce_components_install(ctx, m, &r[i]);
            continue;
        }
        if ((rc = crc)) break;
        if (!r[i].runfile) {
            rc = ce_fail(CE_ERR_NOTFOUND, "CUDA %s has no runfile for %s in the manifest", r[i].cuda->version,
                         ctx->platform);
            break;
        }
        if ((rc = ce_preflight_install(ctx, r[i].cuda)) || (rc = add_parts(ctx, pl, pkgs, &r[i]))) break;
        todo[i] = true;
        ntodo++;
    }
    if (rc == CE_OK && ntodo > 0) rc = ce_parts_get(ctx, m, pl);
    free(pl);
    for (size_t i = 0; rc == CE_OK && i < n; i++) {
        if (!todo[i]) continue;
        ce_emit(ctx, CE_EV_STEP, r[i].name, "composing %s", r[i].name);
        rc = compose_one(ctx, m, &r[i]);
    }
    return rc;
}
