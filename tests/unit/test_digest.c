/* sha256 through EVP: known vectors, streaming in odd-sized pieces, and a
 * 3 MiB file checked against sha256sum(1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fetch/digest.h"

static void hash_str(const char *s, char hex[CE_SHA256_HEX])
{
    ce_sha256 *h = ce_sha256_new();
    assert_non_null(h);
    ce_sha256_update(h, s, strlen(s));
    ce_sha256_final(h, hex);
    ce_sha256_free(h);
}

static void test_vectors(void **state)
{
    (void)state;
    char hex[CE_SHA256_HEX];
    hash_str("", hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hash_str("abc", hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    hash_str("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* final() resets, so one object hashes several inputs; reset() drops a prefix. */
static void test_reset(void **state)
{
    (void)state;
    char hex[CE_SHA256_HEX];
    ce_sha256 *h = ce_sha256_new();
    ce_sha256_update(h, "garbage", 7);
    ce_sha256_reset(h);
    ce_sha256_update(h, "ab", 2);
    ce_sha256_update(h, "c", 1);
    ce_sha256_final(h, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ce_sha256_final(h, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ce_sha256_free(h);
}

static void test_valid(void **state)
{
    (void)state;
    assert_true(ce_sha256_valid("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    assert_false(ce_sha256_valid("E3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    assert_false(ce_sha256_valid("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85"));
    assert_false(ce_sha256_valid("../../../../etc/passwd000000000000000000000000000000000000000000"));
    assert_false(ce_sha256_valid(""));
    assert_false(ce_sha256_valid(NULL));
}

static void test_file_vs_sha256sum(void **state)
{
    (void)state;
    size_t n = 3u * 1024 * 1024 + 17;
    unsigned char *buf = malloc(n);
    assert_non_null(buf);
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        buf[i] = (unsigned char)x;
    }
    char path[] = "/tmp/cudaenv-digest-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, buf, n), (ssize_t)n);
    close(fd);

    char cmd[128], want[80] = "";
    snprintf(cmd, sizeof cmd, "sha256sum %s", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(want, sizeof want, p));
    pclose(p);
    want[64] = '\0';

    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    char hex[CE_SHA256_HEX];
    assert_int_equal(ce_sha256_file(path, hex), CE_OK);
    assert_string_equal(hex, want);

    /* streaming in pieces that straddle every boundary gives the same digest */
    ce_sha256 *h = ce_sha256_new();
    for (size_t off = 0, step = 1; off < n; off += step, step = step * 3 + 1) {
        size_t k = step < n - off ? step : n - off;
        ce_sha256_update(h, buf + off, k);
    }
    ce_sha256_final(h, hex);
    assert_string_equal(hex, want);

    /* ce_sha256_fd with a length: a prefix, and a file shorter than asked */
    fd = open(path, O_RDONLY);
    assert_int_equal(ce_sha256_fd(h, fd, 3, path), CE_OK);
    close(fd);
    ce_sha256_final(h, hex);
    char pre[CE_SHA256_HEX];
    ce_sha256_update(h, buf, 3);
    ce_sha256_final(h, pre);
    assert_string_equal(hex, pre);
    fd = open(path, O_RDONLY);
    assert_int_equal(ce_sha256_fd(h, fd, (long long)n + 1, path), CE_ERR_IO);
    assert_non_null(strstr(ce_errmsg(), path));
    close(fd);
    ce_sha256_free(h);

    unlink(path);
    assert_int_equal(ce_sha256_file(path, hex), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), path));
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_reset),
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_file_vs_sha256sum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
