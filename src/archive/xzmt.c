#include "xzmt_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/ctx.h"
#include "core/fault.h"
#include "core/proc.h"

/* liblzma's big buffers (a block's input and output, the dictionary) go
 * straight to mmap and back to the kernel when freed: through malloc they
 * would stay in each thread's arena and count against peak RSS. */
#define BIG_ALLOC (256u << 10)
#define HDR 16u

static void *xz_alloc(void *opaque, size_t nmemb, size_t size)
{
    (void)opaque;
    size_t n = nmemb * size;
    if (size && n / size != nmemb) return NULL;
    if (n < BIG_ALLOC) {
        unsigned char *p = malloc(n + HDR);
        if (!p) return NULL;
        *(size_t *)p = 0;
        return p + HDR;
    }
    unsigned char *p = mmap(NULL, n + HDR, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    *(size_t *)p = n + HDR;
    return p + HDR;
}

static void xz_free(void *opaque, void *ptr)
{
    (void)opaque;
    if (!ptr) return;
    unsigned char *p = (unsigned char *)ptr - HDR;
    size_t n = *(size_t *)p;
    if (n) munmap(p, n);
    else free(p);
}

const lzma_allocator ce_xzmt_allocator = { xz_alloc, xz_free, NULL };

/* A block's buffers: pages of their own, given back in parts (xzblk.c). */
void *ce_xzmt_big_alloc(size_t n)
{
    if (n == 0) return NULL;
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void ce_xzmt_big_free(void *p, size_t n)
{
    if (p && n) munmap(p, n);
}



/* Tests observe that a multi-block archive really was decoded on several
 * threads (core/fault.h, xz-start/xz-done): the block decoder counts its
 * workers and the decoding thread if it decoded a block itself; for the
 * sequential decoder (-1) the test counts the threads that appeared while it
 * decoded.  With the blocks decoded straight into a file (xzsink.c). */
static void report_threads(const ce_xzmt *x)
{
    long long r[2] = { x->blocks ? (long long)(x->nworkers + x->streamed) : -1, x->nfile };
    ce_fault_point("xz-done", r);
}

bool ce_xzmt_magic(const void *buf, size_t n)
{
    static const unsigned char magic[6] = { 0xFD, '7', 'z', 'X', 'Z', 0x00 };
    return n >= sizeof magic && memcmp(buf, magic, sizeof magic) == 0;
}

static unsigned default_threads(void)
{
    long n = ce_cpu_count();
    if (n > CE_XZMT_MAX_THREADS) n = CE_XZMT_MAX_THREADS;
    return (unsigned)n;
}

unsigned long long ce_xzmt_budget_for(long cores, unsigned long long avail)
{
    unsigned long long b = (unsigned long long)(cores < 1 ? 1 : cores) * CE_XZMT_PER_CORE - CE_XZMT_FIXED;
    if (b > CE_XZMT_BUDGET_MAX) b = CE_XZMT_BUDGET_MAX;
    if (avail > 0 && b > avail / CE_XZMT_AVAIL_DIV) b = avail / CE_XZMT_AVAIL_DIV;
    return b < CE_XZMT_BUDGET_MIN ? CE_XZMT_BUDGET_MIN : b;
}

static unsigned long long mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "re");
    if (!f) return 0;
    char line[128];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
    fclose(f);
    return kib * 1024;
}

unsigned long long ce_xzmt_budget(void)
{
    return ce_xzmt_budget_for(ce_cpu_count(), mem_available());
}

/* A multibyte integer of the .xz format: 0 and *v, or -1. */
static int vli(const unsigned char *p, size_t end, size_t *i, unsigned long long *v)
{
    *v = 0;
    for (unsigned k = 0; k < 9 && *i < end; k++) {
        unsigned char b = p[(*i)++];
        *v |= (unsigned long long)(b & 0x7F) << (7 * k);
        if (!(b & 0x80)) return 0;
    }
    return -1;
}

