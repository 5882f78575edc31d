/* The unpackers of an install (parts.h): each archive unpacked in a thread
 * of its own while its download arrives, largest first; a CUDA runfile run
 * by its thread once its download verified. */
#include "parts.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bytes.h"
#include "core/fault.h"
#include "core/file.h"
#include "core/proc.h"
#include "core/rmtree.h"
#include "archive/slots.h"
#include "runfile.h"
#include "store/store.h"
#include "archive/unpack.h"
#include "archive/xzmt.h"

/* Download in a thread, unpack each archive in a thread of its own while it
 * downloads.
 *
 * As install.c does for cuDNN (unpack.h's follow mode): an unpacker starts as
 * soon as its archive's .part exists and tails it; the download hashes the
 * bytes as they arrive and the unpacker succeeds only once that download
 * verified the very bytes it read (fetch.h's watch: each archive is hashed
 * once); the trees are committed only after every download verified.  An
 * archive already in the cache is hashed by its unpacker as it reads it.
 * Each unpacker thread has a working directory of its own (unshare
 * CLONE_FS: ce_unpack extracts relative to its staging tree), its failure
 * comes back whole in its part (rc, st), and the decode slots (ncpu() of
 * them: an unpacker waiting for bytes holds none, one waiting for a slot has
 * not begun) are a plain mutex and condition variable.  Once the install
 * fails (an unpacker, or the downloads) the others are cancelled: they stop
 * at their next read and their trees go.  An overlapped pass that lost (the
 * download stopped or started over) unpacks the verified file once more,
 * hashing it; only that pass may call the archive bad.
 *
 * A CUDA runfile cannot be read while it downloads: its unpacker starts once
 * the download verified it (a cached runfile is hashed by the download
 * thread first), holds a decode slot while the installer runs (runfile.h)
 * and says what it does: the events of the downloads, the unpackers and this
 * thread go through one lock to the caller's callback. */

typedef struct shared {
    ce_ctx *ctx;            /* &wctx: what the threads use */
    ce_ctx wctx;            /* the caller's, its events through ev_mu */
    const ce_ctx *caller;
    pthread_mutex_t ev_mu;
    ce_fetch_bell bell;     /* the downloads' (bell.h), and an unpacker ended */
    volatile int done;      /* the downloads ended */
    int cancel;             /* the install failed: unpackers stop at their next read */
    ce_slots slots;         /* decode slots (slots.h) */
    ce_fetch_watch watch[MAX_PARTS];
    long long largest;      /* the largest archive's size: the unpackers' priorities */
} shared;

/* The install's events, one at a time, whichever thread says them. */
static void locked_event(void *ud, const ce_event *ev)
{
    shared *sh = ud;
    pthread_mutex_lock(&sh->ev_mu);
    sh->caller->event(sh->caller->event_ud, ev);
    pthread_mutex_unlock(&sh->ev_mu);
}

/* The runfile of p, verified in the cache, into p->staging (runfile.h),
 * with a private temporary directory and its log in logs/. */
static int run_runfile(ce_ctx *ctx, part *p, shared *sh)
{
    ce_slots_take(&sh->slots, p->id, p->size);
    char tmp[CE_PATH_MAX] = "", logs[CE_PATH_MAX], log[CE_PATH_MAX + 64];
    int rc;
    if (__atomic_load_n(&sh->cancel, __ATOMIC_ACQUIRE))
        rc = ce_fail(CE_ERR_OTHER, "the install failed before the CUDA %s installer ran", p->version);
    else if ((rc = ce_store_staging(ctx, "pkgs", tmp, sizeof tmp)) == CE_OK &&
             (rc = ce_store_path(ctx, "logs", logs, sizeof logs)) == CE_OK && (rc = ce_mkdir_p(logs, 0755)) == CE_OK) {
        snprintf(log, sizeof log, "%s/cuda-%s-runfile.log", logs, p->version);
        bool was = ce_mute(false);   /* its steps and warnings are the user's to see */
        rc = ce_runfile_install(ctx, p->cache, p->url, p->staging, tmp, log, p->version, &sh->cancel);
        ce_mute(was);
    }
    if (tmp[0]) {
        ce_quiet q;
        ce_quiet_begin(&q, false);
        ce_rm_tree(tmp);
        ce_quiet_end(&q);
    }
    ce_slots_give(&sh->slots, p->id);
    return rc;
}

