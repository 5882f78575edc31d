#include "receipt.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/file.h"

static cJSON *str_or_null(const char *s)
{
    return s && *s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

int ce_receipt_write(ce_ctx *ctx, const char *prefix, const ce_receipt *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory writing the receipt");
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);

    cJSON_AddNumberToObject(o, "schema", 1);
    cJSON_AddItemToObject(o, "name", str_or_null(r->name));
    cJSON_AddItemToObject(o, "cuda", str_or_null(r->cuda));
    cJSON_AddItemToObject(o, "cudnn", str_or_null(r->cudnn));
    cJSON_AddItemToObject(o, "platform", str_or_null(r->platform));
    cJSON_AddStringToObject(o, "installed_at", when);
    cJSON *tf = cJSON_AddArrayToObject(o, "tensorflow");
    for (size_t i = 0; tf && i < r->n_tensorflow; i++)
        cJSON_AddItemToArray(tf, cJSON_CreateString(r->tensorflow[i]));
    cJSON_AddItemToObject(o, "min_driver", str_or_null(r->min_driver));
    if (r->min_driver_compat) cJSON_AddStringToObject(o, "min_driver_compat", r->min_driver_compat);
    if (r->max_gcc > 0) cJSON_AddNumberToObject(o, "max_gcc", r->max_gcc);
    else cJSON_AddNullToObject(o, "max_gcc");
    if (r->sm_min || r->sm_max) {
        cJSON *sm = cJSON_AddObjectToObject(o, "sm");
        if (sm) {
            cJSON_AddItemToObject(sm, "min", str_or_null(r->sm_min));
            cJSON_AddItemToObject(sm, "max", str_or_null(r->sm_max));
        }
    }
    cJSON *src = cJSON_AddArrayToObject(o, "sources");
    for (size_t i = 0; src && i < r->n_sources; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "kind", r->sources[i].kind);
        cJSON_AddStringToObject(s, "url", r->sources[i].url);
        cJSON_AddStringToObject(s, "sha256", r->sources[i].sha256);
        if (r->sources[i].size >= 0) cJSON_AddNumberToObject(s, "size", (double)r->sources[i].size);
        else cJSON_AddNullToObject(s, "size");
        cJSON_AddItemToArray(src, s);
    }
    if (r->n_components) {
        cJSON_AddItemToObject(o, "profile", str_or_null(r->profile));
        cJSON *comps = cJSON_AddArrayToObject(o, "components");
        for (size_t i = 0; comps && i < r->n_components; i++) {
            const ce_receipt_component *c = &r->components[i];
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "name", c->name);
            cJSON_AddStringToObject(j, "version", c->version);
            cJSON_AddStringToObject(j, "url", c->url);
            cJSON_AddStringToObject(j, "sha256", c->sha256);
            cJSON_AddNumberToObject(j, "size", (double)c->size);
            cJSON_AddStringToObject(j, "pkg", c->pkg);
            cJSON_AddItemToArray(comps, j);
        }
    }
    cJSON *files = cJSON_AddArrayToObject(o, "files");
    for (size_t i = 0; files && r->files && i < r->files->n; i++) {
        if (strcmp(r->files->v[i].path, CE_RECEIPT_NAME) == 0) continue;
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "path", r->files->v[i].path);
        cJSON_AddNumberToObject(f, "size", (double)r->files->v[i].size);
        if (r->files->v[i].sha256[0]) cJSON_AddStringToObject(f, "sha256", r->files->v[i].sha256);
        cJSON_AddItemToArray(files, f);
    }
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory writing the receipt");
    char path[4200];
    int rc = ce_path_join(path, sizeof path, prefix, CE_RECEIPT_NAME);
    if (rc == CE_OK) rc = ce_file_write_atomic(ctx, path, text, strlen(text), 0644);
    else rc = ce_fail(ctx, CE_ERR_OTHER, "path too long: %s", prefix);
    free(text);
    return rc;
}

bool ce_receipt_uses_pkg(const char *prefix, const char *pkg)
{
    char path[4200], *text = NULL;
    static ce_ctx none;   /* a plain file read needs no configuration (and has no callback) */
    ce_quiet q;
    ce_quiet_begin(&q, false);
    bool read = ce_path_join(path, sizeof path, prefix, CE_RECEIPT_NAME) == CE_OK &&
                ce_file_read(&none, path, 256u << 20, &text, NULL) == CE_OK;
    ce_quiet_end(&q);
    if (!read) return false;
    cJSON *o = cJSON_Parse(text);
    free(text);
    bool used = false;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(o, "components")) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(c, "pkg");
        used = used || (cJSON_IsString(p) && strcmp(p->valuestring, pkg) == 0);
    }
    cJSON_Delete(o);
    return used;
}

void ce_receipt_init(ce_receipt *rec, const ce_manifest *m, const ce_resolved *r, const char *platform,
                     ce_filelist *files, const char **tf, size_t cap)
{
    size_t ntf = 0;
    for (size_t i = 0; i < m->n_tf && ntf < cap; i++) {
        const ce_tf *t = &m->tf[i];
        if (t->not_installable || !t->cuda || strcmp(t->cuda, r->cuda->version) != 0) continue;
        if (r->cudnn ? (t->cudnn && strcmp(t->cudnn, r->cudnn->version) == 0) : !t->cudnn) tf[ntf++] = t->version;
    }
    *rec = (ce_receipt){ .name = r->name, .cuda = r->cuda->version, .cudnn = r->cudnn ? r->cudnn->version : NULL,
                         .platform = platform, .min_driver = r->cuda->min_driver,
                         .min_driver_compat = r->cuda->min_driver_compat, .max_gcc = r->cuda->max_gcc,
                         .sm_min = r->cuda->sm_min, .sm_max = r->cuda->sm_max, .tensorflow = tf,
                         .n_tensorflow = ntf, .files = files };
}
