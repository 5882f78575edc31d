/* ce_resolve against the fixture manifest: TensorFlow rows, CUDA short and
 * full specs, cuDNN choice (spec, --cudnn, --no-cudnn, the default), unknown
 * specs with "did you mean", and a platform the manifest has no file for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manifest/manifest.h"
#include "manifest_fixture.h"
#include "manifest/resolve.h"
#include "manifest/slice.h"
#include "core/file.h"
#include "core/version.h"

static ce_ctx ctx;
static ce_manifest *m;

static int setup(void **state)
{
    (void)state;
    memset(&ctx, 0, sizeof ctx);
    snprintf(ctx.platform, sizeof ctx.platform, "linux-x86_64");
    if (ce_manifest_parse(&ctx, FIXTURE, strlen(FIXTURE), "https://x.example/m/cudaenv.json", false, &m)) {
        fprintf(stderr, "%s\n", ce_errmsg());
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ce_manifest_free(m);
    m = NULL;
    return 0;
}

static int resolve(const char *text, const char *cudnn, bool no_cudnn, ce_resolved *r)
{
    ce_spec s;
    int rc = ce_spec_parse(text, &s);
    if (rc) return rc;
    return ce_resolve(&ctx, m, &s, cudnn, no_cudnn, r);
}

static void test_tf(void **state)
{
    (void)state;
    const char *specs[] = { "tf-2.14", "tensorflow-2.14.1", "tensorflow==2.14.0", "tf2.14" };
    for (size_t i = 0; i < 4; i++) {
        ce_resolved r;
        assert_int_equal(resolve(specs[i], "", false, &r), CE_OK);
        assert_string_equal(r.tf->version, "2.14");
        assert_string_equal(r.cuda->version, "11.8.0");
        assert_string_equal(r.cudnn->version, "8.7.0.84");
        assert_string_equal(r.runfile->sha256, SHA_A);
        assert_string_equal(r.runfile->url, NV "compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run");
        assert_string_equal(r.cudnn_archive->url, NV "cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz");
        assert_string_equal(r.name, "11.8.0+cudnn8.7.0.84");
    }
    ce_resolved r;
    assert_int_equal(resolve("tf-2.13", "", false, &r), CE_OK);
    assert_string_equal(r.name, "11.8.0+cudnn8.6.0.163");
    assert_int_equal(resolve("tf-2.15", "", false, &r), CE_OK);
    assert_string_equal(r.name, "12.2.2+cudnn8.9.7.29");
    /* TF spec with a cuDNN choice: the override wins */
    assert_int_equal(resolve("tf-2.14+cudnn8.9", "", false, &r), CE_OK);
    assert_string_equal(r.name, "11.8.0+cudnn8.9.7.29");
    assert_int_equal(resolve("tf-2.14", "", true, &r), CE_OK);
    assert_null(r.cudnn);
    assert_null(r.cudnn_archive);
    assert_string_equal(r.name, "11.8.0");
}

static void test_cuda(void **state)
{
    (void)state;
    ce_resolved r;
    /* short: the newest 12.2.*; its cuDNN: the newest with a cuda12 build */
    assert_int_equal(resolve("12.2", "", false, &r), CE_OK);
    assert_null(r.tf);
    assert_string_equal(r.cuda->version, "12.2.2");
    assert_string_equal(r.cudnn->version, "9.3.0.75");
    assert_string_equal(r.runfile->url, "https://x.example/m/cuda/cuda_12.2.2_linux.run");
    assert_int_equal(resolve("cuda-12.2.0", "", false, &r), CE_OK);
    assert_string_equal(r.cuda->version, "12.2.0");
    assert_string_equal(r.runfile->sha256, SHA_C);
    assert_int_equal(resolve("11.8", "", false, &r), CE_OK);
    assert_string_equal(r.name, "11.8.0+cudnn8.9.7.29");
    assert_int_equal(resolve("13", "", false, &r), CE_OK);
    assert_string_equal(r.name, "13.0.0+cudnn9.13.0.50");
    /* per-minor cuDNN builds ("for_cuda": "10.1") are not offered to 10.0 */
    assert_int_equal(resolve("10.0", "", false, &r), CE_OK);
    assert_null(r.cudnn);
    assert_string_equal(r.name, "10.0.130");
}

