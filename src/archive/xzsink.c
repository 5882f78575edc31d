/* File blocks (xzmt.h, ce_xzmt_sink): while the reader is inside a regular
 * file's bytes, a worker block whose plain bytes all belong to that file is
 * decoded through a FILE_CHUNK buffer straight into the file, at its offset,
 * and its memory is given back the moment it is decoded: it no longer waits,
 * 24 MiB at a time, for the reader to get there in file order (issue 25: on
 * 16 cores finished blocks waiting filled the budget and cores went idle).
 * The reader still gets every byte in order, read back from the file, for
 * the per-file digest; the bytes of the file that come any other way (the
 * block streamed by the decoding thread, blocks decoded before the reader got
 * to the file, the blocks at its two ends) are written here as they are
 * handed to the reader (xzs_handout), so the file gets each byte once.
 *
 * A sink is shared by the reader (x->sink, until ce_xzmt_sink_end) and the
 * file blocks planned in it (until they were read back): the last reference
 * closes the file. */
#include "xzmt_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/file.h"

xzsink *xzs_for(ce_xzmt *x, const xzblock *b)
{
    pthread_mutex_lock(&x->mu);
    xzsink *s = x->sink;
    unsigned long long n = b->blk.uncompressed_size;
    bool in = s && b->at != AT_UNKNOWN && n != LZMA_VLI_UNKNOWN && n > 0 && b->at >= s->at && b->at + n <= s->end;
    if (in) s->refs++;
    pthread_mutex_unlock(&x->mu);
    return in ? s : NULL;
}

void xzs_put(ce_xzmt *x, xzsink *s)
{
    if (!s) return;
    pthread_mutex_lock(&x->mu);
    bool last = --s->refs == 0;
    pthread_mutex_unlock(&x->mu);
    if (!last) return;
    close(s->fd);
    free(s);
}

static void failed(ce_xzmt *x, int e)
{
    int none = 0;
    __atomic_compare_exchange_n(&x->werr, &none, e ? e : EIO, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* the file offset of plain bytes [at, at + n), or -1 when they are not all in s */
static off_t where(const xzsink *s, size_t n, unsigned long long at)
{
    return at >= s->at && at + n <= s->end ? (off_t)(at - s->at) : -1;
}

int xzs_write(ce_xzmt *x, xzsink *s, const void *buf, size_t n, unsigned long long at)
{
    off_t off = where(s, n, at);
    int e = off < 0 ? EINVAL : ce_pwrite_all(s->fd, buf, n, off);
    if (e) failed(x, e);
    return e ? -1 : 0;
}

int xzs_read(ce_xzmt *x, xzsink *s, void *buf, size_t n, unsigned long long at)
{
    off_t off = where(s, n, at);
    int e = off < 0 ? EINVAL : ce_pread_all(s->fd, buf, n, off);   /* EIO: shorter than written */
    if (e) failed(x, e);
    return e ? -1 : 0;
}

/* the part of e in s (reader's thread): 0, or -1 */
static int write_part(ce_xzmt *x, xzsink *s, const ring_ent *e)
{
    unsigned long long lo = e->at > s->at ? e->at : s->at, hi = e->at + e->len < s->end ? e->at + e->len : s->end;
    if (e->in_file || e->at == AT_UNKNOWN || lo >= hi) return 0;
    return xzs_write(x, s, e->p + (lo - e->at), (size_t)(hi - lo), lo);
}

int xzs_handout(ce_xzmt *x, const ring_ent *e)
{
    return x->sink ? write_part(x, x->sink, e) : 0;
}

int ce_xzmt_sink(ce_xzmt *x, const void *p, int fd, unsigned long long len)
{
    const ring_ent *h = &x->held;
    const unsigned char *q = p;
    if (!x->blocks || !x->sync_ready || x->sink || !h->p || h->at == AT_UNKNOWN || h->in_file || q < h->p ||
        q >= h->p + h->len || len == 0)
        return -1;
    xzsink *s = calloc(1, sizeof *s);
    if (!s) return -1;
    if ((s->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        free(s);
        return -1;
    }
    s->at = h->at + (unsigned long long)(q - h->p);
    s->end = s->at + len;
    s->refs = 1;
    pthread_mutex_lock(&x->mu);
    x->sink = s;
    pthread_mutex_unlock(&x->mu);
    /* what the reader holds from p on: here, the rest as it is handed out */
    return write_part(x, s, h) == 0 ? 0 : __atomic_load_n(&x->werr, __ATOMIC_ACQUIRE);
}

int ce_xzmt_sink_end(ce_xzmt *x)
{
    if (!x->sink) return __atomic_load_n(&x->werr, __ATOMIC_ACQUIRE);
    pthread_mutex_lock(&x->mu);
    xzsink *s = x->sink;
    x->sink = NULL;
    pthread_mutex_unlock(&x->mu);
    xzs_put(x, s);
    return __atomic_load_n(&x->werr, __ATOMIC_ACQUIRE);
}

unsigned ce_xzmt_file_blocks(const ce_xzmt *x) { return x->nfile; }
