/* Multi-threaded .xz decoding for ce_unpack (full binary only).
 *
 * libarchive's xz reader decodes on one core.  ce_xzmt pulls compressed
 * bytes through a callback (the caller hashes them as they go by: pull is
 * called from one thread, in order) and returns plain bytes for libarchive
 * to read as a tar.  Decoding runs in a thread of its own (the decoding
 * thread), RING - 1 entries of 256 KiB ahead of the reader, as `xz -dc |
 * tar -x` runs xz and tar side by side (CUDAENV_XZ_NO_PIPE=1: in the
 * caller's thread, for comparisons).
 *
 * A file whose first block header records its sizes (xz -T, NVIDIA's
 * archives) goes to the block decoder (xzblk.c, xzparse.c): the decoding
 * thread splits the input at block boundaries, checking the container as
 * liblzma does (headers, index record by record, footer, padding, streams
 * one after another); workers decode whole blocks into buffers of their
 * plain size; the reader gets slices of those buffers, in order, without a
 * copy.  A worker block reserves its compressed size, plain size and
 * dictionary from the budget when it is parsed and gives them back as it is
 * decoded and read.  The block the reader needs next, when no worker has it,
 * the decoding thread decodes itself, streaming into the ring: no plain
 * buffer and no budget, so the reader never waits for memory and, with the
 * memory of two worker blocks, three blocks decode at once (liblzma's
 * threaded decoder starts block k + 2 only once block k's output was read,
 * which left one of two cores idle).  A block without sizes (or with sizes
 * past the budget: a header may lie) is decoded there too, straight from the
 * input.  A file whose first block records no sizes (xz -T1: one block)
 * decodes on liblzma's stream decoder, sequentially.
 *
 * The budget scales with the machine: ce_xzmt_budget is CE_XZMT_PER_CORE for
 * each core of the affinity mask less CE_XZMT_FIXED (what an install holds
 * whatever its cores: the process, libarchive, the streamed block), at most
 * 1/16 of MemAvailable and CE_XZMT_BUDGET_MAX: 88 MiB on 2 cores (two worker
 * blocks of the 24 MiB blocks of `xz -T0`, beside the streamed one: the RSS
 * stays under 96 MiB), 984 MiB on 16 (where 704 MiB held the largest
 * archives to a few workers each and the install at 1.36x its floor instead
 * of 1.15x, on the H200).  All the
 * decoders of an install share it through the decode slots (slots.h), block
 * by block, so the archives still decoding get the memory of those that
 * finished; without slots a decoder has a budget of its own (the memlimit of
 * ce_xzmt_new_mem).  Buffers are mmapped and given back in pieces as they are
 * read, so they leave the RSS at once.
 *
 * File blocks (xzsink.c): the reader tells the decoder when it is inside a big
 * regular file (ce_xzmt_sink); a worker block planned wholly inside it then
 * decodes through a 1 MiB buffer straight into the file and holds only its
 * input and dictionary while it decodes: blocks no longer wait, 24 MiB each,
 * for the reader to reach them in file order (on 16 cores that filled the
 * budget with finished blocks and left cores idle), and the same budget
 * keeps about three times as many blocks decoding.  The reader still gets
 * every byte in order (read back from the file) for the per-file digest.
 * Measured: docs/PERFORMANCE.md.
 *
 * A closed component: this header is all there is to it.  Its files
 * (xzmt.c, xzblk.c, xzparse.c, xzsink.c) share xzmt_int.h, which nothing
 * else includes, in src/ or tests/ (tools/incgraph.py --check).  The
 * contract, whole:
 *  - Input.  What it accepts, and the bytes it gives for it, are liblzma's
 *    stream decoder's with LZMA_CONCATENATED (as `xz -t` and libarchive):
 *    streams one after another, stream padding in fours, every header,
 *    index record and footer checked (tests/fuzz/fuzz_xz.c holds it to
 *    that), except that a block whose decoder needs more than 1 GiB is
 *    refused (libarchive's own limit: ENOMEM below).
 *  - Threads.  One thread, the reader, calls read, sink, sink_end and free.
 *    pull and avail are called one at a time, in input order, from the
 *    decoding thread (or from the reader's, CUDAENV_XZ_NO_PIPE=1); first[]
 *    and each buffer pull hands back stay valid until the next pull (or
 *    free).  pull may call ce_xzmt_stopping.  Workers never call back.
 *  - Output.  ce_xzmt_read hands out the plain bytes in order; a slice
 *    stays valid until the next read or free.  0 comes only after the end
 *    of the last stream was checked.  Bytes handed out before a -1 are not
 *    vouched for (blocks before a broken index decode and are handed out):
 *    the caller keeps nothing of a read that failed.  After a -1 the
 *    decoder is good only for error, errno, pull_failed and free.
 *  - Errors.  pull failed: ce_xzmt_pull_failed (the caller knows why);
 *    else ce_xzmt_error in libarchive's words and ce_xzmt_errno: the errno
 *    of a write into a sink's file, ENOMEM (out of memory, or a decoder
 *    past the 1 GiB limit), -1 (corrupt or unsupported input).
 *  - Memory.  Worker blocks hold at most the budget (memlimit, or their
 *    share of the slots); the block the reader needs is decoded outside
 *    it (its input and a dictionary).  A header may lie about sizes: a
 *    block whose sizes exceed the budget is decoded streaming, and one that
 *    decodes to other sizes than it recorded is a data error.
 *  - Files (ce_xzmt_sink): the file-block contract, seen from the unpacker,
 *    is in unpack.h.
 *  - ce_xzmt_free at any point (mid-block, mid-file, after an error) stops
 *    and joins every thread, frees every buffer, gives back every reserved
 *    byte, and closes every descriptor it holds. */
