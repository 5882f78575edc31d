#include "receipt.h"

#include <cJSON.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "usage.h"
#include "core/file.h"
#include "core/json.h"

static cJSON *str_or_null(const char *s)
{
    return s && *s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

int ce_receipt_write(const char *prefix, const ce_receipt *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return ce_fail(CE_ERR_NOMEM, "out of memory writing the receipt");
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);

    cJSON_AddNumberToObject(o, "schema", 1);
    cJSON_AddItemToObject(o, "name", str_or_null(r->name));
    cJSON_AddItemToObject(o, "cuda", str_or_null(r->cuda));
    cJSON_AddItemToObject(o, "cudnn", str_or_null(r->cudnn));
    cJSON_AddItemToObject(o, "platform", str_or_null(r->platform));
    cJSON_AddStringToObject(o, "installed_at", when);
    cJSON *tf = cJSON_AddArrayToObject(o, "tensorflow");
    for (size_t i = 0; tf && i < r->n_tensorflow; i++)
        cJSON_AddItemToArray(tf, cJSON_CreateString(r->tensorflow[i]));
    cJSON_AddItemToObject(o, "min_driver", str_or_null(r->min_driver));
    if (r->min_driver_compat) cJSON_AddStringToObject(o, "min_driver_compat", r->min_driver_compat);
    if (r->max_gcc > 0) cJSON_AddNumberToObject(o, "max_gcc", r->max_gcc);
    else cJSON_AddNullToObject(o, "max_gcc");
    if (r->sm_min || r->sm_max) {
        cJSON *sm = cJSON_AddObjectToObject(o, "sm");
        if (sm) {
            cJSON_AddItemToObject(sm, "min", str_or_null(r->sm_min));
            cJSON_AddItemToObject(sm, "max", str_or_null(r->sm_max));
        }
    }
    cJSON *src = cJSON_AddArrayToObject(o, "sources");
    for (size_t i = 0; src && i < r->n_sources; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "kind", r->sources[i].kind);
        cJSON_AddStringToObject(s, "url", r->sources[i].url);
        cJSON_AddStringToObject(s, "sha256", r->sources[i].sha256);
        if (r->sources[i].size >= 0) cJSON_AddNumberToObject(s, "size", (double)r->sources[i].size);
        else cJSON_AddNullToObject(s, "size");
        if (r->sources[i].pkg && *r->sources[i].pkg) cJSON_AddStringToObject(s, "pkg", r->sources[i].pkg);
        cJSON_AddItemToArray(src, s);
    }
    if (r->n_components) {
        cJSON_AddItemToObject(o, "profile", str_or_null(r->profile));
        cJSON *adj = cJSON_AddArrayToObject(o, "adjust");
        for (size_t i = 0; adj && i < r->n_adjust; i++) cJSON_AddItemToArray(adj, cJSON_CreateString(r->adjust[i]));
        cJSON *comps = cJSON_AddArrayToObject(o, "components");
        for (size_t i = 0; comps && i < r->n_components; i++) {
            const ce_receipt_component *c = &r->components[i];
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "name", c->name);
            cJSON_AddStringToObject(j, "version", c->version);
            cJSON_AddStringToObject(j, "url", c->url);
            cJSON_AddStringToObject(j, "sha256", c->sha256);
            cJSON_AddNumberToObject(j, "size", (double)c->size);
            cJSON_AddStringToObject(j, "pkg", c->pkg);
            cJSON_AddItemToArray(comps, j);
        }
    }
    cJSON_AddItemToObject(o, "nccl", str_or_null(r->nccl));
    cJSON *files = cJSON_AddArrayToObject(o, "files");
    for (size_t i = 0; files && r->files && i < r->files->n; i++) {
        if (strcmp(r->files->v[i].path, CE_RECEIPT_NAME) == 0) continue;
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "path", r->files->v[i].path);
        cJSON_AddNumberToObject(f, "size", (double)r->files->v[i].size);
        if (r->files->v[i].sha256[0]) cJSON_AddStringToObject(f, "sha256", r->files->v[i].sha256);
        cJSON_AddItemToArray(files, f);
    }
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text) return ce_fail(CE_ERR_NOMEM, "out of memory writing the receipt");
    char path[4200];
    int rc = ce_path_join(path, sizeof path, prefix, CE_RECEIPT_NAME);
    if (rc == CE_OK) rc = ce_file_write_atomic(path, text, strlen(text), 0644);
    else rc = ce_fail(CE_ERR_OTHER, "path too long: %s", prefix);
    free(text);
    if (rc == CE_OK) {   /* what list reads instead of walking the tree: a cache, so never a failure */
        ce_quiet q;
        ce_quiet_begin(&q, false);
        ce_usage_record(prefix);
        ce_quiet_end(&q);
    }
    return rc;
}

