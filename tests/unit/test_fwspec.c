/* PyTorch and JAX specs (resolve.h): the parser (torch-2.5, torch-2.5.1+cu121,
 * pytorch==2.5.1, jax-0.4.30+cuda12, bad forms), resolution against a
 * fixture manifest with "torch" and "jax" sections (the default build, another
 * build, aliases, not-installable builds, unknown releases and builds), the
 * manifest's checks of those sections, and the built-in manifest's rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "manifest/manifest.h"
#include "manifest_fixture.h"
#include "manifest/diff.h"
#include "manifest/resolve.h"
#include "core/version.h"

static ce_ctx ctx;
static ce_manifest *m;

#define FW_SECTIONS \
    "\"torch\": {\n" \
    "  \"2.5\": {\"default\": \"cu122\", \"python\": \">=3.9\", \"source\": \"RELEASE.md\",\n" \
    "          \"builds\": {\"cu118\": {\"cuda\": \"11.8.0\", \"cudnn\": \"8.9.7.29\", \"wheel\": {\"cuda\": \"11.8\", \"cudnn\": \"8.9.2.26\"}},\n" \
    "                       \"cu122\": {\"cuda\": \"12.2.2\", \"cudnn\": \"9.3.0.75\", \"channel\": \"stable\"}}},\n" \
    "  \"2.9\": {\"default\": \"cu130\", \"builds\": {\"cu130\": {\"cuda\": \"13.0.0\", \"cudnn\": \"9.13.0.50\"},\n" \
    "          \"cu125\": {\"cuda\": \"12.5.1\", \"cudnn\": \"9.3.0.75\"},\n" \
    "          \"cu131\": {\"cuda\": \"13.1.0\", \"cudnn\": \"9.13.0.50\", \"not_installable\": \"no CUDA 13.1.* in the manifest\"}}},\n" \
    "  \"2.10\": {\"default\": \"cu131\", \"builds\": {\"cu131\": {\"cuda\": \"13.1.0\", \"not_installable\": \"no CUDA 13.1.*\"},\n" \
    "          \"cu125\": {\"cuda\": \"12.5.1\", \"cudnn\": \"9.3.0.75\"}}}},\n" \
    " \"jax\": {\n" \
    "  \"0.4.30\": {\"default\": \"cuda12\", \"builds\": {\"cuda12\": {\"cuda\": \"12.5.1\", \"cudnn\": \"9.3.0.75\"}}},\n" \
    "  \"0.4.29\": {\"default\": \"cuda12\", \"builds\": {\"cuda12\": {\"cuda\": \"12.2.2\", \"cudnn\": \"8.9.7.29\"}}},\n" \
    "  \"0.7.2\": {\"default\": \"cuda12\", \"builds\": {\"cuda12\": {\"cuda\": \"12.5.1\", \"cudnn\": \"9.3.0.75\"},\n" \
    "            \"cuda13\": {\"cuda\": \"13.0.0\", \"cudnn\": \"9.13.0.50\"}}}},\n" \
    " \"profiles\":"

static int setup(void **state)
{
    (void)state;
    memset(&ctx, 0, sizeof ctx);
    snprintf(ctx.platform, sizeof ctx.platform, "linux-x86_64");
    char *text = fx_subst(FIXTURE, "\"profiles\":", FW_SECTIONS);
    int rc = text ? ce_manifest_parse(&ctx, text, strlen(text), "https://x.example/m/cudaenv.json", false, &m) : -1;
    free(text);
    if (rc) fprintf(stderr, "%s\n", ce_errmsg());
    return rc ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    ce_manifest_free(m);
    m = NULL;
    return 0;
}

static int resolve(const char *text, ce_resolved *r)
{
    ce_spec s;
    int rc = ce_spec_parse(text, &s);
    if (rc) return rc;
    return ce_resolve(&ctx, m, &s, "", false, r);
}

static void test_parse(void **state)
{
    (void)state;
    static const struct { const char *text; ce_spec_kind kind; const char *version, *build, *cudnn; } ok[] = {
        { "torch-2.5", CE_SPEC_TORCH, "2.5", "", "" },
        { "torch-2.5.1", CE_SPEC_TORCH, "2.5", "", "" },
        { "torch-2.5+cu121", CE_SPEC_TORCH, "2.5", "cu121", "" },
        { "torch-2.5.1+cu121", CE_SPEC_TORCH, "2.5", "cu121", "" },      /* pip's local version */
        { "torch==2.5.1+cu121", CE_SPEC_TORCH, "2.5", "cu121", "" },
        { "pytorch-2.5", CE_SPEC_TORCH, "2.5", "", "" },
        { "PyTorch==2.5.1", CE_SPEC_TORCH, "2.5", "", "" },
        { "TORCH-2.5+CU121", CE_SPEC_TORCH, "2.5", "cu121", "" },
        { "torch2.5", CE_SPEC_TORCH, "2.5", "", "" },
        { "torch-2", CE_SPEC_TORCH, "2", "", "" },
        { "torch-latest", CE_SPEC_TORCH, "latest", "", "" },
        { "torch-2.5+cudnn9.1", CE_SPEC_TORCH, "2.5", "", "9.1" },
        { "torch-2.5+cu121+cudnn9.1", CE_SPEC_TORCH, "2.5", "cu121", "9.1" },
        { "jax-0.4.30", CE_SPEC_JAX, "0.4.30", "", "" },
        { "jax==0.4.30", CE_SPEC_JAX, "0.4.30", "", "" },
        { "jax-0.4.30+cuda12", CE_SPEC_JAX, "0.4.30", "cuda12", "" },
        { "jax-0.9.0.1", CE_SPEC_JAX, "0.9.0.1", "", "" },
        { "jax-0.4", CE_SPEC_JAX, "0.4", "", "" },
        { "jax-latest", CE_SPEC_JAX, "latest", "", "" },
        { "tf-2.14", CE_SPEC_TF, "2.14", "", "" },                      /* unchanged */
        { "11.8", CE_SPEC_CUDA, "11.8", "", "" },
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        ce_spec s;
        if (ce_spec_parse(ok[i].text, &s) != CE_OK) fail_msg("%s: %s", ok[i].text, ce_errmsg());
        assert_int_equal(s.kind, ok[i].kind);
        assert_string_equal(s.version, ok[i].version);
        assert_string_equal(s.build, ok[i].build);
        assert_string_equal(s.cudnn, ok[i].cudnn);
    }
    static const char *bad[] = { "torch", "torch-", "torch-2.5+", "torch-2.5+xyz", "torch-2.5+cu", "torch-2.5+cu12x",
                                 "torch-abc", "torch-2.5+cu121+cu118", "torch-2.5+cu-121", "jax-0.4.30+cuda",
                                 "jax-", "jax-0..4", "torch-2.5+cu1234567890123456", "11.8+cu118", "tf-2.14+cu118" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ce_spec s;
        if (ce_spec_parse(bad[i], &s) != CE_ERR_NOTFOUND) fail_msg("'%s' parsed", bad[i]);
        assert_non_null(strstr(ce_errmsg(), "is not a version spec"));
        assert_non_null(strstr(ce_errmsg(), "torch-2.5"));
    }
}

