/* One download's file (fetch_int.h): the .part written and hashed as the
 * bytes arrive, resumed from what an earlier attempt or run left (its prefix
 * hashed first; an attempt asks for "Range: bytes=N-"), Content-Range and
 * Content-Length checked against the manifest's size, a server ignoring
 * Range started over from byte 0, and the complete file verified (size,
 * sha256) before it is renamed to its cache name; a cache hit is checked
 * again before it is used.  Ctrl-C writes what is still in memory
 * (ce_fetch_stop_all).  The transfer loop is in fetch.c. */
#include "fetch_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bytes.h"
#include "core/clock.h"
#include "core/fault.h"
#include "core/file.h"
#include "http.h"

/* Before the .part loses bytes (truncated, deleted): a reader following it
 * must not take what it read for what gets verified (fetch.h). */
static void dl_invalidate(dl *d)
{
    if (!d->it->watch) return;
    __atomic_add_fetch(&d->it->watch->gen, 1, __ATOMIC_SEQ_CST);
    ce_fetch_bell_ring(d->it->watch->bell);
}

static void dl_register(dl *d);

static void dl_verified(dl *d)
{
    if (!d->it->watch) return;
    __atomic_store_n(&d->it->watch->verified, 1, __ATOMIC_RELEASE);
    ce_fetch_bell_ring(d->it->watch->bell);
}

/* Bytes written, the .part opened or renamed: its followers look again (bell.h). */
static void dl_ring(dl *d)
{
    if (d->it->watch) ce_fetch_bell_ring(d->it->watch->bell);
}

/* Writeback of the .part starts as it is written, WRITEBACK bytes at a time,
 * so the fdatasync at its end (dl_finish) waits for the last few MiB instead
 * of the whole file: with memory to spare the kernel starts writing dirty
 * pages only ~30 s later (vm.dirty_expire_centisecs), and an install through
 * a 400 MB/s link spent ~0.9 s after the last byte syncing the archives that
 * had finished together (issue 25).  Best effort: where sync_file_range is
 * refused, the fdatasync does it all. */
#define WRITEBACK (8ll << 20)

static void writeback(dl *d)
{
    if (d->on_disk < d->kicked) d->kicked = 0;   /* the .part started over */
    if (d->on_disk - d->kicked < WRITEBACK) return;
    (void)sync_file_range(d->fd, d->kicked, d->on_disk - d->kicked, SYNC_FILE_RANGE_WRITE);
    d->kicked = d->on_disk;
}

static int flush(dl *d)
{
    int err = ce_pwrite_all(d->fd, d->buf, d->blen, d->on_disk);
    if (err == ENOSPC || err == EDQUOT) {
        /* an endless or oversized stream must not leave the disk full */
        dl_invalidate(d);
        unlink(d->part);
        d->blen = 0;
        return dl_fail(d, CE_ERR_SPACE, "cannot write %s: %s (%s); the partial download was deleted "
                       "so the disk is not left full: free some space under CUDAENV_ROOT and rerun",
                       d->part, strerror(err), err == ENOSPC ? "ENOSPC" : "EDQUOT");
    }
    if (err) return dl_fail(d, CE_ERR_IO, "cannot write %s: %s", d->part, strerror(err));
    ce_sha256_update(d->h, d->buf, d->blen);
    d->on_disk += (long long)d->blen;
    d->blen = 0;
    writeback(d);
    dl_ring(d);
    return CE_OK;
}

