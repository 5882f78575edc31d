/* The config files (config.h). */
#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "trust.h"
#include "version.h"

const char *const ce_config_keys[] = { "manifest", "mirror", "update_interval", "manifest_unsigned", "cudnn",
                                       "keys", NULL };
static const char *const env_of[] = { "CUDAENV_MANIFEST", "CUDAENV_MIRROR", "CUDAENV_UPDATE_INTERVAL",
                                      "CUDAENV_MANIFEST_UNSIGNED", "", "" };

const char *ce_config_env(const char *key)
{
    for (size_t i = 0; ce_config_keys[i]; i++)
        if (!strcmp(ce_config_keys[i], key)) return env_of[i];
    return NULL;
}

void ce_config_path(ce_ctx *ctx, ce_conf_origin which, char *out, size_t n)
{
    if (which == CE_CONF_SITE) {
        ce_sys_path(ctx, "/etc/cudaenv/" CE_CONFIG_NAME, out, n);
        return;
    }
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (xdg && *xdg == '/') snprintf(out, n, "%s/cudaenv/" CE_CONFIG_NAME, xdg);
    else if (home && *home == '/') snprintf(out, n, "%s/.config/cudaenv/" CE_CONFIG_NAME, home);
    else out[0] = '\0';
}

/* The parsed files, read on the first question (site [0], user [1]). */
static cJSON *loaded[2];
static bool loaded_once;

