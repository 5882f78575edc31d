#include "install.h"
#include "archive/pkgindex.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "store/compose.h"
#include "components.h"
#include "fetch/fetch.h"
#include "core/bytes.h"
#include "core/clock.h"
#include "core/fault.h"
#include "core/file.h"
#include "core/rmtree.h"
#include "preflight.h"
#include "store/receipt.h"
#include "runfile.h"
#include "store/store.h"
#include "archive/unpack.h"
#include "core/version.h"

/* One pristine tree to produce in pkgs/: a CUDA runfile or a cuDNN archive. */
typedef struct need {
    const ce_artifact *art;
    bool is_runfile;
    char pkg[160];          /* "cuda-11.8.0", "cudnn-8.7.0.84-cuda11" */
    const char *version;    /* CUDA release (runfile check) or cuDNN release */
    ce_fetch_item *item;
    char cache[CE_PATH_MAX];       /* cache/<sha256>: our own copy, the fetch thread owns item */
    char staging[CE_PATH_MAX];     /* pkgs/.staging-* holding the unpacked tree, "" if none */
    bool retry;             /* cached, or the follow-mode unpack lost: unpack the verified file */
    bool lost;              /* the follow-mode unpack was lost (not cached), ... */
    char why[512];          /* ... and why */
} need;

#define MAX_NEEDS 32

static const char *url_base(const char *url)
{
    const char *s = strrchr(url, '/');
    return s && s[1] ? s + 1 : url;
}

/* ---- planning ---- */

static int add_need(ce_ctx *ctx, need *needs, size_t *n, const ce_artifact *art, bool is_runfile,
                    const char *pkg, const char *version)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(needs[i].pkg, pkg) == 0) return CE_OK;
    char path[4200];
    int rc = ce_store_path(ctx, "pkgs", path, sizeof path);
    if (rc) return rc;
    char tree[CE_PATH_MAX];
    if ((rc = ce_join(tree, sizeof tree, path, pkg))) return rc;
    if (ce_is_dir(tree) && !ctx->force) return CE_OK; /* unpacked by an earlier install */
    if (*n == MAX_NEEDS) return ce_fail(CE_ERR_USAGE, "too many toolchains in one install; split the command");
    need *nd = &needs[(*n)++];
    memset(nd, 0, sizeof *nd);
    nd->art = art;
    nd->is_runfile = is_runfile;
    snprintf(nd->pkg, sizeof nd->pkg, "%s", pkg);
    nd->version = version;
    return CE_OK;
}

/* Bytes still to download plus the unpacked estimate, against statvfs. */
static int space_preflight(ce_ctx *ctx, const need *needs, size_t n)
{
    double want = 0;
    for (size_t i = 0; i < n; i++) {
        long long size = needs[i].art->size;
        if (size < 0) continue; /* the manifest gives none: nothing to add */
        char cp[4200], part[4300];
        struct stat st;
        if (ce_cache_path(ctx, needs[i].art->sha256, cp, sizeof cp)) return ce_errcode();
        snprintf(part, sizeof part, "%s.part", cp);
        if (stat(cp, &st) != 0) {
            double left = (double)size;
            if (stat(part, &st) == 0 && st.st_size <= size) left -= (double)st.st_size;
            want += left;
        }
        want += (double)size * (needs[i].is_runfile ? CE_RUNFILE_UNPACK_FACTOR : CE_TARBALL_UNPACK_FACTOR);
    }
    if (want <= 0) return CE_OK;
    struct statvfs vs;
    if (statvfs(ctx->root, &vs) != 0) return CE_OK; /* cannot tell: let the writes speak */
    double avail = (double)vs.f_bavail * (double)vs.f_frsize;
    if (avail >= want) return CE_OK;
    char w[32], a[32];
    ce_bytes_text(w, sizeof w, want);
    ce_bytes_text(a, sizeof a, avail);
    return ce_fail(CE_ERR_SPACE, "not enough free space in %s: this install needs about %s "
                   "(downloads plus unpacked trees) and %s is free; free some space, or set CUDAENV_ROOT "
                   "to a larger filesystem", ctx->root, w, a);
}

/* ---- fetching, with cuDNN archives unpacked as they arrive ---- */

static void drop_stagings(need *needs, size_t n)
{
    ce_quiet q; /* cleanup must not overwrite the error being reported */
    ce_quiet_begin(&q, false);
    for (size_t i = 0; i < n; i++) {
        if (needs[i].staging[0]) ce_rm_tree(needs[i].staging);
        needs[i].staging[0] = '\0';
    }
    ce_quiet_end(&q);
}

