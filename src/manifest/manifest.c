/* The manifest (MANIFEST.md, schema 1): cJSON -> owned structs.
 *
 * Validation is strict because the manifest is the trust root: every byte
 * cudaenv installs is named here by URL and sha256.  Each failure names the
 * JSON path of the offending value (cuda."11.8.0".runfile."linux-x86_64".sha256)
 * and the manifest it came from, so the author of an air-gapped mirror's
 * manifest can fix it without guessing.  Unknown keys are ignored so that a
 * newer manifest still loads in an older cudaenv.
 *
 * The URLs a manifest names are checked in manifest_url.c, lookups in a
 * loaded manifest are in manifest_lookup.c. */
#include "manifest_int.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "core/json.h"
#include "core/trust.h"
#include "core/version.h"

/* NVIDIA's platform names.  cudaenv installs for x86_64 and sbsa; the other
 * two are accepted so that a manifest imported from NVIDIA's redistrib JSON
 * loads, but nothing resolves to them. */
static const char *const platforms[] = { "linux-x86_64", "linux-sbsa", "linux-aarch64", "linux-ppc64le" };

int mf_bad(parser *p, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ce_fail(CE_ERR_INTEGRITY, "invalid manifest %s: %s: %s", p->origin, p->path, msg);
}

/* Append ."key" (or .key when it is a plain word) to the current path;
 * returns the old length so the caller can restore it. */
size_t mf_path_push(parser *p, const char *key)
{
    size_t n = strlen(p->path);
    bool plain = *key != '\0';
    for (const char *k = key; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || *k == '_' || (k != key && *k >= '0' && *k <= '9'))) plain = false;
    snprintf(p->path + n, sizeof p->path - n, plain ? "%s%s" : "%s\"%s\"", n ? "." : "", key);
    return n;
}

void mf_path_pop(parser *p, size_t n) { p->path[n] = '\0'; }

const char *mf_type_name(const cJSON *v)
{
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsArray(v)) return "an array";
    return "an object";
}

/* Every string a manifest brings is stored with its control characters
 * escaped (core/trust.h): a manifest cannot drive the terminal through
 * `info`, `list-remote` or an error message. */
static char *xstrdup(parser *p, const char *s)
{
    char *d = ce_escape_dup(s);
    if (!d) ce_fail(CE_ERR_NOMEM, "out of memory reading manifest %s", p->origin);
    return d;
}

/* Optional string member: absent or null -> *out stays NULL. */
int mf_get_str(parser *p, const cJSON *obj, const char *key, bool required, char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) {
        if (!required) return CE_OK;
        size_t n = mf_path_push(p, key);
        int rc = mf_bad(p, "missing (required string)");
        mf_path_pop(p, n);
        return rc;
    }
    if (!cJSON_IsString(v)) {
        size_t n = mf_path_push(p, key);
        int rc = mf_bad(p, "expected a string, got %s", mf_type_name(v));
        mf_path_pop(p, n);
        return rc;
    }
    *out = xstrdup(p, v->valuestring);
    return *out ? CE_OK : CE_ERR_NOMEM;
}

int mf_get_version(parser *p, const cJSON *obj, const char *key, bool required, char **out)
{
    int rc = mf_get_str(p, obj, key, required, out);
    if (rc || !*out || ce_version_valid(*out)) return rc;
    size_t n = mf_path_push(p, key);
    rc = mf_bad(p, "'%s' is not a version (digits separated by dots)", *out);
    mf_path_pop(p, n);
    return rc;
}

static bool is_platform(const char *s)
{
    for (size_t i = 0; i < sizeof platforms / sizeof *platforms; i++)
        if (strcmp(s, platforms[i]) == 0) return true;
    return false;
}

static int count_dots(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '.';
    return n;
}

