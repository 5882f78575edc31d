/* system.json's restore part (issue 11): the machine's original state and
 * the rollback history; see system.h. */
#include "system.h"

#include <cjson/cJSON.h>

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

void ce_sys_hist_read(const cJSON *j, ce_sys_record *rec)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, "original");
    if (cJSON_IsObject(o)) {
        ce_sys_original *g = &rec->original;
        char kind[32];
        ce_json_copy(o, "kind", kind, sizeof kind);
        g->present = true;
        for (int i = 0; i < 4; i++)
            if (!strcmp(kind, kinds[i])) g->kind = (ce_sys_orig_kind)i;
        ce_json_copy(o, "link_target", g->target, sizeof g->target);
        g->alt_manual = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "alt_manual"));
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "alternatives"), *e;
        size_t off = 0;
        cJSON_ArrayForEach(e, l) {
            if (!cJSON_IsString(e)) continue;
            int w = snprintf(g->alt_list + off, sizeof g->alt_list - off, "%s\n", e->valuestring);
            if (w < 0 || (size_t)w >= sizeof g->alt_list - off) break;
            off += (size_t)w;
        }
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "cudaenv_conf");
        g->conf_present = cJSON_IsString(c);
        snprintf(g->conf_text, sizeof g->conf_text, "%s", g->conf_present ? c->valuestring : "");
    }
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(j, "history"), *e;
    rec->nhistory = 0;
    rec->hlen = 0;
    if (!cJSON_IsArray(h)) {
        /* a record from before the history: its one slot */
        ce_sys_hist_push(rec, rec->prev_name, rec->prev_target, rec->prev_lib);
        return;
    }
    static const char *const keys[3] = { "toolchain", "link_target", "lib_dir" };
    cJSON_ArrayForEach(e, h) {
        if (rec->nhistory == CE_SYS_HISTORY) break;
        const char *v[3];
        for (int k = 0; k < 3; k++) {
            const cJSON *x = cJSON_GetObjectItemCaseSensitive(e, keys[k]);
            v[k] = cJSON_IsString(x) ? x->valuestring : "";
        }
        put(rec, rec->nhistory, v[0], v[1], v[2]);
        rec->nhistory++;
    }
}

void ce_sys_hist_write(cJSON *j, const ce_sys_record *rec)
{
    const ce_sys_original *g = &rec->original;
    if (g->present) {
        cJSON *o = cJSON_AddObjectToObject(j, "original");
        cJSON_AddStringToObject(o, "kind", kinds[g->kind]);
        cJSON_AddStringToObject(o, "link_target", g->target);
        if (g->kind == CE_SYS_ORIG_ALTERNATIVES) {
            cJSON_AddBoolToObject(o, "alt_manual", g->alt_manual);
            cJSON *l = cJSON_AddArrayToObject(o, "alternatives");
            char buf[sizeof g->alt_list];
            snprintf(buf, sizeof buf, "%s", g->alt_list);
            for (char *s, *p = strtok_r(buf, "\n", &s); p; p = strtok_r(NULL, "\n", &s))
                cJSON_AddItemToArray(l, cJSON_CreateString(p));
        }
        /* the one ld.so.conf.d file cudaenv writes, as it was (null: absent) */
        cJSON_AddStringToObject(o, "ld_so_conf_written", "/etc/ld.so.conf.d/cudaenv.conf");
        if (g->conf_present) cJSON_AddStringToObject(o, "cudaenv_conf", g->conf_text);
        else cJSON_AddNullToObject(o, "cudaenv_conf");
    }
    cJSON *h = cJSON_AddArrayToObject(j, "history");
    for (int i = 0; i < rec->nhistory; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "toolchain", ce_sys_hist_str(rec, i, 0));
        cJSON_AddStringToObject(e, "link_target", ce_sys_hist_str(rec, i, 1));
        cJSON_AddStringToObject(e, "lib_dir", ce_sys_hist_str(rec, i, 2));
        cJSON_AddItemToArray(h, e);
    }
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