bool ce_pkg_of_sha(const char *pkg, const char *sha256)
{
    size_t l = strlen(pkg);
    return sha256 && strlen(sha256) == 64 && l > 13 && pkg[l - 13] == '-' && strncmp(pkg + l - 12, sha256, 12) == 0;
}

#define RECEIPT_MAX (256u << 20)   /* the most of a receipt read */

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Whether text[0..len) ends with its file list, as ce_receipt_write puts
 * it: "]" then "}", white space around; *close (when asked): the offset
 * just after that ']'. */
static bool list_last(const char *text, size_t len, size_t *close)
{
    size_t z = len;
    while (z > 0 && blank(text[z - 1])) z--;
    size_t y = z > 0 ? z - 1 : 0;
    while (y > 0 && blank(text[y - 1])) y--;
    if (close) *close = y;
    return z > 0 && text[z - 1] == '}' && y > 0 && text[y - 1] == ']';
}

/* The receipt's text before its file list, closed as an object, when the
 * list is its last member (ce_receipt_write puts it there): read from the
 * front until the "files" key, not the list's hundreds of KiB (ten
 * 4,000-file toolchains: ~130 pages of memory each, which list touched only
 * to cut them away, issue 43).  NULL when it is not so (the caller reads
 * the whole text). */
static char *receipt_head(int fd)
{
    struct stat st;
    char tail[64];
    if (fstat(fd, &st) != 0 || st.st_size < 2) return NULL;
    size_t size = (size_t)st.st_size, tl = size < sizeof tail ? size : sizeof tail;
    if (pread(fd, tail, tl, (off_t)(size - tl)) != (ssize_t)tl || !list_last(tail, tl, NULL)) return NULL;
    size_t cap = 16 << 10, len = 0;
    char *t = NULL;
    for (;;) {
        char *nt = realloc(t, cap + 2);
        if (!nt) break;
        t = nt;
        ssize_t r = pread(fd, t + len, cap - len, (off_t)len);
        if (r <= 0) break;
        len += (size_t)r;
        t[len] = '\0';
        size_t k, v;
        int found = ce_json_top_key(t, len, "files", &k, &v);
        if (found == 1 && t[v] == '[') {
            size_t from = k;
            while (from > 0 && blank(t[from - 1])) from--;
            if (from == 0 || t[from - 1] != ',') break;   /* the only member: the whole text */
            t[from - 1] = '}';
            t[from] = '\0';
            return t;
        }
        if (found != -1 || len == size) break;   /* no list, or not there as expected */
        if (len == cap && (cap *= 2) > RECEIPT_MAX) break;   /* the whole read's bound: it refuses */
    }
    free(t);
    return NULL;
}

