/* cudaenv mirror: plan (which files, where in the JSON) -> fetch what is
 * missing through the cache pipeline -> rename into DIR under NVIDIA's
 * paths -> merge DIR/cudaenv.json.  See mirror.h. */
#include "mirror.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "core/version.h"
#include "digest.h"
#include "fetch.h"
#include "store/store.h"

#define NVIDIA_BASE "https://developer.download.nvidia.com/"
#define WORK_DIR ".cudaenv-mirror"

typedef enum { MF_RUNFILE, MF_CUDNN } mf_kind; /* components: add a kind here */

typedef struct ce_mirror_file {
    mf_kind kind;
    const char *version;       /* CUDA or cuDNN release (JSON key) */
    int cuda_major;            /* cuDNN: the "cudaM" key */
    const char *platform;
    const ce_artifact *art;    /* resolved URL, sha256, size */
    char rel[1024];            /* path under DIR (NVIDIA's) */
} ce_mirror_file;

typedef struct plan {
    ce_mirror_file *f;
    size_t n, cap;
} plan;

/* The artifact's JSON object in the source manifest. */
static cJSON *src_node(cJSON *src, const ce_mirror_file *f)
{
    char key[16];
    if (f->kind == MF_RUNFILE) {
        cJSON *c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(src, "cuda"), f->version);
        return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "runfile"), f->platform);
    }
    snprintf(key, sizeof key, "cuda%d", f->cuda_major);
    cJSON *d = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(src, "cudnn"), f->version);
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, key), f->platform);
}

/* NVIDIA's relative path of a manifest URL as written in the source:
 * relative as is, https://developer.download.nvidia.com/X -> X, any other
 * absolute URL -> its path.  Nothing that could leave DIR. */
int ce_mirror_rel_path(ce_ctx *ctx, const char *url, char *out, size_t outsz)
{
    const char *p = url;
    if (!strncmp(url, NVIDIA_BASE, strlen(NVIDIA_BASE))) {
        p = url + strlen(NVIDIA_BASE);
    } else if (strstr(url, "://")) {
        p = strstr(url, "://") + 3;
        p += strcspn(p, "/");
        while (*p == '/') p++;
    }
    while (!strncmp(p, "./", 2)) p += 2;
    size_t len = strcspn(p, "?#");
    if (len == 0 || len >= outsz)
        return ce_fail(ctx, CE_ERR_INTEGRITY, "cannot mirror %s: no usable file path in the URL", url);
    memcpy(out, p, len);
    out[len] = '\0';
    bool bad = out[0] == '/' || strstr(out, "//") || !strcmp(out, CE_MIRROR_MANIFEST) ||
               !strncmp(out, WORK_DIR, strlen(WORK_DIR));
    for (const char *s = out; !bad && *s; s += strcspn(s, "/"), s += *s == '/') {
        size_t sl = strcspn(s, "/");
        bad = (sl == 1 && s[0] == '.') || (sl == 2 && s[0] == '.' && s[1] == '.');
    }
    for (const unsigned char *s = (const unsigned char *)out; !bad && *s; s++)
        bad = *s < 0x20 || *s == 0x7f || *s == '\\';
    if (bad)
        return ce_fail(ctx, CE_ERR_INTEGRITY, "cannot mirror %s: its path '%s' would leave the mirror "
                       "directory or clash with cudaenv's own files", url, out);
    return CE_OK;
}

static int plan_add(ce_ctx *ctx, plan *pl, cJSON *src, mf_kind kind, const char *version, int major,
                    const char *platform, const ce_artifact *art)
{
    for (size_t i = 0; i < pl->n; i++)
        if (pl->f[i].art == art) return CE_OK;
    if (pl->n == pl->cap) {
        size_t cap = pl->cap ? pl->cap * 2 : 16;
        ce_mirror_file *nf = realloc(pl->f, cap * sizeof *nf);
        if (!nf) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
        pl->f = nf;
        pl->cap = cap;
    }
    ce_mirror_file *f = &pl->f[pl->n];
    *f = (ce_mirror_file){ .kind = kind, .version = version, .cuda_major = major, .platform = platform, .art = art };
    const cJSON *url = cJSON_GetObjectItemCaseSensitive(src_node(src, f), "url");
    if (!cJSON_IsString(url))
        return ce_fail(ctx, CE_ERR_INTEGRITY, "the manifest has no URL for %s %s (%s)", version, platform,
                       kind == MF_RUNFILE ? "runfile" : "cuDNN archive");
    int rc = ce_mirror_rel_path(ctx, url->valuestring, f->rel, sizeof f->rel);
    if (!rc) pl->n++;
    return rc;
}

