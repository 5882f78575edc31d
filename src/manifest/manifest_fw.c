/* The framework sections of a manifest (MANIFEST.md "torch" and "jax"):
 *
 *   "torch": { "2.5": { "default": "cu124", "python": "...", "source": "...",
 *                       "builds": { "cu124": { "cuda": "12.4.1", "cudnn": "9.1.1.17",
 *                                              "wheel": { "cuda": "12.4", "cudnn": "9.1.0.70" },
 *                                              "channel": "stable", "source": "..." }, ... } } }
 *   "jax":   { "0.4.30": { "default": "cuda12", "builds": { "cuda12": { ... } } } }
 *
 * Parsed after "cuda" and "cudnn": an installable build must name releases
 * the manifest has (cuDNN with a build for the CUDA's major), as TensorFlow
 * rows must; a build that cannot be installed says why ("not_installable").
 * Lookups (the default build, "2" / "latest" aliases) are here too. */
#include "manifest_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/version.h"

static const char *const fw_names[] = { "torch", "jax" };

static bool tag_valid(const char *s)
{
    size_t n = strlen(s);
    if (n < 3 || n > 15 || strncmp(s, "cu", 2)) return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9'))) return false;
    return true;
}

static int parse_build(parser *p, const cJSON *v, ce_fw_build *b)
{
    if (!(b->tag = strdup(v->string))) return ce_fail(CE_ERR_NOMEM, "out of memory");
    if (!tag_valid(v->string))
        return mf_bad(p, "builds are keyed by the wheel's CUDA tag (\"cu124\", \"cuda12\"), not '%.40s'", v->string);
    if (!cJSON_IsObject(v)) return mf_bad(p, "expected an object, got %s", mf_type_name(v));
    int rc;
    if ((rc = mf_get_version(p, v, "cuda", true, &b->cuda)) || (rc = mf_get_version(p, v, "cudnn", false, &b->cudnn)) ||
        (rc = mf_get_str(p, v, "channel", false, &b->channel)) || (rc = mf_get_str(p, v, "source", false, &b->source)) ||
        (rc = mf_get_str(p, v, "not_installable", false, &b->not_installable)) ||
        (rc = mf_get_str(p, v, "cudnn_why", false, &b->cudnn_why)) ||
        (rc = mf_get_str(p, v, "cudnn_passed_over", false, &b->cudnn_passed_over)))
        return rc;
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(v, "wheel");
    if (w && !cJSON_IsNull(w)) {
        size_t n = mf_path_push(p, "wheel");
        if (!cJSON_IsObject(w)) return mf_bad(p, "expected {\"cuda\": \"12.4\", \"cudnn\": \"9.1.0.70\"}, got %s",
                                              mf_type_name(w));
        if ((rc = mf_get_version(p, w, "cuda", false, &b->wheel_cuda)) ||
            (rc = mf_get_version(p, w, "cudnn", false, &b->wheel_cudnn)))
            return rc;
        mf_path_pop(p, n);
    }
    return CE_OK;
}

