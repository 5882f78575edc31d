/* The hashing thread (hashq.h).  Slots published are head .. head + count - 1
 * (mod slots); the unpacker fills slot `at` (head + count when it took it)
 * outside the lock and publishes it when it is full, at a file's end or for
 * a drop. */
#include "hashq.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fetch/digest.h"

enum { HQ_DATA, HQ_END, HQ_DROP };

typedef struct hq_slot {
    int kind;                  /* HQ_END: the data, then the file's end */
    size_t len;
    unsigned long long ino;
    long long size;
    unsigned char *data;
} hq_slot;

struct ce_hashq {
    ce_pkgindex_list *list;
    ce_sha256 *md;             /* the thread's */
    size_t slot;
    unsigned slots;
    hq_slot *s;
    unsigned char *mem;
    pthread_mutex_t mu;
    pthread_cond_t room, ready;
    unsigned head, count;
    bool filling;              /* the unpacker holds slot at */
    unsigned at;
    bool finish, abandon;
    int err;                   /* the thread's, read after the join */
    pthread_t th;
};

static void *run(void *arg)
{
    ce_hashq *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        while (q->count == 0 && !q->finish && !q->abandon) pthread_cond_wait(&q->ready, &q->mu);
        bool out = q->abandon || q->count == 0;
        hq_slot *s = &q->s[q->head];
        pthread_mutex_unlock(&q->mu);
        if (out) break;
        if (s->kind == HQ_DROP) {
            ce_pkgindex_list_drop(q->list, s->ino);
        } else {
            if (s->len) ce_sha256_update(q->md, s->data, s->len);
            if (s->kind == HQ_END) {
                char hex[CE_SHA256_HEX];
                ce_sha256_final(q->md, hex);   /* and reset for the next file */
                if (!q->err && ce_pkgindex_list_add(q->list, s->ino, s->size, hex) != 0) q->err = ENOMEM;
            }
        }
        pthread_mutex_lock(&q->mu);
        q->head = (q->head + 1) % q->slots;
        q->count--;
        pthread_cond_signal(&q->room);
        pthread_mutex_unlock(&q->mu);
    }
    return NULL;
}

ce_hashq *ce_hashq_new(ce_pkgindex_list *list, size_t slot, unsigned slots)
{
    if (!list || slot < 1 || slots < 2 || slot > (size_t)-1 / slots) return NULL;
    ce_hashq *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->list = list;
    q->slot = slot;
    q->slots = slots;
    q->md = ce_sha256_new();
    q->s = calloc(slots, sizeof *q->s);
    q->mem = malloc(slot * slots);
    if (!q->md || !q->s || !q->mem) goto fail;
    for (unsigned i = 0; i < slots; i++) q->s[i].data = q->mem + (size_t)i * slot;
    if (pthread_mutex_init(&q->mu, NULL) != 0) goto fail;
    if (pthread_cond_init(&q->room, NULL) != 0) goto fail_mu;
    if (pthread_cond_init(&q->ready, NULL) != 0) goto fail_room;
    if (pthread_create(&q->th, NULL, run, q) != 0) goto fail_ready;
    return q;
fail_ready:
    pthread_cond_destroy(&q->ready);
fail_room:
    pthread_cond_destroy(&q->room);
fail_mu:
    pthread_mutex_destroy(&q->mu);
fail:
    ce_sha256_free(q->md);
    free(q->s);
    free(q->mem);
    free(q);
    return NULL;
}

/* the slot the unpacker fills, taken when one is free */
static hq_slot *slot_of(ce_hashq *q)
{
    if (!q->filling) {
        pthread_mutex_lock(&q->mu);
        while (q->count == q->slots) pthread_cond_wait(&q->room, &q->mu);
        q->at = (q->head + q->count) % q->slots;
        pthread_mutex_unlock(&q->mu);
        q->filling = true;
        hq_slot *s = &q->s[q->at];
        s->kind = HQ_DATA;
        s->len = 0;
    }
    return &q->s[q->at];
}

static void publish(ce_hashq *q)
{
    pthread_mutex_lock(&q->mu);
    q->count++;
    q->filling = false;
    pthread_cond_signal(&q->ready);
    pthread_mutex_unlock(&q->mu);
}

void ce_hashq_data(ce_hashq *q, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n > 0) {
        hq_slot *s = slot_of(q);
        size_t k = q->slot - s->len < n ? q->slot - s->len : n;
        memcpy(s->data + s->len, p, k);
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
    if (q->filling) publish(q);   /* bytes of a file not ended: hashed in turn */
    hq_slot *s = slot_of(q);
    s->kind = HQ_DROP;
    s->ino = ino;
    publish(q);
}

static int stop(ce_hashq *q, bool abandon)
{
    if (!q) return 0;
    if (!abandon && q->filling) publish(q);
    pthread_mutex_lock(&q->mu);
    if (abandon) q->abandon = true;
    else q->finish = true;
    pthread_cond_broadcast(&q->ready);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->th, NULL);
    int err = q->err;
    pthread_cond_destroy(&q->ready);
    pthread_cond_destroy(&q->room);
    pthread_mutex_destroy(&q->mu);
    ce_sha256_free(q->md);
    free(q->s);
    free(q->mem);
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
