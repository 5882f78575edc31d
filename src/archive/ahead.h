/* Decode-ahead for .tar.zst and .tar.gz input of ce_unpack (full binary only).
 *
 * libarchive's zstd and gzip filters decode on the thread that reads the
 * filter's output: the unpacker's, which also parses the tar, hashes every
 * file and writes it, so one core did all of it (a repacked mirror's
 * libcublas: decode + sha256 + write in sequence, issue 41).  ce_ahead runs
 * the filter on a thread of its own (libarchive's raw format behind its zstd
 * and gzip filters: nothing else is read) and hands the plain bytes over in
 * a bounded ring of chunks; the unpacker's libarchive reads the tar from
 * ce_ahead_read.  The .xz input has its own decoder (xzmt.h).
 *
 * Contract:
 *  - Threads.  ce_ahead_new starts one thread; pull is called only on it,
 *    in order, from then until the end of the data, an error or
 *    ce_ahead_free (the caller hashes the compressed bytes as they go by).
 *    ce_ahead_read and ce_ahead_free are called from one other thread.
 *  - Output.  Every plain byte once, in order: each read hands out the next
 *    chunk (at most chunk bytes, valid until the next read or the free),
 *    0 at the end of the compressed data, -1 on error, after the bytes
 *    decoded before it.  ce_ahead_pull_failed then says whether pull failed
 *    (the caller knows why), else ce_ahead_error and ce_ahead_errno say what
 *    (libarchive's words: a corrupt or truncated stream).
 *  - Memory.  chunks x chunk bytes of ring, allocated by new, and the
 *    filter's own buffers (what libarchive held on the unpacker's thread).
 *    The unpacker takes the ring from the install's decoder memory
 *    (slots.h) where there is a shared budget; refused, it decodes on its
 *    own thread as before.
 *  - Priority.  The thread is created by the unpacker's and inherits its
 *    nice value (unpackers.c sets it per archive).
 *  - ce_ahead_free at any point (mid-stream, after an error, at the end)
 *    stops the thread and joins it: one waiting for room in the ring stops
 *    at once; one inside pull when pull returns, so a pull that waits (a
 *    download being followed) must give up when its caller says so
 *    (unpack_reader_stop).  Every buffer is freed. */
#ifndef CE_AHEAD_H
#define CE_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* the ring ce_unpack gives the decoding thread: 4 chunks of 1 MiB */
#define CE_AHEAD_CHUNK (1u << 20)
#define CE_AHEAD_CHUNKS 4u

/* Next compressed bytes: > 0 with *buf set, 0 at the end, -1 on error. */
typedef ssize_t (*ce_ahead_pull)(void *ud, const unsigned char **buf);

typedef struct ce_ahead ce_ahead;

/* true when buf (n bytes) starts with a zstd frame's or gzip member's magic */
bool ce_ahead_magic(const void *buf, size_t n);

/* A decoding thread whose first input is first[0..n) (already pulled; it
 * must stay valid until the thread calls pull), then pull(ud).  chunks >= 2
 * chunks of chunk >= 1 bytes.  NULL: no memory, or no thread. */
ce_ahead *ce_ahead_new(ce_ahead_pull pull, void *ud, const void *first, size_t n, size_t chunk,
                       unsigned chunks);

ssize_t ce_ahead_read(ce_ahead *x, const void **out);
bool ce_ahead_pull_failed(ce_ahead *x);
const char *ce_ahead_error(ce_ahead *x);
int ce_ahead_errno(ce_ahead *x);

void ce_ahead_free(ce_ahead *x);

#endif
