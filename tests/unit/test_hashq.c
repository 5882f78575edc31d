/* ce_hashq (hashq.h, issue 41): the per-file digests made on the hashing
 * thread give the very index the unpacker's own hashing gives (same
 * entries, same order, drops in turn), through slots of 509 bytes, 2 of them
 * (a lost, repeated or reordered slot changes a digest), and through the
 * default queue; free at any point returns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive/hashq.h"
#include "archive/pkgindex.h"
#include "core/file.h"
#include "fetch/digest.h"

#include "mutex_check.h"

#define FILES 40

static unsigned char data[3u << 20];

static size_t size_of(int i)
{
    return i % 7 == 3 ? 0 : (size_t)((i * 104729u) % (sizeof data / 8)) + (i % 5 ? 0 : sizeof data / 2);
}

/* FILES files (some empty, some MiBs), handed over in pieces of odd sizes;
 * file 10's inode replaced by file 20 (a drop); the index saved at path */
static void make_index(const char *tree, const char *path, size_t slot, unsigned slots)
{
    ce_pkgindex_list *l = ce_pkgindex_list_new();
    assert_non_null(l);
    ce_hashq *q = slot ? ce_hashq_new(l, slot, slots) : NULL;
    if (slot) assert_non_null(q);
    ce_sha256 *md = ce_sha256_new();
    for (int i = 0; i < FILES; i++) {
        size_t n = size_of(i), off = (size_t)i * 997 % 4096, piece = 1 + (size_t)i * 31337 % 70000;
        if (i == 20) {
            if (q) ce_hashq_drop(q, 1010);
            else ce_pkgindex_list_drop(l, 1010);
        }
        for (size_t done = 0; done < n;) {
            size_t k = n - done < piece ? n - done : piece;
            if (q) ce_hashq_data(q, data + off + done, k);
            else ce_sha256_update(md, data + off + done, k);
            done += k;
        }
        unsigned long long ino = i == 20 ? 1010 : 1000 + (unsigned long long)i;
        if (q) {
            ce_hashq_end(q, ino, (long long)n);
        } else {
            char hex[CE_SHA256_HEX];
            ce_sha256_final(md, hex);
            assert_int_equal(ce_pkgindex_list_add(l, ino, (long long)n, hex), 0);
        }
    }
    if (q) assert_int_equal(ce_hashq_finish(q), 0);
    assert_int_equal(ce_pkgindex_list_save(l, tree, path), CE_OK);
    ce_pkgindex_list_free(l);
    ce_sha256_free(md);
}

static void test_same_index(void **state)
{
    (void)state;
    alarm(120);
    uint32_t r = 7;
    for (size_t i = 0; i < sizeof data; i++) {
        r = r * 1103515245u + 12345u;
        data[i] = (unsigned char)(r >> 24);
    }
    char dir[] = "/tmp/cudaenv-hashq-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char want[64], tiny[64], dflt[64];
    snprintf(want, sizeof want, "%s/want.json", dir);
    snprintf(tiny, sizeof tiny, "%s/tiny.json", dir);
    snprintf(dflt, sizeof dflt, "%s/default.json", dir);
    make_index(dir, want, 0, 0);
    make_index(dir, tiny, 509, 2);
    make_index(dir, dflt, CE_HASHQ_SLOT, CE_HASHQ_SLOTS);
    char *a = NULL, *b = NULL, *c = NULL;
    assert_int_equal(ce_file_read(want, 1 << 20, &a, NULL), CE_OK);
    assert_int_equal(ce_file_read(tiny, 1 << 20, &b, NULL), CE_OK);
    assert_int_equal(ce_file_read(dflt, 1 << 20, &c, NULL), CE_OK);
    assert_non_null(strstr(a, "\"ino\":1010"));
    assert_string_equal(a, b);
    assert_string_equal(a, c);
    free(a);
    free(b);
    free(c);
    unlink(want);
    unlink(tiny);
    unlink(dflt);
    rmdir(dir);
    assert_int_equal(__atomic_load_n(&bad_unlocks, __ATOMIC_ACQUIRE), 0);
    alarm(0);
}

/* free (after a failure) with the queue full, half full, empty: it returns */
static void test_free_at_any_point(void **state)
{
    (void)state;
    alarm(60);
    for (int round = 0; round < 30; round++) {
        ce_pkgindex_list *l = ce_pkgindex_list_new();
        ce_hashq *q = ce_hashq_new(l, 4096, 2);
        assert_non_null(q);
        ce_hashq_data(q, data, (size_t)round * 1000);
        if (round % 3 == 0) ce_hashq_end(q, 1, round * 1000);
        ce_hashq_free(q);
        ce_pkgindex_list_free(l);
    }
    assert_null(ce_hashq_new(NULL, 4096, 2));
    alarm(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_index),
        cmocka_unit_test(test_free_at_any_point),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
