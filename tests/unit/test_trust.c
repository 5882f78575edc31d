/* core/trust.c and the bounded spec reader: the policies of issue 9. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "core/trust.h"
#include "store/activate.h"

static char dir[64];

static int mk_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/ce-trust-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int rm_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_escape(void **state)
{
    (void)state;
    char out[128];
    ce_escape_into(out, sizeof out, "a\033]52;c;x\007b");
    assert_string_equal(out, "a\\x1b]52;c;x\\x07b");
    ce_escape_into(out, sizeof out, "tab\tnl\nok");
    assert_string_equal(out, "tab\tnl\nok");
    ce_escape_into(out, sizeof out, "del\x7f csi\xc2\x9b" "31m \xc3\xa9");   /* U+009B escaped, é kept */
    assert_string_equal(out, "del\\x7f csi\\xc2\\x9b31m \xc3\xa9");
    ce_escape_into(out, 6, "\033\033\033");   /* truncated at a whole escape */
    assert_string_equal(out, "\\x1b");
    char *d = ce_escape_dup("\r");
    assert_string_equal(d, "\\x0d");
    free(d);
}

static void test_stat_reason(void **state)
{
    (void)state;
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_mode = S_IFDIR | 0755;
    assert_null(ce_trust_stat_reason(&st, false));
    st.st_mode = S_IFDIR | 0775;
    assert_string_equal(ce_trust_stat_reason(&st, false), "writable by group or others");
    st.st_mode = S_IFDIR | 01777;
    assert_null(ce_trust_stat_reason(&st, true));
    assert_non_null(ce_trust_stat_reason(&st, false));
    st.st_mode = S_IFREG | 0644;
    st.st_uid = 1000;
    assert_string_equal(ce_trust_stat_reason(&st, false), "owned by uid 1000, not root");
    st.st_uid = 0;
    st.st_mode = S_IFLNK | 0777;
    assert_string_equal(ce_trust_stat_reason(&st, false), "a symlink");
}

static void test_root_absolute(void **state)
{
    (void)state;
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    snprintf(ctx.root, sizeof ctx.root, "~/.cudaenv");
    assert_int_equal(ce_trust_root(&ctx), CE_ERR_USAGE);
    assert_non_null(strstr(ce_errmsg(), "a quoted ~ is not expanded"));
    snprintf(ctx.root, sizeof ctx.root, "rel");
    assert_int_equal(ce_trust_root(&ctx), CE_ERR_USAGE);
}

static void test_store_open_no_symlinks(void **state)
{
    (void)state;
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    snprintf(ctx.root, sizeof ctx.root, "%s", dir);
    char p[256], victim[256];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(p, sizeof p, "%s/.lock", dir);
    assert_int_equal(symlink(victim, p), 0);
    assert_true(ce_store_open(&ctx, ".lock", O_RDWR | O_CREAT, 0644) < 0);
    assert_int_equal(access(victim, F_OK), -1);
    /* a symlinked directory on the way is refused too */
    snprintf(p, sizeof p, "%s/logs", dir);
    assert_int_equal(symlink("/tmp", p), 0);
    assert_true(ce_store_open(&ctx, "logs/x.log", O_WRONLY | O_CREAT, 0644) < 0);
    assert_true(ce_store_open(&ctx, "../x", O_RDONLY, 0) < 0);
    int fd = ce_store_open(&ctx, "plain", O_RDWR | O_CREAT, 0644);
    if (geteuid() == 0 || fd >= 0) {
        assert_true(fd >= 0);
        close(fd);
    }
}

static void write_file(const char *name, const char *data, size_t n)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    fwrite(data, 1, n, f);
    fclose(f);
}

static void test_spec_file_bounded(void **state)
{
    (void)state;
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    char p[256], spec[128];
    write_file("ok", "# pin\n\n  11.8  \n", 16);
    snprintf(p, sizeof p, "%s/ok", dir);
    assert_int_equal(ce_spec_file_read(&ctx, p, spec, sizeof spec), CE_OK);
    assert_string_equal(spec, "11.8");
    /* a secret is not a spec and is never echoed */
    write_file("secret", "https://u:TOKEN@host\n", 21);
    snprintf(p, sizeof p, "%s/secret", dir);
    assert_int_equal(ce_spec_file_read(&ctx, p, spec, sizeof spec), CE_ERR_USAGE);
    assert_non_null(strstr(ce_errmsg(), "not a version spec"));
    assert_null(strstr(ce_errmsg(), "TOKEN"));
    /* a first line longer than the 256 bytes read */
    char big[1000];
    memset(big, '1', sizeof big);
    write_file("big", big, sizeof big);
    snprintf(p, sizeof p, "%s/big", dir);
    assert_int_equal(ce_spec_file_read(&ctx, p, spec, sizeof spec), CE_ERR_USAGE);
    /* a FIFO is refused without blocking */
    snprintf(p, sizeof p, "%s/fifo", dir);
    assert_int_equal(mkfifo(p, 0644), 0);
    assert_int_equal(ce_spec_file_read(&ctx, p, spec, sizeof spec), CE_ERR_IO);
    assert_non_null(strstr(ce_errmsg(), "not a regular file"));
}

static void test_rm_rf_no_follow(void **state)
{
    (void)state;
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    char cmd[512], p[256];
    /* a tree with a read-only directory and symlinks out to a victim */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p victim t/a/ro t/b && echo keep > victim/f && echo x > t/a/ro/f && chmod 555 t/a/ro "
             "&& ln -s ../../victim t/b/dirlink && ln -s ../victim/f t/filelink", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(p, sizeof p, "%s/t", dir);
    assert_int_equal(ce_rm_rf(&ctx, p), CE_OK);
    assert_int_equal(access(p, F_OK), -1);
    snprintf(p, sizeof p, "%s/victim/f", dir);
    assert_int_equal(access(p, F_OK), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_stat_reason),
        cmocka_unit_test(test_root_absolute),
        cmocka_unit_test_setup_teardown(test_store_open_no_symlinks, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_spec_file_bounded, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_rm_rf_no_follow, mk_dir, rm_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
