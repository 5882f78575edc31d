/* The insides of ce_xzmt (xzmt.h), shared by xzmt.c (the API, the ring,
 * the sequential decoder), xzblk.c (the block decoder: schedule, workers)
 * and xzparse.c (the .xz container: stream header, block headers, index,
 * footer, padding). */
#ifndef CE_XZMT_INT_H
#define CE_XZMT_INT_H

#include <lzma.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "slots.h"
#include "xzmt.h"

/* plain bytes handed out per read: libarchive's tar reader copies out of it */
#define OUT_BLOCK (256u << 10)
/* entries in flight: the one the reader holds and up to RING - 1 ahead */
#define RING 3
/* libarchive's own xz reader stops at 1 GiB of decoder memory */
#define MEMLIMIT_STOP (1u << 30)
/* what a block reservation counts on top of its buffers and dictionary */
#define BLK_SLACK (1u << 20)

enum { BLK_WORKER = 1, BLK_STREAM, BLK_DIRECT };

/* A regular file the reader is in (ce_xzmt_sink): its bytes' place in the
 * plain stream, and the file, written at those bytes' offsets less at. */
typedef struct xzsink {
    int fd;                       /* O_RDWR, our own (a dup of the caller's) */
    unsigned long long at, end;   /* [at, end) of the plain stream */
    unsigned refs;                /* x->sink's and its file blocks' (under mu) */
} xzsink;
enum { BLK_QUEUED = 0, BLK_RUNNING, BLK_DONE, BLK_FAILED };

typedef struct xzblock {
    lzma_block blk;
    lzma_filter filters[LZMA_FILTERS_MAX + 1];
    int mode;                     /* BLK_*: who decodes it, from where, to where */
    int state;                    /* BLK_QUEUED..: a worker block's progress (under mu) */
    lzma_ret err;                 /* BLK_FAILED: why */
    unsigned char *in;            /* WORKER, STREAM: the compressed data, padding and check */
    size_t in_len;
    size_t in_freed;              /* STREAM: bytes at the start of in decoded and given back */
    unsigned char *out;           /* WORKER: the plain bytes */
    size_t out_len, out_pos;      /* out_pos: handed out so far */
    size_t out_freed;             /* bytes at the start of out given back to the kernel */
    unsigned long long reserved;  /* held from the budget */
    unsigned long long at;        /* its first plain byte's offset (AT_UNKNOWN after a block without sizes) */
    xzsink *sink;                 /* WORKER: decoded into this file (a file block), read back from it */
    struct xzblock *next;
} xzblock;

/* one ring entry: own buffer bytes, or a slice of a finished worker block */
typedef struct ring_ent {
    const unsigned char *p;
    size_t len;
    xzblock *blk;                 /* the slice's block (NULL: own buffer) */
    bool last;                    /* its last slice: the block goes once it was read */
    bool in_file;                 /* read back from a file block: already where it belongs */
    unsigned long long at;        /* the plain offset of p[0] */
} ring_ent;

#define AT_UNKNOWN (~0ull)
/* a file block decodes through a buffer of this size, written as it fills */
#define FILE_CHUNK (1u << 20)

