#include "components.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/file.h"
#include "core/proc.h"
#include "core/rmtree.h"
#include "core/version.h"
#include "digest.h"
#include "fetch.h"
#include "forkgate.h"
#include "pkgindex.h"
#include "preflight.h"
#include "redist.h"
#include "runfile.h"
#include "store/layout.h"
#include "store/receipt.h"
#include "store/store.h"
#include "unpack.h"
#include "xzmt.h"

#define MAX_PARTS 128

/* One archive to have unpacked in pkgs/: a component or the cuDNN tarball. */
typedef struct part {
    const char *name, *label, *version, *url, *sha256;
    long long size;
    bool cudnn, nccl;       /* a library archive: cuDNN's tarball, or NCCL's wheel (a zip) */
    char pkg[200];          /* pkgs/<pkg> */
    char tree[4400];        /* $CUDAENV_ROOT/pkgs/<pkg> */
    char cache[4200];       /* cache/<sha256> */
    char staging[4200];     /* pkgs/.staging-* while unpacking, "" if none */
    bool have;              /* already in pkgs/ */
    int state;              /* 0 waiting, 1 unpacking, 2 done */
    bool follow;            /* the unpacker tails the download's .part */
    bool retry;             /* the overlapped pass lost: unpack the verified file */
    bool cached;            /* in the cache at the start: hashed by its unpacker, once */
    bool killed;            /* its unpacker died of a signal (it may have held a slot) */
    ce_fetch_watch *watch;  /* the download's, in the shared page */
    int id;                 /* its fetch item, watch and slot index */
    pid_t pid;
    int pipe;               /* read end: the child's error message */
} part;

typedef struct plan {
    ce_redist *red;
    const char *profile;
    part parts[MAX_PARTS];
    size_t n;
} plan;

static bool fault_is(const char *point)
{
    const char *f = ce_settings_now()->test_fault;
    return f && strcmp(f, point) == 0;
}

static const char *url_base(const char *url)
{
    const char *s = strrchr(url, '/');
    return s && s[1] ? s + 1 : url;
}

bool ce_components_apply(ce_ctx *ctx, const ce_resolved *r, int *rc)
{
    *rc = CE_OK;
    if (strcmp(ctx->install_from, "runfile") == 0) return false;
    bool can = r->cuda && r->cuda->redist && ce_layout_target(ctx->platform);
    if (!can && strcmp(ctx->install_from, "redist") == 0)
        *rc = ce_fail(ctx, CE_ERR_NOTFOUND, "CUDA %s has no redistrib JSON for %s in the manifest; "
                      "install it from the runfile (leave out --from redist)",
                      r->cuda ? r->cuda->version : "?", ctx->platform);
    return can;
}

/* ---- the JSON ---- */

/* cudaenv ships NVIDIA's JSONs it pins (data/redist/cuda, installed as
 * share/cudaenv/redist): a copy whose sha256 is the manifest's is the same
 * file, so it goes into the cache and info/install need no network for it. */
static void seed_from_bundle(ce_ctx *ctx, const ce_artifact *j)
{
    char cache[4200], dirs[3][4400], p[13300];
    if (ce_cache_path(ctx, j->sha256, cache, sizeof cache) || ce_exists(cache)) return;
    snprintf(dirs[0], sizeof dirs[0], "%s/../share/cudaenv/redist", ce_self_dir(ctx));
    snprintf(dirs[1], sizeof dirs[1], "%s/../../share/cudaenv/redist", ce_self_dir(ctx));
    snprintf(dirs[2], sizeof dirs[2], "%s/redist", CE_DATADIR);
    ce_quiet q;
    ce_quiet_begin(&q, true);
    for (size_t i = 0; i < 3; i++) {
        if (ce_path_join(p, sizeof p, dirs[i], url_base(j->url)) != CE_OK) continue;
        char hex[CE_SHA256_HEX];
        char *data = NULL;
        size_t len = 0;
        if (!ce_exists(p) || ce_sha256_file(ctx, p, hex) != CE_OK || strcmp(hex, j->sha256) != 0) continue;
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/cache", ctx->root);
        if (ce_mkdir_p(ctx, dir, 0755) == CE_OK && ce_file_read(ctx, p, CE_REDIST_MAX, &data, &len) == CE_OK &&
            (j->size < 0 || (long long)len == j->size))
            ce_file_write_atomic(ctx, cache, data, len, 0644);
        free(data);
        break;
    }
    ce_quiet_end(&q);
}

