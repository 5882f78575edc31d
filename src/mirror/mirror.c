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
#include <time.h>
#include <unistd.h>

#include "install/components.h"
#include "core/file.h"
#include "core/trust.h"
#include "core/version.h"
#include "fetch/digest.h"
#include "fetch/fetch.h"
#include "mirror_dir.h"
#include "mirror_int.h"
#include "install/redist.h"
#include "store/store.h"
#include "core/path.h"

/* The artifact's JSON object in the source manifest. */
static cJSON *src_node(cJSON *src, const ce_mirror_file *f)
{
    char key[16];
    if (f->kind == MF_REDIST)
        return cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(src, "cuda"), f->version), "redist");
    if (f->kind == MF_RUNFILE) {
        cJSON *c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(src, "cuda"), f->version);
        return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "runfile"), f->platform);
    }
    snprintf(key, sizeof key, "cuda%d", f->cuda_major);
    cJSON *d = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(src, f->kind == MF_NCCL ? "nccl" : "cudnn"),
                                                f->version);
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, key), f->platform);
}

/* NVIDIA's relative path of a manifest URL as written in the source:
 * relative as is, https://developer.download.nvidia.com/X -> X, any other
 * absolute URL -> its path.  Nothing that could leave DIR. */
int ce_mirror_rel_path(const char *url, char *out, size_t outsz)
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
        return ce_fail(CE_ERR_INTEGRITY, "cannot mirror %s: no usable file path in the URL", url);
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
        return ce_fail(CE_ERR_INTEGRITY, "cannot mirror %s: its path '%s' would leave the mirror "
                       "directory or clash with cudaenv's own files", url, out);
    return CE_OK;
}

static const char *kind_name(mf_kind k)
{
    return k == MF_RUNFILE ? "runfile" : k == MF_CUDNN ? "cuDNN archive" : k == MF_REDIST ? "redistrib JSON"
                           : k == MF_NCCL ? "NCCL wheel" : "component";
}

static ce_mirror_file *plan_push(plan *pl, const ce_mirror_file *f)
{
    for (size_t i = 0; i < pl->n; i++)
        if (!strcmp(pl->f[i].rel, f->rel) && !strcmp(pl->f[i].sha256, f->sha256) &&
            !strcmp(pl->f[i].platform, f->platform) && pl->f[i].kind == f->kind)
            return &pl->f[i];   /* already planned */
    if (pl->n == pl->cap) {
        size_t cap = pl->cap ? pl->cap * 2 : 16;
        ce_mirror_file *nf = realloc(pl->f, cap * sizeof *nf);
        if (!nf) { ce_fail(CE_ERR_NOMEM, "out of memory"); return NULL; }
        pl->f = nf;
        pl->cap = cap;
    }
    pl->f[pl->n] = *f;
    return &pl->f[pl->n++];
}

static int plan_add(plan *pl, cJSON *src, mf_kind kind, const char *version, int major,
                    const char *platform, const ce_artifact *art)
{
    ce_mirror_file f = { .kind = kind, .version = version, .cuda_major = major, .platform = platform,
                         .url = art->url, .sha256 = art->sha256, .size = art->size };
    const cJSON *url = cJSON_GetObjectItemCaseSensitive(src_node(src, &f), "url");
    if (!cJSON_IsString(url))
        return ce_fail(CE_ERR_INTEGRITY, "the manifest has no URL for %s %s (%s)", version, platform,
                       kind_name(kind));
    int rc = ce_mirror_rel_path(url->valuestring, f.rel, sizeof f.rel);
    if (!rc && !plan_push(pl, &f)) rc = ce_errcode();
    return rc;
}

static const ce_cudnn_build *build_of(const ce_cudnn *d, const ce_artifact *a)
{
    for (size_t i = 0; d && i < d->n_builds; i++)
        if (a >= d->builds[i].archives && a < d->builds[i].archives + d->builds[i].n_archives)
            return &d->builds[i];
    return NULL;
}

/* The file rel under DIR, already verified, or the same bytes in the
 * user's download cache: linked or copied into the mirror's own cache, where
 * the fetch finds it (and hashes it again) instead of downloading it. */