static void test_cudnn_choice(void **state)
{
    (void)state;
    ce_resolved r;
    assert_int_equal(resolve("11.8+cudnn8.6", "", false, &r), CE_OK);
    assert_string_equal(r.cudnn->version, "8.6.0.163");
    assert_int_equal(resolve("11.8", "8.9", false, &r), CE_OK);
    assert_string_equal(r.cudnn->version, "8.9.7.29");
    assert_string_equal(r.cudnn_archive->url, NV "cudnn-8.9-cuda11.tar.xz");
    assert_int_equal(resolve("12.2", "8.9.7.29", false, &r), CE_OK);
    assert_string_equal(r.cudnn_archive->url, NV "cudnn-8.9-cuda12.tar.xz");
    assert_int_equal(resolve("11.8", "8", false, &r), CE_OK);
    assert_string_equal(r.cudnn->version, "8.9.7.29");
    /* --cudnn beats +cudnn in the spec */
    assert_int_equal(resolve("11.8+cudnn8.6", "8.7", false, &r), CE_OK);
    assert_string_equal(r.cudnn->version, "8.7.0.84");
    /* a release without a build for this CUDA major */
    assert_int_equal(resolve("11.8", "9.3", false, &r), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "cuDNN 9.3 has no linux-x86_64 build for CUDA 11.8.0"));
    assert_int_equal(resolve("11.8", "8.8", false, &r), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "no cuDNN 8.8 in the manifest; did you mean 8.9.7.29"));
    assert_int_equal(resolve("11.8", "x", false, &r), CE_ERR_USAGE);
    /* --no-cudnn drops even an explicit choice */
    assert_int_equal(resolve("11.8+cudnn8.6", "", true, &r), CE_OK);
    assert_null(r.cudnn);
}

static void test_unknown(void **state)
{
    (void)state;
    ce_resolved r;
    assert_int_equal(resolve("2.14", "", false, &r), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "did you mean tf-2.14"));
    assert_int_equal(resolve("tf-2.16", "", false, &r), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "no TensorFlow release tf-2.16"));
    assert_non_null(strstr(ce_errmsg(), "did you mean tf-2.15"));
    assert_int_equal(resolve("tf-11.8", "", false, &r), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "did you mean 11.8?"));
    assert_int_equal(resolve("11.9", "", false, &r), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "no CUDA release 11.9"));
    assert_non_null(strstr(ce_errmsg(), "11.8"));
    assert_int_equal(resolve("11.8.1", "", false, &r), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "did you mean 11.8.0"));
    assert_int_equal(resolve("system", "", false, &r), CE_ERR_NOTFOUND);
    /* a row TF lists but the manifest cannot install: its reason, and the row */
    assert_int_equal(resolve("tf-1.12", "", false, &r), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "no verified sha256 for the cuDNN tarball"));
    assert_non_null(r.tf);
    assert_string_equal(r.tf->cuda, "9.0.176");
}

static void test_platform(void **state)
{
    (void)state;
    ce_resolved r;
    snprintf(ctx.platform, sizeof ctx.platform, "linux-sbsa");
    assert_int_equal(resolve("12.5", "", false, &r), CE_OK);
    assert_string_equal(r.name, "12.5.1+cudnn8.9.7.29");
    assert_string_equal(r.cudnn_archive->url, NV "cudnn-8.9-sbsa.tar.xz");
    assert_int_equal(resolve("12.2", "", false, &r), CE_ERR_NOTFOUND);
    assert_null(r.runfile);
    assert_non_null(r.cuda);
    assert_non_null(strstr(ce_errmsg(), "CUDA 12.2.2 has no runfile for linux-sbsa"));
    assert_non_null(strstr(ce_errmsg(), "linux-x86_64"));
    assert_int_equal(resolve("tf-2.18", "", false, &r), CE_ERR_NOTFOUND);
    assert_null(r.cudnn_archive);
    assert_non_null(strstr(ce_errmsg(), "needs cuDNN 9.3.0.75"));
    assert_non_null(strstr(ce_errmsg(), "linux-sbsa"));
    snprintf(ctx.platform, sizeof ctx.platform, "linux-x86_64");
}

/* The built-in manifest: valid, TensorFlow 1.12 through 2.21, and every row
 * resolves on linux-x86_64 to a runfile and a cuDNN tarball with a sha256
 * (or says why not).  Run from the repository root (tests/run.sh does). */
