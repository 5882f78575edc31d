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
#include "core/ctx.h"
#include "core/error.h"
#include "core/file.h"
#include "core/hostcc.h"
#include "core/json.h"
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
    ce_bytes_text(b, sizeof b, 1048575); assert_string_equal(b, "1.0 MiB");   /* not "1024.0 KiB" */
    ce_bytes_text(b, sizeof b, 1023); assert_string_equal(b, "1023 B");
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

/* ce_path_plain: what realpath returns unchanged when no component is a link */
static void test_path_plain(void **state)
{
    (void)state;
    assert_true(ce_path_plain("/"));
    assert_true(ce_path_plain("/opt/cudaenv/versions/12.4.1"));
    assert_true(ce_path_plain("/opt/.cudaenv/a..b/.x"));        /* dots inside names are names */
    assert_false(ce_path_plain("opt/cudaenv"));                 /* relative */
    assert_false(ce_path_plain(""));
    assert_false(ce_path_plain("/opt//cudaenv"));
    assert_false(ce_path_plain("/opt/cudaenv/"));               /* a trailing slash */
    assert_false(ce_path_plain("/opt/./cudaenv"));
    assert_false(ce_path_plain("/opt/cudaenv/.."));
    assert_false(ce_path_plain("/opt/../etc"));
    assert_false(ce_path_plain("/."));
}

