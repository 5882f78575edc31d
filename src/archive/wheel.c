/* A wheel's RECORD and the members an unpack took from it (wheel.h). */
#include "wheel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ce_wheel_takes(const char *path, const char *under)
{
    size_t k = strlen(under), n = strlen(path);
    if (strncmp(path, under, k) != 0 || !path[k]) return NULL;
    if (strstr(path, "__pycache__/") || (n > 3 && strcmp(path + n - 3, ".py") == 0) ||
        (n > 4 && strcmp(path + n - 4, ".pyc") == 0))
        return NULL;
    return path + k;
}

bool ce_wheel_is_record(const char *path)
{
    const char *s = strchr(path, '/');
    static const char tail[] = ".dist-info/RECORD";
    size_t n = strlen(path), t = sizeof tail - 1;
    return s && n > t && strcmp(path + n - t, tail) == 0 && s == path + n - t + 10;
}

/* ---- parsing ---- */

/* urlsafe base64 without padding (a trailing '=' tolerated) of exactly 32
 * bytes, as hex; false when it is not. */
static bool b64_sha256(const char *s, size_t n, char hex[CE_SHA256_HEX])
{
    while (n > 0 && s[n - 1] == '=') n--;
    if (n != 43) return false;
    unsigned char out[33];
    unsigned acc = 0, bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int v = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26
              : c >= '0' && c <= '9' ? c - '0' + 52 : c == '-' ? 62 : c == '_' ? 63 : -1;
        if (v < 0) return false;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    if (o != 32 || acc != 0) return false;   /* 43 characters: 2 bits left over, zero */
    for (size_t i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", out[i]);
    return true;
}

/* One CSV field from *p (the csv module's quoting: "a,b" and "" for a
 * quote) into a malloc'd string; *p moves past it and its comma.  *end:
 * the line ended after it.  NULL out of memory or on a stray quote. */
static char *field(const char **p, const char *lim, bool *end, bool *bad)
{
    const char *s = *p;
    size_t cap = 64, n = 0;
    char *f = malloc(cap);
    if (!f) return NULL;
    bool quoted = s < lim && *s == '"';
    if (quoted) s++;
    for (;;) {
        if (s >= lim || (!quoted && (*s == '\n' || *s == ','))) break;
        if (!quoted && *s == '\r' && (s + 1 >= lim || s[1] == '\n')) break;
        if (quoted && *s == '"') {
            if (s + 1 < lim && s[1] == '"') {
                s++;
            } else {
                s++;
                quoted = false;
                if (s < lim && *s != ',' && *s != '\n' && *s != '\r') *bad = true;
                continue;
            }
        }
        if (n + 2 > cap) {
            char *g = realloc(f, cap *= 2);
            if (!g) {
                free(f);
                return NULL;
            }
            f = g;
        }
        f[n++] = *s++;
    }
    if (quoted) *bad = true;   /* the line ended inside quotes */
    f[n] = '\0';
    if (s < lim && *s == '\r') s++;
    *end = s >= lim || *s == '\n';
    if (s < lim) s++;
    *p = s;
    return f;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const ce_record_row *)a)->path, ((const ce_record_row *)b)->path);
}

/* The hash and size fields of row (line: for messages). */
static bool row_fields(ce_record_row *row, const char *hash, const char *size, char *why, size_t whysz, size_t line)
{
    row->size = -1;
    if (*hash) {
        const char *eq = strchr(hash, '=');
        if (!eq || eq == hash || (size_t)(eq - hash) >= sizeof row->algo) {
            snprintf(why, whysz, "line %zu: hash '%.80s' is not algorithm=digest", line, hash);
            return false;
        }
        memcpy(row->algo, hash, (size_t)(eq - hash));
        row->algo[eq - hash] = '\0';
        if (strcmp(row->algo, "sha256") == 0 && !b64_sha256(eq + 1, strlen(eq + 1), row->sha256)) {
            snprintf(why, whysz, "line %zu: sha256 '%.80s' is not 32 bytes in urlsafe base64", line, eq + 1);
            return false;
        }
    }
    if (*size) {
        char *e;
        long long v = strtoll(size, &e, 10);
        if (*e || v < 0 || size[0] == '-' || size[0] == '+' || size[0] == ' ') {
            snprintf(why, whysz, "line %zu: size '%.40s' is not a number", line, size);
            return false;
        }
        row->size = v;
    }
    return true;
}

