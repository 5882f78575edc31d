#include "slice.h"

#include <stdbool.h>
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

typedef struct buf { char *p; size_t len, cap; bool ok; } buf;

static void put(buf *b, const char *p, size_t n)
{
    if (!b->ok) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *o = realloc(b->p, cap);
        if (!o) { b->ok = false; return; }
        b->p = o;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

char *ce_manifest_slice_tf(char *text, size_t len, const char *tf, size_t *outlen)
{
    /* one pass over the document for its members; then the three sections
     * scanned for their one row each */
    members *ms = calloc(1, sizeof *ms);
    if (!ms || ce_json_each_member(text, len, collect, ms) != 1) { free(ms); return NULL; }
    static const char *const cut[3] = { "tensorflow", "cuda", "cudnn" };
    const member *sec[3] = { NULL, NULL, NULL };
    for (size_t i = 0; i < ms->n; i++)
        for (int c = 0; c < 3; c++)
            if (named(text, &ms->m[i], cut[c])) sec[c] = &ms->m[i];
    size_t at[3], end[3];
    bool have[3] = { false, false, false };
    char cuda[32], cudnn[32] = "";
    if (sec[0] && sec[1] && member_of(text, sec[0]->val_at, sec[0]->end, tf, &at[0], &end[0]) &&
        row_string(text, at[0], end[0], "cuda", cuda, sizeof cuda)) {
        have[0] = true;
        row_string(text, at[0], end[0], "cudnn", cudnn, sizeof cudnn);
        have[1] = member_of(text, sec[1]->val_at, sec[1]->end, cuda, &at[1], &end[1]);
        have[2] = cudnn[0] && sec[2] && member_of(text, sec[2]->val_at, sec[2]->end, cudnn, &at[2], &end[2]);
    }
    if (!have[0] || !have[1]) { free(ms); return NULL; }
    buf b = { .ok = true };
    put(&b, "{\n", 2);
    for (size_t i = 0; i < ms->n; i++) {
        const member *m = &ms->m[i];
        if (named(text, m, "torch") || named(text, m, "jax")) continue;
        if (b.len > 2) put(&b, ",\n", 2);
        int c = -1;
        for (int k = 0; k < 3; k++)
            if (sec[k] == m) c = k;
        if (c < 0) {
            put(&b, text + m->key_at, m->end - m->key_at);
            continue;
        }
        put(&b, text + m->key_at, m->klen);
        put(&b, ": {", 3);
        if (have[c]) put(&b, text + at[c], end[c] - at[c]);
        put(&b, "}", 1);
    }
    put(&b, "\n}\n", 3);
    free(ms);
    if (!b.ok) { free(b.p); return NULL; }
    *outlen = b.len;
    return b.p;
}
