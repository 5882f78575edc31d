/* What the block decoder's unit tests share (test_xzblk.c, test_xzsink.c):
 * 2 x PLAIN bytes of text with some noise, packed by liblzma into blocks of
 * a given size, a pull that serves them a piece at a time (or stops at a
 * point until the decoder is freed), and the blocks of a packed file. */
#ifndef TEST_XZ_FIXTURE_H
#define TEST_XZ_FIXTURE_H

#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archive/xzmt.h"

#define MiB (1ull << 20)
#define PLAIN (6u << 20)

static unsigned char *plain;

typedef struct buf {
    unsigned char *p;
    size_t len;
} buf;

/* size bytes of plain, packed: blocks of block bytes with their sizes in
 * their headers (block 0: one block without, as xz -T1) */
static inline buf pack(size_t size, uint64_t block, lzma_check check, uint32_t preset)
{
    buf b = { malloc(size + size / 2 + 4096), 0 };
    lzma_stream s = LZMA_STREAM_INIT;
    lzma_mt mt = { .threads = 2, .block_size = block, .preset = preset, .check = check };
    assert_int_equal(block ? lzma_stream_encoder_mt(&s, &mt) : lzma_easy_encoder(&s, preset, check), LZMA_OK);
    s.next_in = plain;
    s.avail_in = size;
    s.next_out = b.p;
    s.avail_out = size + size / 2 + 4096;
    lzma_ret r;
    while ((r = lzma_code(&s, LZMA_FINISH)) == LZMA_OK) {}
    assert_int_equal(r, LZMA_STREAM_END);
    b.len = s.total_out;
    lzma_end(&s);
    return b;
}

static inline buf cat(buf a, const void *p, size_t n)
{
    a.p = realloc(a.p, a.len + n);
    memcpy(a.p + a.len, p, n);
    a.len += n;
    return a;
}

typedef struct src {
    const buf *in;
    size_t pos, piece, fail_at;
    ce_xzmt *x;
} src;

static inline ssize_t pull(void *ud, const unsigned char **out)
{
    src *s = ud;
    if (s->pos >= s->fail_at) return -1;
    size_t n = s->in->len - s->pos < s->piece ? s->in->len - s->pos : s->piece;
    *out = s->in->p + s->pos;
    s->pos += n;
    return (ssize_t)n;
}

/* A download stuck at stop_at bytes: pull waits there until the decoder stops. */
typedef struct slow {
    src s;
    size_t stop_at;
} slow;

static inline ssize_t pull_stuck(void *ud, const unsigned char **out)
{
    slow *w = ud;
    if (w->s.pos >= w->stop_at) {
        struct timespec ts = { 0, 1000 * 1000 };
        while (!ce_xzmt_stopping(w->s.x)) nanosleep(&ts, NULL);
        return -1;
    }
    return pull(&w->s, out);
}

/* the blocks of a file, from its index */
static inline lzma_index *blocks_of(const buf *b)
{
    lzma_stream_flags f;
    assert_int_equal(lzma_stream_footer_decode(&f, b->p + b->len - 12), LZMA_OK);
    lzma_index *i = NULL;
    uint64_t limit = UINT64_MAX;
    size_t pos = b->len - 12 - f.backward_size;
    assert_int_equal(lzma_index_buffer_decode(&i, &limit, NULL, b->p, &pos, b->len - 12), LZMA_OK);
    return i;
}

static inline int xz_setup(void **state)
{
    (void)state;
    plain = malloc(2 * PLAIN);
    uint32_t v = 1;
    for (size_t i = 0; i < 2 * PLAIN; i++) {   /* text with some noise */
        v = v * 1103515245u + 12345u;
        plain[i] = (i / 4096) % 5 == 0 ? (unsigned char)(v >> 24) : (unsigned char)('a' + (i * 7 + i / 13) % 26);
    }
    memcpy(plain + PLAIN, plain, PLAIN);   /* a second stream of the same bytes follows */
    return 0;
}

static inline int xz_teardown(void **state)
{
    (void)state;
    free(plain);
    return 0;
}

#endif
