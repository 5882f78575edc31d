/* The xz decoders' memory budget (issue 25, xzmt.h and slots.h): it scales
 * with the cores of the affinity mask and is capped by MemAvailable and
 * 1 GiB; what one worker block needs is read from the first block header
 * (none for a single-block file: it decodes sequentially); the slots share
 * the budget out block by block, in proportion to the archives' sizes (past
 * it while nobody else waits), never past what is free, and take it back as
 * blocks are read, when an archive is done or its unpacker dies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "archive/slots.h"
#include "archive/xzmt.h"

#define MiB (1ull << 20)

static void test_budget_scales(void **state)
{
    (void)state;
    /* the 2-core, 24 GiB development machine and the 16-core, 128 GiB H200 */
    assert_true(ce_xzmt_budget_for(2, 24ull << 30) == 2 * CE_XZMT_PER_CORE - CE_XZMT_FIXED);
    assert_true(ce_xzmt_budget_for(16, 128ull << 30) == 16 * CE_XZMT_PER_CORE - CE_XZMT_FIXED);
    assert_true(ce_xzmt_budget_for(2, 24ull << 30) == 88 * MiB);      /* two worker blocks of 24 MiB */
    assert_true(ce_xzmt_budget_for(16, 128ull << 30) > 960 * MiB);    /* the H200: most of the 1 GiB */
    assert_true(ce_xzmt_budget_for(2, 24ull << 30) < 128 * MiB);
    assert_true(ce_xzmt_budget_for(16, 128ull << 30) >= 512 * MiB);
    /* never past 1 GiB, whatever the cores */
    assert_true(ce_xzmt_budget_for(128, 1ull << 40) == CE_XZMT_BUDGET_MAX);
    /* a small machine: 1/16 of what is available, not less than the floor */
    assert_true(ce_xzmt_budget_for(16, 1ull << 30) == (1ull << 30) / CE_XZMT_AVAIL_DIV);
    assert_true(ce_xzmt_budget_for(16, 64 * MiB) == CE_XZMT_BUDGET_MIN);
    /* unknown memory: the cores decide */
    assert_true(ce_xzmt_budget_for(4, 0) == 4 * CE_XZMT_PER_CORE - CE_XZMT_FIXED);
    assert_true(ce_xzmt_budget_for(0, 0) == CE_XZMT_PER_CORE - CE_XZMT_FIXED);
}

/* size bytes of text packed by liblzma: threaded (blocks of block bytes,
 * sizes in their headers) or not (one block, no sizes) */
static unsigned char *pack(size_t size, uint64_t block, bool threaded, size_t *len)
{
    unsigned char *in = malloc(size), *out = malloc(size + (1u << 16));
    for (size_t i = 0; i < size; i++) in[i] = (unsigned char)("0123456789\n"[(i * 7 + i / 13) % 11]);
    lzma_stream s = LZMA_STREAM_INIT;
    lzma_mt mt = { .threads = 2, .block_size = block, .preset = 0, .check = LZMA_CHECK_CRC64 };
    assert_int_equal(threaded ? lzma_stream_encoder_mt(&s, &mt) : lzma_easy_encoder(&s, 0, LZMA_CHECK_CRC64),
                     LZMA_OK);
    s.next_in = in;
    s.avail_in = size;
    s.next_out = out;
    s.avail_out = size + (1u << 16);
    lzma_ret r;
    while ((r = lzma_code(&s, LZMA_FINISH)) == LZMA_OK) {}
    assert_int_equal(r, LZMA_STREAM_END);
    *len = size + (1u << 16) - s.avail_out;
    lzma_end(&s);
    free(in);
    return out;
}

static void test_block_need(void **state)
{
    (void)state;
    size_t len;
    unsigned long long need = 0;
    unsigned char *mt = pack(3 * MiB, MiB, true, &len);
    assert_true(ce_xzmt_block_need(mt, len, &need));
    /* a 1 MiB block: its output, its input (half as much again), preset 0's
     * 256 KiB dictionary and 1 MiB of slack: more than 2 MiB, under 4 */
    assert_true(need > 2 * MiB && need < 4 * MiB);
    assert_false(ce_xzmt_block_need(mt, 13, &need));      /* the header is not there yet */
    unsigned char keep = mt[13];
    mt[13] &= 0x3F;                                        /* no sizes in the header */
    assert_false(ce_xzmt_block_need(mt, len, &need));
    mt[13] = keep;
    mt[0] = 0;                                             /* not .xz */
    assert_false(ce_xzmt_block_need(mt, len, &need));
    free(mt);
    unsigned char *st = pack(MiB, 0, false, &len);        /* xz -T1: one block, sequential only */
    assert_false(ce_xzmt_block_need(st, len, &need));
    free(st);
}

