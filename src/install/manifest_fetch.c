/* Keeping the local copy of a remote manifest current (manifest_fetch.h). */
#include "manifest_fetch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fetch.h"
#include "manifest/copy.h"
#include "manifest/index.h"
#include "manifest_sig.h"

/* The built-in manifest's "updated" ("" when it cannot be read): the floor. */
static void builtin_updated(ce_ctx *ctx, char *out, size_t n)
{
    char path[4200];
    ce_manifest *m = NULL;
    ce_quiet q;
    ce_quiet_begin(&q, true);
    out[0] = '\0';
    if (ce_builtin_manifest(ctx, path, sizeof path) == CE_OK && ce_manifest_load_file(ctx, path, &m) == CE_OK &&
        m->updated)
        snprintf(out, n, "%s", m->updated);
    ce_manifest_free(m);
    ce_quiet_end(&q);
}

/* Check the text of a 200 before it may replace the copy; fills meta's
 * sha256, updated and signed_by. */
static int check_new(ce_ctx *ctx, const ce_msource *src, const char *text, size_t len, const ce_mcopy_meta *old,
                     bool have_old, ce_mcopy_meta *meta)
{
    ce_manifest *m = NULL;
    int rc = ce_manifest_parse(ctx, text, len, src->origin, false, &m);
    if (rc) return rc;
    snprintf(meta->updated, sizeof meta->updated, "%s", m->updated ? m->updated : "");
    ce_manifest_free(m);
    /* the detached signature beside it: none (404) is "unsigned" */
    char sigurl[4200], *sig = NULL;
    size_t siglen = 0;
    snprintf(sigurl, sizeof sigurl, "%s.sig", src->origin);
    ce_text_cond sc = { 0 };
    ce_quiet q;
    ce_quiet_begin(&q, false);
    rc = ce_fetch_text_cond(ctx, sigurl, 4096, ctx->insecure, &sc, &sig, &siglen);
    if (rc == CE_ERR_DOWNLOAD && sc.status == 404) rc = CE_OK;
    if (rc) ce_quiet_keep(&q); else ce_quiet_end(&q);
    if (rc) return rc;
    bool project;
    rc = ce_manifest_sig_verify(ctx, src->origin, text, len, sig, meta->signed_by, sizeof meta->signed_by, &project);
    free(sig);
    if (rc) return rc;
    /* The project's own manifest never goes back behind the built-in one (a
     * stale or replayed feed); a site's manifest is the site's choice: a
     * warning says it lacks what the built-in one has. */
    char floor[32];
    builtin_updated(ctx, floor, sizeof floor);
    if (floor[0] && strcmp(meta->updated, floor) < 0) {
        if (project)
            return ce_fail(ctx, CE_ERR_INTEGRITY, "the manifest %s is dated %s, before the built-in manifest (%s): "
                           "refused (the project's manifest never goes back in time)",
                           src->origin, meta->updated[0] ? meta->updated : "(no date)", floor);
        ce_emit(ctx, CE_EV_WARN, NULL, "the manifest %s is dated %s, before the built-in manifest (%s): releases "
                "added since are not in it (refresh the mirror with this cudaenv: cudaenv mirror)",
                src->origin, meta->updated[0] ? meta->updated : "(no date)", floor);
    }
    /* the dates are the signed text's: checked after the signature */
    if (have_old && old->updated[0] && strcmp(meta->updated, old->updated) < 0)
        return ce_fail(ctx, CE_ERR_INTEGRITY, "the manifest %s is dated %s, before the copy it would replace "
                       "(%s): refused (an old manifest served again?); the copy is kept",
                       src->origin, meta->updated[0] ? meta->updated : "(no date)", old->updated);
    ce_sha256_hex(text, len, meta->sha256);
    return CE_OK;
}

static void age(time_t t, char *out, size_t n)
{
    time_t now = time(NULL);
    long h = t && now > t ? (long)((now - t) / 3600) : 0;
    if (h >= 48) snprintf(out, n, "%ld days old", h / 24);
    else snprintf(out, n, "%ld hours old", h);
}

int ce_manifest_refresh(ce_ctx *ctx, const ce_msource *src, bool force, ce_mrefresh *res)
{
    *res = CE_MREFRESH_FRESH;
    if (!src->remote) return CE_OK;
    ce_mcopy_meta old;
    struct stat st;
    bool have = stat(src->path, &st) == 0 && ce_mcopy_meta_read(ctx, src, &old) == CE_OK;
    if (!have) memset(&old, 0, sizeof old);
    if (!force && have && ce_mcopy_fresh(ctx, src)) return CE_OK;
    if (ctx->offline) {
        if (have) return CE_OK;
        return ce_fail(ctx, CE_ERR_NOTFOUND, "--offline: no local copy of the manifest %s yet; run cudaenv update "
                       "once with the network", src->origin);
    }
    ce_text_cond cond = { .etag = have ? old.etag : NULL, .last_modified = have ? old.last_modified : NULL };
    char *text = NULL;
    size_t len = 0;
    int rc = ce_fetch_text_cond(ctx, src->origin, CE_MANIFEST_MAX, ctx->insecure, &cond, &text, &len);
    if (rc == CE_ERR_DOWNLOAD && have && !force) {
        char a[64];
        age(old.checked, a, sizeof a);
        ce_emit(ctx, CE_EV_WARN, NULL, "%s; using the local copy of the manifest (%s, dated %s)", ce_errmsg(), a,
                old.updated[0] ? old.updated : "?");
        *res = CE_MREFRESH_KEPT;
        return CE_OK;
    }
    if (rc) return rc;
    ce_mcopy_meta meta = old;
    snprintf(meta.etag, sizeof meta.etag, "%s", cond.new_etag);
    snprintf(meta.last_modified, sizeof meta.last_modified, "%s", cond.new_last_modified);
    if (cond.status == 304 && have) {
        if (!meta.etag[0]) snprintf(meta.etag, sizeof meta.etag, "%s", old.etag);
        if (!meta.last_modified[0]) snprintf(meta.last_modified, sizeof meta.last_modified, "%s", old.last_modified);
        *res = CE_MREFRESH_SAME;
        return ce_mcopy_touch(ctx, src, &meta);
    }
    if (!text) return ce_fail(ctx, CE_ERR_DOWNLOAD, "%s answered 304 but there is no local copy", src->origin);
    rc = check_new(ctx, src, text, len, &old, have, &meta);
    if (rc == CE_OK) {
        meta.fetched = (long long)time(NULL);
        *res = have && !strcmp(meta.sha256, old.sha256) ? CE_MREFRESH_SAME : CE_MREFRESH_NEW;
        rc = ce_mcopy_write(ctx, src, text, len, &meta);
    }
    free(text);
    return rc;
}

int ce_manifest_load_url(ce_ctx *ctx, const char *url, ce_manifest **out)
{
    *out = NULL;
    ce_msource src;
    int rc = ce_manifest_source(ctx, &src);
    if (rc) return rc;
    if (!src.remote || strcmp(src.origin, url)) return ce_fail(ctx, CE_ERR_OTHER, "internal: %s is not the manifest in use", url);
    ce_mrefresh res;
    if ((rc = ce_manifest_refresh(ctx, &src, false, &res))) return rc;
    return ce_manifest_load_source(ctx, &src, out);
}
