/* The unpackers of a components install (parts.h): each archive unpacked in
 * a child process while its download arrives, largest first. */
#include "parts.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/bytes.h"
#include "core/fault.h"
#include "core/file.h"
#include "core/proc.h"
#include "core/rmtree.h"
#include "fetch/forkgate.h"
#include "archive/slots.h"
#include "store/store.h"
#include "archive/unpack.h"
#include "archive/xzmt.h"

/* Download in a thread, unpack each archive in a child while it downloads.
 *
 * As install.c does for cuDNN (unpack.h's follow mode): an unpacker starts as
 * soon as its archive's .part exists and tails it; the download hashes the
 * bytes as they arrive and the unpacker succeeds only once that download
 * verified the very bytes it read (fetch.h's watch: each archive is hashed
 * once); the trees are committed only after every download verified.  An
 * archive already in the cache is hashed by its unpacker as it reads it.
 * The unpackers are children, so "the download stopped", the watches and the
 * decode slots (ncpu() of them: an unpacker waiting for bytes holds none,
 * one waiting for a slot has not begun)
 * live in a shared page.  An overlapped pass that lost (the download stopped
 * or started over) unpacks the verified file once more, hashing it; only
 * that pass may call the archive bad. */

typedef struct shared {
    volatile int done;      /* the downloads ended */
    ce_slots slots;         /* decode slots (slots.h) */
    ce_fetch_watch watch[MAX_PARTS];
    long long largest;      /* the largest archive's size: the unpackers' priorities */
} shared;

static int start_unpack(ce_ctx *ctx, part *p, bool follow, shared *sh)
{
    int rc = ce_store_staging(ctx, "pkgs", p->staging, sizeof p->staging);
    if (rc) return rc;
    int fds[2];
    if (pipe(fds) != 0) return ce_fail(ctx, CE_ERR_IO, "pipe: %s", strerror(errno));
    pid_t parent = getpid(), pid = ce_forkgate_fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return ce_fail(ctx, CE_ERR_OTHER, "cannot start an unpacker: %s", strerror(errno));
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);   /* the parent died before prctl: no signal will come */
        close(fds[0]);
        ce_mute(true);
        /* named for ps/top; the largest archives decode first (slots.h) */
        prctl(PR_SET_NAME, "cudaenv-unpack");
        int nice = ce_slots_nice(p->size, sh->largest);
        if (nice) (void)setpriority(PRIO_PROCESS, 0, nice);   /* its threads inherit it */
        char partf[4300];
        snprintf(partf, sizeof partf, "%s.part", p->cache);
        char index[4500];   /* per-file sha256s, hashed while unpacking (pkgindex.h) */
        snprintf(index, sizeof index, "%s.sha256.json", p->tree);
        ce_unpack_src src = { .path = p->cache, .part = follow ? partf : NULL, .writer_done = &sh->done,
                              .label = p->url, .sha256 = p->sha256, .size = p->size, .strip_top = !p->nccl,
                              .only_under = p->nccl ? "nvidia/nccl/" : NULL,
                              .hash_index = index, .watch = follow ? p->watch : NULL,
                              .cache_entry = !follow, .slots = &sh->slots, .slot_id = p->id };
        int urc = ce_unpack(ctx, &src, p->staging);
        if (urc) {
            size_t len = strlen(ce_errmsg());
            if (write(fds[1], ce_errmsg(), len) < 0) urc = CE_ERR_IO;
        }
        _exit(urc ? -urc : 0);
    }
    close(fds[1]);
    p->pid = pid;
    p->pipe = fds[0];
    p->follow = follow;
    p->state = 1; /* no event here: the download thread owns the callback */
    return CE_OK;
}

static int reap(ce_ctx *ctx, part *p, bool block)
{
    int st;
    pid_t w = waitpid(p->pid, &st, block ? 0 : WNOHANG);
    if (w == 0) return 1; /* still running */
    p->state = 2;
    char msg[4096] = "";
    ssize_t n = p->pipe >= 0 ? read(p->pipe, msg, sizeof msg - 1) : 0;
    msg[n > 0 ? n : 0] = '\0';
    if (p->pipe >= 0) close(p->pipe);
    p->pipe = -1;
    if (w < 0) return ce_fail(ctx, CE_ERR_OTHER, "lost the unpacker of %s: %s", p->name, strerror(errno));
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return CE_OK;
    p->killed = WIFSIGNALED(st);
    int code = WIFEXITED(st) ? -WEXITSTATUS(st) : CE_ERR_OTHER;
    if (msg[0]) return ce_fail(ctx, code, "%s", msg);
    return ce_fail(ctx, code, "unpacking %s (%s) failed%s", p->name, p->url,
                   WIFSIGNALED(st) ? " (the unpacker was killed)" : "");
}

