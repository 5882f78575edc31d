/* The mirror's path policy: where a manifest URL's file lands under the
 * mirror directory, and every way a hostile manifest could try to leave it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "install/mirror.h"

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
        assert_int_equal(ce_mirror_rel_path(&ctx, ok[i].url, out, sizeof out), CE_OK);
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
        assert_int_equal(ce_mirror_rel_path(&ctx, bad[i], out, sizeof out), CE_ERR_INTEGRITY);
        assert_non_null(strstr(ce_errmsg(), "cannot mirror"));
    }
    /* a path that does not fit is refused, not cut */
    char longurl[2100];
    memset(longurl, 'a', sizeof longurl - 1);
    longurl[sizeof longurl - 1] = '\0';
    assert_int_equal(ce_mirror_rel_path(&ctx, longurl, out, sizeof out), CE_ERR_INTEGRITY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rel_ok),
        cmocka_unit_test(test_rel_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
