/* The small leaves of src/core: path joins, the byte formatter, the clock,
 * the host compiler nvcc will use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bytes.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/file.h"
#include "core/hostcc.h"
#include "core/path.h"

static void test_bytes_text(void **state)
{
    (void)state;
    char b[32];
    ce_bytes_text(b, sizeof b, 0); assert_string_equal(b, "0 B");
    ce_bytes_text(b, sizeof b, 1000); assert_string_equal(b, "1000 B");
    ce_bytes_text(b, sizeof b, 1024); assert_string_equal(b, "1.0 KiB");
    ce_bytes_text(b, sizeof b, 1536); assert_string_equal(b, "1.5 KiB");
    ce_bytes_text(b, sizeof b, 886469427.0); assert_string_equal(b, "845.4 MiB");
    ce_bytes_text(b, sizeof b, 5.0 * 1024 * 1024 * 1024 * 1024 * 1024); assert_string_equal(b, "5120.0 TiB");
}

static void test_path_join(void **state)
{
    (void)state;
    char p[16];
    assert_int_equal(ce_path_join(p, sizeof p, "/a", "b"), CE_OK); assert_string_equal(p, "/a/b");
    assert_int_equal(ce_path_join(p, sizeof p, "/a/", "b"), CE_OK); assert_string_equal(p, "/a/b");
    assert_int_equal(ce_path_join(p, sizeof p, "", "b"), CE_OK); assert_string_equal(p, "b");
    assert_int_equal(ce_path_join(p, sizeof p, "/0123456789", "abcd"), CE_ERR_OTHER);
    char s[] = "/x///";
    ce_path_strip_trailing(s); assert_string_equal(s, "/x");
    char r[] = "///";
    ce_path_strip_trailing(r); assert_string_equal(r, "/");
}

/* ce_join: an overlong path is an error naming it, never a cut-short path */
static void test_join_names_overflow(void **state)
{
    (void)state;
    ce_ctx *ctx = calloc(1, sizeof *ctx);
    assert_non_null(ctx);
    char p[CE_PATH_MAX], dir[CE_PATH_MAX];
    assert_int_equal(ce_join(ctx, p, sizeof p, "/store/versions", "12.4.1"), CE_OK);
    assert_string_equal(p, "/store/versions/12.4.1");
    memset(dir, 'd', sizeof dir - 40);
    dir[0] = '/';
    dir[sizeof dir - 40] = '\0';
    assert_int_equal(ce_join(ctx, p, sizeof p, dir, "a-name-that-does-not-fit-any-more-0123456789-0123456789-0123456789-"
                             "0123456789"), CE_ERR_OTHER);
    assert_non_null(strstr(ce_errmsg(), "a-name-that-does-not-fit"));
    assert_non_null(strstr(ce_errmsg(), "/ddd"));
    assert_non_null(strstr(ce_errmsg(), "a path longer than 4095 bytes: a-name-that-does-not-fit"));
    free(ctx);
}

static void test_clock(void **state)
{
    (void)state;
    double a = ce_mono_ms(), s = ce_mono_s();
    usleep(2000);
    assert_true(ce_mono_ms() > a);
    assert_true(ce_mono_s() > s);
    assert_true(ce_mono_ms() / 1000.0 - ce_mono_s() < 1.0);
}

static void test_host_cc(void **state)
{
    (void)state;
    char dir[] = "/tmp/cudaenv-hostcc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cc[64], where[4096], full[128];
    snprintf(cc, sizeof cc, "%s/g++-99", dir);
    FILE *f = fopen(cc, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\necho 99.1.0\n", f);
    fclose(f);
    chmod(cc, 0755);
    setenv("NVCC_CCBIN", cc, 1);
    assert_int_equal(ce_host_cc(where, sizeof where, full, sizeof full), 99);
    assert_string_equal(where, cc);
    assert_string_equal(full, "99.1.0");
    setenv("NVCC_CCBIN", "/nonexistent/g++", 1);
    assert_int_equal(ce_host_cc(where, sizeof where, full, sizeof full), 0);
    unsetenv("NVCC_CCBIN");
    unlink(cc);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_text),
        cmocka_unit_test(test_path_join),
        cmocka_unit_test(test_join_names_overflow),
        cmocka_unit_test(test_clock),
        cmocka_unit_test(test_host_cc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
