/* Manifest validation (MANIFEST.md): the valid fixture loads into sorted,
 * owned structs; every kind of invalid value is refused with exit-5's code
 * and the JSON path of the offending value in the message. */
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

#include "core/json.h"
#include "manifest/diff.h"
#include "manifest/manifest.h"
#include "manifest/source.h"
#include "manifest_fixture.h"

static ce_ctx ctx;

static int setup(void **state)
{
    (void)state;
    memset(&ctx, 0, sizeof ctx);
    snprintf(ctx.platform, sizeof ctx.platform, "linux-x86_64");
    return 0;
}

static ce_manifest *parse_ok(const char *text, const char *origin, bool local)
{
    ce_manifest *m = NULL;
    int rc = ce_manifest_parse(&ctx, text, strlen(text), origin, local, &m);
    if (rc) fprintf(stderr, "unexpected failure: %s\n", ce_errmsg());
    assert_int_equal(rc, CE_OK);
    assert_non_null(m);
    return m;
}

static void test_valid(void **state)
{
    (void)state;
    ce_manifest *m = parse_ok(FIXTURE, "https://mirror.example/m/cudaenv.json", false);
    assert_int_equal(m->schema, 1);
    assert_string_equal(m->updated, "2026-01-01");
    assert_int_equal(m->n_tf, 5);
    assert_int_equal(m->n_cuda, 6);
    assert_int_equal(m->n_cudnn, 6);
    /* sorted in version order, not text order */
    assert_string_equal(m->tf[0].version, "1.12");
    assert_string_equal(m->tf[4].version, "2.18");
    assert_string_equal(m->cuda[0].version, "10.0.130");
    assert_string_equal(m->cuda[1].version, "11.8.0");
    assert_string_equal(m->cuda[5].version, "13.0.0");
    assert_string_equal(m->cudnn[0].version, "7.6.5.32");
    assert_string_equal(m->cudnn[5].version, "9.13.0.50");

    const ce_cuda *c = ce_manifest_cuda(m, "11.8.0");
    assert_non_null(c);
    assert_string_equal(c->min_driver, "520.61.05");
    assert_string_equal(c->min_driver_compat, "450.80.02");
    assert_int_equal(c->max_gcc, 11);
    assert_string_equal(c->sm_min, "3.5");
    assert_string_equal(c->sm_max, "9.0");
    assert_string_equal(c->source, "spack");
    const ce_artifact *a = ce_artifact_for(c->runfiles, c->n_runfiles, "linux-x86_64");
    assert_non_null(a);
    assert_string_equal(a->sha256, SHA_A);
    assert_true(a->size == 4336730777LL);
    a = ce_artifact_for(c->runfiles, c->n_runfiles, "linux-sbsa");
    assert_non_null(a);
    assert_true(a->size == -1);
    assert_null(ce_manifest_cuda(m, "11.8"));
    assert_null(ce_artifact_for(ce_manifest_cuda(m, "12.2.2")->runfiles, 1, "linux-sbsa"));

    const ce_tf *t = ce_manifest_tf(m, "2.14");
    assert_string_equal(t->cuda, "11.8.0");
    assert_string_equal(t->cudnn, "8.7.0.84");
    assert_string_equal(t->python, "3.9-3.11");
    assert_null(t->not_installable);
    assert_string_equal(ce_manifest_tf(m, "1.12")->not_installable, "no verified sha256 for the cuDNN tarball");

    const ce_cudnn *d = ce_manifest_cudnn(m, "8.9.7.29");
    assert_int_equal(d->n_builds, 2);
    assert_non_null(ce_cudnn_archive(d, 12, "linux-sbsa"));
    assert_null(ce_cudnn_archive(d, 11, "linux-sbsa"));
    assert_null(ce_cudnn_archive(d, 13, "linux-x86_64"));
    assert_true(ce_cudnn_archive(ce_manifest_cudnn(m, "8.7.0.84"), 11, "linux-x86_64")->size == 886423308);
    assert_string_equal(ce_cudnn_archive(ce_manifest_cudnn(m, "7.6.5.32"), 10, "linux-x86_64")->for_cuda, "10.1");
    assert_null(ce_cudnn_archive(d, 12, "linux-x86_64")->for_cuda);
    ce_manifest_free(m);
}

