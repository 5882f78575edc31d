#include "redist.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/version.h"

static int bad(const char *url, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(const char *url, const char *path, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ce_fail(CE_ERR_INTEGRITY, "invalid redistrib JSON %s: %s: %s", url, path, msg);
}

static const char *type_name(const cJSON *v)
{
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsArray(v)) return "an array";
    return "an object";
}

bool ce_redist_driver_side(const char *name)
{
    static const char *const exact[] = { "nvidia_driver", "nvidia_fs", "fabricmanager", "imex",
                                         "libnvidia_nscq", "libnvsdm", "nvlsm", "driver_assistant",
                                         "collectx_bringup", NULL };
    for (size_t i = 0; exact[i]; i++)
        if (strcmp(name, exact[i]) == 0) return true;
    /* prefixes: mft, mft_autocomplete, mft_oem; cuda_compat (the forward-compat
     * driver library) and cuda_compat_orin (13.2.0+, linux-sbsa: Jetson's) */
    return strncmp(name, "mft", 3) == 0 || strncmp(name, "cuda_compat", 11) == 0;
}

/* A path NVIDIA would write: relative, no scheme, no "..", "." or empty
 * segment, printable ASCII without characters that change a URL's meaning. */
static const char *path_refusal(const char *p)
{
    size_t n = strlen(p);
    if (n == 0) return "it is empty";
    if (n > 1024) return "it is longer than 1024 characters";
    if (p[0] == '/') return "it is an absolute path";
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch == ':') return "it carries a scheme or a colon";
        if (ch <= ' ' || ch >= 0x7f || ch == '\\' || ch == '?' || ch == '#' || ch == '%')
            return "it has a character a relative path may not have";
    }
    for (const char *s = p; *s;) {
        size_t len = strcspn(s, "/");
        if (len == 0) return "it has an empty segment (//)";
        if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
            return "it has a '.' or '..' segment";
        s += len;
        if (*s == '/') {
            s++;
            if (!*s) return "it ends with /";
        }
    }
    return NULL;
}

static int opt_string(const char *url, const cJSON *obj, const char *key, const char *where,
                      bool required, char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        if (!required) return CE_OK;
        return bad(url, where, "\"%s\" is missing", key);
    }
    if (!cJSON_IsString(v)) return bad(url, where, "\"%s\": expected a string, got %s", key, type_name(v));
    if (strlen(v->valuestring) > 4096) return bad(url, where, "\"%s\": longer than 4096 characters", key);
    if (!(*out = strdup(v->valuestring))) return ce_fail(CE_ERR_NOMEM, "out of memory");
    return CE_OK;
}

static int parse_archive(const char *url, const char *where, const cJSON *a, ce_component *c)
{
    if (!cJSON_IsObject(a)) return bad(url, where, "expected an object, got %s", type_name(a));
    if (!cJSON_GetObjectItemCaseSensitive(a, "relative_path") && cJSON_GetObjectItemCaseSensitive(a, "cuda12"))
        return bad(url, where, "per-CUDA variants (cuDNN's layout) in a CUDA release's JSON");
    int rc;
    char *sha = NULL, *size = NULL;
    if ((rc = opt_string(url, a, "relative_path", where, true, &c->relative_path))) return rc;
    const char *why = path_refusal(c->relative_path);
    if (why) return bad(url, where, "relative_path '%.200s' is refused: %s", c->relative_path, why);
    if ((rc = opt_string(url, a, "sha256", where, true, &sha))) return rc;
    bool ok = strlen(sha) == 64 && strspn(sha, "0123456789abcdef") == 64;
    if (ok) memcpy(c->sha256, sha, 65);
    free(sha);
    if (!ok) return bad(url, where, "sha256: expected 64 lowercase hex characters");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(a, "size");
    if (cJSON_IsNumber(s) && s->valuedouble >= 0 && s->valuedouble <= 9007199254740992.0 &&
        (double)(long long)s->valuedouble == s->valuedouble) {
        c->size = (long long)s->valuedouble;
        return CE_OK;
    }
    if ((rc = opt_string(url, a, "size", where, true, &size))) return rc;
    ok = size[0] && strlen(size) <= 15 && strspn(size, "0123456789") == strlen(size);
    c->size = ok ? strtoll(size, NULL, 10) : -1;
    free(size);
    if (!ok) return bad(url, where, "size: expected a decimal number of bytes");
    return CE_OK;
}

static int make_url(const char *json_url, ce_component *c)
{
    const char *slash = strrchr(json_url, '/');
    size_t base = slash ? (size_t)(slash - json_url) + 1 : 0;
    size_t n = base + strlen(c->relative_path) + 1;
    if (!(c->url = malloc(n))) return ce_fail(CE_ERR_NOMEM, "out of memory");
    snprintf(c->url, n, "%.*s%s", (int)base, json_url, c->relative_path);
    return CE_OK;
}

