/* NVIDIA's redistrib JSON as untrusted input (install/redist.c): the real
 * 11.8.0 file parses with string sizes, md5, release_* keys and other
 * platforms; every malformed value is refused naming the JSON path;
 * relative_path may not climb, be absolute or carry a scheme; profiles and
 * --components select, driver-side components never. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core/file.h"
#include "install/redist.h"

#define SHA "045e6455c9f8789b1c7ced19957c7904d23c221f4d1d75bb574a2c856aebae98"
#define URL "https://developer.download.nvidia.com/compute/cuda/redist/redistrib_11.8.0.json"

static ce_ctx ctx;

static int setup(void **state)
{
    (void)state;
    memset(&ctx, 0, sizeof ctx);
    return 0;
}

static const char SMALL[] =
    "{\"release_date\": \"2022-10-03\", \"release_label\": \"11.8.0\", \"release_product\": \"cuda\",\n"
    " \"libcublas\": {\"name\": \"CUDA cuBLAS\", \"license\": \"CUDA Toolkit\", \"version\": \"11.11.3.6\",\n"
    "   \"linux-x86_64\": {\"relative_path\": \"libcublas/linux-x86_64/libcublas-linux-x86_64-11.11.3.6-archive.tar.xz\",\n"
    "                    \"sha256\": \"" SHA "\", \"md5\": \"86f5\", \"size\": \"500681532\"},\n"
    "   \"windows-x86_64\": {\"relative_path\": \"x.zip\", \"sha256\": \"" SHA "\", \"size\": \"1\"}},\n"
    " \"cuda_cudart\": {\"name\": \"CUDA Runtime\", \"version\": \"11.8.89\",\n"
    "   \"linux-x86_64\": {\"relative_path\": \"cuda_cudart/linux-x86_64/a.tar.xz\", \"sha256\": \"" SHA "\", \"size\": \"913\"}},\n"
    " \"nvidia_driver\": {\"name\": \"Driver\", \"version\": \"520.61.05\",\n"
    "   \"linux-x86_64\": {\"relative_path\": \"nvidia_driver/d.tar.xz\", \"sha256\": \"" SHA "\", \"size\": \"5\"}},\n"
    " \"cuda_nvvp\": {\"name\": \"Visual Profiler\", \"version\": \"11.8.87\",\n"
    "   \"windows-x86_64\": {\"relative_path\": \"w.zip\", \"sha256\": \"" SHA "\", \"size\": \"1\"}}\n"
    "}\n";

static char *subst(const char *from, const char *to)
{
    const char *at = strstr(SMALL, from);
    if (!at) return NULL;
    size_t n = strlen(SMALL) - strlen(from) + strlen(to) + 1, pre = (size_t)(at - SMALL);
    char *r = malloc(n);
    memcpy(r, SMALL, pre);
    strcpy(r + pre, to);
    strcat(r, at + strlen(from));
    return r;
}

static void test_small(void **state)
{
    (void)state;
    ce_redist *r = NULL;
    assert_int_equal(ce_redist_parse(SMALL, strlen(SMALL), URL, "linux-x86_64", &r), CE_OK);
    assert_string_equal(r->release_label, "11.8.0");
    assert_int_equal(r->n, 3); /* cuda_nvvp has no linux-x86_64 archive */
    assert_string_equal(r->comps[0].name, "libcublas");
    assert_string_equal(r->comps[0].label, "CUDA cuBLAS");
    assert_string_equal(r->comps[0].version, "11.11.3.6");
    assert_true(r->comps[0].size == 500681532LL);
    assert_string_equal(r->comps[0].url, "https://developer.download.nvidia.com/compute/cuda/redist/"
                                         "libcublas/linux-x86_64/libcublas-linux-x86_64-11.11.3.6-archive.tar.xz");
    ce_redist_free(r);
    assert_int_equal(ce_redist_parse(SMALL, strlen(SMALL), URL, "linux-sbsa", &r), CE_OK);
    assert_int_equal(r->n, 0);
    ce_redist_free(r);
}

