/* libFuzzer target: the .xz container parser (archive/xzparse.c: stream
 * header, block headers, index, footer, padding, streams after the first)
 * and the decoders behind it (xzblk.c, xzmt.c), read to the end of the
 * stream as the unpacker reads it (unpack_xz_rest).  Besides not crashing,
 * leaking or reading out of bounds, ce_xzmt must agree with liblzma's own
 * stream decoder (LZMA_CONCATENATED, as `xz -t`): the same input accepted
 * or refused, and when accepted, the same bytes.  The input arrives in
 * pieces (the first 512 bytes, then 61 at a time) so the parser's reads
 * cross every boundary; it is decoded with one thread and with two.
 * With two threads the reader also turns a file sink on (unpack.h's
 * file-block contract, xzsink.c) for the first half of the plain bytes from
 * its first slice's eighth byte on: when the input is accepted the file
 * must hold exactly those bytes, whoever wrote them, and the sink's end
 * report no error.
 * make fuzz seeds it with files xz writes (blocks with sizes, one block
 * without) and tests/lib/xzbreak.py's breakages of them. */
#include <errno.h>
#include <lzma.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "archive/xzmt.h"

/* output past this is not compared (a small input may expand a lot) */
#define CAP (32u << 20)

typedef struct src {
    const uint8_t *p;
    size_t len, pos;
} src;

static ssize_t pull(void *ud, const unsigned char **out)
{
    src *s = ud;
    size_t n = s->len - s->pos < 61 ? s->len - s->pos : 61;
    *out = s->p + s->pos;
    s->pos += n;
    return (ssize_t)n;
}

/* liblzma's verdict: 1 accepted (*out, *n), 0 refused, -1 too big to compare */
static int reference(const uint8_t *data, size_t size, unsigned char *out, size_t *n)
{
    lzma_stream s = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&s, 1u << 30, LZMA_CONCATENATED) != LZMA_OK) return -1;
    s.next_in = data;
    s.avail_in = size;
    s.next_out = out;
    s.avail_out = CAP;
    lzma_ret r = lzma_code(&s, LZMA_FINISH);
    while (r == LZMA_OK && s.avail_out > 0) r = lzma_code(&s, LZMA_FINISH);
    *n = CAP - s.avail_out;
    lzma_end(&s);
    if (r == LZMA_STREAM_END) return 1;
    if (r == LZMA_OK || r == LZMA_MEMLIMIT_ERROR || r == LZMA_MEM_ERROR) return -1;
    return 0;
}

/* the sink's file: the plain bytes [at, at + len) once the input was
 * accepted; held across runs, emptied for each */
typedef struct sinkf {
    int fd;
    size_t at, len;
    bool on, ended;
} sinkf;

/* The file holds ref[at, at + len) exactly (abort when not). */
static void check_file(const sinkf *f, const unsigned char *ref)
{
    static unsigned char got[CAP / 2 + 1];
    ssize_t n = pread(f->fd, got, f->len + 1, 0);
    if (n != (ssize_t)f->len || memcmp(got, ref + f->at, f->len)) abort();
}

/* ce_xzmt's: the same, and abort when the bytes differ from ref[0..ref_n);
 * f: turn a sink on at the first read */
static int ours(const uint8_t *data, size_t size, unsigned threads, const unsigned char *ref, size_t ref_n,
                int want, sinkf *f)
{
    src s = { data, size, size < 512 ? size : 512 };
    ce_xzmt *x = ce_xzmt_new_mem(pull, &s, data, s.pos, threads, 64u << 20);
    if (!x) return -1;
    size_t got = 0;
    ssize_t n;
    const void *buf;
    while ((n = ce_xzmt_read(x, &buf)) > 0) {
        if (got + (size_t)n > CAP) {
            ce_xzmt_free(x);
            return -1;
        }
        if (want == 1 && (got + (size_t)n > ref_n || memcmp(ref + got, buf, (size_t)n))) abort();
        if (f && got == 0) {
            f->at = (size_t)n > 7 ? 7 : (size_t)n - 1;
            f->len = want == 1 ? (ref_n - f->at) / 2 : 4096;
            f->on = ce_xzmt_sink(x, (const unsigned char *)buf + f->at, f->fd, f->len) == 0;
        }
        got += (size_t)n;
        if (f && f->on && !f->ended && got >= f->at + f->len) {
            f->ended = true;
            if (ce_xzmt_sink_end(x) != 0 && want == 1) abort();   /* nothing failed to write */
        }
    }
    int errno_ = n < 0 ? ce_xzmt_errno(x) : 0;
    ce_xzmt_free(x);
    if (n < 0 && errno_ == ENOMEM) return -1;
    if (n == 0 && want == 1 && got != ref_n) abort();
    if (n == 0 && want == 1 && f && f->on) check_file(f, ref);
    return n == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned char *ref;
    if (!ref && !(ref = malloc(CAP))) return 0;
    if (size < 6 || !ce_xzmt_magic(data, size)) return 0;   /* the unpacker's own test */
    size_t ref_n = 0;
    int want = reference(data, size, ref, &ref_n);
    static sinkf f = { .fd = -1 };
    if (f.fd < 0 && (f.fd = memfd_create("fuzz_xz_sink", MFD_CLOEXEC)) < 0) return 0;
    for (unsigned threads = 1; threads <= 2; threads++) {
        sinkf *sk = threads == 2 && ftruncate(f.fd, 0) == 0 ? &f : NULL;
        if (sk) sk->on = sk->ended = false;
        int got = ours(data, size, threads, ref, ref_n, want, sk);
        if (want >= 0 && got >= 0 && got != want) abort();   /* one accepts what the other refuses */
    }
    return 0;
}
