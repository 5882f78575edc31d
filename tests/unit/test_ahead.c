/* ce_ahead (ahead.h, issue 41): a .zst or .gz stream decoded on a thread of
 * its own through a ring of chunks hands out every plain byte once, in order
 * (a ring of 2 chunks of an odd few KiB, pulls of odd sizes, over 6 MiB: a
 * lost, repeated or reordered chunk changes the digest), a truncated or
 * corrupt stream fails with libarchive's words after the bytes before it, a
 * failed pull is told apart, and free returns at any point: while the
 * thread waits for room in the ring and while its pull waits for bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "archive/ahead.h"
#include "fetch/digest.h"

#include "mutex_check.h"

#define PLAIN (6u << 20)

static unsigned char *plain;
static unsigned char *zst, *gz;
static size_t zst_len, gz_len;

/* plain through libarchive's zstd or gzip writer (raw format: the bytes as they are) */
static unsigned char *pack(int (*filter)(struct archive *), size_t *len)
{
    size_t cap = PLAIN + (1u << 20);
    unsigned char *out = malloc(cap);
    struct archive *a = archive_write_new();
    struct archive_entry *e = archive_entry_new();
    if (!out || !a || !e || filter(a) != ARCHIVE_OK || archive_write_set_format_raw(a) != ARCHIVE_OK ||
        archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
        archive_write_open_memory(a, out, cap, len) != ARCHIVE_OK)
        return NULL;
    archive_entry_set_pathname(e, "data");
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_size(e, PLAIN);
    if (archive_write_header(a, e) != ARCHIVE_OK || archive_write_data(a, plain, PLAIN) != (la_ssize_t)PLAIN ||
        archive_write_close(a) != ARCHIVE_OK)
        return NULL;
    archive_entry_free(e);
    archive_write_free(a);
    return out;
}

static int setup(void **state)
{
    (void)state;
    plain = malloc(PLAIN);
    if (!plain) return -1;
    uint32_t r = 1;
    for (size_t i = 0; i < PLAIN; i++) {   /* noise and text, so chunks differ from one another */
        r = r * 1103515245u + 12345u;
        plain[i] = (i / 8192) % 3 ? (unsigned char)('a' + (i * 7 + i / 13) % 26) : (unsigned char)(r >> 24);
    }
    zst = pack(archive_write_add_filter_zstd, &zst_len);
    gz = pack(archive_write_add_filter_gzip, &gz_len);
    return zst && gz ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(plain);
    free(zst);
    free(gz);
    return 0;
}

typedef struct src {
    const unsigned char *data;
    size_t len, pos, piece;
    size_t stop_at;          /* serve this many bytes, then wait for stop (or fail, below) */
    bool fail_at_stop;       /* at stop_at: fail instead of waiting */
    int stop, waiting;       /* atomics: the caller's stop flag, the pull reached stop_at */
    int pulls;
} src;

static ssize_t pull(void *ud, const unsigned char **buf)
{
    src *s = ud;
    s->pulls++;
    if (s->pos >= s->stop_at) {
        if (s->fail_at_stop) return -1;
        __atomic_store_n(&s->waiting, 1, __ATOMIC_RELEASE);
        struct timespec ts = { 0, 1000 * 1000 };
        while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) nanosleep(&ts, NULL);
        return -1;
    }
    size_t n = s->len - s->pos < s->piece ? s->len - s->pos : s->piece;
    *buf = s->data + s->pos;
    s->pos += n;
    return (ssize_t)n;
}

/* Everything read from x: its digest, the byte count, the last read's answer. */
static ssize_t drain(ce_ahead *x, char hex[CE_SHA256_HEX], size_t *total, size_t chunk, bool *prefix)
{
    ce_sha256 *md = ce_sha256_new();
    const void *out;
    ssize_t n;
    *total = 0;
    *prefix = true;
    while ((n = ce_ahead_read(x, &out)) > 0) {
        assert_true((size_t)n <= chunk);
        if (*total + (size_t)n > PLAIN || memcmp(out, plain + *total, (size_t)n) != 0) *prefix = false;
        ce_sha256_update(md, out, (size_t)n);
        *total += (size_t)n;
    }
    ce_sha256_final(md, hex);
    ce_sha256_free(md);
    return n;
}

