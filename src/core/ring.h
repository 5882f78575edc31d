/* A bounded ring of equal slots between two threads, and the thread on one
 * side of it: the one mechanism under the unpacker's decode-ahead
 * (archive/ahead.h: the thread produces, the unpacker consumes) and its
 * hashing queue (archive/hashq.h: the unpacker produces, the thread
 * consumes).
 *
 * Contract:
 *  - One producer, one consumer.  The producer fills the slot take gave it
 *    (outside any lock) and publishes it; slots are consumed in the order
 *    they were published.  The consumer's next hands out the oldest
 *    published slot, which stays the consumer's until done gives it back.
 *    What a slot holds besides its bytes (a length, a kind) is the user's,
 *    kept beside it by index: written before publish, it is the consumer's
 *    to read after next (the ring's lock orders them).
 *  - Ends.  close (the producer: nothing more) lets next return the slots
 *    published before it, then -1.  stop (either side, or the owner) makes
 *    take and next return -1 at once, whatever is left.  What the producer
 *    wrote before close or stop (an error, say) is the consumer's to read
 *    once next returned -1.
 *  - The thread.  start runs fn(arg) on a thread of its own; end closes
 *    (abandon false: the thread drains what was published) or stops
 *    (abandon true), joins the thread and frees the ring.  new and end
 *    once each; end also frees a ring whose start failed or never ran.
 *  - Memory: slots x slot bytes, allocated by new. */
#ifndef CE_RING_H
#define CE_RING_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ce_ring ce_ring;

/* slots >= 2 of slot >= 1 bytes; NULL: no memory */
ce_ring *ce_ring_new(size_t slot, unsigned slots);
/* 0, or -1 when no thread could be started (then end it) */
int ce_ring_start(ce_ring *r, void *(*fn)(void *), void *arg);
void ce_ring_end(ce_ring *r, bool abandon);

/* slot i's bytes */
unsigned char *ce_ring_slot(ce_ring *r, int i);

/* producer: the next slot to fill, waiting while every slot is published
 * or held; -1 once stopped */
int ce_ring_take(ce_ring *r);
void ce_ring_publish(ce_ring *r);
void ce_ring_close(ce_ring *r);

/* consumer: the oldest published slot, waiting for one; -1 after the last
 * once closed, or once stopped */
int ce_ring_next(ce_ring *r);
void ce_ring_done(ce_ring *r);

void ce_ring_stop(ce_ring *r);

#endif