int ce_components_plan(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r, ce_redist **out,
                       const char **profile)
{
    *out = NULL;
    const ce_artifact *j = r->cuda->redist;
    if (!ctx->force) seed_from_bundle(ctx, j);
    ce_fetch_item it = { .url = j->url, .sha256 = j->sha256, .size = j->size, .label = url_base(j->url),
                         .allow_http = m->local || ctx->insecure };
    int rc = ce_fetch_all(ctx, &it, 1);
    if (rc) return rc;
    char *text = NULL;
    size_t len = 0;
    if ((rc = ce_file_read(ctx, it.path, CE_REDIST_MAX, &text, &len))) return rc;
    ce_redist *red = NULL;
    rc = ce_redist_parse(ctx, text, len, j->url, ctx->platform, &red);
    free(text);
    if (rc) return rc;
    if (red->release_label && strcmp(red->release_label, r->cuda->version) != 0) {
        rc = ce_fail(ctx, CE_ERR_INTEGRITY, "%s is the redistrib JSON of CUDA %s, but the manifest pins it for "
                     "CUDA %s; the manifest entry is wrong", j->url, red->release_label, r->cuda->version);
        ce_redist_free(red);
        return rc;
    }
    const char *pname = r->tf ? "tf" : "toolkit";
    const ce_profile *p = ce_manifest_profile(m, pname);
    if (!p) {
        ce_redist_free(red);
        return ce_fail(ctx, CE_ERR_NOTFOUND, "the manifest %s defines no \"%s\" profile of components; add one "
                       "(see cudaenv-manifest(5)) or install with --from runfile", m->origin, pname);
    }
    if ((rc = ce_redist_select(ctx, red, p, ctx->install_components[0] ? ctx->install_components : NULL))) {
        ce_redist_free(red);
        return rc;
    }
    size_t n = 0;
    ce_redist_selected_bytes(red, &n);
    if (n == 0) {
        ce_redist_free(red);
        return ce_fail(ctx, CE_ERR_USAGE, "no component of CUDA %s is selected; check --components",
                       r->cuda->version);
    }
    *out = red;
    if (profile) *profile = pname;
    return CE_OK;
}

static int add_part(ce_ctx *ctx, plan *pl, const char *pkgs, part p)
{
    if (pl->n == MAX_PARTS) return ce_fail(ctx, CE_ERR_USAGE, "more than %d components", MAX_PARTS);
    int rc = ce_join(ctx, p.tree, sizeof p.tree, pkgs, p.pkg);
    if (rc) return rc;
    p.have = ce_is_dir(p.tree) && !ctx->force;
    p.pipe = -1;
    rc = ce_cache_path(ctx, p.sha256, p.cache, sizeof p.cache);
    if (rc == CE_OK) pl->parts[pl->n++] = p;
    return rc;
}

/* ---- free space: downloads not yet cached + the unpacked trees ---- */

