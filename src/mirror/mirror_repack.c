/* mirror --repack zstd|tar (issue 41 item 3): NVIDIA's .tar.xz archives of
 * a mirror (components, cuDNN) stored again beside them as .tar.zst or .tar
 * (archive/repack.h: the same tar stream, so the same installed tree), the
 * mirror's manifest naming the repacks with NVIDIA's url, sha256 and size
 * kept under "origin", signed as any mirror manifest (--sign-key).  Runfiles
 * (makeself scripts that unpack themselves) and NCCL wheels (zips whose
 * RECORD the install checks, deflate members that decode fast) stay as
 * NVIDIA ships them.
 *
 *   DIR/.cudaenv-mirror/repack/<NVIDIA's sha256>.<fmt>
 *       "<sha256> <size> <rel>" of the repack made from those bytes: a rerun
 *       re-hashes the repack against it and keeps it (no recompression)
 *   DIR/compute/cuda/redist/redistrib_<ver>.<fmt>.json
 *       NVIDIA's JSON with the held components' entries pointing at the
 *       repacks (relative_path, sha256, size; NVIDIA's under "origin") */
#include "mirror_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "core/proc.h"

#define REPACK_DIR WORK_DIR "/repack"

ce_repack_fmt ce_mirror_repack_format(const ce_mdir *md, ce_repack_fmt asked)
{
    if (asked != CE_REPACK_NONE) return asked;
    struct stat sb;
    ce_quiet q;
    ce_quiet_begin(&q, true);
    char *text = NULL;
    size_t len = 0;
    int fd = ce_mdir_open_file(md, CE_MIRROR_MANIFEST, &sb);
    if (fd >= 0 && ce_file_read_fd(fd, CE_MIRROR_MANIFEST, 64u << 20, &text, &len) != CE_OK) text = NULL;
    ce_quiet_end(&q);
    cJSON *j = text ? cJSON_ParseWithLength(text, len) : NULL;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "repack");
    ce_repack_fmt f = cJSON_IsString(r) ? ce_repack_parse(r->valuestring) : CE_REPACK_NONE;
    cJSON_Delete(j);
    free(text);
    return f;
}

/* rel with its compressed-tar suffix replaced by fmt's; false when rel has
 * none (not an archive cudaenv repacks). */
static bool repack_rel(const char *rel, ce_repack_fmt fmt, char *out, size_t outsz)
{
    static const char *const sfx[] = { ".tar.xz", ".txz", ".tar.gz", ".tgz", ".tar.bz2", NULL };
    size_t n = strlen(rel);
    for (size_t i = 0; sfx[i]; i++) {
        size_t s = strlen(sfx[i]);
        if (n > s && !strcmp(rel + n - s, sfx[i]))
            return (size_t)snprintf(out, outsz, "%.*s%s", (int)(n - s), rel, ce_repack_suffix(fmt)) < outsz;
    }
    return false;
}

static void record_name(const char *sha256, ce_repack_fmt fmt, char *out, size_t outsz)
{
    snprintf(out, outsz, "%.64s.%s", sha256, ce_repack_name(fmt));
}

/* The record of the repack of NVIDIA's sha256 in fmt: 1 and its fields when
 * there is one that parses, else 0. */
