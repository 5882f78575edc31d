/* Downloads: libcurl multi, content-addressed cache, resume, retry, verify.
 * See fetch.h for the contract.  Each item is a small state machine:
 * prepare (cache hit / offline / open + hash the .part prefix) -> attempts
 * (pending with a backoff deadline, active in the multi handle) -> finish
 * (size + sha256, rename) or a fatal error.  This file runs the transfers
 * (attempts, retries with backoff, stalls, deadlines, rate windows,
 * progress); the .part side of each item (resume, Range, verify, rename) is
 * in fetch_part.c, behind fetch_int.h. */
#include "fetch_int.h"

#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/proc.h"
#include "digest.h"
#include "core/file.h"
#include "http.h"

static long max_connections(void);

/* Record a fatal error for an item (vsnprintf: messages may be cut, never overflow). */
int dl_fail(dl *d, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return d->fatal = code;
}

/* Another attempt after a backoff, or give up after CE_FETCH_ATTEMPTS
 * attempts in a row without progress; the retry is shown without -v. */
static void dl_retry(ce_ctx *ctx, dl *d, const char *why)
{
    d->failures = d->have > d->attempt_have ? 1 : d->failures + 1;
    if (d->failures >= CE_FETCH_ATTEMPTS) {
        dl_fail(d, CE_ERR_DOWNLOAD, "giving up after %d attempts: %s", d->failures, why);
        return;
    }
    ce_emit(ctx, CE_EV_WARN, d->it->label, "%s, retrying (%d/%d)", why, d->failures + 1, CE_FETCH_ATTEMPTS);
    d->next_try = ce_mono_s() + ce_http_backoff_s(d->failures);
    d->state = DL_PENDING;
}

static const char *url_host(const char *url, char *out, size_t n)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    size_t k = strcspn(p, "/?#");
    snprintf(out, n, "%.*s", (int)k, p);
    return out;
}

/* A transfer ended: finish, schedule a retry, or record a fatal error. */
static void dl_ended(ce_ctx *ctx, dl *d, CURLcode rc)
{
    if (d->fatal || dl_flush(d) != CE_OK)
        return;
    if (rc == CURLE_OK) {
        if (!d->body_started && d->start > 0 && !d->local_file) {
            /* an empty 206 or 200: treat like a Range the server ignored */
            if (dl_begin_body(d) != CE_OK)
                return;
        }
        dl_finish(ctx, d, true);
        return;
    }
    long status = 0;
    curl_easy_getinfo(d->easy, CURLINFO_RESPONSE_CODE, &status);
    bool retry;
    char why[4096];
    ce_http_attempt_error(d->easy, rc, d->it->url, d->errbuf, why, sizeof why, &retry);
    if (retry && (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY)) {
        /* the host, not the file: every archive from it says the same,
         * word for word, so the one-line-per-host message is said once */
        char host[256];
        snprintf(why, sizeof why, "cannot reach %s (%s)", url_host(d->it->url, host, sizeof host),
                 curl_easy_strerror(rc));
    }
    if (rc == CURLE_HTTP_RETURNED_ERROR && status == 416 && d->start > 0) {
        /* Nothing after our offset: the .part may be whole (a server that
         * announced too many bytes) or longer than the file: check, else restart. */
        if (dl_finish(ctx, d, false) == CE_OK || d->fatal || dl_restart(d) != CE_OK)
            return;
        retry = true;
    }
    if (!retry) {
        dl_fail(d, CE_ERR_DOWNLOAD, "%s", why);
        return;
    }
    dl_retry(ctx, d, why);
}

/* The current connection was dropped (stall): retry, visibly. */
static void dl_abort(ce_ctx *ctx, dl *d, CURLM *m, const char *why)
{
    curl_multi_remove_handle(m, d->easy);
    d->state = DL_PENDING;
    if (dl_flush(d) == CE_OK)
        dl_retry(ctx, d, why);
}

/* Every active transfer: a stall is retried; a deadline passed or a window
 * below the minimum rate fails the download. */
static int check_limits(ce_ctx *ctx, dl **ds, size_t n, CURLM *m, double now)
{
    for (size_t i = 0; i < n; i++) {
        dl *d = ds[i];
        if (d->state != DL_ACTIVE) continue;
        const limits *l = d->lim;
        char host[256], why[512];
        url_host(d->it->url, host, sizeof host);
        if (now - d->last_data >= l->stall_s) {
            snprintf(why, sizeof why, "no data for %.0f s from %s", l->stall_s, host);
            dl_abort(ctx, d, m, why);
        } else if (now >= d->deadline) {
            dl_fail(d, CE_ERR_DOWNLOAD, "the download of %s did not finish in time (%.0f s for its size: "
                    "%lld bytes so far); the server is too slow: try again later or another mirror "
                    "(CUDAENV_MIRROR)", d->it->url, d->deadline - d->t0, d->have);
        } else if (now - d->win_start >= l->window_s) {
            double rate = (double)(d->have - d->win_have) / (now - d->win_start);
            if (rate < l->min_rate)
                dl_fail(d, CE_ERR_DOWNLOAD, "%s is too slow: %lld bytes in the last %.0f s (%.0f bytes/s, at "
                        "least %.0f needed); the download stopped: try again later or another mirror "
                        "(CUDAENV_MIRROR)", host, d->have - d->win_have, now - d->win_start, rate, l->min_rate);
            d->win_start = now;
            d->win_have = d->have;
        }
        if (d->fatal)
            return ce_fail(d->fatal, "%s", d->msg);
    }
    return CE_OK;
}

