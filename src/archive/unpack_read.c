/* Reading an archive for libarchive (unpack_int.h): a plain file, or one
 * that is still being downloaded (follow mode, unpack.h), every byte hashed
 * as it is handed over (unless the download's watch vouches for them), .xz
 * input decoded on its own threads (xzmt.h), .zst and .gz input on one
 * (ahead.h), the decode slot held only while
 * there are bytes to work on; and the digest of the whole file at the end. */
#include "unpack_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/proc.h"

static bool cancelled(const reader *r)
{
    return r->src->cancel && __atomic_load_n(r->src->cancel, __ATOMIC_ACQUIRE);
}

/* Follow mode: the download's bell (fetch.h's watch, bell.h): note its rings
 * before looking, wait for the next when what was looked for is not there. */
static unsigned long rings(const reader *r)
{
    return ce_fetch_bell_rings(r->src->watch->bell);
}

static void await_ring(const reader *r, unsigned long seen)
{
    ce_fetch_bell_wait(r->src->watch->bell, seen);
}

static bool writer_stopped(const reader *r)
{
    return __atomic_load_n(r->src->writer_done, __ATOMIC_ACQUIRE);
}

/* Open the archive; in follow mode wait until the .part (or the finished
 * file) exists, or the writer gave up. */
int unpack_reader_open(reader *r)
{
    const ce_unpack_src *s = r->src;
    if (s->part && !(s->watch && s->watch->bell))
        return ce_fail(CE_ERR_OTHER, "following %s needs its download's bell (fetch.h)", s->part);
    for (;;) {
        unsigned long seen = s->part ? rings(r) : 0;
        r->fd = open(s->path, O_RDONLY | O_CLOEXEC);
        if (r->fd >= 0) return CE_OK;
        if (!s->part)
            return ce_fail(CE_ERR_IO, "cannot open %s: %s", s->path, strerror(errno));
        r->fd = open(s->part, O_RDONLY | O_CLOEXEC);
        if (r->fd >= 0) return CE_OK;
        if (writer_stopped(r) || cancelled(r)) {
            /* it may have been renamed between the two opens */
            r->fd = open(s->path, O_RDONLY | O_CLOEXEC);
            if (r->fd >= 0) return CE_OK;
            r->incomplete = true;
            return CE_ERR_RETRY;
        }
        await_ring(r, seen);
    }
}

/* Follow mode: the writer renamed the very file we read to its final name,
 * which it does only after it flushed and verified every byte. */
