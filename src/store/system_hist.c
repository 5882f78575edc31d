/* system.json's restore part (issue 11): the machine's original state and
 * the rollback history; see system.h. */
#include "system.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <string.h>

static void jstr(const cJSON *o, const char *k, char *out, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    snprintf(out, n, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

/* Nested keys differ from the top-level ones ("target", "lib", "name"), so
 * a line-based reader of system.json (grep, sed) still finds one of each. */
static const char *const kinds[] = { "none", "link", "alternatives", "directory" };

void ce_sys_hist_read(const cJSON *j, ce_sys_record *rec)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, "original");
    if (cJSON_IsObject(o)) {
        ce_sys_original *g = &rec->original;
        char kind[32];
        jstr(o, "kind", kind, sizeof kind);
        g->present = true;
        for (int i = 0; i < 4; i++)
            if (!strcmp(kind, kinds[i])) g->kind = (ce_sys_orig_kind)i;
        jstr(o, "link_target", g->target, sizeof g->target);
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
    if (!cJSON_IsArray(h)) {
        /* a record from before the history: its one slot */
        ce_sys_hist_push(rec, rec->prev_name, rec->prev_target, rec->prev_lib);
        return;
    }
    cJSON_ArrayForEach(e, h) {
        if (rec->nhistory == CE_SYS_HISTORY) break;
        ce_sys_entry *x = &rec->history[rec->nhistory++];
        jstr(e, "toolchain", x->name, sizeof x->name);
        jstr(e, "link_target", x->target, sizeof x->target);
        jstr(e, "lib_dir", x->lib, sizeof x->lib);
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
        cJSON_AddStringToObject(e, "toolchain", rec->history[i].name);
        cJSON_AddStringToObject(e, "link_target", rec->history[i].target);
        cJSON_AddStringToObject(e, "lib_dir", rec->history[i].lib);
        cJSON_AddItemToArray(h, e);
    }
}

/* The strings of an entry, not its 8 KiB: a history shift or copy touches
 * only the bytes in use (whole-entry copies faulted in ~130 KiB a switch). */
static void entry_copy(ce_sys_entry *dst, const ce_sys_entry *src)
{
    snprintf(dst->name, sizeof dst->name, "%s", src->name);
    snprintf(dst->target, sizeof dst->target, "%s", src->target);
    snprintf(dst->lib, sizeof dst->lib, "%s", src->lib);
}

void ce_sys_hist_push(ce_sys_record *rec, const char *name, const char *target, const char *lib)
{
    if (!strcmp(target, rec->target) && !strcmp(lib, rec->lib)) return;
    if (rec->nhistory && !strcmp(rec->history[0].target, target) && !strcmp(rec->history[0].lib, lib)) return;
    int n = rec->nhistory < CE_SYS_HISTORY ? rec->nhistory : CE_SYS_HISTORY - 1;
    for (int i = n; i > 0; i--) entry_copy(&rec->history[i], &rec->history[i - 1]);
    ce_sys_entry *x = &rec->history[0];
    snprintf(x->name, sizeof x->name, "%s", name);
    snprintf(x->target, sizeof x->target, "%s", target);
    snprintf(x->lib, sizeof x->lib, "%s", lib);
    rec->nhistory = n + 1;
}

bool ce_sys_hist_pop(ce_sys_record *rec, ce_sys_entry *out)
{
    if (!rec->nhistory) return false;
    entry_copy(out, &rec->history[0]);
    rec->nhistory--;
    for (int i = 0; i < rec->nhistory; i++) entry_copy(&rec->history[i], &rec->history[i + 1]);
    return true;
}

void ce_sys_hist_copy(ce_sys_record *dst, const ce_sys_record *src)
{
    dst->nhistory = src->nhistory;
    for (int i = 0; i < src->nhistory; i++) entry_copy(&dst->history[i], &src->history[i]);
}