static void dl_release(dl *d)
{
    if (d->fd >= 0) {
        if (!d->fatal && d->blen)
            dl_flush(d); /* keep every good byte for the next run to resume */
        if (d->on_disk == 0)
            unlink(d->part); /* e.g. a 404: nothing worth resuming */
    }
    dl_unregister(d);   /* Ctrl-C from here on: this .part is the next run's */
    dl_close(d);
    if (d->easy)
        curl_easy_cleanup(d->easy);
    ce_sha256_free(d->h);
    free(d->buf);
    pthread_mutex_destroy(&d->mu);
}

static void report_progress(ce_ctx *ctx, dl **ds, size_t n, double now)
{
    for (size_t i = 0; i < n; i++) {
        dl *d = ds[i];
        if (d->state == DL_DONE)
            continue;
        double dt = now - d->t0;
        double rate = dt > 0 ? (double)(d->have - d->run_start) / dt : 0;
        ce_progress(ctx, d->it->label, d->have, d->it->size, rate);
    }
}

/* ---- the transfers: one thread, one multi handle ----
 *
 * Every item runs on the calling thread (ce_fetch_thread's, beside the
 * unpackers that follow the downloads) through one curl multi handle, as
 * pacman and curl drive parallel transfers: up to CUDAENV_MAX_CONNECTIONS
 * at once, handed out in the caller's order (largest first); the bytes are
 * written and hashed as they arrive (one pass).  Issue 25 gave the
 * connections a thread each (one thread receiving, writing and hashing
 * everything was the install's pace then); now that unpacking follows the
 * download, the 16-core rows (issue 40, PERFORMANCE.md) show no gain from
 * them at loopback or 400 MB/s and half the install's memory without them.
 * The first fatal error ends the run; the .part files stay for the next. */

typedef struct run {
    dl *ds;
    size_t n, next;         /* the next item to hand out */
    long max_conn;
    ce_ctx *ctx;            /* the caller's, for the events */
    char said[8][512];      /* the last warnings passed on */
    unsigned nsaid;
} run;

/* Transfers failing alike (one unreachable host, many files) say the same
 * warning for several items, interleaved (an item's retry comes before the
 * next item's first try): one already said recently is not said again, so
 * the user sees one line per attempt. */
static void once_event(void *ud, const ce_event *ev)
{
    run *r = ud;
    if (ev->kind == CE_EV_WARN && ev->text) {
        for (unsigned i = 0; i < 8; i++)
            if (strncmp(r->said[i], ev->text, sizeof r->said[i] - 1) == 0)
                return;
        snprintf(r->said[r->nsaid++ % 8], sizeof r->said[0], "%s", ev->text);
    }
    r->ctx->event(r->ctx->event_ud, ev);
}

/* The next item waiting to start, or NULL. */
static dl *next_item(run *r)
{
    while (r->next < r->n && r->ds[r->next].state == DL_DONE)
        r->next++;
    return r->next < r->n ? &r->ds[r->next++] : NULL;
}

/* The transfers in flight (claimed, not yet verified). */
typedef struct held {
    dl *d[64];
    size_t k;
} held;

static int run_transfers(ce_ctx *ctx, run *r, CURLM *m, held *h)
{
    dl **mine = h->d;
    double last_report = 0;
    for (;;) {
        dl *c;
        while (h->k < (size_t)r->max_conn && h->k < sizeof h->d / sizeof *h->d && (c = next_item(r)))
            mine[h->k++] = c;
        if (!h->k)
            return CE_OK;
        double now = ce_mono_s();
        double wait = 0.1;
        for (size_t i = 0; i < h->k; i++) {
            dl *d = mine[i];
            if (d->state == DL_PENDING && d->next_try <= now && dl_start(d, m) != CE_OK)
                return ce_fail(d->fatal, "%s", d->msg);
            if (d->state == DL_PENDING && d->next_try - now < wait)
                wait = d->next_try - now;
        }
        int running;
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            dl *d = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&d);
            CURLcode rc = msg->data.result;
            curl_multi_remove_handle(m, msg->easy_handle);
            d->state = DL_PENDING;
            dl_ended(ctx, d, rc);
            if (d->fatal)
                return ce_fail(d->fatal, "%s", d->msg);
        }
        if (now - last_report >= 0.1) {
            report_progress(ctx, mine, h->k, now);
            last_report = now;
            int rc = check_limits(ctx, mine, h->k, m, now);
            if (rc != CE_OK)
                return rc;
        }
        for (size_t i = 0; i < h->k;) {   /* verified: a connection for the next item */
            if (mine[i]->state == DL_DONE)
                mine[i] = mine[--h->k];
            else
                i++;
        }
        if (wait > 0 && h->k)
            curl_multi_poll(m, NULL, 0, (int)(wait * 1000) + 1, NULL);
    }
}