static void test_resolve_torch(void **state)
{
    (void)state;
    ce_resolved r;
    /* the default build: what pip installs from PyPI */
    const char *dflt[] = { "torch-2.5", "torch-2.5.1", "pytorch==2.5.1" };
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(resolve(dflt[i], &r), CE_OK);
        assert_string_equal(r.fw_name, "torch");
        assert_string_equal(r.fw->version, "2.5");
        assert_string_equal(r.fw_build->tag, "cu122");
        assert_string_equal(r.name, "12.2.2+cudnn9.3.0.75");
        assert_string_equal(r.cudnn_archive->url, NV "cudnn-9.3-cuda12.tar.xz");
        assert_null(r.tf);
    }
    /* another CUDA build */
    assert_int_equal(resolve("torch-2.5.1+cu118", &r), CE_OK);
    assert_string_equal(r.name, "11.8.0+cudnn8.9.7.29");
    assert_string_equal(r.fw_build->wheel_cudnn, "8.9.2.26");
    assert_string_equal(r.runfile->sha256, SHA_A);
    /* +cudnn leaves the build's pair */
    ce_spec s;
    assert_int_equal(ce_spec_parse("torch-2.5+cudnn8.9", &s), CE_OK);
    assert_int_equal(ce_resolve(&ctx, m, &s, "", false, &r), CE_OK);
    assert_string_equal(r.name, "12.2.2+cudnn8.9.7.29");
    /* aliases: the newest release whose (default) build installs */
    assert_int_equal(resolve("torch-latest", &r), CE_OK);
    assert_string_equal(r.fw->version, "2.9");
    assert_string_equal(r.name, "13.0.0+cudnn9.13.0.50");
    assert_int_equal(resolve("torch-2", &r), CE_OK);
    assert_string_equal(r.fw->version, "2.9");
    assert_int_equal(resolve("torch-latest+cu125", &r), CE_OK);
    assert_string_equal(r.fw->version, "2.10");
    assert_string_equal(r.name, "12.5.1+cudnn9.3.0.75");
    /* a release whose default build cannot be installed: its reason, exit 3; its other build works */
    assert_int_equal(resolve("torch-2.10", &r), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "PyTorch 2.10 (cu131"));
    assert_non_null(strstr(ce_errmsg(), "no CUDA 13.1.*"));
    assert_non_null(r.fw_build);
    assert_int_equal(resolve("torch-2.10+cu125", &r), CE_OK);
    assert_int_equal(resolve("torch-2.9+cu131", &r), CE_ERR_NOTFOUND);
}