static void plain_hex(char hex[CE_SHA256_HEX])
{
    ce_sha256 *md = ce_sha256_new();
    ce_sha256_update(md, plain, PLAIN);
    ce_sha256_final(md, hex);
    ce_sha256_free(md);
}

/* the whole stream through a tiny ring: the same bytes, in order */
static void same_bytes(const unsigned char *data, size_t len, size_t chunk, unsigned chunks, size_t piece)
{
    alarm(60);
    src s = { .data = data, .len = len, .piece = piece, .stop_at = SIZE_MAX };
    const unsigned char *first;
    ssize_t n = pull(&s, &first);
    assert_true(n > 0 && ce_ahead_magic(first, (size_t)n));
    ce_ahead *x = ce_ahead_new(pull, &s, first, (size_t)n, chunk, chunks);
    assert_non_null(x);
    char got[CE_SHA256_HEX], want[CE_SHA256_HEX];
    size_t total;
    bool prefix;
    assert_int_equal(drain(x, got, &total, chunk, &prefix), 0);
    assert_true(prefix);
    assert_int_equal(total, PLAIN);
    plain_hex(want);
    assert_string_equal(got, want);
    assert_int_equal(ce_ahead_read(x, (const void **)&first), 0);   /* the end stays the end */
    ce_ahead_free(x);
    assert_int_equal(__atomic_load_n(&bad_unlocks, __ATOMIC_ACQUIRE), 0);
    alarm(0);
}

static void test_zstd_tiny_ring(void **state)
{
    (void)state;
    same_bytes(zst, zst_len, 4093, 2, 1000);
}

static void test_gzip_tiny_ring(void **state)
{
    (void)state;
    same_bytes(gz, gz_len, 4093, 3, 777);
}

static void test_zstd_default_ring(void **state)
{
    (void)state;
    same_bytes(zst, zst_len, CE_AHEAD_CHUNK, CE_AHEAD_CHUNKS, 1u << 20);
}

static void test_magic(void **state)
{
    (void)state;
    assert_true(ce_ahead_magic(zst, 4));
    assert_true(ce_ahead_magic(gz, 2));
    assert_false(ce_ahead_magic(zst, 3));
    assert_false(ce_ahead_magic("\xfd" "7zXZ", 6));
    assert_false(ce_ahead_magic("ustar", 5));
}

/* cut in the middle, or a byte changed there: an error (not the pull's),
 * in libarchive's words, after bytes that are all the plain's */
static void broken(unsigned char *data, size_t len, bool corrupt)
{
    alarm(60);
    unsigned char *copy = malloc(len);
    memcpy(copy, data, len);
    if (corrupt)
        for (size_t i = len / 2; i < len / 2 + 64; i++) copy[i] ^= 0x5a;
    src s = { .data = copy, .len = corrupt ? len : len / 2, .piece = 4096, .stop_at = SIZE_MAX };
    const unsigned char *first;
    ssize_t n = pull(&s, &first);
    ce_ahead *x = ce_ahead_new(pull, &s, first, (size_t)n, 8192, 2);
    assert_non_null(x);
    char got[CE_SHA256_HEX];
    size_t total;
    bool prefix;
    ssize_t end = drain(x, got, &total, 8192, &prefix);
    if (corrupt && end == 0) {
        /* a frame without a checksum (libarchive writes none) may decode to
         * other bytes: the archive's sha256 is what catches it, in ce_unpack */
        assert_false(prefix && total == PLAIN);
        ce_ahead_free(x);
        free(copy);
        return;
    }
    assert_int_equal(end, -1);
    assert_true(prefix);
    assert_true(total < PLAIN);
    assert_false(ce_ahead_pull_failed(x));
    assert_true(ce_ahead_errno(x) > 0);
    assert_true(strlen(ce_ahead_error(x)) > 0);
    ce_ahead_free(x);
    free(copy);
    alarm(0);
}

