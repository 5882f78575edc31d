/* The self-test's pure parts: version encodings, the exit rule, ELF checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "selftest/st_int.h"

static void test_cudnn_decode(void **state)
{
    (void)state;
    char s[32];
    st_cudnn_decode(7605, s, sizeof s);  /* <= 8.x: M*1000 + m*100 + p */
    assert_string_equal(s, "7.6.5");
    st_cudnn_decode(8700, s, sizeof s);
    assert_string_equal(s, "8.7.0");
    st_cudnn_decode(8907, s, sizeof s);
    assert_string_equal(s, "8.9.7");
    st_cudnn_decode(90300, s, sizeof s);  /* 9.x: M*10000 + m*100 + p */
    assert_string_equal(s, "9.3.0");
    st_cudnn_decode(91900, s, sizeof s);
    assert_string_equal(s, "9.19.0");
}

static void test_cuda_decode(void **state)
{
    (void)state;
    char s[32];
    st_cuda_decode(11080, s, sizeof s);
    assert_string_equal(s, "11.8");
    st_cuda_decode(13000, s, sizeof s);
    assert_string_equal(s, "13.0");
    st_cuda_decode(12020, s, sizeof s);
    assert_string_equal(s, "12.2");
    assert_int_equal(st_cuda_num("12.1.20230222"), 12010);
    assert_int_equal(st_cuda_num("13.0"), 13000);
}

static void test_exit_rule(void **state)
{
    (void)state;
    st_report r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < ST_NSTEPS; i++) r.steps[i].status = ST_PASSED;
    assert_int_equal(st_exit_code(&r), 0);
    r.steps[ST_NVCC].status = ST_SKIPPED;  /* no nvcc in the toolchain: not a GPU problem */
    assert_int_equal(st_exit_code(&r), 0);
    r.steps[ST_KERNEL].status = ST_SKIPPED;
    r.steps[ST_KERNEL].nogpu = true;
    assert_int_equal(st_exit_code(&r), 8);
    r.steps[ST_VERSIONS].status = ST_FAILED;  /* a failure wins over "no GPU" */
    assert_int_equal(st_exit_code(&r), 7);
}

static void test_step_helpers(void **state)
{
    (void)state;
    st_step s;
    memset(&s, 0, sizeof s);
    st_failf(&s, "first %d", 1);
    st_failf(&s, "second");
    st_pass(&s, "never");  /* a recorded failure stands */
    assert_int_equal(s.status, ST_FAILED);
    assert_string_equal(s.summary, "first 1");
    assert_non_null(strstr(s.evidence, "also: second\n"));
    /* a failure seen again (the loader's late pass) is said once */
    st_failf(&s, "second");
    st_failf(&s, "first %d", 1);
    st_failf(&s, "cond");   /* a prefix of a line said is still new */
    st_failf(&s, "third");
    st_failf(&s, "third");
    assert_string_equal(s.evidence, "also: second\nalso: cond\nalso: third\n");
}

static void test_elf(void **state)
{
    (void)state;
    char why[512], self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    assert_int_equal(st_elf_complete(self, why, sizeof why), 0);
    /* the first 4 KiB of it: the headers promise more than the file holds */
    char cut[] = "/tmp/cudaenv-elf-XXXXXX";
    int fd = mkstemp(cut);
    assert_true(fd >= 0);
    FILE *in = fopen(self, "rb");
    char buf[4096];
    size_t got = fread(buf, 1, sizeof buf, in);
    fclose(in);
    assert_int_equal(write(fd, buf, got), (ssize_t)got);
    close(fd);
    assert_int_equal(st_elf_complete(cut, why, sizeof why), -1);
    assert_non_null(strstr(why, "truncated"));
    unlink(cut);
    assert_int_equal(st_elf_complete("/etc/hostname", why, sizeof why), -1);
    char so[128];
    assert_int_equal(st_elf_soname("/etc/hostname", so, sizeof so), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cudnn_decode), cmocka_unit_test(test_cuda_decode),
        cmocka_unit_test(test_exit_rule), cmocka_unit_test(test_step_helpers),
        cmocka_unit_test(test_elf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
