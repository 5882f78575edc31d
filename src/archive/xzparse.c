/* The .xz container for the block decoder (xzmt_int.h): the input is read
 * through pull() on the decoding thread only, in order (pull hashes), and
 * split at block boundaries.  Everything liblzma's stream decoder checks is
 * checked here too, with the same error codes (LZMA_CONCATENATED, as
 * libarchive): the stream header, each block header (CRC32), the index
 * (every record against the blocks seen, its CRC32), the footer (CRC32, the
 * same flags as the header, the index's size), stream padding (null bytes,
 * a multiple of four) and the streams after the first. */
#include "xzmt_int.h"

#include <string.h>

/* Input there: 1, 0 at its end, -1 when pull failed. */
static int fill(ce_xzmt *x)
{
    while (x->ia == 0) {
        if (x->eof_in) return 0;
        const unsigned char *buf = NULL;
        ssize_t n = xz_stopping(x) ? -1 : x->pull(x->ud, &buf);
        if (n < 0) {
            x->pull_failed = true;
            return -1;
        }
        if (n == 0) {
            x->eof_in = true;
            return 0;
        }
        x->ip = buf;
        x->ia = (size_t)n;
    }
    return 1;
}

int xzp_fill(ce_xzmt *x)
{
    return fill(x);
}

bool xzp_there(ce_xzmt *x, size_t n)
{
    if (!x->avail || x->eof_in || x->ia >= n) return true;
    return x->avail(x->ud) >= (long long)(n - x->ia);
}

static int fail(ce_xzmt *x, lzma_ret why)
{
    if (x->perr == LZMA_OK) x->perr = why;
    return -1;
}

int xzp_read(ce_xzmt *x, void *dst, size_t n)
{
    unsigned char *d = dst;
    while (n > 0) {
        int r = fill(x);
        if (r < 0) return -1;
        if (r == 0) return fail(x, LZMA_BUF_ERROR);   /* truncated: liblzma's "no progress" */
        size_t k = x->ia < n ? x->ia : n;
        memcpy(d, x->ip, k);
        d += k;
        x->ip += k;
        x->ia -= k;
        n -= k;
    }
    return 0;
}

/* A stream header (the first of the file, or one after padding). */
static int stream_header(ce_xzmt *x, bool first)
{
    unsigned char h[LZMA_STREAM_HEADER_SIZE];
    if (xzp_read(x, h, sizeof h)) return -1;
    lzma_ret r = lzma_stream_header_decode(&x->sflags, h);
    if (r == LZMA_FORMAT_ERROR && !first) r = LZMA_DATA_ERROR;   /* garbage after a stream */
    if (r != LZMA_OK) return fail(x, r);
    x->ihash = lzma_index_hash_init(x->ihash, &ce_xzmt_allocator);
    if (!x->ihash) return fail(x, LZMA_MEM_ERROR);
    x->in_stream = true;
    return 0;
}

/* After a stream: null bytes in fours, then the end or another stream.  1: the end. */
static int padding(ce_xzmt *x)
{
    size_t pad = 0;
    for (;;) {
        int r = fill(x);
        if (r < 0) return -1;
        if (r == 0) {
            if (pad % 4) return fail(x, LZMA_DATA_ERROR);
            x->parse_end = true;
            return 1;
        }
        while (x->ia > 0 && x->ip[0] == 0) {
            x->ip++;
            x->ia--;
            pad++;
        }
        if (x->ia > 0) {
            if (pad % 4) return fail(x, LZMA_DATA_ERROR);
            return stream_header(x, false);
        }
    }
}

/* The index (its indicator byte already read) and the footer. */
static int index_footer(ce_xzmt *x)
{
    static const unsigned char indicator = 0;
    size_t pos = 0;
    lzma_ret r = lzma_index_hash_decode(x->ihash, &indicator, &pos, 1);
    while (r == LZMA_OK) {
        int f = fill(x);
        if (f < 0) return -1;
        if (f == 0) return fail(x, LZMA_BUF_ERROR);
        pos = 0;
        r = lzma_index_hash_decode(x->ihash, x->ip, &pos, x->ia);
        x->ip += pos;
        x->ia -= pos;
    }
    if (r != LZMA_STREAM_END) return fail(x, r);
    unsigned char f[LZMA_STREAM_HEADER_SIZE];
    if (xzp_read(x, f, sizeof f)) return -1;
    lzma_stream_flags ff;
    r = lzma_stream_footer_decode(&ff, f);
    if (r == LZMA_FORMAT_ERROR) r = LZMA_DATA_ERROR;
    if (r != LZMA_OK) return fail(x, r);
    if (lzma_stream_flags_compare(&x->sflags, &ff) != LZMA_OK ||
        ff.backward_size != lzma_index_hash_size(x->ihash))
        return fail(x, LZMA_DATA_ERROR);
    x->in_stream = false;
    return 0;
}

int xzp_next_block(ce_xzmt *x, xzblock *b)
{
    for (;;) {
        if (!x->in_stream) {
            if (!x->ihash) {
                if (stream_header(x, true)) return -1;
            } else {
                int r = padding(x);
                if (r) return r;
            }
        }
        unsigned char h[LZMA_BLOCK_HEADER_SIZE_MAX];
        if (xzp_read(x, h, 1)) return -1;
        if (h[0] == 0) {
            if (index_footer(x)) return -1;
            continue;
        }
        uint32_t size = lzma_block_header_size_decode(h[0]);
        if (xzp_read(x, h + 1, size - 1)) return -1;
        memset(&b->blk, 0, sizeof b->blk);
        b->blk.version = 1;
        b->blk.header_size = size;
        b->blk.check = x->sflags.check;
        b->blk.filters = b->filters;
        lzma_ret r = lzma_block_header_decode(&b->blk, &ce_xzmt_allocator, h);
        if (r != LZMA_OK) return fail(x, r);   /* it checks the sizes it records too */
        return 0;
    }
}

void xzp_block_seen(ce_xzmt *x, const lzma_block *blk)
{
    lzma_ret r = lzma_index_hash_append(x->ihash, lzma_block_unpadded_size(blk), blk->uncompressed_size);
    if (r != LZMA_OK) fail(x, LZMA_DATA_ERROR);
}

void xzp_end(ce_xzmt *x)
{
    lzma_index_hash_end(x->ihash, &ce_xzmt_allocator);   /* NULL: nothing */
}
