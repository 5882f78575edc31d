#include "slice.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "core/json.h"

/* The member key of the object at text[v..e) (a section of the manifest):
 * [*at, *end) the member from its key's quote to its value's end. */
static bool member_of(char *text, size_t v, size_t e, const char *key, size_t *at, size_t *end)
{
    if (!key || text[v] != '{') return false;
    char keep = text[e];
    text[e] = '\0';   /* the scan stays inside the section */
    size_t k, val, ve;
    int r = ce_json_top_member(text + v, e - v, key, &k, &val, &ve);
    text[e] = keep;
    if (r != 1) return false;
    *at = v + k;
    *end = v + ve;
    return true;
}

/* The string member name of the JSON object text[at..end) ("cuda": "11.8.0"), copied to out. */
static bool row_string(char *text, size_t at, size_t end, const char *name, char *out, size_t n)
{
    size_t v = at, k, val, ve;
    while (v < end && text[v] != '{') v++;   /* the row's value, after its key */
    if (v >= end) return false;
    char keep = text[end];
    text[end] = '\0';
    int r = ce_json_top_member(text + v, end - v, name, &k, &val, &ve);
    text[end] = keep;
    if (r != 1 || text[v + val] != '"' || ve - val < 2 || ve - val - 2 >= n) return false;
    memcpy(out, text + v + val + 1, ve - val - 2);
    out[ve - val - 2] = '\0';
    return !strchr(out, '\\');   /* a version never holds an escape */
}

#define MAX_MEMBERS 64

typedef struct member { size_t key_at, klen, val_at, end; } member;
typedef struct members { member m[MAX_MEMBERS]; size_t n; } members;

static int collect(void *ud, const char *t, size_t key_at, size_t klen, size_t val_at, size_t end)
{
    (void)t;
    members *ms = ud;
    if (ms->n == MAX_MEMBERS) return -1;   /* not a manifest's shape */
    ms->m[ms->n++] = (member){ key_at, klen, val_at, end };
    return 0;
}

static bool named(const char *text, const member *m, const char *name)
{
    size_t n = strlen(name);
    return m->klen == n + 2 && !memcmp(text + m->key_at + 1, name, n);
}

/* Where each piece of a cut section is: up to MAX_PIECES members of it. */
#define MAX_PIECES 256
typedef struct pieces { size_t at[MAX_PIECES], end[MAX_PIECES]; size_t n; bool over; } pieces;

#define N_CUT 5
enum { TF, CUDA, CUDNN, TORCH, JAX };
static const char *const cut[N_CUT] = { "tensorflow", "cuda", "cudnn", "torch", "jax" };

/* The manifest's members written out again, the sections cut[k] (members
 * sec[k]) holding only the pieces p[k] ("{}" for none); "torch" and "jax"
 * left out unless they have pieces (a framework's slice). */
static char *emit(const char *text, const members *ms, const member *const sec[N_CUT], const pieces *const p[N_CUT],
                  size_t *outlen)
{
    ce_jtext b = { 0 };
    ce_jtext_put(&b, "{\n", 2);
    for (size_t i = 0; i < ms->n; i++) {
        const member *m = &ms->m[i];
        int c = -1;
        for (int k = 0; k < N_CUT; k++)
            if (sec[k] == m) c = k;
        if ((named(text, m, "torch") || named(text, m, "jax")) && (c < TORCH || !p[c])) continue;
        if (b.len > 2) ce_jtext_put(&b, ",\n", 2);
        if (c < 0) {
            ce_jtext_put(&b, text + m->key_at, m->end - m->key_at);
            continue;
        }
        ce_jtext_put(&b, text + m->key_at, m->klen);
        ce_jtext_put(&b, ": {", 3);
        for (size_t j = 0; p[c] && j < p[c]->n; j++) {
            if (j) ce_jtext_put(&b, ",\n", 2);
            ce_jtext_put(&b, text + p[c]->at[j], p[c]->end[j] - p[c]->at[j]);
        }
        ce_jtext_put(&b, "}", 1);
    }
    ce_jtext_put(&b, "\n}\n", 3);
    size_t n = b.len;
    char *out = ce_jtext_take(&b);   /* NULL when out of memory */
    if (out) *outlen = n;
    return out;
}

