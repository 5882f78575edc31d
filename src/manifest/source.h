/* Where the manifest comes from, and the local file every reader takes it from.
 *
 * The manifest is --manifest / CUDAENV_MANIFEST, else the built-in one
 * (share/cudaenv/manifests/cudaenv.json).  A path or file:// URL is read
 * where it is.  A remote manifest (http:// or https://) is never read over
 * the network by the commands that resolve specs: it is read from its local
 * copy in the store,
 *   $CUDAENV_ROOT/manifests/<key>.json        the bytes as fetched and verified
 *   $CUDAENV_ROOT/manifests/<key>.json.meta   {url, etag, last_modified, sha256, ...}
 * (<key>: 16 hex digits of the URL's FNV-1a hash), which only the full
 * binary writes, atomically (copy.h: fetch with conditional requests, check,
 * replace).  So env/use/exec/current and the cd hook work offline with a
 * remote manifest exactly as with the built-in one, and the resolution index
 * (index.h) is keyed to the local copy's content. */
#ifndef CE_MANIFEST_SOURCE_H
#define CE_MANIFEST_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "manifest.h"

typedef struct ce_msource {
    char origin[4096];   /* the URL, or the path (the built-in one when none is configured) */
    char path[4200];     /* the file to read: origin itself, or the URL's local copy */
    bool remote;         /* origin is http(s): path is the local copy */
    bool builtin;        /* nothing configured: the built-in manifest */
} ce_msource;

/* Path of the built-in manifest (next to the binary, then the install prefix). */
int ce_builtin_manifest(ce_ctx *ctx, char *out, size_t outsz);
/* The manifest cudaenv uses, as configured: --manifest / CUDAENV_MANIFEST,
 * else the config files' "manifest" (core/config.h; their "mirror" is
 * applied to ctx->mirror here too, under CUDAENV_MIRROR), else the built-in one. */
int ce_manifest_location(ce_ctx *ctx, char *out, size_t outsz);
/* The manifest named by --manifest or CUDAENV_MANIFEST ("" when none: the
 * config files or the built-in one decide), whether or not
 * ce_manifest_location has applied the config files to ctx since. */
const char *ce_manifest_given(const ce_ctx *ctx);
/* Fill *out for the manifest ctx uses.  No I/O beyond finding the built-in
 * manifest (CE_ERR_NOTFOUND when it is missing). */
int ce_manifest_source(ce_ctx *ctx, ce_msource *out);
/* Whether loc names a remote manifest (http:// or https://, any case). */
bool ce_manifest_is_remote(const char *loc);
/* The local copy of url: $CUDAENV_ROOT/manifests/<key>.json. */
int ce_manifest_copy_path(ce_ctx *ctx, const char *url, char *out, size_t outsz);
/* Load the manifest of src from src->path: relative URLs resolve against
 * src->origin; a remote one follows the remote rules (https only unless
 * --insecure).  A remote manifest with no local copy yet is CE_ERR_NOTFOUND
 * naming the URL and `cudaenv update`. */
int ce_manifest_load_source(ce_ctx *ctx, const ce_msource *src, ce_manifest **out);
/* The same, parsing only what cut(ctx, fd, path, arg, &outlen) keeps of the
 * manifest file open as fd (path names it; cut closes it): a malloc'ed
 * smaller manifest (manifest/slice.h), NULL to keep nothing.  The whole
 * manifest when cut keeps nothing or its result does not parse (then the
 * whole's own errors are the ones shown). */
typedef char *(*ce_manifest_cut)(ce_ctx *ctx, int fd, const char *path, const void *arg, size_t *outlen);
int ce_manifest_load_source_sliced(ce_ctx *ctx, const ce_msource *src, ce_manifest_cut cut, const void *arg,
                                   ce_manifest **out);
/* The top-level string member name of the JSON document at path (the
 * manifest's "updated") into out, scanning only as far as it: 1 found, 0 not
 * (no file, no such member, not a string, longer than n - 1).  Nothing is
 * validated: for what a command shows, never for what it decides. */
int ce_json_top_string(const char *path, const char *name, char *out, size_t n);

#endif
