/* Decode slots shared by the component unpackers (forked processes), in a
 * MAP_SHARED page (components.c).  An unpacker holds a slot while it has
 * bytes to decode and gives it back while it waits for its download
 * (unpack.h), so there are never more decoders than slots.  When a slot
 * frees, the largest archive waiting gets it: the largest archive is the
 * longest job, and started last it would end alone on one core.  A robust
 * mutex, and waiters that poll (every millisecond) instead of a condition
 * variable: an unpacker killed at any point leaves the others running, and
 * ce_slots_reclaim returns a slot it held. */
#ifndef CE_SLOTS_H
#define CE_SLOTS_H

#include <pthread.h>
#include <stdbool.h>

#define CE_SLOTS_MAX 128

typedef struct ce_slots {
    pthread_mutex_t mu;
    int free;
    long long want[CE_SLOTS_MAX];   /* > 0: unpacker id waits, for an archive of this size */
    bool held[CE_SLOTS_MAX];
} ce_slots;

/* n slots in s (in memory shared with the unpackers).  0, or an errno. */
int ce_slots_init(ce_slots *s, int n);
void ce_slots_destroy(ce_slots *s);
/* Block until unpacker id (0 <= id < CE_SLOTS_MAX) holds a slot; among those
 * waiting, larger sizes first (then lower ids). */
void ce_slots_take(ce_slots *s, int id, long long size);
void ce_slots_give(ce_slots *s, int id);
/* id's process died: forget that it waited, free a slot it held. */
void ce_slots_reclaim(ce_slots *s, int id);

#endif