static void test_relative_urls(void **state)
{
    (void)state;
    /* against a manifest URL: its directory, or its host for /abs */
    ce_manifest *m = parse_ok(FIXTURE, "https://mirror.example/m/cudaenv.json?x=1", false);
    assert_string_equal(ce_manifest_cuda(m, "12.2.2")->runfiles[0].url, "https://mirror.example/m/cuda/cuda_12.2.2_linux.run");
    ce_manifest_free(m);
    char *t = fx_subst(FIXTURE, "\"cuda/cuda_12.2.2_linux.run\"", "\"/pub/x.run\"");
    m = parse_ok(t, "https://mirror.example/m/cudaenv.json", false);
    assert_string_equal(ce_manifest_cuda(m, "12.2.2")->runfiles[0].url, "https://mirror.example/pub/x.run");
    ce_manifest_free(m);
    free(t);
    t = fx_subst(FIXTURE, "\"cuda/cuda_12.2.2_linux.run\"", "\"../up/x.run\"");
    m = parse_ok(t, "https://mirror.example/m/cudaenv.json", false);
    assert_string_equal(ce_manifest_cuda(m, "12.2.2")->runfiles[0].url, "https://mirror.example/m/../up/x.run");
    ce_manifest_free(m);
    free(t);

    /* against a local manifest: a file:// URL in its (absolute) directory */
    char dir[] = "/tmp/ce-manifest-test.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/cudaenv.json", dir);
    FILE *f = fopen(path, "w");
    fputs(FIXTURE, f);
    fclose(f);
    assert_int_equal(ce_manifest_load_file(&ctx, path, &m), CE_OK);
    char want[512];
    snprintf(want, sizeof want, "file://%s/cuda/cuda_12.2.2_linux.run", dir);
    assert_string_equal(ce_manifest_cuda(m, "12.2.2")->runfiles[0].url, want);
    assert_true(m->local);
    assert_string_equal(m->origin, path);
    ce_manifest_free(m);
    unlink(path);
    rmdir(dir);
}

static void test_mirror(void **state)
{
    (void)state;
    snprintf(ctx.mirror, sizeof ctx.mirror, "https://mirror.example/nvidia/");
    ce_manifest *m = parse_ok(FIXTURE, "https://x.example/cudaenv.json", false);
    assert_string_equal(ce_manifest_cuda(m, "11.8.0")->runfiles[0].url,
                        "https://mirror.example/nvidia/compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run");
    /* URLs elsewhere are left alone */
    assert_string_equal(ce_manifest_cuda(m, "12.2.2")->runfiles[0].url, "https://x.example/cuda/cuda_12.2.2_linux.run");
    ce_manifest_free(m);
    snprintf(ctx.mirror, sizeof ctx.mirror, "http://127.0.0.1:8080");
    m = parse_ok(FIXTURE, "/tmp/m.json", true);
    assert_string_equal(ce_manifest_cudnn(m, "9.3.0.75")->builds[0].archives[0].url,
                        "http://127.0.0.1:8080/cudnn-9.3-cuda12.tar.xz");
    ce_manifest_free(m);
    /* an http mirror under a manifest loaded from a URL is refused like any http URL */
    ce_manifest *bad = NULL;
    assert_int_equal(ce_manifest_parse(&ctx, FIXTURE, strlen(FIXTURE), "https://x.example/m.json", false, &bad),
                     CE_ERR_INTEGRITY);
    assert_null(bad);
    assert_non_null(strstr(ce_errmsg(), "--insecure"));
    memset(ctx.mirror, 0, sizeof ctx.mirror);
}

/* the 11.8.0 runfile's URL written as url, under CUDAENV_MIRROR=mirror: what it maps to (NULL: refused) */
static char *mapped(const char *mirror, const char *url)
{
    snprintf(ctx.mirror, sizeof ctx.mirror, "%s", mirror);
    char *t = fx_subst(FIXTURE, NV "compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run", url);
    assert_non_null(t);
    ce_manifest *m = NULL;
    int rc = ce_manifest_parse(&ctx, t, strlen(t), "/tmp/cudaenv.json", true, &m);   /* local: file:// allowed */
    free(t);
    memset(ctx.mirror, 0, sizeof ctx.mirror);
    if (rc != CE_OK) {
        assert_int_equal(rc, CE_ERR_INTEGRITY);
        assert_null(m);
        return NULL;
    }
    char *r = strdup(ce_manifest_cuda(m, "11.8.0")->runfiles[0].url);
    ce_manifest_free(m);
    return r;
}

static void assert_maps(const char *mirror, const char *url, const char *want)
{
    char *got = mapped(mirror, url);
    if (!got || strcmp(got, want)) fail_msg("%s under %s: '%s', want '%s' (%s)", url, mirror, got ? got : "refused",
                                            want, got ? "" : ce_errmsg());
    free(got);
}

static void assert_refused(const char *mirror, const char *url, const char *why)
{
    char *got = mapped(mirror, url);
    if (got) fail_msg("%s under %s: mapped to '%s', not refused", url, mirror, got);
    if (!strstr(ce_errmsg(), url) || !strstr(ce_errmsg(), "CUDAENV_MIRROR=") || !strstr(ce_errmsg(), why))
        fail_msg("%s: message '%s'", url, ce_errmsg());
}

/* CUDAENV_MIRROR (issue 36 item 4): BASE/X with one slash whatever BASE ends
 * with, for NVIDIA's and PyPI's URLs alike (an object store 404s on
 * BASE//packages); a tail that could leave BASE, raw or percent-encoded, is
 * refused naming the URL. */
