/* system.json's restore part (issue 11): the machine's original state and
 * the rollback history; see system.h. */
#include "system.h"

#include <stdio.h>
#include <string.h>

#include "core/json.h"

/* Nested keys differ from the top-level ones ("target", "lib", "name"), so
 * a line-based reader of system.json (grep, sed) still finds one of each. */
static const char *const kinds[] = { "none", "link", "alternatives", "directory" };

/* The strings of the entries in use moved to the start of the pool (the
 * others' bytes freed). */
static void pack(ce_sys_record *rec)
{
    static char tmp[sizeof rec->hpool];
    unsigned len = 0;
    for (int i = 0; i < rec->nhistory; i++)
        for (int k = 0; k < 3; k++) {
            const char *str = rec->hpool + rec->hoff[i][k];
            size_t l = strlen(str) + 1;
            memcpy(tmp + len, str, l);
            rec->hoff[i][k] = len;
            len += (unsigned)l;
        }
    memcpy(rec->hpool, tmp, len);
    rec->hlen = len;
}

/* Entry i := (name, target, lib), the strings cut as the fixed fields of
 * ce_sys_entry would (95 and 4095 bytes) and added to the pool; entries
 * 0..nhistory-1 must be valid (i may be nhistory: one more). */
static void put(ce_sys_record *rec, int i, const char *name, const char *target, const char *lib)
{
    const char *v[3] = { name, target, lib };
    size_t cap[3] = { sizeof ((ce_sys_entry *)0)->name, sizeof ((ce_sys_entry *)0)->target,
                      sizeof ((ce_sys_entry *)0)->lib };
    size_t l[3], need = 0;
    for (int k = 0; k < 3; k++) {
        l[k] = strnlen(v[k], cap[k] - 1);
        need += l[k] + 1;
    }
    /* a string may be one of the pool's own: copied before the pool moves */
    char buf[sizeof ((ce_sys_entry *)0)->name + sizeof ((ce_sys_entry *)0)->target + sizeof ((ce_sys_entry *)0)->lib];
    for (int k = 0, o = 0; k < 3; o += (int)l[k] + 1, k++) {
        memcpy(buf + o, v[k], l[k]);
        buf[o + (int)l[k]] = '\0';
    }
    if (rec->hlen + need > sizeof rec->hpool) pack(rec);   /* room for 16 entries + 2 of the largest */
    for (int k = 0, o = 0; k < 3; o += (int)l[k] + 1, k++) {
        memcpy(rec->hpool + rec->hlen, buf + o, l[k] + 1);
        rec->hoff[i][k] = rec->hlen;
        rec->hlen += (unsigned)l[k] + 1;
    }
}

/* ---- reading: the members of "original" and of each history entry ---- */

typedef struct orig_rd {
    ce_sys_original *g;
    size_t off;   /* bytes of alt_list in use */
    int bad;
} orig_rd;

static bool key_is(const char *t, size_t k, size_t kl, const char *name)
{
    size_t nl = strlen(name);
    return kl == nl + 2 && !memcmp(t + k + 1, name, nl);
}

static int alt_one(void *ud, const char *t, size_t v, size_t e)
{
    orig_rd *o = ud;
    char s[4096];
    if (t[v] != '"') return 0;   /* cJSON's reader skipped what is not a string */
    if (ce_json_unquote(t, v, e, s, sizeof s)) return (o->bad = 1), -1;
    ce_sys_original *g = o->g;
    int w = snprintf(g->alt_list + o->off, sizeof g->alt_list - o->off, "%s\n", s);
    if (w < 0 || (size_t)w >= sizeof g->alt_list - o->off) {
        g->alt_list[o->off] = '\0';
        return 1;
    }
    o->off += (size_t)w;
    return 0;
}

