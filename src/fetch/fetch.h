/* Downloads into the content-addressed cache $CUDAENV_ROOT/cache/<sha256>
 * (libcurl multi: several artifacts in parallel).  Full binary only.
 *
 *  - A file is written as <sha256>.part and hashed while the bytes arrive;
 *    size and sha256 are checked before the rename to <sha256>, so nothing
 *    unverified ever carries the final name.  The name comes from the
 *    manifest, never from the server (Content-Disposition is ignored).
 *  - Interrupted downloads resume with "Range: bytes=N-" (on retry in the
 *    same run and on the next run: the .part prefix is hashed first).  A
 *    server that ignores Range (200 with the whole body) restarts from 0.
 *  - Connection errors, stalls and 5xx are retried with exponential backoff
 *    (CE_FETCH_ATTEMPTS attempts without progress); other 4xx fail at once.
 *  - https only unless allow_http; redirects are followed (at most 10) but
 *    never to http:// unless allow_http.  TLS verification is always on;
 *    CURL_CA_BUNDLE names the CA file; https_proxy/no_proxy as libcurl reads
 *    them.
 *  - Bounded: no byte for the stall time drops the connection and retries
 *    (a CE_EV_WARN "no data for 30 s from HOST, retrying (2/5)"); a rate
 *    window averaging under the minimum rate, or the artifact's deadline
 *    (base + size, or the ceiling, at 256 KiB/s) fails it; without a size
 *    at most the ceiling is accepted; ENOSPC deletes the .part.
 *  - At most CUDAENV_MAX_CONNECTIONS (default 8) transfers run at once, on
 *    up to min(connections, cores) threads,
 *    each with its own multi handle: the thread that receives an item's
 *    bytes writes and hashes them (one pass); items are taken in the order
 *    given (put the largest first), one more by the thread holding the
 *    fewest; the first fatal error stops them all.  Events come one at a
 *    time, and a warning another thread said just before is not repeated.
 *  - Test-only knobs: CUDAENV_RETRY_DELAY_MS (backoff base, default 1000),
 *    CUDAENV_STALL_TIMEOUT (seconds without a byte before a retry, default 30),
 *    CUDAENV_RATE_WINDOW (s, 60), CUDAENV_MIN_RATE (bytes/s, 4096),
 *    CUDAENV_DEADLINE_BASE (s, 900), CUDAENV_FETCH_CEILING (bytes, 16 GiB).
 * Progress: ce_progress(ctx, label, done, total, rate) about 10x a second per
 * item, and one CE_EV_DONE per item when it is verified (or found cached). */
/* (Ctrl-C: ce_fetch_stop_all below says exactly what each .part keeps.) */
#ifndef CE_FETCH_H
#define CE_FETCH_H

#include <stdbool.h>
#include <stddef.h>

#include "bell.h"
#include "core/ctx.h"
#include "core/status.h"

#define CE_FETCH_ATTEMPTS 5

/* What a reader following a download (unpack.h's follow mode) needs to use
 * its bytes without hashing them a second time: gen is incremented before the
 * .part (or a cached file) is ever truncated, deleted or started over;
 * verified is set once the .part's bytes passed the size and sha256 checks
 * (hashed as they arrived; before the fdatasync and the rename, which a
 * failure of makes the whole fetch fail), or a cached file was hashed here.
 * The .part keeps its inode from the first open to the rename, so a reader
 * that read the manifest's size of bytes, in order from byte 0, of the
 * .part or of path, with gen unchanged since before it opened the file, read
 * exactly the verified bytes.  gen and verified are accessed with __atomic
 * builtins.  bell (optional, bell.h) is rung after each change a follower
 * waits for: the .part opened, bytes written, gen or verified changed, the
 * file renamed. */
typedef struct ce_fetch_watch {
    unsigned gen;
    int verified;
    ce_fetch_bell *bell;
} ce_fetch_watch;

typedef struct ce_fetch_item {
    const char *url;        /* absolute, mirror already applied by the manifest loader */
    const char *sha256;     /* 64 lowercase hex, required */
    long long size;         /* expected bytes, -1 unknown */
    const char *label;      /* for progress events, e.g. "cuda_11.8.0_520.61.05_linux.run" */
    bool allow_http;        /* manifest was local or --insecure: http:// and file:// too */
    bool reader_hashes_cache; /* a cached file of the right size is not hashed here: the caller
                               hashes it in the pass that reads it (ce_unpack with .sha256 and
                               .cache_entry), so it is read and hashed once */
    ce_fetch_watch *watch;  /* optional, see above */
    const char *bearer;     /* optional: "Authorization: Bearer" token (an OCI registry's) ... */
    const char *userpwd;    /* ... or "user:pass" for Basic; never sent to another host on a redirect */
    char path[CE_PATH_MAX];        /* out: $CUDAENV_ROOT/cache/<sha256> once verified */
} ce_fetch_item;

/* Following a download from another thread (unpacking while it arrives):
 * prefill path with ce_cache_path (ce_fetch_all then leaves it untouched)
 * and read path + ".part".  It grows sequentially from byte 0, except that it
 * is truncated to 0 when a server ignores Range, and unlinked on a size or
 * sha256 failure; it is renamed to path only after it verified.  Up to 1 MiB
 * per item may still be in memory, not yet in the file. */

