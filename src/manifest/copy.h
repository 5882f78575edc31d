/* The local copy of a remote manifest (source.h): its record beside it and
 * the rules for replacing it.  The bytes fetched are kept as they came
 * (<key>.json) with <key>.json.meta, a small JSON record:
 *   {"url": "...", "etag": "...", "last_modified": "...", "sha256": "<of the copy>",
 *    "updated": "<the manifest's updated>", "fetched": <unix time of the last 200>,
 *    "signed_by": "<key name>" | null, "serial": <the manifest's serial> | null,
 *    "expires": "<the manifest's expires>" | null}
 * The serial is the highest one taken from this URL: the next copy must
 * carry a higher one, or the same with the same bytes (manifest_fetch.h).
 * The record's mtime is when the source was last asked (a 304 rewrites it);
 * the copy counts as fresh for CUDAENV_UPDATE_INTERVAL seconds (default a
 * day) after that: within it, nothing asks the network.  Only the full
 * binary writes copies (install/manifest_fetch.c), copy first and record
 * second, each atomically: a failure at any point keeps the old copy. */
#ifndef CE_MANIFEST_COPY_H
#define CE_MANIFEST_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "core/ctx.h"
#include "manifest.h"
#include "source.h"

#define CE_UPDATE_INTERVAL_DEFAULT 86400

typedef struct ce_mcopy_meta {
    char url[4096];
    char etag[256];
    char last_modified[64];
    char sha256[65];
    char updated[32];        /* the manifest's "updated" */
    char signed_by[128];     /* the key that verified it, "" when unsigned */
    long long serial;        /* the manifest's "serial", -1 when it has none */
    char expires[32];        /* the manifest's "expires", "" when none */
    long long fetched;       /* unix time of the last download (a 200) */
    time_t checked;          /* the record's mtime: the last question to the source */
} ce_mcopy_meta;

/* Read the record of src's copy: CE_OK, CE_ERR_NOTFOUND when there is none
 * (or it is not ours / for another URL); quiet. */
int ce_mcopy_meta_read(const ce_msource *src, ce_mcopy_meta *out);
/* Seconds a copy stays fresh: CUDAENV_UPDATE_INTERVAL (0: always ask), else
 * the config's update_interval, else the default. */
long ce_mcopy_interval(ce_ctx *ctx);
/* The copy of src exists and its source was asked within the interval. */
bool ce_mcopy_fresh(ce_ctx *ctx, const ce_msource *src);
/* Replace the copy with text (already checked by the caller) and write its
 * record (meta->checked is ignored: now).  Creates $CUDAENV_ROOT/manifests. */
int ce_mcopy_write(const ce_msource *src, const char *text, size_t len, const ce_mcopy_meta *meta);
/* The source answered 304: the record is rewritten as it was (its mtime now). */
int ce_mcopy_touch(const ce_msource *src, const ce_mcopy_meta *meta);

#endif