static void test_builtin(void **state)
{
    (void)state;
    ce_manifest *b = NULL;
    int rc = ce_manifest_load_file(&ctx, "share/manifests/cudaenv.json", &b);
    if (rc) fail_msg("%s", ce_errmsg());
    assert_int_equal(b->n_tf, 26);
    assert_string_equal(b->tf[0].version, "1.12");
    assert_string_equal(b->tf[b->n_tf - 1].version, "2.21");
    size_t installable = 0;
    for (size_t i = 0; i < b->n_tf; i++) {
        ce_spec s;
        char text[32];
        snprintf(text, sizeof text, "tf-%s", b->tf[i].version);
        assert_int_equal(ce_spec_parse(text, &s), CE_OK);
        ce_resolved r;
        rc = ce_resolve(&ctx, b, &s, "", false, &r);
        if (b->tf[i].not_installable) {
            assert_int_equal(rc, CE_ERR_NOTFOUND);
            assert_true(strlen(b->tf[i].not_installable) > 10);
            continue;
        }
        if (rc) fail_msg("%s: %s", text, ce_errmsg());
        assert_non_null(r.runfile);
        assert_non_null(r.cudnn_archive);
        assert_int_equal(strlen(r.runfile->sha256), 64);
        assert_int_equal(strlen(r.cudnn_archive->sha256), 64);
        assert_true(strncmp(r.runfile->url, "https://", 8) == 0);
        assert_true(strncmp(r.cudnn_archive->url, "https://", 8) == 0);
        installable++;
    }
    assert_true(installable > 0);
    /* TensorFlow's official table, not the blog posts: 2.13/2.14 are CUDA 11.8 */
    const ce_tf *t = ce_manifest_tf(b, "2.14");
    assert_string_equal(t->cuda, "11.8.0");
    assert_string_equal(t->cudnn, "8.7.0.84");
    t = ce_manifest_tf(b, "2.13");
    assert_string_equal(t->cuda, "11.8.0");
    assert_string_equal(t->cudnn, "8.6.0.163");
    assert_true(ce_version_matches("12.2", ce_manifest_tf(b, "2.15")->cuda));
    assert_true(ce_version_matches("8.9", ce_manifest_tf(b, "2.15")->cudnn));
    assert_true(ce_version_matches("12.5", ce_manifest_tf(b, "2.18")->cuda));
    assert_true(ce_version_matches("9.3", ce_manifest_tf(b, "2.18")->cudnn));
    const ce_cuda *c = ce_manifest_cuda(b, "11.8.0");
    const ce_artifact *a = ce_artifact_for(c->runfiles, c->n_runfiles, "linux-x86_64");
    assert_string_equal(a->sha256, "9223c4af3aebe4a7bbed9abd9b163b03a1b34b855fbc2b4a0d1b706ac09a5a16");
    assert_true(a->size == 4336730777LL);
    assert_string_equal(c->min_driver, "520.61.05");
    assert_int_equal(c->max_gcc, 11);
    a = ce_cudnn_archive(ce_manifest_cudnn(b, "8.7.0.84"), 11, "linux-x86_64");
    assert_string_equal(a->sha256, "976c4cba7233c97ae74006afab5172976300ba40f5b250a21f8cf71f59c9f76d");
    assert_true(a->size == 886423308LL);
    ce_manifest_free(b);
}

/* ce_manifest_slice_tf: for every TensorFlow row of the built-in manifest,
 * the slice parses and resolves to what the whole manifest resolves to (the
 * same toolchain, runfile, cuDNN archive, NCCL, Python); what is not a row
 * gives NULL (the caller then parses the whole). */
/* spec resolves in the slice sm as in the whole manifest b: the same outcome,
 * name, CUDA release, runfile, cuDNN and its archive; the outcome */
static int same_resolution(const ce_manifest *b, const ce_manifest *sm, const char *spec, ce_resolved *rw,
                           ce_resolved *rs)
{
    ce_spec s;
    assert_int_equal(ce_spec_parse(spec, &s), CE_OK);
    int cw = ce_resolve(&ctx, b, &s, "", false, rw), cs = ce_resolve(&ctx, sm, &s, "", false, rs);
    assert_int_equal(cw, cs);
    assert_string_equal(rw->name, rs->name);
    assert_string_equal(rw->cuda ? rw->cuda->version : "", rs->cuda ? rs->cuda->version : "");
    assert_string_equal(rw->runfile ? rw->runfile->sha256 : "", rs->runfile ? rs->runfile->sha256 : "");
    assert_string_equal(rw->cudnn ? rw->cudnn->version : "", rs->cudnn ? rs->cudnn->version : "");
    assert_string_equal(rw->cudnn_archive ? rw->cudnn_archive->sha256 : "",
                        rs->cudnn_archive ? rs->cudnn_archive->sha256 : "");
    return cw;
}