/* ce_join: an overlong path is an error naming it, never a cut-short path */
static void test_join_names_overflow(void **state)
{
    (void)state;
    ce_ctx *ctx = calloc(1, sizeof *ctx);
    assert_non_null(ctx);
    char p[CE_PATH_MAX], dir[CE_PATH_MAX];
    assert_int_equal(ce_join(p, sizeof p, "/store/versions", "12.4.1"), CE_OK);
    assert_string_equal(p, "/store/versions/12.4.1");
    memset(dir, 'd', sizeof dir - 40);
    dir[0] = '/';
    dir[sizeof dir - 40] = '\0';
    assert_int_equal(ce_join(p, sizeof p, dir, "a-name-that-does-not-fit-any-more-0123456789-0123456789-0123456789-"
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

/* settings and test seams: read once by ce_ctx_init, only CUDAENV_* names it
 * knows, NULL when unset, "" kept as set-but-empty; later changes to the
 * environment are not seen until the next ce_ctx_init */
static void test_settings(void **state)
{
    (void)state;
    ce_ctx ctx;
    setenv("CUDAENV_LDCONFIG", "none", 1);
    setenv("CUDAENV_DOCTOR_PYTHON", "", 1);
    setenv("CUDAENV_ROOT", "/opt/ce", 1);
    setenv("CUDAENV_PLATFORM", "linux-sbsa", 1);
    setenv("CUDAENV_NOT_A_SETTING", "x", 1);
    setenv("XCUDAENV_FULL", "/nope", 1);
    unsetenv("CUDAENV_FULL");
    unsetenv("CUDAENV_STALL_TIMEOUT");
    ce_ctx_init(&ctx);
    assert_string_equal(ctx.set.ldconfig, "none");
    assert_non_null(ctx.set.doctor_python);
    assert_string_equal(ctx.set.doctor_python, "");
    assert_null(ctx.set.full);
    assert_null(ctx.set.stall_timeout);
    assert_string_equal(ctx.root, "/opt/ce");
    assert_string_equal(ctx.platform, "linux-sbsa");
    assert_string_equal(ce_settings_now()->ldconfig, "none");
    setenv("CUDAENV_STALL_TIMEOUT", "7", 1);
    assert_null(ctx.set.stall_timeout);                 /* read once */
    assert_null(ce_settings_now()->stall_timeout);
    ce_ctx_init(&ctx);
    assert_string_equal(ctx.set.stall_timeout, "7");
    assert_int_equal(ce_setting_long(ctx.set.stall_timeout, 30, 1), 7);
    assert_int_equal(ce_setting_long(NULL, 30, 1), 30);
    assert_int_equal(ce_setting_long("", 30, 1), 30);
    assert_int_equal(ce_setting_long("0", 30, 1), 30);   /* below min */
    assert_int_equal(ce_setting_long("0", 30, 0), 0);
    assert_int_equal(ce_setting_long("12x", 30, 1), 30);
    /* self_dir only when asked */
    assert_string_equal(ctx.self_dir, "");
    assert_true(strlen(ce_self_dir(&ctx)) > 0 && ce_self_dir(&ctx) == ctx.self_dir);
    const char *names[] = { "CUDAENV_LDCONFIG", "CUDAENV_DOCTOR_PYTHON", "CUDAENV_ROOT", "CUDAENV_PLATFORM",
                            "CUDAENV_NOT_A_SETTING", "XCUDAENV_FULL", "CUDAENV_STALL_TIMEOUT" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unsetenv(names[i]);
}

static void test_json_str(void **state)
{
    (void)state;
    cJSON *j = cJSON_Parse("{\"a\":\"text\",\"n\":3,\"o\":{},\"long\":\"0123456789\"}");
    assert_non_null(j);
    assert_string_equal(ce_json_str(j, "a"), "text");
    assert_null(ce_json_str(j, "n"));           /* not a string */
    assert_null(ce_json_str(j, "o"));
    assert_null(ce_json_str(j, "missing"));
    assert_null(ce_json_str(NULL, "a"));
    assert_null(ce_json_str(cJSON_GetObjectItemCaseSensitive(j, "a"), "a")); /* not an object */
    char out[5] = "xxxx";
    ce_json_copy(j, "n", out, sizeof out);
    assert_string_equal(out, "");
    ce_json_copy(j, "long", out, sizeof out);   /* cut to fit, terminated */
    assert_string_equal(out, "0123");
    ce_json_copy(j, "a", out, sizeof out);
    assert_string_equal(out, "text");
    cJSON_Delete(j);
}

static void test_url_file_name(void **state)
{
    (void)state;
    char n[20];
    assert_true(ce_url_file_name("https://h/a/b/cudnn-8.9.tar.xz", n, sizeof n)); assert_string_equal(n, "cudnn-8.9.tar.xz");
    /* a token in the query, a fragment: never in a label */
    assert_true(ce_url_file_name("https://h/x/f.run?X-Amz-Signature=s3cr3t", n, sizeof n)); assert_string_equal(n, "f.run");
    assert_true(ce_url_file_name("https://h/x/f.whl#sha256=ab", n, sizeof n)); assert_string_equal(n, "f.whl");
    assert_true(ce_url_file_name("https://h/x/a b.json", n, sizeof n)); assert_string_equal(n, "a b.json");
    assert_false(ce_url_file_name("https://h/x/", n, sizeof n));                   /* no file name */
    assert_false(ce_url_file_name("https://h/x/?q=1", n, sizeof n));
    assert_false(ce_url_file_name("https://h/x/evil\nforged", n, sizeof n));      /* a control byte */
    assert_false(ce_url_file_name("https://h/x/del\x7f", n, sizeof n));
    assert_false(ce_url_file_name("https://h/0123456789abcdefghij", n, sizeof n));     /* does not fit: not cut */
    assert_true(ce_url_file_name("https://h/0123456789abcdefghi", n, sizeof n)); assert_string_equal(n, "0123456789abcdefghi");
}

/* the record files' append: whole lines, a bound, never through a symlink,
 * never blocking on a FIFO */
static void test_append_bounded(void **state)
{
    (void)state;
    char dir[] = "/tmp/ce-append-XXXXXX", p[256], q[256], *text = NULL;
    size_t len = 0;
    assert_non_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/rec", dir);
    assert_int_equal(ce_file_append_bounded(p, "a 1\n", 4, 8), 0);
    assert_int_equal(ce_file_append_bounded(p, "b 2\n", 4, 8), 0);
    assert_int_equal(ce_file_append_bounded(p, "c 3\n", 4, 8), 0);   /* 8 bytes: not past the bound yet */
    assert_int_equal(ce_file_read(p, 64, &text, &len), CE_OK);
    assert_string_equal(text, "a 1\nb 2\nc 3\n");
    free(text);
    assert_int_equal(ce_file_append_bounded(p, "d 4\n", 4, 8), 0);   /* 12 > 8: starts over */
    assert_int_equal(ce_file_read(p, 64, &text, &len), CE_OK);
    assert_string_equal(text, "d 4\n");
    free(text);
    /* a symlink at the name (to a file the writer must not touch): refused, the target unchanged */
    snprintf(q, sizeof q, "%s/victim", dir);
    FILE *f = fopen(q, "w");
    fputs("keep", f);
    fclose(f);
    unlink(p);
    assert_int_equal(symlink(q, p), 0);
    assert_int_not_equal(ce_file_append_bounded(p, "x\n", 2, 64), 0);
    assert_int_equal(ce_file_read(q, 64, &text, &len), CE_OK);
    assert_string_equal(text, "keep");
    free(text);
    unlink(p);
    /* a FIFO with no reader: fails at once; a directory: fails */
    assert_int_equal(mkfifo(p, 0644), 0);
    assert_int_not_equal(ce_file_append_bounded(p, "x\n", 2, 64), 0);
    unlink(p);
    assert_int_equal(mkdir(p, 0755), 0);
    assert_int_not_equal(ce_file_append_bounded(p, "x\n", 2, 64), 0);
    rmdir(p);
    unlink(q);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_text),
        cmocka_unit_test(test_path_join),
        cmocka_unit_test(test_path_plain),
        cmocka_unit_test(test_join_names_overflow),
        cmocka_unit_test(test_clock),
        cmocka_unit_test(test_host_cc),
        cmocka_unit_test(test_settings),
        cmocka_unit_test(test_json_str),
        cmocka_unit_test(test_url_file_name),
        cmocka_unit_test(test_append_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