static int unpack_cudnn(ce_ctx *ctx, need *nd, bool follow, const volatile int *done, const ce_fetch_watch *watch)
{
    int rc;
    if (!nd->staging[0] && (rc = ce_store_staging(ctx, "pkgs", nd->staging, sizeof nd->staging))) return rc;
    char part[4300];
    snprintf(part, sizeof part, "%s.part", nd->cache);
    char index[4400];   /* per-file sha256s, hashed while unpacking (pkgindex.h) */
    if ((rc = ce_store_path(ctx, "pkgs", index, sizeof index))) return rc;
    snprintf(index + strlen(index), sizeof index - strlen(index), "/%s.sha256.json", nd->pkg);
    ce_unpack_src src = { .path = nd->cache, .part = follow ? part : NULL, .writer_done = done,
                          .label = nd->art->url, .sha256 = nd->art->sha256, .size = nd->art->size,
                          .strip_top = true, .hash_index = index, .watch = follow ? watch : NULL,
                          .cache_entry = !follow };
    return ce_unpack(ctx, &src, nd->staging);
}

static int fetch_and_unpack(ce_ctx *ctx, const ce_manifest *m, need *needs, size_t n)
{
    ce_fetch_item items[MAX_NEEDS];
    ce_fetch_watch watch[MAX_NEEDS];   /* the fetch hashes, the follow-mode unpack trusts it (fetch.h) */
    ce_fetch_bell bell;                /* ... and rings it as the bytes arrive (bell.h) */
    memset(items, 0, sizeof items);
    memset(watch, 0, sizeof watch);
    for (size_t i = 0; i < n; i++) {
        items[i].url = needs[i].art->url;
        items[i].sha256 = needs[i].art->sha256;
        items[i].size = needs[i].art->size;
        items[i].label = url_base(needs[i].art->url);
        items[i].allow_http = m->local || ctx->insecure;
        if (ce_cache_path(ctx, needs[i].art->sha256, needs[i].cache, sizeof needs[i].cache)) return ce_errcode();
        memcpy(items[i].path, needs[i].cache, sizeof items[i].path);
        /* a cached archive is hashed by the pass that unpacks it, once */
        items[i].reader_hashes_cache = !needs[i].is_runfile;
        watch[i].bell = &bell;
        items[i].watch = &watch[i];
        needs[i].item = &items[i];
    }
    ce_emit(ctx, CE_EV_STEP, NULL, "downloading %zu file%s", n, n == 1 ? "" : "s");
    volatile int done = 0;
    ce_fetch_job job = { .ctx = ctx, .items = items, .n = n, .done = &done, .bell = &bell };
    pthread_t th;
    int berr = ce_fetch_bell_init(&bell);
    if (berr) return ce_fail(CE_ERR_OTHER, "cannot set up the download's signal: %s", strerror(berr));
    if (pthread_create(&th, NULL, ce_fetch_thread, &job) != 0) {
        ce_fetch_bell_destroy(&bell);
        return ce_fail(CE_ERR_OTHER, "cannot start the download thread");
    }

    /* While the downloads run, this thread unpacks cuDNN archives from the
     * growing .part files, muted (the fetch thread owns the event callback);
     * a lost overlapped pass leaves no error behind. */
    ce_quiet uq;
    ce_quiet_begin(&uq, true);
    int urc = CE_OK;
    for (size_t i = 0; i < n && urc == CE_OK; i++) {
        if (needs[i].is_runfile) continue;
        if (ce_exists(needs[i].cache)) {
            /* already cached: unpacked after the downloads, hashed as it is read */
            needs[i].retry = true;
            continue;
        }
        urc = unpack_cudnn(ctx, &needs[i], true, &done, &watch[i]);
        if (urc == CE_ERR_RETRY || urc == CE_ERR_INTEGRITY) {
            /* The download stopped, or started over (a server ignoring
             * Range), or sent bytes the manifest does not name: the fetch
             * reports a failure itself; after a success only the verified
             * file may call the archive bad. */
            needs[i].retry = true;
            needs[i].lost = true;
            snprintf(needs[i].why, sizeof needs[i].why, "%s", ce_errmsg());
            urc = CE_OK;
        }
    }
    if (urc != CE_OK) ce_quiet_keep(&uq);   /* the unpack's own failure */
    else ce_quiet_end(&uq);
    pthread_join(th, NULL);
    ce_fetch_bell_destroy(&bell);
    for (size_t i = 0; i < n; i++) needs[i].item = NULL; /* items[] dies with this frame */
    if (job.rc != CE_OK) {
        ce_status_put(&job.st);
        drop_stagings(needs, n);
        return job.rc;
    }
    if (urc != CE_OK) {
        drop_stagings(needs, n);
        return urc;
    }
    for (size_t i = 0; i < n; i++) {
        needs[i].item = &items[i];
        int rc = CE_OK;
        if (!needs[i].is_runfile && needs[i].retry) {
            /* cached, or the overlapped pass lost: unpack the verified file */
            if (!needs[i].staging[0] || (rc = ce_rm_tree(needs[i].staging)) == CE_OK) {
                needs[i].staging[0] = '\0';
                if (needs[i].lost) ce_unpack_lost(ctx, items[i].label, needs[i].why);
                ce_emit(ctx, CE_EV_STEP, items[i].label, "unpacking %s", items[i].label);
                rc = unpack_cudnn(ctx, &needs[i], false, &done, NULL);
            }
        } else if (needs[i].is_runfile) {
            rc = ce_store_staging(ctx, "pkgs", needs[i].staging, sizeof needs[i].staging);
            char tmp[4200] = "", logs[4200], log[4400];
            if (rc == CE_OK) rc = ce_store_staging(ctx, "pkgs", tmp, sizeof tmp);
            if (rc == CE_OK && (rc = ce_store_path(ctx, "logs", logs, sizeof logs)) == CE_OK &&
                (rc = ce_mkdir_p(logs, 0755)) == CE_OK) {
                snprintf(log, sizeof log, "%s/cuda-%s-runfile.log", logs, needs[i].version);
                rc = ce_runfile_install(ctx, items[i].path, items[i].url, needs[i].staging, tmp, log,
                                        needs[i].version);
            }
            if (tmp[0]) {
                ce_quiet q;
                ce_quiet_begin(&q, false);
                ce_rm_tree(tmp);
                ce_quiet_end(&q);
            }
        }
        needs[i].item = NULL;
        if (rc != CE_OK) {
            drop_stagings(needs, n);
            return rc;
        }
    }
    return CE_OK;
}