static void test_slice(void **state)
{
    (void)state;
    ce_manifest *b = NULL;
    char *text = NULL;
    size_t len = 0;
    if (ce_manifest_load_file(&ctx, "share/manifests/cudaenv.json", &b)) fail_msg("%s", ce_errmsg());
    assert_int_equal(ce_file_read("share/manifests/cudaenv.json", 64 << 20, &text, &len), CE_OK);
    for (size_t i = 0; i < b->n_tf; i++) {
        size_t slen = 0;
        char *sl = ce_manifest_slice_tf(text, len, b->tf[i].version, &slen);
        assert_non_null(sl);
        assert_true(slen < len / 4);
        ce_manifest *sm = NULL;
        if (ce_manifest_parse(&ctx, sl, slen, "/x/cudaenv.json", true, &sm)) fail_msg("%s: %s", b->tf[i].version, ce_errmsg());
        assert_int_equal(sm->n_tf, 1);
        assert_int_equal(sm->n_cuda, 1);
        assert_true(sm->n_cudnn <= 1);
        char spec[32];
        snprintf(spec, sizeof spec, "tf-%s", b->tf[i].version);
        ce_resolved rw, rs;
        same_resolution(b, sm, spec, &rw, &rs);
        assert_string_equal(rw.tf->python ? rw.tf->python : "", rs.tf->python ? rs.tf->python : "");
        assert_string_equal(rw.tf->nccl ? rw.tf->nccl : "", rs.tf->nccl ? rs.tf->nccl : "");
        assert_string_equal(sm->updated, b->updated);
        assert_int_equal(sm->n_profiles, b->n_profiles);
        ce_manifest_free(sm);
        free(sl);
    }
    size_t n;
    assert_null(ce_manifest_slice_tf(text, len, "9.99", &n));   /* no such row */
    char bad[] = "[1, 2]";
    assert_null(ce_manifest_slice_tf(bad, strlen(bad), "2.14", &n));
    char nocuda[] = "{\"schema\": 1, \"tensorflow\": {\"2.14\": {\"cudnn\": \"8.7.0.84\"}}, \"cuda\": {}, \"cudnn\": {}}";
    assert_null(ce_manifest_slice_tf(nocuda, strlen(nocuda), "2.14", &n));
    char missing[] = "{\"schema\": 1, \"tensorflow\": {\"2.14\": {\"cuda\": \"11.8.0\"}}, \"cuda\": {\"12.0.0\": {}}, \"cudnn\": {}}";
    assert_null(ce_manifest_slice_tf(missing, strlen(missing), "2.14", &n));
    free(text);
    ce_manifest_free(b);
}

/* ce_manifest_slice_cuda: for every CUDA release of the built-in manifest,
 * named whole ("12.4.1") and by its minor ("12.4"), the slice resolves to
 * what the whole manifest resolves to: the release, its runfile, the
 * implicit cuDNN, why it was picked and what it passed over, the NCCL an
 * install would add.  "12" and "latest" are not sliced (NULL). */
