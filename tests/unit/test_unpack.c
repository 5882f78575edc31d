/* The archive entry policy (pure, table-driven) and ce_unpack on archives
 * written here with libarchive: a good one, and one bad entry per rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <lzma.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/file.h"
#include "core/rmtree.h"
#include "fetch/digest.h"
#include "archive/unpack.h"

/* 256 and 255 characters: one over NAME_MAX, and NAME_MAX itself */
#define N16 "abcdefghijklmnop"
#define N64 N16 N16 N16 N16
#define LONG_NAME N64 N64 N64 N64
#define OK_NAME N64 N64 N64 N16 N16 N16 "abcdefghijklmno"

typedef struct row { const char *path; unsigned mode; const char *sym, *hard; const char *why; } row;

static void test_policy_table(void **state)
{
    (void)state;
    static const row rows[] = {
        { "lib/libcudnn.so.8.7.0", S_IFREG | 0644, NULL, NULL, NULL },
        { "include", S_IFDIR | 0755, NULL, NULL, NULL },
        { "./include/./cudnn.h", S_IFREG | 0644, NULL, NULL, NULL },
        { "lib/libcudnn.so.8", S_IFLNK | 0777, "libcudnn.so.8.7.0", NULL, NULL },
        { "lib/x", S_IFLNK | 0777, "../include/cudnn.h", NULL, NULL },
        { "a/b/c", S_IFLNK | 0777, "../../d", NULL, NULL },
        { "lib/y", S_IFREG | 0644, NULL, "lib/libcudnn.so.8.7.0", NULL },
        { "", S_IFREG | 0644, NULL, NULL, "empty path" },
        { "/etc/passwd", S_IFREG | 0644, NULL, NULL, "absolute path" },
        { "../x", S_IFREG | 0644, NULL, NULL, "path with a '..' component" },
        { "lib/../../x", S_IFREG | 0644, NULL, NULL, "path with a '..' component" },
        { "lib/..", S_IFDIR | 0755, NULL, NULL, "path with a '..' component" },
        { "dev/sda", S_IFBLK | 0600, NULL, NULL, "device node" },
        { "dev/null", S_IFCHR | 0666, NULL, NULL, "device node" },
        { "fifo", S_IFIFO | 0644, NULL, NULL, "FIFO" },
        { "sock", S_IFSOCK | 0644, NULL, NULL, "socket" },
        { "bin/su", S_IFREG | 04755, NULL, NULL, "setuid/setgid bit" },
        { "bin/sg", S_IFREG | 02755, NULL, NULL, "setuid/setgid bit" },
        { "lib/etc", S_IFLNK | 0777, "/etc", NULL, "symlink to an absolute path" },
        { "up", S_IFLNK | 0777, "..", NULL, "symlink pointing outside the tree" },
        { "lib/up", S_IFLNK | 0777, "../../..", NULL, "symlink pointing outside the tree" },
        { "a/b", S_IFLNK | 0777, "../c/../../x", NULL, "symlink pointing outside the tree" },
        { "a/b", S_IFLNK | 0777, "", NULL, "symlink without a target" },
        { "lib/h", S_IFREG | 0644, NULL, "../outside", "hardlink target outside the tree" },
        { "lib/h", S_IFREG | 0644, NULL, "/etc/shadow", "hardlink target outside the tree" },
        { LONG_NAME, S_IFREG | 0644, NULL, NULL, "path component longer than NAME_MAX" },
        { "lib/" LONG_NAME "/x", S_IFDIR | 0755, NULL, NULL, "path component longer than NAME_MAX" },
        { "lib/s", S_IFLNK | 0777, LONG_NAME, NULL, "symlink target longer than PATH_MAX or NAME_MAX" },
        { "lib/h", S_IFREG | 0644, NULL, LONG_NAME, "hardlink target outside the tree" },
        { OK_NAME, S_IFREG | 0644, NULL, NULL, NULL },
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        ce_entry e = { rows[i].path, rows[i].mode, rows[i].sym, rows[i].hard };
        const char *why = ce_entry_refusal(&e);
        if (!rows[i].why) {
            if (why) fail_msg("row %zu (%s) refused: %s", i, rows[i].path, why);
        } else {
            if (!why) fail_msg("row %zu (%s) allowed, expected: %s", i, rows[i].path, rows[i].why);
            assert_string_equal(why, rows[i].why);
        }
    }
    /* a path of PATH_MAX characters made of short components */
    static char deep[PATH_MAX + 2];
    for (size_t i = 0; i < PATH_MAX; i++) deep[i] = i % 2 ? '/' : 'd';
    deep[PATH_MAX] = 'd';
    ce_entry e = { deep, S_IFREG | 0644, NULL, NULL };
    const char *why = ce_entry_refusal(&e);
    assert_non_null(why);
    assert_string_equal(why, "path longer than PATH_MAX");
}