int ce_record_parse(const char *text, size_t len, ce_record *out, char *why, size_t whysz)
{
    const char *p = text, *lim = text + len;
    size_t cap = 0, line = 0;
    out->v = NULL;
    out->n = 0;
    why[0] = '\0';
    while (p < lim) {
        line++;
        char *f[4] = { NULL, NULL, NULL, NULL };
        size_t nf = 0;
        bool end = false, bad = false, ok = true;
        while (!end) {
            char *x = field(&p, lim, &end, &bad);
            if (!x) {
                for (size_t i = 0; i < nf && i < 4; i++) free(f[i]);
                ce_record_free(out);
                return CE_ERR_NOMEM;
            }
            if (nf < 4) f[nf] = x; else free(x);
            nf++;
        }
        if (nf == 1 && !f[0][0]) {   /* a blank line */
            free(f[0]);
            continue;
        }
        if (bad) snprintf(why, whysz, "line %zu: a stray quote", line), ok = false;
        else if (nf > 3) snprintf(why, whysz, "line %zu: %zu fields, not path,hash,size", line, nf), ok = false;
        else if (!f[0][0]) snprintf(why, whysz, "line %zu: no path", line), ok = false;
        ce_record_row row = { .path = f[0] };
        if (ok) ok = row_fields(&row, nf > 1 ? f[1] : "", nf > 2 ? f[2] : "", why, whysz, line);
        for (size_t i = 1; i < nf && i < 4; i++) free(f[i]);
        if (ok && out->n == cap) {
            ce_record_row *v = realloc(out->v, (cap = cap ? cap * 2 : 64) * sizeof *v);
            if (!v) {
                free(row.path);
                ce_record_free(out);
                return CE_ERR_NOMEM;
            }
            out->v = v;
        }
        if (!ok) {
            free(row.path);
            ce_record_free(out);
            return CE_ERR_INTEGRITY;
        }
        out->v[out->n++] = row;
    }
    if (out->n) qsort(out->v, out->n, sizeof *out->v, by_path);
    for (size_t i = 1; i < out->n; i++)
        if (strcmp(out->v[i - 1].path, out->v[i].path) == 0) {
            snprintf(why, whysz, "'%.200s' is listed twice", out->v[i].path);
            ce_record_free(out);
            return CE_ERR_INTEGRITY;
        }
    return CE_OK;
}

const ce_record_row *ce_record_find(const ce_record *r, const char *path)
{
    ce_record_row key = { .path = (char *)path };
    return r->n ? bsearch(&key, r->v, r->n, sizeof *r->v, by_path) : NULL;
}

void ce_record_free(ce_record *r)
{
    for (size_t i = 0; i < r->n; i++) free(r->v[i].path);
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

/* ---- what an unpack took ---- */

typedef struct taken { char *path; long long size; char sha256[CE_SHA256_HEX]; } taken;

struct ce_wheel {
    taken *v;
    size_t n, cap;
    char *record;        /* RECORD's bytes, NULL until the entry came */
    size_t record_len;
};

ce_wheel *ce_wheel_new(void)
{
    return calloc(1, sizeof(ce_wheel));
}

void ce_wheel_free(ce_wheel *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->n; i++) free(w->v[i].path);
    free(w->v);
    free(w->record);
    free(w);
}

