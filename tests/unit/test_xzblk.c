/* ce_xzmt's block decoder (issue 25, xzblk.c, xzparse.c): multi-block .xz
 * files decode byte-exact whatever the layout (blocks with their sizes, one
 * block without, streams one after another, stream padding, empty streams,
 * every check type), every corruption fails with liblzma's error, a block
 * header lying about its sizes is not believed (no 2^60-byte buffer), a
 * budget below one block still decodes (streamed), and with a budget of two
 * worker blocks three blocks decode at once (the streamed head and two
 * workers: what liblzma's threaded decoder cannot). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/ctx.h"
#include "archive/slots.h"
#include "archive/xzmt.h"

#include "xz_fixture.h"

typedef struct result {
    ssize_t rc;          /* the last read: 0 the end, -1 an error */
    size_t got;
    bool same;           /* got bytes equal the plain's first got */
    bool pull_failed;
    const char *err;
    unsigned peak;
    unsigned blocks;     /* decoded, by workers or the decoding thread */
} result;

/* everything through ce_xzmt_read; expect: the plain bytes it should give */
static result decode(const buf *in, unsigned threads, unsigned long long mem, ce_slots *slots, long sleep_us,
                     size_t fail_at, const unsigned char *expect)
{
    src s = { .in = in, .piece = 64u << 10, .fail_at = fail_at ? fail_at : SIZE_MAX };
    const unsigned char *first;
    ssize_t n = pull(&s, &first);
    assert_true(n > 0 && ce_xzmt_magic(first, (size_t)n));
    s.x = ce_xzmt_new_mem(pull, &s, first, (size_t)n, threads, mem);
    assert_non_null(s.x);
    if (slots) ce_xzmt_use_slots(s.x, slots, 3, (long long)in->len);
    result r = { .same = true };
    for (;;) {
        const void *out;
        r.rc = ce_xzmt_read(s.x, &out);
        if (r.rc <= 0) break;
        if (r.got + (size_t)r.rc > PLAIN * 2 || memcmp(out, expect + r.got, (size_t)r.rc)) r.same = false;
        r.got += (size_t)r.rc;
        if (sleep_us) {
            struct timespec ts = { 0, sleep_us * 1000 };
            nanosleep(&ts, NULL);
        }
    }
    r.pull_failed = ce_xzmt_pull_failed(s.x);
    r.err = r.rc < 0 && !r.pull_failed ? ce_xzmt_error(s.x) : NULL;
    r.peak = ce_xzmt_peak(s.x);
    r.blocks = ce_xzmt_blocks(s.x);
    ce_xzmt_free(s.x);
    return r;
}

static void assert_decodes(const buf *in, size_t size, const unsigned char *expect)
{
    result r = decode(in, 2, 64 * MiB, NULL, 0, 0, expect);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.got, size);
    assert_true(r.same);
}

static void assert_fails(const buf *in, const char *err)
{
    result r = decode(in, 2, 64 * MiB, NULL, 0, 0, plain);
    assert_int_equal(r.rc, -1);
    assert_false(r.pull_failed);
    assert_non_null(r.err);
    assert_string_equal(r.err, err);
}

static void test_layouts(void **state)
{
    (void)state;
    static const unsigned char pad[8] = { 0 };
    buf mb = pack(PLAIN, 512u << 10, LZMA_CHECK_CRC64, 1);
    assert_decodes(&mb, PLAIN, plain);                       /* blocks with sizes */
    buf one = pack(PLAIN, 0, LZMA_CHECK_CRC64, 1);
    assert_decodes(&one, PLAIN, plain);                      /* one block without */
    buf two = cat(cat(cat((buf){ NULL, 0 }, mb.p, mb.len), pad, 8), mb.p, mb.len);
    two = cat(two, pad, 4);
    assert_decodes(&two, 2 * PLAIN, plain);                  /* two streams, padding between and after */
    buf mixed = cat(cat((buf){ NULL, 0 }, mb.p, mb.len), one.p, one.len);
    assert_decodes(&mixed, 2 * PLAIN, plain);                /* a stream of sized blocks, then a size-less one */
    /* an empty stream, after a stream of blocks, and alone */
    lzma_stream s = LZMA_STREAM_INIT;
    unsigned char empty[64];
    assert_int_equal(lzma_easy_encoder(&s, 1, LZMA_CHECK_CRC32), LZMA_OK);
    s.next_out = empty;
    s.avail_out = sizeof empty;
    assert_int_equal(lzma_code(&s, LZMA_FINISH), LZMA_STREAM_END);
    buf e = cat((buf){ NULL, 0 }, empty, s.total_out);
    lzma_end(&s);
    buf me = cat(cat((buf){ NULL, 0 }, mb.p, mb.len), e.p, e.len);
    assert_decodes(&me, PLAIN, plain);
    result r = decode(&e, 2, 64 * MiB, NULL, 0, 0, plain);
    assert_true(r.rc == 0 && r.got == 0);
    /* padding not in fours, garbage after a stream: liblzma's data error */
    buf odd = cat(cat((buf){ NULL, 0 }, mb.p, mb.len), pad, 3);
    assert_fails(&odd, "Lzma library error: Corrupted input data");
    buf junk = cat(cat((buf){ NULL, 0 }, mb.p, mb.len), "JUNKJUNKJUNKJUNK", 16);
    assert_fails(&junk, "Lzma library error: Corrupted input data");
    free(mb.p), free(one.p), free(two.p), free(mixed.p), free(e.p), free(me.p), free(odd.p), free(junk.p);
}