static int space(ce_ctx *ctx, const plan *pl)
{
    double want = 0;
    for (size_t i = 0; i < pl->n; i++) {
        const part *p = &pl->parts[i];
        if (p->have || p->size < 0) continue;
        struct stat st;
        char partf[4300];
        snprintf(partf, sizeof partf, "%s.part", p->cache);
        if (stat(p->cache, &st) != 0)
            want += (double)p->size - (stat(partf, &st) == 0 && st.st_size <= p->size ? (double)st.st_size : 0);
        want += (double)p->size * CE_TARBALL_UNPACK_FACTOR;
    }
    if (want <= 0) return CE_OK;
    double avail;
    const char *fake = ctx->set.test_free_bytes;
    struct statvfs vs;
    if (fake && *fake) avail = strtod(fake, NULL);
    else if (statvfs(ctx->root, &vs) == 0) avail = (double)vs.f_bavail * (double)vs.f_frsize;
    else return CE_OK;
    if (avail >= want) return CE_OK;
    return ce_fail(ctx, CE_ERR_SPACE, "not enough free space in %s: this install needs about %.1f GiB "
                   "(component downloads plus unpacked trees) and %.1f GiB is free; free some space, or set "
                   "CUDAENV_ROOT to a larger filesystem", ctx->root, want / 1073741824.0, avail / 1073741824.0);
}

/* ---- download in a thread, unpack each archive in a child while it downloads ----
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
} shared;

typedef struct fetch_job {
    ce_ctx *ctx;
    ce_fetch_item *items;
    size_t n;
    int rc;
    ce_status st;           /* the thread's failure, for the joining thread */
    volatile int *done;     /* MAP_SHARED: the unpackers see it */
} fetch_job;

static void *fetch_thread(void *arg)
{
    fetch_job *j = arg;
    j->rc = ce_fetch_all(j->ctx, j->items, j->n);
    if (j->rc != CE_OK) ce_status_take(&j->st);
    __atomic_store_n(j->done, 1, __ATOMIC_RELEASE);
    ce_forkgate_retire();   /* no allocation from here until joined (forkgate.h) */
    return NULL;
}

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