static int seed_mirror_cache(ce_ctx *ctx, ce_ctx *mctx, const ce_mdir *md, const ce_mirror_file *f, bool *kept)
{
    char cached[4400], mine[4400], rel[200];
    int v = ce_mdir_verified(md, f->rel, f->size, f->sha256);
    if (v < 0) return v;
    *kept = v == 1;
    if (*kept || ce_cache_path(mctx, f->sha256, mine, sizeof mine) || ce_exists(mine)) return CE_OK;
    snprintf(rel, sizeof rel, "%s/cache/%s", WORK_DIR, f->sha256);
    if (ce_cache_path(ctx, f->sha256, cached, sizeof cached) == CE_OK && ce_exists(cached)) {
        struct stat st;
        if (stat(cached, &st) == 0 && S_ISREG(st.st_mode) && (f->size < 0 || st.st_size == f->size))
            return ce_mdir_place(md, rel, cached, false);
    }
    return CE_OK;
}

/* The components install SPEC would fetch for r on pctx's platform: the
 * release's redistrib JSON (a file of the mirror itself, so nodes read the
 * same JSON) and every component the same selection picks (install's
 * profile, --components), laid out beside it as NVIDIA's tree is. */
static int plan_components(ce_ctx *ctx, ce_ctx *pmctx, const ce_mdir *md, const ce_mirror_req *req, cJSON *src,
                           const ce_resolved *r, const char *plat, plan *pl)
{
    const ce_artifact *j = r->cuda->redist;
    int rc = plan_add(pl, src, MF_REDIST, r->cuda->version, 0, plat, j);   /* plat outlives pmctx */
    if (rc) return rc;
    ce_mirror_file *jf = &pl->f[pl->n - 1];
    for (size_t i = 0; i < pl->n; i++)
        if (pl->f[i].kind == MF_REDIST && !strcmp(pl->f[i].sha256, j->sha256)) jf = &pl->f[i];
    char jrel[1024];
    snprintf(jrel, sizeof jrel, "%s", jf->rel);
    bool kept;
    if ((rc = seed_mirror_cache(ctx, pmctx, md, jf, &kept))) return rc;
    if (kept) {   /* the mirror's own copy: the fetch takes it from the cache */
        char from[CE_PATH_MAX], rel[200];
        if ((rc = ce_join(from, sizeof from, md->path, jrel))) return rc;
        snprintf(rel, sizeof rel, "%s/cache/%s", WORK_DIR, j->sha256);
        if ((rc = ce_mdir_place(md, rel, from, false))) return rc;
    }
    if (pl->n_reds == sizeof pl->reds / sizeof pl->reds[0])
        return ce_fail(CE_ERR_USAGE, "too many CUDA releases in one mirror run; mirror fewer at a time");
    ce_redist *red = NULL;
    rc = ce_components_plan(pmctx, req->m, r, &red, NULL);
    char mine[4400];
    if (kept && ce_cache_path(pmctx, j->sha256, mine, sizeof mine) == CE_OK)
        unlink(mine);   /* read; the mirror keeps its own copy */
    if (rc) return rc;
    pl->reds[pl->n_reds++] = red;
    char *slash = strrchr(jrel, '/');
    if (slash) slash[1] = '\0'; else jrel[0] = '\0';
    for (size_t i = 0; i < red->n && !rc; i++) {
        const ce_component *c = &red->comps[i];
        if (!c->selected) continue;
        char joined[2200];
        ce_mirror_file f = { .kind = MF_COMPONENT, .version = r->cuda->version, .platform = plat,
                             .url = c->url, .sha256 = c->sha256, .size = c->size, .component = c->name };
        snprintf(joined, sizeof joined, "%s%s", jrel, c->relative_path);
        if ((rc = ce_mirror_rel_path(joined, f.rel, sizeof f.rel))) break;
        if (!plan_push(pl, &f)) rc = ce_errcode();
    }
    return rc;
}