static void test_checks(void **state)
{
    (void)state;
    static const lzma_check checks[] = { LZMA_CHECK_NONE, LZMA_CHECK_CRC32, LZMA_CHECK_CRC64, LZMA_CHECK_SHA256 };
    for (size_t i = 0; i < 4; i++) {
        buf b = pack(2 * MiB, 256u << 10, checks[i], 0);
        assert_decodes(&b, 2 * MiB, plain);
        free(b.p);
    }
}

/* b with its index rewritten: block k's record dpad bytes larger and dplain
 * bytes more plain (the index's own CRC32 and the footer right) */
static buf reindex(const buf *b, unsigned k, long long dpad, long long dplain)
{
    lzma_index *idx = blocks_of(b), *bad = lzma_index_init(NULL);
    lzma_index_iter it;
    lzma_index_iter_init(&it, idx);
    for (unsigned j = 0; !lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK); j++)
        assert_int_equal(lzma_index_append(bad, NULL, it.block.unpadded_size + (j == k ? dpad : 0),
                                           it.block.uncompressed_size + (j == k ? dplain : 0)), LZMA_OK);
    unsigned char ib[4096];
    size_t ilen = 0;
    assert_int_equal(lzma_index_buffer_encode(bad, ib, &ilen, sizeof ib), LZMA_OK);
    lzma_stream_flags f = { .version = 0, .check = LZMA_CHECK_CRC64, .backward_size = ilen };
    unsigned char foot[12];
    assert_int_equal(lzma_stream_footer_encode(&f, foot), LZMA_OK);
    size_t blocks_end = (size_t)(lzma_index_total_size(idx) + 12 + dpad);   /* header + blocks */
    buf o = cat(cat(cat((buf){ NULL, 0 }, b->p, blocks_end), ib, ilen), foot, 12);
    lzma_index_end(idx, NULL);
    lzma_index_end(bad, NULL);
    return o;
}

/* block k's header rewritten with these sizes (LZMA_VLI_UNKNOWN: left out),
 * the file around it; *grew: how much longer the header is */
static buf lie(const buf *b, unsigned k, lzma_vli csize, lzma_vli usize, long long *grew)
{
    lzma_index *idx = blocks_of(b);
    lzma_index_iter it;
    lzma_index_iter_init(&it, idx);
    for (unsigned j = 0; j <= k; j++) assert_false(lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK));
    size_t at = (size_t)it.block.compressed_file_offset;
    lzma_filter filters[LZMA_FILTERS_MAX + 1];
    lzma_block blk = { .version = 1, .check = LZMA_CHECK_CRC64, .filters = filters };
    blk.header_size = lzma_block_header_size_decode(b->p[at]);
    assert_int_equal(lzma_block_header_decode(&blk, NULL, b->p + at), LZMA_OK);
    size_t old = blk.header_size;
    blk.compressed_size = csize;
    blk.uncompressed_size = usize;
    assert_int_equal(lzma_block_header_size(&blk), LZMA_OK);
    unsigned char h[LZMA_BLOCK_HEADER_SIZE_MAX];
    assert_int_equal(lzma_block_header_encode(&blk, h), LZMA_OK);
    buf o = cat(cat((buf){ NULL, 0 }, b->p, at), h, blk.header_size);
    o = cat(o, b->p + at + old, b->len - at - old);
    if (grew) *grew = (long long)blk.header_size - (long long)old;
    lzma_filters_free(filters, NULL);
    lzma_index_end(idx, NULL);
    return o;
}