static int record_read(ce_ctx *ctx, int rdfd, const char *sha256, ce_repack_fmt fmt, char *rsha, long long *rsize,
                       char *rrel, size_t rrelsz)
{
    char name[128], buf[1200];
    record_name(sha256, fmt, name, sizeof name);
    (void)ctx;
    int fd = openat(rdfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    char fmtstr[40];
    snprintf(fmtstr, sizeof fmtstr, "%%64s %%lld %%%zus", rrelsz - 1);
    if (sscanf(buf, fmtstr, rsha, rsize, rrel) != 3 || strlen(rsha) != 64 || *rsize < 0) return 0;
    return 1;
}

typedef struct job {
    ce_mirror_file *f;
    int in_fd, out_fd;
    char tmp[200];            /* its temporary under REPACK_DIR */
    int rc;
    ce_status st;
} job;

typedef struct pool {
    job *jobs;
    size_t n, next;
    ce_repack_fmt fmt;
    int threads;              /* zstd's, per archive */
    ce_ctx *ctx;
    pthread_mutex_t mu;
} pool;

static void *worker(void *arg)
{
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next < p->n ? p->next++ : p->n;
        pthread_mutex_unlock(&p->mu);
        if (i == p->n) break;
        job *j = &p->jobs[i];
        j->rc = ce_repack_fd(j->in_fd, j->f->rel, p->fmt, p->threads, j->out_fd, &j->f->rp_size,
                             j->f->rp_sha256);
        if (j->rc) ce_status_take(&j->st);
    }
    return NULL;
}

static int cmp_size(const void *a, const void *b)
{
    const job *x = a, *y = b;
    return x->f->size < y->f->size ? 1 : x->f->size > y->f->size ? -1 : 0;
}

/* Run the jobs: as many archives at once as there are cores, the largest
 * first (its xz decode is the longest), zstd's threads shared among them. */
static void run_jobs(ce_ctx *ctx, job *jobs, size_t n, ce_repack_fmt fmt)
{
    long cores = ce_cpu_count();
    size_t nw = (size_t)(cores < 1 ? 1 : cores);
    if (nw > n) nw = n;
    if (nw > 16) nw = 16;
    qsort(jobs, n, sizeof *jobs, cmp_size);
    pool p = { .jobs = jobs, .n = n, .fmt = fmt, .ctx = ctx,
               .threads = (int)(cores / (long)nw) > 1 ? (int)(cores / (long)nw) : 1 };
    pthread_mutex_init(&p.mu, NULL);
    pthread_t t[16];
    size_t started = 0;
    for (; started < nw; started++)
        if (pthread_create(&t[started], NULL, worker, &p) != 0) break;
    if (started == 0) worker(&p);   /* no thread: this one does them all */
    for (size_t i = 0; i < started; i++) pthread_join(t[i], NULL);
    pthread_mutex_destroy(&p.mu);
}

/* Move a job's temporary to its place and write its record. */
static int finish(const ce_mdir *md, int rdfd, ce_repack_fmt fmt, const job *j)
{
    char from[CE_PATH_MAX + 300], name[128], rec[1200];
    snprintf(from, sizeof from, "%s/%s/%s", md->path, REPACK_DIR, j->tmp);
    int rc = ce_mdir_place(md, j->f->rp_rel, from, true);
    if (rc) return rc;
    record_name(j->f->sha256, fmt, name, sizeof name);
    int n = snprintf(rec, sizeof rec, "%s %lld %s\n", j->f->rp_sha256, j->f->rp_size, j->f->rp_rel);
    return ce_file_write_atomic_at(rdfd, REPACK_DIR, name, rec, (size_t)n, 0644);
}