static void test_resolve_jax(void **state)
{
    (void)state;
    ce_resolved r;
    assert_int_equal(resolve("jax-0.4.30", &r), CE_OK);
    assert_string_equal(r.fw_name, "jax");
    assert_string_equal(r.name, "12.5.1+cudnn9.3.0.75");
    assert_int_equal(resolve("jax==0.4.29", &r), CE_OK);
    assert_string_equal(r.name, "12.2.2+cudnn8.9.7.29");
    assert_int_equal(resolve("jax-0.4", &r), CE_OK);      /* the newest 0.4.x */
    assert_string_equal(r.fw->version, "0.4.30");
    assert_int_equal(resolve("jax-latest", &r), CE_OK);
    assert_string_equal(r.fw->version, "0.7.2");
    assert_int_equal(resolve("jax-0.7.2+cuda13", &r), CE_OK);
    assert_string_equal(r.name, "13.0.0+cudnn9.13.0.50");
    assert_int_equal(resolve("jax-0.4.30+cuda13", &r), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "JAX 0.4.30 has no CUDA build cuda13"));
}

static void test_unknown(void **state)
{
    (void)state;
    ce_resolved r;
    assert_int_equal(resolve("torch-9.9", &r), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "no PyTorch release torch-9.9"));
    assert_non_null(strstr(ce_errmsg(), "see: cudaenv list-remote torch"));
    assert_non_null(strstr(ce_errmsg(), "did you mean torch-"));
    assert_null(strstr(ce_errmsg(), "tf-"));   /* a PyTorch spec is answered with PyTorch releases */
    assert_int_equal(resolve("torch-2.5+cu999", &r), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "PyTorch 2.5 has no CUDA build cu999"));
    assert_non_null(strstr(ce_errmsg(), "cu118, cu122"));
    assert_int_equal(resolve("torch-1", &r), CE_ERR_NOTFOUND);
    assert_int_equal(resolve("jax-0.1.0", &r), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "no JAX release jax-0.1.0"));
    assert_non_null(strstr(ce_errmsg(), "list-remote jax"));
}