static void *unpacker(void *arg)
{
    part *p = arg;
    shared *sh = p->sh;
    ce_ctx *ctx = sh->ctx;
    ce_mute(true);
    /* named for ps/top; the largest archives decode first (slots.h): the
     * priority of this thread, which its decoding threads inherit */
    prctl(PR_SET_NAME, "cudaenv-unpack");
    int nice = ce_slots_nice(p->size, sh->largest);
    if (nice) {   /* relative to the install's own (cudaenv run under nice) */
        errno = 0;
        int base = getpriority(PRIO_PROCESS, (id_t)gettid());
        if (errno == 0) (void)setpriority(PRIO_PROCESS, (id_t)gettid(), base + nice);
    }
    char partf[CE_PATH_MAX + 8], index[CE_PATH_MAX + 16];
    snprintf(partf, sizeof partf, "%s.part", p->cache);
    snprintf(index, sizeof index, "%s.sha256.json", p->tree);   /* per-file sha256s (pkgindex.h) */
    ce_unpack_src src = { .path = p->cache, .part = p->follow ? partf : NULL, .writer_done = &sh->done,
                          .cancel = &sh->cancel, .label = p->url, .sha256 = p->sha256, .size = p->size,
                          .strip_top = !p->nccl, .only_under = p->nccl ? "nvidia/nccl/" : NULL,
                          .hash_index = index, .watch = p->follow ? p->watch : NULL,
                          .cache_entry = !p->follow, .slots = &sh->slots, .slot_id = p->id };
    /* extraction chdirs into the staging tree: this thread's own directory */
    int rc = unshare(CLONE_FS) != 0
                 ? ce_fail(CE_ERR_OTHER, "cannot start an unpacker of %s: unshare: %s", p->name, strerror(errno))
             : p->runfile ? run_runfile(ctx, p, sh)
                          : ce_unpack(ctx, &src, p->staging);
    if (rc) ce_status_take(&p->st);
    p->rc = rc;
    __atomic_store_n(&p->ended, true, __ATOMIC_RELEASE);
    ce_fetch_bell_ring(&sh->bell);
    return NULL;
}

static int start_unpack(ce_ctx *ctx, part *p, bool follow, shared *sh)
{
    int rc = ce_store_staging(ctx, "pkgs", p->staging, sizeof p->staging);
    if (rc) return rc;
    p->follow = follow;
    p->sh = sh;
    p->rc = CE_OK;
    p->ended = false;
    p->state = 1; /* no event here: the download thread owns the callback */
    int err = pthread_create(&p->th, NULL, unpacker, p);
    if (err) {
        p->state = 0;
        return ce_fail(CE_ERR_OTHER, "cannot start an unpacker: %s", strerror(err));
    }
    p->joinable = true;
    return CE_OK;
}

/* The unpacker of p ended (p->ended): its result, its failure as the
 * calling thread's. */
static int reap(part *p)
{
    pthread_join(p->th, NULL);
    p->joinable = false;
    p->state = 2;
    if (p->rc) ce_status_put(&p->st);
    return p->rc;
}

void ce_parts_drop(plan *pl)
{
    ce_quiet q;   /* cleanup must not overwrite the error being reported */
    ce_quiet_begin(&q, false);
    for (size_t i = 0; i < pl->n; i++) {
        part *p = &pl->parts[i];
        if (p->joinable) reap(p);   /* cancelled: it stops at its next read */
        if (p->staging[0]) ce_rm_tree(p->staging);
        p->staging[0] = '\0';
    }
    ce_quiet_end(&q);
}

/* Archives unpacked at once: CUDAENV_UNPACK_JOBS, else the cores (at most 16). */
static long jobs(void)
{
    long n = ce_cpu_count();
    const char *e = ce_settings_now()->unpack_jobs;
    if (e && atol(e) > 0) n = atol(e);
    return n < 1 ? 1 : n > 16 ? 16 : n;
}

/* Of those, decoding at once (a slot each): never more than the cores, so
 * the largest archive, started first, has a core of its own to the end
 * instead of a share of one among many, while the rest pack the others. */
static long ncpu(void)
{
    long j = jobs(), c = ce_cpu_count();
    return j < c ? j : c;
}

/* Unpackers alive at once: enough to follow every running download (8
 * connections), waiting for bytes or for a slot. */
