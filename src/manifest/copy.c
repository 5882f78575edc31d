/* The local copy of a remote manifest (copy.h). */
#include "copy.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/config.h"
#include "core/file.h"
#include "core/json.h"

static void meta_path(const ce_msource *src, char *out, size_t n)
{
    snprintf(out, n, "%s.meta", src->path);
}

int ce_mcopy_meta_read(const ce_msource *src, ce_mcopy_meta *out)
{
    memset(out, 0, sizeof *out);
    char path[4300], *data = NULL;
    size_t len = 0;
    meta_path(src, path, sizeof path);
    struct stat st;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rc = stat(path, &st) == 0 ? ce_file_read(path, 64 * 1024, &data, &len) : CE_ERR_NOTFOUND;
    ce_quiet_end(&q);
    if (rc) return CE_ERR_NOTFOUND;
    cJSON *j = cJSON_ParseWithLength(data, len);
    free(data);
    if (!cJSON_IsObject(j)) { cJSON_Delete(j); return CE_ERR_NOTFOUND; }
    ce_json_copy(j, "url", out->url, sizeof out->url);
    ce_json_copy(j, "etag", out->etag, sizeof out->etag);
    ce_json_copy(j, "last_modified", out->last_modified, sizeof out->last_modified);
    ce_json_copy(j, "sha256", out->sha256, sizeof out->sha256);
    ce_json_copy(j, "updated", out->updated, sizeof out->updated);
    ce_json_copy(j, "signed_by", out->signed_by, sizeof out->signed_by);
    ce_json_copy(j, "expires", out->expires, sizeof out->expires);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "serial");
    out->serial = cJSON_IsNumber(s) && s->valuedouble >= 0 ? (long long)s->valuedouble : -1;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "fetched");
    out->fetched = cJSON_IsNumber(f) ? (long long)f->valuedouble : 0;
    out->checked = st.st_mtim.tv_sec;
    cJSON_Delete(j);
    /* a record of another URL (a hash collision, a hand-made file) is none */
    return strcmp(out->url, src->origin) == 0 ? CE_OK : CE_ERR_NOTFOUND;
}

long ce_mcopy_interval(ce_ctx *ctx)
{
    const char *env = ce_settings_now()->update_interval;
    char conf[32];
    if ((!env || !*env) && ce_config_get(ctx, "update_interval", conf, sizeof conf, NULL))
        return ce_setting_long(conf, CE_UPDATE_INTERVAL_DEFAULT, 0);
    return ce_setting_long(env, CE_UPDATE_INTERVAL_DEFAULT, 0);
}

bool ce_mcopy_fresh(ce_ctx *ctx, const ce_msource *src)
{
    ce_mcopy_meta m;
    struct stat st;
    if (!src->remote || stat(src->path, &st) != 0 || ce_mcopy_meta_read(src, &m) != CE_OK) return false;
    time_t now = time(NULL);
    return now >= m.checked && now - m.checked < ce_mcopy_interval(ctx);
}

static int write_meta(const ce_msource *src, const ce_mcopy_meta *meta)
{
    cJSON *j = cJSON_CreateObject();
    if (!j) return ce_fail(CE_ERR_NOMEM, "out of memory");
    cJSON_AddStringToObject(j, "url", src->origin);
    cJSON_AddStringToObject(j, "etag", meta->etag);
    cJSON_AddStringToObject(j, "last_modified", meta->last_modified);
    cJSON_AddStringToObject(j, "sha256", meta->sha256);
    cJSON_AddStringToObject(j, "updated", meta->updated);
    cJSON_AddNumberToObject(j, "fetched", (double)meta->fetched);
    if (meta->signed_by[0]) cJSON_AddStringToObject(j, "signed_by", meta->signed_by);
    else cJSON_AddNullToObject(j, "signed_by");
    if (meta->serial >= 0) cJSON_AddNumberToObject(j, "serial", (double)meta->serial);
    else cJSON_AddNullToObject(j, "serial");
    if (meta->expires[0]) cJSON_AddStringToObject(j, "expires", meta->expires);
    else cJSON_AddNullToObject(j, "expires");
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!text) return ce_fail(CE_ERR_NOMEM, "out of memory");
    char path[4300];
    meta_path(src, path, sizeof path);
    int rc = ce_file_write_atomic(path, text, strlen(text), 0644);
    free(text);
    return rc;
}

int ce_mcopy_write(const ce_msource *src, const char *text, size_t len, const ce_mcopy_meta *meta)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", src->path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    int rc = ce_mkdir_p(dir, 0755);
    if (rc == CE_OK) rc = ce_file_write_atomic(src->path, text, len, 0644);
    if (rc == CE_OK) rc = write_meta(src, meta);
    return rc;
}

int ce_mcopy_touch(const ce_msource *src, const ce_mcopy_meta *meta)
{
    return write_meta(src, meta);
}