/* Fetch all items in parallel into the cache.  An item already in the cache
 * (right size, and its sha256 checked again: a cached file that does not
 * hash to its name is deleted and is CE_ERR_INTEGRITY; with
 * reader_hashes_cache the caller's reading pass does that) is not downloaded again.  ctx->offline: cache only; a missing
 * file is CE_ERR_NOTFOUND naming it.  Errors: CE_ERR_DOWNLOAD (network, HTTP
 * status, refused URL or redirect), CE_ERR_INTEGRITY (size or sha256, the
 * .part is deleted), CE_ERR_IO, CE_ERR_USAGE (bad sha256 in the item).  On
 * the first fatal error the other transfers stop; their .part files stay
 * for the next run to resume.  The first failure is the message in ctx. */
int ce_fetch_all(ce_ctx *ctx, ce_fetch_item *items, size_t n);

/* ce_fetch_all on a thread of its own, for a caller that follows the
 * downloads meanwhile (unpack.h's follow mode): pthread_create(&th, NULL,
 * ce_fetch_thread, &job).  When ce_fetch_all returned, its result is in rc,
 * its failure in st (for the joiner's ce_status_put), *done is set to 1
 * (a release store), bell (optional) rung, and the thread ends. */
typedef struct ce_fetch_job {
    ce_ctx *ctx;
    ce_fetch_item *items;
    size_t n;
    volatile int *done;
    ce_fetch_bell *bell;
    int rc;
    ce_status st;
} ce_fetch_job;
void *ce_fetch_thread(void *job);

/* GET a small text (a manifest) into a NUL-terminated malloc'ed buffer of at
 * most max bytes (more: CE_ERR_DOWNLOAD).  Same URL, redirect, TLS and retry
 * rules as ce_fetch_all.  Not cached. */
int ce_fetch_text(ce_ctx *ctx, const char *url, size_t max, bool allow_http,
                  char **buf, size_t *len);
/* The same as a conditional request: the validators of the copy held
 * (etag, last_modified; "" or NULL: none) go out as If-None-Match /
 * If-Modified-Since; status is then 200 (*buf holds the text) or 304 (the
 * copy is current: *buf NULL), and new_etag / new_last_modified what the
 * server sent with it ("" when none).  On failure status is the HTTP
 * status of the last attempt (404: not there), 0 without one.
 * cond NULL: ce_fetch_text. */
typedef struct ce_text_cond {
    const char *etag, *last_modified;
    long status;
    char new_etag[256], new_last_modified[64];
} ce_text_cond;
int ce_fetch_text_cond(ce_ctx *ctx, const char *url, size_t max, bool allow_http, ce_text_cond *cond,
                       char **buf, size_t *len);

/* cache/.cudaenv-names: what each download was called, so that `cache list`
 * names a download no receipt names (one an uninstall left, a partial one,
 * one of another manifest's) without reading any manifest (issue 43).  One
 * line a download, "<sha256> <name>\n", the name ce_url_file_name's (the
 * URL's last path segment without query or fragment, at most
 * CE_CACHE_NAME_MAX bytes, no control byte: other names are not written),
 * the one receipts' labels use too, appended by ce_fetch_all in one
 * write (O_APPEND: whole lines) before the transfers begin (not with
 * ctx->unnamed: a mirror's work cache); the file starts
 * over past CE_CACHE_NAMES_MAX / 2 bytes.  A label, never trusted for
 * anything else: readers bound it to CE_CACHE_NAMES_MAX and escape it. */
#define CE_CACHE_NAMES ".cudaenv-names"
#define CE_CACHE_NAMES_MAX (512u << 10)
#define CE_CACHE_NAME_MAX 200
void ce_cache_names_note(ce_ctx *ctx, const ce_fetch_item *const *items, size_t n);

/* $CUDAENV_ROOT/cache/<sha256> (no check that it exists). */
int ce_cache_path(ce_ctx *ctx, const char *sha256, char *out, size_t outsz);

/* What a .part keeps when the process is interrupted (ce_fetch_stop_all). */
typedef struct ce_fetch_kept {
    const char *label;      /* the item's label (or URL) */
    long long bytes;        /* the .part's size now: the next run resumes at this byte (0: from the start) */
    long long size;         /* the whole file's, -1 unknown */
} ce_fetch_kept;

/* For an interrupt (SIGINT, SIGTERM) right before the process ends; from a
 * thread of its own, never a signal handler nor a download thread.  Every
 * download of this process writes the bytes it holds in memory (up to
 * 1 MiB each) to its .part, then stops for good: it returns with every
 * download's lock held, so no .part changes again and the process must end
 * next.  Fills out[0..max) with the .part files that keep bytes or whose
 * transfer had begun (a verified one, a deleted one and one still queued
 * with no byte are left out) and returns how many there are (may exceed
 * max). */
size_t ce_fetch_stop_all(ce_fetch_kept *out, size_t max);

#endif