bool ce_xzmt_block_need(const void *buf, size_t n, unsigned long long *need)
{
    const unsigned char *p = buf;
    *need = 0;
    if (n < 14 || !ce_xzmt_magic(buf, n) || p[12] == 0) return false; /* 0: the index, no block */
    size_t end = 12 + ((size_t)p[12] + 1) * 4, i = 14;
    unsigned char flags = p[13];
    if (end > n || (flags & 0xC0) != 0xC0) return false;           /* no sizes: sequential only */
    unsigned long long csize, usize, dict = 0, id, psize;
    if (vli(p, end, &i, &csize) || vli(p, end, &i, &usize)) return false;
    for (unsigned f = 0; f <= (flags & 3u); f++) {
        if (vli(p, end, &i, &id) || vli(p, end, &i, &psize) || psize > end - i) return false;
        if (id == 0x21 && psize == 1) {                               /* LZMA2: its dictionary */
            unsigned d = p[i];
            if (d > 40) return false;
            dict = d == 40 ? 0xFFFFFFFFull : (2ull | (d & 1u)) << (d / 2 + 11);
        }
        i += psize;
    }
    /* about what a worker block of this file holds: later blocks may
     * compress worse than the first (half as much input again, at most the
     * plain size), and the decoder's own structures take a little more
     * (the block decoder reserves each block's exact need: xzblk.c) */
    unsigned long long in = csize + csize / 2 < usize ? csize + csize / 2 : usize;
    *need = in + usize + dict + (1u << 20);
    return true;
}

ce_xzmt *ce_xzmt_new(ce_xzmt_pull pull, void *ud, const void *first, size_t n, unsigned threads)
{
    return ce_xzmt_new_mem(pull, ud, first, n, threads, ce_xzmt_budget());
}

ce_xzmt *ce_xzmt_new_mem(ce_xzmt_pull pull, void *ud, const void *first, size_t n, unsigned threads,
                         unsigned long long memlimit)
{
    ce_xzmt *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    x->pull = pull;
    x->ud = ud;
    x->threads = threads ? threads : default_threads();
    if (x->threads > CE_XZMT_MAX_THREADS) x->threads = CE_XZMT_MAX_THREADS;
    ce_fault_point("xz-start", NULL);
    x->mem_free = x->mem_total = memlimit;
    unsigned long long need;
#ifndef CE_XZ_LIBLZMA_MT
    if (ce_xzmt_block_need(first, n, &need)) {
        /* blocks with their sizes: the block decoder (xzblk.c) reads the input itself */
        x->ip = first;
        x->ia = n;
        if (xzb_init(x) == 0) return x;
        free(x);
        return NULL;
    }
    /* one block that decodes only sequentially (xz -T1): liblzma's stream decoder */
    x->strm = (lzma_stream)LZMA_STREAM_INIT;
    x->strm.allocator = &ce_xzmt_allocator;
    x->err = lzma_stream_decoder(&x->strm, MEMLIMIT_STOP, LZMA_CONCATENATED); /* as libarchive */
#else
    /* the comparison build (make XZ=liblzma, bench/linerate.sh's install-liblzma
     * rows, issue 40 item 5): every file on liblzma's threaded decoder, as
     * many threads as the block decoder would have, the install's whole
     * budget as its threading limit (at least CE_XZ_LIBLZMA_MEM) */
    (void)need;
    x->strm = (lzma_stream)LZMA_STREAM_INIT;
    x->strm.allocator = &ce_xzmt_allocator;
    unsigned long long lim = memlimit ? memlimit : ce_xzmt_budget();
    lzma_mt mt = { .flags = LZMA_CONCATENATED, .threads = x->threads, .memlimit_stop = MEMLIMIT_STOP,
                   .memlimit_threading = lim < CE_XZ_LIBLZMA_MEM ? CE_XZ_LIBLZMA_MEM : lim };
    x->err = lzma_stream_decoder_mt(&x->strm, &mt);
#endif
    x->strm.next_in = first;
    x->strm.avail_in = n;
    return x;
}

void ce_xzmt_use_avail(ce_xzmt *x, ce_xzmt_avail avail)
{
    x->avail = avail;
}

void ce_xzmt_use_slots(ce_xzmt *x, ce_slots *s, int id, long long size)
{
    x->slots = s;
    x->slot_id = id;
    x->slot_size = size;
}

