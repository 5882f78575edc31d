/* Downloads: libcurl multi, content-addressed cache, resume, retry, verify.
 * See fetch.h for the contract.  Each item is a small state machine:
 * prepare (cache hit / offline / open + hash the .part prefix) -> attempts
 * (pending with a backoff deadline, active in the multi handle) -> finish
 * (size + sha256, rename) or a fatal error. */
#include "fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "digest.h"
#include "core/file.h"
#include "http.h"

#define WBUF (1u * 1024 * 1024)  /* bytes gathered before one write + hash */

typedef enum { DL_PENDING, DL_ACTIVE, DL_DONE } dl_state;

/* How long a download may take (fetch.h: bounded downloads). */
typedef struct limits {
    double stall_s;         /* no byte for this long: drop the connection, retry */
    double window_s;        /* the average rate is checked over windows this long */
    double min_rate;        /* bytes/s a window must average, else the download fails */
    double deadline_base;   /* each artifact gets this many seconds ... */
    double deadline_rate;   /* ... plus its size (or the ceiling) at this many bytes/s */
    long long ceiling;      /* bytes accepted when the manifest gives no size */
} limits;

typedef struct dl {
    ce_fetch_item *it;
    dl_state state;
    char part[4200];
    int fd;
    ce_sha256 *h;          /* digest of bytes [0, on_disk) */
    unsigned char *buf;    /* bytes [on_disk, have) not yet written */
    size_t blen;
    long long on_disk, have;
    long long start;       /* offset asked for by the current attempt */
    long long run_start;   /* have when this run began (for the rate) */
    long long attempt_have;
    int failures;          /* failed attempts in a row without progress */
    double next_try, t0;
    bool body_started, local_file;
    const limits *lim;
    double last_data;      /* when the last body byte arrived */
    double win_start;      /* the current rate window began ... */
    long long win_have;    /* ... with this many bytes */
    double deadline;       /* 0 until the first attempt starts */
    long long cr_start, cr_total; /* Content-Range of the last response */
    CURL *easy;
    char errbuf[CURL_ERROR_SIZE];
    int fatal;             /* ce_err recorded in msg, 0 if none */
    char msg[4096];
} dl;

