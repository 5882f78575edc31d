/* src/oci: oci:// references, the manifest a pull accepts, and the layer's
 * determinism (the same tree, the same digest, whatever its mtimes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/ctx.h"
#include "core/status.h"
#include "oci/image.h"
#include "oci/layer.h"
#include "oci/ref.h"

static ce_ctx ctx;

static void test_ref(void **state)
{
    (void)state;
    ce_oci_ref r;
    assert_int_equal(ce_oci_ref_parse("oci://registry.lab:5000/cuda/toolchains:tf-2.14", &r), CE_OK);
    assert_string_equal(r.host, "registry.lab:5000");
    assert_string_equal(r.repo, "cuda/toolchains");
    assert_string_equal(r.tag, "tf-2.14");
    assert_string_equal(r.digest, "");
    assert_string_equal(ce_oci_ref_name(&r), "tf-2.14");
    assert_int_equal(ce_oci_ref_parse("oci://127.0.0.1:5000/a/b", &r), CE_OK);
    assert_string_equal(r.tag, "latest");
    char text[200];
    snprintf(text, sizeof text, "oci://h/a_b/c-d.e@sha256:%064d", 7);
    assert_int_equal(ce_oci_ref_parse(text, &r), CE_OK);
    assert_string_equal(r.repo, "a_b/c-d.e");
    assert_string_equal(r.tag, "");
    assert_string_equal(ce_oci_ref_name(&r), text + strlen("oci://h/a_b/c-d.e@"));
    static const char *const bad[] = {
        "docker://h/a:b", "oci://", "oci:///a:b", "oci://h/", "oci://h/A:b", "oci://h/a//b", "oci://h/a/:b",
        "oci://h/-a", "oci://h/a:", "oci://h/a:-x", "oci://h/a@sha256:abc", "oci://h/a@md5:0",
        "oci://h h/a", "oci://h/a:t/x",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ce_quiet q;
        ce_quiet_begin(&q, false);
        int rc = ce_oci_ref_parse(bad[i], &r);
        ce_quiet_end(&q);
        if (rc != CE_ERR_USAGE) fail_msg("accepted %s", bad[i]);
    }
    assert_true(ce_oci_is_ref("oci://x/y"));
    assert_false(ce_oci_is_ref("11.8"));
}

static int parse(const char *text, ce_oci_image *img)
{
    return ce_oci_manifest_parse(text, "test", img);   /* no callback: nothing printed */
}