static const ce_cudnn_build *build_of(const ce_cudnn *d, const ce_artifact *a)
{
    for (size_t i = 0; d && i < d->n_builds; i++)
        if (a >= d->builds[i].archives && a < d->builds[i].archives + d->builds[i].n_archives)
            return &d->builds[i];
    return NULL;
}

/* Component installs (NVIDIA's redistrib JSONs) will add their files here. */
static int plan_components(ce_ctx *ctx, const ce_mirror_req *req, plan *pl)
{
    (void)ctx; (void)req; (void)pl;
    return CE_OK;
}

static int make_plan(ce_ctx *ctx, const ce_mirror_req *req, cJSON *src, plan *pl)
{
    const ce_manifest *m = req->m;
    int rc = CE_OK;
    for (size_t p = 0; p < req->n_platforms && !rc; p++) {
        const char *plat = req->platforms[p];
        if (req->all) {
            for (size_t i = 0; i < m->n_cuda && !rc; i++) {
                const ce_artifact *a = ce_artifact_for(m->cuda[i].runfiles, m->cuda[i].n_runfiles, plat);
                if (a) rc = plan_add(ctx, pl, src, MF_RUNFILE, m->cuda[i].version, 0, plat, a);
            }
            for (size_t i = 0; i < m->n_cudnn && !rc; i++)
                for (size_t b = 0; b < m->cudnn[i].n_builds && !rc; b++) {
                    const ce_cudnn_build *bd = &m->cudnn[i].builds[b];
                    const ce_artifact *a = ce_artifact_for(bd->archives, bd->n_archives, plat);
                    if (a) rc = plan_add(ctx, pl, src, MF_CUDNN, m->cudnn[i].version, bd->cuda_major, plat, a);
                }
            continue;
        }
        ce_ctx pctx = *ctx;   /* the same configuration for another platform */
        snprintf(pctx.platform, sizeof pctx.platform, "%s", plat);
        for (size_t s = 0; s < req->n_specs && !rc; s++) {
            ce_resolved r;
            if ((rc = ce_resolve(&pctx, m, &req->specs[s], req->cudnn, req->no_cudnn, &r))) break;
            rc = plan_add(ctx, pl, src, MF_RUNFILE, r.cuda->version, 0, plat, r.runfile);
            const ce_cudnn_build *bd = r.cudnn_archive ? build_of(r.cudnn, r.cudnn_archive) : NULL;
            if (!rc && bd)
                rc = plan_add(ctx, pl, src, MF_CUDNN, r.cudnn->version, bd->cuda_major, plat, r.cudnn_archive);
        }
    }
    return rc ? rc : plan_components(ctx, req, pl);
}

/* ---- placing files ------------------------------------------------------- */

static int copy_file(ce_ctx *ctx, const char *from, const char *to)
{
    if (link(from, to) == 0) return CE_OK;
    int in = open(from, O_RDONLY | O_CLOEXEC), out = -1;
    char tmp[4400];
    snprintf(tmp, sizeof tmp, "%s.tmp-%d", to, (int)getpid());
    if (in >= 0) out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = in < 0 || out < 0 ? CE_ERR_IO : CE_OK;
    static char buf[1 << 20];
    ssize_t r;
    while (!rc && (r = read(in, buf, sizeof buf)) != 0) {
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 || write(out, buf, (size_t)r) != r) rc = CE_ERR_IO;
    }
    if (!rc && (fdatasync(out) != 0 || rename(tmp, to) != 0)) rc = CE_ERR_IO;
    int e = errno;
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    if (rc) {
        unlink(tmp);
        return ce_fail(ctx, CE_ERR_IO, "cannot copy %s to %s: %s", from, to, strerror(e));
    }
    return CE_OK;
}

static bool have_file(const char *path, long long size)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (size < 0 || st.st_size == size);
}

static int mkdir_parent(ce_ctx *ctx, const char *path)
{
    char dir[4400];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    return ce_mkdir_p(ctx, dir, 0755);
}

