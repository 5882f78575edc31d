/* ce_unpack reads an .xz archive to the end of its stream (issue 36 item 4):
 * libarchive stops at the tar's end marker, and what comes after it (the
 * index, the footer, stream padding) is decoded and checked as `xz -t` does.
 * A tar.xz broken only after its data (every block decodes) is refused as
 * an unreadable archive, whichever decoder reads it (one block without
 * sizes: liblzma's stream decoder; 4 KiB blocks with sizes: the block
 * decoder) and with or without the decoding thread (CUDAENV_XZ_NO_PIPE). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "core/rmtree.h"
#include "archive/unpack.h"

typedef struct buf {
    unsigned char *p;
    size_t len;
} buf;

static buf cat(buf a, const void *p, size_t n)
{
    a.p = realloc(a.p, a.len + n);
    assert_non_null(a.p);
    memcpy(a.p + a.len, p, n);
    a.len += n;
    return a;
}

static char tmpdir[256];
static unsigned char *tarbuf;
static size_t tarlen;

/* t/a (192 KiB of text), t/b: a plain tar in memory */
static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cudaenv-xzend-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    static char data[192 << 10];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (char)('a' + (i * 7 + i / 13) % 26);
    size_t cap = sizeof data + (64 << 10);
    tarbuf = malloc(cap);
    struct archive *a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    assert_int_equal(archive_write_open_memory(a, tarbuf, cap, &tarlen), ARCHIVE_OK);
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
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ce_ctx ctx;
    ce_ctx_init(&ctx);
    ce_rm_tree(tmpdir);
    free(tarbuf);
    return 0;
}

/* the tar, packed: blocks of block bytes with their sizes (0: one block without) */
static buf pack(uint64_t block)
{
    buf b = { malloc(tarlen + 65536), 0 };
    lzma_stream s = LZMA_STREAM_INIT;
    lzma_mt mt = { .threads = 2, .block_size = block, .preset = 1, .check = LZMA_CHECK_CRC64 };
    assert_int_equal(block ? lzma_stream_encoder_mt(&s, &mt) : lzma_easy_encoder(&s, 1, LZMA_CHECK_CRC64), LZMA_OK);
    s.next_in = tarbuf;
    s.avail_in = tarlen;
    s.next_out = b.p;
    s.avail_out = tarlen + 65536;
    assert_int_equal(lzma_code(&s, LZMA_FINISH), LZMA_STREAM_END);
    b.len = s.total_out;
    lzma_end(&s);
    return b;
}

enum how { GOOD, RECORD, UNPADDED, EXTRA_BLOCK, INDEX_CRC, FOOTER_CRC, BACKWARD, FLAGS, GARBAGE, NHOW };
static const char *const hows[] = { "good", "record", "unpadded", "extra-block", "index-crc",
                                    "footer-crc", "backward", "flags", "garbage" };

static buf footer_of(buf o, lzma_vli backward, lzma_check check)
{
    lzma_stream_flags f = { .version = 0, .check = check, .backward_size = backward };
    unsigned char foot[LZMA_STREAM_HEADER_SIZE];
    assert_int_equal(lzma_stream_footer_encode(&f, foot), LZMA_OK);
    return cat(o, foot, sizeof foot);
}