/* The manifest's checks of the sections: each names the JSON path. */
static void test_manifest_checks(void **state)
{
    (void)state;
    static const struct { const char *from, *to, *path; } cases[] = {
        { "\"2.5\": {\"default\"", "\"2.5.1\": {\"default\"", "torch.\"2.5.1\": releases are keyed MAJOR.MINOR" },
        { "\"default\": \"cu122\"", "\"default\": \"cu999\"", "torch.\"2.5\".default: 'cu999' is not one of" },
        { "\"cu118\": {\"cuda\": \"11.8.0\"", "\"cu118\": {\"cuda\": \"11.7.0\"", "torch.\"2.5\".builds.cu118.cuda: CUDA 11.7.0 is not" },
        { "\"cu122\": {\"cuda\": \"12.2.2\", \"cudnn\": \"9.3.0.75\"", "\"cu122\": {\"cuda\": \"12.2.2\", \"cudnn\": \"8.7.0.84\"",
          "cudnn: cuDNN 8.7.0.84 has no build for CUDA 12" },
        { "\"cu118\": {", "\"x118\": {", "builds are keyed by the wheel's CUDA tag" },
        { "\"cuda12\": {\"cuda\": \"12.5.1\", \"cudnn\": \"9.3.0.75\"}}},\n  \"0.4.29\"",
          "\"cuda12\": {\"cuda\": 12}}},\n  \"0.4.29\"", "jax.\"0.4.30\".builds.cuda12.cuda: expected a string" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *fw = fx_subst(FIXTURE, "\"profiles\":", FW_SECTIONS);
        char *bad = fx_subst(fw, cases[i].from, cases[i].to);
        assert_non_null(bad);
        ce_manifest *x = NULL;
        assert_int_equal(ce_manifest_parse(&ctx, bad, strlen(bad), "m.json", true, &x), CE_ERR_INTEGRITY);
        if (!strstr(ce_errmsg(), cases[i].path)) fail_msg("case %zu: %s", i, ce_errmsg());
        free(fw);
        free(bad);
    }
}

/* The built-in manifest: PyTorch 2.1 ... 2.14 and JAX 0.4.26 ... with their
 * sources; the documented defaults; every installable build resolves. */
static void test_builtin(void **state)
{
    (void)state;
    ce_manifest *b = NULL;
    if (ce_manifest_load_file(&ctx, "share/manifests/cudaenv.json", &b)) fail_msg("%s", ce_errmsg());
    assert_true(b->n_torch >= 14);
    assert_string_equal(b->torch[0].version, "2.1");
    assert_true(b->n_jax >= 30);
    const struct { const char *spec, *name; } want[] = {
        { "torch-2.5", "12.4.1+cudnn9.1.1.17" },        /* PyPI's 2.5 is cu124 */
        { "torch-2.5+cu118", "11.8.0+cudnn9.1.1.17" },
        { "torch-2.1", "12.1.1+cudnn8.9.7.29" },
        { "torch-2.3+cu118", "11.8.0+cudnn8.7.0.84" },  /* the exact pin when the manifest has it */
        { "torch-2.11", "13.0.3+cudnn9.17.1.4" },       /* CUDA 13.0: 13.0.3, NVIDIA's components (issue 39) */
        { "torch-2.9+cu128", "12.8.2+cudnn9.10.2.21" },
        { "jax-0.9.2", "13.3.0+cudnn9.20.0.48" },      /* a cuDNN range: the newest on firm ground, */
        { "jax-0.9.2+cuda12", "12.9.2+cudnn9.20.0.48" }, /* not 9.27.0.42 (one sha256 source) */
        { "jax-0.11.0", "13.3.0+cudnn9.20.0.48" },     /* 0.10.0-0.11.0 from the jax-ml/jax tags */
        { "jax-latest", "13.3.0+cudnn9.20.0.48" },
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        ce_spec s;
        ce_resolved r;
        assert_int_equal(ce_spec_parse(want[i].spec, &s), CE_OK);
        if (ce_resolve(&ctx, b, &s, "", false, &r)) fail_msg("%s: %s", want[i].spec, ce_errmsg());
        assert_string_equal(r.name, want[i].name);
        assert_non_null(r.cudnn_archive);
    }
    /* bare specs (issue 39): the newest cuDNN on firm ground, the one passed over named; CUDA 9's
     * candidates all rest on one source, so it takes none and says why */
    const struct { const char *spec, *name, *passed; } bare[] = {
        { "13.3", "13.3.0+cudnn9.20.0.48", "9.27.0.42" }, { "12.4", "12.4.1+cudnn9.20.0.48", "9.27.0.42" },
        { "13.1", "13.1.2+cudnn9.20.0.48", "9.27.0.42" }, { "11.8", "11.8.0+cudnn9.10.2.21", NULL },
        { "9.0", "9.0.176", "7.6.5.32" },
    };
    for (size_t i = 0; i < sizeof bare / sizeof *bare; i++) {
        ce_spec s;
        ce_resolved r;
        assert_int_equal(ce_spec_parse(bare[i].spec, &s), CE_OK);
        if (ce_resolve(&ctx, b, &s, "", false, &r)) fail_msg("%s: %s", bare[i].spec, ce_errmsg());
        assert_string_equal(r.name, bare[i].name);
        assert_non_null(r.cudnn_why);
        if (bare[i].passed) assert_non_null(strstr(r.cudnn_passed_over, bare[i].passed));
        else assert_null(r.cudnn_passed_over);
    }
    const char *fws[] = { "torch", "jax" };
    for (size_t k = 0; k < 2; k++) {
        size_t n;
        const ce_fw *f = ce_manifest_fws(b, fws[k], &n);
        for (size_t i = 0; i < n; i++) {
            assert_non_null(f[i].default_source);
            for (size_t j = 0; j < f[i].n_builds; j++) {
                const ce_fw_build *x = &f[i].builds[j];
                assert_non_null(x->source);
                if (x->not_installable) continue;
                char text[64];
                snprintf(text, sizeof text, "%s-%s+%s", fws[k], f[i].version, x->tag);
                ce_spec s;
                ce_resolved r;
                assert_int_equal(ce_spec_parse(text, &s), CE_OK);
                if (ce_resolve(&ctx, b, &s, "", false, &r)) fail_msg("%s: %s", text, ce_errmsg());
                assert_non_null(r.cudnn);
                if (k == 1) assert_non_null(r.cudnn_why);   /* a JAX range is an implicit choice: it says why */
            }
        }
    }
    ce_manifest_free(b);
}

/* update's report: PyTorch/JAX builds added, removed, moved to another pair or default */
static void test_diff(void **state)
{
    (void)state;
    char *fw = fx_subst(FIXTURE, "\"profiles\":", FW_SECTIONS);
    char *t1 = fx_subst(fw, "\"cu118\": {\"cuda\": \"11.8.0\", \"cudnn\": \"8.9.7.29\"",
                        "\"cu118\": {\"cuda\": \"11.8.0\", \"cudnn\": \"8.7.0.84\"");
    char *t2 = fx_subst(t1, "\"0.4.29\": {\"default\": \"cuda12\", \"builds\": {\"cuda12\": {\"cuda\": \"12.2.2\", \"cudnn\": \"8.9.7.29\"}}},\n",
                        "\"0.4.31\": {\"default\": \"cuda12\", \"builds\": {\"cuda12\": {\"cuda\": \"12.5.1\", \"cudnn\": \"9.3.0.75\"}}},\n");
    assert_non_null(t2);
    ce_manifest *b = NULL;
    /* parsed from the same place as m (update compares two copies of one URL): its
     * relative URLs resolve to the same files */
    assert_int_equal(ce_manifest_parse(&ctx, t2, strlen(t2), "https://x.example/m/cudaenv.json", false, &b), CE_OK);
    ce_mchange *v = NULL;
    size_t n = 0;
    assert_int_equal(ce_manifest_diff(m, b, &v, &n), CE_OK);
    char all[2048] = "";
    for (size_t i = 0; i < n; i++) {
        static const char *const k[] = { "+", "-", "~" };
        size_t l = strlen(all);
        snprintf(all + l, sizeof all - l, "%s%s %s: %s|", k[v[i].kind], v[i].what, v[i].key, v[i].detail);
    }
    assert_string_equal(all, "~torch 2.5+cu118: cudnn 8.9.7.29 -> 8.7.0.84|"
                             "+jax 0.4.31+cuda12: CUDA 12.5.1 + cuDNN 9.3.0.75 (the default build)|"
                             "-jax 0.4.29+cuda12: |");
    free(v);
    assert_int_equal(ce_manifest_diff(m, m, &v, &n), CE_OK);
    assert_int_equal(n, 0);
    free(v);
    ce_manifest_free(b);
    free(fw);
    free(t1);
    free(t2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_torch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_jax, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_manifest_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_builtin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_diff, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