cJSON *ce_receipt_read(const char *prefix, bool whole)
{
    char path[4200], *text = NULL;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int fd = ce_path_join(path, sizeof path, prefix, CE_RECEIPT_NAME) == CE_OK && ce_exists(path) ? ce_open_regular(path) : -1;
    char *head = fd >= 0 && !whole ? receipt_head(fd) : NULL;
    bool read = head || (fd >= 0 && ce_file_read_fd(fd, path, RECEIPT_MAX, &text, NULL) == CE_OK);
    if (head && fd >= 0) close(fd);
    ce_quiet_end(&q);
    if (!read) return NULL;
    if (head) {
        cJSON *o = cJSON_Parse(head);
        free(head);
        return o;
    }
    /* every reader here wants what it holds, not its file list (thousands of
     * entries, most of the text): the member is cut before the parse, so list
     * costs the same for a toolchain of 40 files or 40,000 (issue 43) */
    size_t len = strlen(text), k, v, e = 0, y;
    /* ce_receipt_write puts the list last: when the text ends as it does ("] }")
     * and what is read is only shown, the cut runs to there without stepping
     * over its thousands of entries; whole: the member's own end */
    bool last = !whole && list_last(text, len, &y);
    int found = last ? ce_json_top_key(text, len, "files", &k, &v) : ce_json_top_member(text, len, "files", &k, &v, &e);
    if (found == 1 && last) e = y;   /* up to the array's closing bracket, the object's '}' kept */
    if (found == 1 && last && text[v] != '[') found = 0;
    if (found == 1) {
        size_t from = k, to = e;
        while (from > 0 && blank(text[from - 1])) from--;
        if (from > 0 && text[from - 1] == ',') from--;          /* the comma before it */
        else {                                                  /* the first member: the comma after it */
            while (to < len && blank(text[to])) to++;
            if (to < len && text[to] == ',') to++;
        }
        memmove(text + from, text + to, len - to + 1);
    }
    cJSON *o = cJSON_Parse(text);
    free(text);
    return o;
}

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

bool ce_receipt_uses_pkg(const char *prefix, const char *pkg)
{
    cJSON *o = ce_receipt_read(prefix, true);   /* it decides what uninstall removes */
    bool used = false;
    static const char *const lists[] = { "components", "sources" };
    for (size_t l = 0; l < 2 && !used; l++) {
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(o, lists[l])) {
            const char *p = str_of(c, "pkg");
            used = used || (p && strcmp(p, pkg) == 0) || ce_pkg_of_sha(pkg, str_of(c, "sha256"));
        }
    }
    cJSON_Delete(o);
    return used;
}

void ce_receipt_held_read(const char *prefix, bool whole, ce_receipt_held *h)
{
    memset(h, 0, sizeof *h);
    cJSON *o = ce_receipt_read(prefix, whole);
    if (!o) return;
    h->json = o;
    const cJSON *c, *comps = cJSON_GetObjectItemCaseSensitive(o, "components");
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(o, "sources");
    cJSON_ArrayForEach(c, src) {
        const char *kind = str_of(c, "kind");
        if (kind && !strcmp(kind, "runfile")) h->kind = CE_HELD_RUNFILE;
        if (!kind || strcmp(kind, "nccl") != 0 || !str_of(c, "url") || !str_of(c, "sha256")) continue;
        const cJSON *sz = cJSON_GetObjectItemCaseSensitive(c, "size");
        h->nccl = true;
        h->nccl_src = (ce_receipt_source){ "nccl", str_of(c, "url"), str_of(c, "sha256"),
                                           cJSON_IsNumber(sz) ? (long long)sz->valuedouble : -1, str_of(c, "pkg") };
    }
    const char *nv = str_of(o, "nccl");
    if (nv) snprintf(h->nccl_version, sizeof h->nccl_version, "%s", nv);
    int nc = cJSON_IsArray(comps) ? cJSON_GetArraySize(comps) : 0;
    if (nc > 0 && (h->comps = calloc((size_t)nc, sizeof *h->comps))) {
        cJSON_ArrayForEach(c, comps) {
            const cJSON *sz = cJSON_GetObjectItemCaseSensitive(c, "size");
            ce_receipt_component k = { str_of(c, "name"), str_of(c, "version"), str_of(c, "url"), str_of(c, "sha256"),
                                       str_of(c, "pkg"), cJSON_IsNumber(sz) ? (long long)sz->valuedouble : -1 };
            if (k.name && k.version && k.url && k.sha256 && strlen(k.sha256) == 64) h->comps[h->n++] = k;
        }
        h->kind = CE_HELD_COMPONENTS;
        const char *pr = str_of(o, "profile");
        if (pr) snprintf(h->profile, sizeof h->profile, "%s", pr);
        size_t len = 0;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(o, "adjust"))
            if (cJSON_IsString(c) && len < sizeof h->adjust)
                len += (size_t)snprintf(h->adjust + len, sizeof h->adjust - len, "%s%s", len ? "," : "",
                                        c->valuestring);
    }
}

