/* Internal to src/archive/unpack*.c: the reader that feeds libarchive the
 * archive's bytes (unpack_read.c: a plain file, or one still being
 * downloaded, hashed as it is read unless the download hashed it) and what
 * the extraction (unpack.c) calls of it.  Not for other modules. */
#ifndef CE_UNPACK_INT_H
#define CE_UNPACK_INT_H

#include <archive.h>
#include <stdbool.h>

#include "ahead.h"
#include "fetch/digest.h"
#include "unpack.h"
#include "xzmt.h"

/* 1 MiB reads: small blocks make libarchive's xz reader crawl (PERFORMANCE.md). */
#define READ_BLOCK (1u << 20)

typedef struct reader {
    ce_ctx *ctx;
    const ce_unpack_src *src;
    int fd;
    unsigned char *buf;
    long long done;
    ce_sha256 *md;
    bool incomplete;      /* follow mode: the writer stopped before the end */
    bool failed;
    bool started;         /* the first block was read and the format sniffed */
    bool writer_end;      /* follow mode: the file is complete, EOF is the end */
    bool trust;           /* follow mode with a watch: the writer hashes, not us */
    unsigned gen0;        /* the watch's gen before the file was opened */
    bool slot_held;
    ce_xzmt *xz;          /* .xz input: decoded here on several threads */
    bool serial;          /* .xz of one block (or no sizes): decodes on one core */
    ce_ahead *ahead;      /* .zst, .gz input: decoded here on its own thread (ahead.h) */
    bool stopping;        /* the extraction ended: a pull waiting for bytes gives up (atomic) */
    bool threaded;        /* a decoding thread pulls (set before it starts, cleared once joined) */
} reader;

/* unpack_read.c: open the archive (follow mode: wait for the .part, or the
 * writer giving up: CE_ERR_RETRY); libarchive's read callback (ud: the
 * reader); after extraction, the rest of an .xz stream checked, then the
 * digest of the whole file (or, trusting the writer, its verdict); the
 * decode slot given back. */
int unpack_reader_open(reader *r);
la_ssize_t unpack_read_cb(struct archive *a, void *ud, const void **buf);
int unpack_finish_digest(reader *r);
/* after the tar's end: the rest of .xz input decoded and checked to the end of
 * the stream (index, footer, padding); 0, or -1 with a's error set */
int unpack_xz_rest(struct archive *a, reader *r);
void unpack_slot_give(reader *r);
/* bytes of the install's decoder memory for a ring of r's archive (slots.h,
 * where the slots share a budget; always granted without); false: refused */
bool unpack_mem_take(reader *r, long long bytes);
/* After the extraction, before the reader's state is looked at: the
 * decoding thread (.xz, .zst, .gz) stopped (a pull waiting for bytes gives
 * up), joined and freed. */
void unpack_reader_stop(reader *r);

#endif