/* The document's members and its cut sections; false when it is not
 * what a manifest looks like. */
static bool sections(const char *text, size_t len, members *ms, const member *sec[N_CUT])
{
    if (ce_json_each_member(text, len, collect, ms) != 1) return false;
    for (int c = 0; c < N_CUT; c++) sec[c] = NULL;
    for (size_t i = 0; i < ms->n; i++)
        for (int c = 0; c < N_CUT; c++)
            if (named(text, &ms->m[i], cut[c])) sec[c] = &ms->m[i];
    return true;
}

char *ce_manifest_slice_tf(char *text, size_t len, const char *tf, size_t *outlen)
{
    /* one pass over the document for its members; then the three sections
     * scanned for their one row each */
    members *ms = calloc(1, sizeof *ms);
    const member *sec[N_CUT];
    if (!ms || !sections(text, len, ms, sec)) { free(ms); return NULL; }
    static pieces one[3];
    for (int c = 0; c < 3; c++) one[c].n = 0;
    char cuda[32], cudnn[32] = "";
    if (sec[0] && sec[1] && member_of(text, sec[0]->val_at, sec[0]->end, tf, &one[0].at[0], &one[0].end[0]) &&
        row_string(text, one[0].at[0], one[0].end[0], "cuda", cuda, sizeof cuda)) {
        one[0].n = 1;
        row_string(text, one[0].at[0], one[0].end[0], "cudnn", cudnn, sizeof cudnn);
        one[1].n = member_of(text, sec[1]->val_at, sec[1]->end, cuda, &one[1].at[0], &one[1].end[0]);
        one[2].n = cudnn[0] && sec[2] && member_of(text, sec[2]->val_at, sec[2]->end, cudnn, &one[2].at[0], &one[2].end[0]);
    }
    if (!one[0].n || !one[1].n) { free(ms); return NULL; }
    const pieces *p[N_CUT] = { &one[0], &one[1], &one[2], NULL, NULL };
    char *out = emit(text, ms, sec, p, outlen);
    free(ms);
    return out;
}

/* ---- a CUDA release: its rows and every cuDNN with a build for its major ---- */

typedef struct pick { const char *text; size_t base; const char *want; size_t wl; bool dotted; pieces *p; } pick;

/* a member of a section (key from its quote) kept when its key is want,
 * or (dotted) starts with want and a '.' */
static int keep_named(void *ud, const char *t, size_t k, size_t kl, size_t v, size_t e)
{
    (void)v;
    pick *pk = ud;
    size_t n = kl - 2;
    if (!(n == pk->wl || (pk->dotted && n > pk->wl && t[k + 1 + pk->wl] == '.')) || memcmp(t + k + 1, pk->want, pk->wl))
        return 0;
    if (pk->p->n == MAX_PIECES) return pk->p->over = true, -1;
    pk->p->at[pk->p->n] = pk->base + k;
    pk->p->end[pk->p->n++] = pk->base + e;
    return 0;
}

/* the members of text[v..e) (an object inside the NUL-terminated text) */
static int each_in(char *text, size_t v, size_t e, ce_json_member_fn fn, void *ud)
{
    char keep = text[e];
    text[e] = '\0';
    int r = ce_json_each_member(text + v, e - v, fn, ud);
    text[e] = keep;
    return r;
}

/* a cuDNN release kept when it has a build "cuda<major>": its text holds
 * that key (a quote before it that no backslash escapes, ':' after it).
 * A string value spelling the same would keep one release too many, which
 * resolves the same (the slice may hold more than it needs, never less). */
