/* The block decoder (xzmt.h): the decoding thread parses the input into
 * blocks (xzparse.c) and hands them out in order; each block is decoded by
 *  - a worker (BLK_WORKER): the whole block into a buffer of its plain size,
 *    its compressed bytes, plain bytes and dictionary reserved from the
 *    budget (the slots' across the unpackers, or a local one) when it is
 *    parsed, the compressed bytes and dictionary given back when it is
 *    decoded, the plain bytes as the reader is done with them;
 *  - the decoding thread itself, streaming into the ring: the block the
 *    reader needs next when no worker has it (BLK_STREAM: its compressed
 *    bytes read first, so that the blocks after it can go to workers while
 *    it decodes; BLK_DIRECT: straight from the input, for a block whose
 *    header records no sizes, or sizes past the budget).  That costs its
 *    compressed bytes (given back as they are decoded) and a dictionary, no
 *    plain buffer, and needs no budget: the block the reader needs never
 *    waits for memory.
 * Blocks are parsed ahead while a worker block fits the budget and fewer than
 * x->threads are queued or running (none for one thread: one core gains
 * nothing from a second thread, and the buffers would cost); a block that
 * does not fit waits, its header read, until it fits or the reader needs it.  So with the memory of
 * two worker blocks, three decode at once: the one streamed here and the two
 * after it, whose memory the two before it gave back as they were read.
 * (liblzma's threaded decoder starts block k + 2 only once the output of
 * block k was read.) */
#include "xzmt_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* munmap takes whole pages */
static size_t page(void)
{
    static size_t pg;   /* the reader's thread and the decoding threads: the same value */
    size_t p = __atomic_load_n(&pg, __ATOMIC_RELAXED);
    if (!p) __atomic_store_n(&pg, p = (size_t)sysconf(_SC_PAGESIZE), __ATOMIC_RELAXED);
    return p;
}

