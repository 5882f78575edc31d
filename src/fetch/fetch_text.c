/* Small texts over HTTP(S): ce_fetch_text, ce_fetch_text_cond (fetch.h),
 * one request with the rules of http.c, the retries of ce_fetch_all and
 * its bounds: a rate window under the minimum rate, or the deadline (base +
 * the announced size, else max, at 256 KiB/s, from the first attempt),
 * fails the fetch (no retry).  Full binary only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/clock.h"
#include "fetch.h"
#include "http.h"

typedef struct membuf { char *p; size_t len, cap, max; bool over; } membuf;

/* The body, up to max bytes: the buffer doubles (a 16 MiB text takes ~11
 * reallocations, not one per chunk) and never grows past max + 1. */
static size_t on_text(char *p, size_t size, size_t nmemb, void *ud)
{
    membuf *b = ud;
    size_t n = size * nmemb;
    if (b->len + n > b->max) {
        b->over = true;
        return 0;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 16384;
        while (cap < b->len + n + 1) cap *= 2;
        if (cap > b->max + 1) cap = b->max + 1;
        char *q = realloc(b->p, cap);
        if (!q)
            return 0;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
    return n;
}

/* The download's bounds (fetch.c's check_limits) for one text. */
typedef struct textlim {
    const char *url;
    double t0, base, max, window, min_rate, win_start;
    curl_off_t win_have;
    char why[1024];
} textlim;

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)ultotal; (void)ulnow;
    textlim *l = ud;
    double now = ce_mono_s();
    /* the deadline is for the announced size once known, else for max */
    double deadline = l->t0 + l->base + (dltotal > 0 ? (double)dltotal : l->max) / (256.0 * 1024);
    if (now >= deadline) {
        snprintf(l->why, sizeof l->why, "%s did not arrive in time (%.0f s; %lld bytes so far): the server is too "
                 "slow; try again later", l->url, deadline - l->t0, (long long)dlnow);
        return 1;
    }
    if (now - l->win_start >= l->window) {
        double rate = (double)(dlnow - l->win_have) / (now - l->win_start);
        if (rate < l->min_rate) {
            snprintf(l->why, sizeof l->why, "%s is too slow: %lld bytes in the last %.0f s (%.0f bytes/s, at least "
                     "%.0f needed); try again later", l->url, (long long)(dlnow - l->win_have), now - l->win_start,
                     rate, l->min_rate);
            return 1;
        }
        l->win_start = now;
        l->win_have = dlnow;
    }
    return 0;
}

/* The validators of the last response (a redirect's are dropped with its
 * status line): read from the header lines as they come, since
 * curl_easy_header needs libcurl 7.83 and the release is built on Debian
 * 11's 7.74 (Ubuntu 22.04 has 7.81). */
typedef struct texthdr { char etag[256], last_modified[64]; } texthdr;

/* "Name: value" into out when the line is that header (the first one wins;
 * a value too long or with a CR/LF inside is none, as curl_easy_header's). */
static void header_take(const char *p, size_t n, const char *name, char *out, size_t outsz)
{
    size_t nl = strlen(name);
    if (out[0] || n <= nl || strncasecmp(p, name, nl) != 0 || p[nl] != ':') return;
    const char *v = p + nl + 1, *end = p + n;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t')) end--;
    size_t vl = (size_t)(end - v);
    if (vl >= outsz || memchr(v, '\r', vl) || memchr(v, '\n', vl)) return;
    memcpy(out, v, vl);
    out[vl] = '\0';
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    texthdr *h = ud;
    size_t n = size * nmemb;
    if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {   /* a new response: a redirect's or 1xx's headers are not ours */
        h->etag[0] = h->last_modified[0] = '\0';
        return n;
    }
    header_take(p, n, "ETag", h->etag, sizeof h->etag);
    header_take(p, n, "Last-Modified", h->last_modified, sizeof h->last_modified);
    return n;
}

int ce_fetch_text(ce_ctx *ctx, const char *url, size_t max, bool allow_http, char **buf, size_t *len)
{
    return ce_fetch_text_cond(ctx, url, max, allow_http, NULL, buf, len);
}