static void test_strip_top(void **state)
{
    (void)state;
    char top[64] = "";
    const char *rest;
    assert_int_equal(ce_strip_top("./cudnn-x/", top, sizeof top, &rest), 0);
    assert_string_equal(top, "cudnn-x");
    assert_string_equal(rest, "");
    assert_int_equal(ce_strip_top("cudnn-x/lib/a.so", top, sizeof top, &rest), 0);
    assert_string_equal(rest, "lib/a.so");
    assert_int_equal(ce_strip_top("other/lib/a.so", top, sizeof top, &rest), -1);
    assert_int_equal(ce_strip_top("cudnn-xy/a", top, sizeof top, &rest), -1);
    char t2[64] = "";
    assert_int_equal(ce_strip_top("../x", t2, sizeof t2, &rest), -1);
    /* a top directory whose name and its terminator do not fit is refused, nothing
     * written past the buffer; one byte shorter fits */
    char t3[16];
    memset(t3, 'Z', sizeof t3);
    t3[0] = '\0';
    assert_int_equal(ce_strip_top("abcdefgh/lib/a.so", t3, 8, &rest), -1);
    assert_int_equal(t3[8], 'Z');
    assert_int_equal(ce_strip_top("abcdefg/lib/a.so", t3, 8, &rest), 0);
    assert_string_equal(t3, "abcdefg");
    assert_string_equal(rest, "lib/a.so");
}

/* ---- archives written here ---- */

typedef struct ent { const char *path; unsigned mode; const char *sym, *hard, *data; } ent;

/* xzopts: libarchive's options for the xz filter (NULL: one block) */
static void write_tar_xz(const char *file, const ent *ents, size_t n, const char *xzopts)
{
    struct archive *a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    archive_write_add_filter_xz(a);
    if (xzopts) assert_int_equal(archive_write_set_options(a, xzopts), ARCHIVE_OK);
    assert_int_equal(archive_write_open_filename(a, file), ARCHIVE_OK);
    for (size_t i = 0; i < n; i++) {
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, ents[i].path);
        archive_entry_set_mode(e, ents[i].mode);
        if (ents[i].sym) archive_entry_set_symlink(e, ents[i].sym);
        if (ents[i].hard) archive_entry_set_hardlink(e, ents[i].hard);
        size_t len = ents[i].data ? strlen(ents[i].data) : 0;
        archive_entry_set_size(e, (la_int64_t)len);
        archive_write_header(a, e);
        if (len) archive_write_data(a, ents[i].data, len);
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
}

static void write_tar(const char *file, const ent *ents, size_t n)
{
    write_tar_xz(file, ents, n, NULL);
}

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cudaenv-unpack-XXXXXX");
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

static int unpack_file(const char *tar, const char *sub, ce_ctx *ctx)
{
    char dest[512];
    snprintf(dest, sizeof dest, "%s/%s", tmpdir, sub);
    mkdir(dest, 0755);
    ce_ctx_init(ctx);
    ce_unpack_src src = { .path = tar, .label = tar, .size = -1, .strip_top = true };
    return ce_unpack(ctx, &src, dest);
}

static int unpack_into(const ent *ents, size_t n, const char *sub, ce_ctx *ctx)
{
    char tar[512];
    snprintf(tar, sizeof tar, "%s/%s.tar.xz", tmpdir, sub);
    write_tar(tar, ents, n);
    return unpack_file(tar, sub, ctx);
}

