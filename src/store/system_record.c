/* system.json and its intent system.json.pending: read (ce_system_record)
 * and written (the text of one record); see system.h. */
#include "system_int.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"

static void jget(const cJSON *o, const char *k, char *out, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    snprintf(out, n, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

/* One record file into rec.  CE_ERR_NOTFOUND when absent; CE_ERR_INTEGRITY
 * when it is not a JSON object. */
static int read_record(ce_ctx *ctx, const char *path, ce_sys_record *rec)
{
    char *data;
    int rc = ce_file_read(ctx, path, 65536, &data, NULL);
    if (rc) return rc;
    cJSON *j = cJSON_Parse(data);
    free(data);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return ce_fail(ctx, CE_ERR_INTEGRITY, "%s is not valid JSON; remove it to forget the system selection", path);
    }
    char mode[32];
    jget(j, "mode", mode, sizeof mode);
    rec->mode = strcmp(mode, "alternatives") == 0 ? CE_SYS_MODE_ALTERNATIVES : CE_SYS_MODE_LINK;
    jget(j, "name", rec->name, sizeof rec->name);
    jget(j, "target", rec->target, sizeof rec->target);
    jget(j, "lib", rec->lib, sizeof rec->lib);
    jget(j, "prev_target", rec->prev_target, sizeof rec->prev_target);
    jget(j, "prev_lib", rec->prev_lib, sizeof rec->prev_lib);
    jget(j, "prev_name", rec->prev_name, sizeof rec->prev_name);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "when");
    rec->when = cJSON_IsNumber(w) ? (long long)w->valuedouble : 0;
    char state[16];
    jget(j, "state", state, sizeof state);
    rec->pending = strcmp(state, "pending") == 0;   /* an older cudaenv's intent, in system.json itself */
    char action[16];
    jget(j, "action", action, sizeof action);
    rec->restore = strcmp(action, "restore") == 0;
    rec->present = true;
    ce_sys_hist_read(j, rec);
    cJSON_Delete(j);
    return CE_OK;
}

int ce_system_record(ce_ctx *ctx, ce_sys_record *rec)
{
    /* the history (~130 KiB) is read only up to nhistory: zeroing it
     * would fault in every page of it */
    memset(rec, 0, offsetof(ce_sys_record, hoff));
    char path[4200];
    /* an intent (system.json.pending) is the newer record: a switch began
     * and has not been marked done.  One that is not JSON was cut short
     * before it was durable, so before anything changed: the switch never
     * began (begin() removes it under the lock). */
    ce_sys_path(ctx, CE_SYS_PENDING, path, sizeof path);
    int rc = read_record(ctx, path, rec);
    if (rc == CE_OK) {
        rec->pending = true;
        return CE_OK;
    }
    memset(rec, 0, offsetof(ce_sys_record, hoff));
    ce_sys_path(ctx, CE_SYS_STATE, path, sizeof path);
    rc = read_record(ctx, path, rec);
    return rc == CE_ERR_NOTFOUND ? CE_OK : rc;
}

/* system.json for rec (malloc'd; NULL when out of memory). */
char *ce_sys_record_text(const ce_sys_record *rec)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "schema", 1);
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
