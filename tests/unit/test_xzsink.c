/* File blocks (xzsink.c, issue 25): while the reader is inside a big file,
 * worker blocks wholly inside it decode straight into it and leave memory at
 * once; the file gets each of its bytes exactly once whoever wrote it (file
 * blocks, the streamed block, the blocks at its two ends), the reader still
 * gets every byte in order, and a failed write fails the read with its
 * errno.  And the input of a download (ce_xzmt_use_avail): the decoding
 * thread does not wait for a later block's input while the reader has
 * decoded bytes to take. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/ctx.h"
#include "mutex_check.h"
#include "xz_fixture.h"

/* File blocks (xzsink.c): the reader says where a file's bytes begin when it
 * gets there (ce_xzmt_sink), a slow reader, so the workers get ahead of it. */
typedef struct sunk {
    ssize_t rc;
    bool same;             /* the reader still got every byte, in order */
    int sink_rc, end_rc;   /* ce_xzmt_sink's, ce_xzmt_sink_end's */
    int err;               /* ce_xzmt_errno after a failed read */
    unsigned file_blocks;
} sunk;

static sunk decode_sunk(const buf *in, unsigned threads, size_t f0, size_t flen, int fd)
{
    src s = { .in = in, .piece = 64u << 10, .fail_at = SIZE_MAX };
    const unsigned char *first;
    ssize_t n = pull(&s, &first);
    s.x = ce_xzmt_new_mem(pull, &s, first, (size_t)n, threads, 64 * MiB);
    assert_non_null(s.x);
    sunk r = { .same = true, .sink_rc = -2 };
    size_t got = 0;
    bool on = false;
    for (;;) {
        const void *out;
        r.rc = ce_xzmt_read(s.x, &out);
        if (r.rc <= 0) break;
        if (memcmp(out, plain + got, (size_t)r.rc)) r.same = false;
        if (r.sink_rc == -2 && f0 >= got && f0 < got + (size_t)r.rc) {
            assert_int_equal(ce_xzmt_sink(s.x, (const unsigned char *)out + r.rc, fd, flen), -1);   /* not handed out */
            r.sink_rc = ce_xzmt_sink(s.x, (const unsigned char *)out + (f0 - got), fd, flen);
            on = r.sink_rc >= 0;
        }
        got += (size_t)r.rc;
        if (on && got >= f0 + flen) {
            r.end_rc = ce_xzmt_sink_end(s.x);
            on = false;
        }
        struct timespec ts = { 0, 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (r.rc < 0) r.err = ce_xzmt_errno(s.x);
    if (on) r.end_rc = ce_xzmt_sink_end(s.x);
    r.file_blocks = ce_xzmt_file_blocks(s.x);
    ce_xzmt_free(s.x);
    return r;
}

/* descriptors open in this process */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int n = 0;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

static void test_file_blocks(void **state)
{
    (void)state;
    buf b = pack(PLAIN, 64u << 10, LZMA_CHECK_CRC64, 1);
    /* neither end on a block boundary; then the start on one (a file block at the
     * file's first byte, and the reader's bytes begin at a slice's first) */
    for (unsigned round = 0; round < 4; round++) {
        unsigned threads = round % 2 ? 4 : 1;
        size_t f0 = round < 2 ? 100001 : 3 * (64u << 10), flen = 5 * MiB + 333;
        char path[] = "/tmp/xzsink.XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        unlink(path);
        int fds = open_fds();
        sunk r = decode_sunk(&b, threads, f0, flen, fd);
        assert_int_equal(open_fds(), fds);   /* the sink's own descriptor closed with its last user */
        assert_int_equal(r.rc, 0);
        assert_true(r.same);
        assert_int_equal(r.sink_rc, 0);
        assert_int_equal(r.end_rc, 0);
        /* the file holds exactly its bytes, whoever wrote them */
        unsigned char *f = malloc(flen + 1);
        assert_int_equal(pread(fd, f, flen + 1, 0), (ssize_t)flen);
        assert_memory_equal(f, plain + f0, flen);
        free(f);
        close(fd);
        /* four threads: many of its 80 blocks decoded straight into it (most, unloaded); one: none (no workers) */
        if (threads == 1) assert_int_equal(r.file_blocks, 0);
        else if (r.file_blocks < 20) fail_msg("%u of the file's blocks decoded into it", r.file_blocks);
    }
    free(b.p);
    assert_int_equal(__atomic_load_n(&bad_unlocks, __ATOMIC_RELAXED), 0);
}

/* A write into the file fails (past RLIMIT_FSIZE: EFBIG): the read fails with
 * that errno, and so does the end of the sink. */
static void test_file_block_write_fails(void **state)
{
    (void)state;
    buf b = pack(PLAIN, 64u << 10, LZMA_CHECK_CRC64, 1);
    char path[] = "/tmp/xzsink.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    struct rlimit old, lim = { 1 * MiB, 0 };
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim.rlim_max = old.rlim_max;
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    sunk r = decode_sunk(&b, 4, 4096, 4 * MiB, fd);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, was);
    close(fd);
    free(b.p);
    assert_int_equal(r.rc, -1);
    assert_int_equal(r.err, EFBIG);
    assert_int_equal(r.end_rc, EFBIG);
}

/* The files of a tar, one after another (unpack.h's file-block contract):
 * for each, the reader turns the sink on where its bytes begin and off where
 * they end; a file of its own each. */
typedef struct tfile {
    size_t at, len;
    int fd;
    int sink_rc, end_rc;
} tfile;

static ssize_t decode_files(const buf *in, unsigned threads, tfile *f, size_t nf, unsigned *file_blocks)
{
    src s = { .in = in, .piece = 64u << 10, .fail_at = SIZE_MAX };
    const unsigned char *first;
    ssize_t n = pull(&s, &first);
    s.x = ce_xzmt_new_mem(pull, &s, first, (size_t)n, threads, 64 * MiB);
    assert_non_null(s.x);
    size_t got = 0, k = 0;
    bool on = false;
    for (;;) {
        const void *out;
        n = ce_xzmt_read(s.x, &out);
        if (n <= 0) break;
        assert_memory_equal(out, plain + got, (size_t)n);   /* every byte, in order */
        size_t end = got + (size_t)n;
        for (;;) {   /* files may begin and end inside one slice */
            if (on && end >= f[k].at + f[k].len) {
                f[k++].end_rc = ce_xzmt_sink_end(s.x);
                on = false;
                continue;
            }
            if (!on && k < nf && f[k].at >= got && f[k].at < end) {
                f[k].sink_rc = ce_xzmt_sink(s.x, (const unsigned char *)out + (f[k].at - got), f[k].fd, f[k].len);
                assert_int_equal(f[k].sink_rc, 0);
                on = true;
                continue;
            }
            break;
        }
        got = end;
        struct timespec ts = { 0, 1000 * 1000 };   /* a slow reader: the workers get ahead */
        nanosleep(&ts, NULL);
    }
    if (on) f[k].end_rc = ce_xzmt_sink_end(s.x);
    *file_blocks = ce_xzmt_file_blocks(s.x);
    ce_xzmt_free(s.x);
    return n;
}

/* the blocks of b whose plain bytes lie wholly inside one of the files */
static unsigned blocks_inside(const buf *b, const tfile *f, size_t nf)
{
    lzma_index *idx = blocks_of(b);
    lzma_index_iter it;
    lzma_index_iter_init(&it, idx);
    unsigned n = 0;
    while (!lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK))
        for (size_t k = 0; k < nf; k++)
            if (it.block.uncompressed_file_offset >= f[k].at &&
                it.block.uncompressed_file_offset + it.block.uncompressed_size <= f[k].at + f[k].len)
                n++;
    lzma_index_end(idx, NULL);
    return n;
}

