#include "bell.h"

int ce_fetch_bell_init(ce_fetch_bell *b)
{
    b->rings = 0;
    int rc = pthread_mutex_init(&b->mu, NULL);
    if (rc) return rc;
    if ((rc = pthread_cond_init(&b->cv, NULL))) pthread_mutex_destroy(&b->mu);
    return rc;
}

void ce_fetch_bell_destroy(ce_fetch_bell *b)
{
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
}

void ce_fetch_bell_ring(ce_fetch_bell *b)
{
    if (!b) return;
    pthread_mutex_lock(&b->mu);
    b->rings++;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

unsigned long ce_fetch_bell_rings(ce_fetch_bell *b)
{
    pthread_mutex_lock(&b->mu);
    unsigned long n = b->rings;
    pthread_mutex_unlock(&b->mu);
    return n;
}

void ce_fetch_bell_wait(ce_fetch_bell *b, unsigned long seen)
{
    pthread_mutex_lock(&b->mu);
    while (b->rings == seen) pthread_cond_wait(&b->cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
}
