/* Multi-threaded .xz decoding for ce_unpack (full binary only).
 *
 * libarchive's xz reader decodes on one core; liblzma >= 5.4 has
 * lzma_stream_decoder_mt, which decodes the blocks of a multi-block .xz
 * file (xz -T0, or xz >= 5.4 with -T) on several threads, and decodes a
 * single-block file in the calling thread like the plain decoder.  ce_xzmt
 * pulls compressed bytes through a callback (the caller hashes them as they
 * go by) and returns plain bytes for libarchive to read as a tar.
 *
 * Memory stays bounded and scales with the machine: a threaded block costs
 * about its uncompressed size plus its compressed size plus the dictionary
 * (ce_xzmt_block_need reads them from the first block header), and all the
 * decoders of an install share one budget (ce_xzmt_budget: CE_XZMT_PER_CORE
 * for each core of the affinity mask, at most 1/16 of MemAvailable and
 * CE_XZMT_BUDGET_MAX), handed out by the decode slots (slots.h) in shares
 * proportional to the archives' sizes.  liblzma runs fewer threads when they
 * would not fit its memlimit, and decodes in the calling thread, dictionary
 * only, when even one would not (a single-block file always is).  On 2 cores
 * the budget is 112 MiB: two threads of the 24 MiB blocks of `xz -T0` (-6);
 * on 16 cores 896 MiB: about twenty.  Measured: docs/PERFORMANCE.md.  Big
 * buffers are mmapped so that freed blocks leave the RSS at once.
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

/* the threaded decoders' budget: this much per core in the affinity mask ... */
#define CE_XZMT_PER_CORE (44ull << 20)
/* ... at most 1/CE_XZMT_AVAIL_DIV of MemAvailable, at most CE_XZMT_BUDGET_MAX */
#define CE_XZMT_AVAIL_DIV 16
#define CE_XZMT_BUDGET_MAX (1ull << 30)
#define CE_XZMT_BUDGET_MIN (16ull << 20)
/* at most this many decoding threads per archive (also capped by the cores) */
#define CE_XZMT_MAX_THREADS 64

/* Next compressed bytes: > 0 with *buf set, 0 at the end, -1 on error. */
typedef ssize_t (*ce_xzmt_pull)(void *ud, const unsigned char **buf);

typedef struct ce_xzmt ce_xzmt;

/* true when buf starts with the .xz stream header magic (needs n >= 6) */
bool ce_xzmt_magic(const void *buf, size_t n);

/* Budget for all threaded decoders together on a machine of cores (affinity
 * mask) and avail bytes of MemAvailable (0: unknown); ce_xzmt_budget() reads
 * both from this machine. */
unsigned long long ce_xzmt_budget_for(long cores, unsigned long long avail);
unsigned long long ce_xzmt_budget(void);

/* From the start of an .xz file (its first n bytes): true when the first
 * block header records its compressed and uncompressed sizes (xz -T wrote
 * it: the blocks can decode in parallel), with *need set to what one
 * decoding thread of such a block costs (both sizes plus the dictionary).
 * Under-counting here is not harmless: liblzma starts a block only when the
 * whole block's need fits beside the others', so n x a need a little short
 * decodes on n - 1 threads (on one, for n = 2: seen on the H200).
 * false: one block that only decodes sequentially (xz -T1), or not enough
 * bytes, or not .xz. */
bool ce_xzmt_block_need(const void *buf, size_t n, unsigned long long *need);

/* A decoder whose first input is first[0..n) (already pulled), then pull().
 * threads 0: the cores of the affinity mask, capped at CE_XZMT_MAX_THREADS;
 * memory for its threads: ce_xzmt_budget().  NULL: no memory. */
ce_xzmt *ce_xzmt_new(ce_xzmt_pull pull, void *ud, const void *first, size_t n, unsigned threads);
/* The same with memlimit bytes for its threads' buffers (its share of the
 * budget; below one block's need: decoded in one thread, dictionary only). */
ce_xzmt *ce_xzmt_new_mem(ce_xzmt_pull pull, void *ud, const void *first, size_t n, unsigned threads,
                         unsigned long long memlimit);

/* Plain bytes: > 0 with *out set (valid until the next call), 0 at the end of
 * the xz data, -1 on error: ce_xzmt_pull_failed() tells whether pull failed,
 * else ce_xzmt_error() says what (libarchive's wording for the same error). */
ssize_t ce_xzmt_read(ce_xzmt *x, const void **out);
bool ce_xzmt_pull_failed(const ce_xzmt *x);
/* true once ce_xzmt_free began: a pull waiting for bytes should give up (-1) */
bool ce_xzmt_stopping(const ce_xzmt *x);
const char *ce_xzmt_error(const ce_xzmt *x);
int ce_xzmt_errno(const ce_xzmt *x);

/* Before the first read: the worker blocks' memory comes from the install's
 * shared budget (slots.h), taken and given back block by block for unpacker
 * id's archive of size bytes, instead of the memlimit given to new. */
struct ce_slots;
void ce_xzmt_use_slots(ce_xzmt *x, struct ce_slots *s, int id, long long size);

/* threads the decoder was given (for messages and tests) */
unsigned ce_xzmt_threads(const ce_xzmt *x);
/* the most blocks that were being decoded at once (tests: the block decoder's parallelism) */
unsigned ce_xzmt_peak(const ce_xzmt *x);

void ce_xzmt_free(ce_xzmt *x);

#endif