static void test_manifest(void **state)
{
    (void)state;
    ce_oci_meta m = { .name = "11.8.0+cudnn8.7.0.84", .cuda = "11.8.0", .cudnn = "8.7.0.84", .platform = "linux-x86_64" };
    memset(m.receipt_sha256, 'a', 64);
    memset(m.tree_sha256, 'b', 64);
    char cd[72], ld[72];
    snprintf(cd, sizeof cd, "sha256:%064d", 1);
    snprintf(ld, sizeof ld, "sha256:%064d", 2);
    char *text = ce_oci_manifest_json(&m, cd, 100, ld, 2000);
    assert_non_null(text);
    ce_oci_image img;
    assert_int_equal(parse(text, &img), CE_OK);
    assert_string_equal(img.meta.name, m.name);
    assert_string_equal(img.meta.receipt_sha256, m.receipt_sha256);
    assert_string_equal(img.meta.tree_sha256, m.tree_sha256);   /* io.cudaenv.tree_sha256 */
    assert_string_equal(img.config.digest, cd);
    assert_int_equal(img.n_layers, 1);
    assert_string_equal(img.layers[0].digest, ld);
    assert_int_equal(img.layers[0].size, 2000);
    free(text);
    /* without the tree digest (an image pushed before it was annotated): read, "" */
    m.tree_sha256[0] = '\0';
    text = ce_oci_manifest_json(&m, cd, 100, ld, 2000);
    assert_int_equal(parse(text, &img), CE_OK);
    assert_string_equal(img.meta.tree_sha256, "");
    free(text);
    /* a name that could leave versions/, an index, a foreign layer, no annotations, a bad digest */
    snprintf(m.name, sizeof m.name, "11.8.0@../../x");
    text = ce_oci_manifest_json(&m, cd, 100, ld, 2000);
    assert_int_equal(parse(text, &img), CE_ERR_INTEGRITY);
    free(text);
    assert_int_equal(parse("{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.index.v1+json\","
                           "\"manifests\":[]}", &img), CE_ERR_INTEGRITY);
    assert_non_null(strstr(ce_errmsg(), "image index"));
    char buf[1024];
    snprintf(buf, sizeof buf, "{\"schemaVersion\":2,\"config\":{\"digest\":\"%s\",\"size\":1},\"layers\":[{\"mediaType\":"
             "\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"%s\",\"size\":1}]}", cd, ld);
    assert_int_equal(parse(buf, &img), CE_ERR_INTEGRITY);
    assert_non_null(strstr(ce_errmsg(), "not a cudaenv toolchain image"));
    snprintf(buf, sizeof buf, "{\"schemaVersion\":2,\"config\":{\"digest\":\"%s\",\"size\":1},\"layers\":[{\"mediaType\":"
             "\"application/vnd.in-toto+json\",\"digest\":\"%s\",\"size\":1}]}", cd, ld);
    assert_int_equal(parse(buf, &img), CE_ERR_INTEGRITY);
    snprintf(buf, sizeof buf, "{\"schemaVersion\":2,\"config\":{\"digest\":\"sha256:../x\",\"size\":1},\"layers\":[]}");
    assert_int_equal(parse(buf, &img), CE_ERR_INTEGRITY);
    assert_int_equal(parse("not json", &img), CE_ERR_INTEGRITY);
}

static void put(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_layer_deterministic(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_oci.XXXXXX", tree[600], out[600];
    assert_non_null(mkdtemp(dir));
    snprintf(tree, sizeof tree, "%s/tree", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    assert_int_equal(mkdir(tree, 0755), 0);
    assert_int_equal(mkdir(out, 0755), 0);
    char sub[700];
    snprintf(sub, sizeof sub, "%s/lib64", tree);
    assert_int_equal(mkdir(sub, 0755), 0);
    put(tree, "lib64/libcudart.so.11.0", "cudart");
    put(tree, "b", "b");
    put(tree, "a", "a");
    put(tree, ".cudaenv-usage", "inodes of this machine");
    char link[700];
    snprintf(link, sizeof link, "%s/lib64/libcudart.so", tree);
    assert_int_equal(symlink("libcudart.so.11.0", link), 0);
    ce_oci_layer l1, l2, l3;
    assert_int_equal(ce_oci_layer_build(&ctx, tree, out, &l1), CE_OK);
    assert_int_equal(l1.entries, 5);   /* a, b, lib64, its file and link; the usage record left out */
    sleep(1);   /* a gzip timestamp would differ now */
    struct timeval tv[2] = { { 1000000, 0 }, { 1000000, 0 } };
    char a[700];
    snprintf(a, sizeof a, "%s/a", tree);
    assert_int_equal(utimes(a, tv), 0);
    put(tree, ".cudaenv-usage", "other inodes");
    assert_int_equal(ce_oci_layer_build(&ctx, tree, out, &l2), CE_OK);
    assert_string_equal(l1.digest, l2.digest);
    assert_string_equal(l1.diff_id, l2.diff_id);
    assert_int_equal(l1.size, l2.size);
    put(tree, "a", "A");
    assert_int_equal(ce_oci_layer_build(&ctx, tree, out, &l3), CE_OK);
    assert_string_not_equal(l1.digest, l3.digest);
    unlink(l1.path);
    unlink(l2.path);
    unlink(l3.path);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ref),
        cmocka_unit_test(test_manifest),
        cmocka_unit_test(test_layer_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
