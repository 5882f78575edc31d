#include "slice.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The manifest's members written out again, the sections cut[k] (members
 * sec[k]) holding only the pieces p[k], "torch" and "jax" left out. */
static char *emit(const char *text, const members *ms, const member *const sec[3], const pieces *const p[3],
                  size_t *outlen)
{
    ce_jtext b = { 0 };
    ce_jtext_put(&b, "{\n", 2);
    for (size_t i = 0; i < ms->n; i++) {
        const member *m = &ms->m[i];
        if (named(text, m, "torch") || named(text, m, "jax")) continue;
        if (b.len > 2) ce_jtext_put(&b, ",\n", 2);
        int c = -1;
        for (int k = 0; k < 3; k++)
            if (sec[k] == m) c = k;
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

static const char *const cut[3] = { "tensorflow", "cuda", "cudnn" };

/* The document's members and its three cut sections; false when it is not
 * what a manifest looks like. */
static bool sections(const char *text, size_t len, members *ms, const member *sec[3])
{
    if (ce_json_each_member(text, len, collect, ms) != 1) return false;
    sec[0] = sec[1] = sec[2] = NULL;
    for (size_t i = 0; i < ms->n; i++)
        for (int c = 0; c < 3; c++)
            if (named(text, &ms->m[i], cut[c])) sec[c] = &ms->m[i];
    return true;
}

char *ce_manifest_slice_tf(char *text, size_t len, const char *tf, size_t *outlen)
{
    /* one pass over the document for its members; then the three sections
     * scanned for their one row each */
    members *ms = calloc(1, sizeof *ms);
    const member *sec[3];
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
    const pieces *p[3] = { &one[0], &one[1], &one[2] };
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
    const member *sec[3];
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
        const pieces *p[3] = { NULL, &cu, &dn };
        out = emit(text, ms, sec, p, outlen);
    }
    free(ms);
    return out;
}