static int make_plan(ce_ctx *ctx, ce_ctx *mctx, const ce_mdir *md, const ce_mirror_req *req, cJSON *src, plan *pl)
{
    const ce_manifest *m = req->m;
    int rc = CE_OK;
    for (size_t p = 0; p < req->n_platforms && !rc; p++) {
        const char *plat = req->platforms[p];
        ce_ctx pctx = *ctx, pmctx = *mctx;   /* the same configuration for another platform */
        snprintf(pctx.platform, sizeof pctx.platform, "%s", plat);
        snprintf(pmctx.platform, sizeof pmctx.platform, "%s", plat);
        if (req->all) {
            for (size_t i = 0; i < m->n_cuda && !rc; i++) {
                const ce_artifact *a = ce_artifact_for(m->cuda[i].runfiles, m->cuda[i].n_runfiles, plat);
                if (a) rc = plan_add(pl, src, MF_RUNFILE, m->cuda[i].version, 0, plat, a);
                ce_resolved r = { .cuda = &m->cuda[i] };   /* the toolkit profile */
                int arc;
                if (!rc && ce_components_apply(&pctx, &r, &arc)) rc = plan_components(ctx, &pmctx, md, req, src, &r, plat, pl);
            }
            for (size_t i = 0; i < m->n_cudnn && !rc; i++)
                for (size_t b = 0; b < m->cudnn[i].n_builds && !rc; b++) {
                    const ce_cudnn_build *bd = &m->cudnn[i].builds[b];
                    const ce_artifact *a = ce_artifact_for(bd->archives, bd->n_archives, plat);
                    if (a) rc = plan_add(pl, src, MF_CUDNN, m->cudnn[i].version, bd->cuda_major, plat, a);
                }
            continue;
        }
        for (size_t s = 0; s < req->n_specs && !rc; s++) {
            ce_resolved r;
            if ((rc = ce_resolve(&pctx, m, &req->specs[s], req->cudnn, req->no_cudnn, &r))) break;
            /* what install SPEC fetches: the components, or the runfile */
            if (ce_components_apply(&pctx, &r, &rc)) rc = plan_components(ctx, &pmctx, md, req, src, &r, plat, pl);
            else if (!rc && !r.runfile)
                rc = ce_fail(CE_ERR_NOTFOUND, "CUDA %s has no runfile for %s in the manifest", r.cuda->version,
                             plat);
            else if (!rc) rc = plan_add(pl, src, MF_RUNFILE, r.cuda->version, 0, plat, r.runfile);
            const ce_cudnn_build *bd = r.cudnn_archive ? build_of(r.cudnn, r.cudnn_archive) : NULL;
            if (!rc && bd)
                rc = plan_add(pl, src, MF_CUDNN, r.cudnn->version, bd->cuda_major, plat, r.cudnn_archive);
            const ce_cudnn *nl = NULL;
            const ce_artifact *na = NULL;
            if (!rc) rc = ce_resolve_nccl(&pctx, m, &r, pctx.install_components, &nl, &na);
            if (!rc && na)   /* the NCCL wheel install would take (--components -nccl: none) */
                rc = plan_add(pl, src, MF_NCCL, nl->version, ce_version_major(r.cuda->version), plat, na);
        }
    }
    return rc;
}

/* ---- placing files ------------------------------------------------------- */