static void test_invalid(void **state)
{
    (void)state;
    static const struct { const char *from, *to, *want; } cases[] = {
        { "libcublas/linux-x86_64/libcublas", "../../libcublas", "libcublas.\"linux-x86_64\": relative_path '../../libcublas" },
        { "libcublas/linux-x86_64/libcublas", "libcublas/../../../etc/libcublas", "'..' segment" },
        { "libcublas/linux-x86_64/libcublas", "/etc/libcublas", "it is an absolute path" },
        { "libcublas/linux-x86_64/libcublas", "https://evil.example/libcublas", "it carries a scheme" },
        { "libcublas/linux-x86_64/libcublas", "libcublas//x", "empty segment" },
        { "libcublas/linux-x86_64/libcublas", "libcublas/x?y=", "a character a relative path may not have" },
        { "\"size\": \"500681532\"", "\"size\": \"5e8\"", "libcublas.\"linux-x86_64\": size: expected a decimal" },
        { "\"size\": \"500681532\"", "\"size\": \"-1\"", "size: expected a decimal" },
        { "\"size\": \"500681532\"", "\"size\": true", "\"size\": expected a string, got a boolean" },
        { "\"sha256\": \"" SHA "\", \"md5\"", "\"sha256\": \"abc\", \"md5\"", "sha256: expected 64 lowercase hex" },
        { "\"sha256\": \"" SHA "\", \"md5\"", "\"md5\"", "\"sha256\" is missing" },
        { "\"version\": \"11.11.3.6\"", "\"version\": 11", "libcublas: \"version\": expected a string, got a number" },
        { "\"version\": \"11.11.3.6\"", "\"version\": \"11.x\"", "is not digits separated by dots" },
        { "\"release_label\": \"11.8.0\"", "\"release_label\": 11", "(top): \"release_label\": expected a string" },
        { "\"cuda_cudart\": {", "\"cuda_cudart\": 5, \"x\": {", "cuda_cudart: expected a component object" },
        { "\"cuda_cudart\": {", "\"Cuda Cudart\": {", "not a component name" },
        { "\"linux-x86_64\": {\"relative_path\": \"cuda_cudart", "\"linux-x86_64\": [], \"y\": {\"relative_path\": \"cuda_cudart",
          "cuda_cudart.\"linux-x86_64\": expected an object, got an array" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *t = subst(cases[i].from, cases[i].to);
        if (!t) fail_msg("case %zu: '%s' not in the fixture", i, cases[i].from);
        ce_redist *r = (ce_redist *)1;
        ce_status_clear();
        int rc = ce_redist_parse(t, strlen(t), URL, "linux-x86_64", &r);
        if (rc != CE_ERR_INTEGRITY || !strstr(ce_errmsg(), cases[i].want) || !strstr(ce_errmsg(), URL))
            fail_msg("case %zu: rc %d, err '%s', want '%s'", i, rc, ce_errmsg(), cases[i].want);
        assert_null(r);
        free(t);
    }
    /* read as strictly as a manifest (core/json.h: one reader): one document,
     * nothing after it, no \u0000 that cJSON would cut a string at */
    static const struct { const char *tail, *want; } strict[] = {
        { "\n{\"release_date\": \"2099-01-01\"}", "data after the JSON document (line" },
        { "garbage", "a second document or trailing garbage" },
    };
    for (size_t i = 0; i < sizeof strict / sizeof *strict; i++) {
        size_t n = strlen(SMALL) + strlen(strict[i].tail);
        char *t = malloc(n + 1);
        assert_non_null(t);
        snprintf(t, n + 1, "%s%s", SMALL, strict[i].tail);
        ce_redist *r = (ce_redist *)1;
        ce_status_clear();
        int rc = ce_redist_parse(t, n, URL, "linux-x86_64", &r);
        if (rc != CE_ERR_INTEGRITY || !strstr(ce_errmsg(), strict[i].want) || !strstr(ce_errmsg(), URL))
            fail_msg("trailing case %zu: rc %d, err '%s'", i, rc, ce_errmsg());
        assert_null(r);
        free(t);
    }
    char *nul = subst("libcublas/linux-x86_64/libcublas", "libcublas/linux-x86_64/libcublas.tar.xz\\u0000.evil");
    assert_non_null(nul);
    ce_redist *r = (ce_redist *)1;
    ce_status_clear();
    assert_int_equal(ce_redist_parse(nul, strlen(nul), URL, "linux-x86_64", &r), CE_ERR_INTEGRITY);
    assert_non_null(strstr(ce_errmsg(), "a string contains \\u0000"));
    assert_null(r);
    free(nul);
    r = NULL;
    assert_int_equal(ce_redist_parse("[1]", 3, URL, "linux-x86_64", &r), CE_ERR_INTEGRITY);
    assert_int_equal(ce_redist_parse("{", 1, URL, "linux-x86_64", &r), CE_ERR_INTEGRITY);
}

static void test_select(void **state)
{
    (void)state;
    char *tf_c[] = { "cuda_cudart", "nvidia_driver" }, *all[] = { "*" }, *ex[] = { "libcub*" };
    ce_profile tf = { .name = "tf", .components = tf_c, .n_components = 2 };
    ce_profile tk = { .name = "toolkit", .components = all, .n_components = 1, .exclude = ex, .n_exclude = 1 };
    ce_redist *r = NULL;
    assert_int_equal(ce_redist_parse(SMALL, strlen(SMALL), URL, "linux-x86_64", &r), CE_OK);
    assert_int_equal(ce_redist_select(r, &tf, NULL), CE_OK);
    assert_false(r->comps[0].selected);
    assert_true(r->comps[1].selected);
    assert_false(r->comps[2].selected); /* driver-side, though the profile names it */
    size_t n;
    assert_true(ce_redist_selected_bytes(r, &n) == 913);
    assert_int_equal(n, 1);
    assert_int_equal(ce_redist_select(r, &tk, NULL), CE_OK);
    assert_false(r->comps[0].selected);
    assert_true(r->comps[1].selected);
    assert_false(r->comps[2].selected);
    assert_int_equal(ce_redist_select(r, &tf, "+libcublas,-cuda_cudart"), CE_OK);
    assert_true(r->comps[0].selected);
    assert_false(r->comps[1].selected);
    assert_int_equal(ce_redist_select(r, &tf, "+nvidia_driver"), CE_ERR_USAGE);
    assert_non_null(strstr(ce_errmsg(), "driver-side"));
    assert_int_equal(ce_redist_select(r, &tf, "+nsight_systems"), CE_ERR_USAGE);
    assert_non_null(strstr(ce_errmsg(), "it has: libcublas, cuda_cudart"));
    assert_int_equal(ce_redist_select(r, &tf, "+../x"), CE_ERR_USAGE);
    ce_redist_free(r);
    assert_true(ce_redist_driver_side("mft_oem"));
    assert_true(ce_redist_driver_side("cuda_compat"));
    assert_false(ce_redist_driver_side("cuda_cccl"));
    assert_true(ce_redist_driver_side("cuda_compat_orin"));
}

/* The profiles of the built-in manifest, by name, as install reads them */
static ce_profile *builtin_profile(const char *name, cJSON **doc)
{
    char *text = NULL;
    size_t len = 0;
    if (ce_file_read("share/manifests/cudaenv.json", 64 << 20, &text, &len) != CE_OK) return NULL;
    *doc = cJSON_ParseWithLength(text, len);
    free(text);
    cJSON *p = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(*doc, "profiles"), name);
    static ce_profile prof;
    static char *comps[64], *ex[64];
    memset(&prof, 0, sizeof prof);
    prof.name = (char *)name;
    prof.components = comps;
    prof.exclude = ex;
    cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(p, "components")) comps[prof.n_components++] = it->valuestring;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(p, "exclude")) ex[prof.n_exclude++] = it->valuestring;
    return prof.n_components ? &prof : NULL;
}