static int keep_cudnn(void *ud, const char *t, size_t k, size_t kl, size_t v, size_t e)
{
    (void)kl;
    pick *pk = ud;
    char key[24];
    int kn = snprintf(key, sizeof key, "\"%s\"", pk->want);
    bool found = false;
    for (const char *p = t + v, *end = t + e; !found && (p = memmem(p, (size_t)(end - p), key, (size_t)kn)); p += kn) {
        const char *after = p + kn;
        while (after < end && (*after == ' ' || *after == '\t' || *after == '\n' || *after == '\r')) after++;
        found = p[-1] != '\\' && after < end && *after == ':';
    }
    if (!found) return 0;
    if (pk->p->n == MAX_PIECES) return pk->p->over = true, -1;
    pk->p->at[pk->p->n] = pk->base + k;
    pk->p->end[pk->p->n++] = pk->base + e;
    return 0;
}

char *ce_manifest_slice_cuda(char *text, size_t len, const char *version, size_t *outlen)
{
    const char *dot = strchr(version, '.');
    char build[16];
    if (!dot || (size_t)(dot - version) + 5 > sizeof build) return NULL;
    members *ms = calloc(1, sizeof *ms);
    const member *sec[N_CUT];
    if (!ms || !sections(text, len, ms, sec) || !sec[1]) { free(ms); return NULL; }
    static pieces cu, dn;
    cu.n = dn.n = 0;
    cu.over = dn.over = false;
    pick pc = { text, sec[1]->val_at, version, strlen(version), true, &cu };
    snprintf(build, sizeof build, "cuda%.*s", (int)(dot - version), version);
    pick pd = { text, sec[2] ? sec[2]->val_at : 0, build, strlen(build), false, &dn };
    bool ok = text[sec[1]->val_at] == '{' && each_in(text, sec[1]->val_at, sec[1]->end, keep_named, &pc) == 1 && cu.n &&
              (!sec[2] || (text[sec[2]->val_at] == '{' &&
                           each_in(text, sec[2]->val_at, sec[2]->end, keep_cudnn, &pd) == 1));
    char *out = NULL;
    if (ok) {
        const pieces *p[N_CUT] = { NULL, &cu, &dn, NULL, NULL };
        out = emit(text, ms, sec, p, outlen);
    }
    free(ms);
    return out;
}

/* ---- a PyTorch or JAX release: it, and the CUDA and cuDNN releases its builds name ---- */

#define MAX_REFS 32
typedef struct refs { char cuda[MAX_REFS][32], cudnn[MAX_REFS][32]; size_t nc, nd; char *text; size_t base; } refs;

static void add_ref(char list[][32], size_t *n, const char *v)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(list[i], v)) return;
    if (*n < MAX_REFS) snprintf(list[(*n)++], 32, "%s", v);
}

static int build_refs(void *ud, const char *t, size_t k, size_t kl, size_t v, size_t e)
{
    (void)t; (void)kl; (void)v;
    refs *r = ud;
    char name[32];
    if (r->nc == MAX_REFS || r->nd == MAX_REFS) return -1;   /* more than a slice is for: the whole */
    if (row_string(r->text, r->base + k, r->base + e, "cuda", name, sizeof name)) add_ref(r->cuda, &r->nc, name);
    if (row_string(r->text, r->base + k, r->base + e, "cudnn", name, sizeof name)) add_ref(r->cudnn, &r->nd, name);
    return 0;
}

/* The CUDA and cuDNN releases named by the builds of the release member text[at..end). */
static bool fw_refs(char *text, size_t at, size_t end, refs *r)
{
    size_t v = at, b, be;
    while (v < end && text[v] != '{') v++;
    r->nc = r->nd = 0;
    r->text = text;
    if (v >= end || !member_of(text, v, end, "builds", &b, &be)) return false;
    while (b < be && text[b] != ':') b++;
    while (b < be && text[b] != '{') b++;
    r->base = b;
    return b < be && each_in(text, b, be, build_refs, r) == 1;
}

static int fw_index(const char *name)
{
    return !strcmp(name, "torch") ? TORCH : !strcmp(name, "jax") ? JAX : -1;
}