static void test_unpack_good(void **state)
{
    (void)state;
    static const ent good[] = {
        { "cudnn-x/", AE_IFDIR | 0755, 0, 0, 0 },
        { "cudnn-x/include/cudnn_version.h", AE_IFREG | 0644, 0, 0, "#define CUDNN_MAJOR 8\n" },
        { "cudnn-x/lib/libcudnn.so.8.7.0", AE_IFREG | 0755, 0, 0, "ELF" },
        { "cudnn-x/lib/libcudnn.so.8", AE_IFLNK | 0777, "libcudnn.so.8.7.0", 0, 0 },
        { "cudnn-x/lib/hard", AE_IFREG | 0755, 0, "cudnn-x/lib/libcudnn.so.8.7.0", 0 },
        { "cudnn-x/LICENSE", AE_IFREG | 0644, 0, 0, "license\n" },
    };
    ce_ctx ctx;
    assert_int_equal(unpack_into(good, 6, "good", &ctx), CE_OK);
    char p[600], buf[64] = "";
    snprintf(p, sizeof p, "%s/good/lib/libcudnn.so.8", tmpdir);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "ELF");
    struct stat a, b;
    snprintf(p, sizeof p, "%s/good/lib/hard", tmpdir);
    assert_int_equal(stat(p, &a), 0);
    snprintf(p, sizeof p, "%s/good/lib/libcudnn.so.8.7.0", tmpdir);
    assert_int_equal(stat(p, &b), 0);
    assert_true(a.st_ino == b.st_ino);
    snprintf(p, sizeof p, "%s/good/cudnn-x", tmpdir);
    assert_false(ce_exists(p));
}

static void test_unpack_digest(void **state)
{
    (void)state;
    static const ent good[] = { { "t/a", AE_IFREG | 0644, 0, 0, "a\n" } };
    char tar[512], dest[512];
    snprintf(tar, sizeof tar, "%s/d.tar.xz", tmpdir);
    snprintf(dest, sizeof dest, "%s/d", tmpdir);
    write_tar(tar, good, 1);
    mkdir(dest, 0755);
    ce_ctx ctx;
    ce_ctx_init(&ctx);
    ce_unpack_src src = { .path = tar, .label = "http://x/d.tar.xz", .size = -1, .strip_top = true,
                          .sha256 = "0000000000000000000000000000000000000000000000000000000000000000" };
    assert_int_equal(ce_unpack(&ctx, &src, dest), CE_ERR_INTEGRITY);
    assert_non_null(strstr(ce_errmsg(), "http://x/d.tar.xz: sha256 "));
}

static void expect_refused(const ent *ents, size_t n, const char *sub, const char *entry, const char *why)
{
    ce_ctx ctx;
    int rc = unpack_into(ents, n, sub, &ctx);
    if (rc != CE_ERR_INTEGRITY) fail_msg("%s: rc %d (%s)", sub, rc, ce_errmsg());
    if (!strstr(ce_errmsg(), entry) || !strstr(ce_errmsg(), why)) fail_msg("%s: message '%s'", sub, ce_errmsg());
}

static void test_unpack_refusals(void **state)
{
    (void)state;
    static const ent dotdot[] = { { "t/../../x", AE_IFREG | 0644, 0, 0, "x" } };
    expect_refused(dotdot, 1, "dotdot", "t/../../x", "'..'");
    static const ent two_tops[] = { { "t/a", AE_IFREG | 0644, 0, 0, "a" }, { "u/b", AE_IFREG | 0644, 0, 0, "b" } };
    expect_refused(two_tops, 2, "tops", "u/b", "single top directory");
    static const ent suid[] = { { "t/bin/x", AE_IFREG | 04755, 0, 0, "x" } };
    expect_refused(suid, 1, "suid", "t/bin/x", "setuid");
    static const ent esc[] = { { "t/lib/e", AE_IFLNK | 0777, "../../../etc", 0, 0 } };
    expect_refused(esc, 1, "esc", "t/lib/e", "outside the tree");
    static const ent fifo[] = { { "t/f", AE_IFIFO | 0644, 0, 0, 0 } };
    expect_refused(fifo, 1, "fifo", "t/f", "FIFO");
    static const ent hard[] = { { "t/h", AE_IFREG | 0644, 0, "../x", 0 } };
    expect_refused(hard, 1, "hard", "t/h", "hardlink");
}

/* A chain of links that are each harmless lexically but resolve outside. */
static void test_link_chain(void **state)
{
    (void)state;
    static const ent chain[] = {
        { "t/r", AE_IFLNK | 0777, ".", 0, 0 },
        { "t/x", AE_IFLNK | 0777, "r/..", 0, 0 },
    };
    expect_refused(chain, 2, "chain", "x", "resolving outside");
}