static int place_files(ce_ctx *ctx, ce_ctx *mctx, const ce_mdir *md, const ce_mirror_req *req, plan *pl,
                       ce_mirror_stats *st)
{
    ce_fetch_item *items = calloc(pl->n ? pl->n : 1, sizeof *items);
    size_t *which = calloc(pl->n ? pl->n : 1, sizeof *which), n = 0;
    int rc = items && which ? CE_OK : ce_fail(CE_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < pl->n && !rc; i++) {
        const ce_mirror_file *f = &pl->f[i];
        bool kept, twice = false;   /* a JSON planned for two platforms is one file */
        for (size_t j = 0; j < i && !twice; j++) twice = !strcmp(pl->f[j].rel, f->rel);
        if (twice) continue;
        /* re-hashed, not only sized: a same-size corrupt file is replaced */
        if ((rc = seed_mirror_cache(ctx, mctx, md, f, &kept))) break;
        if (kept) { st->kept++; continue; }
        items[n] = (ce_fetch_item){ .url = f->url, .sha256 = f->sha256, .size = f->size,
                                    .label = strrchr(f->rel, '/') ? strrchr(f->rel, '/') + 1 : f->rel,
                                    .allow_http = req->m->local || ctx->insecure };
        which[n++] = i;
    }
    if (!rc && n) {
        ce_emit(ctx, CE_EV_STEP, NULL, "mirroring %zu file%s into %s", n, n == 1 ? "" : "s", md->path);
        rc = ce_fetch_all(mctx, items, n);
    }
    for (size_t k = 0; k < n && !rc; k++) {
        const ce_mirror_file *f = &pl->f[which[k]];
        /* the same file at two paths: the first rename took it, link that */
        size_t j = 0;
        while (j < k && strcmp(items[j].sha256, items[k].sha256)) j++;
        char first[CE_PATH_MAX];
        if (j < k && (rc = ce_join(first, sizeof first, md->path, pl->f[which[j]].rel))) break;
        if ((rc = ce_mdir_place(md, f->rel, j < k ? first : items[k].path, j == k))) break;
        st->added++;
        st->bytes_fetched += f->size > 0 ? f->size : 0;
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

static bool cuda_art_key(const char *k) { return !strcmp(k, "runfile") || !strcmp(k, "redist"); }
static bool cudnn_key(const char *k) { return !strncmp(k, "cuda", 4) && k[4] >= '0' && k[4] <= '9'; }

/* A component: its name in cuda.<ver>.redist.mirror_components.<platform>
 * (the JSON names every component; the mirror holds these). */
static int merge_component(cJSON *out, const ce_mirror_file *f)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "cuda"), f->version);
    cJSON *rd = cJSON_GetObjectItemCaseSensitive(c, "redist");
    if (!cJSON_IsObject(rd)) return ce_fail(CE_ERR_OTHER, "internal: %s before its JSON", f->rel);
    cJSON *plats = obj_child(rd, "mirror_components");
    cJSON *arr = plats ? cJSON_GetObjectItemCaseSensitive(plats, f->platform) : NULL;
    if (plats && !cJSON_IsArray(arr)) {
        cJSON_DeleteItemFromObjectCaseSensitive(plats, f->platform);
        arr = cJSON_AddArrayToObject(plats, f->platform);
    }
    if (!arr) return ce_fail(CE_ERR_NOMEM, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
        if (cJSON_IsString(it) && !strcmp(it->valuestring, f->component)) return CE_OK;
    cJSON_AddItemToArray(arr, cJSON_CreateString(f->component));
    return CE_OK;
}

static int merge_entry(cJSON *out, cJSON *src, const ce_mirror_file *f)
{
    if (f->kind == MF_COMPONENT) return merge_component(out, f);
    char key[16] = "runfile";
    cJSON *e = f->kind == MF_CUDNN  ? release_entry(out, src, "cudnn", f->version, cudnn_key)
               : f->kind == MF_NCCL ? release_entry(out, src, "nccl", f->version, cudnn_key)
                                    : release_entry(out, src, "cuda", f->version, cuda_art_key);
    if (f->kind == MF_CUDNN || f->kind == MF_NCCL) snprintf(key, sizeof key, "cuda%d", f->cuda_major);
    cJSON *a = e ? cJSON_Duplicate(src_node(src, f), true) : NULL;
    if (!a) return ce_fail(CE_ERR_NOMEM, "out of memory");
    cJSON_DeleteItemFromObjectCaseSensitive(a, "alt_url");
    cJSON_DeleteItemFromObjectCaseSensitive(a, "mirror_components");
    cJSON_ReplaceItemInObjectCaseSensitive(a, "url", cJSON_CreateString(f->rel));
    ce_mirror_repack_entry(a, f);   /* a repacked cuDNN archive: the repack, NVIDIA's as its origin */
    if (f->kind == MF_REDIST) {
        /* the same JSON again: the components mirrored before stay listed
         * (a repacked mirror's entry names NVIDIA's JSON as its origin) */
        cJSON *old = cJSON_GetObjectItemCaseSensitive(e, "redist");
        const cJSON *osha = cJSON_GetObjectItemCaseSensitive(old, "sha256");
        const cJSON *oorig = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(old, "origin"), "sha256");
        if (cJSON_IsString(oorig)) osha = oorig;
        cJSON *keep = cJSON_IsString(osha) && !strcmp(osha->valuestring, f->sha256)
                          ? cJSON_DetachItemFromObjectCaseSensitive(old, "mirror_components") : NULL;
        if (keep) cJSON_AddItemToObject(a, "mirror_components", keep);
        cJSON_DeleteItemFromObjectCaseSensitive(e, "redist");
        cJSON_AddItemToObject(e, "redist", a);
        return CE_OK;
    }
    cJSON *map = obj_child(e, key);
    if (!map) { cJSON_Delete(a); return ce_fail(CE_ERR_NOMEM, "out of memory"); }
    cJSON_DeleteItemFromObjectCaseSensitive(map, f->platform);
    cJSON_AddItemToObject(map, f->platform, a);
    return CE_OK;
}