/* ---- composing one toolchain ---- */

static int compose_one(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r)
{
    char vdir[4200], pkgs[4200], final[4400], staging[4200];
    char cpkg[160], dpkg[160], ctree[4400], dtree[4400];
    int rc;
    if ((rc = ce_store_path(ctx, "versions", vdir, sizeof vdir)) ||
        (rc = ce_store_path(ctx, "pkgs", pkgs, sizeof pkgs)))
        return rc;
    ce_store_pkg_names(r->cuda->version, r->cudnn ? r->cudnn->version : NULL, cpkg, sizeof cpkg, dpkg, sizeof dpkg);
    if ((rc = ce_join(final, sizeof final, vdir, r->name)) || (rc = ce_join(ctree, sizeof ctree, pkgs, cpkg)) ||
        (rc = ce_join(dtree, sizeof dtree, pkgs, dpkg)))
        return rc;
    if ((rc = ce_store_staging(ctx, "versions", staging, sizeof staging))) return rc;

    double t0 = ce_mono_ms();
    ce_filelist files = { 0 };
    rc = ce_compose_tree(ctx, ctree, staging, "", &files);
    if (rc == CE_OK && r->cudnn) rc = ce_compose_cudnn(ctx, dtree, staging, &files);
    double t_compose = ce_mono_ms() - t0;
    const char *trees[] = { ctree, r->cudnn ? dtree : NULL, NULL };
    if (rc == CE_OK) rc = ce_pkgindex_hash_files(ctx, staging, trees, &files);

    const char *tf[64];
    ce_receipt rec;
    ce_receipt_init(&rec, m, r, ctx->platform, &files, tf, 64);
    rec.sources[rec.n_sources++] = (ce_receipt_source){ "runfile", r->runfile->url, r->runfile->sha256,
                                                       r->runfile->size, cpkg };
    if (r->cudnn && r->cudnn_archive)
        rec.sources[rec.n_sources++] = (ce_receipt_source){ "cudnn", r->cudnn_archive->url,
                                                           r->cudnn_archive->sha256, r->cudnn_archive->size, dpkg };
    if (rc == CE_OK) rc = ce_receipt_write(staging, &rec);
    if (rc == CE_OK) {
        ce_fsync_dir(staging);
        ce_fault_point("before-commit", NULL);
        rc = ce_store_commit(staging, final);
    }
    if (rc != CE_OK) {
        ce_quiet q;
        ce_quiet_begin(&q, false);
        ce_rm_tree(staging);
        ce_quiet_end(&q);
    } else {
        ce_emit(ctx, CE_EV_INFO, r->name, "composed %zu files (%zu hardlinked, %zu copied) in %.1f ms",
                files.n, files.linked, files.copied, t_compose);
        ce_emit(ctx, CE_EV_NOTE, r->name, "installed %s in %s", r->name, final);
    }
    ce_filelist_free(&files);
    return rc;
}