/* b broken after its data, as tests/lib/xzbreak.py does (the same names) */
static buf broken(const buf *b, enum how how)
{
    lzma_stream_flags f;
    assert_int_equal(lzma_stream_footer_decode(&f, b->p + b->len - 12), LZMA_OK);
    size_t istart = b->len - 12 - (size_t)f.backward_size;
    lzma_index *idx = NULL;
    uint64_t limit = UINT64_MAX;
    size_t pos = istart;
    assert_int_equal(lzma_index_buffer_decode(&idx, &limit, NULL, b->p, &pos, b->len - 12), LZMA_OK);
    buf o = cat((buf){ NULL, 0 }, b->p, istart);   /* header and blocks */
    lzma_index_iter it;
    lzma_index_iter_init(&it, idx);
    lzma_vli nblocks = lzma_index_block_count(idx), last_unpadded = 0, last_total = 0;
    switch (how) {
    case RECORD:
    case UNPADDED: {
        lzma_index *bad = lzma_index_init(NULL);
        for (lzma_vli j = 1; !lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK); j++) {
            bool last = j == nblocks;
            assert_int_equal(lzma_index_append(bad, NULL, it.block.unpadded_size + (last && how == UNPADDED ? 4 : 0),
                                               it.block.uncompressed_size + (last && how == RECORD)), LZMA_OK);
        }
        unsigned char ib[4096];
        size_t ilen = 0;
        assert_int_equal(lzma_index_buffer_encode(bad, ib, &ilen, sizeof ib), LZMA_OK);
        o = footer_of(cat(o, ib, ilen), ilen, f.check);
        lzma_index_end(bad, NULL);
        break;
    }
    case EXTRA_BLOCK:
        while (!lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK)) {
            last_unpadded = it.block.unpadded_size;
            last_total = it.block.total_size;
        }
        assert_true(last_unpadded > 0);
        o = cat(o, b->p + istart - last_total, (size_t)last_total);   /* the last block again */
        o = cat(o, b->p + istart, b->len - istart);
        break;
    case INDEX_CRC:
        o = cat(o, b->p + istart, b->len - istart);
        memset(o.p + o.len - 16, 0, 4);
        break;
    case FOOTER_CRC:
        o = cat(o, b->p + istart, b->len - istart);
        o.p[o.len - 12] ^= 0xFF;
        break;
    case BACKWARD:
        o = footer_of(cat(o, b->p + istart, (size_t)f.backward_size), f.backward_size + 4, f.check);
        break;
    case FLAGS:
        o = footer_of(cat(o, b->p + istart, (size_t)f.backward_size), f.backward_size, LZMA_CHECK_CRC32);
        break;
    case GARBAGE:
        o = cat(cat(o, b->p + istart, b->len - istart), "JUNK", 4);
        break;
    default:
        o = cat(o, b->p + istart, b->len - istart);
    }
    lzma_index_end(idx, NULL);
    return o;
}

/* the tar packed with block (0: one block), broken by how, through ce_unpack */
static int unpack_broken(uint64_t block, enum how how, bool no_pipe, char *msg, size_t msgsz)
{
    static unsigned serial;
    char tar[512], dest[512];
    snprintf(tar, sizeof tar, "%s/%s-%u.tar.xz", tmpdir, hows[how], serial);
    snprintf(dest, sizeof dest, "%s/%s-%u", tmpdir, hows[how], serial++);
    buf b = pack(block), o = broken(&b, how);
    FILE *f = fopen(tar, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(o.p, 1, o.len, f), o.len);
    fclose(f);
    free(b.p);
    free(o.p);
    assert_int_equal(mkdir(dest, 0755), 0);
    if (no_pipe) setenv("CUDAENV_XZ_NO_PIPE", "1", 1);
    ce_ctx ctx;
    ce_ctx_init(&ctx);   /* settings are read once, here */
    ce_unpack_src src = { .path = tar, .label = tar, .size = -1, .strip_top = true };
    int rc = ce_unpack(&ctx, &src, dest);
    snprintf(msg, msgsz, "%s", ce_errmsg());
    unsetenv("CUDAENV_XZ_NO_PIPE");
    ce_ctx_init(&ctx);
    return rc;
}

/* every breakage, with and without the decoding thread: each one named that is not refused */
static void each_way(uint64_t block)
{
    char msg[2048];
    unsigned missed = 0;
    for (int np = 0; np < 2; np++) {
        if (unpack_broken(block, GOOD, np, msg, sizeof msg) != CE_OK)
            fail_msg("good, block %llu, no_pipe %d: %s", (unsigned long long)block, np, msg);
        for (int h = RECORD; h < NHOW; h++) {
            int rc = unpack_broken(block, (enum how)h, np, msg, sizeof msg);
            if (rc != CE_ERR_INTEGRITY || !strstr(msg, hows[h]) ||
                !strstr(msg, ".tar.xz is not a readable archive: Lzma library error")) {
                print_error("%s, block %llu, no_pipe %d: rc %d (%s)\n", hows[h], (unsigned long long)block, np, rc,
                            rc ? msg : "unpacked");
                missed++;
            }
        }
    }
    assert_int_equal(missed, 0);
}

static void test_blocks(void **state)
{
    (void)state;
    each_way(4096);
}

static void test_one_block(void **state)
{
    (void)state;
    each_way(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks),
        cmocka_unit_test(test_one_block),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