static long followers(void)
{
    long n = jobs();
    return n < 8 ? 8 : n;
}

/* Largest first, for the downloads and the unpackers: the biggest archive
 * (one xz block, one core) starts at once instead of ending last alone. */
static int by_size(const void *a, const void *b)
{
    long long x = (*(part *const *)a)->size, y = (*(part *const *)b)->size;
    return x < y ? 1 : x > y ? -1 : 0;
}

static bool ended(const part *p)
{
    return __atomic_load_n(&p->ended, __ATOMIC_ACQUIRE);
}

/* Whether p's unpacker may start: a runfile once its download verified it
 * (and renamed it), a retry once the downloads ended, a first pass once
 * its download began or the archive is in the cache. */
static bool ready(const part *p, bool fetched)
{
    char partf[CE_PATH_MAX + 8];
    snprintf(partf, sizeof partf, "%s.part", p->cache);
    if (p->runfile) return __atomic_load_n(&p->watch->verified, __ATOMIC_ACQUIRE) && ce_exists(p->cache);
    return p->retry ? fetched && ce_exists(p->cache) : ce_exists(p->cache) || ce_exists(partf);
}

/* The unpackers, started as their archives arrive, largest first, and
 * reaped; the install's first failure cancels the others. */
static int run_unpackers(ce_ctx *ctx, plan *pl, part **ord, shared *sh, ce_fetch_job *job)
{
    int rc = CE_OK;
    long slots = followers(), running = 0;
    for (;;) {
        unsigned long seen = ce_fetch_bell_rings(&sh->bell);   /* then look (bell.h) */
        bool fetched = __atomic_load_n(&sh->done, __ATOMIC_ACQUIRE);
        size_t left = 0;
        for (size_t i = 0; i < pl->n; i++) {
            part *p = ord[i];
            if (p->state == 1 && ended(p)) {
                ce_quiet q;   /* a lost overlapped pass leaves no error behind */
                ce_quiet_begin(&q, false);
                int r = reap(p);
                running--;
                if ((r == CE_ERR_RETRY || r == CE_ERR_INTEGRITY) && p->follow && !sh->cancel) {
                    /* the download stopped, started over, or sent bytes the
                     * manifest does not name: the fetch reports a failure
                     * itself; after a success the verified file decides */
                    char why[512];
                    snprintf(why, sizeof why, "%s", ce_errmsg());
                    ce_rm_tree(p->staging);
                    p->staging[0] = '\0';
                    p->state = 0;
                    p->retry = true;
                    ce_quiet_end(&q);
                    ce_unpack_lost(ctx, p->name, why);
                } else if (r && rc == CE_OK && !sh->cancel) {
                    ce_quiet_keep(&q);   /* the first failure is the one reported */
                    rc = r;
                } else {
                    ce_quiet_end(&q);
                }
            }
            if (p->state == 0 && rc == CE_OK && !sh->cancel && running < slots) {
                bool go = !ce_fault_point("unpack-start", p->cache) && ready(p, fetched);
                if (go && (rc = start_unpack(ctx, p, !p->retry && !p->cached && !p->runfile, sh)) == CE_OK)
                    running++;
            }
            left += p->state != 2;
        }
        if ((rc != CE_OK || (fetched && job->rc != CE_OK)) && !sh->cancel) {
            /* the install failed: the others stop at their next read */
            __atomic_store_n(&sh->cancel, 1, __ATOMIC_RELEASE);
            ce_fetch_bell_ring(&sh->bell);
        }
        if (running == 0 && (left == 0 || sh->cancel)) break;
        if (fetched && running == 0 && job->rc == CE_OK) {
            /* everything verified: whatever is left waits for a slot */
            bool any = false;
            for (size_t i = 0; i < pl->n; i++)
                any = any || (pl->parts[i].state == 0 && !ce_exists(pl->parts[i].cache));
            if (any) { rc = ce_fail(CE_ERR_IO, "a verified download vanished from the cache"); break; }
        }
        ce_fetch_bell_wait(&sh->bell, seen);   /* a download moved, or an unpacker ended */
    }
    return rc;
}