/* NVIDIA's names change: from 13.3.0 cuda_cccl is "cccl", from 13.2.0 linux-sbsa
 * carries cuda_compat_orin (shapes of NVIDIA's redistrib_13.3.0.json) */
static const char RENAMED[] =
    "{\"release_date\": \"2026-06-01\", \"release_label\": \"13.3.0\", \"release_product\": \"cuda\",\n"
    " \"cccl\": {\"name\": \"CXX Core Compute Libraries\", \"license\": \"CCCL EULA\", \"version\": \"13.3.27\",\n"
    "   \"linux-x86_64\": {\"relative_path\": \"cccl/linux-x86_64/cccl-linux-x86_64-13.3.27-archive.tar.xz\",\n"
    "                    \"sha256\": \"" SHA "\", \"md5\": \"1\", \"size\": \"1000\"},\n"
    "   \"linux-sbsa\": {\"relative_path\": \"cccl/linux-sbsa/cccl-linux-sbsa-13.3.27-archive.tar.xz\",\n"
    "                    \"sha256\": \"" SHA "\", \"md5\": \"1\", \"size\": \"1000\"}},\n"
    " \"cuda_compat_orin\": {\"name\": \"CUDA compat orin L4T\", \"license\": \"CUDA Toolkit\", \"version\": \"13.3.1\",\n"
    "   \"linux-sbsa\": {\"relative_path\": \"cuda_compat_orin/linux-sbsa/cuda_compat_orin-linux-sbsa-13.3.1-archive.tar.xz\",\n"
    "                  \"sha256\": \"" SHA "\", \"md5\": \"1\", \"size\": \"2000\"}},\n"
    " \"cuda_cudart\": {\"name\": \"CUDA Runtime\", \"version\": \"13.3.20\",\n"
    "   \"linux-sbsa\": {\"relative_path\": \"cuda_cudart/linux-sbsa/r.tar.xz\", \"sha256\": \"" SHA "\", \"size\": \"30\"},\n"
    "   \"linux-x86_64\": {\"relative_path\": \"cuda_cudart/linux-x86_64/r.tar.xz\", \"sha256\": \"" SHA "\", \"size\": \"30\"}}\n"
    "}\n";