/* unpack.h's contract over the files of a tar: each file gets exactly its
 * bytes, whoever wrote them, and nothing of the bytes between (the headers:
 * a block planned across a file's end never decodes into it; when one did,
 * its bytes past the end would fail the read or land in the file); only
 * blocks wholly inside a file are file blocks; every descriptor closed. */
static void test_file_block_bounds(void **state)
{
    (void)state;
    const size_t B = 64u << 10;
    buf b = pack(PLAIN, B, LZMA_CHECK_CRC64, 1);
    tfile f[] = {
        { .at = 100001, .len = 3 * MiB / 2 + 7 },            /* both ends inside blocks */
        { .at = 100001 + 3 * MiB / 2 + 7 + 512, .len = 0 },  /* a 512-byte header before it ... */
        { .at = 40 * B, .len = 20 * B },                     /* both ends on block boundaries */
        { .at = 60 * B + 512, .len = 30 * B - 1024 },        /* the next, 512 bytes in; ends 512 short */
    };
    f[1].len = 40 * B - 512 - f[1].at;                       /* ... ending 512 bytes before the next */
    size_t nf = sizeof f / sizeof *f;
    for (unsigned round = 0; round < 3; round++) {
        int fds = open_fds();
        for (size_t k = 0; k < nf; k++) {
            char path[] = "/tmp/xzsink.XXXXXX";
            assert_true((f[k].fd = mkstemp(path)) >= 0);
            unlink(path);
            f[k].sink_rc = f[k].end_rc = -2;
        }
        unsigned fb = 0;
        assert_int_equal(decode_files(&b, 4, f, nf, &fb), 0);
        for (size_t k = 0; k < nf; k++) {
            assert_int_equal(f[k].end_rc, 0);
            unsigned char *got = malloc(f[k].len + 1);
            assert_int_equal(pread(f[k].fd, got, f[k].len + 1, 0), (ssize_t)f[k].len);   /* nothing past it */
            assert_memory_equal(got, plain + f[k].at, f[k].len);
            free(got);
            close(f[k].fd);
        }
        assert_int_equal(open_fds(), fds);
        unsigned inside = blocks_inside(&b, f, nf);
        if (fb > inside) fail_msg("%u file blocks, %u blocks lie wholly inside the files", fb, inside);
        if (fb < 4) fail_msg("%u file blocks: the bounds were not put to the test", fb);
    }
    free(b.p);
}

