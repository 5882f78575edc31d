/* Wheels (archive/wheel.h): RECORD's parser (a good file in the shapes the
 * csv module writes, one bad line per rule), the check of what an unpack
 * took against it, and ce_unpack on zips written here by libarchive without
 * sizes (data descriptors, as a zip written to a pipe has): every byte of an
 * entry of unknown size lands, a member RECORD does not vouch for fails, and
 * an unsized bomb stops at the ceiling as it is read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "core/rmtree.h"
#include "fetch/digest.h"
#include "archive/unpack.h"
#include "archive/wheel.h"

#define EMPTY_B64 "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"
#define EMPTY_HEX "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static int parse(const char *text, ce_record *r, char *why, size_t n)
{
    return ce_record_parse(text, strlen(text), r, why, n);
}

static void test_record_parse(void **state)
{
    (void)state;
    /* what pip and wheel write: "\n" or the csv module's "\r\n", a quoted path
     * with a comma and a quote, RECORD's own line without hash or size,
     * a blank line, a padded digest */
    static const char text[] =
        "nvidia/nccl/lib/libnccl.so.2,sha256=" EMPTY_B64 ",0\n"
        "\"nvidia/nccl/a,\"\"b\"\".h\",sha256=" EMPTY_B64 "=,12\r\n"
        "\n"
        "nvidia/nccl/lib/x.pyc,,\n"
        "x-1.dist-info/RECORD,,";
    ce_record r;
    char why[256];
    assert_int_equal(parse(text, &r, why, sizeof why), CE_OK);
    assert_int_equal(r.n, 4);
    const ce_record_row *row = ce_record_find(&r, "nvidia/nccl/lib/libnccl.so.2");
    assert_non_null(row);
    assert_string_equal(row->algo, "sha256");
    assert_string_equal(row->sha256, EMPTY_HEX);
    assert_int_equal(row->size, 0);
    row = ce_record_find(&r, "nvidia/nccl/a,\"b\".h");
    assert_non_null(row);
    assert_string_equal(row->sha256, EMPTY_HEX);
    assert_int_equal(row->size, 12);
    row = ce_record_find(&r, "x-1.dist-info/RECORD");
    assert_non_null(row);
    assert_string_equal(row->algo, "");
    assert_int_equal(row->size, -1);
    assert_null(ce_record_find(&r, "nvidia/nccl/lib"));
    ce_record_free(&r);
    /* an empty RECORD parses to nothing */
    assert_int_equal(parse("", &r, why, sizeof why), CE_OK);
    assert_int_equal(r.n, 0);
    assert_null(ce_record_find(&r, "a"));
    ce_record_free(&r);
}