static bool mem_take(ce_xzmt *x, unsigned long long n)
{
    if (x->slots) return ce_slots_blk_take(x->slots, x->slot_id, x->slot_size, (long long)n, (long)x->threads);
    unsigned long long f = __atomic_load_n(&x->mem_free, __ATOMIC_ACQUIRE);
    while (f >= n)
        if (__atomic_compare_exchange_n(&x->mem_free, &f, f - n, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return true;
    return false;
}

static void mem_give(ce_xzmt *x, xzblock *b, unsigned long long n)
{
    if (n > b->reserved) n = b->reserved;
    if (!n) return;
    b->reserved -= n;
    if (x->slots) ce_slots_blk_give(x->slots, x->slot_id, (long long)n);
    else __atomic_add_fetch(&x->mem_free, n, __ATOMIC_ACQ_REL);
}

static unsigned long long budget_total(const ce_xzmt *x)
{
    return x->slots ? (unsigned long long)x->slots->mem_total : x->mem_total;
}

/* The compressed pages before next_in were decoded: back to the kernel. */
static void in_decoded(xzblock *b, const uint8_t *next_in)
{
    size_t upto = (size_t)(next_in - b->in) / page() * page();
    if (upto >= b->in_freed + (1u << 20)) {
        munmap(b->in + b->in_freed, upto - b->in_freed);
        b->in_freed = upto;
    }
}

/* lzma_filters_free, which liblzma has from 5.3.2 on; the release is built
 * on Debian 11's 5.2.5: the same, by hand (each filter's options freed with
 * the allocator that lzma_block_header_decode used). */
static void filters_free(lzma_filter *f)
{
    const lzma_allocator *a = &ce_xzmt_allocator;
    for (size_t i = 0; i < LZMA_FILTERS_MAX && f[i].id != LZMA_VLI_UNKNOWN; i++) {
        if (a->free) a->free(a->opaque, f[i].options);
        else free(f[i].options);
        f[i].options = NULL;
        f[i].id = LZMA_VLI_UNKNOWN;
    }
}

static void block_free(ce_xzmt *x, xzblock *b)
{
    if (!b) return;
    if (b->in) ce_xzmt_big_free(b->in + b->in_freed, b->in_len - b->in_freed);
    if (b->out) ce_xzmt_big_free(b->out + b->out_freed, b->out_len - b->out_freed);
    mem_give(x, b, b->reserved);
    xzs_put(x, b->sink);
    filters_free(b->filters);
    free(b);
}

int xzb_init(ce_xzmt *x)
{
    x->blocks = true;
    return xzmt_sync_init(x);
}

static void count_decoding(ce_xzmt *x, int d)
{
    x->decoding += d;
    if (x->decoding > x->peak) x->peak = x->decoding;
    if (d > 0) x->ndecoded++;
}

/* A worker block, whole, into b->out, or a file block through a
 * FILE_CHUNK buffer into its file (not under mu). */
static lzma_ret decode_whole(ce_xzmt *x, xzblock *b)
{
    size_t cap = b->sink ? FILE_CHUNK : b->out_len;
    unsigned char *dst = cap ? ce_xzmt_big_alloc(cap) : NULL;
    if (cap && !dst) return LZMA_MEM_ERROR;
    if (!b->sink) b->out = dst;
    lzma_stream s = LZMA_STREAM_INIT;
    s.allocator = &ce_xzmt_allocator;
    lzma_ret r = lzma_block_decoder(&s, &b->blk);
    s.next_in = b->in;
    s.avail_in = b->in_len;
    size_t pos = 0;
    while (r == LZMA_OK) {
        if (xz_stopping(x)) {
            r = LZMA_PROG_ERROR;
            break;
        }
        size_t step = b->out_len - pos < FILE_CHUNK ? b->out_len - pos : FILE_CHUNK;
        s.next_out = b->sink ? dst : b->out + pos;
        s.avail_out = step;
        r = lzma_code(&s, LZMA_FINISH);
        size_t got = step - s.avail_out;
        if (b->sink && got && xzs_write(x, b->sink, dst, got, b->at + pos) != 0) r = LZMA_PROG_ERROR;
        pos += got;
        in_decoded(b, s.next_in);
    }
    if (b->sink) ce_xzmt_big_free(dst, cap);
    if (r == LZMA_STREAM_END) r = s.avail_in == 0 && pos == b->out_len ? LZMA_OK : LZMA_DATA_ERROR;
    lzma_end(&s);
    return r;
}

static xzblock *next_queued(ce_xzmt *x)
{
    for (xzblock *b = x->head; b; b = b->next)
        if (b->mode == BLK_WORKER && b->state == BLK_QUEUED) return b;
    return NULL;
}

static void *worker(void *arg)
{
    ce_xzmt *x = arg;
    pthread_mutex_lock(&x->mu);
    for (;;) {
        xzblock *b = NULL;
        while (!xz_stopping(x) && !(b = next_queued(x))) pthread_cond_wait(&x->wcv, &x->mu);
        if (xz_stopping(x)) break;
        b->state = BLK_RUNNING;
        count_decoding(x, 1);
        pthread_mutex_unlock(&x->mu);
        lzma_ret r = decode_whole(x, b);
        ce_xzmt_big_free(b->in + b->in_freed, b->in_len - b->in_freed);   /* the input and the */
        b->in = NULL;                                                      /* dictionary go back now */
        mem_give(x, b, b->sink ? b->reserved : b->reserved - b->out_len);  /* a file block: all */
        pthread_mutex_lock(&x->mu);
        if (b->sink && r == LZMA_OK) x->nfile++;
        count_decoding(x, -1);
        __atomic_sub_fetch(&x->active, 1, __ATOMIC_RELAXED);
        b->err = r;
        b->state = r == LZMA_OK ? BLK_DONE : BLK_FAILED;
        pthread_cond_broadcast(&x->cv);
    }
    pthread_mutex_unlock(&x->mu);
    return NULL;
}

/* What a worker block costs: its input, its output, its decoder. */
static unsigned long long worker_need(const xzblock *b, size_t in_len)
{
    unsigned long long dec = lzma_raw_decoder_memusage(b->filters);
    unsigned long long out = b->blk.uncompressed_size;
    if (dec > out + BLK_SLACK) dec = out + BLK_SLACK;   /* a dictionary is touched only as far as it is filled */
    return in_len + out + dec + BLK_SLACK;
}

/* ... and a file block: its input, a chunk of output, its decoder. */
static unsigned long long file_need(const xzblock *b, size_t in_len)
{
    unsigned long long dec = lzma_raw_decoder_memusage(b->filters), out = b->blk.uncompressed_size;
    if (dec > out + BLK_SLACK) dec = out + BLK_SLACK;
    return in_len + FILE_CHUNK + dec + BLK_SLACK;
}

/* b (reserved, in the list) goes to a worker (under mu: its mode, the count). */
static void queue_worker(ce_xzmt *x, xzblock *b)
{
    pthread_mutex_lock(&x->mu);
    b->mode = BLK_WORKER;
    b->out_len = (size_t)b->blk.uncompressed_size;
    __atomic_add_fetch(&x->active, 1, __ATOMIC_RELAXED);
    if (x->nworkers < x->active && pthread_create(&x->workers[x->nworkers], NULL, worker, x) == 0)
        x->nworkers++;
    pthread_cond_signal(&x->wcv);
    bool none = x->nworkers == 0;
    if (none) {   /* no thread at all: decoded here */
        __atomic_sub_fetch(&x->active, 1, __ATOMIC_RELAXED);
        b->mode = BLK_STREAM;
    }
    pthread_mutex_unlock(&x->mu);
    if (none) mem_give(x, b, b->reserved);
}

/* x->pend: decide who decodes it and read its data.  1: in the list, 0: not
 * now (no memory, and it is not the head), -1: error. */
static int plan(ce_xzmt *x)
{
    xzblock *b = x->pend;
    bool is_head = x->head == NULL;
    if (lzma_raw_decoder_memusage(b->filters) > MEMLIMIT_STOP) {
        x->perr = LZMA_MEMLIMIT_ERROR;
        return -1;
    }
    unsigned long long cap = budget_total(x);
    size_t in_len = 0;
    bool to_worker = false;
    if (b->blk.compressed_size != LZMA_VLI_UNKNOWN && b->blk.uncompressed_size != LZMA_VLI_UNKNOWN &&
        lzma_block_total_size(&b->blk) - b->blk.header_size <= (cap > (64u << 20) ? cap : (64u << 20))) {
        in_len = (size_t)(lzma_block_total_size(&b->blk) - b->blk.header_size);
        unsigned long long need = worker_need(b, in_len);
        if (is_head) {
            b->mode = BLK_STREAM;   /* the reader waits for it: decoded here, at once */
        } else if (x->threads > 1 && __atomic_load_n(&x->active, __ATOMIC_RELAXED) < x->threads && xzp_there(x, in_len)) {
            xzsink *sk = xzs_for(x, b);   /* inside the file the reader is in: a file block */
            if (sk) need = file_need(b, in_len);
            if (need <= cap && mem_take(x, need)) {
                to_worker = true;         /* queued once its data is read */
                b->mode = BLK_STREAM;
                b->reserved = need;
                b->sink = sk;
            } else {
                xzs_put(x, sk);
            }
        }
    }
    if (!b->mode && is_head) b->mode = BLK_DIRECT;
    if (!b->mode) return 0;
    if (b->mode != BLK_DIRECT) {
        b->in_len = in_len;
        if (!(b->in = ce_xzmt_big_alloc(in_len))) {
            x->perr = LZMA_MEM_ERROR;
            return -1;
        }
        if (xzp_read(x, b->in, in_len)) return -1;
        xzp_block_seen(x, &b->blk);
    }
    x->pend = NULL;
    pthread_mutex_lock(&x->mu);
    if (x->tail) x->tail->next = b;
    else x->head = b;
    x->tail = b;
    pthread_mutex_unlock(&x->mu);
    if (to_worker) queue_worker(x, b);
    return 1;
}

/* Parse and plan blocks while they can be planned.  -1: pull failed. */
static int parse_ahead(ce_xzmt *x)
{
    while (!x->parse_end && x->perr == LZMA_OK && !xz_stopping(x) && !x->pull_failed) {
        if (x->tail && x->tail->mode == BLK_DIRECT) return 0;   /* the input is inside it */
        if (!x->pend) {
            /* a block the reader does not wait for: only when its header is there */
            if (x->head && !xzp_there(x, LZMA_BLOCK_HEADER_SIZE_MAX)) break;
            xzblock *b = calloc(1, sizeof *b);
            if (!b) {
                x->perr = LZMA_MEM_ERROR;
                break;
            }
            int r = xzp_next_block(x, b);
            if (r) {
                filters_free(b->filters);
                free(b);
                break;
            }
            b->at = x->plan_at;   /* where its plain bytes go: known while every block before said */
            if (x->plan_at != AT_UNKNOWN)
                x->plan_at = b->blk.uncompressed_size == LZMA_VLI_UNKNOWN ? AT_UNKNOWN
                                                                          : x->plan_at + b->blk.uncompressed_size;
            x->pend = b;
        }
        if (plan(x) <= 0) break;
    }
    return x->pull_failed ? -1 : 0;
}

static void unlink_head(ce_xzmt *x, xzblock *b)
{
    pthread_mutex_lock(&x->mu);
    x->head = b->next;
    if (!x->head) x->tail = NULL;
    pthread_mutex_unlock(&x->mu);
}

/* The head block is a worker's: wait for it (parsing ahead meanwhile: other
 * decoders may free memory), then hand out its next slice (a file block's
 * read back into buf). */
static ssize_t worker_slice(ce_xzmt *x, xzblock *b, unsigned char *buf, ring_ent *e)
{
    for (;;) {
        pthread_mutex_lock(&x->mu);
        if (b->state < BLK_DONE && !xz_stopping(x)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 5 * 1000 * 1000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&x->cv, &x->mu, &ts);
        }
        int st = b->state;
        pthread_mutex_unlock(&x->mu);
        if (xz_stopping(x)) return -1;
        if (st >= BLK_DONE) break;
        if (parse_ahead(x) < 0) return -1;
    }
    if (b->state == BLK_FAILED) {
        x->err = b->err;
        return -1;
    }
    size_t n = b->out_len - b->out_pos < OUT_BLOCK ? b->out_len - b->out_pos : OUT_BLOCK;
    if (b->sink && n && xzs_read(x, b->sink, buf, n, b->at + b->out_pos) != 0) {
        x->err = LZMA_PROG_ERROR;
        return -1;
    }
    e->p = b->sink ? buf : b->out + b->out_pos;
    e->in_file = b->sink != NULL;
    e->len = n;
    e->blk = b;
    b->out_pos += n;
    e->last = b->out_pos == b->out_len;
    if (e->last) unlink_head(x, b);
    return (ssize_t)n;
}

/* The head block decoded here, streaming into buf. */
static ssize_t stream_chunk(ce_xzmt *x, xzblock *b, unsigned char *buf)
{
    bool direct = b->mode == BLK_DIRECT;
    if (!x->bstrm_on) {
        x->bstrm = (lzma_stream)LZMA_STREAM_INIT;
        x->bstrm.allocator = &ce_xzmt_allocator;
        lzma_ret r = lzma_block_decoder(&x->bstrm, &b->blk);
        if (r != LZMA_OK) {
            x->err = r;
            return -1;
        }
        x->bstrm_on = true;
        x->streamed = true;
        x->cur_stream = b;
        x->bstrm.next_in = b->in;
        x->bstrm.avail_in = b->in_len;
        pthread_mutex_lock(&x->mu);
        count_decoding(x, 1);
        pthread_mutex_unlock(&x->mu);
    }
    lzma_stream *s = &x->bstrm;
    s->next_out = buf;
    s->avail_out = OUT_BLOCK;
    lzma_ret r = LZMA_OK;
    while (r == LZMA_OK && s->avail_out > 0) {
        if (direct) {
            if (x->ia == 0 && xzp_fill(x) < 0) return -1;
            s->next_in = x->ip;
            s->avail_in = x->ia;
        }
        r = lzma_code(s, direct && !x->eof_in ? LZMA_RUN : LZMA_FINISH);
        if (direct) {
            size_t used = x->ia - s->avail_in;
            x->ip += used;
            x->ia -= used;
        } else {
            in_decoded(b, s->next_in);
        }
        if (s->avail_out < OUT_BLOCK && r == LZMA_OK) break;   /* bytes to hand out */
    }
    if (r != LZMA_OK && r != LZMA_STREAM_END) {
        x->err = r;
        return -1;
    }
    if (r == LZMA_STREAM_END) {
        if (!direct && s->avail_in != 0) {
            x->err = LZMA_DATA_ERROR;
            return -1;
        }
        if (direct) xzp_block_seen(x, &b->blk);
        lzma_end(s);
        x->bstrm_on = false;
        x->cur_stream = NULL;
        pthread_mutex_lock(&x->mu);
        count_decoding(x, -1);
        pthread_mutex_unlock(&x->mu);
        unlink_head(x, b);
        block_free(x, b);
    }
    return (ssize_t)(OUT_BLOCK - s->avail_out);
}

ssize_t xzb_next(ce_xzmt *x, unsigned char *buf, ring_ent *e)
{
    for (;;) {
        if (xz_stopping(x) || x->pull_failed || x->err != LZMA_OK) return -1;
        if (!(x->bstrm_on && x->cur_stream->mode == BLK_DIRECT) && parse_ahead(x) < 0) return -1;
        xzblock *b = x->head;
        if (!b) {
            if (x->perr != LZMA_OK) {
                x->err = x->perr;
                return -1;
            }
            if (x->parse_end) {
                x->end = true;
                return 0;
            }
            continue;
        }
        memset(e, 0, sizeof *e);
        ssize_t n = b->mode == BLK_WORKER ? worker_slice(x, b, buf, e) : stream_chunk(x, b, buf);
        if (n < 0) return -1;
        if (n == 0 && e->blk && e->last) {   /* an empty block */
            xzb_release(x, e);
            continue;
        }
        if (n == 0) continue;
        if (!e->blk) {
            e->p = buf;
            e->len = (size_t)n;
        }
        e->at = x->out_at;
        x->out_at += (unsigned long long)n;
        return n;
    }
}

void xzb_release(ce_xzmt *x, ring_ent *e)
{
    xzblock *b = e->blk;
    if (!b) return;
    e->blk = NULL;
    if (e->last) {
        block_free(x, b);
        return;
    }
    if (!b->out) return;   /* a file block: nothing held */
    /* the pages read so far go back to the kernel, and their bytes to the budget */
    size_t upto = ((size_t)(e->p + e->len - b->out)) / page() * page();
    if (upto > b->out_freed + (4u << 20)) {
        munmap(b->out + b->out_freed, upto - b->out_freed);
        mem_give(x, b, upto - b->out_freed);
        b->out_freed = upto;
    }
}

void xzb_stop(ce_xzmt *x)
{
    if (!x->sync_ready) return;
    pthread_mutex_lock(&x->mu);
    xz_stop(x);
    pthread_cond_broadcast(&x->wcv);
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    for (unsigned i = 0; i < x->nworkers; i++) pthread_join(x->workers[i], NULL);
    x->nworkers = 0;
    while (x->head) {
        xzblock *b = x->head;
        x->head = b->next;
        block_free(x, b);
    }
    x->tail = NULL;
    block_free(x, x->pend);   /* its reservation too, when reading its data failed */
    x->pend = NULL;
    if (x->bstrm_on) lzma_end(&x->bstrm);
    x->bstrm_on = false;
    xzp_end(x);
}