#ifndef CE_XZMT_H
#define CE_XZMT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* the worker blocks' budget: this much per core in the affinity mask, less
 * CE_XZMT_FIXED ... */
#define CE_XZMT_PER_CORE (64ull << 20)
#define CE_XZMT_FIXED (40ull << 20)
/* ... at most 1/CE_XZMT_AVAIL_DIV of MemAvailable, at most CE_XZMT_BUDGET_MAX */
#define CE_XZMT_AVAIL_DIV 16
#define CE_XZMT_BUDGET_MAX (1ull << 30)
#define CE_XZMT_BUDGET_MIN (16ull << 20)
/* make XZ=liblzma (bench only): liblzma's threaded decoder instead of the
 * block decoder, with at least this threading limit */
#define CE_XZ_LIBLZMA_MEM (256ull << 20)
/* at most this many block workers per archive (also capped by the cores) */
#define CE_XZMT_MAX_THREADS 64

/* Next compressed bytes: > 0 with *buf set, 0 at the end, -1 on error. */
typedef ssize_t (*ce_xzmt_pull)(void *ud, const unsigned char **buf);
/* How many bytes pull would give now without waiting (an archive still
 * being downloaded); LLONG_MAX: everything. */
typedef long long (*ce_xzmt_avail)(void *ud);

typedef struct ce_xzmt ce_xzmt;

/* true when buf starts with the .xz stream header magic (needs n >= 6) */
bool ce_xzmt_magic(const void *buf, size_t n);

/* Budget for all the decoders' worker blocks together on a machine of cores (affinity
 * mask) and avail bytes of MemAvailable (0: unknown); ce_xzmt_budget() reads
 * both from this machine. */
unsigned long long ce_xzmt_budget_for(long cores, unsigned long long avail);
unsigned long long ce_xzmt_budget(void);

/* From the start of an .xz file (its first n bytes): true when the first
 * block header records its compressed and uncompressed sizes (xz -T wrote
 * it: the blocks can decode in parallel: the block decoder), with *need set
 * to about what a worker of such a block holds (its input with headroom for
 * later blocks that compress worse, its output, the dictionary, 1 MiB).
 * false: one block that only decodes sequentially (xz -T1), or not enough
 * bytes, or not .xz. */
bool ce_xzmt_block_need(const void *buf, size_t n, unsigned long long *need);

/* A decoder whose first input is first[0..n) (already pulled), then pull().
 * threads: at most this many block workers (0: the cores of the affinity
 * mask, capped at CE_XZMT_MAX_THREADS; 1: none, everything decodes in the
 * decoding thread); memory for its worker blocks: ce_xzmt_budget().  NULL:
 * no memory. */
ce_xzmt *ce_xzmt_new(ce_xzmt_pull pull, void *ud, const void *first, size_t n, unsigned threads);
/* The same with memlimit bytes for its worker blocks (below one block's
 * need: every block decoded in the decoding thread, dictionary only). */
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

/* The reader is inside a regular file: its bytes begin at p (inside what
 * ce_xzmt_read handed out last) and are len long, and fd is that file, empty,
 * open for reading and writing.  From now until ce_xzmt_sink_end every byte
 * of those len is written into the file by the decoder (at its offset), the
 * reader must not write them: worker blocks that lie wholly inside the file
 * decode straight into it and give their memory back at once (a "file
 * block": it does not wait for the reader in file order), the other bytes are
 * written as they are handed out.  The reader still gets every byte, in
 * order (a file block's read back from the file), to hash.  fd is not kept
 * (a dup is, closed after the last file block was read back).
 * -1: nothing registered (not the block decoder, p not in the last bytes
 * handed out, no memory): the caller writes the file itself.  Else the sink
 * is on: 0, or the errno of a write that failed; a later write failure makes
 * ce_xzmt_read fail with ce_xzmt_errno() that errno. */
int ce_xzmt_sink(ce_xzmt *x, const void *p, int fd, unsigned long long len);
/* The reader is past the file (or gives up): 0, or the errno of a write of
 * the file (or of reading it back) that failed. */
int ce_xzmt_sink_end(ce_xzmt *x);
/* the file blocks decoded (tests) */
unsigned ce_xzmt_file_blocks(const ce_xzmt *x);

/* Before the first read: the input arrives over time (avail says how much is
 * there).  The decoding thread then reads a block's input ahead of the
 * reader's need only once it is all there: waiting for it in pull, the
 * thread would leave decoded blocks unread (the reader's bytes, and the
 * per-file digests, piled up behind the download: +0.8 s at 400 MB/s on 16
 * cores, issue 25).  Without it every byte counts as there. */
void ce_xzmt_use_avail(ce_xzmt *x, ce_xzmt_avail avail);

/* threads the decoder was given (for messages and tests) */
unsigned ce_xzmt_threads(const ce_xzmt *x);
/* the most blocks that were being decoded at once (tests: the block decoder's parallelism) */
unsigned ce_xzmt_peak(const ce_xzmt *x);
/* the blocks the block decoder decoded (tests: each once; 0 for the sequential decoder) */
unsigned ce_xzmt_blocks(const ce_xzmt *x);

void ce_xzmt_free(ce_xzmt *x);

#endif