static void test_mirror_tail(void **state)
{
    (void)state;
    static const char *const bases[] = { "https://m.example/base", "https://m.example/base/", "https://m.example/base//" };
    for (size_t i = 0; i < 3; i++) {
        assert_maps(bases[i], NV "compute/cuda/x.run", "https://m.example/base/compute/cuda/x.run");
        assert_maps(bases[i], "https://files.pythonhosted.org/packages/c4/cb/nvidia_nccl_cu12-2.27.7-py3-none.whl",
                    "https://m.example/base/packages/c4/cb/nvidia_nccl_cu12-2.27.7-py3-none.whl");
    }
    assert_maps("/srv/mirror/", "https://files.pythonhosted.org/packages/a/b.whl", "file:///srv/mirror/packages/a/b.whl");
    assert_maps("/", "https://files.pythonhosted.org/packages/a/b.whl", "file:///packages/a/b.whl");
    assert_maps("/", NV "compute/x.run", "file:///compute/x.run");
    /* names that only look like dots stay */
    assert_maps("https://m.example", NV "compute/...x/.a/a./.../%2e%2e%2ex.run?q=../x",
                "https://m.example/compute/...x/.a/a./.../%2e%2e%2ex.run?q=../x");
    static const char *const dots[] = {
        NV "compute/../../etc/passwd", NV "compute/./x.run", NV "..", NV "compute/%2e%2e/x.run",
        NV "compute/%2E%2E/x.run", NV "compute/%2e/x.run", NV "compute/.%2E/x.run", NV "compute/%2e./x.run",
        "https://files.pythonhosted.org/packages/../../x.whl", "https://files.pythonhosted.org/%2e%2e/x.whl",
    };
    for (size_t i = 0; i < sizeof dots / sizeof *dots; i++) {
        assert_refused("https://m.example/base", dots[i], "'.' or '..' segment");
        assert_refused("/srv/mirror", dots[i], "would leave the mirror");
    }
    assert_refused("https://m.example", "https://files.pythonhosted.org//packages/x.whl", "empty segment");
    assert_refused("https://m.example", NV "compute//x.run", "empty segment");
    assert_refused("https://m.example", NV "compute/", "ends with /");
    assert_refused("https://m.example", NV "compute/..%2fx.run", "holds a '/'");
    assert_refused("https://m.example", NV "compute/a%5c..%5cx.run", "holds a '/'");
    assert_refused("https://m.example", NV "compute/a%00.run", "NUL");
    /* without a mirror the same URLs are the manifest's business, as before */
    char *t = fx_subst(FIXTURE, NV "compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run",
                       NV "compute/../x.run");
    ce_manifest *m = parse_ok(t, "https://x.example/cudaenv.json", false);
    assert_string_equal(ce_manifest_cuda(m, "11.8.0")->runfiles[0].url, NV "compute/../x.run");
    ce_manifest_free(m);
    free(t);
}

static void test_http_policy(void **state)
{
    (void)state;
    const char *schemes[] = { "http://example.com/x.run", "file:///srv/x.run" };
    for (size_t i = 0; i < 2; i++) {
        char to[128];
        snprintf(to, sizeof to, "\"%s\"", schemes[i]);
        char *t = fx_subst(FIXTURE, "\"cuda/cuda_12.2.2_linux.run\"", to);
        ce_manifest *m = NULL;
        ctx.insecure = false;
        assert_int_equal(ce_manifest_parse(&ctx, t, strlen(t), "https://x.example/m.json", false, &m), CE_ERR_INTEGRITY);
        assert_non_null(strstr(ce_errmsg(), "cuda.\"12.2.2\".runfile.\"linux-x86_64\".url"));
        assert_non_null(strstr(ce_errmsg(), "https://x.example/m.json"));
        ctx.insecure = true;
        m = parse_ok(t, "https://x.example/m.json", false);
        assert_string_equal(ce_manifest_cuda(m, "12.2.2")->runfiles[0].url, schemes[i]);
        ce_manifest_free(m);
        ctx.insecure = false;
        m = parse_ok(t, "/tmp/m.json", true);   /* a local manifest may name them */
        ce_manifest_free(m);
        free(t);
    }
    /* other schemes, also one of https's length (only "https" itself is taken as https) */
    const char *others[] = { "ftp://example.com/x.run", "hxxps://example.com/x.run", "ftpes://example.com/x.run" };
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        char to[64];
        snprintf(to, sizeof to, "\"%s\"", others[i]);
        char *t = fx_subst(FIXTURE, "\"cuda/cuda_12.2.2_linux.run\"", to);
        ce_manifest *m = NULL;
        assert_int_equal(ce_manifest_parse(&ctx, t, strlen(t), "/tmp/m.json", true, &m), CE_ERR_INTEGRITY);
        assert_non_null(strstr(ce_errmsg(), "unsupported URL"));
        assert_non_null(strstr(ce_errmsg(), others[i]));
        free(t);
    }
}