int ce_parts_fetch_unpack(ce_ctx *ctx, const ce_manifest *m, plan *pl)
{
    ce_fetch_item items[MAX_PARTS];
    part *ord[MAX_PARTS];
    size_t k = 0, nf = 0;
    long long bytes = 0, work = 0;   /* all of them; the archives the xz decoders share memory for */
    memset(items, 0, sizeof items);
    for (size_t i = 0; i < pl->n; i++) ord[i] = &pl->parts[i];
    qsort(ord, pl->n, sizeof *ord, by_size);
    shared *sh = calloc(1, sizeof *sh);
    if (!sh) return ce_fail(CE_ERR_NOMEM, "out of memory");
    sh->caller = ctx;
    sh->wctx = *ctx;
    sh->ctx = &sh->wctx;
    if (ctx->event) {
        sh->wctx.event = locked_event;
        sh->wctx.event_ud = sh;
    }
    sh->largest = pl->n ? ord[0]->size : 0;   /* ord: largest first */
    for (size_t i = 0; i < pl->n; i++) {
        part *p = ord[i];
        if (p->have) { p->state = 2; continue; }
        struct stat st;
        /* a cached runfile is hashed by the download thread: nothing reads it before */
        p->cached = !p->runfile && p->size >= 0 && stat(p->cache, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == p->size;
        p->watch = &sh->watch[k];
        p->id = (int)k;
        k++;
        bytes += p->size > 0 ? p->size : 0;
        work += p->size > 0 && !p->runfile ? p->size : 0;
        if (p->cached) {
            /* its unpacker hashes it as it reads it and, when it is not the
             * file it is named after, deletes it and fails the install; the
             * download thread never sees it, so it cannot fetch it again
             * meanwhile (one outcome, whatever the scheduling: issue 22) */
            ce_emit(ctx, CE_EV_DONE, ce_parts_url_base(p->url), "%s: already in the cache (its sha256 is checked as it is "
                    "read)", ce_parts_url_base(p->url));
            continue;
        }
        items[nf] = (ce_fetch_item){ .url = p->url, .sha256 = p->sha256, .size = p->size,
                                     .label = ce_parts_url_base(p->url), .allow_http = m->local || ctx->insecure,
                                     .watch = p->watch };
        memcpy(items[nf].path, p->cache, sizeof items[nf].path);
        nf++;
    }
    if (k == 0) {
        free(sh);
        return CE_OK;
    }
    int err = ce_slots_init(&sh->slots, (int)ncpu());
    if (err) {
        free(sh);
        return ce_fail(CE_ERR_OTHER, "cannot set up the decode slots: %s", strerror(err));
    }
    if ((err = ce_fetch_bell_init(&sh->bell))) {
        ce_slots_destroy(&sh->slots);
        free(sh);
        return ce_fail(CE_ERR_OTHER, "cannot set up the unpackers' signal: %s", strerror(err));
    }
    if ((err = pthread_mutex_init(&sh->ev_mu, NULL))) {
        ce_fetch_bell_destroy(&sh->bell);
        ce_slots_destroy(&sh->slots);
        free(sh);
        return ce_fail(CE_ERR_OTHER, "cannot set up the install's events: %s", strerror(err));
    }
    for (size_t i = 0; i < k; i++) sh->watch[i].bell = &sh->bell;
    ce_slots_budget(&sh->slots, (long long)ce_xzmt_budget(), work);   /* the decoders' memory (xzmt.h) */
    char sz[32];
    ce_bytes_text(sz, sizeof sz, (double)bytes);
    ce_emit(ctx, CE_EV_STEP, NULL, "downloading %zu archive%s (%s) and unpacking them on %ld core%s", k,
            k == 1 ? "" : "s", sz, ncpu(), ncpu() == 1 ? "" : "s");
    ce_fetch_job job = { .ctx = sh->ctx, .items = items, .n = nf, .done = &sh->done, .bell = &sh->bell };
    pthread_t th;
    int rc = CE_OK;
    if (pthread_create(&th, NULL, ce_fetch_thread, &job) != 0) {
        rc = ce_fail(CE_ERR_OTHER, "cannot start the download thread");
    } else {
        rc = run_unpackers(sh->ctx, pl, ord, sh, &job);
        pthread_join(th, NULL);
    }
    ce_slots_destroy(&sh->slots);
    ce_fetch_bell_destroy(&sh->bell);
    pthread_mutex_destroy(&sh->ev_mu);
    free(sh);
    if (rc == CE_OK && job.rc != CE_OK) {
        ce_status_put(&job.st);
        rc = job.rc;
    }
    if (rc != CE_OK) ce_parts_drop(pl);
    return rc;
}