static int place_files(ce_ctx *ctx, ce_ctx *mctx, const ce_mirror_req *req, plan *pl, ce_mirror_stats *st)
{
    ce_fetch_item *items = calloc(pl->n ? pl->n : 1, sizeof *items);
    size_t *which = calloc(pl->n ? pl->n : 1, sizeof *which), n = 0;
    int rc = items && which ? CE_OK : ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
    char dest[4400], cached[4400];
    for (size_t i = 0; i < pl->n && !rc; i++) {
        const ce_artifact *a = pl->f[i].art;
        if ((rc = ce_join(ctx, dest, sizeof dest, req->dir, pl->f[i].rel))) break;
        if (have_file(dest, a->size)) { st->kept++; continue; }
        /* already downloaded for an install: no second download */
        if (ce_cache_path(ctx, a->sha256, cached, sizeof cached) == CE_OK && have_file(cached, a->size)) {
            char mine[4400];
            if ((rc = ce_cache_path(mctx, a->sha256, mine, sizeof mine))) break;
            if (!have_file(mine, a->size)) {
                unlink(mine);
                if (!(rc = mkdir_parent(ctx, mine))) rc = copy_file(ctx, cached, mine);
            }
        }
        items[n] = (ce_fetch_item){ .url = a->url, .sha256 = a->sha256, .size = a->size,
                                    .label = strrchr(pl->f[i].rel, '/') ? strrchr(pl->f[i].rel, '/') + 1 : pl->f[i].rel,
                                    .allow_http = req->m->local || ctx->insecure };
        which[n++] = i;
    }
    if (!rc && n) {
        ce_emit(ctx, CE_EV_STEP, NULL, "mirroring %zu file%s into %s", n, n == 1 ? "" : "s", req->dir);
        rc = ce_fetch_all(mctx, items, n);
    }
    for (size_t k = 0; k < n && !rc; k++) {
        const ce_mirror_file *f = &pl->f[which[k]];
        if ((rc = ce_join(ctx, dest, sizeof dest, req->dir, f->rel)) || (rc = mkdir_parent(ctx, dest))) break;
        if (rename(items[k].path, dest) != 0) {
            /* the same file at two paths: the first rename took it */
            size_t j = 0;
            while (j < k && strcmp(items[j].sha256, items[k].sha256)) j++;
            char first[4400];
            if (j == k || (rc = ce_join(ctx, first, sizeof first, req->dir, pl->f[which[j]].rel)) ||
                (rc = copy_file(ctx, first, dest)))
                rc = rc ? rc : ce_fail(ctx, CE_ERR_IO, "cannot move %s to %s: %s", items[k].path, dest, strerror(errno));
            if (rc) break;
        }
        st->added++;
        st->bytes_fetched += f->art->size > 0 ? f->art->size : 0;
        ce_emit(ctx, CE_EV_INFO, f->rel, "mirrored %s", f->rel);
    }
    free(items);
    free(which);
    return rc;
}

/* ---- the mirror's manifest ----------------------------------------------- */

static cJSON *obj_child(cJSON *o, const char *key)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsObject(c)) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, key);
        c = cJSON_AddObjectToObject(o, key);
    }
    return c;
}

/* out.<section>.<version> = the source entry without its artifact maps
 * (they are added one platform at a time), kept if an earlier run made it. */
static cJSON *release_entry(cJSON *out, cJSON *src, const char *section, const char *version, bool is_art_key(const char *))
{
    cJSON *sec = obj_child(out, section);
    cJSON *e = cJSON_GetObjectItemCaseSensitive(sec, version);
    if (cJSON_IsObject(e)) return e;
    cJSON *s = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(src, section), version);
    e = s ? cJSON_Duplicate(s, true) : cJSON_CreateObject();
    cJSON *k = e ? e->child : NULL;
    while (k) {
        cJSON *next = k->next;
        if (is_art_key(k->string)) cJSON_Delete(cJSON_DetachItemViaPointer(e, k));
        k = next;
    }
    if (e) cJSON_AddItemToObject(sec, version, e);
    return e;
}

static bool runfile_key(const char *k) { return !strcmp(k, "runfile"); }
static bool cudnn_key(const char *k) { return !strncmp(k, "cuda", 4) && k[4] >= '0' && k[4] <= '9'; }

static int merge_entry(ce_ctx *ctx, cJSON *out, cJSON *src, const ce_mirror_file *f)
{
    char key[16] = "runfile";
    cJSON *e = f->kind == MF_RUNFILE ? release_entry(out, src, "cuda", f->version, runfile_key)
                                     : release_entry(out, src, "cudnn", f->version, cudnn_key);
    if (f->kind == MF_CUDNN) snprintf(key, sizeof key, "cuda%d", f->cuda_major);
    cJSON *map = e ? obj_child(e, key) : NULL;
    cJSON *a = map ? cJSON_Duplicate(src_node(src, f), true) : NULL;
    if (!a) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
    cJSON_DeleteItemFromObjectCaseSensitive(a, "alt_url");
    cJSON_ReplaceItemInObjectCaseSensitive(a, "url", cJSON_CreateString(f->rel));
    cJSON_DeleteItemFromObjectCaseSensitive(map, f->platform);
    cJSON_AddItemToObject(map, f->platform, a);
    return CE_OK;
}