/* Each mutation of the fixture must fail with CE_ERR_INTEGRITY naming the path. */
static void test_invalid(void **state)
{
    (void)state;
    static const struct { const char *from, *to, *want; } cases[] = {
        { "\"schema\": 1,", "\"schema\": 1, \"serial\": 1.5,", "serial: expected a whole number" },
        { "\"schema\": 1,", "\"schema\": 1, \"serial\": -1,", "serial: expected a whole number" },
        { "\"schema\": 1,", "\"schema\": 1, \"serial\": \"7\",", "serial: expected a whole number" },
        { "\"schema\": 1,", "\"schema\": 1, \"serial\": 1e300,", "serial: expected a whole number" },
        { "\"schema\": 1,", "\"schema\": 1, \"source\": 7,", "source: expected a string, got a number" },
        { "\"schema\": 1,", "\"schema\": 1, \"source\": \"\",", "source: empty" },
        { "\"schema\": 1,", "\"schema\": 1, \"expires\": \"2026-02-30\",", "expires: '2026-02-30' is not a date" },
        { "\"schema\": 1,", "\"schema\": 1, \"expires\": \"2026-1-01x\",", "expires: '2026-1-01x' is not a date" },
        { "\"schema\": 1,", "\"schema\": 1, \"expires\": \"+026-01-01\",", "expires: '+026-01-01' is not a date" },
        { "\"schema\": 1", "\"schema\": 2", "schema: unsupported manifest schema 2; this cudaenv supports schema 1" },
        { "\"schema\": 1", "\"schema\": \"1\"", "schema: unsupported manifest schema a string" },
        { "\"schema\": 1,", "", "schema: missing" },
        { SHA_A, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
          "cuda.\"11.8.0\".runfile.\"linux-x86_64\".sha256: expected 64 hex characters" },
        { SHA_A, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
          "cuda.\"11.8.0\".runfile.\"linux-x86_64\".sha256: expected 64 hex characters" },
        { SHA_A, "gaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
          "cuda.\"11.8.0\".runfile.\"linux-x86_64\".sha256: expected 64 hex characters" },
        { "\"sha256\": \"" SHA_A "\",", "", "cuda.\"11.8.0\".runfile.\"linux-x86_64\".sha256: missing" },
        { "{\"url\": \"" NV "compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run\",", "{",
          "cuda.\"11.8.0\".runfile.\"linux-x86_64\".url: missing" },
        { "\"size\": 4336730777", "\"size\": \"4336730777\"",
          "cuda.\"11.8.0\".runfile.\"linux-x86_64\".size: expected a non-negative integer" },
        { "\"size\": 4336730777", "\"size\": -1", "cuda.\"11.8.0\".runfile.\"linux-x86_64\".size: expected a non-negative integer" },
        { "\"size\": 4336730777", "\"size\": 1.5", "cuda.\"11.8.0\".runfile.\"linux-x86_64\".size: expected a non-negative integer" },
        { "\"max_gcc\": 11", "\"max_gcc\": \"11\"", "cuda.\"11.8.0\".max_gcc: expected a GCC major version" },
        { "\"min_driver\": \"520.61.05\"", "\"min_driver\": 520", "cuda.\"11.8.0\".min_driver: expected a string, got a number" },
        { "\"sm\": {\"min\": \"3.5\"", "\"sm\": {\"min\": \"sm_35\"", "cuda.\"11.8.0\".sm.min: 'sm_35' is not a version" },
        { "\"2.14\": {", "\"2.14.0\": {", "tensorflow.\"2.14.0\": TensorFlow releases are keyed MAJOR.MINOR" },
        { "\"12.2.2\": {", "\"12.2\": {", "cuda.\"12.2\": CUDA releases are keyed X.Y.Z" },
        { "\"cuda11\": {\"linux-x86_64\": {\"url\": \"" NV "cudnn-linux", "\"cuda11.8\": {\"linux-x86_64\": {\"url\": \"" NV "cudnn-linux",
          "cudnn.\"8.7.0.84\".\"cuda11.8\": builds are keyed by CUDA major" },
        { "\"linux-sbsa\": {\"url\": \"" NV "compute", "\"linux-arm64\": {\"url\": \"" NV "compute",
          "cuda.\"11.8.0\".runfile.\"linux-arm64\": unknown platform 'linux-arm64'" },
        { "\"tensorflow\": {", "\"tensorflow\": [], \"x\": {", "tensorflow: expected an object" },
        { "\"cuda\": \"12.2.2\"", "\"cuda\": \"12.2.1\"", "tensorflow.\"2.15\".cuda: CUDA 12.2.1 is not in the manifest" },
        { "\"cudnn\": \"8.9.7.29\"", "\"cudnn\": \"8.9.9.9\"", "tensorflow.\"2.15\".cudnn: cuDNN 8.9.9.9 is not in the manifest" },
        { "\"cudnn\": \"8.7.0.84\"", "\"cudnn\": \"9.13.0.50\"", "tensorflow.\"2.14\".cudnn: cuDNN 9.13.0.50 has no build for CUDA 11" },
        /* a row's NCCL must be in the "nccl" section, with a build for the row's CUDA major */
        { "\"cudnn\": \"8.7.0.84\"", "\"cudnn\": \"8.7.0.84\", \"nccl\": \"2.21.5\"",
          "tensorflow.\"2.14\".nccl: NCCL 2.21.5 is not in the manifest's \"nccl\" section" },
        { "\"tensorflow\": {", "\"nccl\": {\"2.21.5\": {\"cuda12\": {\"linux-x86_64\": {\"url\": \"https://x/n.whl\", "
          "\"sha256\": \"" SHA_A "\"}}}}, \"tensorflow\": {\"9.9\": {\"cuda\": \"11.8.0\", \"nccl\": \"2.21.5\"},",
          "tensorflow.\"9.9\".nccl: NCCL 2.21.5 has no build for this CUDA major" },
        { "\"tensorflow\": {", "\"nccl\": {\"2.21\": {}}, \"tensorflow\": {", "nccl.\"2.21\": releases are keyed by their full version" },
        { "\"cuda\": \"11.8.0\", \"cudnn\": \"8.7.0.84\"", "\"cudnn\": \"8.7.0.84\"", "tensorflow.\"2.14\".cuda: missing" },
        { "\"runfile\": {\"linux-x86_64\": {\"url\": \"cuda/", "\"runfile\": \"x\", \"y\": {\"linux-x86_64\": {\"url\": \"cuda/",
          "cuda.\"12.2.2\".runfile: expected an object" },
        { "\"12.2.0\": {", "\"12.2.2\": {", "duplicate" },
        { "\"updated\": \"2026-01-01\"", "\"updated\": 20260101", "updated: expected a string" },
        { "\"schema\": 1,", "\"schema\": 1,,", "not valid JSON (near line 1" },
        { "\"cuda\": {\n", "\"cuda\": {\n \"11.8.0\": 5,\n", "cuda.\"11.8.0\": expected an object" },
        /* strict parsing (issue 8): URLs with spaces or control characters, keys the store cannot name */
        { "cuda_11.8.0_520.61.05_linux.run", "cuda_11.8.0 520.61.05_linux.run",
          "cuda.\"11.8.0\".runfile.\"linux-x86_64\".url: URL '" },
        { "cuda_11.8.0_520.61.05_linux.run", "cuda_11.8.0_520.61.05_linux.run\\r\\nX-Evil: 1",
          "contains a control character (byte 0x0d" },
        { "cuda_11.8.0_520.61.05_linux.run", "cuda_11.8.0_520.61.05_linux.run\\u0000",
          "a string contains \\u0000 (a control character)" },
        { "\"12.2.2\": {\"runfile\"", "\"12.2.20000000000000000000000000000\": {\"runfile\"",
          "the version key is 34 characters; the store names at most 31" },
        { "\"8.7.0.84\": {\"source\"", "\"8.7.0.8400000000000000000000000000\": {\"source\"",
          "the version key is 34 characters; the store names at most 31" },
        /* cuda.<ver>.redist and profiles */
        { "\"sha256\": \"" SHA_B "\", \"size\": 55781", "\"sha256\": \"" SHA_B "\", \"size\": \"55781\"",
          "cuda.\"12.2.0\".redist.size: expected a non-negative integer" },
        { "\"sha256\": \"" SHA_B "\", \"size\": 55781", "\"sha256\": \"x\", \"size\": 55781",
          "cuda.\"12.2.0\".redist.sha256: expected 64 hex characters" },
        { "\"size\": 55781", "\"size\": 99999999999", "cuda.\"12.2.0\".redist: a redistrib JSON of 99999999999 bytes" },
        { "\"url\": \"" NV "compute/cuda/redist/", "\"url\": \"ftp://x/", "cuda.\"12.2.0\".redist.url: unsupported URL 'ftp://x/" },
        { "\"redist\": {\"url\"", "\"redist\": [], \"x\": {\"url\"", "cuda.\"12.2.0\".redist: expected an object" },
        { "\"profiles\": {", "\"profiles\": [], \"y\": {", "profiles: expected an object" },
        { "\"components\": [\"cuda_cudart\"", "\"components\": [\"../cuda_cudart\"",
          "profiles.tf.components: element 0: expected a component name" },
        { "\"components\": [\"cuda_cudart\", \"libcublas\"", "\"components\": [\"cuda_cudart\", 7",
          "profiles.tf.components: element 1: expected a component name ([a-z0-9_]+, \"*\" or a prefix ending in *), got a number" },
        { "\"components\": [\"cuda_cudart\", \"libcublas\", \"cuda_nvcc\"]", "\"components\": []",
          "profiles.tf.components: missing or empty" },
        { "\"components\": [\"*\"]", "\"components\": \"*\"", "profiles.toolkit.components: expected an array" },
        { "\"nsight_*\"", "\"nsight*x\"", "profiles.toolkit.exclude: element 1" },
        { "\"tf\": {", "\"T F\": {", "profiles.\"T F\": profile names are [a-z0-9_]+" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *t = fx_subst(FIXTURE, cases[i].from, cases[i].to);
        if (!t) fail_msg("case %zu: '%s' not in the fixture", i, cases[i].from);
        ce_manifest *m = (ce_manifest *)1;
        ce_status_clear();
        int rc = ce_manifest_parse(&ctx, t, strlen(t), "/etc/test-manifest.json", true, &m);
        if (rc != CE_ERR_INTEGRITY || !strstr(ce_errmsg(), cases[i].want) || !strstr(ce_errmsg(), "/etc/test-manifest.json"))
            fail_msg("case %zu: rc %d, err '%s', want '%s'", i, rc, ce_errmsg(), cases[i].want);
        assert_null(m);
        free(t);
    }
}

/* One document: trailing garbage or a second document is refused, trailing
 * whitespace is not. */
static void test_trailing(void **state)
{
    (void)state;
    static const char *tails[] = { "{}", "x", "\n{\"schema\": 1}\n", "\n\n,", "\x01" };
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        size_t n = strlen(FIXTURE) + strlen(tails[i]);
        char *t = malloc(n + 1);
        snprintf(t, n + 1, "%s%s", FIXTURE, tails[i]);
        ce_manifest *m = (ce_manifest *)1;
        int rc = ce_manifest_parse(&ctx, t, n, "/etc/two.json", true, &m);
        if (rc != CE_ERR_INTEGRITY || !strstr(ce_errmsg(), "/etc/two.json: data after the JSON document"))
            fail_msg("tail %zu: rc %d, err '%s'", i, rc, ce_errmsg());
        assert_null(m);
        free(t);
    }
    size_t n = strlen(FIXTURE) + 4;
    char *t = malloc(n + 1);
    snprintf(t, n + 1, "%s \n\t\r", FIXTURE);
    ce_manifest *m = parse_ok(t, "/etc/ws.json", true);
    ce_manifest_free(m);
    free(t);
}

