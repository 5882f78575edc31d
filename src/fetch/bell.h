/* A download's bell: what a thread following downloads (unpack.h's follow
 * mode, the component install's scheduler) waits on instead of looking
 * again and again.  The download rings it whenever what a follower waits
 * for may have changed: a .part opened, bytes written to it, the file
 * truncated, deleted, verified or renamed to its cache name, and the
 * downloads' end (fetch.h); the followers' own ends and a cancelled install
 * ring it too.  A follower notes the rings, looks, and when what it wants is
 * not there waits for a ring after that note: nothing is missed, and nobody
 * polls. */
#ifndef CE_BELL_H
#define CE_BELL_H

#include <pthread.h>

typedef struct ce_fetch_bell {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned long rings;
} ce_fetch_bell;

/* 0, or an errno */
int ce_fetch_bell_init(ce_fetch_bell *b);
void ce_fetch_bell_destroy(ce_fetch_bell *b);
/* Wake every waiter (b may be NULL: nobody follows). */
void ce_fetch_bell_ring(ce_fetch_bell *b);
/* The rings so far: note them before looking ... */
unsigned long ce_fetch_bell_rings(ce_fetch_bell *b);
/* ... and, when what was looked for is not there, wait for a ring after the note. */
void ce_fetch_bell_wait(ce_fetch_bell *b, unsigned long seen);

#endif