char *ce_manifest_slice_fw(char *text, size_t len, const char *name, const char *version, size_t *outlen)
{
    int f = fw_index(name);
    members *ms = calloc(1, sizeof *ms);
    const member *sec[N_CUT];
    if (f < 0 || !ms || !sections(text, len, ms, sec) || !sec[f] || !sec[CUDA]) { free(ms); return NULL; }
    static pieces rel, cu, dn;
    static refs r;
    rel.n = cu.n = dn.n = 0;
    char *out = NULL;
    if (member_of(text, sec[f]->val_at, sec[f]->end, version, &rel.at[0], &rel.end[0]) &&
        fw_refs(text, rel.at[0], rel.end[0], &r)) {
        rel.n = 1;
        for (size_t i = 0; i < r.nc; i++)
            if (member_of(text, sec[CUDA]->val_at, sec[CUDA]->end, r.cuda[i], &cu.at[cu.n], &cu.end[cu.n])) cu.n++;
        for (size_t i = 0; sec[CUDNN] && i < r.nd; i++)
            if (member_of(text, sec[CUDNN]->val_at, sec[CUDNN]->end, r.cudnn[i], &dn.at[dn.n], &dn.end[dn.n])) dn.n++;
        const pieces *p[N_CUT] = { NULL, &cu, &dn, f == TORCH ? &rel : NULL, f == JAX ? &rel : NULL };
        out = emit(text, ms, sec, p, outlen);
    }
    free(ms);
    return out;
}

char *ce_manifest_slice(char *text, size_t len, const char *kind, const char *version, size_t *outlen)
{
    if (!strcmp(kind, "tensorflow")) return ce_manifest_slice_tf(text, len, version, outlen);
    if (!strcmp(kind, "cuda")) return ce_manifest_slice_cuda(text, len, version, outlen);
    return ce_manifest_slice_fw(text, len, kind, version, outlen);
}

/* ---- where the pieces are: the index's "at" records, and a slice cut by them ---- */

/* a key the records can carry: no quote, escape, space or control character */
static bool plain_key(const char *t, size_t k, size_t kl)
{
    if (kl < 3 || kl > 64) return false;
    for (size_t i = k + 1; i + 1 < k + kl; i++)
        if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= '0' && t[i] <= '9') ||
              t[i] == '.' || t[i] == '_' || t[i] == '-' || t[i] == '+'))
            return false;
    return true;
}

/* The "cudaN" keys in text[v..e) (as keep_cudnn finds them), comma-separated, "-" for none. */
static void cudnn_builds(const char *t, size_t v, size_t e, char *out, size_t n)
{
    size_t o = 0;
    out[0] = '\0';
    for (const char *p = t + v, *end = t + e; (p = memmem(p, (size_t)(end - p), "\"cuda", 5)); p += 5) {
        const char *d = p + 5, *q = d;
        while (q < end && *q >= '0' && *q <= '9') q++;
        if (q == d || q >= end || *q != '"' || p[-1] == '\\' || q - d > 4) continue;
        const char *after = q + 1;
        while (after < end && (*after == ' ' || *after == '\t' || *after == '\n' || *after == '\r')) after++;
        if (after >= end || *after != ':') continue;
        char one[12];
        snprintf(one, sizeof one, "cuda%.*s", (int)(q - d), d);
        size_t ol = strlen(one);
        bool have = false;
        for (const char *s = out; !have && (s = strstr(s, one)); s += ol)
            have = (s == out || s[-1] == ',') && (s[ol] == ',' || s[ol] == '\0');
        if (!have && o + ol + 2 < n) o += (size_t)snprintf(out + o, n - o, "%s%s", o ? "," : "", one);
    }
    if (!o) snprintf(out, n, "-");
}

typedef struct recw { ce_jtext *b; const char *sec; size_t base; bool bad; } recw;

static int rec_member(void *ud, const char *t, size_t k, size_t kl, size_t v, size_t e)
{
    recw *w = ud;
    if (!plain_key(t, k, kl)) return w->bad = true, -1;
    char builds[64] = "-";
    if (!strcmp(w->sec, "cudnn")) cudnn_builds(t, v, e, builds, sizeof builds);
    ce_jtext_add(w->b, "at %s %.*s %zu %zu %s\n", w->sec, (int)(kl - 2), t + k + 1, w->base + k, w->base + e, builds);
    return 0;
}