/* Record a fatal error for an item (vsnprintf: messages may be cut, never overflow). */
static int dl_fail(dl *d, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int dl_fail(dl *d, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return d->fatal = code;
}

/* ---- one item: its .part file, hash and buffer -------------------------- */

/* Before the .part loses bytes (truncated, deleted): a reader following it
 * must not take what it read for what gets verified (fetch.h). */
static void dl_invalidate(dl *d)
{
    if (d->it->watch) __atomic_add_fetch(&d->it->watch->gen, 1, __ATOMIC_SEQ_CST);
}

static void dl_verified(dl *d)
{
    if (d->it->watch) __atomic_store_n(&d->it->watch->verified, 1, __ATOMIC_RELEASE);
}

static int dl_flush(dl *d)
{
    size_t off = 0;
    while (off < d->blen) {
        ssize_t w = pwrite(d->fd, d->buf + off, d->blen - off, d->on_disk + (long long)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            int err = errno;
            if (err == ENOSPC || err == EDQUOT) {
                /* an endless or oversized stream must not leave the disk full */
                dl_invalidate(d);
                unlink(d->part);
                d->blen = 0;
                return dl_fail(d, CE_ERR_SPACE, "cannot write %s: %s (%s); the partial download was deleted "
                               "so the disk is not left full: free some space under CUDAENV_ROOT and rerun",
                               d->part, strerror(err), err == ENOSPC ? "ENOSPC" : "EDQUOT");
            }
            return dl_fail(d, CE_ERR_IO, "cannot write %s: %s", d->part, strerror(err));
        }
        off += (size_t)w;
    }
    ce_sha256_update(d->h, d->buf, d->blen);
    d->on_disk += (long long)d->blen;
    d->blen = 0;
    return CE_OK;
}

/* Drop everything received so far (the server started over from byte 0). */
static int dl_restart(dl *d)
{
    d->blen = 0;
    d->on_disk = d->have = 0;
    ce_sha256_reset(d->h);
    dl_invalidate(d);
    if (ftruncate(d->fd, 0) != 0)
        return dl_fail(d, CE_ERR_IO, "cannot truncate %s: %s", d->part, strerror(errno));
    return CE_OK;
}

static int fail_integrity(dl *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_integrity(dl *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    dl_invalidate(d);
    unlink(d->part); /* a wrong file is never resumed */
    d->blen = 0;
    return d->fatal = CE_ERR_INTEGRITY;
}

/* First body byte of an attempt: the status and headers are known now. */
static int dl_begin_body(dl *d)
{
    long status = 0;
    curl_easy_getinfo(d->easy, CURLINFO_RESPONSE_CODE, &status);
    long long want = d->it->size;
    if (status == 206) {
        if (d->cr_start != d->start)
            return dl_fail(d, CE_ERR_DOWNLOAD, "%s answered bytes from %lld when asked for %lld- "
                           "(a broken mirror or proxy?)", d->it->url, d->cr_start, d->start);
        if (want >= 0 && d->cr_total >= 0 && d->cr_total != want)
            return fail_integrity(d, "size mismatch for %s: the server has %lld bytes, the manifest "
                                  "says %lld; the download was deleted", d->it->url, d->cr_total, want);
        return CE_OK;
    }
    if (d->start > 0 && dl_restart(d) != CE_OK) /* Range ignored: a 200 is the whole file */
        return d->fatal;
    curl_off_t cl = -1;
    curl_easy_getinfo(d->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
    if (want >= 0 && cl >= 0 && cl != want)
        return fail_integrity(d, "size mismatch for %s: the server announces %lld bytes, the "
                              "manifest says %lld; the download was deleted", d->it->url, (long long)cl, want);
    return CE_OK;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    dl *d = ud;
    size_t n = size * nmemb;
    if (!d->body_started) {
        d->body_started = true;
        if (dl_begin_body(d) != CE_OK)
            return 0;
    }
    if (d->it->size >= 0 && d->have + (long long)n > d->it->size) {
        fail_integrity(d, "size mismatch for %s: the server sent more than the %lld bytes the "
                       "manifest promises; the download was deleted", d->it->url, d->it->size);
        return 0;
    }
    if (d->it->size < 0 && d->have + (long long)n > d->lim->ceiling) {
        dl_fail(d, CE_ERR_DOWNLOAD, "%s sent more than %lld bytes and the manifest gives no size for it: "
                "an endless stream? the download was deleted; add the size to the manifest entry if the "
                "file really is that large", d->it->url, d->lim->ceiling);
        dl_invalidate(d);
        unlink(d->part);
        d->blen = 0;
        return 0;
    }
    d->last_data = ce_mono_s();
    while (n) {
        size_t k = WBUF - d->blen < n ? WBUF - d->blen : n;
        memcpy(d->buf + d->blen, p, k);
        d->blen += k;
        d->have += (long long)k;
        p += k;
        n -= k;
        if (d->blen == WBUF && dl_flush(d) != CE_OK)
            return 0;
    }
    return size * nmemb;
}

/* Content-Range of the final response (redirects start a new header block). */
static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    dl *d = ud;
    size_t n = size * nmemb;
    if (n >= 5 && strncmp(p, "HTTP/", 5) == 0) {
        d->cr_start = -1;
        d->cr_total = -1;
    } else if (n > 14 && strncasecmp(p, "content-range:", 14) == 0) {
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int)(n - 14), p + 14);
        long long s, e;
        char total[32];
        if (sscanf(line, " bytes %lld-%lld/%31s", &s, &e, total) == 3) {
            d->cr_start = s;
            d->cr_total = total[0] == '*' ? -1 : atoll(total);
        }
    }
    return n;
}

/* The .part is complete: check size and sha256, then give it its name.
 * strict=false (a .part we merely suspect is complete): a mismatch returns
 * CE_ERR_INTEGRITY without recording it, and the caller starts over. */