static void test_renamed(void **state)
{
    (void)state;
    cJSON *doc = NULL;
    ce_profile *tf = builtin_profile("tf", &doc);
    if (!tf) skip();
    ce_redist *r = NULL;
    size_t n;
    assert_int_equal(ce_redist_parse(RENAMED, strlen(RENAMED), URL, "linux-x86_64", &r), CE_OK);
    assert_int_equal(ce_redist_select(r, tf, NULL), CE_OK);
    assert_true(ce_redist_selected_bytes(r, &n) == 1030); /* cccl + cudart: CCCL's headers not skipped */
    assert_int_equal(n, 2);
    ce_redist_free(r);
    r = NULL;
    assert_int_equal(ce_redist_parse(RENAMED, strlen(RENAMED), URL, "linux-sbsa", &r), CE_OK);
    cJSON_Delete(doc);
    ce_profile *tk = builtin_profile("toolkit", &doc);
    assert_non_null(tk);
    assert_int_equal(ce_redist_select(r, tk, NULL), CE_OK);
    assert_true(ce_redist_selected_bytes(r, &n) == 1030); /* no Jetson driver-compat package on a server */
    assert_int_equal(n, 2);
    assert_int_equal(ce_redist_select(r, tk, "+cuda_compat_orin"), CE_ERR_USAGE);
    assert_non_null(strstr(ce_errmsg(), "driver-side"));
    ce_redist_free(r);
    cJSON_Delete(doc);
}