/* A block of the file does not decode (a byte of its data flipped): the
 * read fails as corrupt data, not as a write (errno -1, the sink's end 0),
 * the bytes before it were handed out in order, and the file's descriptors
 * are closed, though the reader never ended the sink. */
static void test_file_block_corrupt(void **state)
{
    (void)state;
    buf b = pack(PLAIN, 64u << 10, LZMA_CHECK_CRC64, 1);
    lzma_index *idx = blocks_of(&b);
    lzma_index_iter it;
    lzma_index_iter_init(&it, idx);
    for (int i = 0; i <= 60; i++) assert_false(lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK));
    b.p[it.block.compressed_file_offset + it.block.total_size / 2] ^= 0x55;   /* block 60 of 96 */
    lzma_index_end(idx, NULL);
    for (unsigned threads = 1; threads <= 4; threads += 3) {
        char path[] = "/tmp/xzsink.XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        unlink(path);
        int fds = open_fds();
        sunk r = decode_sunk(&b, threads, 100001, 5 * MiB, fd);
        assert_int_equal(open_fds(), fds);
        close(fd);
        assert_int_equal(r.rc, -1);
        assert_true(r.same);
        assert_int_equal(r.sink_rc, 0);
        assert_int_equal(r.err, -1);       /* corrupt input, not a write */
        assert_int_equal(r.end_rc, 0);
    }
    free(b.p);
}

/* ce_xzmt_sink says no (-1) and writes nothing: before the first read, for
 * an empty file, for bytes not in the last slice handed out, while a sink is
 * on, and on the sequential decoder (xz -T1's one block without sizes). */
