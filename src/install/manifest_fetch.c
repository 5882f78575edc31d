/* Keeping the local copy of a remote manifest current (manifest_fetch.h). */
#include "manifest_fetch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fetch/fetch.h"
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

/* The detached signature beside src (none, a 404: *sig stays NULL). */
static int fetch_sig(ce_ctx *ctx, const ce_msource *src, char **sig)
{
    char sigurl[4200];
    size_t siglen = 0;
    snprintf(sigurl, sizeof sigurl, "%s.sig", src->origin);
    ce_text_cond sc = { 0 };
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rc = ce_fetch_text_cond(ctx, sigurl, 4096, ctx->insecure, &sc, sig, &siglen);
    if (rc == CE_ERR_DOWNLOAD && sc.status == 404) rc = CE_OK;
    if (rc) ce_quiet_keep(&q); else ce_quiet_end(&q);
    return rc;
}

/* The signed claims (manifest.h) of m, the new text of src (sha256 sha),
 * against the URL it came from and the copy it would replace: a signed
 * manifest names its source and serial; the source is this URL; the serial
 * never goes down, and the same serial means the same bytes; an expired
 * manifest is taken by update (force) no more. */
static int check_claims(const ce_msource *src, const ce_manifest *m, bool is_signed,
                        const ce_mcopy_meta *old, bool have_old, const char *sha, bool force)
{
    if (is_signed && (m->serial < 0 || !m->source))
        return ce_fail(CE_ERR_INTEGRITY, "the manifest %s is signed but names no %s: refused (a signed "
                       "manifest says where it is served and which publication it is, so it cannot be served "
                       "again later or elsewhere; man cudaenv-manifest: SIGNATURES; cudaenv mirror --url URL "
                       "writes both); the copy is kept", src->origin,
                       m->serial < 0 && !m->source ? "\"source\" and \"serial\""
                       : m->serial < 0 ? "\"serial\"" : "\"source\"");
    if (m->source && strcmp(m->source, src->origin))
        return ce_fail(CE_ERR_INTEGRITY, "the manifest served at %s is the manifest of %s (its \"source\"): "
                       "refused (signed for another place); the copy is kept", src->origin, m->source);
    if (have_old && old->serial >= 0 && m->serial < old->serial) {
        char had[40] = "no serial";
        if (m->serial >= 0) snprintf(had, sizeof had, "serial %lld", m->serial);
        return ce_fail(CE_ERR_INTEGRITY, "the manifest %s has %s, lower than the copy it would replace "
                       "(serial %lld): refused (an old manifest served again?); the copy is kept", src->origin,
                       had, old->serial);
    }
    if (have_old && old->serial >= 0 && m->serial == old->serial && strcmp(sha, old->sha256))
        return ce_fail(CE_ERR_INTEGRITY, "the manifest %s has serial %lld, as the copy it would replace, "
                       "but other bytes: refused (a publisher raises the serial with every change; the same "
                       "serial twice is a replay or a mistake); the copy is kept", src->origin, m->serial);
    if (force && ce_manifest_date_past(m->expires, time(NULL)))
        return ce_fail(CE_ERR_INTEGRITY, "the manifest %s expired on %s (its \"expires\"): refused as "
                       "current; its publisher must publish it again with a later date; the copy is kept",
                       src->origin, m->expires);
    return CE_OK;
}

/* Check the text of a 200 before it may replace the copy; fills meta's
 * sha256, updated, serial, expires and signed_by.  The raw bytes are bound
 * (ce_fetch_text_cond's max) and their signature checked before any parse. */
static int check_new(ce_ctx *ctx, const ce_msource *src, const char *text, size_t len, const ce_mcopy_meta *old,
                     bool have_old, bool force, ce_mcopy_meta *meta)
{
    char *sig = NULL;
    int rc = fetch_sig(ctx, src, &sig);
    if (rc) return rc;
    bool project;
    rc = ce_manifest_sig_verify(ctx, src->origin, text, len, sig, meta->signed_by, sizeof meta->signed_by, &project);
    free(sig);
    if (rc) return rc;
    ce_manifest *m = NULL;
    if ((rc = ce_manifest_parse(ctx, text, len, src->origin, false, &m))) return rc;
    snprintf(meta->updated, sizeof meta->updated, "%s", m->updated ? m->updated : "");
    snprintf(meta->expires, sizeof meta->expires, "%s", m->expires ? m->expires : "");
    meta->serial = m->serial;
    ce_sha256_hex(text, len, meta->sha256);
    rc = check_claims(src, m, meta->signed_by[0] != '\0', old, have_old, meta->sha256, force);
    ce_manifest_free(m);
    if (rc) return rc;
    /* The project's own manifest never goes back behind the built-in one (a
     * stale or replayed feed); a site's manifest is the site's choice: a
     * warning says it lacks what the built-in one has. */
    char floor[32];
    builtin_updated(ctx, floor, sizeof floor);
    if (floor[0] && strcmp(meta->updated, floor) < 0) {
        if (project)
            return ce_fail(CE_ERR_INTEGRITY, "the manifest %s is dated %s, before the built-in manifest (%s): "
                           "refused (the project's manifest never goes back in time)",
                           src->origin, meta->updated[0] ? meta->updated : "(no date)", floor);
        ce_emit(ctx, CE_EV_WARN, NULL, "the manifest %s is dated %s, before the built-in manifest (%s): releases "
                "added since are not in it (refresh the mirror with this cudaenv: cudaenv mirror)",
                src->origin, meta->updated[0] ? meta->updated : "(no date)", floor);
    }
    if (have_old && old->updated[0] && strcmp(meta->updated, old->updated) < 0)
        return ce_fail(CE_ERR_INTEGRITY, "the manifest %s is dated %s, before the copy it would replace "
                       "(%s): refused (an old manifest served again?); the copy is kept",
                       src->origin, meta->updated[0] ? meta->updated : "(no date)", old->updated);
    return CE_OK;
}