/* ---- the pipeline ---- */

static int commit_pkgs(ce_ctx *ctx, need *needs, size_t n)
{
    char pkgs[4200], final[4400];
    int rc = ce_store_path(ctx, "pkgs", pkgs, sizeof pkgs);
    for (size_t i = 0; rc == CE_OK && i < n; i++) {
        if ((rc = ce_join(final, sizeof final, pkgs, needs[i].pkg))) break;
        rc = ce_store_commit(needs[i].staging, final);
        if (rc == CE_OK) needs[i].staging[0] = '\0';
    }
    if (rc != CE_OK) drop_stagings(needs, n);
    return rc;
}

int ce_install(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r, size_t n)
{
    need needs[MAX_NEEDS];
    size_t nn = 0;
    bool todo[64] = { false };
    size_t ntodo = 0;
    char vdir[4200];
    /* the unpacker chdirs while the download thread writes: every store
     * path must be absolute */
    char abs[4096];
    if (ctx->root[0] != '/' && realpath(ctx->root, abs)) snprintf(ctx->root, sizeof ctx->root, "%s", abs);
    int rc = ce_store_path(ctx, "versions", vdir, sizeof vdir);
    if (rc) return rc;
    if (n > 64) return ce_fail(CE_ERR_USAGE, "too many toolchains in one install; split the command");

    for (size_t i = 0; i < n; i++) {
        char final[CE_PATH_MAX];
        if ((rc = ce_join(final, sizeof final, vdir, r[i].name))) return rc;
        bool dup = false;
        for (size_t j = 0; j < i; j++) dup = dup || (todo[j] && strcmp(r[j].name, r[i].name) == 0);
        if (dup) continue;
        int crc; /* NVIDIA's component archives where the release has them (components.c) */
        bool comps = ce_components_apply(ctx, &r[i], &crc);
        if (ce_is_dir(final) && !ctx->force) {
            /* what this spec selects and the toolchain lacks is added (components.h) */
            if (comps && (rc = ce_components_complete(ctx, m, &r[i], final))) return rc;
            if (!comps) ce_components_note_installed(ctx, r[i].name, final, NULL);
            continue;
        }
        if (comps) {
            if ((rc = ce_preflight_install(ctx, r[i].cuda)) || (rc = ce_components_install(ctx, m, &r[i])))
                return rc;
            continue;
        }
        if (crc) return crc;
        if (!r[i].runfile)
            return ce_fail(CE_ERR_NOTFOUND, "CUDA %s has no runfile for %s in the manifest",
                           r[i].cuda->version, ctx->platform);
        if ((rc = ce_preflight_install(ctx, r[i].cuda))) return rc;
        char cpkg[160], dpkg[160];
        ce_store_pkg_names(r[i].cuda->version, r[i].cudnn ? r[i].cudnn->version : NULL, cpkg, sizeof cpkg,
                           dpkg, sizeof dpkg);
        if ((rc = add_need(ctx, needs, &nn, r[i].runfile, true, cpkg, r[i].cuda->version))) return rc;
        if (r[i].cudnn && r[i].cudnn_archive &&
            (rc = add_need(ctx, needs, &nn, r[i].cudnn_archive, false, dpkg, r[i].cudnn->version)))
            return rc;
        todo[i] = true;
        ntodo++;
    }
    if (ntodo == 0) return CE_OK;
    if (nn > 0) {
        if ((rc = space_preflight(ctx, needs, nn))) return rc;
        if ((rc = fetch_and_unpack(ctx, m, needs, nn))) return rc;
        ce_fault_point("after-unpack", NULL);
        if ((rc = commit_pkgs(ctx, needs, nn))) return rc;
    }
    for (size_t i = 0; i < n; i++) {
        if (!todo[i]) continue;
        ce_emit(ctx, CE_EV_STEP, r[i].name, "composing %s", r[i].name);
        if ((rc = compose_one(ctx, m, &r[i]))) return rc;
    }
    return CE_OK;
}