unsigned ce_xzmt_peak(const ce_xzmt *x) { return x->peak; }
unsigned ce_xzmt_blocks(const ce_xzmt *x) { return x->ndecoded; }

/* Sequential mode: up to OUT_BLOCK plain bytes into out: > 0, 0 at the end, -1 on error. */
static ssize_t decode_into(ce_xzmt *x, unsigned char *out)
{
    if (x->pull_failed || x->err != LZMA_OK) return -1;
    if (x->end) return 0;
    x->strm.next_out = out;
    x->strm.avail_out = OUT_BLOCK;
    for (;;) {
        if (x->strm.avail_in == 0 && !x->eof_in) {
            const unsigned char *buf = NULL;
            ssize_t n = xz_stopping(x) ? -1 : x->pull(x->ud, &buf);
            if (n < 0) {
                x->pull_failed = true;
                return -1;
            }
            if (n == 0) x->eof_in = true;
            x->strm.next_in = buf;
            x->strm.avail_in = (size_t)n;
        }
        lzma_ret ret = lzma_code(&x->strm, x->eof_in ? LZMA_FINISH : LZMA_RUN);
        size_t got = OUT_BLOCK - x->strm.avail_out;
        if (ret == LZMA_STREAM_END) {
            x->end = true;
        } else if (ret != LZMA_OK) {
            x->err = ret;
            return -1; /* what was decoded of a broken stream is not used */
        }
        if (got > 0 || x->end) return (ssize_t)got;
    }
}

/* The next entry, whichever the mode: > 0, 0 at the end, -1 on error. */
static ssize_t next_entry(ce_xzmt *x, unsigned char *buf, ring_ent *e)
{
    if (x->blocks) return xzb_next(x, buf, e);
    memset(e, 0, sizeof *e);
    ssize_t n = decode_into(x, buf);
    e->p = buf;
    e->len = n > 0 ? (size_t)n : 0;
    return n;
}

/* The decoding thread: fills the ring while the reader writes files. */
static void *produce(void *arg)
{
    ce_xzmt *x = arg;
    for (;;) {
        pthread_mutex_lock(&x->mu);
        while (!xz_stopping(x) && x->produced - x->consumed >= RING - 1)
            pthread_cond_wait(&x->cv, &x->mu);
        unsigned i = (unsigned)(x->produced % RING);
        bool stop = xz_stopping(x);
        pthread_mutex_unlock(&x->mu);
        ring_ent e = { 0 };
        ssize_t n = stop ? -1 : next_entry(x, x->rbuf[i], &e);
        pthread_mutex_lock(&x->mu);
        if (n > 0) {
            x->ring[i] = e;
            x->produced++;
        }
        if (n <= 0 || x->end) x->done = true;
        pthread_cond_broadcast(&x->cv);
        bool done = x->done;
        pthread_mutex_unlock(&x->mu);
        if (done) return NULL;
    }
}

int xzmt_sync_init(ce_xzmt *x)
{
    if (x->sync_ready) return 0;
    if (pthread_mutex_init(&x->mu, NULL)) return -1;
    if (pthread_cond_init(&x->cv, NULL)) {
        pthread_mutex_destroy(&x->mu);
        return -1;
    }
    if (pthread_cond_init(&x->wcv, NULL)) {
        pthread_cond_destroy(&x->cv);
        pthread_mutex_destroy(&x->mu);
        return -1;
    }
    x->sync_ready = true;
    return 0;
}

static void start_thread(ce_xzmt *x)
{
    for (size_t i = 0; i < RING; i++)
        if (!(x->rbuf[i] = malloc(OUT_BLOCK))) return;
    if (ce_settings_now()->xz_no_pipe) return;
    if (xzmt_sync_init(x) != 0) return;
    if (pthread_create(&x->th, NULL, produce, x) != 0) return;
    x->threaded = true;
}