static int orig_member(void *ud, const char *t, size_t k, size_t kl, size_t v, size_t e)
{
    orig_rd *o = ud;
    ce_sys_original *g = o->g;
    if (key_is(t, k, kl, "kind")) {
        char kind[32];
        if (t[v] == '"' && ce_json_unquote(t, v, e, kind, sizeof kind) == 0)
            for (int i = 0; i < 4; i++)
                if (!strcmp(kind, kinds[i])) g->kind = (ce_sys_orig_kind)i;
    } else if (key_is(t, k, kl, "link_target")) {
        if (t[v] == '"' && ce_json_unquote(t, v, e, g->target, sizeof g->target)) return (o->bad = 1), -1;
    } else if (key_is(t, k, kl, "alt_manual")) {
        g->alt_manual = e - v == 4 && !memcmp(t + v, "true", 4);
    } else if (key_is(t, k, kl, "alternatives")) {
        if (t[v] == '[' && ce_json_each_element(t + v, e - v, alt_one, o) < 0) return (o->bad = 1), -1;
    } else if (key_is(t, k, kl, "cudaenv_conf")) {
        g->conf_present = t[v] == '"';
        if (g->conf_present && ce_json_unquote(t, v, e, g->conf_text, sizeof g->conf_text)) return (o->bad = 1), -1;
    }
    return 0;
}

typedef struct hist_rd {
    ce_sys_record *rec;
    size_t at[3][2];   /* where each member's string value is in the element (0, 0: none) */
    int bad;
} hist_rd;

static const char *const hkeys[3] = { "toolchain", "link_target", "lib_dir" };

static int hist_member(void *ud, const char *t, size_t k, size_t kl, size_t v, size_t e)
{
    hist_rd *h = ud;
    for (int i = 0; i < 3; i++)
        if (key_is(t, k, kl, hkeys[i]) && t[v] == '"') {
            h->at[i][0] = v;
            h->at[i][1] = e;
        }
    return 0;
}

static int hist_one(void *ud, const char *t, size_t v, size_t e)
{
    hist_rd *h = ud;
    ce_sys_record *rec = h->rec;
    if (rec->nhistory == CE_SYS_HISTORY) return 1;
    memset(h->at, 0, sizeof h->at);
    /* an element that is not an object is an entry of empty strings, as
     * cJSON's lookups in it found nothing */
    if (t[v] == '{' && ce_json_each_member(t + v, e - v, hist_member, h) < 0) return (h->bad = 1), -1;
    /* the three strings one after the other (each up to 4 KiB, as the
     * fields of ce_sys_entry): a switch touches the bytes they take, not
     * three pages */
    static char buf[3 * 4096];
    char *s[3];
    size_t used = 0;
    for (int i = 0; i < 3; i++) {
        s[i] = buf + used;
        s[i][0] = '\0';
        if (h->at[i][1] && ce_json_unquote(t + v, h->at[i][0], h->at[i][1], s[i], 4096)) return (h->bad = 1), -1;
        used += strlen(s[i]) + 1;
    }
    put(rec, rec->nhistory, s[0], s[1], s[2]);
    rec->nhistory++;
    return 0;
}

int ce_sys_hist_read(const char *t, const size_t orig[2], const size_t hist[2], ce_sys_record *rec)
{
    if (orig[1] && t[orig[0]] == '{') {
        orig_rd o = { .g = &rec->original };   /* the caller zeroed it */
        o.g->present = true;
        if (ce_json_each_member(t + orig[0], orig[1] - orig[0], orig_member, &o) < 0 || o.bad) return -1;
    }
    rec->nhistory = 0;
    rec->hlen = 0;
    if (!hist[1] || t[hist[0]] != '[') {
        /* a record from before the history: its one slot */
        ce_sys_hist_push(rec, rec->prev_name, rec->prev_target, rec->prev_lib);
        return 0;
    }
    hist_rd h = { .rec = rec };
    return ce_json_each_element(t + hist[0], hist[1] - hist[0], hist_one, &h) < 0 || h.bad ? -1 : 0;
}

/* ---- writing, in cJSON_Print's layout (what earlier records look like) ---- */

static const char *const tabs[] = { "", "\t", "\t\t", "\t\t\t" };

static void member(ce_jtext *j, int depth, const char *key, const char *val, bool last)
{
    ce_jtext_raw(j, tabs[depth]);
    ce_jtext_raw(j, "\"");
    ce_jtext_raw(j, key);
    ce_jtext_raw(j, "\":\t");
    ce_jtext_str(j, val);
    ce_jtext_raw(j, last ? "\n" : ",\n");
}

