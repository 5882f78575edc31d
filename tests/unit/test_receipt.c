/* What a receipt says a toolchain holds (store/receipt.h): written and read
 * back (profile, changes, components, NCCL), the line list/info print, and
 * which pkgs/ trees a receipt keeps (ce_pkg_of_sha, ce_receipt_uses_pkg:
 * the NCCL tree of a receipt written before sources named their tree). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ctx.h"
#include "core/json.h"
#include "store/usage.h"
#include "store/compose.h"
#include "store/receipt.h"

#define SHA_A "ab12cd34ef560000000000000000000000000000000000000000000000000001"
#define SHA_N "b3594634db73ffff00000000000000000000000000000000000000000000000f"

/* a fresh directory under $TMPDIR (the suite's private one), else /tmp */
static void temp_dir(char *out, size_t n)
{
    const char *t = getenv("TMPDIR");
    snprintf(out, n, "%s/test_receipt.XXXXXX", t && *t ? t : "/tmp");
    assert_non_null(mkdtemp(out));
}

static void test_pkg_of_sha(void **state)
{
    (void)state;
    assert_true(ce_pkg_of_sha("nccl-2.21.5-cuda11-b3594634db73", SHA_N));
    assert_true(ce_pkg_of_sha("libcublas-11.11.3.6-ab12cd34ef56", SHA_A));
    assert_false(ce_pkg_of_sha("nccl-2.21.5-cuda11-b3594634db7", SHA_N));    /* 11 hex: not that name */
    assert_false(ce_pkg_of_sha("b3594634db73", SHA_N));                      /* no "-" before it */
    assert_false(ce_pkg_of_sha("nccl-2.21.5-cuda11-b3594634db73", "b3594634db73"));   /* no sha256 */
    assert_false(ce_pkg_of_sha("cuda-11.8.0", SHA_A));
    assert_false(ce_pkg_of_sha("nccl-2.21.5-cuda11-b3594634db73", NULL));
}

static void test_write_read_back(void **state)
{
    (void)state;
    char dir[4096];
    temp_dir(dir, sizeof dir);
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    const char *adj[] = { "-libcufft", "+nsight_systems" };
    ce_receipt_component comps[] = { { "libcublas", "11.11.3.6", "http://x/libcublas.tar.xz", SHA_A,
                                       "libcublas-11.11.3.6-ab12cd34ef56", 4456 } };
    ce_receipt r = { .name = "11.8.0", .cuda = "11.8.0", .platform = "linux-x86_64", .profile = "toolkit",
                     .adjust = adj, .n_adjust = 2, .components = comps, .n_components = 1, .nccl = "2.21.5" };
    r.sources[r.n_sources++] = (ce_receipt_source){ "nccl", "http://x/nvidia_nccl_cu11-2.21.5-py3-none.whl", SHA_N,
                                                    -1, "nccl-2.21.5-cuda11-b3594634db73" };
    assert_int_equal(ce_receipt_write(dir, &r), CE_OK);
    ce_receipt_held h;
    ce_receipt_held_read(dir, false, &h);
    assert_int_equal(h.kind, CE_HELD_COMPONENTS);
    assert_string_equal(h.profile, "toolkit");
    assert_string_equal(h.adjust, "-libcufft,+nsight_systems");
    assert_int_equal(h.n, 1);
    assert_string_equal(h.comps[0].name, "libcublas");
    assert_int_equal(h.comps[0].size, 4456);
    assert_true(h.nccl);
    assert_string_equal(h.nccl_version, "2.21.5");
    assert_string_equal(h.nccl_src.sha256, SHA_N);
    char text[256];
    ce_receipt_held_text(&h, text, sizeof text);
    assert_string_equal(text, "toolkit profile -libcufft +nsight_systems, NCCL 2.21.5");
    ce_receipt_held_free(&h);
    /* the trees it keeps: its own, and one named for its archive when sources carry no pkg */
    assert_true(ce_receipt_uses_pkg(dir, "libcublas-11.11.3.6-ab12cd34ef56"));
    assert_true(ce_receipt_uses_pkg(dir, "nccl-2.21.5-cuda11-b3594634db73"));
    assert_false(ce_receipt_uses_pkg(dir, "nccl-2.25.1-cuda12-000000000000"));
    r.sources[0].pkg = NULL;
    assert_int_equal(ce_receipt_write(dir, &r), CE_OK);
    assert_true(ce_receipt_uses_pkg(dir, "nccl-2.21.5-cuda11-b3594634db73"));
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, CE_RECEIPT_NAME);
    unlink(p);
    /* no receipt: nothing known, nothing said */
    ce_receipt_held_read(dir, false, &h);
    assert_int_equal(h.kind, CE_HELD_UNKNOWN);
    ce_receipt_held_text(&h, text, sizeof text);
    assert_string_equal(text, "");
    ce_receipt_held_free(&h);
    snprintf(p, sizeof p, "%s/%s", dir, CE_USAGE_NAME);
    unlink(p);
    rmdir(dir);
}