/* TensorFlow rows whose CUDA (runfile or components) and cuDNN build the
 * mirror now holds. */
static void merge_tf(cJSON *out, cJSON *src)
{
    cJSON *tfs = obj_child(out, "tensorflow"), *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(src, "tensorflow")) {
        const cJSON *cu = cJSON_GetObjectItemCaseSensitive(row, "cuda");
        const cJSON *dn = cJSON_GetObjectItemCaseSensitive(row, "cudnn");
        if (!cJSON_IsString(cu) || cJSON_GetObjectItemCaseSensitive(row, "not_installable")) continue;
        cJSON *c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "cuda"), cu->valuestring);
        const cJSON *rf = cJSON_GetObjectItemCaseSensitive(c, "runfile");
        if (!(rf && rf->child) && !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(c, "redist"))) continue;
        if (cJSON_IsString(dn)) {
            char key[16];
            snprintf(key, sizeof key, "cuda%d", ce_version_major(cu->valuestring));
            cJSON *d = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "cudnn"), dn->valuestring);
            if (!cJSON_GetObjectItemCaseSensitive(d, key)) continue;
        }
        cJSON *copy = cJSON_Duplicate(row, true);
        /* its NCCL only where the mirror holds a build of it for the row's CUDA major */
        const cJSON *nc = cJSON_GetObjectItemCaseSensitive(row, "nccl");
        if (cJSON_IsString(nc)) {
            char key[16];
            snprintf(key, sizeof key, "cuda%d", ce_version_major(cu->valuestring));
            cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "nccl"), nc->valuestring);
            if (!cJSON_GetObjectItemCaseSensitive(n, key)) cJSON_DeleteItemFromObjectCaseSensitive(copy, "nccl");
        }
        cJSON_DeleteItemFromObjectCaseSensitive(tfs, row->string);
        cJSON_AddItemToObject(tfs, row->string, copy);
    }
}

/* The mirror is the source of its manifest: with a URL, "source" names it
 * and "serial" grows with every run (the time, or one more than the last):
 * what a node checks a signed manifest against (install/manifest_fetch.h). */
static void set_claims(cJSON *out, const char *url)
{
    if (url) {
        cJSON_DeleteItemFromObjectCaseSensitive(out, "source");
        cJSON_AddStringToObject(out, "source", url);
    }
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(out, "source"))) return;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(out, "serial");
    double next = (double)time(NULL);
    if (cJSON_IsNumber(s) && s->valuedouble >= next) next = s->valuedouble + 1;
    cJSON_DeleteItemFromObjectCaseSensitive(out, "serial");
    cJSON_AddNumberToObject(out, "serial", next);
}

static int write_manifest(ce_ctx *ctx, const ce_mdir *md, const ce_mirror_req *req, cJSON *src, plan *pl,
                          ce_mirror_stats *st)
{
    char path[CE_PATH_MAX];
    int rc = ce_join(path, sizeof path, md->path, CE_MIRROR_MANIFEST);
    if (rc) return rc;
    cJSON *out = NULL;
    if (ce_exists(path)) {
        ce_manifest *old = NULL;
        if ((rc = ce_manifest_load_file(ctx, path, &old))) return rc;
        ce_manifest_free(old);
        char *text;
        size_t len;
        if ((rc = ce_file_read(path, CE_MANIFEST_MAX, &text, &len))) return rc;
        out = cJSON_ParseWithLength(text, len);
        free(text);
    } else if ((out = cJSON_CreateObject())) {
        cJSON_AddNumberToObject(out, "schema", 1);
        const cJSON *upd = cJSON_GetObjectItemCaseSensitive(src, "updated");
        cJSON_AddStringToObject(out, "updated", cJSON_IsString(upd) ? upd->valuestring : "");
        cJSON_AddStringToObject(out, "generated_by", "cudaenv mirror " CE_VERSION);
    }
    if (!out) return ce_fail(CE_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < pl->n && !rc; i++) rc = merge_entry(out, src, &pl->f[i]);
    if (!rc) rc = ce_mirror_repack_json(ctx, md, st->repack, out, pl);
    if (!rc && st->repack != CE_REPACK_NONE) {
        cJSON_DeleteItemFromObjectCaseSensitive(out, "repack");
        cJSON_AddStringToObject(out, "repack", ce_repack_name(st->repack));
    }
    if (!rc) merge_tf(out, src);
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(src, "profiles");
    if (!rc && cJSON_IsObject(prof) && pl->n_reds) {   /* nodes select components as install does here */
        cJSON_DeleteItemFromObjectCaseSensitive(out, "profiles");
        cJSON_AddItemToObject(out, "profiles", cJSON_Duplicate(prof, true));
    }
    if (!rc) set_claims(out, req->url);
    if (!rc) st->files = ce_mirror_count(out);
    char *text = rc ? NULL : cJSON_Print(out);
    cJSON_Delete(out);
    if (rc) return rc;
    if (!text) return ce_fail(CE_ERR_NOMEM, "out of memory");
    ce_manifest *check = NULL;   /* what we write must load */
    rc = ce_manifest_parse(ctx, text, strlen(text), path, true, &check);
    if (!rc) {
        ce_manifest_free(check);
        rc = ce_file_write_atomic(path, text, strlen(text), 0644);
    }
    free(text);
    return rc;
}