static int parse_fw(parser *p, const cJSON *v, ce_fw *f, bool major_minor)
{
    if (!(f->version = strdup(v->string))) return ce_fail(CE_ERR_NOMEM, "out of memory");
    int dots = 0;
    for (const char *s = v->string; *s; s++) dots += *s == '.';
    if (!ce_version_valid(v->string) || (major_minor ? dots != 1 : dots < 1) || strlen(v->string) > 31)
        return mf_bad(p, "releases are keyed %s, not '%.40s'", major_minor ? "MAJOR.MINOR (e.g. \"2.5\")"
                      : "by version (e.g. \"0.4.30\")", v->string);
    if (!cJSON_IsObject(v)) return mf_bad(p, "expected an object, got %s", mf_type_name(v));
    int rc;
    if ((rc = mf_get_str(p, v, "default", true, &f->deflt)) ||
        (rc = mf_get_str(p, v, "default_source", false, &f->default_source)) ||
        (rc = mf_get_str(p, v, "python", false, &f->python)) || (rc = mf_get_str(p, v, "source", false, &f->source)))
        return rc;
    const cJSON *bs = cJSON_GetObjectItemCaseSensitive(v, "builds");
    size_t n = mf_path_push(p, "builds");
    if (!cJSON_IsObject(bs) || cJSON_GetArraySize(bs) == 0)
        return mf_bad(p, "expected an object of CUDA builds (\"cu124\": {\"cuda\": ..., \"cudnn\": ...}), got %s",
                      bs ? mf_type_name(bs) : "nothing");
    size_t cap = (size_t)cJSON_GetArraySize(bs);
    if (!(f->builds = calloc(cap, sizeof *f->builds))) return ce_fail(CE_ERR_NOMEM, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach(it, bs) {
        size_t k = mf_path_push(p, it->string);
        for (size_t i = 0; i < f->n_builds; i++)
            if (!strcmp(f->builds[i].tag, it->string)) return mf_bad(p, "duplicate key");
        if ((rc = parse_build(p, it, &f->builds[f->n_builds++]))) return rc;
        mf_path_pop(p, k);
    }
    mf_path_pop(p, n);
    if (!ce_fw_build_for(f, f->deflt)) {
        n = mf_path_push(p, "default");
        return mf_bad(p, "'%.40s' is not one of the release's builds", f->deflt);
    }
    return CE_OK;
}

static int parse_torch(parser *p, const cJSON *v, void *f) { return parse_fw(p, v, f, true); }
static int parse_jax(parser *p, const cJSON *v, void *f) { return parse_fw(p, v, f, false); }
static int cmp_fw(const void *a, const void *b) { return ce_version_cmp(((const ce_fw *)a)->version, ((const ce_fw *)b)->version); }

/* Installable builds name a CUDA and a cuDNN (built for its major) of this manifest. */
static int check_refs(parser *p, const ce_manifest *m, const char *name, const ce_fw *f, const ce_fw_build *b)
{
    if (b->not_installable) return CE_OK;
    snprintf(p->path, sizeof p->path, "%s", name);
    mf_path_push(p, f->version);
    mf_path_push(p, "builds");
    mf_path_push(p, b->tag);
    const ce_cuda *c = ce_manifest_cuda(m, b->cuda);
    if (!c) {
        mf_path_push(p, "cuda");
        return mf_bad(p, "CUDA %s is not in the manifest's \"cuda\" section; add it, or mark the build "
                      "\"not_installable\" with the reason", b->cuda);
    }
    if (!b->cudnn) return CE_OK;
    const ce_cudnn *d = ce_manifest_cudnn(m, b->cudnn);
    mf_path_push(p, "cudnn");
    if (!d)
        return mf_bad(p, "cuDNN %s is not in the manifest's \"cudnn\" section; add it, or mark the build "
                      "\"not_installable\" with the reason", b->cudnn);
    int major = ce_version_major(c->version);
    for (size_t i = 0; i < d->n_builds; i++)
        if (d->builds[i].cuda_major == major) return CE_OK;
    return mf_bad(p, "cuDNN %s has no build for CUDA %d (needs cudnn.\"%s\".cuda%d)", b->cudnn, major, b->cudnn, major);
}

int mf_parse_frameworks(parser *p, const cJSON *doc, ce_manifest *m)
{
    int rc;
    if ((rc = mf_parse_section(p, doc, "torch", sizeof(ce_fw), parse_torch, cmp_fw, (void **)&m->torch, &m->n_torch)) ||
        (rc = mf_parse_section(p, doc, "jax", sizeof(ce_fw), parse_jax, cmp_fw, (void **)&m->jax, &m->n_jax)))
        return rc;
    for (size_t k = 0; k < 2; k++) {
        size_t n;
        const ce_fw *list = ce_manifest_fws(m, fw_names[k], &n);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < list[i].n_builds; j++)
                if ((rc = check_refs(p, m, fw_names[k], &list[i], &list[i].builds[j]))) return rc;
    }
    return CE_OK;
}

void mf_free_frameworks(ce_manifest *m)
{
    ce_fw *lists[2] = { m->torch, m->jax };
    size_t counts[2] = { m->n_torch, m->n_jax };
    for (size_t k = 0; k < 2; k++) {
        for (size_t i = 0; i < counts[k]; i++) {
            ce_fw *f = &lists[k][i];
            for (size_t j = 0; j < f->n_builds; j++) {
                ce_fw_build *b = &f->builds[j];
                free(b->tag); free(b->cuda); free(b->cudnn); free(b->wheel_cuda); free(b->wheel_cudnn);
                free(b->channel); free(b->source); free(b->not_installable); free(b->cudnn_why);
                free(b->cudnn_passed_over);
            }
            free(f->builds); free(f->version); free(f->deflt); free(f->default_source); free(f->python);
            free(f->source);
        }
        free(lists[k]);
    }
}

/* ---- lookups ---------------------------------------------------------------- */

const ce_fw *ce_manifest_fws(const ce_manifest *m, const char *name, size_t *n)
{
    *n = 0;
    if (!m || !name) return NULL;
    if (!strcmp(name, "torch")) { *n = m->n_torch; return m->torch; }
    if (!strcmp(name, "jax")) { *n = m->n_jax; return m->jax; }
    return NULL;
}

const ce_fw_build *ce_fw_build_for(const ce_fw *f, const char *tag)
{
    if (!f) return NULL;
    if (!tag || !*tag) tag = f->deflt;
    for (size_t i = 0; tag && i < f->n_builds; i++)
        if (!strcmp(f->builds[i].tag, tag)) return &f->builds[i];
    return NULL;
}

const ce_fw *ce_manifest_fw_pick(const ce_manifest *m, const char *name, const char *v, const char *tag)
{
    size_t n;
    const ce_fw *list = ce_manifest_fws(m, name, &n);
    if (!list || !v) return NULL;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i].version, v)) return &list[i];
    bool any = !strcmp(v, "latest");
    /* an alias: "2" (torch), "0.4" (jax), latest; the newest whose build installs */
    if (!any && !strcmp(name, "torch") && strchr(v, '.')) return NULL;
    for (size_t i = n; i-- > 0;) {
        const ce_fw_build *b = ce_fw_build_for(&list[i], tag);
        if (b && !b->not_installable && (any || ce_version_matches(v, list[i].version))) return &list[i];
    }
    return NULL;
}