static void test_slice_cuda(void **state)
{
    (void)state;
    ce_manifest *b = NULL;
    char *text = NULL;
    size_t len = 0;
    if (ce_manifest_load_file(&ctx, "share/manifests/cudaenv.json", &b)) fail_msg("%s", ce_errmsg());
    assert_int_equal(ce_file_read("share/manifests/cudaenv.json", 64 << 20, &text, &len), CE_OK);
    for (size_t i = 0; i < b->n_cuda; i++)
        for (int minor = 0; minor < 2; minor++) {
            char ver[32];
            snprintf(ver, sizeof ver, "%s", b->cuda[i].version);
            if (minor) *strrchr(ver, '.') = '\0';
            size_t slen = 0;
            char *sl = ce_manifest_slice_cuda(text, len, ver, &slen);
            assert_non_null(sl);
            assert_true(slen < len / 2);
            ce_manifest *sm = NULL;
            if (ce_manifest_parse(&ctx, sl, slen, "/x/cudaenv.json", true, &sm)) fail_msg("%s: %s", ver, ce_errmsg());
            assert_int_equal(sm->n_tf, 0);
            assert_true(sm->n_cuda >= 1 && sm->n_cuda < b->n_cuda);
            ce_resolved rw, rs;
            int cw = same_resolution(b, sm, ver, &rw, &rs);
            assert_string_equal(rw.cudnn_why ? rw.cudnn_why : "", rs.cudnn_why ? rs.cudnn_why : "");
            assert_string_equal(rw.cudnn_passed_over ? rw.cudnn_passed_over : "", rs.cudnn_passed_over ? rs.cudnn_passed_over : "");
            if (cw == CE_OK) {
                const ce_cudnn *nw, *ns;
                const ce_artifact *aw, *as;
                assert_int_equal(ce_resolve_nccl(&ctx, b, &rw, "+nccl", &nw, &aw), ce_resolve_nccl(&ctx, sm, &rs, "+nccl", &ns, &as));
                assert_string_equal(aw ? aw->sha256 : "", as ? as->sha256 : "");
            }
            ce_manifest_free(sm);
            free(sl);
        }
    size_t n;
    assert_null(ce_manifest_slice_cuda(text, len, "12", &n));       /* a major: every release, the whole */
    assert_null(ce_manifest_slice_cuda(text, len, "latest", &n));
    assert_null(ce_manifest_slice_cuda(text, len, "99.1", &n));     /* no such release */
    assert_null(ce_manifest_slice_cuda(text, len, "12.4.1.", &n) ? text : NULL);
    char bad[] = "{\"schema\": 1, \"cuda\": [1], \"cudnn\": {}}";
    assert_null(ce_manifest_slice_cuda(bad, strlen(bad), "12.4", &n));
    /* "12.4" is not a prefix of "12.40.0"; a cuDNN without a cuda12 build is left out */
    char two[] = "{\"schema\": 1, \"cuda\": {\"12.40.0\": {\"x\": 1}, \"12.4.1\": {\"y\": 2}}, "
                 "\"cudnn\": {\"9.1\": {\"cuda12\": {}, \"source\": \"s\"}, \"8.9\": {\"cuda11\": {}}}}";
    char *sl = ce_manifest_slice_cuda(two, strlen(two), "12.4", &n);
    assert_non_null(sl);
    assert_non_null(strstr(sl, "\"12.4.1\""));
    assert_null(strstr(sl, "12.40.0"));
    assert_non_null(strstr(sl, "\"9.1\""));
    assert_null(strstr(sl, "\"8.9\""));
    free(sl);
    free(text);
    ce_manifest_free(b);
}

/* ce_manifest_slice_fw: for every PyTorch and JAX release of the built-in
 * manifest, the slice resolves its default build as the whole does (the
 * toolchain, the CUDA release, the cuDNN archive, every build's tag and
 * installability); an alias ("2", "0.4", latest) is not sliced. */
static void test_slice_fw(void **state)
{
    (void)state;
    ce_manifest *b = NULL;
    char *text = NULL;
    size_t len = 0, n;
    if (ce_manifest_load_file(&ctx, "share/manifests/cudaenv.json", &b)) fail_msg("%s", ce_errmsg());
    assert_int_equal(ce_file_read("share/manifests/cudaenv.json", 64 << 20, &text, &len), CE_OK);
    static const char *const names[] = { "torch", "jax" };
    int seen = 0;
    for (int k = 0; k < 2; k++) {
        size_t nf;
        const ce_fw *f = ce_manifest_fws(b, names[k], &nf);
        for (size_t i = 0; i < nf; i++, seen++) {
            size_t slen = 0;
            char *sl = ce_manifest_slice_fw(text, len, names[k], f[i].version, &slen);
            assert_non_null(sl);
            assert_true(slen < len / 4);
            ce_manifest *sm = NULL;
            if (ce_manifest_parse(&ctx, sl, slen, "/x/cudaenv.json", true, &sm)) fail_msg("%s: %s", f[i].version, ce_errmsg());
            size_t ns;
            const ce_fw *fs = ce_manifest_fws(sm, names[k], &ns);
            assert_int_equal(ns, 1);
            assert_int_equal(fs->n_builds, f[i].n_builds);
            for (size_t j = 0; j < fs->n_builds; j++) {
                assert_string_equal(fs->builds[j].tag, f[i].builds[j].tag);
                assert_int_equal(!fs->builds[j].not_installable, !f[i].builds[j].not_installable);
            }
            char spec[48];
            snprintf(spec, sizeof spec, "%s-%s", names[k], f[i].version);
            ce_resolved rw, rs;
            same_resolution(b, sm, spec, &rw, &rs);
            ce_manifest_free(sm);
            free(sl);
        }
    }
    assert_true(seen > 10);
    assert_null(ce_manifest_slice_fw(text, len, "torch", "2", &n));
    assert_null(ce_manifest_slice_fw(text, len, "jax", "0.4", &n));
    assert_null(ce_manifest_slice_fw(text, len, "jax", "latest", &n));
    assert_null(ce_manifest_slice_fw(text, len, "tensorflow", "2.14", &n));
    free(text);
    ce_manifest_free(b);
}

