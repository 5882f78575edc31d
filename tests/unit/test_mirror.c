/* The mirror's path policy: where a manifest URL's file lands under the
 * mirror directory, and every way a hostile manifest could try to leave it. */
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
#include "mirror/mirror.h"
#include "mirror/mirror_dir.h"

static void test_rel_ok(void **state)
{
    (void)state;
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    char out[1024];
    struct { const char *url, *rel; } ok[] = {
        { "https://developer.download.nvidia.com/compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run",
          "compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run" },
        { "compute/cudnn/redist/x.tar.xz", "compute/cudnn/redist/x.tar.xz" },
        { "./compute/x.run", "compute/x.run" },
        { "https://mirror.lab/compute/x.run?token=1#f", "compute/x.run" },
        { "http://127.0.0.1:8080/a/b.run", "a/b.run" },
        { "file:///srv/cuda/compute/x.run", "srv/cuda/compute/x.run" },
        { "compute/x..y.run", "compute/x..y.run" },
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        assert_int_equal(ce_mirror_rel_path(ok[i].url, out, sizeof out), CE_OK);
        assert_string_equal(out, ok[i].rel);
    }
}

static void test_rel_refused(void **state)
{
    (void)state;
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    char out[1024];
    const char *bad[] = {
        "", "/etc/passwd", "../x.run", "compute/../../x.run", "compute/./x.run", "compute/..",
        "compute//x.run", "https://h/", "https://h", "https://h/a/../../b", "cudaenv.json",
        "https://developer.download.nvidia.com/cudaenv.json", ".cudaenv-mirror/cache/x",
        "https://h/.cudaenv-mirror/.lock", "compute/x\nrun", "compute\\..\\x.run", "?q=1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ce_status_clear();
        assert_int_equal(ce_mirror_rel_path(bad[i], out, sizeof out), CE_ERR_INTEGRITY);
        assert_non_null(strstr(ce_errmsg(), "cannot mirror"));
    }
    /* a path that does not fit is refused, not cut */
    char longurl[2100];
    memset(longurl, 'a', sizeof longurl - 1);
    longurl[sizeof longurl - 1] = '\0';
    assert_int_equal(ce_mirror_rel_path(longurl, out, sizeof out), CE_ERR_INTEGRITY);
}

/* ---- mirror_dir.h: paths under the mirror through dirfds ---- */

static char tmpd[256];

static void put(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpd, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
}

static void test_mdir(void **state)
{
    (void)state;
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    snprintf(tmpd, sizeof tmpd, "%s/ce-mdir-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(tmpd));
    char p[512], q[512], buf[64];
    snprintf(p, sizeof p, "%s/outside", tmpd);
    assert_int_equal(mkdir(p, 0755), 0);
    put("outside/victim", "secret");
    snprintf(p, sizeof p, "%s/site", tmpd);
    ce_mdir md;
    assert_int_equal(ce_mdir_open(p, true, &md), CE_OK);
    assert_int_equal(mkdir(strcat(strcpy(q, p), "/compute"), 0755), 0);

    /* a symlinked directory on the way is refused, never followed */
    snprintf(q, sizeof q, "%s/outside", tmpd);
    snprintf(p, sizeof p, "%s/site/compute/link", tmpd);
    assert_int_equal(symlink(q, p), 0);
    assert_int_equal(ce_mdir_subdir(&md, "compute/link", true), CE_ERR_PERM);
    assert_non_null(strstr(ce_errmsg(), "compute/link is a symlink"));
    assert_int_equal(ce_mdir_place(&md, "compute/link/victim", "/dev/null", false), CE_ERR_PERM);
    snprintf(p, sizeof p, "%s/outside/victim", tmpd);
    slurp(p, buf, sizeof buf);
    assert_string_equal(buf, "secret");
    assert_true(ce_mdir_subdir(&md, "compute/../compute", false) == CE_ERR_PERM);

    /* a symlink at the file's own name is replaced, its target untouched */
    snprintf(q, sizeof q, "%s/site/compute/x.run", tmpd);
    assert_int_equal(symlink(p, q), 0);
    put("new", "payload");
    snprintf(p, sizeof p, "%s/new", tmpd);
    assert_int_equal(ce_mdir_place(&md, "compute/x.run", p, false), CE_OK);
    struct stat st;
    assert_int_equal(lstat(q, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    slurp(q, buf, sizeof buf);
    assert_string_equal(buf, "payload");
    snprintf(p, sizeof p, "%s/outside/victim", tmpd);
    slurp(p, buf, sizeof buf);
    assert_string_equal(buf, "secret");

    /* verified: size and sha256 (of "payload"); a same-size other file is not */
    const char *sha = "239f59ed55e737c77147cf55ad0c1b030b6d7ee748a7426952f9b852d5a935e5";
    assert_int_equal(ce_mdir_verified(&md, "compute/x.run", 7, sha), 1);
    assert_int_equal(ce_mdir_verified(&md, "compute/x.run", -1, sha), 1);
    put("site/compute/x.run", "paylaod");
    assert_int_equal(ce_mdir_verified(&md, "compute/x.run", 7, sha), 0);
    assert_int_equal(ce_mdir_verified(&md, "compute/none.run", 7, sha), 0);

    /* a FIFO is refused at once (O_NONBLOCK, S_ISREG), never read */
    snprintf(q, sizeof q, "%s/site/compute/fifo", tmpd);
    assert_int_equal(mkfifo(q, 0644), 0);
    assert_int_equal(ce_mdir_open_file(&md, "compute/fifo", &st), CE_ERR_PERM);
    assert_non_null(strstr(ce_errmsg(), "not a regular file"));
    assert_int_equal(ce_mdir_verified(&md, "compute/fifo", -1, sha), CE_ERR_PERM);   /* refused, not replaced */

    /* no temporary is left beside the placed files */
    snprintf(q, sizeof q, "find %s/site -name '*.tmp-*' | grep -q .", tmpd);
    assert_int_not_equal(system(q), 0);
    ce_mdir_close(&md);
    snprintf(q, sizeof q, "rm -rf %s", tmpd);
    assert_int_equal(system(q), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rel_ok),
        cmocka_unit_test(test_rel_refused),
        cmocka_unit_test(test_mdir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