int ce_fetch_text_cond(ce_ctx *ctx, const char *url, size_t max, bool allow_http, ce_text_cond *cond,
                       char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    char msg[4096];
    int rc = ce_http_check_url(msg, sizeof msg, url, allow_http);
    if (rc != CE_OK)
        return ce_fail(rc, "%s", msg);
    if (ctx->offline)
        return ce_fail(CE_ERR_NOTFOUND, "--offline: not fetching %s; use a local manifest "
                       "(CUDAENV_MANIFEST=PATH)", url);
    ce_http_global_init();
    CURL *e = curl_easy_init();
    if (!e)
        return ce_fail(CE_ERR_NOMEM, "cannot start libcurl");
    char errbuf[CURL_ERROR_SIZE];
    membuf b = { .max = max };
    struct curl_slist *hdrs = NULL;
    char h[512];
    if (cond && cond->etag && cond->etag[0]) {
        snprintf(h, sizeof h, "If-None-Match: %s", cond->etag);
        hdrs = curl_slist_append(hdrs, h);
    }
    if (cond && cond->last_modified && cond->last_modified[0]) {
        snprintf(h, sizeof h, "If-Modified-Since: %s", cond->last_modified);
        hdrs = curl_slist_append(hdrs, h);
    }
    textlim lim = {
        .url = url,
        .t0 = ce_mono_s(),
        .window = (double)ce_setting_long(ctx->set.rate_window, 60, 1),
        .min_rate = (double)ce_setting_long(ctx->set.min_rate, 4096, 0),
        .base = (double)ce_setting_long(ctx->set.deadline_base, 900, 1),
        .max = (double)max,
    };
    for (int failures = 1;; failures++) {
        curl_easy_reset(e);
        ce_http_setup(e, url, allow_http, errbuf);
        lim.win_start = ce_mono_s();
        lim.win_have = 0;
        curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(e, CURLOPT_XFERINFODATA, &lim);
        curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_text);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
        texthdr th = { "", "" };
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(e, CURLOPT_HEADERDATA, &th);
        if (hdrs) curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
        b.len = 0;
        CURLcode cc = curl_easy_perform(e);
        if (cc == CURLE_OK) {
            rc = CE_OK;
            if (cond) {
                long status = 0;
                curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
                cond->status = status == 304 ? 304 : 200;   /* file:// has none: a 200 */
                snprintf(cond->new_etag, sizeof cond->new_etag, "%s", th.etag);
                snprintf(cond->new_last_modified, sizeof cond->new_last_modified, "%s", th.last_modified);
            }
            break;
        }
        if (lim.why[0]) {   /* too slow: as a download, not retried */
            rc = ce_fail(CE_ERR_DOWNLOAD, "%s", lim.why);
            break;
        }
        if (b.over) {
            rc = ce_fail(CE_ERR_DOWNLOAD, "%s is larger than %zu bytes: not a manifest?", url, max);
            break;
        }
        bool retry;
        if (cond) curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &cond->status);
        rc = ce_http_attempt_error(e, cc, url, errbuf, msg, sizeof msg, &retry);
        if (!retry || failures >= CE_FETCH_ATTEMPTS) {
            rc = retry ? ce_fail(rc, "giving up after %d attempts: %s", failures, msg)
                       : ce_fail(rc, "%s", msg);
            break;
        }
        ce_emit(ctx, CE_EV_INFO, url, "%s; retrying", msg);
        struct timespec ts = { 0 };
        double s = ce_http_backoff_s(failures);
        ts.tv_sec = (time_t)s;
        ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
        nanosleep(&ts, NULL);
    }
    curl_easy_cleanup(e);
    curl_slist_free_all(hdrs);
    if (rc != CE_OK) {
        free(b.p);
        return rc;
    }
    if (cond && cond->status == 304) {
        free(b.p);
        return CE_OK;
    }
    if (!b.p && !(b.p = calloc(1, 1)))
        return ce_fail(CE_ERR_NOMEM, "out of memory");
    *buf = b.p;
    *len = b.len;
    return CE_OK;
}
