#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "manifest/resolve.h"
#include "store/store.h"
#include "core/version.h"

static void test_cmp(void **state)
{
    (void)state;
    assert_true(ce_version_cmp("11.8.0", "12.2.2") < 0);
    assert_true(ce_version_cmp("12.10.0", "12.9.1") > 0);
    assert_int_equal(ce_version_cmp("8.7.0.84", "8.7.0.84"), 0);
    assert_true(ce_version_cmp("11.8", "11.8.0") < 0);
}

static void test_matches(void **state)
{
    (void)state;
    assert_true(ce_version_matches("11.8", "11.8.0"));
    assert_true(ce_version_matches("11.8.0", "11.8.0"));
    assert_false(ce_version_matches("11.8", "11.80.1"));
    assert_false(ce_version_matches("11.8.1", "11.8.0"));
    assert_true(ce_version_valid("8.7.0.84"));
    assert_false(ce_version_valid("8..7"));
    assert_false(ce_version_valid("8.7."));
    assert_false(ce_version_valid("v8"));
}

static void test_spec(void **state)
{
    (void)state;
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ce_spec s;
    struct { const char *in; ce_spec_kind kind; const char *ver, *cudnn; } ok[] = {
        { "tf-2.14", CE_SPEC_TF, "2.14", "" },
        { "tensorflow-2.14.1", CE_SPEC_TF, "2.14", "" },
        { "tensorflow==2.14.0", CE_SPEC_TF, "2.14", "" },
        { "tf-2.14+cudnn8.6", CE_SPEC_TF, "2.14", "8.6" },
        { "11.8", CE_SPEC_CUDA, "11.8", "" },
        { "11.8.0", CE_SPEC_CUDA, "11.8.0", "" },
        { "cuda-11.8", CE_SPEC_CUDA, "11.8", "" },
        { "11.8+cudnn8.7.0.84", CE_SPEC_CUDA, "11.8", "8.7.0.84" },
        { "system", CE_SPEC_SYSTEM, "", "" },
        /* aliases (issue 23): the newest TF 2.x, the newest TF, the newest CUDA the driver runs */
        { "tf-2", CE_SPEC_TF, "2", "" },
        { "tf-latest", CE_SPEC_TF, "latest", "" },
        { "tensorflow-latest", CE_SPEC_TF, "latest", "" },
        { "latest", CE_SPEC_CUDA, "latest", "" },
        { "cuda-latest", CE_SPEC_CUDA, "latest", "" },
        { "tf-latest+cudnn8.9", CE_SPEC_TF, "latest", "8.9" },
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        assert_int_equal(ce_spec_parse(ok[i].in, &s), CE_OK);
        assert_int_equal(s.kind, ok[i].kind);
        assert_string_equal(s.version, ok[i].ver);
        assert_string_equal(s.cudnn, ok[i].cudnn);
    }
    const char *bad[] = { "", "tf-", "tf-lates", "latest2", "banana", "11.8+cudnn", "11..8", "cuda-", "11.8+cudnnX" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(ce_spec_parse(bad[i], &s), CE_ERR_NOTFOUND);
}

static void test_toolchain_name(void **state)
{
    (void)state;
    ce_toolchain t;
    assert_true(ce_toolchain_parse_name("11.8.0+cudnn8.7.0.84", &t));
    assert_string_equal(t.cuda, "11.8.0");
    assert_string_equal(t.cudnn, "8.7.0.84");
    assert_true(ce_toolchain_parse_name("12.2.2", &t));
    assert_string_equal(t.cudnn, "");
    assert_false(ce_toolchain_parse_name(".staging-abc", &t));
    assert_false(ce_toolchain_parse_name("11.8.0+cudnn", &t));
    char name[96];
    ce_toolchain_name(name, sizeof name, "11.8.0", "8.6.0.163");
    assert_string_equal(name, "11.8.0+cudnn8.6.0.163");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cmp),
        cmocka_unit_test(test_matches),
        cmocka_unit_test(test_spec),
        cmocka_unit_test(test_toolchain_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
