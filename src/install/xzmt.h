/* Multi-threaded .xz decoding for ce_unpack (full binary only).
 *
 * libarchive's xz reader decodes on one core; liblzma >= 5.4 has
 * lzma_stream_decoder_mt, which decodes the blocks of a multi-block .xz
 * file (xz -T0, or xz >= 5.4 with -T) on several threads, and decodes a
 * single-block file in the calling thread like the plain decoder.  ce_xzmt
 * pulls compressed bytes through a callback (the caller hashes them as they
 * go by) and returns plain bytes for libarchive to read as a tar.
 *
 * Memory stays bounded: a threaded block costs about its uncompressed size
 * plus its compressed size plus the dictionary, so the decoder gets
 * CE_XZMT_MEMLIMIT for all threads together (liblzma runs fewer threads
 * when they would not fit, and decodes in the calling thread, dictionary
 * only, when even one would not).  48 MiB holds two threads of the 12 MiB
 * blocks of `xz -T -3` (three of -1's, one of -6's 24 MiB); measured peak
 * RSS of an install with it: see bench/install.sh.  Big buffers are
 * mmapped so that freed blocks leave the RSS at once.
 *
 * Decoding runs in a thread of its own, RING - 1 blocks of 256 KiB ahead of
 * the reader (as `xz -dc | tar -x` runs xz and tar side by side): the
 * caller's thread writes files and hashes them while the next bytes decode.
 * pull is called from that thread (CUDAENV_XZ_NO_PIPE=1: from the caller's,
 * as before; for comparisons). */
#ifndef CE_XZMT_H
#define CE_XZMT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* budget for the threaded decoder's buffers, all threads together */
#define CE_XZMT_MEMLIMIT (48u << 20)
/* at most this many decoding threads (also capped by online CPUs) */
#define CE_XZMT_MAX_THREADS 8

/* Next compressed bytes: > 0 with *buf set, 0 at the end, -1 on error. */
typedef ssize_t (*ce_xzmt_pull)(void *ud, const unsigned char **buf);

typedef struct ce_xzmt ce_xzmt;

/* true when buf starts with the .xz stream header magic (needs n >= 6) */
bool ce_xzmt_magic(const void *buf, size_t n);

/* A decoder whose first input is first[0..n) (already pulled), then pull().
 * threads 0: online CPUs, capped at CE_XZMT_MAX_THREADS.  NULL: no memory. */
ce_xzmt *ce_xzmt_new(ce_xzmt_pull pull, void *ud, const void *first, size_t n, unsigned threads);

/* Plain bytes: > 0 with *out set (valid until the next call), 0 at the end of
 * the xz data, -1 on error: ce_xzmt_pull_failed() tells whether pull failed,
 * else ce_xzmt_error() says what (libarchive's wording for the same error). */
ssize_t ce_xzmt_read(ce_xzmt *x, const void **out);
bool ce_xzmt_pull_failed(const ce_xzmt *x);
/* true once ce_xzmt_free began: a pull waiting for bytes should give up (-1) */
bool ce_xzmt_stopping(const ce_xzmt *x);
const char *ce_xzmt_error(const ce_xzmt *x);
int ce_xzmt_errno(const ce_xzmt *x);

/* threads the decoder was given (for messages and tests) */
unsigned ce_xzmt_threads(const ce_xzmt *x);

void ce_xzmt_free(ce_xzmt *x);

#endif