static cJSON *read_one(ce_ctx *ctx, ce_conf_origin which)
{
    char path[4200], *data = NULL;
    size_t len = 0;
    ce_config_path(ctx, which, path, sizeof path);
    struct stat st;
    if (!path[0] || lstat(path, &st) != 0) return NULL;
    const char *why = !S_ISREG(st.st_mode) ? "not a regular file" : NULL;
    if (!why && ce_trust_privileged()) why = ce_trust_stat_reason(&st, false);
    if (why) {
        ce_emit(ctx, CE_EV_WARN, NULL, "ignoring the config file %s: %s", path, why);
        return NULL;
    }
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rc = ce_file_read(ctx, path, 1u << 20, &data, &len);
    ce_quiet_end(&q);
    if (rc) return NULL;
    cJSON *j = cJSON_ParseWithLength(data, len);
    free(data);
    if (!cJSON_IsObject(j)) {
        ce_emit(ctx, CE_EV_WARN, NULL, "ignoring the config file %s: not a JSON object; see: man cudaenv (CONFIG)", path);
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

static void load(ce_ctx *ctx)
{
    if (loaded_once) return;
    loaded_once = true;
    loaded[0] = read_one(ctx, CE_CONF_SITE);
    loaded[1] = read_one(ctx, CE_CONF_USER);
}

static const cJSON *find(ce_ctx *ctx, const char *key, ce_conf_origin *origin)
{
    load(ctx);
    for (int i = 1; i >= 0; i--) {
        const cJSON *v = loaded[i] ? cJSON_GetObjectItemCaseSensitive(loaded[i], key) : NULL;
        if (v && !cJSON_IsNull(v)) {
            if (origin) *origin = i ? CE_CONF_USER : CE_CONF_SITE;
            return v;
        }
    }
    return NULL;
}

static bool text_of(const cJSON *v, char *out, size_t n)
{
    if (cJSON_IsString(v) && v->valuestring) snprintf(out, n, "%s", v->valuestring);
    else if (cJSON_IsNumber(v)) snprintf(out, n, "%lld", (long long)v->valuedouble);
    else if (cJSON_IsBool(v)) snprintf(out, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsArray(v)) {
        size_t len = 0;
        out[0] = '\0';
        for (const cJSON *e = v->child; e && len < n; e = e->next)
            if (cJSON_IsString(e) && e->valuestring)
                len += (size_t)snprintf(out + len, n - len, "%s%s", len ? "," : "", e->valuestring);
    } else return false;
    return true;
}

int ce_config_get(ce_ctx *ctx, const char *key, char *out, size_t n, ce_conf_origin *origin)
{
    const cJSON *v = find(ctx, key, origin);
    return v && text_of(v, out, n) ? 1 : 0;
}

int ce_config_item(ce_ctx *ctx, const char *key, size_t i, char *out, size_t n, ce_conf_origin *origin)
{
    const cJSON *v = find(ctx, key, origin);
    if (!cJSON_IsArray(v)) return 0;
    for (const cJSON *e = v->child; e; e = e->next)
        if (cJSON_IsString(e) && e->valuestring && i-- == 0) {
            snprintf(out, n, "%s", e->valuestring);
            return 1;
        }
    return 0;
}

/* value as the JSON key wants it, or CE_ERR_USAGE naming what is expected. */
static int to_json(ce_ctx *ctx, const char *key, const char *value, cJSON **out)
{
    *out = NULL;
    if (!ce_config_env(key))
        return ce_fail(ctx, CE_ERR_USAGE, "unknown config key '%s'; the keys: manifest, mirror, update_interval, "
                       "manifest_unsigned, cudnn, keys", key);
    if (!strcmp(key, "update_interval")) {
        char *end;
        errno = 0;
        long v = strtol(value, &end, 10);
        if (errno || end == value || *end || v < 0)
            return ce_fail(ctx, CE_ERR_USAGE, "update_interval: '%s' is no number of seconds (>= 0)", value);
        *out = cJSON_CreateNumber((double)v);
    } else if (!strcmp(key, "manifest_unsigned")) {
        if (strcmp(value, "true") && strcmp(value, "false"))
            return ce_fail(ctx, CE_ERR_USAGE, "manifest_unsigned: '%s' is neither true nor false", value);
        *out = cJSON_CreateBool(!strcmp(value, "true"));
    } else if (!strcmp(key, "cudnn")) {
        if (strcmp(value, "newest") && strcmp(value, "none") && !ce_version_valid(value))
            return ce_fail(ctx, CE_ERR_USAGE, "cudnn: '%s' is none of newest, none or a cuDNN release (8.9)", value);
        *out = cJSON_CreateString(value);
    } else if (!strcmp(key, "keys")) {
        cJSON *a = cJSON_CreateArray();
        char buf[8192];
        snprintf(buf, sizeof buf, "%s", value);
        for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
            if (*p != '/') {
                cJSON_Delete(a);
                return ce_fail(ctx, CE_ERR_USAGE, "keys: '%s' is not an absolute path to a public key (PEM)", p);
            }
            cJSON_AddItemToArray(a, cJSON_CreateString(p));
        }
        *out = a;
    } else {
        bool url = !strncmp(value, "https://", 8) || !strncmp(value, "http://", 7) || !strncmp(value, "file://", 7);
        if (!url && *value != '/')
            return ce_fail(ctx, CE_ERR_USAGE, "%s: '%s' is neither a URL nor an absolute path", key, value);
        *out = cJSON_CreateString(value);
    }
    return *out ? CE_OK : ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
}

int ce_config_set(ce_ctx *ctx, ce_conf_origin which, const char *key, const char *value)
{
    cJSON *v = NULL;
    int rc = *value ? to_json(ctx, key, value, &v) : (ce_config_env(key) ? CE_OK :
             ce_fail(ctx, CE_ERR_USAGE, "unknown config key '%s'", key));
    if (rc) return rc;
    char path[4200], dir[4200], *data = NULL;
    size_t len = 0;
    ce_config_path(ctx, which, path, sizeof path);
    if (!path[0]) { cJSON_Delete(v); return ce_fail(ctx, CE_ERR_USAGE, "no HOME: where is the user's config?"); }
    cJSON *doc = NULL;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    if (ce_file_read(ctx, path, 1u << 20, &data, &len) == CE_OK) doc = cJSON_ParseWithLength(data, len);
    ce_quiet_end(&q);
    free(data);
    if (data && !cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        cJSON_Delete(v);
        return ce_fail(ctx, CE_ERR_USAGE, "%s is not a JSON object: fix or remove it first", path);
    }
    if (!doc) doc = cJSON_CreateObject();
    cJSON_Delete(cJSON_DetachItemFromObjectCaseSensitive(doc, key));
    if (v) cJSON_AddItemToObject(doc, key, v);
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!text) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    rc = ce_mkdir_p(ctx, dir, 0755);
    size_t tl = strlen(text);
    text[tl] = '\n';   /* cJSON_Print's buffer ends in a NUL we may overwrite */
    if (rc == CE_OK) rc = ce_file_write_atomic(ctx, path, text, tl + 1, 0644);
    free(text);
    loaded_once = false;   /* the next question reads the files again */
    cJSON_Delete(loaded[0]);
    cJSON_Delete(loaded[1]);
    loaded[0] = loaded[1] = NULL;
    return rc;
}