void ce_sys_hist_write(ce_jtext *j, const ce_sys_record *rec)
{
    const ce_sys_original *g = &rec->original;
    if (g->present) {
        ce_jtext_raw(j, "\t\"original\":\t{\n");
        member(j, 2, "kind", kinds[g->kind], false);
        member(j, 2, "link_target", g->target, false);
        if (g->kind == CE_SYS_ORIG_ALTERNATIVES) {
            ce_jtext_raw(j, g->alt_manual ? "\t\t\"alt_manual\":\ttrue,\n" : "\t\t\"alt_manual\":\tfalse,\n");
            ce_jtext_raw(j, "\t\t\"alternatives\":\t[");
            char buf[sizeof g->alt_list];
            snprintf(buf, sizeof buf, "%s", g->alt_list);
            bool first = true;
            for (char *s, *p = strtok_r(buf, "\n", &s); p; p = strtok_r(NULL, "\n", &s)) {
                if (!first) ce_jtext_raw(j, ", ");
                ce_jtext_str(j, p);
                first = false;
            }
            ce_jtext_raw(j, "],\n");
        }
        /* the one ld.so.conf.d file cudaenv writes, as it was (null: absent) */
        member(j, 2, "ld_so_conf_written", "/etc/ld.so.conf.d/cudaenv.conf", false);
        if (g->conf_present) member(j, 2, "cudaenv_conf", g->conf_text, true);
        else ce_jtext_raw(j, "\t\t\"cudaenv_conf\":\tnull\n");
        ce_jtext_raw(j, "\t},\n");
    }
    ce_jtext_raw(j, "\t\"history\":\t[");
    for (int i = 0; i < rec->nhistory; i++) {
        ce_jtext_raw(j, i ? ", {\n" : "{\n");
        for (int k = 0; k < 3; k++) member(j, 3, hkeys[k], ce_sys_hist_str(rec, i, k), k == 2);
        ce_jtext_raw(j, "\t\t}");
    }
    ce_jtext_raw(j, "]\n");
}

const char *ce_sys_hist_str(const ce_sys_record *rec, int i, int k)
{
    return rec->hpool + rec->hoff[i][k];
}

void ce_sys_hist_push(ce_sys_record *rec, const char *name, const char *target, const char *lib)
{
    if (!strcmp(target, rec->target) && !strcmp(lib, rec->lib)) return;
    if (rec->nhistory && !strcmp(ce_sys_hist_str(rec, 0, 1), target) && !strcmp(ce_sys_hist_str(rec, 0, 2), lib)) return;
    int n = rec->nhistory < CE_SYS_HISTORY ? rec->nhistory : CE_SYS_HISTORY - 1;
    memmove(rec->hoff[1], rec->hoff[0], (size_t)n * sizeof rec->hoff[0]);
    rec->nhistory = n + 1;
    put(rec, 0, name, target, lib);
}

bool ce_sys_hist_pop(ce_sys_record *rec, ce_sys_entry *out)
{
    if (!rec->nhistory) return false;
    snprintf(out->name, sizeof out->name, "%s", ce_sys_hist_str(rec, 0, 0));
    snprintf(out->target, sizeof out->target, "%s", ce_sys_hist_str(rec, 0, 1));
    snprintf(out->lib, sizeof out->lib, "%s", ce_sys_hist_str(rec, 0, 2));
    rec->nhistory--;
    memmove(rec->hoff[0], rec->hoff[1], (size_t)rec->nhistory * sizeof rec->hoff[0]);
    return true;
}

void ce_sys_hist_copy(ce_sys_record *dst, const ce_sys_record *src)
{
    dst->nhistory = 0;
    dst->hlen = 0;
    for (int i = 0; i < src->nhistory; i++) {
        put(dst, i, ce_sys_hist_str(src, i, 0), ce_sys_hist_str(src, i, 1), ce_sys_hist_str(src, i, 2));
        dst->nhistory = i + 1;
    }
}