static void drop(ce_ctx *ctx, plan *pl)
{
    ce_quiet q;   /* cleanup must not overwrite the error being reported */
    ce_quiet_begin(&q, false);
    for (size_t i = 0; i < pl->n; i++) {
        part *p = &pl->parts[i];
        if (p->state == 1) {
            kill(p->pid, SIGKILL);
            reap(ctx, p, true);
        }
        if (p->staging[0]) ce_rm_rf(ctx, p->staging);
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

static int fetch_and_unpack(ce_ctx *ctx, const ce_manifest *m, plan *pl)
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
            ce_emit(ctx, CE_EV_DONE, url_base(p->url), "%s: already in the cache (its sha256 is checked as it is "
                    "read)", url_base(p->url));
            continue;
        }
        items[nf] = (ce_fetch_item){ .url = p->url, .sha256 = p->sha256, .size = p->size,
                                     .label = url_base(p->url), .allow_http = m->local || ctx->insecure,
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
    ce_emit(ctx, CE_EV_STEP, NULL, "downloading %zu archive%s (%.1f MiB) and unpacking them on %ld core%s", k,
            k == 1 ? "" : "s", (double)bytes / 1048576.0, ncpu(), ncpu() == 1 ? "" : "s");
    volatile int *done = &sh->done;
    fetch_job job = { .ctx = ctx, .items = items, .n = nf, .done = done };
    pthread_t th;
    ce_forkgate_enter();
    if (pthread_create(&th, NULL, fetch_thread, &job) != 0) {
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
                    ce_rm_rf(ctx, p->staging);
                    p->staging[0] = '\0';
                    p->state = 0;
                    p->retry = true;
                    ce_quiet_end(&q);
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
                bool go = p->retry ? fetched && ce_exists(p->cache) : ce_exists(p->cache) || ce_exists(partf);
                if (go && (rc = start_unpack(ctx, p, !p->retry && !p->cached, sh)) == CE_OK) running++;
            }
            left += p->state != 2;
        }
        if (fault_is("during-download")) {
            for (size_t i = 0; i < pl->n; i++) {
                char pf[4300];
                struct stat st;
                snprintf(pf, sizeof pf, "%s.part", pl->parts[i].cache);
                /* the .part exists: the download has started (the fetch
                 * layer writes in blocks, so its size may still be 0) */
                if (stat(pf, &st) == 0) raise(SIGKILL);
            }
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
    if (rc != CE_OK) drop(ctx, pl);
    return rc;
}

static int commit_parts(ce_ctx *ctx, plan *pl)
{
    int rc = CE_OK;
    for (size_t i = 0; rc == CE_OK && i < pl->n; i++) {
        part *p = &pl->parts[i];
        if (!p->staging[0]) continue;
        if ((rc = ce_store_commit(ctx, p->staging, p->tree)) == CE_OK) p->staging[0] = '\0';
    }
    if (rc != CE_OK) drop(ctx, pl);
    return rc;
}

/* ---- composing ---- */

static int compose(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r, plan *pl)
{
    char vdir[4200], final[4400], staging[4200];
    int rc;
    if ((rc = ce_store_path(ctx, "versions", vdir, sizeof vdir)) || (rc = ce_join(ctx, final, sizeof final, vdir, r->name)))
        return rc;
    if ((rc = ce_store_staging(ctx, "versions", staging, sizeof staging))) return rc;
    const char *target = ce_layout_target(ctx->platform);
    ce_filelist files = { 0 };
    ce_layout_version vers[MAX_PARTS];
    ce_receipt_component comps[MAX_PARTS];
    const char *trees[MAX_PARTS + 1];
    size_t nv = 0, nt = 0;
    bool nvcc = false, cudart = false;
    rc = ce_layout_begin(ctx, staging, target);
    for (size_t i = 0; rc == CE_OK && i < pl->n; i++) {
        part *p = &pl->parts[i];
        trees[nt++] = p->tree;
        if (p->cudnn || p->nccl) {
            rc = ce_compose_cudnn(ctx, p->tree, staging, &files);
            continue;
        }
        rc = ce_layout_component(ctx, p->tree, staging, target, p->name, &files);
        vers[nv] = (ce_layout_version){ p->name, p->label, p->version };
        comps[nv] = (ce_receipt_component){ p->name, p->version, p->url, p->sha256, p->pkg, p->size };
        nv++;
        nvcc = nvcc || strcmp(p->name, "cuda_nvcc") == 0;
        cudart = cudart || strcmp(p->name, "cuda_cudart") == 0;
    }
    trees[nt] = NULL;
    if (rc == CE_OK) rc = ce_layout_version_json(ctx, staging, r->cuda->version, vers, nv, &files);
    if (rc == CE_OK && nvcc && cudart) rc = ce_toolkit_check(ctx, staging, r->cuda->version, r->cuda->redist->url);
    if (rc == CE_OK) rc = ce_pkgindex_hash_files(ctx, staging, trees, &files);

    const char *tf[64];
    const ce_artifact *j = r->cuda->redist;
    ce_receipt rec;
    ce_receipt_init(&rec, m, r, ctx->platform, &files, tf, 64);
    rec.profile = pl->profile;
    rec.components = comps;
    rec.n_components = nv;
    rec.sources[rec.n_sources++] = (ce_receipt_source){ "redist", j->url, j->sha256, j->size };
    if (r->cudnn && r->cudnn_archive)
        rec.sources[rec.n_sources++] = (ce_receipt_source){ "cudnn", r->cudnn_archive->url,
                                                           r->cudnn_archive->sha256, r->cudnn_archive->size };
    for (size_t i = 0; i < pl->n; i++)
        if (pl->parts[i].nccl)
            rec.sources[rec.n_sources++] = (ce_receipt_source){ "nccl", pl->parts[i].url, pl->parts[i].sha256,
                                                               pl->parts[i].size };
    if (rc == CE_OK) rc = ce_receipt_write(ctx, staging, &rec);
    if (rc == CE_OK) {
        ce_fsync_dir(staging);
        if (fault_is("before-commit")) raise(SIGKILL);
        rc = ce_store_commit(ctx, staging, final);
    }
    if (rc != CE_OK) {
        ce_quiet q;
        ce_quiet_begin(&q, false);
        ce_rm_tree(ctx, staging);   /* through directory fds: deep trees cannot wedge it */
        ce_quiet_end(&q);
    } else {
        ce_emit(ctx, CE_EV_INFO, r->name, "composed %zu files (%zu hardlinked, %zu copied) from %zu components",
                files.n, files.linked, files.copied, nv);
        ce_emit(ctx, CE_EV_NOTE, r->name, "installed %s in %s", r->name, final);
    }
    ce_filelist_free(&files);
    return rc;
}

int ce_components_install(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r)
{
    plan *pl = calloc(1, sizeof *pl);
    if (!pl) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
    char pkgs[4200];
    int rc = ce_store_path(ctx, "pkgs", pkgs, sizeof pkgs);
    if (rc == CE_OK) rc = ce_mkdir_p(ctx, pkgs, 0755);
    if (rc == CE_OK) rc = ce_components_plan(ctx, m, r, &pl->red, &pl->profile);
    if (rc == CE_OK) {
        size_t n = 0;
        long long bytes = ce_redist_selected_bytes(pl->red, &n);
        ce_emit(ctx, CE_EV_STEP, r->name, "CUDA %s from NVIDIA's components: %zu of %zu (%s profile), %.1f MiB",
                r->cuda->version, n, pl->red->n, pl->profile, (double)bytes / 1048576.0);
    }
    for (size_t i = 0; rc == CE_OK && pl->red && i < pl->red->n; i++) {
        const ce_component *c = &pl->red->comps[i];
        if (!c->selected) continue;
        part p = { .name = c->name, .label = c->label, .version = c->version, .url = c->url, .sha256 = c->sha256,
                   .size = c->size };
        snprintf(p.pkg, sizeof p.pkg, "%s-%s-%.12s", c->name, c->version, c->sha256);
        rc = add_part(ctx, pl, pkgs, p);
    }
    if (rc == CE_OK && r->cudnn && r->cudnn_archive) {
        part p = { .name = "cudnn", .label = "cuDNN", .version = r->cudnn->version, .url = r->cudnn_archive->url,
                   .sha256 = r->cudnn_archive->sha256, .size = r->cudnn_archive->size, .cudnn = true };
        char cpkg[160];
        ce_store_pkg_names(r->cuda->version, r->cudnn->version, cpkg, sizeof cpkg, p.pkg, sizeof p.pkg);
        rc = add_part(ctx, pl, pkgs, p);
    }
    const ce_cudnn *nl = NULL;
    const ce_artifact *na = NULL;
    if (rc == CE_OK) rc = ce_resolve_nccl(ctx, m, r, ctx->install_components, &nl, &na);
    if (rc == CE_OK && na) {
        part p = { .name = "nccl", .label = "NCCL", .version = nl->version, .url = na->url, .sha256 = na->sha256,
                   .size = na->size, .nccl = true };
        snprintf(p.pkg, sizeof p.pkg, "nccl-%s-cuda%d-%.12s", nl->version, ce_version_major(r->cuda->version),
                 na->sha256);
        rc = add_part(ctx, pl, pkgs, p);
    }
    if (rc == CE_OK) rc = space(ctx, pl);
    if (rc == CE_OK) rc = fetch_and_unpack(ctx, m, pl);
    if (rc == CE_OK && fault_is("after-unpack")) raise(SIGKILL);
    if (rc == CE_OK) rc = commit_parts(ctx, pl);
    if (rc == CE_OK) {
        ce_emit(ctx, CE_EV_STEP, r->name, "composing %s", r->name);
        rc = compose(ctx, m, r, pl);
    }
    ce_redist_free(pl->red);
    free(pl);
    return rc;
}
