/* Decode-ahead (ahead.h): libarchive's zstd or gzip filter on a thread of
 * its own, its plain bytes handed over in a ring of chunks.  The thread
 * fills the chunk after the last published one outside the lock and
 * publishes it whole; the reader holds the chunk it was handed until its
 * next read.  Published chunks are head .. head + count - 1 (mod chunks),
 * the one being filled is head + count. */
#include "ahead.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ce_ahead {
    ce_ahead_pull pull;
    void *ud;
    const void *first;     /* handed to the filter before the first pull */
    size_t first_n;
    size_t chunk;
    unsigned chunks;
    unsigned char *mem;    /* chunks x chunk */
    size_t *len;           /* bytes in each published chunk */
    pthread_mutex_t mu;
    pthread_cond_t room;   /* the reader gave a chunk back, or stop */
    pthread_cond_t ready;  /* a chunk was published, or the end, or an error */
    unsigned head, count;
    bool holding;          /* the reader holds chunk head */
    bool end, failed, stop;
    bool pull_failed;      /* written by the thread before failed is published */
    int err;
    char msg[256];
    pthread_t th;
};

bool ce_ahead_magic(const void *buf, size_t n)
{
    static const unsigned char zstd[4] = { 0x28, 0xb5, 0x2f, 0xfd }, gz[2] = { 0x1f, 0x8b };
    return (n >= sizeof zstd && memcmp(buf, zstd, sizeof zstd) == 0) || (n >= sizeof gz && memcmp(buf, gz, sizeof gz) == 0);
}

/* libarchive's read callback on the thread: first, then pull */
static la_ssize_t filter_read(struct archive *a, void *ud, const void **buf)
{
    ce_ahead *x = ud;
    if (x->first_n) {
        *buf = x->first;
        la_ssize_t n = (la_ssize_t)x->first_n;
        x->first_n = 0;
        return n;
    }
    const unsigned char *b = NULL;
    ssize_t n = x->pull(x->ud, &b);
    if (n < 0) {
        x->pull_failed = true;
        archive_set_error(a, EIO, "read error");
        return -1;
    }
    *buf = b;
    return n;
}

static void publish_error(ce_ahead *x, struct archive *a)
{
    pthread_mutex_lock(&x->mu);
    x->err = archive_errno(a) > 0 ? archive_errno(a) : EIO;
    snprintf(x->msg, sizeof x->msg, "%s", archive_error_string(a) ? archive_error_string(a) : "decoding failed");
    x->failed = true;
    pthread_cond_signal(&x->ready);
    pthread_mutex_unlock(&x->mu);
}

static void *run(void *arg)
{
    ce_ahead *x = arg;
    struct archive *a = archive_read_new();
    struct archive_entry *e;
    if (!a) {
        pthread_mutex_lock(&x->mu);
        x->err = ENOMEM;
        snprintf(x->msg, sizeof x->msg, "out of memory for the decoder");
        x->failed = true;
        pthread_cond_signal(&x->ready);
        pthread_mutex_unlock(&x->mu);
        return NULL;
    }
    archive_read_support_filter_zstd(a);
    archive_read_support_filter_gzip(a);
    archive_read_support_format_raw(a);
    if (archive_read_open2(a, x, NULL, filter_read, NULL, NULL) != ARCHIVE_OK ||
        archive_read_next_header(a, &e) != ARCHIVE_OK) {
        publish_error(x, a);
        archive_read_free(a);
        return NULL;
    }
    for (;;) {
        pthread_mutex_lock(&x->mu);
        while (x->count == x->chunks && !x->stop) pthread_cond_wait(&x->room, &x->mu);
        unsigned at = (x->head + x->count) % x->chunks;
        bool stop = x->stop;
        pthread_mutex_unlock(&x->mu);
        if (stop) break;
        la_ssize_t n = archive_read_data(a, x->mem + (size_t)at * x->chunk, x->chunk);
        if (n < 0) {
            publish_error(x, a);
            break;
        }
        pthread_mutex_lock(&x->mu);
        if (n == 0) {
            x->end = true;
        } else {
            x->len[at] = (size_t)n;
            x->count++;
        }
        pthread_cond_signal(&x->ready);
        pthread_mutex_unlock(&x->mu);
        if (n == 0) break;
    }
    archive_read_free(a);
    return NULL;
}

ce_ahead *ce_ahead_new(ce_ahead_pull pull, void *ud, const void *first, size_t n, size_t chunk,
                       unsigned chunks)
{
    if (chunk < 1 || chunks < 2 || chunk > (size_t)-1 / chunks) return NULL;
    ce_ahead *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    x->pull = pull;
    x->ud = ud;
    x->first = first;
    x->first_n = n;
    x->chunk = chunk;
    x->chunks = chunks;
    x->mem = malloc(chunk * chunks);
    x->len = calloc(chunks, sizeof *x->len);
    if (!x->mem || !x->len) goto fail;
    if (pthread_mutex_init(&x->mu, NULL) != 0) goto fail;
    if (pthread_cond_init(&x->room, NULL) != 0) goto fail_mu;
    if (pthread_cond_init(&x->ready, NULL) != 0) goto fail_room;
    if (pthread_create(&x->th, NULL, run, x) != 0) goto fail_ready;
    return x;
fail_ready:
    pthread_cond_destroy(&x->ready);
fail_room:
    pthread_cond_destroy(&x->room);
fail_mu:
    pthread_mutex_destroy(&x->mu);
fail:
    free(x->mem);
    free(x->len);
    free(x);
    return NULL;
}

ssize_t ce_ahead_read(ce_ahead *x, const void **out)
{
    pthread_mutex_lock(&x->mu);
    if (x->holding) {
        x->holding = false;
        x->head = (x->head + 1) % x->chunks;
        x->count--;
        pthread_cond_signal(&x->room);
    }
    while (x->count == 0 && !x->end && !x->failed) pthread_cond_wait(&x->ready, &x->mu);
    ssize_t n = x->failed ? -1 : 0;
    if (x->count > 0) {
        x->holding = true;
        *out = x->mem + (size_t)x->head * x->chunk;
        n = (ssize_t)x->len[x->head];
    }
    pthread_mutex_unlock(&x->mu);
    return n;
}

bool ce_ahead_pull_failed(ce_ahead *x)
{
    pthread_mutex_lock(&x->mu);
    bool f = x->failed && x->pull_failed;
    pthread_mutex_unlock(&x->mu);
    return f;
}

const char *ce_ahead_error(ce_ahead *x)
{
    pthread_mutex_lock(&x->mu);
    const char *m = x->failed ? x->msg : "";
    pthread_mutex_unlock(&x->mu);
    return m;
}

int ce_ahead_errno(ce_ahead *x)
{
    pthread_mutex_lock(&x->mu);
    int e = x->failed ? x->err : 0;
    pthread_mutex_unlock(&x->mu);
    return e;
}

void ce_ahead_free(ce_ahead *x)
{
    if (!x) return;
    pthread_mutex_lock(&x->mu);
    x->stop = true;
    pthread_cond_broadcast(&x->room);
    pthread_mutex_unlock(&x->mu);
    pthread_join(x->th, NULL);
    pthread_cond_destroy(&x->ready);
    pthread_cond_destroy(&x->room);
    pthread_mutex_destroy(&x->mu);
    free(x->mem);
    free(x->len);
    free(x);
}