int ce_mirror_repack(ce_ctx *ctx, const ce_mdir *md, ce_repack_fmt fmt, plan *pl, ce_mirror_stats *st)
{
    if (fmt == CE_REPACK_NONE) return CE_OK;
    int rdfd = ce_mdir_subdir(md, REPACK_DIR, true);
    if (rdfd < 0) return rdfd;
    job *jobs = calloc(pl->n ? pl->n : 1, sizeof *jobs);
    size_t n = 0;
    int rc = jobs ? CE_OK : ce_fail(CE_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < pl->n && !rc; i++) {
        ce_mirror_file *f = &pl->f[i];
        if ((f->kind != MF_COMPONENT && f->kind != MF_CUDNN) || !repack_rel(f->rel, fmt, f->rp_rel, sizeof f->rp_rel)) {
            f->rp_rel[0] = '\0';
            continue;
        }
        size_t same = 0;   /* the same file planned twice: one repack */
        while (same < i && strcmp(pl->f[same].rel, f->rel)) same++;
        if (same < i) continue;
        char rsha[CE_SHA256_HEX], rrel[1040];
        long long rsize;
        if (record_read(ctx, rdfd, f->sha256, fmt, rsha, &rsize, rrel, sizeof rrel) && !strcmp(rrel, f->rp_rel)) {
            int v = ce_mdir_verified(md, f->rp_rel, rsize, rsha);   /* re-hashed, as every kept file */
            if (v < 0) { rc = v; break; }
            if (v == 1) {
                snprintf(f->rp_sha256, sizeof f->rp_sha256, "%s", rsha);
                f->rp_size = rsize;
                st->repack_kept++;
                continue;
            }
        }
        job *j = &jobs[n];
        struct stat sb;
        j->f = f;
        j->out_fd = -1;
        j->in_fd = ce_mdir_open_file(md, f->rel, &sb);
        if (j->in_fd < 0) { rc = j->in_fd; break; }
        snprintf(j->tmp, sizeof j->tmp, "%.64s.%s.tmp-%ld-%zu", f->sha256, ce_repack_name(fmt), (long)getpid(), i);
        j->out_fd = openat(rdfd, j->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        n++;
        if (j->out_fd < 0)
            rc = ce_fail(CE_ERR_IO, "cannot create %s/%s/%s: %s", md->path, REPACK_DIR, j->tmp, strerror(errno));
    }
    if (!rc && n) {
        ce_emit(ctx, CE_EV_STEP, NULL, "repacking %zu archive%s as %s", n, n == 1 ? "" : "s",
                ce_repack_suffix(fmt));
        run_jobs(ctx, jobs, n, fmt);
    }
    for (size_t k = 0; k < n; k++) {
        job *j = &jobs[k];
        close(j->in_fd);
        if (j->out_fd >= 0 && close(j->out_fd) != 0 && !j->rc && !rc)
            rc = ce_fail(CE_ERR_IO, "cannot write %s/%s/%s: %s", md->path, REPACK_DIR, j->tmp, strerror(errno));
        if (j->rc && !rc) {
            ce_status_put(&j->st);
            rc = j->rc;
        }
        if (!rc && j->out_fd >= 0) {
            rc = finish(md, rdfd, fmt, j);
            if (!rc) {
                st->repacked++;
                st->repack_bytes += j->f->rp_size;
                ce_emit(ctx, CE_EV_INFO, j->f->rp_rel, "repacked %s (%lld -> %lld bytes)", j->f->rp_rel,
                        j->f->size, j->f->rp_size);
            }
        }
        if (rc && j->out_fd >= 0) unlinkat(rdfd, j->tmp, 0);
    }
    /* the same file planned twice takes the first's repack */
    for (size_t i = 0; i < pl->n && !rc; i++)
        for (size_t s = 0; s < i && pl->f[i].rp_rel[0]; s++)
            if (!strcmp(pl->f[s].rel, pl->f[i].rel)) {
                memcpy(pl->f[i].rp_sha256, pl->f[s].rp_sha256, sizeof pl->f[i].rp_sha256);   /* s < i: distinct */
                pl->f[i].rp_size = pl->f[s].rp_size;
                break;
            }
    free(jobs);
    close(rdfd);
    return rc;
}

static cJSON *origin_of(const char *url_key, const char *url, const char *sha256, const cJSON *size, const cJSON *md5)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, url_key, url);
    cJSON_AddStringToObject(o, "sha256", sha256);
    if (size) cJSON_AddItemToObject(o, "size", cJSON_Duplicate(size, true));
    if (md5) cJSON_AddItemToObject(o, "md5", cJSON_Duplicate(md5, true));
    return o;
}

static void set_item(cJSON *o, const char *key, cJSON *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    if (v) cJSON_AddItemToObject(o, key, v);
}