char *ce_manifest_slice_records(char *text, size_t len)
{
    members *ms = calloc(1, sizeof *ms);
    const member *sec[N_CUT];
    ce_jtext b = { 0 };
    bool ok = ms && sections(text, len, ms, sec);
    for (size_t i = 0; ok && i < ms->n; i++) {
        const member *m = &ms->m[i];
        ok = plain_key(text, m->key_at, m->klen);
        if (ok) ce_jtext_add(&b, "at - %.*s %zu %zu\n", (int)(m->klen - 2), text + m->key_at + 1, m->key_at, m->end);
    }
    for (int c = 0; ok && c < N_CUT; c++) {
        if (!sec[c]) continue;
        recw w = { &b, cut[c], sec[c]->val_at, false };
        ok = text[sec[c]->val_at] == '{' && each_in(text, sec[c]->val_at, sec[c]->end, rec_member, &w) == 1;
    }
    free(ms);
    char *out = ce_jtext_take(&b);
    if (!ok) { free(out); return NULL; }
    return out;
}

/* The record "at SEC KEY AT END BUILDS" of recs (KEY exact): its range;
 * false when there is none or it does not read. */
static bool find_at(const char *recs, const char *sec, const char *key, size_t *at, size_t *end)
{
    char needle[96];
    int w = snprintf(needle, sizeof needle, "\nat %s %s ", sec, key);
    if (w < 0 || (size_t)w >= sizeof needle) return false;
    const char *l = strstr(recs, needle);
    if (!l) return false;
    char *e;
    l += w;
    unsigned long long a = strtoull(l, &e, 10), b = *e == ' ' ? strtoull(e + 1, &e, 10) : 0;
    if (*e != ' ' || b <= a) return false;
    *at = (size_t)a;
    *end = (size_t)b;
    return true;
}

/* What a slice of kind (manifest/slice.h) takes of each cut section, by the records. */
#define MAX_PLAN 64
typedef struct plan { pieces p[N_CUT]; char key[N_CUT][MAX_PLAN][32]; } plan;

/* the member key of section c, its record found from recs on */
static bool plan_add(plan *pl, int c, const char *recs, const char *key)
{
    pieces *p = &pl->p[c];
    if (p->n == MAX_PLAN) return false;   /* more than a slice is for: the whole */
    if (!find_at(recs, cut[c], key, &p->at[p->n], &p->end[p->n])) return true;   /* not there: the slicer says */
    snprintf(pl->key[c][p->n++], 32, "%s", key);
    return true;
}

/* n bytes of fd at off, NUL-terminated, when they begin with the quoted key (a range the records name) */
static char *grab(int fd, size_t at, size_t end, const char *key)
{
    size_t n = end - at, kl = strlen(key);
    char *t = n < (64u << 20) ? malloc(n + 1) : NULL;
    if (!t || ce_pread_all(fd, t, n, (long long)at) != 0 || n < kl + 2 || t[0] != '"' || memcmp(t + 1, key, kl) ||
        t[kl + 1] != '"') {
        free(t);
        return NULL;
    }
    t[n] = '\0';
    return t;
}