/* NVIDIA's real file (data/redist, verified copy): 11.8.0, x86_64 */
static void test_real_11_8(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    if (ce_file_read("data/redist/cuda/redistrib_11.8.0.json", CE_REDIST_MAX, &text, &len) != CE_OK)
        skip();
    ce_redist *r = NULL;
    assert_int_equal(ce_redist_parse(text, len, URL, "linux-x86_64", &r), CE_OK);
    char *tf_c[] = { "cuda_cudart", "libcublas", "libcufft", "libcurand", "libcusolver", "libcusparse", "cuda_cupti",
                     "cuda_nvcc", "cuda_nvrtc", "cuda_cccl", "cuda_nvtx", "cuda_nvml_dev", "cuda_nvprune",
                     "cuda_profiler_api", "cuda_nvdisasm", "libnvjitlink", "cuda_crt", "libnvvm" };
    ce_profile tf = { .name = "tf", .components = tf_c, .n_components = sizeof tf_c / sizeof *tf_c };
    assert_int_equal(ce_redist_select(r, &tf, NULL), CE_OK);
    size_t n;
    long long bytes = ce_redist_selected_bytes(r, &n);
    printf("# 11.8.0 tf profile: %zu components, %lld bytes\n", n, bytes);
    assert_int_equal(n, 15); /* 11.8 has no libnvjitlink, cuda_crt, libnvvm */
    assert_true(bytes == 1314779856LL); /* 1.22 GiB: 30 % of the 4.34 GB runfile */
    ce_redist_free(r);
    free(text);
}

/* NVIDIA's real 12.8.2-13.3.0 files (data/redist, rebuilt and pinned by XLA): cuda_compat per CUDA
 * variant ("cuda13.1") from 13.1.0, cuda_compat_orin from 13.2.0, cccl from 13.3.0; the tf and
 * toolkit profiles never take a driver-side component, and take CCCL under either name */
static void test_real_13(void **state)
{
    (void)state;
    static const char *const vers[] = { "12.8.2", "12.9.2", "13.0.3", "13.1.0", "13.1.1", "13.1.2", "13.2.0",
                                        "13.2.1", "13.3.0" };
    static const char *const plats[] = { "linux-x86_64", "linux-sbsa" };
    for (size_t v = 0; v < sizeof vers / sizeof *vers; v++) {
        char path[128], url[160];
        snprintf(path, sizeof path, "data/redist/cuda/redistrib_%s.json", vers[v]);
        snprintf(url, sizeof url, "https://developer.download.nvidia.com/compute/cuda/redist/redistrib_%s.json", vers[v]);
        char *text = NULL;
        size_t len = 0;
        if (ce_file_read(path, CE_REDIST_MAX, &text, &len) != CE_OK) skip();
        for (size_t pl = 0; pl < 2; pl++)
            for (int k = 0; k < 2; k++) {
                cJSON *doc = NULL;
                ce_profile *p = builtin_profile(k ? "toolkit" : "tf", &doc);
                if (!p) skip();
                ce_redist *r = NULL;
                assert_int_equal(ce_redist_parse(text, len, url, plats[pl], &r), CE_OK);
                assert_string_equal(r->release_label, vers[v]);
                assert_int_equal(ce_redist_select(r, p, NULL), CE_OK);
                size_t n = 0, cccl = 0;
                for (size_t i = 0; i < r->n; i++) {
                    if (!r->comps[i].selected) continue;
                    n++;
                    assert_false(ce_redist_driver_side(r->comps[i].name));
                    cccl += !strcmp(r->comps[i].name, "cccl") || !strcmp(r->comps[i].name, "cuda_cccl");
                }
                assert_int_equal(cccl, 1);
                assert_true(n >= 10);
                ce_redist_free(r);
                cJSON_Delete(doc);
            }
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_small, setup),
        cmocka_unit_test_setup(test_invalid, setup),
        cmocka_unit_test_setup(test_select, setup),
        cmocka_unit_test_setup(test_real_11_8, setup),
        cmocka_unit_test_setup(test_renamed, setup),
        cmocka_unit_test_setup(test_real_13, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