void ce_parts_drop(ce_ctx *ctx, plan *pl)
{
    ce_quiet q;   /* cleanup must not overwrite the error being reported */
    ce_quiet_begin(&q, false);
    for (size_t i = 0; i < pl->n; i++) {
        part *p = &pl->parts[i];
        if (p->state == 1) {
            kill(p->pid, SIGKILL);
            reap(ctx, p, true);
        }
        if (p->staging[0]) ce_rm_tree(ctx, p->staging);
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

int ce_parts_fetch_unpack(ce_ctx *ctx, const ce_manifest *m, plan *pl)
{
    ce_fetch_item items[MAX_PARTS];
    part *ord[MAX_PARTS];
    size_t k = 0, nf = 0;
    long long bytes = 0;
    memset(items, 0, sizeof items);
    for (size_t i = 0; i < pl->n; i++) ord[i] = &pl->parts[i];
    qsort(ord, pl->n, sizeof *ord, by_size);
    shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) return ce_fail(ctx, CE_ERR_NOMEM, "mmap: %s", strerror(errno));
    memset(sh, 0, sizeof *sh);
    sh->largest = pl->n ? ord[0]->size : 0;   /* ord: largest first */
    for (size_t i = 0; i < pl->n; i++) {
        part *p = ord[i];
        if (p->have) { p->state = 2; continue; }
        struct stat st;
        p->cached = p->size >= 0 && stat(p->cache, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == p->size;
        p->watch = &sh->watch[k];
        p->id = (int)k;
        k++;
        bytes += p->size > 0 ? p->size : 0;
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
    int serr = k ? ce_slots_init(&sh->slots, (int)ncpu()) : 0;
    if (k == 0 || serr) {
        munmap(sh, sizeof *sh);
        return k == 0 ? CE_OK : ce_fail(ctx, CE_ERR_OTHER, "cannot share the decode slots: %s", strerror(serr));
    }
    ce_slots_budget(&sh->slots, (long long)ce_xzmt_budget(), bytes);   /* the decoders' memory (xzmt.h) */
    char sz[32];
    ce_bytes_text(sz, sizeof sz, (double)bytes);
    ce_emit(ctx, CE_EV_STEP, NULL, "downloading %zu archive%s (%s) and unpacking them on %ld core%s", k,
            k == 1 ? "" : "s", sz, ncpu(), ncpu() == 1 ? "" : "s");
    volatile int *done = &sh->done;
    ce_fetch_job job = { .ctx = ctx, .items = items, .n = nf, .done = done };
    pthread_t th;
    ce_forkgate_enter();
    if (pthread_create(&th, NULL, ce_fetch_thread, &job) != 0) {
        ce_forkgate_release();
        ce_slots_destroy(&sh->slots);
        munmap(sh, sizeof *sh);
        return ce_fail(ctx, CE_ERR_OTHER, "cannot start the download thread");
    }
    int rc = CE_OK;
    long slots = followers(), running = 0;
    for (;;) {
        bool fetched = __atomic_load_n(done, __ATOMIC_ACQUIRE);
        size_t left = 0;
        for (size_t i = 0; i < pl->n; i++) {
            part *p = ord[i];
            char partf[4300];
            snprintf(partf, sizeof partf, "%s.part", p->cache);
            if (p->state == 1) {
                ce_quiet q;   /* a lost overlapped pass leaves no error behind */
                ce_quiet_begin(&q, false);
                int r = reap(ctx, p, false);
                if (r == 1) { ce_quiet_end(&q); continue; }
                running--;
                if (p->killed) ce_slots_reclaim(&sh->slots, p->id); /* a slot it held */
                if ((r == CE_ERR_RETRY || r == CE_ERR_INTEGRITY) && p->follow) {
                    /* the download stopped, started over, or sent bytes the
                     * manifest does not name: the fetch reports a failure
                     * itself; after a success the verified file decides */
                    char why[512];
                    snprintf(why, sizeof why, "%s", ce_errmsg());
                    ce_rm_tree(ctx, p->staging);
                    p->staging[0] = '\0';
                    p->state = 0;
                    p->retry = true;
                    ce_quiet_end(&q);
                    ce_unpack_lost(ctx, p->name, why);
                } else if (r && rc == CE_OK) {
                    ce_quiet_keep(&q);   /* the first failure is the one reported */
                    rc = r;
                } else {
                    ce_quiet_end(&q);
                }
            }
            if (p->state == 0 && rc == CE_OK && running < slots) {
                /* a retry waits for the verified file; a first pass for the
                 * download to start (or the archive to be in the cache) */
                bool go = !ce_fault_point("unpack-start", p->cache) &&
                          (p->retry ? fetched && ce_exists(p->cache) : ce_exists(p->cache) || ce_exists(partf));
                if (go && (rc = start_unpack(ctx, p, !p->retry && !p->cached, sh)) == CE_OK) running++;
            }
            left += p->state != 2;
        }
        if (running == 0 && (left == 0 || rc != CE_OK || (fetched && job.rc != CE_OK))) break;
        if (fetched && running == 0 && job.rc == CE_OK) {
            /* everything verified: whatever is left waits for a slot */
            bool any = false;
            for (size_t i = 0; i < pl->n; i++)
                any = any || (pl->parts[i].state == 0 && !ce_exists(pl->parts[i].cache));
            if (any) { rc = ce_fail(ctx, CE_ERR_IO, "a verified download vanished from the cache"); break; }
        }
        usleep(fetched ? 2000 : 10000);
    }
    ce_forkgate_release();
    pthread_join(th, NULL);
    ce_slots_destroy(&sh->slots);
    munmap(sh, sizeof *sh);
    if (rc == CE_OK && job.rc != CE_OK) {
        ce_status_put(&job.st);
        rc = job.rc;
    }
    if (rc != CE_OK) ce_parts_drop(ctx, pl);
    return rc;
}

