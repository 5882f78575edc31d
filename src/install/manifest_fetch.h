/* Keeping the local copy of a remote manifest (manifest/copy.h) current,
 * over HTTP(S) with conditional requests: full binary only.
 *
 * ce_manifest_refresh asks the source when the copy is missing, stale (its
 * record older than CUDAENV_UPDATE_INTERVAL) or force is set (update):
 *   304            the copy is current: its record is re-dated
 *   200            the new text is checked before anything is replaced:
 *                  its raw bytes bound (CE_MANIFEST_MAX, while they arrive)
 *                  and signed by a trusted key (manifest_sig.h; unsigned
 *                  only where the source is opted out) before any parse;
 *                  a valid manifest (schema, every value: CE_ERR_INTEGRITY);
 *                  its signed claims (manifest.h; docs/MANIFEST.md): a
 *                  signed one names "source" and "serial", "source" is this
 *                  URL, "serial" not below the copy's nor the same with
 *                  other bytes, and for update not past "expires"; not dated before the
 *                  copy it replaces (an update never goes back in time: a
 *                  replayed old manifest is refused, CE_ERR_INTEGRITY;
 *                  before the built-in one:
 *                  refused for the project's manifest, signed with a
 *                  project key, a warning for a site's); then the copy and
 *                  its record are replaced, each atomically.
 *   no answer      (or too slow: fetch_text.c's minimum rate and deadline)
 *                  without force, an existing copy is used (a warning
 *                  names its age); with force or without a copy, the error.
 * Then a copy past its "expires" is used with a warning, or with force
 * (update) is CE_ERR_INTEGRITY, also after a 304.
 * A refused or failed refresh never touches the copy in place. */
#ifndef CE_MANIFEST_FETCH_H
#define CE_MANIFEST_FETCH_H

#include <stdbool.h>

#include "core/ctx.h"
#include "manifest/manifest.h"
#include "manifest/source.h"

typedef enum ce_mrefresh {
    CE_MREFRESH_FRESH,   /* within the interval: nothing asked */
    CE_MREFRESH_SAME,    /* asked: 304 (or the same bytes) */
    CE_MREFRESH_NEW,     /* asked: a new copy written */
    CE_MREFRESH_KEPT,    /* the source could not be reached: the old copy stays in use */
} ce_mrefresh;

int ce_manifest_refresh(ce_ctx *ctx, const ce_msource *src, bool force, ce_mrefresh *res);

#endif