static int dl_finish(ce_ctx *ctx, dl *d, bool strict)
{
    if (dl_flush(d) != CE_OK)
        return d->fatal;
    ce_fetch_item *it = d->it;
    if (it->size >= 0 && d->have != it->size)
        return !strict ? CE_ERR_INTEGRITY :
            fail_integrity(d, "size mismatch for %s: expected %lld bytes, got %lld; the download "
                           "was deleted", it->url, it->size, d->have);
    char actual[CE_SHA256_HEX];
    ce_sha256_final(d->h, actual);
    if (strcmp(actual, it->sha256) != 0)
        return !strict ? CE_ERR_INTEGRITY :
            fail_integrity(d, "sha256 mismatch for %s: expected %s, got %s; the download was "
                           "deleted (a corrupt mirror, or a manifest out of date)", it->url,
                           it->sha256, actual);
    dl_verified(d);   /* a reader need not wait for the sync and rename (fetch.h) */
    if (fdatasync(d->fd) != 0 || rename(d->part, it->path) != 0)
        return dl_fail(d, CE_ERR_IO, "cannot store %s: %s", it->path, strerror(errno));
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/cache", ctx->root);
    ce_fsync_dir(dir);
    close(d->fd);
    d->fd = -1;
    d->state = DL_DONE;
    ce_progress(ctx, it->label, d->have, d->have, 0);
    ce_emit(ctx, CE_EV_DONE, it->label, "downloaded %s (%lld bytes, sha256 ok)", it->label, d->have);
    return CE_OK;
}