static bool is_sha256(const char *s)
{
    size_t i = 0;
    for (; s[i]; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return i == 64;
}

/* ---- values ---------------------------------------------------------------- */

static int parse_artifact(parser *p, const cJSON *v, const char *platform, ce_artifact *a)
{
    a->size = -1;
    if (strcmp(platform, "any") != 0 && !is_platform(platform))
        return mf_bad(p, "unknown platform '%s' (NVIDIA's names: linux-x86_64, linux-sbsa)", platform);
    if (!cJSON_IsObject(v)) return mf_bad(p, "expected an object with url and sha256, got %s", mf_type_name(v));
    if (!(a->platform = xstrdup(p, platform))) return CE_ERR_NOMEM;
    int rc;
    char *sha = NULL;
    if ((rc = mf_get_str(p, v, "url", true, &a->url))) return rc;
    if ((rc = mf_get_str(p, v, "sha256", true, &sha))) return rc;
    bool ok = is_sha256(sha);
    if (ok) memcpy(a->sha256, sha, 65);
    size_t n = mf_path_push(p, "sha256");
    if (!ok) rc = mf_bad(p, "expected 64 hex characters (lowercase), got '%.80s'", sha);
    mf_path_pop(p, n);
    free(sha);
    if (rc) return rc;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(v, "size");
    if (s && !cJSON_IsNull(s)) {
        n = mf_path_push(p, "size");
        /* doubles hold integers exactly up to 2^53: far beyond any download */
        if (!cJSON_IsNumber(s) || s->valuedouble < 0 || s->valuedouble > 9007199254740992.0 ||
            (double)(long long)s->valuedouble != s->valuedouble)
            rc = mf_bad(p, "expected a non-negative integer number of bytes, got %s%s", mf_type_name(s),
                     cJSON_IsString(s) ? " (NVIDIA's redistrib JSON writes sizes as strings: convert)" : "");
        else
            a->size = (long long)s->valuedouble;
        mf_path_pop(p, n);
        if (rc) return rc;
    }
    if ((rc = mf_get_version(p, v, "for_cuda", false, &a->for_cuda))) return rc;
    n = mf_path_push(p, "url");
    rc = mf_check_url(p, &a->url, cJSON_GetObjectItemCaseSensitive(v, "url")->valuestring);
    mf_path_pop(p, n);
    return rc;
}

/* An object of platform -> artifact. */
static int parse_platforms(parser *p, const cJSON *obj, ce_artifact **list, size_t *count)
{
    if (!cJSON_IsObject(obj)) return mf_bad(p, "expected an object of platform -> {url, sha256, size}, got %s", mf_type_name(obj));
    size_t n = (size_t)cJSON_GetArraySize(obj);
    *list = calloc(n ? n : 1, sizeof **list);
    if (!*list) return ce_fail(CE_ERR_NOMEM, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach(it, obj) {
        size_t m = mf_path_push(p, it->string);
        for (size_t i = 0; i < *count; i++)
            if (strcmp((*list)[i].platform, it->string) == 0) return mf_bad(p, "duplicate key");
        int rc = parse_artifact(p, it, it->string, &(*list)[(*count)++]);
        if (rc) return rc;
        mf_path_pop(p, m);
    }
    return CE_OK;
}

static int parse_cuda(parser *p, const cJSON *v, ce_cuda *c)
{
    if (!(c->version = xstrdup(p, v->string))) return CE_ERR_NOMEM;
    if (!ce_version_valid(v->string) || count_dots(v->string) != 2)
        return mf_bad(p, "CUDA releases are keyed X.Y.Z (e.g. \"11.8.0\"), not '%s'", v->string);
    if (strlen(v->string) > CE_MANIFEST_KEY_MAX)
        return mf_bad(p, "the version key is %zu characters; the store names at most %d", strlen(v->string),
                   CE_MANIFEST_KEY_MAX);
    if (!cJSON_IsObject(v)) return mf_bad(p, "expected an object, got %s", mf_type_name(v));
    int rc;
    if ((rc = mf_get_version(p, v, "min_driver", false, &c->min_driver)) ||
        (rc = mf_get_version(p, v, "min_driver_compat", false, &c->min_driver_compat)) ||
        (rc = mf_get_str(p, v, "source", false, &c->source)))
        return rc;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(v, "max_gcc");
    if (g && !cJSON_IsNull(g)) {
        size_t n = mf_path_push(p, "max_gcc");
        if (!cJSON_IsNumber(g) || g->valuedouble < 1 || g->valuedouble > 1000 || (double)(long long)g->valuedouble != g->valuedouble)
            return mf_bad(p, "expected a GCC major version (integer), got %s", mf_type_name(g));
        c->max_gcc = g->valueint;
        mf_path_pop(p, n);
    }
    const cJSON *sm = cJSON_GetObjectItemCaseSensitive(v, "sm");
    if (sm && !cJSON_IsNull(sm)) {
        size_t n = mf_path_push(p, "sm");
        if (!cJSON_IsObject(sm)) return mf_bad(p, "expected {\"min\": \"3.5\", \"max\": \"9.0\"}, got %s", mf_type_name(sm));
        if ((rc = mf_get_version(p, sm, "min", false, &c->sm_min)) || (rc = mf_get_version(p, sm, "max", false, &c->sm_max)))
            return rc;
        mf_path_pop(p, n);
    }
    const cJSON *rf = cJSON_GetObjectItemCaseSensitive(v, "runfile");
    if (rf && !cJSON_IsNull(rf)) {
        size_t n = mf_path_push(p, "runfile");
        if ((rc = parse_platforms(p, rf, &c->runfiles, &c->n_runfiles))) return rc;
        mf_path_pop(p, n);
    }
    const cJSON *rd = cJSON_GetObjectItemCaseSensitive(v, "redist");
    if (rd && !cJSON_IsNull(rd)) {
        size_t n = mf_path_push(p, "redist");
        if (!(c->redist = calloc(1, sizeof *c->redist))) return ce_fail(CE_ERR_NOMEM, "out of memory");
        if ((rc = parse_artifact(p, rd, "any", c->redist))) return rc;
        if (c->redist->size > 64ll * 1024 * 1024)
            return mf_bad(p, "a redistrib JSON of %lld bytes is not plausible (limit 64 MiB)", c->redist->size);
        mf_path_pop(p, n);
    }
    return mf_parse_cudnn_defaults(p, v, c);
}

/* ---- profiles -------------------------------------------------------------- */

bool ce_component_name_valid(const char *s, bool with_glob)
{
    size_t n = strlen(s);
    if (n == 0 || n > CE_COMPONENT_MAX) return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                  (with_glob && ch == '*' && i == n - 1);
        if (!ok) return false;
    }
    return true;
}

static int parse_names(parser *p, const cJSON *obj, const char *key, bool glob, char ***out, size_t *count)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) return CE_OK;
    size_t m = mf_path_push(p, key);
    if (!cJSON_IsArray(v)) return mf_bad(p, "expected an array of component names, got %s", mf_type_name(v));
    size_t n = (size_t)cJSON_GetArraySize(v);
    if (n > 4096) return mf_bad(p, "%zu names: more than 4096", n);
    *out = calloc(n ? n : 1, sizeof **out);
    if (!*out) return ce_fail(CE_ERR_NOMEM, "out of memory");
    const cJSON *it;
    size_t i = 0;
    cJSON_ArrayForEach(it, v) {
        if (!cJSON_IsString(it) || !ce_component_name_valid(it->valuestring, glob))
            return mf_bad(p, "element %zu: expected a component name ([a-z0-9_]+%s), got %s%s%.64s%s", i,
                       glob ? ", \"*\" or a prefix ending in *" : "", mf_type_name(it),
                       cJSON_IsString(it) ? " '" : "", cJSON_IsString(it) ? it->valuestring : "",
                       cJSON_IsString(it) ? "'" : "");
        if (!((*out)[(*count)++] = xstrdup(p, it->valuestring))) return CE_ERR_NOMEM;
        i++;
    }
    mf_path_pop(p, m);
    return CE_OK;
}

