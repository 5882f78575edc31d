/* The hashing thread (hashq.h) on a ring (core/ring.h): the unpacker fills
 * the slot it took outside the lock and publishes it when it is full, at a
 * file's end or for a drop; the thread consumes them in order. */
#include "hashq.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/ring.h"
#include "fetch/digest.h"

enum { HQ_DATA, HQ_END, HQ_DROP };

typedef struct hq_slot {       /* beside the ring's slot of the same index */
    int kind;                  /* HQ_END: the data, then the file's end */
    size_t len;
    unsigned long long ino;
    long long size;
} hq_slot;

struct ce_hashq {
    ce_pkgindex_list *list;
    ce_sha256 *md;             /* the thread's */
    size_t slot;
    ce_ring *ring;
    hq_slot *s;
    int at;                    /* the slot the unpacker fills; -1: none */
    int err;                   /* the thread's, read after the join */
};

static void *run(void *arg)
{
    ce_hashq *q = arg;
    for (int i; (i = ce_ring_next(q->ring)) >= 0; ce_ring_done(q->ring)) {
        hq_slot *s = &q->s[i];
        if (s->kind == HQ_DROP) {
            ce_pkgindex_list_drop(q->list, s->ino);
            continue;
        }
        if (s->len) ce_sha256_update(q->md, ce_ring_slot(q->ring, i), s->len);
        if (s->kind == HQ_END) {
            char hex[CE_SHA256_HEX];
            ce_sha256_final(q->md, hex);   /* and reset for the next file */
            if (!q->err && ce_pkgindex_list_add(q->list, s->ino, s->size, hex) != 0) q->err = ENOMEM;
        }
    }
    return NULL;
}

ce_hashq *ce_hashq_new(ce_pkgindex_list *list, size_t slot, unsigned slots)
{
    if (!list) return NULL;
    ce_hashq *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->list = list;
    q->slot = slot;
    q->at = -1;
    q->md = ce_sha256_new();
    q->ring = ce_ring_new(slot, slots);
    q->s = q->ring ? calloc(slots, sizeof *q->s) : NULL;
    if (q->md && q->s && ce_ring_start(q->ring, run, q) == 0) return q;
    ce_ring_end(q->ring, true);
    ce_sha256_free(q->md);
    free(q->s);
    free(q);
    return NULL;
}

/* the slot the unpacker fills, taken when one is free (the ring is stopped
 * only by free, on this thread: take always gives one here) */
static hq_slot *slot_of(ce_hashq *q)
{
    if (q->at < 0) {
        q->at = ce_ring_take(q->ring);
        q->s[q->at].kind = HQ_DATA;
        q->s[q->at].len = 0;
    }
    return &q->s[q->at];
}

static void publish(ce_hashq *q)
{
    ce_ring_publish(q->ring);
    q->at = -1;
}

void ce_hashq_data(ce_hashq *q, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n > 0) {
        hq_slot *s = slot_of(q);
        size_t k = q->slot - s->len < n ? q->slot - s->len : n;
        memcpy(ce_ring_slot(q->ring, q->at) + s->len, p, k);
        s->len += k;
        p += k;
        n -= k;
        if (s->len == q->slot) publish(q);
    }
}

void ce_hashq_end(ce_hashq *q, unsigned long long ino, long long size)
{
    hq_slot *s = slot_of(q);
    s->kind = HQ_END;
    s->ino = ino;
    s->size = size;
    publish(q);
}

void ce_hashq_drop(ce_hashq *q, unsigned long long ino)
{
    if (q->at >= 0) publish(q);   /* bytes of a file not ended: hashed in turn */
    hq_slot *s = slot_of(q);
    s->kind = HQ_DROP;
    s->ino = ino;
    publish(q);
}

static int stop(ce_hashq *q, bool abandon)
{
    if (!q) return 0;
    if (!abandon && q->at >= 0) publish(q);
    ce_ring_end(q->ring, abandon);   /* closed: the thread drains the ring first */
    int err = q->err;
    ce_sha256_free(q->md);
    free(q->s);
    free(q);
    return err;
}

int ce_hashq_finish(ce_hashq *q)
{
    return stop(q, false);
}

void ce_hashq_free(ce_hashq *q)
{
    (void)stop(q, true);
}
