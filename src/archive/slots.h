/* Decode slots shared by the component unpackers (threads of the install,
 * unpackers.c).  An unpacker holds a slot while it has
 * bytes to decode and gives it back while it waits for its download
 * (unpack.h), so there are never more decoders than slots.  When a slot
 * frees, the largest archive waiting gets it: the largest archive is the
 * longest job, and started last it would end alone on one core.  Waiters
 * sleep on a condition variable that every slot given back wakes.
 *
 * The slots also share out the xz decoders' memory budget (xzmt.h), block
 * by block: a decoder takes one worker block's memory when it plans the
 * block and gives it back as the block is decoded and read.  A block is
 * granted while it is free and the archive's blocks stay within its share:
 * the archive's part of the bytes still to unpack (the largest gets the most
 * workers, and archives decoding side by side end together instead of the
 * largest alone on a few cores), in whole blocks (nearest), at least one,
 * never more than is free; beyond its share only while no other decoder is
 * waiting for memory.  As archives finish, the bytes left shrink and the
 * ones still decoding get what the others held.  ce_slots_share is that
 * arithmetic, without the lock. */
#ifndef CE_SLOTS_H
#define CE_SLOTS_H

#include <pthread.h>
#include <stdbool.h>

#define CE_SLOTS_MAX 128

typedef struct ce_slots {
    pthread_mutex_t mu;
    pthread_cond_t cv;              /* a slot was given back */
    int free;
    long long want[CE_SLOTS_MAX];   /* > 0: unpacker id waits, for an archive of this size */
    bool held[CE_SLOTS_MAX];
    /* the decoders' memory budget (ce_slots_budget; 0: none shared) */
    long long mem_free;
    long long mem_total;
    long long work_left;            /* bytes of the archives not finished */
    long long mem_held[CE_SLOTS_MAX];
    bool out[CE_SLOTS_MAX];         /* id's archive no longer counts in work_left */
    bool mem_wait[CE_SLOTS_MAX];    /* id's decoder asked for a block's memory and did not get it */
} ce_slots;

/* n slots in s.  0, or an errno. */
int ce_slots_init(ce_slots *s, int n);
void ce_slots_destroy(ce_slots *s);
/* Block until unpacker id (0 <= id < CE_SLOTS_MAX) holds a slot; among those
 * waiting, larger sizes first (then lower ids). */
void ce_slots_take(ce_slots *s, int id, long long size);
void ce_slots_give(ce_slots *s, int id);

/* mem bytes of decoder memory to share among archives of work bytes. */
void ce_slots_budget(ce_slots *s, long long mem, long long work);
/* Memory for one block of id's archive (size bytes), decoded on at most
 * threads threads: true when bytes are free and either within the archive's
 * share (ce_slots_share, blocks of bytes) or no other decoder is waiting for
 * memory.  Held until ce_slots_blk_give, or ce_slots_done. */
bool ce_slots_blk_take(ce_slots *s, int id, long long size, long long bytes, long threads);
void ce_slots_blk_give(ce_slots *s, int id, long long bytes);
/* id's archive (size bytes) is unpacked: its memory back, its bytes out of the work left. */
void ce_slots_done(ce_slots *s, int id, long long size);
/* The CPU priority (nice) of the unpacker of an archive of size bytes when
 * the install's largest is largest: the largest archives are the install's
 * longest jobs, so their decoders get the cores first and the many small
 * archives' threads fill what they leave (with equal weights a small
 * archive's threads took cores from libcublas by their number, and the big
 * archives ended alone: issue 25).  0 for an archive of at least a quarter
 * of the largest, CE_SLOTS_NICE_MID down to a sixteenth, CE_SLOTS_NICE_LOW
 * below; 0 when a size is unknown. */
#define CE_SLOTS_NICE_MID 4
#define CE_SLOTS_NICE_LOW 8
int ce_slots_nice(long long size, long long largest);

/* The share itself: free bytes of total, work bytes left (size included). */
long long ce_slots_share(long long total, long long free_, long long work, long long size, long long need,
                         long threads);

#endif