static int parse_profile(parser *p, const cJSON *v, ce_profile *pr)
{
    if (!(pr->name = xstrdup(p, v->string))) return CE_ERR_NOMEM;
    if (!ce_component_name_valid(v->string, false))
        return mf_bad(p, "profile names are [a-z0-9_]+ (e.g. \"tf\"), not '%s'", v->string);
    if (!cJSON_IsObject(v)) return mf_bad(p, "expected {\"components\": [...], \"exclude\": [...]}, got %s", mf_type_name(v));
    int rc;
    if ((rc = mf_get_str(p, v, "source", false, &pr->source)) ||
        (rc = parse_names(p, v, "components", true, &pr->components, &pr->n_components)) ||
        (rc = parse_names(p, v, "exclude", true, &pr->exclude, &pr->n_exclude)))
        return rc;
    if (pr->n_components == 0) {
        size_t n = mf_path_push(p, "components");
        rc = mf_bad(p, "missing or empty: a profile names its components (or [\"*\"])");
        mf_path_pop(p, n);
    }
    return rc;
}

static int parse_profiles(parser *p, const cJSON *doc, ce_manifest *m)
{
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(doc, "profiles");
    snprintf(p->path, sizeof p->path, "profiles");
    if (!sec || cJSON_IsNull(sec)) return CE_OK;
    if (!cJSON_IsObject(sec)) return mf_bad(p, "expected an object of profile name -> {components}, got %s", mf_type_name(sec));
    size_t n = (size_t)cJSON_GetArraySize(sec);
    m->profiles = calloc(n ? n : 1, sizeof *m->profiles);
    if (!m->profiles) return ce_fail(CE_ERR_NOMEM, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach(it, sec) {
        size_t k = mf_path_push(p, it->string);
        for (size_t i = 0; i < m->n_profiles; i++)
            if (strcmp(m->profiles[i].name, it->string) == 0) return mf_bad(p, "duplicate key");
        int rc = parse_profile(p, it, &m->profiles[m->n_profiles++]);
        if (rc) return rc;
        mf_path_pop(p, k);
    }
    return CE_OK;
}

/* cudnn."8.7.0.84": { "cuda11": { platform: artifact }, "source": "..." }.
 * Keys starting with "cuda" must be cudaNN; other keys are ignored. */
static int parse_cudnn(parser *p, const cJSON *v, ce_cudnn *c)
{
    if (!(c->version = xstrdup(p, v->string))) return CE_ERR_NOMEM;
    if (!ce_version_valid(v->string) || count_dots(v->string) < 2)
        return mf_bad(p, "releases are keyed by their full version (e.g. \"8.7.0.84\", \"2.25.1\"), not '%s'",
                      v->string);
    if (strlen(v->string) > CE_MANIFEST_KEY_MAX)
        return mf_bad(p, "the version key is %zu characters; the store names at most %d", strlen(v->string),
                   CE_MANIFEST_KEY_MAX);
    if (!cJSON_IsObject(v)) return mf_bad(p, "expected an object, got %s", mf_type_name(v));
    int rc;
    if ((rc = mf_get_str(p, v, "source", false, &c->source))) return rc;
    size_t n = (size_t)cJSON_GetArraySize(v);
    c->builds = calloc(n ? n : 1, sizeof *c->builds);
    if (!c->builds) return ce_fail(CE_ERR_NOMEM, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        if (strncmp(it->string, "cuda", 4) != 0) continue;
        size_t m = mf_path_push(p, it->string);
        const char *d = it->string + 4;
        if (!*d || strlen(d) > 3 || strspn(d, "0123456789") != strlen(d) || *d == '0')
            return mf_bad(p, "builds are keyed by CUDA major: cuda11, cuda12, cuda13");
        int major = atoi(d);
        for (size_t i = 0; i < c->n_builds; i++)
            if (c->builds[i].cuda_major == major) return mf_bad(p, "duplicate key");
        ce_cudnn_build *b = &c->builds[c->n_builds++];
        b->cuda_major = major;
        if ((rc = parse_platforms(p, it, &b->archives, &b->n_archives))) return rc;
        mf_path_pop(p, m);
    }
    return CE_OK;
}

static int parse_tf(parser *p, const cJSON *v, ce_tf *t)
{
    if (!(t->version = xstrdup(p, v->string))) return CE_ERR_NOMEM;
    if (!ce_version_valid(v->string) || count_dots(v->string) != 1)
        return mf_bad(p, "TensorFlow releases are keyed MAJOR.MINOR (e.g. \"2.14\"), not '%s'", v->string);
    if (!cJSON_IsObject(v)) return mf_bad(p, "expected an object, got %s", mf_type_name(v));
    int rc;
    if ((rc = mf_get_version(p, v, "cuda", true, &t->cuda)) ||
        (rc = mf_get_version(p, v, "cudnn", false, &t->cudnn)) ||
        (rc = mf_get_str(p, v, "python", false, &t->python)) ||
        (rc = mf_get_str(p, v, "source", false, &t->source)) ||
        (rc = mf_get_str(p, v, "not_installable", false, &t->not_installable)) ||
        (rc = mf_get_version(p, v, "nccl", false, &t->nccl)))
        return rc;
    return CE_OK;
}

/* ---- the document ---------------------------------------------------------- */

static int cmp_tf(const void *a, const void *b) { return ce_version_cmp(((const ce_tf *)a)->version, ((const ce_tf *)b)->version); }
static int cmp_cuda(const void *a, const void *b) { return ce_version_cmp(((const ce_cuda *)a)->version, ((const ce_cuda *)b)->version); }
static int cmp_cudnn(const void *a, const void *b) { return ce_version_cmp(((const ce_cudnn *)a)->version, ((const ce_cudnn *)b)->version); }


/* Parse the object doc[key] into a sorted array of elements of size sz. */
int mf_parse_section(parser *p, const cJSON *doc, const char *key, size_t sz, parse_fn fn,
                         int (*cmp)(const void *, const void *), void **arr, size_t *count)
{
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(doc, key);
    snprintf(p->path, sizeof p->path, "%s", key);
    if (!sec || cJSON_IsNull(sec)) return CE_OK;
    if (!cJSON_IsObject(sec)) return mf_bad(p, "expected an object keyed by version, got %s", mf_type_name(sec));
    size_t n = (size_t)cJSON_GetArraySize(sec);
    *arr = calloc(n ? n : 1, sz);
    if (!*arr) return ce_fail(CE_ERR_NOMEM, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach(it, sec) {
        size_t m = mf_path_push(p, it->string);
        int rc = fn(p, it, (char *)*arr + sz * (*count)++);
        if (rc) return rc;
        mf_path_pop(p, m);
    }
    qsort(*arr, *count, sz, cmp);
    for (size_t i = 1; i < *count; i++) {
        /* every element struct starts with its char *version */
        const char *a = *(char *const *)((char *)*arr + sz * (i - 1)), *b = *(char *const *)((char *)*arr + sz * i);
        if (ce_version_cmp(a, b) == 0) {
            mf_path_push(p, b);
            return mf_bad(p, "duplicate release ('%s' and '%s' name the same version)", a, b);
        }
    }
    return CE_OK;
}

/* TF rows must point at releases the manifest has, unless marked not installable. */
static int check_tf_refs(parser *p, const ce_manifest *m)
{
    for (size_t i = 0; i < m->n_tf; i++) {
        const ce_tf *t = &m->tf[i];
        if (t->not_installable) continue;
        snprintf(p->path, sizeof p->path, "tensorflow");
        mf_path_push(p, t->version);
        size_t row = strlen(p->path);
        const ce_cuda *c = ce_manifest_cuda(m, t->cuda);
        if (!c) {
            mf_path_push(p, "cuda");
            return mf_bad(p, "CUDA %s is not in the manifest's \"cuda\" section; add it, or mark the row "
                          "\"not_installable\" with the reason", t->cuda);
        }
        if (t->cudnn) {
            const ce_cudnn *d = ce_manifest_cudnn(m, t->cudnn);
            mf_path_push(p, "cudnn");
            if (!d)
                return mf_bad(p, "cuDNN %s is not in the manifest's \"cudnn\" section; add it, or mark the row "
                              "\"not_installable\" with the reason", t->cudnn);
            bool has = false;
            for (size_t b = 0; b < d->n_builds; b++) has |= d->builds[b].cuda_major == ce_version_major(c->version);
            if (!has)
                return mf_bad(p, "cuDNN %s has no build for CUDA %d (needs cudnn.\"%s\".cuda%d)", t->cudnn,
                           ce_version_major(c->version), t->cudnn, ce_version_major(c->version));
            mf_path_pop(p, row);
        }
        const ce_cudnn *n = t->nccl ? ce_manifest_nccl(m, t->nccl) : NULL;
        bool built = false;
        for (size_t b = 0; n && b < n->n_builds; b++) built |= n->builds[b].cuda_major == ce_version_major(c->version);
        if (t->nccl && !built) {
            mf_path_push(p, "nccl");
            return mf_bad(p, "NCCL %s %s; add nccl.\"%s\".cuda%d or drop the row's \"nccl\"", t->nccl,
                          n ? "has no build for this CUDA major" : "is not in the manifest's \"nccl\" section",
                          t->nccl, ce_version_major(c->version));
        }
    }
    return CE_OK;
}

static int parse_doc(parser *p, const cJSON *doc, ce_manifest *m)
{
    if (!cJSON_IsObject(doc)) return mf_bad(p, "expected a JSON object, got %s", mf_type_name(doc));
    snprintf(p->path, sizeof p->path, "schema");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc, "schema");
    if (!s) return mf_bad(p, "missing; this cudaenv reads manifest schema 1 (\"schema\": 1)");
    if (!cJSON_IsNumber(s) || s->valuedouble != 1) {
        char got[64];
        if (cJSON_IsNumber(s)) snprintf(got, sizeof got, "%g", s->valuedouble);
        else snprintf(got, sizeof got, "%s", mf_type_name(s));
        return mf_bad(p, "unsupported manifest schema %s; this cudaenv supports schema 1 "
                      "(update cudaenv or use a schema 1 manifest)", got);
    }
    m->schema = 1;
    p->path[0] = '\0';
    int rc;
    if ((rc = mf_get_str(p, doc, "updated", false, &m->updated)) || (rc = mf_parse_claims(p, doc, m))) return rc;
    if ((rc = mf_parse_section(p, doc, "cuda", sizeof(ce_cuda), (parse_fn)parse_cuda, cmp_cuda,
                            (void **)&m->cuda, &m->n_cuda)) ||
        (rc = mf_parse_section(p, doc, "cudnn", sizeof(ce_cudnn), (parse_fn)parse_cudnn, cmp_cudnn,
                            (void **)&m->cudnn, &m->n_cudnn)) ||
        (rc = mf_parse_section(p, doc, "nccl", sizeof(ce_cudnn), (parse_fn)parse_cudnn, cmp_cudnn,
                            (void **)&m->nccl, &m->n_nccl)) ||
        (rc = mf_parse_section(p, doc, "tensorflow", sizeof(ce_tf), (parse_fn)parse_tf, cmp_tf,
                            (void **)&m->tf, &m->n_tf)) ||
        (rc = parse_profiles(p, doc, m)) || (rc = mf_parse_frameworks(p, doc, m)))
        return rc;
    return check_tf_refs(p, m);
}

int ce_manifest_parse(ce_ctx *ctx, const char *text, size_t len, const char *origin,
                      bool local, ce_manifest **out)
{
    *out = NULL;
    if (!origin) origin = "(manifest)";
    if (len > CE_MANIFEST_MAX)
        return ce_fail(CE_ERR_INTEGRITY, "invalid manifest %s: %zu bytes is over the 16 MiB limit; "
                       "is this really a cudaenv manifest?", origin, len);
    cJSON *doc;
    int jrc = ce_json_parse_strict(text, len, "manifest", origin, &doc);
    if (jrc) return jrc;
    ce_manifest *m = calloc(1, sizeof *m);
    parser p = { .ctx = ctx, .origin = origin, .local = local };
    int rc = m ? CE_OK : ce_fail(CE_ERR_NOMEM, "out of memory");
    if (!rc && !(m->origin = strdup(origin))) rc = ce_fail(CE_ERR_NOMEM, "out of memory");
    if (!rc) {
        m->local = local;
        rc = parse_doc(&p, doc, m);
    }
    cJSON_Delete(doc);
    if (rc) {
        ce_manifest_free(m);
        return rc;
    }
    *out = m;
    return CE_OK;
}

int ce_manifest_load_file(ce_ctx *ctx, const char *path, ce_manifest **out)
{
    *out = NULL;
    char *data = NULL;
    size_t len = 0;
    int rc = ce_file_read(path, CE_MANIFEST_MAX, &data, &len);
    if (rc == CE_ERR_INTEGRITY)
        return ce_fail(rc, "invalid manifest %s: over the 16 MiB limit; is this really a cudaenv manifest?", path);
    if (rc == CE_ERR_NOTFOUND)
        return ce_fail(rc, "manifest %s does not exist; check CUDAENV_MANIFEST / --manifest", path);
    if (rc) return rc;
    rc = ce_manifest_parse(ctx, data, len, path, true, out);
    free(data);
    return rc;
}

static void free_artifacts(ce_artifact *a, size_t n)
{
    for (size_t i = 0; a && i < n; i++) {
        free(a[i].platform);
        free(a[i].url);
        free(a[i].for_cuda);
    }
    free(a);
}

void ce_manifest_free(ce_manifest *m)
{
    if (!m) return;
    /* Arrays are calloc'ed to their full capacity, so elements past the
     * count are zero and safe to free when parsing stopped half-way. */
    for (size_t i = 0; i < m->n_tf; i++) {
        ce_tf *t = &m->tf[i];
        free(t->version); free(t->cuda); free(t->cudnn); free(t->python); free(t->source); free(t->not_installable);
        free(t->nccl);
    }
    free(m->tf);
    for (size_t i = 0; i < m->n_cuda; i++) {
        ce_cuda *c = &m->cuda[i];
        free(c->version); free(c->min_driver); free(c->min_driver_compat); free(c->sm_min); free(c->sm_max);
        free(c->source);
        free_artifacts(c->runfiles, c->n_runfiles);
        free_artifacts(c->redist, c->redist ? 1 : 0);
        mf_free_cudnn_defaults(c);
    }
    free(m->cuda);
    for (size_t i = 0; i < m->n_profiles; i++) {
        ce_profile *pr = &m->profiles[i];
        for (size_t k = 0; k < pr->n_components; k++) free(pr->components[k]);
        for (size_t k = 0; k < pr->n_exclude; k++) free(pr->exclude[k]);
        free(pr->name); free(pr->components); free(pr->exclude); free(pr->source);
    }
    free(m->profiles);
    ce_cudnn *libs[2] = { m->cudnn, m->nccl };
    size_t counts[2] = { m->n_cudnn, m->n_nccl };
    for (size_t l = 0; l < 2; l++) {
        for (size_t i = 0; i < counts[l]; i++) {
            ce_cudnn *c = &libs[l][i];
            free(c->version); free(c->source);
            for (size_t b = 0; b < c->n_builds; b++) free_artifacts(c->builds[b].archives, c->builds[b].n_archives);
            free(c->builds);
        }
        free(libs[l]);
    }
    mf_free_frameworks(m);
    free(m->updated);
    free(m->source);
    free(m->expires);
    free(m->origin);
    free(m);
}