static void test_corruptions(void **state)
{
    (void)state;
    buf b = pack(PLAIN, 512u << 10, LZMA_CHECK_CRC64, 1);
    lzma_index *idx = blocks_of(&b);
    lzma_index_iter it;
    lzma_index_iter_init(&it, idx);
    assert_false(lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK));
    size_t b0 = (size_t)it.block.compressed_file_offset, t0 = (size_t)it.block.total_size;
    lzma_index_end(idx, NULL);
    const char *data = "Lzma library error: Corrupted input data";
    /* a byte of block 0's compressed data; a byte of its check */
    b.p[b0 + t0 / 2] ^= 0x55;
    assert_fails(&b, data);
    b.p[b0 + t0 / 2] ^= 0x55;
    b.p[b0 + t0 - 1] ^= 0x01;
    assert_fails(&b, data);
    b.p[b0 + t0 - 1] ^= 0x01;
    /* a block header's CRC32; the index's; the footer's flags */
    b.p[b0 + 2] ^= 0x01;
    assert_fails(&b, data);
    b.p[b0 + 2] ^= 0x01;
    b.p[b.len - 14] ^= 0x01;
    assert_fails(&b, data);
    b.p[b.len - 14] ^= 0x01;
    /* truncated: inside a block, inside the index */
    buf cut = { b.p, b.len / 2 };
    assert_fails(&cut, "Lzma library error:  No progress is possible");
    cut.len = b.len - 20;
    assert_fails(&cut, "Lzma library error:  No progress is possible");
    /* an index whose records disagree with the blocks (its own CRC right) */
    buf lied = reindex(&b, 3, 0, 1);
    assert_fails(&lied, data);
    free(lied.p);
    lied = reindex(&b, 3, 0, 0);   /* the same, unchanged: it decodes */
    assert_decodes(&lied, PLAIN, plain);
    free(lied.p);
    /* block headers lying about sizes: a compressed size past the end of the file,
     * a plain size of 2^60 (refused as corrupt, not "cannot allocate") */
    lied = lie(&b, 1, 1ull << 40, 512u << 10, NULL);
    assert_fails(&lied, data);
    free(lied.p);
    idx = blocks_of(&b);
    lzma_index_iter_init(&it, idx);
    assert_false(lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK));
    assert_false(lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK));
    lzma_vli c1 = it.block.unpadded_size - lzma_check_size(LZMA_CHECK_CRC64);
    lzma_index_end(idx, NULL);
    unsigned char hs = (unsigned char)lzma_block_header_size_decode(b.p[b0 + t0]);
    lied = lie(&b, 1, c1 - hs, 1ull << 60, NULL);
    assert_fails(&lied, data);
    free(lied.p);
    /* and a block header without sizes in the middle decodes as it comes (and right) */
    long long grew = 0;
    lied = lie(&b, 2, LZMA_VLI_UNKNOWN, LZMA_VLI_UNKNOWN, &grew);
    buf fixed = reindex(&lied, 2, grew, 0);
    assert_decodes(&fixed, PLAIN, plain);
    free(lied.p);
    free(fixed.p);
    free(b.p);
}

static void test_pull_fails_mid_block(void **state)
{
    (void)state;
    buf b = pack(PLAIN, 512u << 10, LZMA_CHECK_CRC64, 1);
    result r = decode(&b, 2, 64 * MiB, NULL, 0, b.len / 3, plain);
    assert_int_equal(r.rc, -1);
    assert_true(r.pull_failed);
    assert_true(r.same);
    free(b.p);
}

/* Below one worker block's need: everything streamed by the decoding thread, right. */
static void test_tiny_budget(void **state)
{
    (void)state;
    buf b = pack(PLAIN, 2 * MiB, LZMA_CHECK_CRC64, 1);
    result r = decode(&b, 2, 4 * MiB, NULL, 0, 0, plain);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.got, PLAIN);
    assert_true(r.same);
    assert_int_equal(r.peak, 1);
    r = decode(&b, 2, 0, NULL, 0, 0, plain);
    assert_true(r.rc == 0 && r.got == PLAIN && r.same && r.peak == 1);
    free(b.p);
}

/* A budget of two worker blocks (2 MiB blocks: ~4.7 MiB each) on two
 * threads: the decoding thread streams block k + 2 (no memory left for it)
 * while the workers decode k + 3 and k + 4 (the memory of k and k + 1, read
 * by then): three blocks at once, where liblzma's threaded decoder would
 * start k + 2 only once the output of k was read. */