static void test_redist_profiles(void **state)
{
    (void)state;
    ce_manifest *m = parse_ok(FIXTURE, "https://mirror.example/m/cudaenv.json", false);
    const ce_cuda *c = ce_manifest_cuda(m, "12.2.0");
    assert_non_null(c->redist);
    assert_string_equal(c->redist->url, "https://developer.download.nvidia.com/compute/cuda/redist/redistrib_12.2.0.json");
    assert_string_equal(c->redist->sha256, SHA_B);
    assert_true(c->redist->size == 55781);
    assert_null(ce_manifest_cuda(m, "11.8.0")->redist);
    assert_int_equal(m->n_profiles, 2);
    const ce_profile *tf = ce_manifest_profile(m, "tf"), *tk = ce_manifest_profile(m, "toolkit");
    assert_non_null(tf);
    assert_non_null(tk);
    assert_null(ce_manifest_profile(m, "nope"));
    assert_string_equal(tf->source, "xla");
    assert_true(ce_profile_selects(tf, "libcublas"));
    assert_false(ce_profile_selects(tf, "libcufft"));
    assert_false(ce_profile_selects(tf, "libcublas_x"));
    assert_true(ce_profile_selects(tk, "libcufft"));
    assert_false(ce_profile_selects(tk, "cuda_documentation"));
    assert_false(ce_profile_selects(tk, "nsight_systems"));
    assert_false(ce_profile_selects(NULL, "libcufft"));
    assert_true(ce_component_name_valid("cuda_nvcc", false));
    assert_false(ce_component_name_valid("cuda_nvcc*", false));
    assert_true(ce_component_name_valid("mft*", true));
    assert_false(ce_component_name_valid("", true));
    assert_false(ce_component_name_valid("a/b", true));
    assert_false(ce_component_name_valid("CUDA", true));
    ce_manifest_free(m);
    /* the relative redist URL resolves against the manifest, like any artifact */
    char *t = fx_subst(FIXTURE, NV "compute/cuda/redist/redistrib_12.2.0.json", "redist/redistrib_12.2.0.json");
    m = parse_ok(t, "https://mirror.example/m/cudaenv.json", false);
    assert_string_equal(ce_manifest_cuda(m, "12.2.0")->redist->url, "https://mirror.example/m/redist/redistrib_12.2.0.json");
    ce_manifest_free(m);
    free(t);
}

