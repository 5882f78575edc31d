/* Mirror bundles (full binary): exactly the files install SPEC fetches,
 * under NVIDIA's relative paths in one directory, plus DIR/cudaenv.json, a
 * manifest of just those files with relative URLs.  Any static server (nginx,
 * python3 -m http.server, S3) or a shared filesystem then serves it:
 *   CUDAENV_MANIFEST=https://mirror.lab/cuda/cudaenv.json cudaenv install tf-2.14
 *
 *   DIR/cudaenv.json                     schema 1, URLs relative to DIR; a
 *                                        redist entry lists the components held
 *                                        per platform (mirror_components), and
 *                                        the source's profiles are copied
 *   DIR/compute/cuda/redist/redistrib_<ver>.json + <comp>/<platform>/...tar.xz
 *                                        a release with a JSON: the components
 *                                        install's selection picks (components.h
 *                                        ce_components_plan: profile, --components)
 *   DIR/compute/cuda/<ver>/...run        a release without one (or --from runfile)
 *   DIR/compute/cudnn/redist/...
 *   DIR/.cudaenv-mirror/cache/<sha256>[.part]  downloads in progress (resumable),
 *                                        renamed into place once verified
 *   DIR/.cudaenv-mirror/.lock            one mirror run at a time
 *
 * Downloads reuse the fetch pipeline (resume, retry, size + sha256 before the
 * rename); a file already in $CUDAENV_ROOT/cache is linked or copied instead
 * of downloaded.  Every path under DIR goes through mirror_dir.h (dirfds,
 * O_NOFOLLOW, exclusive temporaries; as root the trust rule on DIR and its
 * parents).  Running again adds specs: a file already present is kept only
 * when it hashes to its pin, and the manifest is merged (entries of earlier
 * runs stay).  ce_mirror_check (mirror_check.c) re-hashes every file the
 * manifest names, confined to the bundle. */
#ifndef CE_MIRROR_H
#define CE_MIRROR_H

#include <stdbool.h>
#include <stddef.h>

#include "archive/repack.h"
#include "core/ctx.h"
#include "manifest/manifest.h"
#include "manifest/resolve.h"

#define CE_MIRROR_MANIFEST "cudaenv.json"
#define CE_MIRROR_MAX_PLATFORMS 4

typedef struct ce_mirror_req {
    const char *dir;
    const char *src_text;      /* the source manifest's JSON text */
    size_t src_len;
    const ce_manifest *m;      /* the same, parsed (resolved URLs) */
    const ce_spec *specs;      /* what to mirror; ignored with all */
    size_t n_specs;
    const char *cudnn;         /* --cudnn override ("" none) */
    bool no_cudnn;
    bool all;                  /* everything the manifest names */
    const char *platforms[CE_MIRROR_MAX_PLATFORMS]; /* default: ctx->platform */
    size_t n_platforms;
    const char *url;           /* --url: where nodes fetch DIR/cudaenv.json ("source"); NULL keeps it */
    ce_repack_fmt repack;      /* --repack (mirror_repack.c); NONE: the one DIR's manifest records, if any */
} ce_mirror_req;

typedef struct ce_mirror_stats {
    size_t files;              /* files the mirror's manifest names after the run */
    size_t added;              /* files placed by this run */
    size_t kept;               /* already present */
    long long bytes_fetched;   /* bytes this run placed */
    size_t bad;                /* ce_mirror_check: missing or wrong files */
    ce_repack_fmt repack;      /* the format the run repacked in */
    size_t repacked;           /* archives this run repacked */
    size_t repack_kept;        /* repacked by an earlier run, re-hashed and kept */
    long long repack_bytes;    /* bytes this run's repacks hold */
} ce_mirror_stats;

/* Fetch what req needs into req->dir and write dir/cudaenv.json (merged
 * with an existing one).  Errors as ce_fetch_all, CE_ERR_NOTFOUND for a spec
 * or platform the manifest lacks, CE_ERR_INTEGRITY for an existing
 * cudaenv.json that is not a valid manifest. */
int ce_mirror_build(ce_ctx *ctx, const ce_mirror_req *req, ce_mirror_stats *st);

/* Where a manifest URL's file goes in the mirror (the policy that keeps
 * files inside DIR): a relative URL as is, https://developer.download.nvidia.com/X
 * -> X, another absolute URL -> its path; query and fragment dropped.
 * CE_ERR_INTEGRITY for an empty path, an absolute one, "." or ".." segments,
 * "//", control characters or "\\", and cudaenv.json / .cudaenv-mirror. */
int ce_mirror_rel_path(const char *url, char *out, size_t outsz);

/* Re-hash every file dir/cudaenv.json names.  Each bad file is reported as a
 * CE_EV_WARN naming it; returns CE_ERR_INTEGRITY when any is missing or
 * differs (st->bad counts them), CE_OK when all match. */
int ce_mirror_check(ce_ctx *ctx, const char *dir, ce_mirror_stats *st);

/* Files a mirror's cudaenv.json names (runfiles, cuDNN archives, redistrib
 * JSONs and the components listed under redist.mirror_components). */
struct cJSON;
size_t ce_mirror_count(const struct cJSON *j);

#endif