static void age(time_t t, char *out, size_t n)
{
    time_t now = time(NULL);
    long h = t && now > t ? (long)((now - t) / 3600) : 0;
    if (h >= 48) snprintf(out, n, "%ld days old", h / 24);
    else snprintf(out, n, "%ld hours old", h);
}

static int refresh(ce_ctx *ctx, const ce_msource *src, bool force, ce_mrefresh *res)
{
    *res = CE_MREFRESH_FRESH;
    if (!src->remote) return CE_OK;
    ce_mcopy_meta old;
    struct stat st;
    bool have = stat(src->path, &st) == 0 && ce_mcopy_meta_read(src, &old) == CE_OK;
    if (!have) {
        memset(&old, 0, sizeof old);
        old.serial = -1;
    }
    if (!force && have && ce_mcopy_fresh(ctx, src)) return CE_OK;
    if (ctx->offline) {
        if (have) return CE_OK;
        return ce_fail(CE_ERR_NOTFOUND, "--offline: no local copy of the manifest %s yet; run cudaenv update "
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
        return ce_mcopy_touch(src, &meta);
    }
    if (!text) return ce_fail(CE_ERR_DOWNLOAD, "%s answered 304 but there is no local copy", src->origin);
    rc = check_new(ctx, src, text, len, &old, have, force, &meta);
    if (rc == CE_OK) {
        meta.fetched = (long long)time(NULL);
        *res = have && !strcmp(meta.sha256, old.sha256) ? CE_MREFRESH_SAME : CE_MREFRESH_NEW;
        rc = ce_mcopy_write(src, text, len, &meta);
    }
    free(text);
    return rc;
}

/* After the refresh: a copy past its "expires" is used with a warning, and
 * is no answer to update (force) even when the source says it has not
 * changed (a 304 forever keeps no node on it silently). */
static int check_expiry(ce_ctx *ctx, const ce_msource *src, bool force, ce_mrefresh res)
{
    ce_mcopy_meta m;
    if (ce_mcopy_meta_read(src, &m) != CE_OK || !ce_manifest_date_past(m.expires, time(NULL))) return CE_OK;
    if (force)
        return ce_fail(CE_ERR_INTEGRITY, "the manifest %s expired on %s (its \"expires\") and %s: it is "
                       "not current; its publisher must publish it again with a later date (the copy is kept)",
                       src->origin, m.expires, res == CE_MREFRESH_SAME ? "its source answers that it has not "
                       "changed (304)" : "no newer one came");
    ce_emit(ctx, CE_EV_WARN, NULL, "the manifest %s expired on %s (its \"expires\"): using the copy anyway; "
            "cudaenv update fails until its publisher publishes it again", src->origin, m.expires);
    return CE_OK;
}

int ce_manifest_refresh(ce_ctx *ctx, const ce_msource *src, bool force, ce_mrefresh *res)
{
    int rc = refresh(ctx, src, force, res);
    if (rc || !src->remote) return rc;
    return check_expiry(ctx, src, force, *res);
}

int ce_manifest_load_url(ce_ctx *ctx, const char *url, ce_manifest **out)
{
    *out = NULL;
    ce_msource src;
    int rc = ce_manifest_source(ctx, &src);
    if (rc) return rc;
    if (!src.remote || strcmp(src.origin, url)) return ce_fail(CE_ERR_OTHER, "internal: %s is not the manifest in use", url);
    ce_mrefresh res;
    if ((rc = ce_manifest_refresh(ctx, &src, false, &res))) return rc;
    return ce_manifest_load_source(ctx, &src, out);
}