/* ce_json_top_member: the span of a top-level member, nested and quoted decoys skipped */
static void test_json_top_member(void **state)
{
    (void)state;
    const char *t = "{\"a\": {\"files\": 1}, \"s\": \"\\\"files\\\": [\", \"files\" : [ {\"path\": \"x]}\"}, 2 ],"
                    " \"n\": -3, \"b\": true}";
    size_t k, v, e, len = strlen(t);
    assert_int_equal(ce_json_top_member(t, len, "files", &k, &v, &e), 1);
    assert_memory_equal(t + k, "\"files\"", 7);
    assert_memory_equal(t + v, "[ {\"path\": \"x]}\"}, 2 ]", e - v);
    assert_int_equal(e - v, strlen("[ {\"path\": \"x]}\"}, 2 ]"));
    assert_int_equal(ce_json_top_member(t, len, "n", &k, &v, &e), 1);
    assert_memory_equal(t + v, "-3", e - v);
    assert_int_equal(ce_json_top_member(t, len, "b", &k, &v, &e), 1);
    assert_memory_equal(t + v, "true", e - v);
    assert_int_equal(ce_json_top_member(t, len, "missing", &k, &v, &e), 0);
    assert_int_equal(ce_json_top_member(t, len - 30, "b", &k, &v, &e), -1);   /* cut before it */
    assert_int_equal(ce_json_top_member("{\"files\": [1, 2", 15, "files", &k, &v, &e), -1);
    /* dotted: the first key that is the name or continues it after a '.', never a longer number */
    const char *c = "{\"13.01.0\": 1, \"13.0\": 2, \"13.0.1\": 3}";
    assert_int_equal(ce_json_top_member_dotted(c, strlen(c), "13.0", &k, &v, &e), 1);
    assert_memory_equal(c + v, "2", 1);
    c = "{\"13.01.0\": 1, \"13.0.1\": 3, \"13.0.2\": 4}";
    assert_int_equal(ce_json_top_member_dotted(c, strlen(c), "13.0", &k, &v, &e), 1);
    assert_memory_equal(c + v, "3", 1);
    assert_int_equal(ce_json_top_member(c, strlen(c), "13.0", &k, &v, &e), 0);
    /* the object around a byte: the innermost, arrays stepped through, braces in strings not counted */
    const char *m = "{\"cuda\": {\"12.4\": {\"note\": \"{ [ \\\" }\", \"runfiles\": [{\"url\": \"u/a.run\", "
                    "\"sha256\": \"abc\"}, {\"url\": \"u/b.run\", \"sha256\": \"def\"}]}}}";
    size_t os, oe, ml = strlen(m);
    const char *def = strstr(m, "def");
    assert_int_equal(ce_json_object_around(m, ml, (size_t)(def - m), &os, &oe), 1);
    assert_memory_equal(m + os, "{\"url\": \"u/b.run\", \"sha256\": \"def\"}", oe - os);
    assert_int_equal(oe - os, strlen("{\"url\": \"u/b.run\", \"sha256\": \"def\"}"));
    const char *rf = strstr(m, "runfiles");
    assert_int_equal(ce_json_object_around(m, ml, (size_t)(rf - m), &os, &oe), 1);
    assert_int_equal(m[os], '{');
    assert_memory_equal(m + os, "{\"note\"", 7);
    assert_int_equal(m[oe - 1], '}');
    assert_int_equal(ce_json_object_around("[1, 2]", 6, 3, &os, &oe), 0);
    assert_int_equal(ce_json_object_around(m, (size_t)(def - m) + 2, (size_t)(def - m), &os, &oe), -1);   /* cut */
}

/* what a receipt holds is read with its file list cut out: names in that list that
 * look like members (a path spelling "profile") change nothing */
static void test_held_without_files(void **state)
{
    (void)state;
    char dir[4096];
    temp_dir(dir, sizeof dir);
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ce_filelist fl;
    memset(&fl, 0, sizeof fl);
    ce_receipt_component comps[] = { { "libcublas", "11.11.3.6", "http://x/libcublas.tar.xz", SHA_A,
                                       "libcublas-11.11.3.6-ab12cd34ef56", 4456 } };
    ce_receipt r = { .name = "11.8.0", .cuda = "11.8.0", .platform = "linux-x86_64", .profile = "tf",
                     .components = comps, .n_components = 1, .files = &fl };
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ce_filelist_add(&fl, i == 1 ? "lib64/a\"], \"profile\": \"evil\", \"x\": [\"" : "lib64/libx.so", 10), CE_OK);
    }
    assert_int_equal(ce_receipt_write(dir, &r), CE_OK);
    ce_receipt_held h;
    ce_receipt_held_read(dir, false, &h);
    assert_int_equal(h.kind, CE_HELD_COMPONENTS);
    assert_string_equal(h.profile, "tf");
    assert_int_equal(h.n, 1);
    ce_receipt_held_free(&h);
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, CE_RECEIPT_NAME);
    unlink(p);
    snprintf(p, sizeof p, "%s/%s", dir, CE_USAGE_NAME);
    unlink(p);
    rmdir(dir);
    ce_filelist_free(&fl);
}