/* The sections' pieces a slice of kind/version needs, chosen by the records (a superset is fine: the slicer cuts again) */
static bool plan_for(plan *pl, int fd, const char *recs, const char *kind, const char *version)
{
    bool ok = true;
    if (!strcmp(kind, "cuda")) {
        const char *dot = strchr(version, '.');
        char build[16], needle[32];
        if (!dot || (size_t)(dot - version) + 5 > sizeof build) return false;
        snprintf(build, sizeof build, "cuda%.*s", (int)(dot - version), version);
        size_t vl = strlen(version), bl = strlen(build);
        for (int c = CUDA; c <= CUDNN; c++) {
            int w = snprintf(needle, sizeof needle, "\nat %s ", cut[c]);
            for (const char *l = recs; ok && (l = strstr(l, needle)); l += w) {
                /* each record of the section looked at where it is: key, then (cuDNN) its builds */
                const char *k = l + w, *ke = k + strcspn(k, " \n"), *le = ke + strcspn(ke, "\n");
                size_t kl = (size_t)(ke - k);
                char key[32];
                if (kl >= sizeof key) continue;
                if (c == CUDA && (kl < vl || memcmp(k, version, vl) || (kl > vl && k[vl] != '.'))) continue;
                if (c == CUDNN) {
                    const char *bs = le;
                    while (bs > ke && bs[-1] != ' ') bs--;   /* the last field: the builds */
                    bool has = false;
                    for (const char *q = bs; !has && q + bl <= le && (q = memmem(q, (size_t)(le - q), build, bl)); q += bl)
                        has = (q == bs || q[-1] == ',') && (q + bl == le || q[bl] == ',');
                    if (!has) continue;
                }
                memcpy(key, k, kl);
                key[kl] = '\0';
                ok = plan_add(pl, c, l, key);
            }
        }
        return ok;
    }
    int f = !strcmp(kind, "tensorflow") ? TF : fw_index(kind);
    if (f < 0 || !plan_add(pl, f, recs, version) || !pl->p[f].n) return false;
    char *row = grab(fd, pl->p[f].at[0], pl->p[f].end[0], version);
    if (!row) return false;
    size_t n = pl->p[f].end[0] - pl->p[f].at[0];
    if (f == TF) {
        char cu[32], dn[32];
        if (row_string(row, 0, n, "cuda", cu, sizeof cu)) ok = plan_add(pl, CUDA, recs, cu);
        if (ok && row_string(row, 0, n, "cudnn", dn, sizeof dn)) ok = plan_add(pl, CUDNN, recs, dn);
    } else {
        static refs r;
        ok = fw_refs(row, 0, n, &r);
        for (size_t i = 0; ok && i < r.nc; i++) ok = plan_add(pl, CUDA, recs, r.cuda[i]);
        for (size_t i = 0; ok && i < r.nd; i++) ok = plan_add(pl, CUDNN, recs, r.cudnn[i]);
    }
    free(row);
    return ok;
}

char *ce_manifest_slice_pieces(int fd, const char *recs, const char *kind, const char *version, size_t *outlen)
{
    plan *pl = calloc(1, sizeof *pl);
    ce_jtext b = { 0 };
    bool ok = pl && plan_for(pl, fd, recs, kind, version);
    ce_jtext_put(&b, "{\n", 2);
    const char *l = recs;
    for (bool first = true; ok && (l = strstr(l, "\nat - ")); l += 6) {
        char name[72], *e;
        size_t nl = strcspn(l + 6, " \n");
        if (nl >= sizeof name) { ok = false; break; }
        snprintf(name, sizeof name, "%.*s", (int)nl, l + 6);
        unsigned long long a = strtoull(l + 6 + nl, &e, 10), z = *e == ' ' ? strtoull(e + 1, &e, 10) : 0;
        int c = -1;
        for (int k = 0; k < N_CUT; k++)
            if (!strcmp(name, cut[k])) c = k;
        if (z <= a || (c >= TORCH && strcmp(name, kind))) { ok = z > a; continue; }
        if (!first) ce_jtext_put(&b, ",\n", 2);
        first = false;
        if (c < 0) {   /* a member kept whole */
            char *t = grab(fd, (size_t)a, (size_t)z, name);
            if (!(ok = t)) break;
            ce_jtext_put(&b, t, (size_t)(z - a));
            free(t);
            continue;
        }
        ce_jtext_add(&b, "\"%s\": {", name);
        for (size_t j = 0; ok && j < pl->p[c].n; j++) {
            char *t = grab(fd, pl->p[c].at[j], pl->p[c].end[j], pl->key[c][j]);
            if (!(ok = t)) break;
            if (j) ce_jtext_put(&b, ",\n", 2);
            ce_jtext_put(&b, t, pl->p[c].end[j] - pl->p[c].at[j]);
            free(t);
        }
        ce_jtext_put(&b, "}", 1);
    }
    ce_jtext_put(&b, "\n}\n", 3);
    free(pl);
    size_t n = b.len;
    char *out = ce_jtext_take(&b);
    if (!ok || !out || n < 8) { free(out); return NULL; }
    *outlen = n;
    return out;
}
