/* The per-file digests of an unpack made on a thread of its own (issue 41):
 * the unpacker hands each regular file's bytes over as it writes them
 * (copied into a bounded queue of slots) and, after the file's last, its
 * inode and size; the hashing thread digests them in order and adds
 * (inode, size, sha256) to the package index list (pkgindex.h), exactly as
 * the unpacker would have, in the same order, drops included.  So the
 * unpacker's core writes while another hashes (decode, hash and write of one
 * archive overlap: ahead.h decodes).  Full binary only.
 *
 * Contract:
 *  - Threads.  new starts the thread; data, end, drop, finish and free are
 *    called from one other thread (the unpacker's).  The list is the
 *    thread's from new until finish or free returns: the caller touches it
 *    only through drop.
 *  - data copies (waiting while every slot is full), so buf may be reused
 *    as soon as it returns.
 *  - finish: every file handed over is in the list; 0, or ENOMEM when an
 *    add failed (then the index is incomplete: the caller saves none).
 *    free: at any point (after a failure): stops without hashing the rest.
 *    Both join the thread and free the queue; exactly one of them, once.
 *  - Memory: slots x slot bytes, allocated by new. */
#ifndef CE_HASHQ_H
#define CE_HASHQ_H

#include <stddef.h>

#include "pkgindex.h"

/* the queue ce_unpack gives the hashing thread: 16 slots of 256 KiB */
#define CE_HASHQ_SLOT (256u << 10)
#define CE_HASHQ_SLOTS 16u

typedef struct ce_hashq ce_hashq;

/* NULL: no memory, no thread (the caller hashes on its own thread) */
ce_hashq *ce_hashq_new(ce_pkgindex_list *list, size_t slot, unsigned slots);
/* the current file's next bytes */
void ce_hashq_data(ce_hashq *q, const void *buf, size_t n);
/* the current file ended: its digest goes into the list as (ino, size) */
void ce_hashq_end(ce_hashq *q, unsigned long long ino, long long size);
/* ce_pkgindex_list_drop(list, ino), in turn with the files before it */
void ce_hashq_drop(ce_hashq *q, unsigned long long ino);
int ce_hashq_finish(ce_hashq *q);
void ce_hashq_free(ce_hashq *q);

#endif