static int parse_doc(const cJSON *doc, const char *url, const char *platform, ce_redist *r)
{
    if (!cJSON_IsObject(doc)) return bad(url, "(top)", "expected a JSON object, got %s", type_name(doc));
    int rc;
    if ((rc = opt_string(url, doc, "release_label", "(top)", false, &r->release_label)) ||
        (rc = opt_string(url, doc, "release_date", "(top)", false, &r->release_date)))
        return rc;
    size_t n = (size_t)cJSON_GetArraySize(doc);
    if (n > 10000) return bad(url, "(top)", "%zu members: more than 10000", n);
    r->comps = calloc(n ? n : 1, sizeof *r->comps);
    if (!r->comps) return ce_fail(CE_ERR_NOMEM, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach(it, doc) {
        const char *key = it->string;
        if (strncmp(key, "release_", 8) == 0) {
            if (!cJSON_IsString(it)) return bad(url, key, "expected a string, got %s", type_name(it));
            continue;
        }
        if (!ce_component_name_valid(key, false))
            return bad(url, key, "not a component name ([a-z0-9_]+)");
        if (!cJSON_IsObject(it)) return bad(url, key, "expected a component object, got %s", type_name(it));
        for (size_t i = 0; i < r->n; i++)
            if (strcmp(r->comps[i].name, key) == 0) return bad(url, key, "duplicate component");
        ce_component c = { .size = -1 };
        char where[200];
        snprintf(where, sizeof where, "%s", key);
        rc = opt_string(url, it, "version", where, true, &c.version);
        if (rc == CE_OK && !ce_version_valid(c.version))
            rc = bad(url, where, "version '%.64s' is not digits separated by dots", c.version);
        if (rc == CE_OK) rc = opt_string(url, it, "name", where, false, &c.label);
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(it, platform);
        /* 13.1+: cuda_compat is built per CUDA variant ({"cuda13.1": {...}}); driver-side, never installed */
        if (cJSON_IsObject(a) && !cJSON_GetObjectItemCaseSensitive(a, "relative_path") && ce_redist_driver_side(key))
            a = NULL;
        if (rc == CE_OK && a) {
            snprintf(where, sizeof where, "%s.\"%s\"", key, platform);
            if ((rc = parse_archive(url, where, a, &c)) == CE_OK && (c.name = strdup(key)) == NULL)
                rc = ce_fail(CE_ERR_NOMEM, "out of memory");
            if (rc == CE_OK) rc = make_url(url, &c);
        }
        if (rc == CE_OK && a) {
            r->comps[r->n++] = c;
            continue;
        }
        free(c.name); free(c.label); free(c.version); free(c.relative_path); free(c.url);
        if (rc) return rc;
    }
    return CE_OK;
}

int ce_redist_parse(const char *text, size_t len, const char *json_url,
                    const char *platform, ce_redist **out)
{
    *out = NULL;
    if (len > CE_REDIST_MAX)
        return ce_fail(CE_ERR_INTEGRITY, "invalid redistrib JSON %s: %zu bytes is over the 64 MiB limit",
                       json_url, len);
    cJSON *doc;
    int jrc = ce_json_parse_strict(text, len, "redistrib JSON", json_url, &doc);
    if (jrc) return jrc;
    ce_redist *r = calloc(1, sizeof *r);
    int rc = r ? parse_doc(doc, json_url, platform, r) : ce_fail(CE_ERR_NOMEM, "out of memory");
    cJSON_Delete(doc);
    if (rc) {
        ce_redist_free(r);
        return rc;
    }
    *out = r;
    return CE_OK;
}

void ce_redist_free(ce_redist *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) {
        ce_component *c = &r->comps[i];
        free(c->name); free(c->label); free(c->version); free(c->relative_path); free(c->url);
    }
    free(r->comps);
    free(r->release_label);
    free(r->release_date);
    free(r);
}

static ce_component *find(ce_redist *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->comps[i].name, name) == 0) return &r->comps[i];
    return NULL;
}

static int unknown(const ce_redist *r, const char *name)
{
    char list[2048] = "";
    size_t used = 0;
    for (size_t i = 0; i < r->n && used + 2 < sizeof list; i++) {
        if (ce_redist_driver_side(r->comps[i].name)) continue;
        int w = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", r->comps[i].name);
        if (w > 0) used += (size_t)w;
    }
    return ce_fail(CE_ERR_USAGE, "--components: '%s' is not a component of CUDA %s on this platform; "
                   "it has: %s", name, r->release_label ? r->release_label : "(this release)", list);
}

int ce_redist_select(ce_redist *r, const ce_profile *p, const char *adjust)
{
    for (size_t i = 0; i < r->n; i++)
        r->comps[i].selected = ce_profile_selects(p, r->comps[i].name) && !ce_redist_driver_side(r->comps[i].name);
    if (!adjust) return CE_OK;
    char buf[1024];
    if (strlen(adjust) >= sizeof buf) return ce_fail(CE_ERR_USAGE, "--components: the list is too long");
    snprintf(buf, sizeof buf, "%s", adjust);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        bool add = *tok != '-';
        if (*tok == '+' || *tok == '-') tok++;
        if (strcmp(tok, "nccl") == 0) continue;    /* not NVIDIA's: ce_resolve_nccl */
        if (!ce_component_name_valid(tok, false))
            return ce_fail(CE_ERR_USAGE, "--components: '%s' is not a component name; write "
                           "+name to add, -name to remove (e.g. +nsight_systems,-libcufft)", tok);
        if (ce_redist_driver_side(tok))
            return ce_fail(CE_ERR_USAGE, "--components: %s is a driver-side component; cudaenv never "
                           "installs it (install the driver package of your distribution)", tok);
        ce_component *c = find(r, tok);
        if (!c) return unknown(r, tok);
        c->selected = add;
    }
    return CE_OK;
}

long long ce_redist_selected_bytes(const ce_redist *r, size_t *count)
{
    long long sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (!r->comps[i].selected) continue;
        sum += r->comps[i].size > 0 ? r->comps[i].size : 0;
        n++;
    }
    if (count) *count = n;
    return sum;
}