static int run_all(ce_ctx *ctx, dl *ds, size_t n)
{
    run r = { .ds = ds, .n = n, .ctx = ctx, .max_conn = max_connections() };
    ce_ctx wctx = *ctx;    /* events through once_event */
    if (ctx->event) {
        wctx.event = once_event;
        wctx.event_ud = &r;
    }
    CURLM *m = curl_multi_init();
    if (!m)
        return ce_fail(CE_ERR_NOMEM, "cannot start libcurl");
    curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, r.max_conn);
    held h = { .k = 0 };
    int rc = run_transfers(&wctx, &r, m, &h);
    for (size_t i = 0; i < h.k; i++) {   /* what is in flight leaves the handle */
        dl *d = h.d[i];
        if (d->state == DL_ACTIVE && d->easy)
            curl_multi_remove_handle(m, d->easy);
        if (d->state == DL_ACTIVE)
            d->state = DL_PENDING;
    }
    curl_multi_cleanup(m);
    return rc;
}

int ce_cache_path(ce_ctx *ctx, const char *sha256, char *out, size_t outsz)
{
    if (!ce_sha256_valid(sha256))
        return ce_fail(CE_ERR_USAGE, "bad sha256 \"%s\": expected 64 lowercase hex digits", sha256);
    if ((size_t)snprintf(out, outsz, "%s/cache/%s", ctx->root, sha256) >= outsz)
        return ce_fail(CE_ERR_OTHER, "CUDAENV_ROOT is too long: %s", ctx->root);
    return CE_OK;
}

/* At most this many transfers at once (CUDAENV_MAX_CONNECTIONS, default
 * 8): a component install names ~15-40 archives; libcurl queues the rest. */
static long max_connections(void)
{
    const char *e = ce_settings_now()->max_connections;
    long n = e && *e ? atol(e) : 8;
    return n < 1 ? 1 : n > 64 ? 64 : n;
}

int ce_fetch_all(ce_ctx *ctx, ce_fetch_item *items, size_t n)
{
    if (n == 0)
        return CE_OK;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/cache", ctx->root);
    if (!ctx->offline) {
        int rc = ce_mkdir_p(dir, 0755);
        if (rc != CE_OK)
            return rc;
    }
    dl *ds = calloc(n, sizeof *ds);
    if (!ds)
        return ce_fail(CE_ERR_NOMEM, "out of memory");
    int rc = CE_OK;
    size_t pending = 0;
    double t0 = ce_mono_s();
    limits lim = {
        .stall_s = (double)ce_setting_long(ctx->set.stall_timeout, 30, 1),
        .window_s = (double)ce_setting_long(ctx->set.rate_window, 60, 1),
        .min_rate = (double)ce_setting_long(ctx->set.min_rate, 4096, 0),
        .deadline_base = (double)ce_setting_long(ctx->set.deadline_base, 900, 1),
        .deadline_rate = 256.0 * 1024,
        .ceiling = ce_setting_long(ctx->set.fetch_ceiling, 16L << 30, 1),
    };
    for (size_t i = 0; i < n; i++) {
        ds[i].it = &items[i];
        ds[i].fd = -1;
        ds[i].t0 = t0;
        ds[i].lim = &lim;
        dl_init(&ds[i]);
    }
    for (size_t i = 0; i < n && rc == CE_OK; i++) {
        size_t first = 0;
        while (first < i && strcmp(items[first].sha256, items[i].sha256) != 0)
            first++;
        if (first < i) { /* the same file twice: one download (a second lock would fail) */
            ds[i].state = DL_DONE;
            rc = ce_cache_path(ctx, items[i].sha256, items[i].path, sizeof items[i].path);
            continue;
        }
        rc = dl_prepare(ctx, &ds[i]);
        pending += rc == CE_OK && ds[i].state != DL_DONE;
    }
    if (rc == CE_OK && pending) {
        const ce_fetch_item **go = ctx->unnamed ? NULL : calloc(pending, sizeof *go);
        size_t k = 0;
        for (size_t i = 0; go && i < n; i++)
            if (ds[i].state != DL_DONE) go[k++] = &items[i];
        ce_cache_names_note(ctx, go, k);   /* what they are called, for cache list */
        free(go);
        ce_http_global_init();
        rc = run_all(ctx, ds, n);
    }
    for (size_t i = 0; i < n; i++)
        dl_release(&ds[i]);
    free(ds);
    return rc;
}

void *ce_fetch_thread(void *arg)
{
    ce_fetch_job *j = arg;
    j->rc = ce_fetch_all(j->ctx, j->items, j->n);
    if (j->rc != CE_OK) ce_status_take(&j->st);
    __atomic_store_n(j->done, 1, __ATOMIC_RELEASE);
    ce_fetch_bell_ring(j->bell);
    return NULL;
}
