/* system.json and its intent system.json.pending: read (ce_system_record)
 * and written (the text of one record), and the toolchain it puts at
 * /usr/local/cuda (ce_system_toolchain); see system.h. */
#include "system_int.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "core/file.h"
#include "core/json.h"

/* One record's text (from path) into rec.  CE_ERR_INTEGRITY when it is
 * not a JSON object. */
static int parse_record(ce_ctx *ctx, const char *path, const char *data, ce_sys_record *rec)
{
    cJSON *j = cJSON_Parse(data);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return ce_fail(ctx, CE_ERR_INTEGRITY, "%s is not valid JSON; remove it (and %s.pending) to forget the system "
                       "selection", path, CE_SYS_STATE);
    }
    char mode[32];
    ce_json_copy(j, "mode", mode, sizeof mode);
    rec->mode = strcmp(mode, "alternatives") == 0 ? CE_SYS_MODE_ALTERNATIVES : CE_SYS_MODE_LINK;
    ce_json_copy(j, "name", rec->name, sizeof rec->name);
    ce_json_copy(j, "target", rec->target, sizeof rec->target);
    ce_json_copy(j, "lib", rec->lib, sizeof rec->lib);
    ce_json_copy(j, "prev_target", rec->prev_target, sizeof rec->prev_target);
    ce_json_copy(j, "prev_lib", rec->prev_lib, sizeof rec->prev_lib);
    ce_json_copy(j, "prev_name", rec->prev_name, sizeof rec->prev_name);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "when");
    rec->when = cJSON_IsNumber(w) ? (long long)w->valuedouble : 0;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(j, "gen");
    rec->gen = cJSON_IsNumber(g) && g->valuedouble >= 0 ? (long long)g->valuedouble : -1;
    char state[16];
    ce_json_copy(j, "state", state, sizeof state);
    rec->pending = strcmp(state, "pending") == 0;   /* an older cudaenv's intent, in system.json itself */
    char action[16];
    ce_json_copy(j, "action", action, sizeof action);
    rec->restore = strcmp(action, "restore") == 0;
    rec->present = true;
    ce_sys_hist_read(j, rec);
    cJSON_Delete(j);
    return CE_OK;
}

/* One record file into rec.  CE_ERR_NOTFOUND when absent. */
static int read_record(ce_ctx *ctx, const char *path, ce_sys_record *rec)
{
    char *data;
    int rc = ce_file_read(ctx, path, CE_SYS_RECORD_MAX, &data, NULL);
    if (rc) return rc;
    rc = parse_record(ctx, path, data, rec);
    free(data);
    return rc;
}

/* The "gen" of a record's text, -1 when it has none, without parsing it all
 * (cJSON_Print writes it near the top; the sequence "gen": cannot occur
 * inside a string value, whose quotes are escaped). */