void ce_mirror_repack_entry(cJSON *a, const ce_mirror_file *f)
{
    if (!f->rp_rel[0]) return;
    set_item(a, "origin", origin_of("url", f->rel, f->sha256, cJSON_GetObjectItemCaseSensitive(a, "size"),
                                    cJSON_GetObjectItemCaseSensitive(a, "md5")));
    cJSON_DeleteItemFromObjectCaseSensitive(a, "md5");
    set_item(a, "url", cJSON_CreateString(f->rp_rel));
    set_item(a, "sha256", cJSON_CreateString(f->rp_sha256));
    set_item(a, "size", cJSON_CreateNumber((double)f->rp_size));
}

/* The repack of the component whose NVIDIA sha256 is sha: from this run's
 * plan, else from an earlier run's record whose file is there at its size.
 * false when there is none (the component stays NVIDIA's archive). */
static bool find_repack(ce_ctx *ctx, const ce_mdir *md, int rdfd, ce_repack_fmt fmt, const plan *pl, const char *sha,
                        char *rel, size_t relsz, char *rsha, long long *rsize)
{
    for (size_t i = 0; i < pl->n; i++) {
        const ce_mirror_file *f = &pl->f[i];
        if (f->kind == MF_COMPONENT && f->rp_rel[0] && !strcmp(f->sha256, sha)) {
            snprintf(rel, relsz, "%s", f->rp_rel);
            snprintf(rsha, CE_SHA256_HEX, "%s", f->rp_sha256);
            *rsize = f->rp_size;
            return true;
        }
    }
    if (!record_read(ctx, rdfd, sha, fmt, rsha, rsize, rel, relsz)) return false;
    struct stat sb;
    ce_quiet q;
    ce_quiet_begin(&q, true);
    int fd = ce_mdir_open_file(md, rel, &sb);
    ce_quiet_end(&q);
    if (fd < 0) return false;
    close(fd);
    return (long long)sb.st_size == *rsize;
}

/* NVIDIA's JSON (rel, verified under DIR) with the components held
 * (mirror_components of e) pointing at their repacks; *changed when any does. */
static int rewrite_json(ce_ctx *ctx, const ce_mdir *md, int rdfd, ce_repack_fmt fmt, const plan *pl,
                        const char *rel, const cJSON *held, cJSON *j, bool *changed)
{
    const char *slash = strrchr(rel, '/');
    size_t base = slash ? (size_t)(slash - rel) + 1 : 0;
    const cJSON *plat, *name;
    cJSON_ArrayForEach(plat, held) {
        cJSON_ArrayForEach(name, plat) {
            if (!cJSON_IsString(name)) continue;
            cJSON *ent = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, name->valuestring),
                                                          plat->string);
            const cJSON *sha = cJSON_GetObjectItemCaseSensitive(ent, "sha256");
            const cJSON *rp = cJSON_GetObjectItemCaseSensitive(ent, "relative_path");
            char prel[1040], psha[CE_SHA256_HEX], num[32];
            long long psize;
            if (!cJSON_IsString(sha) || !cJSON_IsString(rp) ||
                !find_repack(ctx, md, rdfd, fmt, pl, sha->valuestring, prel, sizeof prel, psha, &psize))
                continue;
            if (strncmp(prel, rel, base) != 0)
                return ce_fail(CE_ERR_OTHER, "internal: the repack %s is not beside %s", prel, rel);
            cJSON *o = origin_of("relative_path", rp->valuestring, sha->valuestring,
                                 cJSON_GetObjectItemCaseSensitive(ent, "size"),
                                 cJSON_GetObjectItemCaseSensitive(ent, "md5"));
            cJSON_DeleteItemFromObjectCaseSensitive(ent, "md5");
            snprintf(num, sizeof num, "%lld", psize);   /* NVIDIA writes sizes as strings */
            set_item(ent, "relative_path", cJSON_CreateString(prel + base));
            set_item(ent, "sha256", cJSON_CreateString(psha));
            set_item(ent, "size", cJSON_CreateString(num));
            set_item(ent, "origin", o);
            *changed = true;
        }
    }
    return CE_OK;
}

