/* ce_xzmt's decoding thread (issue 13): a single-block .xz decodes in a
 * thread of its own while the caller consumes the plain bytes (the pull
 * callback runs there), the bytes are the same as without it, a corrupt
 * stream still fails, and freeing the decoder while its pull waits for bytes
 * that never come returns (the pull sees ce_xzmt_stopping). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <lzma.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/ctx.h"
#include "archive/xzmt.h"

#define PLAIN (3u << 20)
#define PIECE (64u << 10)

#include "mutex_check.h"

static unsigned char *plain, *packed;
static size_t packed_len;

typedef struct src {
    size_t pos, stop_at;    /* stop_at: serve this many bytes, then wait for the stop */
    pthread_t caller;
    bool other_thread;      /* pull ran outside the caller's thread */
    int waiting;            /* the pull reached stop_at */
    ce_xzmt *x;
} src;

static ssize_t pull(void *ud, const unsigned char **buf)
{
    src *s = ud;
    if (!pthread_equal(pthread_self(), s->caller)) s->other_thread = true;
    if (s->pos >= s->stop_at) {
        __atomic_store_n(&s->waiting, 1, __ATOMIC_RELEASE);
        struct timespec ts = { 0, 1000 * 1000 };
        while (!ce_xzmt_stopping(s->x)) nanosleep(&ts, NULL);
        return -1;
    }
    size_t n = packed_len - s->pos < PIECE ? packed_len - s->pos : PIECE;
    *buf = packed + s->pos;
    s->pos += n;
    return (ssize_t)n;
}

static int setup(void **state)
{
    (void)state;
    plain = malloc(PLAIN);
    packed = malloc(PLAIN + (1u << 16));
    if (!plain || !packed) return -1;
    uint32_t r = 1;
    for (size_t i = 0; i < PLAIN; i++) {   /* 1 MiB of noise, then text with some noise */
        r = r * 1103515245u + 12345u;
        plain[i] = i >= (1u << 20) && (i / 4096) % 3 ? (unsigned char)('a' + (i * 7 + i / 13) % 26)
                                                     : (unsigned char)(r >> 24);
    }
    /* one block without sizes in its header, as `xz -T1` writes (and
     * liblzma then decodes it in the calling thread, as it arrives) */
    lzma_stream st = LZMA_STREAM_INIT;
    if (lzma_easy_encoder(&st, 1, LZMA_CHECK_CRC64) != LZMA_OK) return -1;
    st.next_in = plain;
    st.avail_in = PLAIN;
    st.next_out = packed;
    st.avail_out = PLAIN + (1u << 16);
    if (lzma_code(&st, LZMA_FINISH) != LZMA_STREAM_END) return -1;
    packed_len = PLAIN + (1u << 16) - st.avail_out;
    lzma_end(&st);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(plain);
    free(packed);
    return 0;
}

/* everything through ce_xzmt_read, compared with the plain bytes */
static void decode_all(src *s)
{
    const unsigned char *first;
    s->caller = pthread_self();
    ssize_t n = pull(s, &first);
    assert_true(n > 0 && ce_xzmt_magic(first, (size_t)n));
    s->x = ce_xzmt_new(pull, s, first, (size_t)n, 1);
    assert_non_null(s->x);
    size_t got = 0;
    for (;;) {
        const void *out;
        ssize_t k = ce_xzmt_read(s->x, &out);
        assert_true(k >= 0);
        if (k == 0) break;
        assert_true(got + (size_t)k <= PLAIN);
        assert_memory_equal(out, plain + got, (size_t)k);
        got += (size_t)k;
    }
    assert_int_equal(got, PLAIN);
    ce_xzmt_free(s->x);
}

static void test_decodes_in_its_own_thread(void **state)
{
    (void)state;
    src s = { .stop_at = SIZE_MAX };
    decode_all(&s);
    assert_true(s.other_thread);
}

static void test_same_bytes_without_the_thread(void **state)
{
    (void)state;
    static ce_ctx c;   /* settings are read once, by ce_ctx_init */
    setenv("CUDAENV_XZ_NO_PIPE", "1", 1);
    ce_ctx_init(&c);
    src s = { .stop_at = SIZE_MAX };
    decode_all(&s);
    unsetenv("CUDAENV_XZ_NO_PIPE");
    ce_ctx_init(&c);
    assert_false(s.other_thread);
}