ssize_t ce_xzmt_read(ce_xzmt *x, const void **out)
{
    if (!x->started) {
        /* here, not in ce_xzmt_new: the caller has its pointer to x by now */
        x->started = true;
        if (x->err == LZMA_OK) start_thread(x);
        if (!x->rbuf[0]) {
            x->err = LZMA_MEM_ERROR;
            return -1;
        }
    }
    /* the entry handed out last time is free once we are called again */
    ring_ent done = x->held;
    x->held.blk = NULL;
    xzb_release(x, &done);
    if (!x->threaded) {
        ring_ent e;
        ssize_t n = next_entry(x, x->rbuf[0], &e);
        *out = e.p;
        if (n > 0) x->held = e;
        return n > 0 && xzs_handout(x, &x->held) != 0 ? -1 : n;
    }
    pthread_mutex_lock(&x->mu);
    while (x->produced == x->consumed && !x->done)
        pthread_cond_wait(&x->cv, &x->mu);
    ssize_t n = 0;
    if (x->produced != x->consumed) {
        ring_ent *e = &x->ring[x->consumed++ % RING];
        *out = e->p;
        n = (ssize_t)e->len;
        x->held = *e;
        e->blk = NULL;
        pthread_cond_broadcast(&x->cv);
    } else if (x->pull_failed || x->err != LZMA_OK) {
        n = -1;
    }
    pthread_mutex_unlock(&x->mu);
    /* bytes of the file the reader is in go there now (ce_xzmt_sink) */
    return n > 0 && xzs_handout(x, &x->held) != 0 ? -1 : n;
}

bool ce_xzmt_stopping(const ce_xzmt *x) { return xz_stopping(x); }

bool ce_xzmt_pull_failed(const ce_xzmt *x) { return x->pull_failed; }
unsigned ce_xzmt_threads(const ce_xzmt *x) { return x->threads; }

const char *ce_xzmt_error(const ce_xzmt *x)
{
    int we = __atomic_load_n(&x->werr, __ATOMIC_ACQUIRE);
    if (we) return strerror(we);   /* writing an unpacked file (ce_xzmt_sink) */
    switch (x->err) {
    case LZMA_OK:
    case LZMA_STREAM_END: return NULL;
    case LZMA_MEM_ERROR: return "Lzma library error: Cannot allocate memory";
    case LZMA_MEMLIMIT_ERROR: return "Lzma library error: Out of memory";
    case LZMA_FORMAT_ERROR: return "Lzma library error: format not recognized";
    case LZMA_OPTIONS_ERROR: return "Lzma library error: Invalid options";
    case LZMA_DATA_ERROR: return "Lzma library error: Corrupted input data";
    case LZMA_BUF_ERROR: return "Lzma library error:  No progress is possible";
    default: return "Lzma decompression failed:  Unknown error";
    }
}

int ce_xzmt_errno(const ce_xzmt *x)
{
    int we = __atomic_load_n(&x->werr, __ATOMIC_ACQUIRE);
    if (we) return we;
    return x->err == LZMA_MEM_ERROR || x->err == LZMA_MEMLIMIT_ERROR ? ENOMEM : -1;
}

void ce_xzmt_free(ce_xzmt *x)
{
    if (!x) return;
    if (x->sync_ready) {
        pthread_mutex_lock(&x->mu);
        xz_stop(x);
        pthread_cond_broadcast(&x->cv);
        pthread_cond_broadcast(&x->wcv);
        pthread_mutex_unlock(&x->mu);
    }
    if (x->threaded) pthread_join(x->th, NULL);
    report_threads(x);   /* the workers are still there: they are counted */
    /* the entries not read, in order (a block goes with its last slice), then the rest */
    xzb_release(x, &x->held);
    for (unsigned long long i = x->consumed; i < x->produced; i++) xzb_release(x, &x->ring[i % RING]);
    xzb_stop(x);
    if (x->sink) ce_xzmt_sink_end(x);   /* the reader gave up inside a file */
    if (x->sync_ready) {
        pthread_cond_destroy(&x->wcv);
        pthread_cond_destroy(&x->cv);
        pthread_mutex_destroy(&x->mu);
    }
    for (size_t i = 0; i < RING; i++) free(x->rbuf[i]);
    if (!x->blocks) lzma_end(&x->strm);
    free(x);
}