static void test_size_limit(void **state)
{
    (void)state;
    ce_manifest *m = NULL;
    size_t n = CE_MANIFEST_MAX + 1;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    memcpy(big, FIXTURE, strlen(FIXTURE));
    big[n] = '\0';
    assert_int_equal(ce_manifest_parse(&ctx, big, n, "/x/m.json", true, &m), CE_ERR_INTEGRITY);
    assert_non_null(strstr(ce_errmsg(), "16 MiB"));
    assert_non_null(strstr(ce_errmsg(), "/x/m.json"));
    /* exactly the limit is fine (trailing whitespace) */
    assert_int_equal(ce_manifest_parse(&ctx, big, n - 1, "/tmp/m.json", true, &m), CE_OK);
    ce_manifest_free(m);
    free(big);

    char path[] = "/tmp/ce-manifest-big.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, CE_MANIFEST_MAX + 10), 0);
    close(fd);
    assert_int_equal(ce_manifest_load_file(&ctx, path, &m), CE_ERR_INTEGRITY);
    assert_non_null(strstr(ce_errmsg(), "16 MiB"));
    assert_non_null(strstr(ce_errmsg(), path));
    unlink(path);
    assert_int_equal(ce_manifest_load_file(&ctx, "/nonexistent/cudaenv.json", &m), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "/nonexistent/cudaenv.json"));
}