/* ---- .xz files of several blocks (decoded by ce_xzmt on several threads) ---- */

/* t/a (64 KiB of text) and t/b: a plain tar in memory, compressed by
 * liblzma's threaded encoder in 4 KiB blocks into file; returns its size. */
static size_t write_multiblock(const char *file, uint64_t block_size)
{
    static char tarbuf[1 << 18];
    static unsigned char xzbuf[1 << 18];
    static char data[65536];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (char)('a' + (i * 7 + i / 13) % 26);
    size_t used = 0;
    struct archive *a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    assert_int_equal(archive_write_open_memory(a, tarbuf, sizeof tarbuf, &used), ARCHIVE_OK);
    const char *names[] = { "t/a", "t/b" };
    for (int i = 0; i < 2; i++) {
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, names[i]);
        archive_entry_set_mode(e, AE_IFREG | 0644);
        archive_entry_set_size(e, i ? 3 : (la_int64_t)sizeof data);
        archive_write_header(a, e);
        archive_write_data(a, i ? "bb\n" : data, i ? 3 : sizeof data);
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    lzma_stream st = LZMA_STREAM_INIT;
    lzma_mt mt = { .threads = 2, .block_size = block_size, .preset = 1, .check = LZMA_CHECK_CRC64 };
    assert_int_equal(lzma_stream_encoder_mt(&st, &mt), LZMA_OK);
    st.next_in = (const uint8_t *)tarbuf;
    st.avail_in = used;
    st.next_out = xzbuf;
    st.avail_out = sizeof xzbuf;
    assert_int_equal(lzma_code(&st, LZMA_FINISH), LZMA_STREAM_END);
    size_t n = sizeof xzbuf - st.avail_out;
    lzma_end(&st);
    FILE *f = fopen(file, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(xzbuf, 1, n, f), n);
    fclose(f);
    return n;
}

static void test_unpack_multiblock(void **state)
{
    (void)state;
    char tar[512], p[600];
    snprintf(tar, sizeof tar, "%s/mb.tar.xz", tmpdir);
    write_multiblock(tar, 4096);
    ce_ctx ctx;
    assert_int_equal(unpack_file(tar, "mb", &ctx), CE_OK);
    struct stat st;
    snprintf(p, sizeof p, "%s/mb/a", tmpdir);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 65536);
    snprintf(p, sizeof p, "%s/mb/b", tmpdir);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 3);
}

/* The free-space check before a byte is written: entries declaring exactly the free
 * bytes (CUDAENV_TEST_FREE_BYTES) fit; one byte less free is ENOSPC, naming the entry. */
static void test_unpack_fits_free_space_exactly(void **state)
{
    (void)state;
    static const ent ents[] = { { "t/a", AE_IFREG | 0644, 0, 0, "abc" }, { "t/b", AE_IFREG | 0644, 0, 0, "defgh" } };
    ce_ctx ctx;
    setenv("CUDAENV_TEST_FREE_BYTES", "8", 1);
    int fit = unpack_into(ents, 2, "fit", &ctx);
    char why[512];
    snprintf(why, sizeof why, "%s", ce_errmsg());
    setenv("CUDAENV_TEST_FREE_BYTES", "7", 1);
    int rc = unpack_into(ents, 2, "nofit", &ctx);
    unsetenv("CUDAENV_TEST_FREE_BYTES");
    if (fit != CE_OK) fail_msg("8 bytes declared, 8 free: rc %d (%s)", fit, why);
    assert_int_equal(rc, CE_ERR_SPACE);
    if (!strstr(ce_errmsg(), "(at 'b')") || !strstr(ce_errmsg(), "only 7 are free"))
        fail_msg("message '%s'", ce_errmsg());
}

