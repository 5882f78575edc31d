/* The bounded ring (ring.h).  Published slots are head .. head + count - 1
 * (mod slots); the consumer holds head from next until done; the producer
 * fills head + count from take until publish. */
#include "ring.h"

#include <pthread.h>
#include <stdlib.h>

struct ce_ring {
    unsigned char *mem;    /* slots x slot */
    size_t slot;
    unsigned slots;
    pthread_mutex_t mu;
    pthread_cond_t room;   /* a slot was given back, or stop */
    pthread_cond_t ready;  /* a slot was published, or close, or stop */
    unsigned head, count;
    bool closed, stopped, started;
    pthread_t th;
};

ce_ring *ce_ring_new(size_t slot, unsigned slots)
{
    if (slot < 1 || slots < 2 || slot > (size_t)-1 / slots) return NULL;
    ce_ring *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->slot = slot;
    r->slots = slots;
    if (!(r->mem = malloc(slot * slots))) goto fail;
    if (pthread_mutex_init(&r->mu, NULL) != 0) goto fail;
    if (pthread_cond_init(&r->room, NULL) != 0) goto fail_mu;
    if (pthread_cond_init(&r->ready, NULL) != 0) goto fail_room;
    return r;
fail_room:
    pthread_cond_destroy(&r->room);
fail_mu:
    pthread_mutex_destroy(&r->mu);
fail:
    free(r->mem);
    free(r);
    return NULL;
}

int ce_ring_start(ce_ring *r, void *(*fn)(void *), void *arg)
{
    r->started = pthread_create(&r->th, NULL, fn, arg) == 0;
    return r->started ? 0 : -1;
}

unsigned char *ce_ring_slot(ce_ring *r, int i)
{
    return r->mem + (size_t)i * r->slot;
}

int ce_ring_take(ce_ring *r)
{
    pthread_mutex_lock(&r->mu);
    while (r->count == r->slots && !r->stopped) pthread_cond_wait(&r->room, &r->mu);
    int i = r->stopped ? -1 : (int)((r->head + r->count) % r->slots);
    pthread_mutex_unlock(&r->mu);
    return i;
}

void ce_ring_publish(ce_ring *r)
{
    pthread_mutex_lock(&r->mu);
    r->count++;
    pthread_cond_signal(&r->ready);
    pthread_mutex_unlock(&r->mu);
}

void ce_ring_close(ce_ring *r)
{
    pthread_mutex_lock(&r->mu);
    r->closed = true;
    pthread_cond_broadcast(&r->ready);
    pthread_mutex_unlock(&r->mu);
}

int ce_ring_next(ce_ring *r)
{
    pthread_mutex_lock(&r->mu);
    while (r->count == 0 && !r->closed && !r->stopped) pthread_cond_wait(&r->ready, &r->mu);
    int i = r->stopped || r->count == 0 ? -1 : (int)r->head;
    pthread_mutex_unlock(&r->mu);
    return i;
}

void ce_ring_done(ce_ring *r)
{
    pthread_mutex_lock(&r->mu);
    r->head = (r->head + 1) % r->slots;
    r->count--;
    pthread_cond_signal(&r->room);
    pthread_mutex_unlock(&r->mu);
}

void ce_ring_stop(ce_ring *r)
{
    pthread_mutex_lock(&r->mu);
    r->stopped = true;
    pthread_cond_broadcast(&r->ready);
    pthread_cond_broadcast(&r->room);
    pthread_mutex_unlock(&r->mu);
}

void ce_ring_end(ce_ring *r, bool abandon)
{
    if (!r) return;
    if (abandon) ce_ring_stop(r);
    else ce_ring_close(r);
    if (r->started) pthread_join(r->th, NULL);
    pthread_cond_destroy(&r->ready);
    pthread_cond_destroy(&r->room);
    pthread_mutex_destroy(&r->mu);
    free(r->mem);
    free(r);
}