/* Write text as DIR/rel (through a temporary in REPACK_DIR, then placed). */
static int write_rel(const ce_mdir *md, int rdfd, const char *rel, const char *text)
{
    char tmp[128], from[CE_PATH_MAX + 300];
    snprintf(tmp, sizeof tmp, "json.tmp-%ld", (long)getpid());
    int rc = ce_file_write_atomic_at(rdfd, REPACK_DIR, tmp, text, strlen(text), 0644);
    snprintf(from, sizeof from, "%s/%s/%s", md->path, REPACK_DIR, tmp);
    if (!rc) rc = ce_mdir_place(md, rel, from, true);
    if (rc) unlinkat(rdfd, tmp, 0);
    return rc;
}

int ce_mirror_repack_json(ce_ctx *ctx, const ce_mdir *md, ce_repack_fmt fmt, cJSON *out, const plan *pl)
{
    if (fmt == CE_REPACK_NONE) return CE_OK;
    int rdfd = ce_mdir_subdir(md, REPACK_DIR, true), rc = CE_OK;
    if (rdfd < 0) return rdfd;
    for (size_t i = 0; i < pl->n && !rc; i++) {
        const ce_mirror_file *f = &pl->f[i];
        size_t same = 0;
        while (same < i && strcmp(pl->f[same].rel, f->rel)) same++;
        if (f->kind != MF_REDIST || same < i) continue;
        cJSON *e = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "cuda"), f->version), "redist");
        const cJSON *held = cJSON_GetObjectItemCaseSensitive(e, "mirror_components");
        struct stat sb;
        char *text = NULL, *outtext = NULL, nrel[1100], hex[CE_SHA256_HEX];
        size_t len = 0;
        int fd = ce_mdir_open_file(md, f->rel, &sb);
        rc = fd < 0 ? fd : ce_file_read_fd(fd, f->rel, 64u << 20, &text, &len);
        cJSON *j = rc ? NULL : cJSON_ParseWithLength(text, len);
        free(text);
        if (!rc && !j) rc = ce_fail(CE_ERR_INTEGRITY, "%s/%s is not valid JSON", md->path, f->rel);
        bool changed = false;
        if (!rc) rc = rewrite_json(ctx, md, rdfd, fmt, pl, f->rel, held, j, &changed);
        if (!rc && changed) {
            size_t n = strlen(f->rel);
            n -= n > 5 && !strcmp(f->rel + n - 5, ".json") ? 5 : 0;
            snprintf(nrel, sizeof nrel, "%.*s.%s.json", (int)n, f->rel, ce_repack_name(fmt));
            outtext = cJSON_Print(j);
            rc = outtext ? write_rel(md, rdfd, nrel, outtext) : ce_fail(CE_ERR_NOMEM, "out of memory");
        }
        if (!rc && changed) {
            ce_sha256 *h = ce_sha256_new();
            if (!h) rc = ce_fail(CE_ERR_NOMEM, "out of memory");
            else {
                ce_sha256_update(h, outtext, strlen(outtext));
                ce_sha256_final(h, hex);
                ce_sha256_free(h);
                set_item(e, "origin", origin_of("url", f->rel, f->sha256, cJSON_GetObjectItemCaseSensitive(e, "size"),
                                                NULL));
                set_item(e, "url", cJSON_CreateString(nrel));
                set_item(e, "sha256", cJSON_CreateString(hex));
                set_item(e, "size", cJSON_CreateNumber((double)strlen(outtext)));
            }
        }
        free(outtext);
        cJSON_Delete(j);
    }
    close(rdfd);
    return rc;
}