/* A flipped byte and a cut-off file: refused as before, naming the archive. */
static void test_unpack_multiblock_broken(void **state)
{
    (void)state;
    char tar[512];
    snprintf(tar, sizeof tar, "%s/bad.tar.xz", tmpdir);
    size_t n = write_multiblock(tar, 4096);
    FILE *f = fopen(tar, "r+b");
    assert_non_null(f);
    fseek(f, (long)(n / 3), SEEK_SET);
    int c = fgetc(f);
    fseek(f, (long)(n / 3), SEEK_SET);
    fputc(c ^ 0x55, f);
    fclose(f);
    ce_ctx ctx;
    assert_int_equal(unpack_file(tar, "bad", &ctx), CE_ERR_INTEGRITY);
    if (!strstr(ce_errmsg(), "bad.tar.xz is not a readable archive: Lzma library error: Corrupted input data"))
        fail_msg("message '%s'", ce_errmsg());

    snprintf(tar, sizeof tar, "%s/cut.tar.xz", tmpdir);
    n = write_multiblock(tar, 4096);
    assert_int_equal(truncate(tar, (off_t)(n / 2)), 0);
    assert_int_equal(unpack_file(tar, "cut", &ctx), CE_ERR_INTEGRITY);
    if (!strstr(ce_errmsg(), "cut.tar.xz is not a readable archive: "))
        fail_msg("message '%s'", ce_errmsg());
}

/* One pass: the index written while unpacking holds, for every regular
 * file's inode, the sha256 of what is on disk (empty files, hardlinks, a
 * path given twice), and nothing else: the file a later entry replaced has
 * no entry, whether or not the kernel gave its inode to the new file (it
 * mostly does; when not, a stale entry was left: 1 run in 4), nor when a
 * symlink took its name (left every time before); none is written when the
 * archive's digest is wrong. */
static void test_unpack_hash_index(void **state)
{
    (void)state;
    static const ent ents[] = {
        { "cudnn-x/", AE_IFDIR | 0755, 0, 0, 0 },
        { "cudnn-x/include/cudnn_version.h", AE_IFREG | 0644, 0, 0, "#define CUDNN_MAJOR 8\n" },
        { "cudnn-x/lib/libcudnn.so.8.7.0", AE_IFREG | 0755, 0, 0, "ELF and more bytes" },
        { "cudnn-x/lib/libcudnn.so.8", AE_IFLNK | 0777, "libcudnn.so.8.7.0", 0, 0 },
        { "cudnn-x/lib/hard", AE_IFREG | 0755, 0, "cudnn-x/lib/libcudnn.so.8.7.0", 0 },
        { "cudnn-x/empty", AE_IFREG | 0644, 0, 0, 0 },
        { "cudnn-x/twice", AE_IFREG | 0644, 0, 0, "first" },
        { "cudnn-x/twice", AE_IFREG | 0644, 0, 0, "second, longer" },
        { "cudnn-x/gone", AE_IFREG | 0644, 0, 0, "replaced by a link" },
        { "cudnn-x/gone", AE_IFLNK | 0777, "empty", 0, 0 },
    };
    const size_t n = sizeof ents / sizeof *ents;
    char tar[512], dest[512], index[600];
    snprintf(tar, sizeof tar, "%s/hidx.tar.xz", tmpdir);
    snprintf(dest, sizeof dest, "%s/hidx", tmpdir);
    snprintf(index, sizeof index, "%s/hidx.sha256.json", tmpdir);
    write_tar(tar, ents, n);
    mkdir(dest, 0755);
    ce_ctx ctx;
    ce_ctx_init(&ctx);
    ce_unpack_src src = { .path = tar, .label = tar, .size = -1, .strip_top = true, .hash_index = index };
    assert_int_equal(ce_unpack(&ctx, &src, dest), CE_OK);

    char *text = NULL;
    assert_int_equal(ce_file_read(index, 1 << 20, &text, NULL), CE_OK);
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    struct stat st;
    assert_int_equal(stat(dest, &st), 0);
    assert_true((unsigned long long)cJSON_GetObjectItemCaseSensitive(j, "tree_ino")->valuedouble ==
                (unsigned long long)st.st_ino);
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(j, "files");
    assert_int_equal(cJSON_GetArraySize(files), 4);   /* version.h, the .so (= hard), empty, twice */
    static const char *const regular[] = { "include/cudnn_version.h", "lib/libcudnn.so.8.7.0", "lib/hard",
                                           "empty", "twice" };
    for (size_t i = 0; i < sizeof regular / sizeof *regular; i++) {
        char p[700], want[CE_SHA256_HEX];
        snprintf(p, sizeof p, "%s/%s", dest, regular[i]);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(ce_sha256_file(p, want), CE_OK);
        const cJSON *f, *hit = NULL;
        cJSON_ArrayForEach(f, files)
            if ((unsigned long long)cJSON_GetObjectItemCaseSensitive(f, "ino")->valuedouble ==
                (unsigned long long)st.st_ino) hit = f;
        if (!hit) fail_msg("%s (inode %llu) is not in the index", regular[i], (unsigned long long)st.st_ino);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(hit, "sha256")->valuestring, want);
        assert_true((long long)cJSON_GetObjectItemCaseSensitive(hit, "size")->valuedouble == (long long)st.st_size);
    }
    cJSON_Delete(j);

    /* a wrong archive digest: the tree is refused and no index is written */
    snprintf(dest, sizeof dest, "%s/hidx-bad", tmpdir);
    snprintf(index, sizeof index, "%s/hidx-bad.sha256.json", tmpdir);
    mkdir(dest, 0755);
    ce_ctx_init(&ctx);
    ce_unpack_src bad = { .path = tar, .label = tar, .size = -1, .strip_top = true, .hash_index = index,
                          .sha256 = "0000000000000000000000000000000000000000000000000000000000000000" };
    assert_int_equal(ce_unpack(&ctx, &bad, dest), CE_ERR_INTEGRITY);
    assert_false(ce_exists(index));
}