/* A receipt written by hand with a member after its file list ends as the
 * list does ("]" then "}"): what decides removals reads it whole and keeps
 * the tree its components name; the shown read may stop at the list. */
static void test_member_after_files(void **state)
{
    (void)state;
    char dir[4096], p[4200];
    temp_dir(dir, sizeof dir);
    snprintf(p, sizeof p, "%s/%s", dir, CE_RECEIPT_NAME);
    const char *text = "{\n\t\"schema\": 1,\n\t\"name\": \"12.4.0\",\n\t\"files\": [{\n\t\t\"path\": \"lib64/a\",\n"
                       "\t\t\"size\": 1\n\t}],\n\t\"components\": [{\n\t\t\"name\": \"libcublas\",\n\t\t\"version\": \"12.4.5.8\",\n"
                       "\t\t\"url\": \"http://x/libcublas.tar.xz\",\n\t\t\"sha256\": \""
                       SHA_A "\",\n\t\t\"pkg\": \"libcublas-12.4.5.8-ab12cd34ef56\"\n\t}]\n}\n";
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    cJSON *o = ce_receipt_read(dir, true);
    assert_non_null(o);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "components")), 1);
    assert_null(cJSON_GetObjectItem(o, "files"));
    cJSON_Delete(o);
    assert_true(ce_receipt_uses_pkg(dir, "libcublas-12.4.5.8-ab12cd34ef56"));
    ce_receipt_held h;
    ce_receipt_held_read(dir, true, &h);
    assert_int_equal(h.n, 1);
    ce_receipt_held_free(&h);
    unlink(p);
    rmdir(dir);
}

static void test_runfile_text(void **state)
{
    (void)state;
    char dir[4096];
    temp_dir(dir, sizeof dir);
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ce_receipt r = { .name = "11.8.0", .cuda = "11.8.0", .platform = "linux-x86_64" };
    r.sources[r.n_sources++] = (ce_receipt_source){ "runfile", "http://x/cuda.run", SHA_A, 10, "cuda-11.8.0" };
    assert_int_equal(ce_receipt_write(dir, &r), CE_OK);
    ce_receipt_held h;
    ce_receipt_held_read(dir, false, &h);
    char text[64];
    ce_receipt_held_text(&h, text, sizeof text);
    assert_string_equal(text, "runfile");
    assert_false(h.nccl);
    ce_receipt_held_free(&h);
    assert_true(ce_receipt_uses_pkg(dir, "cuda-11.8.0"));
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, CE_RECEIPT_NAME);
    unlink(p);
    rmdir(dir);
}

/* The tree digest (ce_receipt_tree_sha256): sha256 over the sorted "path size
 * sha256" lines ("-" for a file without one), the order of the list not in
 * it; a size changed, a new digest.  The value is Python's hashlib over the
 * lines. */
static void test_tree_sha256(void **state)
{
    (void)state;
    const char *want = "205f6c183215e906f361c8797dee616b3411f3e462d4fd330ab4d40466781d03";
    char hex[65], again[65];
    cJSON *a = cJSON_Parse("[{\"path\":\"b/c\",\"size\":2},{\"path\":\"a\",\"size\":1,\"sha256\":\"x\"}]");
    cJSON *b = cJSON_Parse("[{\"path\":\"a\",\"size\":1,\"sha256\":\"x\"},{\"path\":\"b/c\",\"size\":2}]");
    ce_receipt_tree_sha256(a, hex);
    ce_receipt_tree_sha256(b, again);
    assert_string_equal(hex, want);
    assert_string_equal(again, want);
    cJSON_SetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(b, 1), "size"), 3);
    ce_receipt_tree_sha256(b, again);
    assert_string_not_equal(again, want);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pkg_of_sha),
        cmocka_unit_test(test_write_read_back),
        cmocka_unit_test(test_runfile_text),
        cmocka_unit_test(test_json_top_member),
        cmocka_unit_test(test_held_without_files),
        cmocka_unit_test(test_member_after_files),
        cmocka_unit_test(test_tree_sha256),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