static void test_record_parse_bad(void **state)
{
    (void)state;
    static const struct { const char *text, *why; } rows[] = {
        { "a,sha256=" EMPTY_B64 ",1,extra\n", "line 1: 4 fields" },
        { "a,,\n,sha256=" EMPTY_B64 ",1\n", "line 2: no path" },
        { "a,sha256" EMPTY_B64 ",1\n", "is not algorithm=digest" },
        { "a,=" EMPTY_B64 ",1\n", "is not algorithm=digest" },
        { "a,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuF,1\n", "is not 32 bytes in urlsafe base64" },
        { "a,sha256=47DEQpj8HBSa+/TImW-5JCeuQeRkm5NMpJWZG3hSuFU,1\n", "is not 32 bytes in urlsafe base64" },
        { "a,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFV,1\n", "is not 32 bytes in urlsafe base64" },
        { "a,sha256=" EMPTY_B64 ",x\n", "size 'x' is not a number" },
        { "a,sha256=" EMPTY_B64 ",-1\n", "size '-1' is not a number" },
        { "a,sha256=" EMPTY_B64 ",1 \n", "size '1 ' is not a number" },
        { "\"a,sha256=" EMPTY_B64 ",1\n", "a stray quote" },
        { "\"a\"b,,\n", "a stray quote" },
        { "b,,\na,,\nb,sha256=" EMPTY_B64 ",0\n", "'b' is listed twice" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        ce_record r;
        char why[256];
        int rc = parse(rows[i].text, &r, why, sizeof why);
        if (rc != CE_ERR_INTEGRITY) fail_msg("row %zu: rc %d", i, rc);
        if (!strstr(why, rows[i].why)) fail_msg("row %zu: '%s', expected '%s'", i, why, rows[i].why);
        assert_null(r.v);
    }
    /* another algorithm parses (the check names it) */
    ce_record r;
    char why[256];
    assert_int_equal(parse("a,sha512=AAAA,1\n", &r, why, sizeof why), CE_OK);
    assert_string_equal(r.v[0].algo, "sha512");
    assert_string_equal(r.v[0].sha256, "");
    ce_record_free(&r);
}

static void test_wheel_paths(void **state)
{
    (void)state;
    const char *u = "nvidia/nccl/";
    assert_string_equal(ce_wheel_takes("nvidia/nccl/lib/libnccl.so.2", u), "lib/libnccl.so.2");
    assert_string_equal(ce_wheel_takes("nvidia/nccl/include/nccl.h", u), "include/nccl.h");
    assert_null(ce_wheel_takes("nvidia/nccl/", u));
    assert_null(ce_wheel_takes("nvidia/ncclx/a", u));
    assert_null(ce_wheel_takes("nvidia/__init__.py", u));
    assert_null(ce_wheel_takes("nvidia/nccl/lib/__init__.py", u));
    assert_null(ce_wheel_takes("nvidia/nccl/lib/a.pyc", u));
    assert_null(ce_wheel_takes("nvidia/nccl/__pycache__/a", u));
    assert_true(ce_wheel_is_record("nvidia_nccl_cu12-2.28.9.dist-info/RECORD"));
    assert_false(ce_wheel_is_record(".dist-info/RECORD"));
    assert_false(ce_wheel_is_record("a/b.dist-info/RECORD"));
    assert_false(ce_wheel_is_record("b.dist-info/RECORD.jws"));
    assert_false(ce_wheel_is_record("b.dist-info/x/RECORD"));
    assert_false(ce_wheel_is_record("RECORD"));
}

/* ce_wheel_check of one member LIB taken as (size, sha) against text */
static int check(const char *text, long long size, const char *sha)
{
    ce_ctx ctx;
    ce_ctx_init(&ctx);
    ce_wheel *w = ce_wheel_new();
    assert_non_null(w);
    assert_int_equal(ce_wheel_took(w, "nvidia/nccl/lib/libnccl.so.2", size, sha), CE_OK);
    if (text) assert_true(ce_wheel_record(w, strdup(text), strlen(text)));
    int rc = ce_wheel_check(w, "https://x/n.whl", "nvidia/nccl/");
    ce_wheel_free(w);
    return rc;
}

#define LIB "nvidia/nccl/lib/libnccl.so.2"
#define OWN "n-1.dist-info/RECORD,,\n"

static void test_wheel_check(void **state)
{
    (void)state;
    static const struct { const char *text, *why; } rows[] = {
        { LIB ",sha256=" EMPTY_B64 ",0\n" OWN, NULL },
        /* the Python side RECORD lists is not taken, so not missed */
        { LIB ",sha256=" EMPTY_B64 ",0\nnvidia/__init__.py,sha256=" EMPTY_B64 ",0\nnvidia/nccl/__init__.py,,\n" OWN, NULL },
        { LIB ",sha256=" EMPTY_B64 ",\n" OWN, NULL },   /* no size: the hash decides */
        { OWN, "member '" LIB "' is not in the wheel's RECORD" },
        { LIB ",,\n" OWN, "member '" LIB "' is in RECORD without a hash" },
        { LIB ",sha512=AAAA,0\n" OWN, "a sha512 hash, and cudaenv checks sha256" },
        { LIB ",sha256=" EMPTY_B64 ",1\n" OWN, "member '" LIB "' holds 0 bytes, its RECORD says 1" },
        { LIB ",sha256=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA,0\n" OWN, "has sha256 " EMPTY_HEX ", its RECORD says 0000" },
        { LIB ",sha256=" EMPTY_B64 ",0\nnvidia/nccl/lib/libghost.so,sha256=" EMPTY_B64 ",0\n" OWN,
          "its RECORD lists 'nvidia/nccl/lib/libghost.so', which the wheel does not hold" },
        { LIB ",sha256=" EMPTY_B64 ",0\n" LIB ",sha256=" EMPTY_B64 ",0\n" OWN, "its RECORD is not valid ('" LIB "' is listed twice)" },
        { NULL, "has no *.dist-info/RECORD" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        int rc = check(rows[i].text, 0, EMPTY_HEX);
        if (!rows[i].why) {
            if (rc != CE_OK) fail_msg("row %zu refused: %s", i, ce_errmsg());
            continue;
        }
        if (rc != CE_ERR_INTEGRITY) fail_msg("row %zu: rc %d", i, rc);
        if (!strstr(ce_errmsg(), rows[i].why) || !strstr(ce_errmsg(), "https://x/n.whl") ||
            !strstr(ce_errmsg(), "nothing was installed"))
            fail_msg("row %zu: '%s', expected '%s'", i, ce_errmsg(), rows[i].why);
    }
    /* a second RECORD is refused as it comes */
    ce_wheel *w = ce_wheel_new();
    assert_true(ce_wheel_record(w, strdup(OWN), strlen(OWN)));
    assert_false(ce_wheel_record(w, strdup(OWN), strlen(OWN)));
    ce_wheel_free(w);
}

/* ---- ce_unpack on zips without sizes ---- */

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cudaenv-wheel-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ce_ctx ctx;
    ce_ctx_init(&ctx);
    ce_rm_tree(tmpdir);
    return 0;
}

static void b64_of(const void *data, size_t n, char out[44])
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    ce_sha256 *h = ce_sha256_new();
    char hex[CE_SHA256_HEX];
    ce_sha256_update(h, data, n);
    ce_sha256_final(h, hex);
    ce_sha256_free(h);
    unsigned char d[33] = { 0 };
    for (int i = 0; i < 32; i++) sscanf(hex + 2 * i, "%2hhx", &d[i]);
    int o = 0;
    for (int i = 0; i < 33; i += 3) {
        unsigned v = (unsigned)d[i] << 16 | (unsigned)d[i + 1] << 8 | (i + 2 < 33 ? d[i + 2] : 0);
        for (int k = 0; k < 4 && o < 43; k++) out[o++] = al[(v >> (18 - 6 * k)) & 63];
    }
    out[43] = '\0';
}