/* TensorFlow rows whose CUDA runfile and cuDNN build the mirror now holds. */
static void merge_tf(cJSON *out, cJSON *src)
{
    cJSON *tfs = obj_child(out, "tensorflow"), *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(src, "tensorflow")) {
        const cJSON *cu = cJSON_GetObjectItemCaseSensitive(row, "cuda");
        const cJSON *dn = cJSON_GetObjectItemCaseSensitive(row, "cudnn");
        if (!cJSON_IsString(cu) || cJSON_GetObjectItemCaseSensitive(row, "not_installable")) continue;
        cJSON *c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "cuda"), cu->valuestring);
        if (!cJSON_GetObjectItemCaseSensitive(c, "runfile") ||
            !cJSON_GetObjectItemCaseSensitive(c, "runfile")->child) continue;
        if (cJSON_IsString(dn)) {
            char key[16];
            snprintf(key, sizeof key, "cuda%d", ce_version_major(cu->valuestring));
            cJSON *d = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "cudnn"), dn->valuestring);
            if (!cJSON_GetObjectItemCaseSensitive(d, key)) continue;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(tfs, row->string);
        cJSON_AddItemToObject(tfs, row->string, cJSON_Duplicate(row, true));
    }
}

static int write_manifest(ce_ctx *ctx, const ce_mirror_req *req, cJSON *src, plan *pl, ce_mirror_stats *st)
{
    char path[CE_PATH_MAX];
    int rc = ce_join(ctx, path, sizeof path, req->dir, CE_MIRROR_MANIFEST);
    if (rc) return rc;
    cJSON *out = NULL;
    if (ce_exists(path)) {
        ce_manifest *old = NULL;
        if ((rc = ce_manifest_load_file(ctx, path, &old))) return rc;
        ce_manifest_free(old);
        char *text;
        size_t len;
        if ((rc = ce_file_read(ctx, path, CE_MANIFEST_MAX, &text, &len))) return rc;
        out = cJSON_ParseWithLength(text, len);
        free(text);
    } else if ((out = cJSON_CreateObject())) {
        cJSON_AddNumberToObject(out, "schema", 1);
        const cJSON *upd = cJSON_GetObjectItemCaseSensitive(src, "updated");
        cJSON_AddStringToObject(out, "updated", cJSON_IsString(upd) ? upd->valuestring : "");
        cJSON_AddStringToObject(out, "generated_by", "cudaenv mirror " CE_VERSION);
    }
    if (!out) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < pl->n && !rc; i++) rc = merge_entry(ctx, out, src, &pl->f[i]);
    if (!rc) merge_tf(out, src);
    char *text = rc ? NULL : cJSON_Print(out);
    cJSON_Delete(out);
    if (rc) return rc;
    if (!text) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
    ce_manifest *check = NULL;   /* what we write must load */
    rc = ce_manifest_parse(ctx, text, strlen(text), path, true, &check);
    if (!rc) {
        for (size_t i = 0; i < check->n_cuda; i++) st->files += check->cuda[i].n_runfiles;
        for (size_t i = 0; i < check->n_cudnn; i++)
            for (size_t b = 0; b < check->cudnn[i].n_builds; b++) st->files += check->cudnn[i].builds[b].n_archives;
        ce_manifest_free(check);
        rc = ce_file_write_atomic(ctx, path, text, strlen(text), 0644);
    }
    free(text);
    return rc;
}

int ce_mirror_build(ce_ctx *ctx, const ce_mirror_req *req, ce_mirror_stats *st)
{
    memset(st, 0, sizeof *st);
    cJSON *src = cJSON_ParseWithLength(req->src_text, req->src_len);
    if (!src) return ce_fail(ctx, CE_ERR_INTEGRITY, "the manifest %s is not valid JSON", req->m->origin);
    plan pl = { 0 };
    ce_ctx mctx = *ctx;   /* the same configuration with the mirror's work directory as the root */
    int lock = -1, rc = ce_mkdir_p(ctx, req->dir, 0755);
    if (!rc && (size_t)snprintf(mctx.root, sizeof mctx.root, "%s/%s", req->dir, WORK_DIR) >= sizeof mctx.root)
        rc = ce_fail(ctx, CE_ERR_OTHER, "mirror directory path too long: %s", req->dir);
    if (!rc) rc = ce_store_lock(&mctx, &lock);
    if (!rc) rc = make_plan(ctx, req, src, &pl);
    if (!rc) rc = place_files(ctx, &mctx, req, &pl, st);
    if (!rc) rc = write_manifest(ctx, req, src, &pl, st);
    ce_store_unlock(lock);
    free(pl.f);
    cJSON_Delete(src);
    return rc;
}