int dl_flush(dl *d)
{
    pthread_mutex_lock(&d->mu);
    int rc = flush(d);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

/* Drop everything received so far (the server started over from byte 0). */
int dl_restart(dl *d)
{
    pthread_mutex_lock(&d->mu);
    d->blen = 0;
    d->on_disk = d->have = 0;
    ce_sha256_reset(d->h);
    dl_invalidate(d);
    int rc = CE_OK;
    if (ftruncate(d->fd, 0) != 0)
        rc = dl_fail(d, CE_ERR_IO, "cannot truncate %s: %s", d->part, strerror(errno));
    pthread_mutex_unlock(&d->mu);
    return rc;
}

static int fail_integrity(dl *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_integrity(dl *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&d->mu);
    dl_invalidate(d);
    unlink(d->part); /* a wrong file is never resumed */
    d->blen = 0;
    d->fatal = CE_ERR_INTEGRITY;
    pthread_mutex_unlock(&d->mu);
    return CE_ERR_INTEGRITY;
}

/* First body byte of an attempt: the status and headers are known now. */
int dl_begin_body(dl *d)
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

static size_t body(dl *d, char *p, size_t n)
{
    size_t took = n;
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
    ce_fault_point("during-download", d->part);   /* bytes arrived, the .part is open */
    while (n) {
        size_t k = WBUF - d->blen < n ? WBUF - d->blen : n;
        memcpy(d->buf + d->blen, p, k);
        d->blen += k;
        d->have += (long long)k;
        p += k;
        n -= k;
        if (d->blen == WBUF && flush(d) != CE_OK)
            return 0;
    }
    return took;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    dl *d = ud;
    pthread_mutex_lock(&d->mu);
    size_t n = body(d, p, size * nmemb);
    pthread_mutex_unlock(&d->mu);
    return n;
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
static int finish(ce_ctx *ctx, dl *d, bool strict)
{
    if (flush(d) != CE_OK)
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
    dl_ring(d);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/cache", ctx->root);
    ce_fsync_dir(dir);
    close(d->fd);
    d->fd = -1;
    d->state = DL_DONE;
    ce_progress(ctx, it->label, d->have, d->have, 0);
    char sz[32];
    ce_bytes_text(sz, sizeof sz, (double)d->have);
    ce_emit(ctx, CE_EV_DONE, it->label, "downloaded %s (%s, sha256 ok)", it->label, sz);
    return CE_OK;
}

int dl_finish(ce_ctx *ctx, dl *d, bool strict)
{
    pthread_mutex_lock(&d->mu);
    int rc = finish(ctx, d, strict);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

/* Cache hit, offline miss, or open the .part and hash what it already holds. */
int dl_prepare(ce_ctx *ctx, dl *d)
{
    ce_fetch_item *it = d->it;
    const char *label = it->label ? it->label : it->url;
    it->label = label;
    if (!ce_sha256_valid(it->sha256))
        return ce_fail(CE_ERR_USAGE, "bad sha256 for %s: expected 64 lowercase hex digits", it->url);
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
            int hrc = ce_sha256_file(it->path, got);
            if (hrc != CE_OK)
                return hrc;
            if (strcmp(got, it->sha256) != 0) {
                dl_invalidate(d);
                unlink(it->path);
                return ce_fail(CE_ERR_INTEGRITY, "%s in the cache is not the file it is named after "
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
        return ce_fail(CE_ERR_NOTFOUND, "%s (sha256 %s) is not in the cache and --offline forbids "
                       "downloading it from %s; run without --offline, or copy the file to %s",
                       label, it->sha256, it->url, it->path);
    int rc = ce_http_check_url(d->msg, sizeof d->msg, it->url, it->allow_http);
    if (rc != CE_OK)
        return ce_fail(rc, "%s", d->msg);
    d->local_file = ce_http_has_scheme(it->url, "file://");

    d->fd = open(d->part, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (d->fd < 0)
        return ce_fail(CE_ERR_IO, "cannot open %s: %s", d->part, strerror(errno));
    dl_ring(d);
    if (flock(d->fd, LOCK_EX | LOCK_NB) != 0)
        return ce_fail(CE_ERR_LOCKED, "another cudaenv is downloading %s (%s is locked); wait for it",
                       label, d->part);
    d->h = ce_sha256_new();
    d->buf = malloc(WBUF);
    if (!d->h || !d->buf)
        return ce_fail(CE_ERR_NOMEM, "out of memory for the download of %s", label);
    if (fstat(d->fd, &st) != 0)
        return ce_fail(CE_ERR_IO, "cannot stat %s: %s", d->part, strerror(errno));
    d->have = st.st_size;
    if ((it->size >= 0 && d->have > it->size) || d->local_file)
        d->have = 0;
    if (d->have < st.st_size)
        dl_invalidate(d);
    if (ftruncate(d->fd, d->have) != 0)
        return ce_fail(CE_ERR_IO, "cannot truncate %s: %s", d->part, strerror(errno));
    if (d->have > 0) {
        ce_emit(ctx, CE_EV_INFO, label, "resuming %s at byte %lld", label, d->have);
        if ((rc = ce_sha256_fd(d->h, d->fd, d->have, d->part)) != CE_OK)
            return rc;
    }
    d->on_disk = d->run_start = d->have;
    if (it->size >= 0 && d->have == it->size) {
        /* complete from an earlier run; a wrong one is downloaded afresh */
        if ((rc = dl_finish(ctx, d, false)) == CE_OK)
            return CE_OK;
        if (rc != CE_ERR_INTEGRITY || dl_restart(d) != CE_OK)
            return ce_fail(d->fatal, "%s", d->msg);
        ce_emit(ctx, CE_EV_INFO, label, "%s: the earlier partial download was wrong; starting over", label);
        d->run_start = 0;
    }
    d->state = DL_PENDING;
    dl_register(d);
    return CE_OK;
}

int dl_start(dl *d, CURLM *m)
{
    if (!d->easy && !(d->easy = curl_easy_init()))
        return dl_fail(d, CE_ERR_NOMEM, "cannot start a transfer for %s", d->it->url);
    curl_easy_reset(d->easy);
    ce_http_setup(d->easy, d->it->url, d->it->allow_http, d->errbuf);
    if (d->it->bearer) {
        curl_easy_setopt(d->easy, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        curl_easy_setopt(d->easy, CURLOPT_XOAUTH2_BEARER, d->it->bearer);
    } else if (d->it->userpwd) {
        curl_easy_setopt(d->easy, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(d->easy, CURLOPT_USERPWD, d->it->userpwd);
    }
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
    pthread_mutex_lock(&d->mu);
    d->state = DL_ACTIVE;
    d->tried = true;
    pthread_mutex_unlock(&d->mu);
    return CE_OK;
}

/* ---- Ctrl-C: the open .part files ---- */

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static dl *reg_head;

void dl_init(dl *d)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&d->mu, &a);
    pthread_mutexattr_destroy(&a);
}

static void dl_register(dl *d)
{
    pthread_mutex_lock(&reg_mu);
    d->reg_prev = NULL;
    d->reg_next = reg_head;
    if (reg_head) reg_head->reg_prev = d;
    reg_head = d;
    d->registered = true;
    pthread_mutex_unlock(&reg_mu);
}

void dl_unregister(dl *d)
{
    pthread_mutex_lock(&reg_mu);
    if (d->registered) {
        if (d->reg_prev) d->reg_prev->reg_next = d->reg_next; else reg_head = d->reg_next;
        if (d->reg_next) d->reg_next->reg_prev = d->reg_prev;
        d->registered = false;
    }
    pthread_mutex_unlock(&reg_mu);
}

void dl_close(dl *d)
{
    pthread_mutex_lock(&d->mu);
    if (d->fd >= 0) close(d->fd);
    d->fd = -1;
    pthread_mutex_unlock(&d->mu);
}

/* Every lock is taken and kept: once this returns no download writes,
 * truncates or deletes a byte, so what it reports is what the next run
 * finds (the process ends next: fetch.h).  The digest is not brought up to
 * date: the next run hashes the .part again before it resumes. */
size_t ce_fetch_stop_all(ce_fetch_kept *out, size_t max)
{
    pthread_mutex_lock(&reg_mu);
    size_t n = 0;
    for (dl *d = reg_head; d; d = d->reg_next) {
        pthread_mutex_lock(&d->mu);
        if (d->fd < 0 || d->state == DL_DONE)
            continue;
        if (!d->fatal && d->blen && ce_pwrite_all(d->fd, d->buf, d->blen, d->on_disk) == 0) {
            d->on_disk += (long long)d->blen;
            d->blen = 0;
        }
        struct stat st;
        if (fstat(d->fd, &st) != 0 || st.st_nlink == 0)
            continue;   /* deleted (a wrong file): nothing of it is kept */
        if (st.st_size == 0 && !d->tried)
            continue;   /* still queued: it starts when its turn comes, as it would have */
        if (n < max)
            out[n] = (ce_fetch_kept){ .label = d->it->label, .bytes = st.st_size, .size = d->it->size };
        n++;
    }
    return n;
}