typedef struct zent { const char *path; const void *data; size_t len; } zent;

/* A zip as a pipe-fed writer makes it: no entry has a size set, so libarchive
 * writes data descriptors (bit 3) and no sizes in the local headers. */
static void write_zip(const char *file, const zent *ents, size_t n, const char *opts)
{
    struct archive *a = archive_write_new();
    assert_int_equal(archive_write_set_format_zip(a), ARCHIVE_OK);
    if (opts) assert_int_equal(archive_write_set_options(a, opts), ARCHIVE_OK);
    assert_int_equal(archive_write_open_filename(a, file), ARCHIVE_OK);
    for (size_t i = 0; i < n; i++) {
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, ents[i].path);
        archive_entry_set_mode(e, AE_IFREG | 0644);
        assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
        for (size_t off = 0; off < ents[i].len; off += 65536) {
            size_t k = ents[i].len - off < 65536 ? ents[i].len - off : 65536;
            assert_int_equal(archive_write_data(a, (const char *)ents[i].data + off, k), (la_ssize_t)k);
        }
        archive_entry_free(e);
    }
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
    /* the first local header: bit 3 set, no sizes (0, or zip64's 0xffffffff
     * with zeros in its extra field) */
    FILE *f = fopen(file, "rb");
    unsigned char h[30];
    assert_int_equal(fread(h, 1, 30, f), 30);
    fclose(f);
    assert_true(h[6] & 8);
    for (int i = 19; i < 26; i++) assert_int_equal(h[i], h[18]);
    assert_true(h[18] == 0 || h[18] == 0xff);
}

static int unpack_zip(const char *zip, const char *sub, long long size, ce_ctx *ctx)
{
    char dest[512];
    snprintf(dest, sizeof dest, "%s/%s", tmpdir, sub);
    mkdir(dest, 0755);
    ce_ctx_init(ctx);
    ce_unpack_src src = { .path = zip, .label = "https://x/n.whl", .size = size, .only_under = "nvidia/nccl/" };
    return ce_unpack(ctx, &src, dest);
}

/* lib (len bytes) as nvidia/nccl/lib/libnccl.so.2 with RECORD saying (digest of
 * said, said_len) for it, as zip sub.whl unpacked into sub/ */
static int wheel_of(const char *sub, const char *lib, size_t len, const char *said, size_t said_len, const char *opts,
                    ce_ctx *ctx)
{
    char b64[44], record[512], zip[512];
    b64_of(said, said_len, b64);
    snprintf(record, sizeof record, LIB ",sha256=%s,%zu\nnvidia/__init__.py,sha256=" EMPTY_B64 ",0\n" OWN, b64, said_len);
    zent z[] = { { "nvidia/__init__.py", "", 0 }, { LIB, lib, len }, { "n-1.dist-info/RECORD", record, strlen(record) } };
    snprintf(zip, sizeof zip, "%s/%s.whl", tmpdir, sub);
    write_zip(zip, z, 3, opts);
    return unpack_zip(zip, sub, -1, ctx);
}