static void test_three_blocks_in_two(void **state)
{
    (void)state;
    buf b = pack(2 * PLAIN, 2 * MiB, LZMA_CHECK_CRC64, 1);
    result r = decode(&b, 2, 11 * MiB, NULL, 0, 0, plain);
    assert_true(r.rc == 0 && r.got == 2 * PLAIN && r.same);
    assert_int_equal(r.peak, 3);
    assert_int_equal(r.blocks, 6);   /* each block decoded once, by one thread */
    free(b.p);
}

/* With the install's shared budget: memory taken block by block, all of it
 * back at the end; workers ran. */
static void test_shared_budget(void **state)
{
    (void)state;
    static ce_slots s;
    assert_int_equal(ce_slots_init(&s, 2), 0);
    ce_slots_budget(&s, 64 * MiB, 100 * MiB);
    buf b = pack(PLAIN, 1 * MiB, LZMA_CHECK_CRC64, 1);
    result r = decode(&b, 2, 0, &s, 0, 0, plain);
    assert_true(r.rc == 0 && r.got == PLAIN && r.same);
    assert_true(r.peak >= 2);
    assert_int_equal(r.blocks, 6);
    assert_true(s.mem_free == 64 * MiB && s.mem_held[3] == 0);
    /* none free: streamed, right */
    ce_slots_budget(&s, 1, 100 * MiB);
    r = decode(&b, 2, 0, &s, 0, 0, plain);
    assert_true(r.rc == 0 && r.got == PLAIN && r.same && r.peak == 1);
    ce_slots_destroy(&s);
    free(b.p);
}

/* CUDAENV_XZ_NO_PIPE: the decoding thread's part runs in the reader's
 * thread, the workers still decode ahead; the same bytes. */
static void test_no_pipe(void **state)
{
    (void)state;
    static ce_ctx c;   /* settings are read once, by ce_ctx_init */
    setenv("CUDAENV_XZ_NO_PIPE", "1", 1);
    ce_ctx_init(&c);
    buf b = pack(PLAIN, 512u << 10, LZMA_CHECK_CRC64, 1);
    result r = decode(&b, 2, 64 * MiB, NULL, 0, 0, plain);
    unsetenv("CUDAENV_XZ_NO_PIPE");
    ce_ctx_init(&c);
    assert_true(r.rc == 0 && r.got == PLAIN && r.same);
    assert_true(r.peak >= 2);
    free(b.p);
}

/* The reader is done early (libarchive saw the tar's end, an entry was
 * refused) while workers decode and blocks wait to be read: free stops them
 * and returns, everything given back (ASan: no leak), each time at another
 * point; and while the decoding thread's pull waits for bytes that never
 * come (it sees ce_xzmt_stopping: pull_stuck). */
static void test_free_early(void **state)
{
    (void)state;
    alarm(120);
    static ce_slots sl;
    assert_int_equal(ce_slots_init(&sl, 2), 0);
    ce_slots_budget(&sl, 32 * MiB, 100 * MiB);
    buf b = pack(PLAIN, 512u << 10, LZMA_CHECK_CRC64, 1);
    for (int round = 0; round < 24; round++) {
        slow w = { .s = { .in = &b, .piece = 64u << 10, .fail_at = SIZE_MAX },
                   .stop_at = round % 3 == 2 ? b.len / 2 : SIZE_MAX };
        const unsigned char *first = NULL;
        ssize_t n = pull_stuck(&w, &first);
        w.s.x = ce_xzmt_new_mem(pull_stuck, &w, first, (size_t)n, 2, 16 * MiB);
        assert_non_null(w.s.x);
        if (round % 2) ce_xzmt_use_slots(w.s.x, &sl, 1, (long long)b.len);
        const void *out;
        int reads = w.stop_at == SIZE_MAX ? round % 20 : round % 4;   /* stuck: what is there before */
        for (int k = 0; k <= reads; k++) assert_true(ce_xzmt_read(w.s.x, &out) > 0);
        ce_xzmt_free(w.s.x);
        assert_true(sl.mem_free == 32 * MiB && sl.mem_held[1] == 0);
    }
    alarm(0);
    free(b.p);
    ce_slots_destroy(&sl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_checks),
        cmocka_unit_test(test_corruptions),
        cmocka_unit_test(test_pull_fails_mid_block),
        cmocka_unit_test(test_tiny_budget),
        cmocka_unit_test(test_three_blocks_in_two),
        cmocka_unit_test(test_shared_budget),
        cmocka_unit_test(test_free_early),
        cmocka_unit_test(test_no_pipe),
    };
    return cmocka_run_group_tests(tests, xz_setup, xz_teardown);
}