/* ---- --check ------------------------------------------------------------- */

static void check_one(ce_ctx *ctx, const char *dir, const cJSON *art, ce_mirror_stats *st)
{
    const cJSON *url = cJSON_GetObjectItemCaseSensitive(art, "url");
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(art, "sha256");
    const cJSON *size = cJSON_GetObjectItemCaseSensitive(art, "size");
    if (!cJSON_IsString(url) || !cJSON_IsString(sha)) return;
    st->files++;
    char path[4400], hex[CE_SHA256_HEX];
    if (strstr(url->valuestring, "://")) {
        ce_emit(ctx, CE_EV_WARN, NULL, "%s is not in the mirror (absolute URL); not checked", url->valuestring);
        return;
    }
    if (ce_path_join(path, sizeof path, dir, url->valuestring) != CE_OK) {
        ce_emit(ctx, CE_EV_WARN, NULL, "%s/%s: the path is too long; not checked", dir, url->valuestring);
        return;
    }
    struct stat stt;
    ce_quiet q;   /* a file that cannot be hashed is a warning, not the check's error */
    ce_quiet_begin(&q, false);
    if (stat(path, &stt) != 0) {
        ce_emit(ctx, CE_EV_WARN, NULL, "missing: %s (run cudaenv mirror again to fetch it)", path);
    } else if (cJSON_IsNumber(size) && (long long)stt.st_size != (long long)size->valuedouble) {
        ce_emit(ctx, CE_EV_WARN, NULL, "wrong size: %s has %lld bytes, the manifest says %.0f; delete it and "
                "run cudaenv mirror again", path, (long long)stt.st_size, size->valuedouble);
    } else if (ce_sha256_file(ctx, path, hex) != CE_OK) {
        ce_emit(ctx, CE_EV_WARN, NULL, "%s", ce_errmsg());
    } else if (strcmp(hex, sha->valuestring) != 0) {
        ce_emit(ctx, CE_EV_WARN, NULL, "sha256 mismatch: %s is %s, the manifest says %s; delete it and run "
                "cudaenv mirror again", path, hex, sha->valuestring);
    } else {
        ce_emit(ctx, CE_EV_INFO, NULL, "ok: %s", url->valuestring);
        ce_quiet_end(&q);
        return;
    }
    ce_quiet_end(&q);
    st->bad++;
}

int ce_mirror_check(ce_ctx *ctx, const char *dir, ce_mirror_stats *st)
{
    memset(st, 0, sizeof *st);
    char path[4400], *text;
    size_t len;
    ce_manifest *m = NULL;
    int rc = ce_join(ctx, path, sizeof path, dir, CE_MIRROR_MANIFEST);
    if (rc) return rc;
    rc = ce_manifest_load_file(ctx, path, &m);
    if (rc) return rc;
    ce_manifest_free(m);
    if ((rc = ce_file_read(ctx, path, CE_MANIFEST_MAX, &text, &len))) return rc;
    cJSON *j = cJSON_ParseWithLength(text, len), *rel, *map, *art;
    free(text);
    cJSON_ArrayForEach(rel, cJSON_GetObjectItemCaseSensitive(j, "cuda"))
        cJSON_ArrayForEach(art, cJSON_GetObjectItemCaseSensitive(rel, "runfile")) check_one(ctx, dir, art, st);
    cJSON_ArrayForEach(rel, cJSON_GetObjectItemCaseSensitive(j, "cudnn"))
        cJSON_ArrayForEach(map, rel)
            if (cudnn_key(map->string) && cJSON_IsObject(map))
                cJSON_ArrayForEach(art, map) check_one(ctx, dir, art, st);
    cJSON_Delete(j);
    if (st->bad)
        return ce_fail(ctx, CE_ERR_INTEGRITY, "%zu of %zu files in the mirror %s are missing or wrong (listed "
                       "above)", st->bad, st->files, dir);
    return CE_OK;
}