static void test_unpack_streamed(void **state)
{
    (void)state;
    size_t len = 300 * 1024 + 7;   /* several blocks */
    char *lib = malloc(len);
    for (size_t i = 0; i < len; i++) lib[i] = (char)(i * 2654435761u >> 13);
    /* deflated and stored, with zip64 extra fields (libarchive's way for an
     * entry without a size) and without */
    static const char *const opts[] = { "zip:!zip64", "zip:compression=store,zip:!zip64", NULL,
                                        "zip:compression=store" };
    for (int k = 0; k < 4; k++) {
        char sub[32], p[600];
        snprintf(sub, sizeof sub, "s%d", k);
        ce_ctx ctx;
        int rc = wheel_of(sub, lib, len, lib, len, opts[k], &ctx);
        if (rc != CE_OK) fail_msg("%s: %s", opts[k] ? opts[k] : "deflate", ce_errmsg());
        char *text;
        size_t n;
        snprintf(p, sizeof p, "%s/%s/lib/libnccl.so.2", tmpdir, sub);
        assert_int_equal(ce_file_read(p, 16 << 20, &text, &n), CE_OK);
        assert_int_equal(n, len);
        assert_memory_equal(text, lib, len);
        free(text);
        snprintf(p, sizeof p, "%s/%s/__init__.py", tmpdir, sub);
        assert_false(ce_exists(p));
    }
    /* counted against the free space as it is read: exactly the bytes free fit, one more does not */
    ce_ctx ctx;
    char free_now[32];
    snprintf(free_now, sizeof free_now, "%zu", len);
    setenv("CUDAENV_TEST_FREE_BYTES", free_now, 1);
    int fit = wheel_of("fit", lib, len, lib, len, NULL, &ctx);
    char why[1024];
    snprintf(why, sizeof why, "%s", ce_errmsg());
    snprintf(free_now, sizeof free_now, "%zu", len - 1);
    setenv("CUDAENV_TEST_FREE_BYTES", free_now, 1);
    int rc = wheel_of("nofit", lib, len, lib, len, NULL, &ctx);
    unsetenv("CUDAENV_TEST_FREE_BYTES");
    if (fit != CE_OK) fail_msg("%zu bytes free: %s", len, why);
    assert_int_equal(rc, CE_ERR_SPACE);
    if (!strstr(ce_errmsg(), "(at 'lib/libnccl.so.2')") || !strstr(ce_errmsg(), "are free")) fail_msg("'%s'", ce_errmsg());
    /* a byte changed after RECORD was written: refused, naming the member */
    char *said = malloc(len);
    memcpy(said, lib, len);
    said[len / 2] ^= 1;
    assert_int_equal(wheel_of("t", lib, len, said, len, NULL, &ctx), CE_ERR_INTEGRITY);
    if (!strstr(ce_errmsg(), "https://x/n.whl: member '" LIB "' has sha256 ")) fail_msg("'%s'", ce_errmsg());
    free(said);
    free(lib);
}

/* 300 MiB of zeros without a size, in a zip of some 300 KB whose manifest size
 * gives a ceiling of CE_UNPACK_FLOOR (256 MiB): stopped as it is read, before
 * a byte past the ceiling is written. */
static void test_unpack_streamed_bomb(void **state)
{
    (void)state;
    size_t len = 300u << 20;
    char *zeros = calloc(1, len);
    zent z[] = { { LIB, zeros, len } };
    char zip[512], p[600];
    snprintf(zip, sizeof zip, "%s/bomb.whl", tmpdir);
    write_zip(zip, z, 1, NULL);
    free(zeros);
    struct stat st;
    assert_int_equal(stat(zip, &st), 0);
    assert_true(st.st_size < (1 << 20) && st.st_size * CE_UNPACK_RATIO < CE_UNPACK_FLOOR);
    ce_ctx ctx;
    assert_int_equal(unpack_zip(zip, "bomb", (long long)st.st_size, &ctx), CE_ERR_INTEGRITY);
    if (!strstr(ce_errmsg(), "https://x/n.whl expands to more than") || !strstr(ce_errmsg(), "(at 'lib/libnccl.so.2')") ||
        !strstr(ce_errmsg(), "an archive bomb?"))
        fail_msg("'%s'", ce_errmsg());
    snprintf(p, sizeof p, "%s/bomb/lib/libnccl.so.2", tmpdir);
    assert_int_equal(stat(p, &st), 0);
    assert_true(st.st_size <= CE_UNPACK_FLOOR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_parse),
        cmocka_unit_test(test_record_parse_bad),
        cmocka_unit_test(test_wheel_paths),
        cmocka_unit_test(test_wheel_check),
        cmocka_unit_test(test_unpack_streamed),
        cmocka_unit_test(test_unpack_streamed_bomb),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