/* Files a mirror's manifest names: runfiles, cuDNN archives, redistrib
 * JSONs and the components listed as mirrored. */
size_t ce_mirror_count(const cJSON *j)
{
    size_t n = 0;
    const cJSON *rel, *map, *art;
    cJSON_ArrayForEach(rel, cJSON_GetObjectItemCaseSensitive(j, "cuda")) {
        n += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rel, "runfile"));
        const cJSON *rd = cJSON_GetObjectItemCaseSensitive(rel, "redist");
        if (!cJSON_IsObject(rd)) continue;
        n++;
        cJSON_ArrayForEach(map, cJSON_GetObjectItemCaseSensitive(rd, "mirror_components"))
            n += (size_t)cJSON_GetArraySize(map);
    }
    for (int sec = 0; sec < 2; sec++)
        cJSON_ArrayForEach(rel, cJSON_GetObjectItemCaseSensitive(j, sec ? "nccl" : "cudnn"))
            cJSON_ArrayForEach(map, rel)
                if (cudnn_key(map->string) && cJSON_IsObject(map))
                    cJSON_ArrayForEach(art, map) n++;
    return n;
}

int ce_mirror_build(ce_ctx *ctx, const ce_mirror_req *req, ce_mirror_stats *st)
{
    memset(st, 0, sizeof *st);
    cJSON *src = cJSON_ParseWithLength(req->src_text, req->src_len);
    if (!src) return ce_fail(CE_ERR_INTEGRITY, "the manifest %s is not valid JSON", req->m->origin);
    plan pl = { 0 };
    ce_mdir md;
    ce_ctx mctx = *ctx;   /* the same configuration with the mirror's work directory as the root */
    ce_store_txn txn = CE_STORE_TXN_INIT;
    int rc = ce_mdir_open(req->dir, true, &md), cfd = -1;
    mctx.unnamed = true;   /* its work cache is emptied into the mirror, never listed */
    if (!rc && ce_path_join(mctx.root, sizeof mctx.root, md.path, WORK_DIR) != CE_OK)
        rc = ce_fail(CE_ERR_OTHER, "mirror directory path too long: %s", req->dir);
    /* its work directory and cache: no symlink, as root root's own (the
     * fetch then writes .part files there by path) */
    if (!rc && (cfd = ce_mdir_subdir(&md, WORK_DIR "/cache", true)) < 0) rc = cfd;
    if (cfd >= 0) close(cfd);
    if (!rc && ce_trust_privileged()) rc = ce_trust_root(&mctx);
    if (!rc) rc = ce_store_begin(&mctx, &txn);
    if (!rc) rc = make_plan(ctx, &mctx, &md, req, src, &pl);
    if (!rc) rc = place_files(ctx, &mctx, &md, req, &pl, st);
    if (!rc) st->repack = ce_mirror_repack_format(&md, req->repack);
    if (!rc) rc = ce_mirror_repack(ctx, &md, st->repack, &pl, st);
    if (!rc) rc = write_manifest(ctx, &md, req, src, &pl, st);
    ce_store_end(&txn);
    ce_mdir_close(&md);
    for (size_t i = 0; i < pl.n_reds; i++) ce_redist_free(pl.reds[i]);
    free(pl.f);
    cJSON_Delete(src);
    return rc;
}