static void test_truncated_zstd(void **state)
{
    (void)state;
    broken(zst, zst_len, false);
}

static void test_corrupt_zstd(void **state)
{
    (void)state;
    broken(zst, zst_len, true);
}

static void test_truncated_gzip(void **state)
{
    (void)state;
    broken(gz, gz_len, false);
}

/* a pull that fails is told apart from a corrupt stream */
static void test_pull_fails(void **state)
{
    (void)state;
    alarm(60);
    src s = { .data = zst, .len = zst_len, .piece = 65536, .stop_at = 3 * 65536, .fail_at_stop = true };
    const unsigned char *first;
    ssize_t n = pull(&s, &first);
    ce_ahead *x = ce_ahead_new(pull, &s, first, (size_t)n, 65536, 2);
    assert_non_null(x);
    char got[CE_SHA256_HEX];
    size_t total;
    bool prefix;
    assert_int_equal(drain(x, got, &total, 65536, &prefix), -1);
    assert_true(prefix);
    assert_true(ce_ahead_pull_failed(x));
    ce_ahead_free(x);
    alarm(0);
}

/* free while the thread waits for room (nothing read), after one chunk, and
 * while the pull waits for bytes that never come (the caller's stop flag,
 * as unpack_reader_stop sets it): it returns every time */
static void test_free_at_any_point(void **state)
{
    (void)state;
    alarm(60);
    for (int round = 0; round < 20; round++) {
        src s = { .data = zst, .len = zst_len, .piece = 4096, .stop_at = SIZE_MAX };
        const unsigned char *first;
        ssize_t n = pull(&s, &first);
        ce_ahead *x = ce_ahead_new(pull, &s, first, (size_t)n, 16384, 2);
        assert_non_null(x);
        const void *out;
        for (int i = 0; i < round % 4; i++) assert_true(ce_ahead_read(x, &out) > 0);
        if (round % 2) {
            struct timespec ts = { 0, 1000 * 1000 };
            nanosleep(&ts, NULL);
        }
        ce_ahead_free(x);
    }
    src s = { .data = zst, .len = zst_len, .piece = 4096, .stop_at = 3 * 4096 };
    const unsigned char *first;
    ssize_t n = pull(&s, &first);
    ce_ahead *x = ce_ahead_new(pull, &s, first, (size_t)n, 1u << 20, 2);
    assert_non_null(x);
    struct timespec ts = { 0, 10 * 1000 * 1000 };
    for (int i = 0; i < 500 && !__atomic_load_n(&s.waiting, __ATOMIC_ACQUIRE); i++) nanosleep(&ts, NULL);
    assert_true(__atomic_load_n(&s.waiting, __ATOMIC_ACQUIRE));   /* the pull waits now */
    __atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
    ce_ahead_free(x);
    assert_int_equal(__atomic_load_n(&bad_unlocks, __ATOMIC_ACQUIRE), 0);
    alarm(0);
}

static void test_bad_ring(void **state)
{
    (void)state;
    src s = { .data = zst, .len = zst_len, .piece = 4096, .stop_at = SIZE_MAX };
    assert_null(ce_ahead_new(pull, &s, zst, 4, 0, 4));
    assert_null(ce_ahead_new(pull, &s, zst, 4, 4096, 1));
    assert_int_equal(s.pulls, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zstd_tiny_ring),
        cmocka_unit_test(test_gzip_tiny_ring),
        cmocka_unit_test(test_zstd_default_ring),
        cmocka_unit_test(test_magic),
        cmocka_unit_test(test_truncated_zstd),
        cmocka_unit_test(test_corrupt_zstd),
        cmocka_unit_test(test_truncated_gzip),
        cmocka_unit_test(test_pull_fails),
        cmocka_unit_test(test_free_at_any_point),
        cmocka_unit_test(test_bad_ring),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