static long long text_gen(const char *t)
{
    const char *p = strstr(t, "\"gen\":");
    if (!p) return -1;
    for (p += 6; *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'; p++) {}
    if (*p < '0' || *p > '9') return -1;
    return strtoll(p, NULL, 10);
}

/* Is a pending record of generation pg an intent next to system.json of
 * generation sg (-1: none, or no system.json)?  A switch writes its intent
 * with system.json's gen + 1 and at the end exchanges the two, so the
 * pending file then holds the previous record, of a lower gen.  Without a
 * gen on either side it is an older cudaenv's intent (which it removed
 * when done). */
bool ce_sys_is_intent(long long pg, long long sg)
{
    if (pg < 0) return sg < 0;
    return pg > sg;
}

int ce_system_record(ce_ctx *ctx, ce_sys_record *rec)
{
    /* the history (~130 KiB) is read only up to nhistory: zeroing it
     * would fault in every page of it */
    memset(rec, 0, offsetof(ce_sys_record, hoff));
    char path[4200], *data;
    ce_sys_path(ctx, CE_SYS_STATE, path, sizeof path);
    int src = read_record(ctx, path, rec);
    if (src) rec->gen = -1;
    /* system.json.pending is the newer record, an intent (a switch began and
     * has not been marked done), only when its gen is greater (above); else
     * it is the record before system.json's.  One that is not JSON was cut
     * short before it was durable, so before anything changed: the switch
     * never began (the next switch writes over it). */
    ce_sys_path(ctx, CE_SYS_PENDING, path, sizeof path);
    ce_quiet q;
    ce_quiet_begin(&q, false);
    /* only a regular file of its own: a symlink planted there is no intent
     * (read through, it could name any file as one); the switch then
     * refuses to write at that name (ce_sys_journal_write) */
    struct stat pst;
    int prc = lstat(path, &pst) == 0 && S_ISREG(pst.st_mode) ? ce_file_read(ctx, path, CE_SYS_RECORD_MAX, &data, NULL)
                                                              : CE_ERR_NOTFOUND;
    ce_quiet_end(&q);
    if (prc != CE_OK) {
        if (src == CE_OK && rec->pending) rec->gen = (rec->gen < 0 ? 0 : rec->gen) + 1;   /* older "state":"pending" */
        return src == CE_ERR_NOTFOUND ? CE_OK : src;
    }
    long long sg = src == CE_OK ? rec->gen : -1, pg = text_gen(data);
    if (ce_sys_is_intent(pg, sg)) {
        memset(rec, 0, offsetof(ce_sys_record, hoff));
        ce_quiet_begin(&q, false);
        int irc = parse_record(ctx, path, data, rec);
        ce_quiet_end(&q);
        if (irc == CE_OK) {
            free(data);
            rec->pending = true;
            rec->gen = pg >= 0 ? pg : 1;   /* legacy: sg < 0; its repair stays an intent */
            return CE_OK;
        }
        /* cut short: system.json once more (rare) */
        memset(rec, 0, offsetof(ce_sys_record, hoff));
        ce_sys_path(ctx, CE_SYS_STATE, path, sizeof path);
        if ((src = read_record(ctx, path, rec))) rec->gen = -1;
    }
    free(data);
    if (src == CE_OK && rec->pending) rec->gen = (rec->gen < 0 ? 0 : rec->gen) + 1;   /* older "state":"pending" */
    return src == CE_ERR_NOTFOUND ? CE_OK : src;
}

bool ce_sys_resolve(const ce_ctx *ctx, const char *path, char *out, size_t outsz)
{
    char cur[4096], tgt[4096];
    snprintf(cur, sizeof cur, "%s", path);
    for (int hops = 0; hops < 16; hops++) {
        ssize_t n = readlink(cur, tgt, sizeof tgt - 1);
        if (n < 0) {
            struct stat sb;
            if (stat(cur, &sb) != 0 || !S_ISDIR(sb.st_mode)) return false;
            char real[PATH_MAX];   /* a relative link leaves ".." behind: said plainly */
            snprintf(out, outsz, "%s", realpath(cur, real) ? real : cur);
            return true;
        }
        tgt[n] = '\0';
        if (tgt[0] == '/') {
            ce_sys_path(ctx, tgt, cur, sizeof cur);
        } else {
            char *slash = strrchr(cur, '/');
            if (slash) slash[1] = '\0';
            size_t used = strlen(cur);
            snprintf(cur + used, sizeof cur - used, "%s", tgt);
        }
    }
    return false;
}

static bool same_dir(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool ce_system_toolchain(ce_ctx *ctx, ce_toolchain *out)
{
    char link[4096], real[4096];
    ce_sys_path(ctx, CE_SYS_LINK, link, sizeof link);
    if (!ce_sys_resolve(ctx, link, real, sizeof real)) return false;
    ce_sys_record *rec = malloc(sizeof *rec);
    if (!rec) return false;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    bool sw = ce_system_record(ctx, rec) == CE_OK && rec->present && !rec->restore && rec->name[0] &&
              ce_store_find(ctx, rec->name, out) == CE_OK && same_dir(out->prefix, real);
    ce_quiet_end(&q);
    free(rec);
    return sw;
}

static char *record_text(const ce_sys_record *rec)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "schema", 1);
    if (rec->gen >= 0) cJSON_AddNumberToObject(j, "gen", (double)rec->gen);
    cJSON_AddStringToObject(j, "state", rec->pending ? "pending" : "done");
    cJSON_AddStringToObject(j, "mode", rec->mode == CE_SYS_MODE_ALTERNATIVES ? "alternatives" : "link");
    cJSON_AddStringToObject(j, "name", rec->name);
    cJSON_AddStringToObject(j, "target", rec->target);
    cJSON_AddStringToObject(j, "lib", rec->lib);
    cJSON_AddStringToObject(j, "prev_target", rec->prev_target);
    cJSON_AddStringToObject(j, "prev_lib", rec->prev_lib);
    cJSON_AddStringToObject(j, "prev_name", rec->prev_name);
    cJSON_AddNumberToObject(j, "when", (double)rec->when);
    cJSON_AddStringToObject(j, "action", rec->restore ? "restore" : "switch");
    ce_sys_hist_write(j, rec);
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    return text;
}

/* system.json for rec (malloc'd; NULL when out of memory), at most
 * CE_SYS_RECORD_MAX bytes, what the reader takes: the oldest history
 * entries go until it fits (long store paths: ~8 KiB an entry).  Longer
 * only when it has no history left (the caller refuses it). */
char *ce_sys_record_text(ce_sys_record *rec)
{
    char *text;
    while ((text = record_text(rec)) && strlen(text) > CE_SYS_RECORD_MAX && rec->nhistory > 0) {
        free(text);
        rec->nhistory--;
    }
    return text;
}