/* update's report (manifest/diff.h): added, removed and corrected rows */
/* The signed claims (manifest_claims.c): absent is -1 / NULL; present, kept;
 * "expires" is over once its whole day (UTC) is. */
static void test_claims(void **state)
{
    (void)state;
    ce_manifest *m = parse_ok(FIXTURE, "/etc/c.json", true);
    assert_int_equal(m->serial, -1);
    assert_null(m->source);
    assert_null(m->expires);
    ce_manifest_free(m);
    const char *claims = "\"schema\": 1, \"serial\": 9007199254740992, \"source\": \"https://a.example/c.json\", "
                         "\"expires\": \"2027-02-28\",";
    size_t n = strlen(FIXTURE) + strlen(claims);
    char *t = malloc(n + 1);
    const char *at = strstr(FIXTURE, "\"schema\": 1,");
    assert_non_null(at);
    snprintf(t, n + 1, "%.*s%s%s", (int)(at - FIXTURE), FIXTURE, claims, at + strlen("\"schema\": 1,"));
    m = parse_ok(t, "/etc/c.json", true);
    assert_true(m->serial == 9007199254740992LL);
    assert_string_equal(m->source, "https://a.example/c.json");
    assert_string_equal(m->expires, "2027-02-28");
    ce_manifest_free(m);
    free(t);
    time_t day = 1803772800;   /* 2027-02-28 00:00:00 UTC */
    assert_false(ce_manifest_date_past("2027-02-28", day));
    assert_false(ce_manifest_date_past("2027-02-28", day + 86399));
    assert_true(ce_manifest_date_past("2027-02-28", day + 86400));
    assert_false(ce_manifest_date_past(NULL, day + 86400 * 365));
    assert_false(ce_manifest_date_past("soon", day + 86400 * 365));
}

static void test_diff(void **state)
{
    (void)state;
    ce_manifest *a = parse_ok(FIXTURE, "https://m.example/a.json", false);
    char *t1 = fx_subst(FIXTURE, "\"2.14\": {\"cuda\": \"11.8.0\", \"cudnn\": \"8.7.0.84\"",
                        "\"2.16\": {\"cuda\": \"12.5.1\", \"cudnn\": \"9.3.0.75\"}, \"2.14\": {\"cuda\": \"11.8.0\", \"cudnn\": \"8.9.7.29\"");
    char *t2 = fx_subst(t1, "\"min_driver\": \"520.61.05\"", "\"min_driver\": \"520.61.06\"");
    char *t3 = fx_subst(t2, "  \"10.0.130\": {\"runfile\": {\"linux-x86_64\": " ART(NV "cuda_10.0.130.run", SHA_C) "}}\n",
                        "  \"13.0.1\": {\"runfile\": {\"linux-x86_64\": " ART(NV "cuda_13.0.1.run", SHA_C) "}}\n");
    assert_non_null(t3);
    ce_manifest *b = parse_ok(t3, "https://m.example/a.json", false);
    ce_mchange *v = NULL;
    size_t n = 0;
    assert_int_equal(ce_manifest_diff(a, b, &v, &n), CE_OK);
    char all[4096] = "";
    for (size_t i = 0; i < n; i++) {
        static const char *const k[] = { "+", "-", "~" };
        size_t l = strlen(all);
        snprintf(all + l, sizeof all - l, "%s%s %s: %s|", k[v[i].kind], v[i].what, v[i].key, v[i].detail);
    }
    assert_string_equal(all, "~tf 2.14: cudnn 8.7.0.84 -> 8.9.7.29|+tf 2.16: CUDA 12.5.1 + cuDNN 9.3.0.75|"
                             "~cuda 11.8.0: min_driver 520.61.05 -> 520.61.06|+cuda 13.0.1: min driver unknown|"
                             "-cuda 10.0.130: |");
    free(v);
    /* nothing changed: no entry; no old manifest: everything is new */
    assert_int_equal(ce_manifest_diff(a, a, &v, &n), CE_OK);
    assert_int_equal(n, 0);
    free(v);
    assert_int_equal(ce_manifest_diff(NULL, a, &v, &n), CE_OK);
    assert_int_equal(n, a->n_tf + a->n_cuda + a->n_cudnn);
    free(v);
    ce_manifest_free(b);
    /* a runfile served from a new URL (the same sha256) and a redistrib JSON whose sha256
     * changed: each named, old -> new */
    char *t4 = fx_subst(FIXTURE, "compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run",
                        "compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux_v2.run");
    char *t5 = fx_subst(t4, "redistrib_12.2.0.json\", \"sha256\": \"" SHA_B, "redistrib_12.2.0.json\", \"sha256\": \"" SHA_A);
    assert_non_null(t5);
    b = parse_ok(t5, "https://m.example/a.json", false);
    assert_int_equal(ce_manifest_diff(a, b, &v, &n), CE_OK);
    all[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(all);
        snprintf(all + l, sizeof all - l, "%s %s: %s|", v[i].what, v[i].key, v[i].detail);
    }
    assert_string_equal(all, "cuda 11.8.0: runfile linux-x86_64 url " NV "compute/cuda/11.8.0/local_installers/"
                             "cuda_11.8.0_520.61.05_linux.run -> " NV "compute/cuda/11.8.0/local_installers/"
                             "cuda_11.8.0_520.61.05_linux_v2.run|cuda 12.2.0: redist sha256 " SHA_B " -> " SHA_A "|");
    free(v);
    ce_manifest_free(a);
    ce_manifest_free(b);
    free(t1);
    free(t2);
    free(t3);
    free(t4);
    free(t5);
}

