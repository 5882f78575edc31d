#include "slots.h"

#include <string.h>

static void lock(ce_slots *s)
{
    pthread_mutex_lock(&s->mu);
}

int ce_slots_init(ce_slots *s, int n)
{
    memset(s, 0, sizeof *s);
    s->free = n < 1 ? 1 : n;
    int rc = pthread_mutex_init(&s->mu, NULL);
    if (rc) return rc;
    if ((rc = pthread_cond_init(&s->cv, NULL))) pthread_mutex_destroy(&s->mu);
    return rc;
}

void ce_slots_destroy(ce_slots *s)
{
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
}

/* Waiting unpackers that go before id. */
static int ahead_of(const ce_slots *s, int id)
{
    int n = 0;
    for (int i = 0; i < CE_SLOTS_MAX; i++)
        if (i != id && s->want[i] > 0 &&
            (s->want[i] > s->want[id] || (s->want[i] == s->want[id] && i < id)))
            n++;
    return n;
}

void ce_slots_take(ce_slots *s, int id, long long size)
{
    lock(s);
    s->want[id] = size > 0 ? size : 1;
    while (ahead_of(s, id) >= s->free) pthread_cond_wait(&s->cv, &s->mu);
    s->free--;
    s->want[id] = 0;
    s->held[id] = true;
    pthread_mutex_unlock(&s->mu);
}

void ce_slots_give(ce_slots *s, int id)
{
    lock(s);
    if (s->held[id]) {
        s->held[id] = false;
        s->free++;
        pthread_cond_broadcast(&s->cv);   /* the largest waiting goes next */
    }
    pthread_mutex_unlock(&s->mu);
}

void ce_slots_budget(ce_slots *s, long long mem, long long work)
{
    lock(s);
    s->mem_total = s->mem_free = mem;
    s->work_left = work;
    pthread_mutex_unlock(&s->mu);
}

int ce_slots_nice(long long size, long long largest)
{
    if (size <= 0 || largest <= 0 || size * 4 >= largest) return 0;
    return size * 16 >= largest ? CE_SLOTS_NICE_MID : CE_SLOTS_NICE_LOW;
}

long long ce_slots_share(long long total, long long free_, long long work, long long size, long long need,
                         long threads)
{
    if (need <= 0 || threads < 1 || free_ < need) return 0;
    double part = work > 0 && size > 0 && size < work ? (double)size / (double)work : 1.0;
    double want = part * (double)total;
    long long n = (long long)(want / (double)need + 0.5);
    if (n < 1) n = 1;
    if (n > threads) n = threads;
    if (n > free_ / need) n = free_ / need;
    return n * need;
}

bool ce_slots_blk_take(ce_slots *s, int id, long long size, long long bytes, long threads)
{
    lock(s);
    bool ok = false;
    if (s->mem_total > 0 && bytes > 0 && bytes <= s->mem_free) {
        long long cap = ce_slots_share(s->mem_total, s->mem_free + s->mem_held[id], s->work_left, size, bytes,
                                       threads);
        bool others = false;
        for (int i = 0; i < CE_SLOTS_MAX && !others; i++) others = i != id && s->mem_wait[i];
        ok = s->mem_held[id] + bytes <= cap || !others;
    }
    if (ok) {
        s->mem_free -= bytes;
        s->mem_held[id] += bytes;
    }
    s->mem_wait[id] = !ok;
    pthread_mutex_unlock(&s->mu);
    return ok;
}

void ce_slots_blk_give(ce_slots *s, int id, long long bytes)
{
    lock(s);
    if (bytes > s->mem_held[id]) bytes = s->mem_held[id];
    s->mem_held[id] -= bytes;
    s->mem_free += bytes;
    pthread_mutex_unlock(&s->mu);
}

void ce_slots_done(ce_slots *s, int id, long long size)
{
    lock(s);
    s->mem_wait[id] = false;
    s->mem_free += s->mem_held[id];
    s->mem_held[id] = 0;
    if (!s->out[id] && size > 0) {
        s->work_left -= size;
        s->out[id] = true;   /* counted out once, whatever retries follow */
    }
    pthread_mutex_unlock(&s->mu);
}