int ce_wheel_took(ce_wheel *w, const char *path, long long size, const char *sha256)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 32;
        taken *v = realloc(w->v, cap * sizeof *v);
        if (!v) return CE_ERR_NOMEM;
        w->v = v;
        w->cap = cap;
    }
    char *p = strdup(path);
    if (!p) return CE_ERR_NOMEM;
    w->v[w->n] = (taken){ .path = p, .size = size };
    snprintf(w->v[w->n].sha256, sizeof w->v[w->n].sha256, "%s", sha256);
    w->n++;
    return CE_OK;
}

bool ce_wheel_record(ce_wheel *w, char *text, size_t len)
{
    if (w->record) {
        free(text);
        return false;
    }
    w->record = text;
    w->record_len = len;
    return true;
}

/* the wheel's sha256 is the manifest's (checked before): the published file is wrong */
#define NOTHING "nothing was installed from it (its sha256 is the one the manifest pins, so the published " \
                "wheel itself is wrong: report it to whoever publishes it)"

/* t against its row of r, which seen[] then marks. */
static int member_check(const ce_record *r, bool *seen, const taken *t, const char *label)
{
    const ce_record_row *row = ce_record_find(r, t->path);
    if (row) seen[row - r->v] = true;
    if (!row)
        return ce_fail(CE_ERR_INTEGRITY, "%s: member '%.200s' is not in the wheel's RECORD, so nothing "
                       "vouches for its bytes; " NOTHING, label, t->path);
    if (!row->algo[0])
        return ce_fail(CE_ERR_INTEGRITY, "%s: member '%.200s' is in RECORD without a hash (only RECORD "
                       "itself and signature files may be); " NOTHING, label, t->path);
    if (strcmp(row->algo, "sha256") != 0)
        return ce_fail(CE_ERR_INTEGRITY, "%s: RECORD gives member '%.200s' a %s hash, and cudaenv checks "
                       "sha256; " NOTHING, label, t->path, row->algo);
    if (row->size >= 0 && row->size != t->size)
        return ce_fail(CE_ERR_INTEGRITY, "%s: member '%.200s' holds %lld bytes, its RECORD says %lld; "
                       NOTHING, label, t->path, t->size, row->size);
    if (strcmp(row->sha256, t->sha256) != 0)
        return ce_fail(CE_ERR_INTEGRITY, "%s: member '%.200s' has sha256 %s, its RECORD says %s; " NOTHING,
                       label, t->path, t->sha256, row->sha256);
    return CE_OK;
}

int ce_wheel_check(const ce_wheel *w, const char *label, const char *under)
{
    if (!w->record)
        return ce_fail(CE_ERR_INTEGRITY, "%s has no *.dist-info/RECORD, the list of every file of a wheel "
                       "with its sha256 (PEP 427), so nothing vouches for its members; " NOTHING, label);
    ce_record r;
    char why[320];
    int rc = ce_record_parse(w->record, w->record_len, &r, why, sizeof why);
    if (rc == CE_ERR_NOMEM) return ce_fail(rc, "out of memory reading the RECORD of %s", label);
    if (rc) return ce_fail(rc, "%s: its RECORD is not valid (%s); " NOTHING, label, why);
    bool *seen = calloc(r.n + 1, sizeof *seen);
    if (!seen) rc = ce_fail(CE_ERR_NOMEM, "out of memory checking %s", label);
    for (size_t i = 0; rc == CE_OK && i < w->n; i++) rc = member_check(&r, seen, &w->v[i], label);
    /* what RECORD promises that the zip did not give */
    for (size_t i = 0; rc == CE_OK && i < r.n; i++)
        if (!seen[i] && ce_wheel_takes(r.v[i].path, under) && r.v[i].path[strlen(r.v[i].path) - 1] != '/')
            rc = ce_fail(CE_ERR_INTEGRITY, "%s: its RECORD lists '%.200s', which the wheel does not hold; "
                         NOTHING, label, r.v[i].path);
    free(seen);
    ce_record_free(&r);
    return rc;
}