static void test_share(void **state)
{
    (void)state;
    long long total = 768 * MiB, need = 36 * MiB;
    /* the largest third of the bytes: a third of the budget, in whole threads */
    long long g = ce_slots_share(total, total, 3000, 1000, need, 16);
    assert_true(g % need == 0 && g >= 6 * need && g <= 8 * need);
    /* the only archive: everything, at most one thread a core */
    assert_true(ce_slots_share(total, total, 1000, 1000, need, 16) == 16 * need);
    assert_true(ce_slots_share(112 * MiB, 112 * MiB, 1000, 1000, 37 * MiB, 2) == 2 * 37 * MiB);
    /* never past what is free; nothing (one thread, no threaded buffers) when one does not fit */
    assert_true(ce_slots_share(total, 2 * need, 1000, 1000, need, 16) == 2 * need);
    assert_true(ce_slots_share(total, need - 1, 1000, 1000, need, 16) == 0);
    /* a small archive still gets one thread while one fits */
    assert_true(ce_slots_share(total, total, 1000000, 1, need, 16) == need);
}

/* Per block (xzblk.c): a decoder takes one block's memory at a time while it
 * is free and within its archive's share, or beyond the share while no other
 * decoder waits for memory; what one archive gives back (a block read, the
 * archive done, its unpacker dead) goes to the others. */
static void test_pool(void **state)
{
    (void)state;
    static ce_slots s;
    long long need = 30 * MiB;
    assert_int_equal(ce_slots_init(&s, 4), 0);
    ce_slots_budget(&s, 120 * MiB, 400);
    /* half the bytes: two blocks within its share */
    assert_true(ce_slots_blk_take(&s, 0, 200, need, 16));
    assert_true(ce_slots_blk_take(&s, 0, 200, need, 16));
    /* a third is past its share, but nobody else waits: granted */
    assert_true(ce_slots_blk_take(&s, 0, 200, need, 16));
    assert_true(ce_slots_blk_take(&s, 1, 100, need, 16));
    assert_true(s.mem_free == 0);
    assert_false(ce_slots_blk_take(&s, 2, 100, need, 16));     /* all of it is out: 2 waits */
    assert_true(s.mem_wait[2]);
    ce_slots_blk_give(&s, 0, need);                              /* a block of 0's was read */
    assert_false(ce_slots_blk_take(&s, 0, 200, need, 16));     /* 0 is at its share and 2 waits */
    assert_true(ce_slots_blk_take(&s, 2, 100, need, 16));      /* 2 gets it */
    assert_false(s.mem_wait[2]);
    ce_slots_done(&s, 0, 200);                                   /* back, and its bytes are no longer work */
    assert_true(s.mem_free == 2 * need && s.work_left == 200 && !s.mem_wait[0]);
    ce_slots_done(&s, 0, 200);                                   /* once only */
    assert_true(s.mem_free == 2 * need && s.work_left == 200);
    ce_slots_done(&s, 1, 100);                                   /* 1 finished too */
    assert_true(s.mem_free == 3 * need);
    /* the archives that are left get what the finished ones gave back */
    assert_true(ce_slots_blk_take(&s, 2, 100, need, 16));
    assert_true(ce_slots_blk_take(&s, 2, 100, need, 16));
    assert_true(ce_slots_blk_take(&s, 2, 100, need, 16));
    assert_true(s.mem_free == 0 && s.mem_held[2] == 4 * need);
    ce_slots_blk_give(&s, 2, 5 * need);                          /* never more than it holds */
    assert_true(s.mem_free == 4 * need && s.mem_held[2] == 0);
    ce_slots_destroy(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget_scales),
        cmocka_unit_test(test_block_need),
        cmocka_unit_test(test_share),
        cmocka_unit_test(test_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