/* ce_json_top_string: the top-level member only, through strings with escapes and
 * nesting; nothing for a missing, non-string or too long one */
static const char *top(const char *json, const char *name, char *out, size_t n)
{
    const char *tmp = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/ce-top.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
    close(fd);
    int found = ce_json_top_string(path, name, out, n);
    unlink(path);
    return found ? out : NULL;
}

static int count_member(void *ud, const char *t, size_t key_at, size_t klen, size_t val_at, size_t end)
{
    (void)t; (void)key_at; (void)klen; (void)val_at; (void)end;
    ++*(size_t *)ud;
    return 0;
}

static void test_top_string(void **state)
{
    (void)state;
    char out[32];
    assert_string_equal(top("{\"schema\": 1, \"updated\": \"2026-12-01\", \"cuda\": {}}", "updated", out, sizeof out),
                        "2026-12-01");
    /* a nested member of the same name, a string holding the name, quotes, braces and a
     * colon, and arrays before it: only the top-level one counts */
    assert_string_equal(top("{\"cuda\": {\"updated\": \"nested\", \"x\": [\"updated\", {\"updated\": 1}]},\n"
                            " \"note\": \"a \\\"updated\\\": {\\\"x\\\"} ]\", \"n\": -1.5e3, \"t\": true,\n"
                            " \"updated\" : \"2026-01-02\"}", "updated", out, sizeof out),
                        "2026-01-02");
    /* what comes after the member is never read: a broken tail does not matter */
    assert_string_equal(top("{\"updated\": \"2026-03-04\", \"cuda\": {{{", "updated", out, sizeof out), "2026-03-04");
    /* escapes in the value are kept as written */
    assert_string_equal(top("{\"updated\": \"a\\\"b\"}", "updated", out, sizeof out), "a\"b");
    assert_null(top("{\"cuda\": {\"updated\": \"nested\"}}", "updated", out, sizeof out));
    assert_null(top("{\"updated\": 20261201}", "updated", out, sizeof out));
    assert_null(top("{\"updated\": null, \"x\": \"2026\"}", "updated", out, sizeof out));
    assert_null(top("[\"updated\", \"2026\"]", "updated", out, sizeof out));
    assert_null(top("{\"updated\": \"0123456789\"}", "updated", out, 10));   /* 10 bytes do not fit in 10 */
    assert_string_equal(top("{\"updated\": \"012345678\"}", "updated", out, 10), "012345678");
    assert_int_equal(ce_json_top_string("/nonexistent/m.json", "updated", out, sizeof out), 0);
    /* inside a nested value the scanner jumps from quote or bracket to the next: braces,
     * an escaped quote and a trailing escaped backslash in nested strings are stepped over */
    const char *nested = "{\"cuda\": {\"a\": \"}\\\"]{\", \"b\": [\"x\\\\\", \"}\", {\"c\": \"{{\"}]},\n"
                         " \"updated\": \"2026-05-06\", \"z\": [1, {\"y\": \"]\"}]}";
    assert_string_equal(top(nested, "updated", out, sizeof out), "2026-05-06");
    size_t n = 0;
    assert_int_equal(ce_json_each_member(nested, strlen(nested), count_member, &n), 1);
    assert_int_equal(n, 3);   /* cuda, updated, z: nothing nested counted */
    assert_int_equal(ce_json_each_member("{\"a\": \"x\\", 6, count_member, &n), -1);   /* a string cut after a backslash */
    assert_int_equal(ce_json_each_member("[1]", 3, count_member, &n), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_valid, setup),
        cmocka_unit_test_setup(test_relative_urls, setup),
        cmocka_unit_test_setup(test_mirror, setup),
        cmocka_unit_test_setup(test_mirror_tail, setup),
        cmocka_unit_test_setup(test_http_policy, setup),
        cmocka_unit_test_setup(test_invalid, setup),
        cmocka_unit_test_setup(test_trailing, setup),
        cmocka_unit_test_setup(test_size_limit, setup),
        cmocka_unit_test_setup(test_redist_profiles, setup),
        cmocka_unit_test_setup(test_claims, setup),
        cmocka_unit_test_setup(test_diff, setup),
        cmocka_unit_test(test_top_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