static bool writer_finished(const reader *r)
{
    struct stat a, b;
    return fstat(r->fd, &a) == 0 && stat(r->src->path, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

void unpack_reader_stop(reader *r)
{
    __atomic_store_n(&r->stopping, true, __ATOMIC_RELEASE);
    if (r->src->part) ce_fetch_bell_ring(r->src->watch->bell);
    ce_xzmt_free(r->xz);
    r->xz = NULL;
    ce_ahead_free(r->ahead);
    r->ahead = NULL;
    r->threaded = false;
}

/* A decode slot (unpack.h): held while there is work, given back while waiting. */
static void slot_take(reader *r)
{
    if (!r->src->slots || r->slot_held) return;
    /* largest work first: a single-block .xz decodes on one core, so its
     * work is its whole size; blocks that decode in parallel, a share */
    long long prio = r->src->size;
    if (r->serial && prio > 0) prio *= ce_cpu_count();
    ce_slots_take(r->src->slots, r->src->slot_id, prio);
    r->slot_held = true;
}

void unpack_slot_give(reader *r)
{
    if (!r->slot_held) return;
    ce_slots_give(r->src->slots, r->src->slot_id);
    r->slot_held = false;
}

/* Follow mode, out of bytes: without the slot, until a block more is there
 * (or the rest of the file, or the writer finished or stopped).  false: the
 * xz decoding thread is being stopped, give up. */
static bool wait_bytes(reader *r)
{
    const ce_unpack_src *s = r->src;
    unpack_slot_give(r);
    long long want = READ_BLOCK;
    if (s->size >= 0 && s->size - r->done < want) want = s->size - r->done;
    for (;;) {
        unsigned long seen = rings(r);
        if ((r->threaded && __atomic_load_n(&r->stopping, __ATOMIC_ACQUIRE)) || cancelled(r))
            return false;
        struct stat st;
        if (fstat(r->fd, &st) == 0 && st.st_size - r->done >= want) return true;
        if (writer_stopped(r) || writer_finished(r)) return true;
        await_ring(r, seen);
    }
}

/* Next bytes.  In follow mode "no bytes yet" is never the end: the end is
 * the manifest's size, or (size or not) the writer renaming the file after
 * it verified; when the writer stops without that (a failure) the read
 * fails with r->incomplete.  A writer that restarted (a server ignoring
 * Range truncates the .part) is not detected here: the digest of what was
 * read decides, and the caller unpacks the verified file again. */
static ssize_t reader_fill(reader *r)
{
    const ce_unpack_src *s = r->src;
    for (;;) {
        size_t want = READ_BLOCK;
        if (s->size >= 0) {
            if (r->done >= s->size) return 0;
            if ((long long)want > s->size - r->done) want = (size_t)(s->size - r->done);
        }
        if (cancelled(r)) {
            r->incomplete = true;
            return -1;
        }
        slot_take(r);
        ssize_t n = read(r->fd, r->buf, want);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            r->failed = true;
            return -1;
        }
        if (n > 0) {
            if (!r->trust) ce_sha256_update(r->md, r->buf, (size_t)n);
            r->done += n;
            return n;
        }
        /* end of the bytes written so far */
        if (!s->part || r->writer_end) return 0;
        if (writer_finished(r)) {
            r->writer_end = true; /* its last bytes may have landed after our read */
            continue;
        }
        if (writer_stopped(r)) {
            /* it may have renamed the file just before it said so */
            if (writer_finished(r)) {
                r->writer_end = true;
                continue;
            }
            r->incomplete = true;
            return -1;
        }
        if (!wait_bytes(r)) {
            r->incomplete = cancelled(r) || r->incomplete;
            return -1;
        }
    }
}

/* the decoding thread's pull (xzmt.h, ahead.h): the next compressed bytes */
static ssize_t decoder_pull(void *ud, const unsigned char **buf)
{
    reader *r = ud;
    *buf = r->buf;
    return reader_fill(r);
}

/* Bytes the .part has that were not read yet (xzmt.h, ce_xzmt_avail);
 * LLONG_MAX once the file is complete (or cannot be looked at: reading says). */
static long long xz_avail(void *ud)
{
    reader *r = ud;
    const ce_unpack_src *s = r->src;
    struct stat st;
    if (!s->part || r->writer_end || fstat(r->fd, &st) != 0 || (s->size >= 0 && st.st_size >= s->size) ||
        writer_stopped(r))
        return LLONG_MAX;
    return (long long)st.st_size > r->done ? (long long)st.st_size - r->done : 0;
}

/* The decoder for .xz input (xzmt.h): its worker blocks' memory from the
 * install's budget shared by the slots, block by block, or all of it without
 * slots; a single-block file (no sizes in its block header) decodes
 * sequentially. */
static ce_xzmt *xz_open(reader *r, size_t n)
{
    const ce_unpack_src *s = r->src;
    unsigned long long need = 0;
    long cores = ce_cpu_count();
    if (cores > CE_XZMT_MAX_THREADS) cores = CE_XZMT_MAX_THREADS;
    if (!ce_xzmt_block_need(r->buf, n, &need)) r->serial = true;
    bool shared = s->slots && s->slots->mem_total > 0;
    ce_xzmt *x = ce_xzmt_new_mem(decoder_pull, r, r->buf, n, (unsigned)cores, shared ? 0 : ce_xzmt_budget());
    if (x && shared) ce_xzmt_use_slots(x, s->slots, s->slot_id, s->size);
    if (x && s->part) ce_xzmt_use_avail(x, xz_avail);
    return x;
}

bool unpack_mem_take(reader *r, long long bytes)
{
    const ce_unpack_src *s = r->src;   /* given back with the rest by ce_slots_done */
    return !s->slots || s->slots->mem_total <= 0 || ce_slots_blk_take(s->slots, s->slot_id, s->size, bytes, 1);
}

/* The decoding thread for .zst and .gz input (ahead.h): its ring from the
 * install's decoder memory where the slots share one (refused: NULL, and
 * libarchive's filter decodes on this thread as before); NULL too without
 * memory or a thread. */
static ce_ahead *ahead_open(reader *r, size_t n)
{
    if (!unpack_mem_take(r, (long long)CE_AHEAD_CHUNK * CE_AHEAD_CHUNKS)) return NULL;
    return ce_ahead_new(decoder_pull, r, r->buf, n, CE_AHEAD_CHUNK, CE_AHEAD_CHUNKS);
}

/* Compressed bytes, or the plain tar: for .xz input decoded by ce_xzmt, for
 * .zst and .gz by ce_ahead: the first block decides (libarchive then sees a
 * tar, and its own filters handle everything else).  Every compressed byte
 * passes reader_fill, so the digest is the same either way. */
la_ssize_t unpack_read_cb(struct archive *a, void *ud, const void **buf)
{
    reader *r = ud;
    ssize_t n = 0;
    if (!r->started) {
        r->started = true;
        n = reader_fill(r);
        if (n > 0 && ce_xzmt_magic(r->buf, (size_t)n)) {
            r->threaded = true;   /* before the thread starts: its pulls read it */
            r->xz = xz_open(r, (size_t)n);
            if (!r->xz) {
                archive_set_error(a, ENOMEM, "out of memory for the xz decoder");
                return -1;
            }
        } else if (n > 0 && !r->src->only_under && ce_ahead_magic(r->buf, (size_t)n)) {
            r->threaded = true;
            r->ahead = ahead_open(r, (size_t)n);
            if (!r->ahead) r->threaded = false;   /* decoded here: no thread reads it */
        }
    } else if (!r->xz && !r->ahead) {
        n = reader_fill(r);
    }
    if (r->ahead) {
        n = ce_ahead_read(r->ahead, buf);
        if (n < 0 && !ce_ahead_pull_failed(r->ahead)) {
            archive_set_error(a, ce_ahead_errno(r->ahead), "%s", ce_ahead_error(r->ahead));
            return -1;
        }
    } else if (r->xz) {
        n = ce_xzmt_read(r->xz, buf);
        if (n < 0 && !ce_xzmt_pull_failed(r->xz)) {
            archive_set_error(a, ce_xzmt_errno(r->xz), "%s", ce_xzmt_error(r->xz));
            return -1;
        }
    } else {
        *buf = r->buf;
    }
    if (n < 0) {
        archive_set_error(a, EIO, r->incomplete ? "download stopped before the end of the archive"
                                                : "read error");
        return -1;
    }
    return n;
}

/* libarchive stops at the tar's end marker, the .xz decoder need not have
 * reached the end of its stream by then (a block decoder's parser is at the
 * last block it handed out): the rest is decoded here, its plain bytes
 * dropped, so the parser (xzparse.c, or liblzma's stream decoder) checks the
 * index against the blocks decoded, its CRC32, the footer's CRC32, backward
 * size and flags, and what follows the stream, as `xz -t` does. */
int unpack_xz_rest(struct archive *a, reader *r)
{
    const void *buf;
    la_ssize_t n = 0;
    if (r->xz)
        while ((n = unpack_read_cb(a, r, &buf)) > 0) {}
    return n < 0 ? -1 : 0;
}

/* Trusting the writer (unpack.h): what was read is a prefix of the file it
 * verified (fetch.h: the inode read, whether .part or renamed), which it
 * never truncated since before the open; else the pass lost. */
static int await_verified(reader *r)
{
    const ce_unpack_src *s = r->src;
    unpack_slot_give(r);
    for (;;) {
        unsigned long seen = rings(r);
        bool stopped = writer_stopped(r);
        if (__atomic_load_n(&s->watch->verified, __ATOMIC_ACQUIRE)) break;
        if (stopped || cancelled(r)) {
            r->incomplete = true;
            return CE_ERR_RETRY;
        }
        await_ring(r, seen);
    }
    if (__atomic_load_n(&s->watch->gen, __ATOMIC_SEQ_CST) != r->gen0) {
        r->incomplete = true;
        return CE_ERR_RETRY;
    }
    return CE_OK;
}

/* The digest a cache entry was named after is not its own: it goes. */
static int bad_cache_entry(const ce_unpack_src *s, const char *got)
{
    unlink(s->path);
    return ce_fail(CE_ERR_INTEGRITY, "%s in the cache is not the file it is named after (%s): it was "
                   "deleted and nothing from it was installed; rerun to download %s again", s->path, got, s->label);
}

/* libarchive stops at the tar end marker; the digest covers the whole file. */
int unpack_finish_digest(reader *r)
{
    const ce_unpack_src *s = r->src;
    if (r->trust) return await_verified(r);
    for (;;) {
        ssize_t n = reader_fill(r);
        if (n == 0) break;
        if (n < 0) {
            if (r->incomplete) return CE_ERR_RETRY;
            return ce_fail(CE_ERR_IO, "cannot read %s: %s", s->path, strerror(errno));
        }
    }
    char got[CE_SHA256_HEX];
    ce_sha256_final(r->md, got);
    if (s->cache_entry && ((s->size >= 0 && r->done != s->size) || (s->sha256 && strcmp(got, s->sha256) != 0))) {
        char what[128];
        snprintf(what, sizeof what, "its sha256 is %s", got);
        return bad_cache_entry(s, what);
    }
    if (s->size >= 0 && r->done != s->size)
        return ce_fail(CE_ERR_INTEGRITY, "%s: size %lld, the manifest says %lld; the download is corrupt "
                       "(delete it from the cache and retry)", s->label, r->done, s->size);
    if (s->sha256 && strcmp(got, s->sha256) != 0)
        return ce_fail(CE_ERR_INTEGRITY, "%s: sha256 %s, the manifest says %s; nothing was installed "
                       "(delete it from the cache and retry)", s->label, got, s->sha256);
    return CE_OK;
}
