/* Decode-ahead (ahead.h): libarchive's zstd or gzip filter on a thread of
 * its own producing into a ring of chunks (core/ring.h); the reader holds
 * the chunk it was handed until its next read.  What the thread says at its
 * end (end of data, or the error) it writes before it closes the ring, and
 * the reader reads it once the ring ran dry. */
#include "ahead.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ring.h"

struct ce_ahead {
    ce_ahead_pull pull;
    void *ud;
    const void *first;     /* handed to the filter before the first pull */
    size_t first_n;
    size_t chunk;
    ce_ring *ring;
    size_t *len;           /* bytes in each published chunk */
    bool holding;          /* the reader holds a chunk */
    bool failed;           /* the thread's, before it closes */
    bool pull_failed;
    int err;
    char msg[256];
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

/* the thread's last word: written before the ring closes (ring.h) */
static void fail(ce_ahead *x, int err, const char *msg)
{
    x->err = err;
    snprintf(x->msg, sizeof x->msg, "%s", msg);
    x->failed = true;
}

static void *run(void *arg)
{
    ce_ahead *x = arg;
    struct archive *a = archive_read_new();
    struct archive_entry *e;
    if (!a) {
        fail(x, ENOMEM, "out of memory for the decoder");
        ce_ring_close(x->ring);
        return NULL;
    }
    archive_read_support_filter_zstd(a);
    archive_read_support_filter_gzip(a);
    archive_read_support_format_raw(a);
    bool ok = archive_read_open2(a, x, NULL, filter_read, NULL, NULL) == ARCHIVE_OK &&
              archive_read_next_header(a, &e) == ARCHIVE_OK;
    for (int at; ok && (at = ce_ring_take(x->ring)) >= 0;) {
        la_ssize_t n = archive_read_data(a, ce_ring_slot(x->ring, at), x->chunk);
        if (n <= 0) {
            ok = n == 0;
            break;
        }
        x->len[at] = (size_t)n;
        ce_ring_publish(x->ring);
    }
    if (!ok)
        fail(x, archive_errno(a) > 0 ? archive_errno(a) : EIO,
             archive_error_string(a) ? archive_error_string(a) : "decoding failed");
    ce_ring_close(x->ring);
    archive_read_free(a);
    return NULL;
}

ce_ahead *ce_ahead_new(ce_ahead_pull pull, void *ud, const void *first, size_t n, size_t chunk,
                       unsigned chunks)
{
    ce_ahead *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    x->pull = pull;
    x->ud = ud;
    x->first = first;
    x->first_n = n;
    x->chunk = chunk;
    x->ring = ce_ring_new(chunk, chunks);
    x->len = x->ring ? calloc(chunks, sizeof *x->len) : NULL;
    if (x->len && ce_ring_start(x->ring, run, x) == 0) return x;
    ce_ring_end(x->ring, true);
    free(x->len);
    free(x);
    return NULL;
}

ssize_t ce_ahead_read(ce_ahead *x, const void **out)
{
    if (x->holding) ce_ring_done(x->ring);
    int i = ce_ring_next(x->ring);
    x->holding = i >= 0;
    if (i < 0) return x->failed ? -1 : 0;   /* the thread's word, written before it closed */
    *out = ce_ring_slot(x->ring, i);
    return (ssize_t)x->len[i];
}

/* After a read returned -1 (ahead.h): the thread's last word is settled */
bool ce_ahead_pull_failed(ce_ahead *x)
{
    return x->failed && x->pull_failed;
}

const char *ce_ahead_error(ce_ahead *x)
{
    return x->failed ? x->msg : "";
}

int ce_ahead_errno(ce_ahead *x)
{
    return x->failed ? x->err : 0;
}

void ce_ahead_free(ce_ahead *x)
{
    if (!x) return;
    ce_ring_end(x->ring, true);   /* a thread waiting for room stops at once */
    free(x->len);
    free(x);
}