static void test_corrupt_stream_fails(void **state)
{
    (void)state;
    packed[packed_len / 2] ^= 0x55;
    src s = { .stop_at = SIZE_MAX, .caller = pthread_self() };
    const unsigned char *first;
    ssize_t n = pull(&s, &first);
    s.x = ce_xzmt_new(pull, &s, first, (size_t)n, 1);
    assert_non_null(s.x);
    ssize_t k;
    const void *out;
    while ((k = ce_xzmt_read(s.x, &out)) > 0) {}
    packed[packed_len / 2] ^= 0x55;
    assert_int_equal(k, -1);
    assert_false(ce_xzmt_pull_failed(s.x));
    assert_non_null(ce_xzmt_error(s.x));
    ce_xzmt_free(s.x);
}

/* The caller is done early (libarchive saw the tar's end, or an entry was
 * refused) while the decoding thread waits in pull for a download: free
 * returns (the pull sees ce_xzmt_stopping). */
/* A block written with its sizes (as xz -T2 writes): what it takes to decode counts the
 * LZMA2 dictionary of its filter properties (8 MiB at preset 6) besides the plain size. */
static void test_block_need_counts_the_dictionary(void **state)
{
    (void)state;
    lzma_mt mt = { .threads = 2, .block_size = 256u << 10, .preset = 6, .check = LZMA_CHECK_CRC64 };
    lzma_stream st = LZMA_STREAM_INIT;
    assert_int_equal(lzma_stream_encoder_mt(&st, &mt), LZMA_OK);
    size_t cap = PLAIN + (1u << 16);
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    st.next_in = plain;
    st.avail_in = PLAIN;
    st.next_out = out;
    st.avail_out = cap;
    assert_int_equal(lzma_code(&st, LZMA_FINISH), LZMA_STREAM_END);
    size_t len = cap - st.avail_out;
    lzma_end(&st);
    unsigned long long need = 0;
    assert_true(ce_xzmt_block_need(out, len, &need));
    assert_true(need >= (8ull << 20) + (256u << 10));   /* dictionary + the block's plain bytes */
    assert_true(need < (8ull << 20) + (4ull << 20));
    /* the stream header and the block header are all it reads: a first read that ends
     * where the block header ends plans the same; one byte short, nothing to plan with */
    size_t hdr = 12 + ((size_t)out[12] + 1) * 4;
    unsigned long long need_hdr = 0;
    assert_true(ce_xzmt_block_need(out, hdr, &need_hdr));
    assert_int_equal(need_hdr, need);
    assert_false(ce_xzmt_block_need(out, hdr - 1, &need_hdr));
    /* a block without sizes (xz -T1): nothing to plan with */
    assert_false(ce_xzmt_block_need(packed, packed_len, &need));
    free(out);
}

static void test_free_while_pull_waits(void **state)
{
    (void)state;
    alarm(30); /* a hang fails the test */
    /* 128 KiB of noise: less than the one block read + the ring ahead */
    src s = { .stop_at = 2 * PIECE, .caller = pthread_self() };
    const unsigned char *first;
    ssize_t n = pull(&s, &first);
    s.x = ce_xzmt_new(pull, &s, first, (size_t)n, 1);
    assert_non_null(s.x);
    const void *out;
    assert_true(ce_xzmt_read(s.x, &out) > 0);
    struct timespec ts = { 0, 50 * 1000 * 1000 };
    for (int i = 0; i < 100 && !__atomic_load_n(&s.waiting, __ATOMIC_ACQUIRE); i++) nanosleep(&ts, NULL);
    assert_true(__atomic_load_n(&s.waiting, __ATOMIC_ACQUIRE)); /* the pull is waiting now */
    ce_xzmt_free(s.x);
    alarm(0);
}

/* Read one block, then free while the thread decodes ahead: the stop is said under the
 * lock (no unlock of a mutex the thread does not hold, in any test so far), and free
 * returns.  Run many times, with the reader stopping at a different point each time. */
static void test_free_early_under_the_lock(void **state)
{
    (void)state;
    alarm(60);
    for (int round = 0; round < 20; round++) {
        src s = { .stop_at = SIZE_MAX, .caller = pthread_self() };
        const unsigned char *first;
        ssize_t n = pull(&s, &first);
        s.x = ce_xzmt_new(pull, &s, first, (size_t)n, 1);
        assert_non_null(s.x);
        const void *out;
        for (int k = 0; k <= round % 4; k++) assert_true(ce_xzmt_read(s.x, &out) > 0);
        ce_xzmt_free(s.x);
    }
    alarm(0);
    assert_int_equal(__atomic_load_n(&bad_unlocks, __ATOMIC_RELAXED), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decodes_in_its_own_thread),
        cmocka_unit_test(test_same_bytes_without_the_thread),
        cmocka_unit_test(test_corrupt_stream_fails),
        cmocka_unit_test(test_free_while_pull_waits),
        cmocka_unit_test(test_block_need_counts_the_dictionary),
        cmocka_unit_test(test_free_early_under_the_lock),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