/* ce_manifest_slice_pieces: the manifest cut by its "at" records (what the
 * index carries) slices to the very bytes the whole text slices to, for
 * every TensorFlow row, CUDA release (whole and by its minor), PyTorch and
 * JAX release; records that do not match the file (a byte added in front)
 * or name no such release give NULL. */
static void test_slice_pieces(void **state)
{
    (void)state;
    ce_manifest *b = NULL;
    char *text = NULL, path[] = "/tmp/test_resolve_pieces.XXXXXX";
    size_t len = 0;
    if (ce_manifest_load_file(&ctx, "share/manifests/cudaenv.json", &b)) fail_msg("%s", ce_errmsg());
    assert_int_equal(ce_file_read("share/manifests/cudaenv.json", 64 << 20, &text, &len), CE_OK);
    char *recs = ce_manifest_slice_records(text, len);
    assert_non_null(recs);
    assert_true(strncmp(recs, "at - schema ", 12) == 0);
    size_t rl = strlen(recs);
    char *nrecs = malloc(rl + 2);   /* as the index holds them: after a newline */
    nrecs[0] = '\n';
    memcpy(nrecs + 1, recs, rl + 1);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(ce_pwrite_all(fd, text, len, 0), 0);
    int count = 0;
    for (int kind = 0; kind < 5; kind++) {
        static const char *const kinds[] = { "tensorflow", "cuda", "cuda", "torch", "jax" };
        size_t nv = kind == 0 ? b->n_tf : kind < 3 ? b->n_cuda : 0;
        const ce_fw *f = kind >= 3 ? ce_manifest_fws(b, kinds[kind], &nv) : NULL;
        for (size_t i = 0; i < nv; i++, count++) {
            char ver[32];
            snprintf(ver, sizeof ver, "%s", kind == 0 ? b->tf[i].version : kind < 3 ? b->cuda[i].version : f[i].version);
            if (kind == 2) *strrchr(ver, '.') = '\0';
            size_t wl = 0, ml = 0, pl = 0;
            char *whole = ce_manifest_slice(text, len, kinds[kind], ver, &wl);
            char *mini = ce_manifest_slice_pieces(fd, nrecs, kinds[kind], ver, &ml);
            assert_non_null(whole);
            if (!mini) fail_msg("%s %s: no pieces", kinds[kind], ver);
            assert_true(ml < len / 4);
            char *cut = ce_manifest_slice(mini, ml, kinds[kind], ver, &pl);
            assert_non_null(cut);
            if (pl != wl || memcmp(cut, whole, wl)) fail_msg("%s %s: the pieces slice differently", kinds[kind], ver);
            free(whole);
            free(mini);
            free(cut);
        }
    }
    assert_true(count > 100);
    size_t n;
    assert_null(ce_manifest_slice_pieces(fd, nrecs, "tensorflow", "9.99", &n));
    assert_null(ce_manifest_slice_pieces(fd, nrecs, "torch", "9.9", &n));
    /* the file moved on under the records: every piece is checked against its key */
    assert_int_equal(ce_pwrite_all(fd, " ", 1, 0), 0);
    assert_int_equal(ce_pwrite_all(fd, text, len, 1), 0);
    assert_null(ce_manifest_slice_pieces(fd, nrecs, "tensorflow", "2.14", &n));
    assert_null(ce_manifest_slice_pieces(fd, nrecs, "cuda", "12.2", &n));
    /* a key the records cannot carry: none at all */
    char odd[] = "{\"schema\": 1, \"a b\": 2, \"cuda\": {}}";
    assert_null(ce_manifest_slice_records(odd, strlen(odd)));
    close(fd);
    unlink(path);
    free(nrecs);
    free(recs);
    free(text);
    ce_manifest_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cuda, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cudnn_choice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_platform, setup, teardown),
        cmocka_unit_test_setup_teardown(test_builtin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_cuda, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_fw, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_pieces, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