/* The decoder writes big files itself (file blocks, xzmt.h): an archive that
 * first puts a symlink and a hardlink where a big file goes, both to a file
 * of the tree, then the big file under each name, in several xz blocks, must
 * leave that file as it was and give each name a file of its own, byte-exact
 * (the decoder's file is the one libarchive made, not what was there). */
static void test_unpack_big_file_over_links(void **state)
{
    (void)state;
    static char big[12 << 20];   /* most of its blocks planned after the reader reached it */
    for (size_t i = 0; i + 1 < sizeof big; i++) big[i] = (char)('a' + (i * 7 + i / 4099) % 26);
    const ent ents[] = {
        { "t/", AE_IFDIR | 0755, 0, 0, 0 },
        { "t/real", AE_IFREG | 0644, 0, 0, "REAL\n" },
        { "t/link", AE_IFLNK | 0777, "real", 0, 0 },
        { "t/hard", AE_IFREG | 0644, 0, "t/real", 0 },
        { "t/link", AE_IFREG | 0644, 0, 0, big },
        { "t/hard", AE_IFREG | 0644, 0, 0, big },
    };
    char tar[512], p[600];
    snprintf(tar, sizeof tar, "%s/links.tar.xz", tmpdir);
    write_tar_xz(tar, ents, sizeof ents / sizeof *ents, "xz:compression-level=0,xz:threads=2");
    ce_ctx ctx;
    int rc = unpack_file(tar, "links", &ctx);
    if (rc != CE_OK) fail_msg("rc %d: %s", rc, ce_errmsg());
    char *text = NULL;
    size_t len = 0;
    snprintf(p, sizeof p, "%s/links/real", tmpdir);
    assert_int_equal(ce_file_read(p, 1 << 20, &text, &len), CE_OK);
    assert_int_equal(len, 5);
    assert_memory_equal(text, "REAL\n", 5);
    free(text);
    static const char *const names[] = { "link", "hard" };
    for (int i = 0; i < 2; i++) {
        struct stat st;
        snprintf(p, sizeof p, "%s/links/%s", tmpdir, names[i]);
        assert_int_equal(lstat(p, &st), 0);
        assert_true(S_ISREG(st.st_mode) && st.st_nlink == 1);
        assert_int_equal(ce_file_read(p, 16 << 20, &text, &len), CE_OK);
        assert_int_equal(len, strlen(big));
        assert_memory_equal(text, big, len);
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_table),
        cmocka_unit_test(test_strip_top),
        cmocka_unit_test(test_unpack_good),
        cmocka_unit_test(test_unpack_digest),
        cmocka_unit_test(test_unpack_refusals),
        cmocka_unit_test(test_link_chain),
        cmocka_unit_test(test_unpack_multiblock),
        cmocka_unit_test(test_unpack_multiblock_broken),
        cmocka_unit_test(test_unpack_fits_free_space_exactly),
        cmocka_unit_test(test_unpack_hash_index),
        cmocka_unit_test(test_unpack_big_file_over_links),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