struct ce_xzmt {
    ce_xzmt_pull pull;
    ce_xzmt_avail avail;          /* NULL: all input counts as there */
    void *ud;
    unsigned threads;
    bool pull_failed;
    lzma_ret err;                 /* LZMA_OK, or the error that stopped decoding */
    /* input: the bytes of the last pull not used yet */
    const unsigned char *ip;
    size_t ia;
    bool eof_in;                  /* pull returned 0 */
    bool end;                     /* the end of the xz data was reached and checked */
    /* sequential mode (the first block records no sizes): liblzma's stream decoder */
    bool blocks;                  /* block mode (xzblk.c) */
    lzma_stream strm;
    /* the ring filled by the decoding thread (or, without it, one entry at a time) */
    bool started, threaded;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;            /* ring, worker blocks done */
    pthread_cond_t wcv;           /* workers: a block queued, or stop */
    bool sync_ready;
    unsigned char *rbuf[RING];
    ring_ent ring[RING];
    ring_ent held;                /* what the reader holds (no thread: the last entry) */
    unsigned long long produced, consumed;
    unsigned long long out_at;    /* the plain offset of the next entry produced */
    unsigned long long plan_at;   /* ... of the next block parsed (AT_UNKNOWN: not known) */
    xzsink *sink;                 /* the file the reader is in (set and cleared by the reader, under mu) */
    int werr;                     /* the errno of a write or read of a sink's file that failed (first one) */
    unsigned nfile;               /* file blocks decoded */
    bool done;                    /* the decoding thread stopped: end, error, or told to */
    int stop;                     /* ce_xzmt_free began: read and set with xz_stopping, xz_stop */
    /* block mode */
    xzblock *head, *tail;         /* parsed, not yet handed out entirely; in order */
    xzblock *cur_stream;          /* a STREAM/DIRECT head being decoded here */
    lzma_stream bstrm;            /* its decoder */
    bool bstrm_on;
    lzma_stream_flags sflags;     /* the current stream's header */
    lzma_index_hash *ihash;
    bool in_stream;               /* between a stream header and its footer */
    bool parse_end;               /* every stream parsed, the input ended */
    lzma_ret perr;                /* the parser's error, reported once the blocks before it are out */
    xzblock *pend;                /* a block whose header was read, its data not yet */
    pthread_t workers[CE_XZMT_MAX_THREADS];
    unsigned nworkers, active;    /* started; queued + running blocks (active: changed under mu,
                                     atomically: the planner reads it without) */
    unsigned decoding, peak;      /* blocks being decoded now (workers and here); the most at once */
    bool streamed;                /* the decoding thread decoded a block itself */
    unsigned ndecoded;            /* blocks whose decoding began (each once) */
    /* the budget of the worker blocks: the slots' (shared across unpackers) or a local one */
    ce_slots *slots;
    int slot_id;
    long long slot_size;
    unsigned long long mem_free, mem_total;  /* the local budget (no slots) */
};

/* xzmt.c */
/* x->mu, x->cv and x->wcv, once (sync_ready): 0, or -1 with none of them */
int xzmt_sync_init(ce_xzmt *x);
void *ce_xzmt_big_alloc(size_t n);
void ce_xzmt_big_free(void *p, size_t n);
extern const lzma_allocator ce_xzmt_allocator;

/* xzparse.c: the container, read through x->pull on the decoding thread.
 * 0 and the bytes; -1: x->pull_failed or x->err set */
int xzp_read(ce_xzmt *x, void *dst, size_t n);
/* input in x->ip/x->ia: 1, 0 at its end, -1 when pull failed */
int xzp_fill(ce_xzmt *x);
/* true when n more bytes of input can be read without waiting (x->avail) */
bool xzp_there(ce_xzmt *x, size_t n);
/* The next block's header into *b (its mode not decided); 1: the stream
 * ended (index, footer and padding checked, no further stream), 0: *b holds
 * a block header, -1: error (x->perr or x->pull_failed). */
int xzp_next_block(ce_xzmt *x, xzblock *b);
/* the block's compressed data, padding and check, for the index */
void xzp_block_seen(ce_xzmt *x, const lzma_block *blk);
void xzp_end(ce_xzmt *x);   /* once, when x goes */

/* xzsink.c: the file blocks' files (ce_xzmt_sink) */
/* a reference to x->sink when b's plain bytes lie within it (under mu), else NULL */
xzsink *xzs_for(ce_xzmt *x, const xzblock *b);
void xzs_put(ce_xzmt *x, xzsink *s);
/* n plain bytes at plain offset at into s's file: 0, or -1 (x->werr set) */
int xzs_write(ce_xzmt *x, xzsink *s, const void *buf, size_t n, unsigned long long at);
/* ... and back: 0, or -1 (x->werr set) */
int xzs_read(ce_xzmt *x, xzsink *s, void *buf, size_t n, unsigned long long at);
/* the reader got e: the part of it in x->sink into the file unless it is there: 0, or -1 */
int xzs_handout(ce_xzmt *x, const ring_ent *e);

/* xzblk.c */
int xzb_init(ce_xzmt *x);
/* The next plain bytes in block mode (decoding thread): > 0 with *e set, 0 at
 * the end, -1 on error. buf: OUT_BLOCK bytes for streamed output. */
ssize_t xzb_next(ce_xzmt *x, unsigned char *buf, ring_ent *e);
/* the reader is done with e: a slice's pages go back, its block once read */
void xzb_release(ce_xzmt *x, ring_ent *e);
void xzb_stop(ce_xzmt *x);   /* workers joined, everything freed (not under mu) */

/* stop is read outside mu (the workers between chunks, pull): atomic */
static inline bool xz_stopping(const ce_xzmt *x)
{
    return __atomic_load_n(&x->stop, __ATOMIC_ACQUIRE);
}

static inline void xz_stop(ce_xzmt *x)
{
    __atomic_store_n(&x->stop, 1, __ATOMIC_RELEASE);
}

#endif