void ce_receipt_held_free(ce_receipt_held *h)
{
    free(h->comps);
    cJSON_Delete(h->json);
    memset(h, 0, sizeof *h);
}

void ce_receipt_held_text(const ce_receipt_held *h, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    if (h->kind == CE_HELD_RUNFILE) len = (size_t)snprintf(out, n, "runfile");
    if (h->kind == CE_HELD_COMPONENTS) {
        if (h->profile[0]) len = (size_t)snprintf(out, n, "%s profile", h->profile);
        else len = (size_t)snprintf(out, n, "%zu components", h->n);
        const char *a = h->adjust;
        while (*a && len < n) {
            size_t w = strcspn(a, ",");
            if (len + 1 + w >= n) break;
            out[len++] = ' ';
            memcpy(out + len, a, w);
            len += w;
            out[len] = '\0';
            a += w + (a[w] == ',');
        }
    }
    if (h->nccl && len < n)
        snprintf(out + len, n - len, "%sNCCL%s%s", len ? ", " : "", h->nccl_version[0] ? " " : "", h->nccl_version);
}

void ce_receipt_init(ce_receipt *rec, const ce_manifest *m, const ce_resolved *r, const char *platform,
                     ce_filelist *files, const char **tf, size_t cap)
{
    size_t ntf = 0;
    for (size_t i = 0; i < m->n_tf && ntf < cap; i++) {
        const ce_tf *t = &m->tf[i];
        if (t->not_installable || !t->cuda || strcmp(t->cuda, r->cuda->version) != 0) continue;
        if (r->cudnn ? (t->cudnn && strcmp(t->cudnn, r->cudnn->version) == 0) : !t->cudnn) tf[ntf++] = t->version;
    }
    *rec = (ce_receipt){ .name = r->name, .cuda = r->cuda->version, .cudnn = r->cudnn ? r->cudnn->version : NULL,
                         .platform = platform, .min_driver = r->cuda->min_driver,
                         .min_driver_compat = r->cuda->min_driver_compat, .max_gcc = r->cuda->max_gcc,
                         .sm_min = r->cuda->sm_min, .sm_max = r->cuda->sm_max, .tensorflow = tf,
                         .n_tensorflow = ntf, .files = files };
}

static int line_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void ce_receipt_tree_sha256(const cJSON *files, char hex[65])
{
    hex[0] = '\0';
    size_t n = (size_t)cJSON_GetArraySize(files), k = 0, total = 0;
    char **lines = calloc(n ? n : 1, sizeof *lines);
    if (!lines) return;
    const cJSON *f;
    cJSON_ArrayForEach(f, files) {
        const cJSON *jp = cJSON_GetObjectItemCaseSensitive(f, "path");
        const cJSON *js = cJSON_GetObjectItemCaseSensitive(f, "size");
        const cJSON *jh = cJSON_GetObjectItemCaseSensitive(f, "sha256");
        if (k >= n || !cJSON_IsString(jp) || !cJSON_IsNumber(js)) continue;
        if (asprintf(&lines[k], "%s %lld %s\n", jp->valuestring, (long long)js->valuedouble,
                     cJSON_IsString(jh) ? jh->valuestring : "-") < 0) {
            lines[k] = NULL;
            continue;
        }
        total += strlen(lines[k++]);
    }
    qsort(lines, k, sizeof *lines, line_cmp);
    char *all = malloc(total + 1);
    if (all) {
        size_t at = 0;
        for (size_t i = 0; i < k; i++) {
            size_t l = strlen(lines[i]);
            memcpy(all + at, lines[i], l);
            at += l;
        }
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int mdlen = 0;
        if (EVP_Digest(all, at, md, &mdlen, EVP_sha256(), NULL) == 1 && mdlen == 32)
            for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
        free(all);
    }
    for (size_t i = 0; i < k; i++) free(lines[i]);
    free(lines);
}