/* Cache hit, offline miss, or open the .part and hash what it already holds. */
static int dl_prepare(ce_ctx *ctx, dl *d)
{
    ce_fetch_item *it = d->it;
    const char *label = it->label ? it->label : it->url;
    it->label = label;
    if (!ce_sha256_valid(it->sha256))
        return ce_fail(ctx, CE_ERR_USAGE, "bad sha256 for %s: expected 64 lowercase hex digits", it->url);
    char path[sizeof it->path];
    if (ce_cache_path(ctx, it->sha256, path, sizeof path) != CE_OK)
        return ce_errcode();
    if (strcmp(it->path, path) != 0) /* a caller may be reading a prefilled path right now */
        memcpy(it->path, path, sizeof path);
    snprintf(d->part, sizeof d->part, "%s.part", it->path);
    struct stat st;
    if (lstat(it->path, &st) == 0) {
        if (S_ISREG(st.st_mode) && it->size >= 0 && st.st_size == it->size && it->reader_hashes_cache) {
            /* the caller hashes it in the pass that reads it (fetch.h) */
            d->state = DL_DONE;
            ce_emit(ctx, CE_EV_DONE, label, "%s: already in the cache (its sha256 is checked as it is read)", label);
            return CE_OK;
        }
        if (S_ISREG(st.st_mode) && (it->size < 0 || st.st_size == it->size)) {
            /* the right size is not the right file: nothing from the cache
             * is run or unpacked before it is hashed again */
            char got[CE_SHA256_HEX];
            int hrc = ce_sha256_file(ctx, it->path, got);
            if (hrc != CE_OK)
                return hrc;
            if (strcmp(got, it->sha256) != 0) {
                dl_invalidate(d);
                unlink(it->path);
                return ce_fail(ctx, CE_ERR_INTEGRITY, "%s in the cache is not the file it is named after "
                               "(its sha256 is %s): it was deleted and nothing from it was used; rerun to "
                               "download %s again", it->path, got, label);
            }
            d->state = DL_DONE;
            dl_verified(d);
            ce_emit(ctx, CE_EV_DONE, label, "%s: already in the cache (sha256 ok)", label);
            return CE_OK;
        }
        dl_invalidate(d);
        unlink(it->path); /* wrong size: not what the manifest names */
    }
    if (ctx->offline)
        return ce_fail(ctx, CE_ERR_NOTFOUND, "%s (sha256 %s) is not in the cache and --offline forbids "
                       "downloading it from %s; run without --offline, or copy the file to %s",
                       label, it->sha256, it->url, it->path);
    int rc = ce_http_check_url(d->msg, sizeof d->msg, it->url, it->allow_http);
    if (rc != CE_OK)
        return ce_fail(ctx, rc, "%s", d->msg);
    d->local_file = ce_http_has_scheme(it->url, "file://");

    d->fd = open(d->part, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (d->fd < 0)
        return ce_fail(ctx, CE_ERR_IO, "cannot open %s: %s", d->part, strerror(errno));
    if (flock(d->fd, LOCK_EX | LOCK_NB) != 0)
        return ce_fail(ctx, CE_ERR_LOCKED, "another cudaenv is downloading %s (%s is locked); wait for it",
                       label, d->part);
    d->h = ce_sha256_new();
    d->buf = malloc(WBUF);
    if (!d->h || !d->buf)
        return ce_fail(ctx, CE_ERR_NOMEM, "out of memory for the download of %s", label);
    if (fstat(d->fd, &st) != 0)
        return ce_fail(ctx, CE_ERR_IO, "cannot stat %s: %s", d->part, strerror(errno));
    d->have = st.st_size;
    if ((it->size >= 0 && d->have > it->size) || d->local_file)
        d->have = 0;
    if (d->have < st.st_size)
        dl_invalidate(d);
    if (ftruncate(d->fd, d->have) != 0)
        return ce_fail(ctx, CE_ERR_IO, "cannot truncate %s: %s", d->part, strerror(errno));
    if (d->have > 0) {
        ce_emit(ctx, CE_EV_INFO, label, "resuming %s at byte %lld", label, d->have);
        if ((rc = ce_sha256_fd(ctx, d->h, d->fd, d->have, d->part)) != CE_OK)
            return rc;
    }
    d->on_disk = d->run_start = d->have;
    if (it->size >= 0 && d->have == it->size) {
        /* complete from an earlier run; a wrong one is downloaded afresh */
        if ((rc = dl_finish(ctx, d, false)) == CE_OK)
            return CE_OK;
        if (rc != CE_ERR_INTEGRITY || dl_restart(d) != CE_OK)
            return ce_fail(ctx, d->fatal, "%s", d->msg);
        ce_emit(ctx, CE_EV_INFO, label, "%s: the earlier partial download was wrong; starting over", label);
        d->run_start = 0;
    }
    d->state = DL_PENDING;
    return CE_OK;
}

static int dl_start(dl *d, CURLM *m)
{
    if (!d->easy && !(d->easy = curl_easy_init()))
        return dl_fail(d, CE_ERR_NOMEM, "cannot start a transfer for %s", d->it->url);
    curl_easy_reset(d->easy);
    ce_http_setup(d->easy, d->it->url, d->it->allow_http, d->errbuf);
    curl_easy_setopt(d->easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(d->easy, CURLOPT_WRITEDATA, d);
    curl_easy_setopt(d->easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(d->easy, CURLOPT_HEADERDATA, d);
    curl_easy_setopt(d->easy, CURLOPT_PRIVATE, d);
    char range[48];
    d->start = d->have;
    if (d->start > 0) {
        snprintf(range, sizeof range, "%lld-", d->start);
        curl_easy_setopt(d->easy, CURLOPT_RANGE, range); /* libcurl copies it */
    }
    d->body_started = false;
    d->cr_start = d->cr_total = -1;
    d->attempt_have = d->have;
    /* our own stall check fires first; libcurl's stays as a backstop */
    curl_easy_setopt(d->easy, CURLOPT_LOW_SPEED_TIME, (long)(d->lim->stall_s * 2) + 1);
    double now = ce_mono_s();
    d->last_data = d->win_start = now;
    d->win_have = d->have;
    if (d->deadline == 0) {
        double bytes = d->it->size >= 0 ? (double)d->it->size : (double)d->lim->ceiling;
        d->deadline = now + d->lim->deadline_base + bytes / d->lim->deadline_rate;
    }
    if (curl_multi_add_handle(m, d->easy) != CURLM_OK)
        return dl_fail(d, CE_ERR_OTHER, "cannot start a transfer for %s", d->it->url);
    d->state = DL_ACTIVE;
    return CE_OK;
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

static const char *url_host(const char *url, char *out, size_t n)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    size_t k = strcspn(p, "/?#");
    snprintf(out, n, "%.*s", (int)k, p);
    return out;
}

/* Every active transfer: a stall is retried; a deadline passed or a window
 * below the minimum rate fails the download. */
static int check_limits(ce_ctx *ctx, dl *ds, size_t n, CURLM *m, double now)
{
    for (size_t i = 0; i < n; i++) {
        dl *d = &ds[i];
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
            return ce_fail(ctx, d->fatal, "%s", d->msg);
    }
    return CE_OK;
}

static void dl_release(dl *d, CURLM *m)
{
    if (d->state == DL_ACTIVE && d->easy)
        curl_multi_remove_handle(m, d->easy);
    if (d->fd >= 0) {
        if (!d->fatal && d->blen)
            dl_flush(d); /* keep every good byte for the next run to resume */
        if (d->on_disk == 0)
            unlink(d->part); /* e.g. a 404: nothing worth resuming */
        close(d->fd);
    }
    if (d->easy)
        curl_easy_cleanup(d->easy);
    ce_sha256_free(d->h);
    free(d->buf);
}

static void report_progress(ce_ctx *ctx, dl *ds, size_t n, double now)
{
    for (size_t i = 0; i < n; i++) {
        dl *d = &ds[i];
        if (d->state == DL_DONE)
            continue;
        double dt = now - d->t0;
        double rate = dt > 0 ? (double)(d->have - d->run_start) / dt : 0;
        ce_progress(ctx, d->it->label, d->have, d->it->size, rate);
    }
}

static int run_transfers(ce_ctx *ctx, dl *ds, size_t n, CURLM *m)
{
    double last_report = 0;
    for (;;) {
        double now = ce_mono_s();
        size_t open = 0;
        double wait = 0.1;
        for (size_t i = 0; i < n; i++) {
            dl *d = &ds[i];
            if (d->state == DL_PENDING && d->next_try <= now && dl_start(d, m) != CE_OK)
                return ce_fail(ctx, d->fatal, "%s", d->msg);
            if (d->state == DL_PENDING && d->next_try - now < wait)
                wait = d->next_try - now;
            open += d->state != DL_DONE;
        }
        if (!open)
            return CE_OK;
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
                return ce_fail(ctx, d->fatal, "%s", d->msg);
        }
        if (now - last_report >= 0.1) {
            report_progress(ctx, ds, n, now);
            last_report = now;
            int rc = check_limits(ctx, ds, n, m, now);
            if (rc != CE_OK)
                return rc;
        }
        if (wait > 0)
            curl_multi_poll(m, NULL, 0, (int)(wait * 1000) + 1, NULL);
    }
}

int ce_cache_path(ce_ctx *ctx, const char *sha256, char *out, size_t outsz)
{
    if (!ce_sha256_valid(sha256))
        return ce_fail(ctx, CE_ERR_USAGE, "bad sha256 \"%s\": expected 64 lowercase hex digits", sha256);
    if ((size_t)snprintf(out, outsz, "%s/cache/%s", ctx->root, sha256) >= outsz)
        return ce_fail(ctx, CE_ERR_OTHER, "CUDAENV_ROOT is too long: %s", ctx->root);
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
        int rc = ce_mkdir_p(ctx, dir, 0755);
        if (rc != CE_OK)
            return rc;
    }
    dl *ds = calloc(n, sizeof *ds);
    if (!ds)
        return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
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
        ce_http_global_init();
        CURLM *m = curl_multi_init();
        if (!m) {
            rc = ce_fail(ctx, CE_ERR_NOMEM, "cannot start libcurl");
        } else {
            curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, max_connections());
            rc = run_transfers(ctx, ds, n, m);
            for (size_t i = 0; i < n; i++)
                dl_release(&ds[i], m);
            curl_multi_cleanup(m);
        }
    } else {
        for (size_t i = 0; i < n; i++)
            dl_release(&ds[i], NULL);
    }
    free(ds);
    return rc;
}