static void test_sink_refused(void **state)
{
    (void)state;
    char path[] = "/tmp/xzsink.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    for (int seq = 0; seq < 2; seq++) {
        buf b = pack(2 * MiB, seq ? 0 : 64u << 10, LZMA_CHECK_CRC64, 1);
        src s = { .in = &b, .piece = 64u << 10, .fail_at = SIZE_MAX };
        const unsigned char *first;
        ssize_t n = pull(&s, &first);
        s.x = ce_xzmt_new_mem(pull, &s, first, (size_t)n, 4, 64 * MiB);
        assert_non_null(s.x);
        assert_int_equal(ce_xzmt_sink(s.x, plain, fd, MiB), -1);   /* nothing handed out yet */
        const void *out;
        n = ce_xzmt_read(s.x, &out);
        assert_true(n > 0);
        const unsigned char *o = out;
        assert_int_equal(ce_xzmt_sink(s.x, o, fd, 0), -1);
        assert_int_equal(ce_xzmt_sink(s.x, o + n, fd, MiB), -1);
        assert_int_equal(ce_xzmt_sink(s.x, o - 1, fd, MiB), -1);
        if (seq) {
            assert_int_equal(ce_xzmt_sink(s.x, o, fd, MiB), -1);
        } else {
            int other = dup(fd);
            assert_int_equal(ce_xzmt_sink(s.x, o + 1, other, 4096), 0);
            assert_int_equal(ce_xzmt_sink(s.x, o + 2, fd, MiB), -1);   /* one at a time */
            assert_int_equal(ce_xzmt_sink_end(s.x), 0);
            close(other);
            assert_int_equal(ftruncate(fd, 0), 0);
        }
        while ((n = ce_xzmt_read(s.x, &out)) > 0) {}
        assert_int_equal(n, 0);
        ce_xzmt_free(s.x);
        struct stat st;
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_size, 0);   /* a refused sink wrote nothing */
        free(b.p);
    }
    close(fd);
}

/* pull_stuck's download, stuck at stop_at bytes (a multiple of the pieces): avail says so */
static long long avail_dl(void *ud)
{
    const slow *w = ud;
    return w->s.pos < w->stop_at ? (long long)(w->stop_at - w->s.pos) : 0;
}

/* Every block whose input is there reaches the reader, though the decoding
 * thread could read ahead into the block the download is stuck in (without
 * avail it waits there, and the decoded blocks before it stay unread: the
 * alarm ends the test). */
static void test_reads_ahead_only_what_is_there(void **state)
{
    (void)state;
    buf b = pack(PLAIN, 64u << 10, LZMA_CHECK_CRC64, 1);
    size_t piece = 64u << 10, stop = b.len / 2 / piece * piece;
    lzma_index *idx = blocks_of(&b);
    lzma_index_iter it;
    lzma_index_iter_init(&it, idx);
    uint64_t there = 0;   /* the plain bytes of the blocks wholly before stop */
    while (!lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK))
        if (it.block.compressed_file_offset + it.block.total_size <= stop)
            there = it.block.uncompressed_file_offset + it.block.uncompressed_size;
    lzma_index_end(idx, NULL);
    assert_true(there > 8 * piece);
    alarm(60);
    slow w = { .s = { .in = &b, .piece = piece, .fail_at = SIZE_MAX }, .stop_at = stop };
    const unsigned char *first = NULL;
    ssize_t n = pull_stuck(&w, &first);
    w.s.x = ce_xzmt_new_mem(pull_stuck, &w, first, (size_t)n, 4, 64 * MiB);
    assert_non_null(w.s.x);
    ce_xzmt_use_avail(w.s.x, avail_dl);
    size_t got = 0;
    while (got < there) {
        const void *out;
        ssize_t r = ce_xzmt_read(w.s.x, &out);
        assert_true(r > 0);
        assert_memory_equal(out, plain + got, (size_t)r);
        got += (size_t)r;
    }
    alarm(0);
    ce_xzmt_free(w.s.x);
    free(b.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_blocks),
        cmocka_unit_test(test_file_block_write_fails),
        cmocka_unit_test(test_file_block_bounds),
        cmocka_unit_test(test_file_block_corrupt),
        cmocka_unit_test(test_sink_refused),
        cmocka_unit_test(test_reads_ahead_only_what_is_there),
    };
    return cmocka_run_group_tests(tests, xz_setup, xz_teardown);
}
